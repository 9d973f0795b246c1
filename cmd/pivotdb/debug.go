package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
)

// serveDebug serves Go's profiling endpoints (CPU, heap, goroutines, block
// and mutex profiles) for `go tool pprof`. Profiles reveal internals and
// cost CPU, so only a loopback address is accepted.
func serveDebug(addr string, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--debug-listen %q: profiles are served on a loopback address only", addr)
	}
	// The block and mutex profiles are empty unless sampling is on. One
	// blocking event per 100µs blocked and one contended mutex in 100 cost
	// little next to the profiling itself, and --debug-listen is for that.
	runtime.SetBlockProfileRate(100_000)
	runtime.SetMutexProfileFraction(100)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		if err := http.Serve(ln, mux); err != nil {
			log.Warn("profile server stopped", "err", err)
		}
	}()
	log.Info("serving profiles", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}
