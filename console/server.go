package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/metrics"
	"github.com/pivotdb/pivotdb/sql"
)

// Config configures the HTTP listener.
type Config struct {
	// Addr is where to listen (--http-listen); a loopback address only.
	Addr    string
	Engine  *sql.Engine
	Metrics *metrics.Metrics
	// Activity is the registry of live sessions, counted on the page.
	Activity *activity.Registry
	// ShuttingDown tells /health that the SQL server is draining.
	ShuttingDown func() bool
	// SampleInterval is how often history.go samples the engine. Default
	// DefaultSampleInterval.
	SampleInterval time.Duration
	Log            *slog.Logger
}

// DefaultSampleInterval is Config.SampleInterval's default.
const DefaultSampleInterval = 10 * time.Second

// Server is the running listener.
type Server struct {
	cfg  Config
	ln   net.Listener
	http *http.Server
	hist *history
	stop context.CancelFunc
	// sampled is closed when the sampler goroutine has returned, so that
	// Close can wait for it: it runs statements on the engine, which the
	// caller closes after this server.
	sampled chan struct{}
}

// CheckAddr applies the listener's rule: the console and the metrics have
// no authentication of their own, so only a loopback address is accepted,
// as for a trust-authenticated SQL listener (design.md §2). To reach them
// from elsewhere, put an authenticating reverse proxy or an SSH tunnel in
// front.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad --http-listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--http-listen %q: the metrics and the console have no authentication, so they are served "+
			"on a loopback address only (put an authenticating proxy in front to publish them)", addr)
	}
	return nil
}

// Start listens on cfg.Addr and serves in the background until Close.
func Start(cfg Config) (*Server, error) {
	if err := CheckAddr(cfg.Addr); err != nil {
		return nil, err
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = DefaultSampleInterval
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ln: ln, hist: newHistory(240)}
	mux := http.NewServeMux()
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics.Handler())
	}
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /console.css", serveAsset("assets/console.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /jobs", s.jobsPage)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.sampled = make(chan struct{})
	go func() {
		defer close(s.sampled)
		s.sample(ctx)
	}()
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Log.Warn("http listener stopped", "err", err)
		}
	}()
	return s, nil
}

// Addr is the address listened on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the listener and the sampler, and waits for the sampler's
// statement in flight to end.
func (s *Server) Close() error {
	s.stop()
	err := s.http.Close()
	<-s.sampled
	return err
}

// sample records the engine's figures now and every SampleInterval.
func (s *Server) sample(ctx context.Context) {
	t := time.NewTicker(s.cfg.SampleInterval)
	defer t.Stop()
	for {
		s.hist.record(s.cfg.Engine, s.cfg.Log)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
