package main

import (
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/cluster/shardrepl"
	"github.com/pivotdb/pivotdb/console"
	"github.com/pivotdb/pivotdb/sql/memory"
)

// --http-listen on a cluster node (issue 17): every node serves metrics,
// /health and the console about itself. While the node serves SQL, its
// listener passes each request to a console.Server over its engine (on a
// loopback port of its own, started and stopped with serving); otherwise
// it answers itself: /health and / say that the node forwards SQL and to
// which node, /metrics gives the node's role.
type clusterHTTP struct {
	cl      *shardrepl.Cluster
	id      uint64
	ln      net.Listener
	srv     *http.Server
	console atomic.Pointer[httputil.ReverseProxy] // while serving
	log     *slog.Logger
}

func startClusterHTTP(addr string, cl *shardrepl.Cluster, log *slog.Logger) (*clusterHTTP, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	h := &clusterHTTP{cl: cl, id: cl.Node.Identity().NodeID, ln: ln, log: log}
	h.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("http listener stopped", "err", err)
		}
	}()
	return h, nil
}

// serving makes the listener pass requests to cs (nil: answer itself).
func (h *clusterHTTP) serving(cs *console.Server) {
	if h == nil {
		return
	}
	if cs == nil {
		h.console.Store(nil)
		return
	}
	h.console.Store(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: cs.Addr().String()}))
}

func (h *clusterHTTP) close() {
	if h != nil {
		h.srv.Close()
	}
}

func (h *clusterHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := h.console.Load(); p != nil {
		p.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	addr, node, ok := h.cl.ServingSQLAddr(r.Context())
	var role string
	switch {
	case ok:
		role = fmt.Sprintf("node %d does not serve SQL: it forwards SQL connections to node %d (SQL at %s), which serves", h.id, node, addr)
	default:
		role = fmt.Sprintf("node %d does not serve SQL, and no node serves SQL right now", h.id)
	}
	switch r.URL.Path {
	case "/health":
		// Healthy while some node serves: this one forwards to it.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintln(w, role)
	case "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintf(w, "# HELP pivotdb_cluster_node_id This node's id.\n# TYPE pivotdb_cluster_node_id gauge\npivotdb_cluster_node_id %d\n", h.id)
		fmt.Fprintf(w, "# HELP pivotdb_cluster_serving Whether this node serves SQL (1) or forwards SQL connections (0).\n"+
			"# TYPE pivotdb_cluster_serving gauge\npivotdb_cluster_serving 0\n")
		fmt.Fprintf(w, "# HELP pivotdb_cluster_serving_node_id The node that serves SQL (0: none now).\n"+
			"# TYPE pivotdb_cluster_serving_node_id gauge\npivotdb_cluster_serving_node_id %d\n", node)
		cf := clockFigures(h.cl) // as metrics.Sources.Clock gives them on the serving node
		fmt.Fprintf(w, "# HELP pivotdb_clock_max_offset_seconds The clock offset bound between nodes (--max-offset).\n"+
			"# TYPE pivotdb_clock_max_offset_seconds gauge\npivotdb_clock_max_offset_seconds %g\n", cf.MaxOffset.Seconds())
		fmt.Fprintf(w, "# HELP pivotdb_clock_offset_max_seen_seconds The largest clock offset to another node this node's pings estimated since it started (absolute).\n"+
			"# TYPE pivotdb_clock_offset_max_seen_seconds gauge\npivotdb_clock_offset_max_seen_seconds %g\n", cf.MaxSeen.Seconds())
		fmt.Fprintf(w, "# HELP pivotdb_clock_offset_exceeded 1 while this node's clock is off from a majority of the nodes by more than 80%% of --max-offset (it does not serve SQL), else 0.\n"+
			"# TYPE pivotdb_clock_offset_exceeded gauge\npivotdb_clock_offset_exceeded %d\n", b2i(cf.Off))
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><meta charset=\"utf-8\"><title>PivotDB node %d</title></head>"+
			"<body><h1>PivotDB node %d</h1><p>%s.</p><p>Its console, metrics and health are served on that node's --http-listen address.</p></body></html>\n",
			h.id, h.id, html.EscapeString(role))
	default:
		http.NotFound(w, r)
	}
}

// clusterHTTPConfig is what serveCluster needs for --http-listen.
type clusterHTTPConfig struct {
	addr     string // empty: off
	sample   time.Duration
	mem      *memory.Monitor
	sessions *activity.Registry
}

// startConsole starts the console over the serving node's engine on a
// loopback port of its own; cfg's Addr is replaced.
func startConsole(cfg console.Config) (*console.Server, error) {
	cfg.Addr = "127.0.0.1:0"
	return console.Start(cfg)
}
