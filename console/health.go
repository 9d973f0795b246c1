package console

import (
	"fmt"
	"net/http"
)

// health answers load balancers: 200 "ok" while the node is up and serving
// reads and writes; 503 while it shuts down (it takes no new connections)
// and while the disk guard refuses writes for lack of space (53100): a
// node that cannot write is taken out of a read-write pool until space is
// freed. The body says which.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.cfg.ShuttingDown != nil && s.cfg.ShuttingDown() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
		return
	}
	if e := s.cfg.Engine; e != nil {
		if ds := e.Storage().DiskSpace(); ds.Refusing {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "disk full: writes refused")
			return
		}
	}
	fmt.Fprintln(w, "ok")
}
