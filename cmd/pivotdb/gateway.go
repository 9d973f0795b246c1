package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pivotdb/pivotdb/cluster/shardrepl"
	"github.com/pivotdb/pivotdb/console"
	"github.com/pivotdb/pivotdb/metrics"
	"github.com/pivotdb/pivotdb/server"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// A cluster node's SQL side (issue 17: any node takes SQL). The gateway
// owns the --listen socket. While the node serves SQL (it leads the shard
// group: shardrepl's Roles), each connection goes to the local server
// through a listener of the gateway's; otherwise it is forwarded, byte for
// byte, to the serving node's SQL address, so a client may connect to any
// node. The serving node's server does the startup (TLS, authentication)
// and everything after. Until some node serves (an election, a takeover)
// a new connection waits up to forwardWait for one, then ends with 57P03.
// A forwarded connection whose serving node another node took over from
// (it stopped answering) is ended with 57P01 (gatewayend.go).

// forwardWait bounds how long a new connection waits for a serving node.
const forwardWait = 15 * time.Second

// connListener is a net.Listener fed by the gateway.
type connListener struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }

// deliver hands c to the listener's server; false once it is closed.
func (l *connListener) deliver(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

type gateway struct {
	ln      net.Listener
	startup time.Duration // the server's startup timeout
	cl      *shardrepl.Cluster
	local   atomic.Pointer[connListener] // the local server's, while serving
	refuse  *connListener                // a server that answers 57P03
	log     *slog.Logger
	wg      sync.WaitGroup
	stopped atomic.Bool
	fwd     forwardings // connections forwarded to a serving node (gatewayend.go)
	// followers serves the connections that ask for stale reads while
	// this node does not serve (follower.go).
	followers *followerReads
}

func (g *gateway) run() {
	for {
		nc, err := g.ln.Accept()
		if err != nil {
			if g.stopped.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			g.log.Warn("gateway: accept", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.handle(nc)
		}()
	}
}

func (g *gateway) handle(raw net.Conn) {
	// A connection another node forwarded starts with a signed PROXY
	// header naming the client (proxyproto.go).
	nc, err := acceptProxy(raw, g.startup, func() ([]byte, bool) { return g.cl.ForwardKey(context.Background()) })
	if err != nil {
		g.log.Warn("gateway: dropping a connection", "remote", raw.RemoteAddr().String(), "err", err)
		raw.Close()
		return
	}
	if l := g.local.Load(); l != nil && l.deliver(nc) {
		return
	}
	// Not serving: the client's first message is read here and sent on
	// to the serving node, which must answer it within handshakeWait; one
	// that does not (stopped, SIGSTOPped: the kernel still accepts its
	// connections) is left for the next serving node, or for the local
	// server once this node serves, and the message is sent again.
	first, whole, err := readFirstMessage(nc, g.startup)
	if err != nil {
		nc.Close()
		return
	}
	nc.pre = first // unread: a local server reads it again
	if whole && g.followers != nil && wantsFollowerRead(first) {
		if g.forwardStaleRead(nc, first) {
			return // served by the nearest read replica (follower.go)
		}
		if g.followers.deliver(nc) {
			return // served here, from this node's replica (follower.go)
		}
	}
	deadline := time.Now().Add(forwardWait)
	for !g.stopped.Load() {
		if l := g.local.Load(); l != nil && l.deliver(nc) {
			return
		}
		if addr, node, epoch, ok := g.cl.ServingSQL(context.Background()); ok {
			if g.forward(nc, first, whole, addr, node, epoch) {
				return
			}
			g.cl.ForgetSQLAddr(node)
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !g.refuse.deliver(nc) {
		nc.Close()
	}
}

// handshakeWait bounds how long the serving node may take to answer a
// forwarded connection's first message.
const handshakeWait = 5 * time.Second

// forward sends nc (whose first message, already read, is first) to the
// serving node at addr (node, serving under epoch), after a PROXY header
// with the client's address when this node knows the forwarding key, and
// proxies the connection once the serving node answered, until it ends or
// another node serves (gatewayend.go). false: it did not answer (nc is
// untouched and its first message still buffered).
func (g *gateway) forward(nc *bufConn, first []byte, whole bool, addr string, node, epoch uint64) bool {
	// Nothing to wait for unless it starts a session: the server answers
	// a cancel request with nothing, and a malformed start with its own
	// error.
	await := whole && !isCancelRequest(first)
	rc, ok := g.dialForwarded(nc, first, addr, false, await)
	if !ok {
		return false
	}
	if !await {
		proxy(nc, rc)
		return true
	}
	f := &forwardedConn{client: nc, server: rc, node: node, epoch: epoch, frames: newFrameTracker(first)}
	g.fwd.add(f)
	defer g.fwd.remove(f)
	f.run()
	return true
}

// dialForwarded connects to the node at addr and sends it nc's first
// message (first), after a signed PROXY header with the client's address
// when this node knows the forwarding key (keyRequired: without the key
// nothing is sent). With await it waits up to handshakeWait for the
// answer's first byte. false: no connection, or no answer (nc is
// untouched, its first message still buffered for another try).
func (g *gateway) dialForwarded(nc *bufConn, first []byte, addr string, keyRequired, await bool) (*bufConn, bool) {
	var out []byte
	key, ok := g.cl.ForwardKey(context.Background())
	src, sok := nc.RemoteAddr().(*net.TCPAddr)
	dst, dok := nc.LocalAddr().(*net.TCPAddr)
	switch {
	case ok && sok && dok:
		out = appendProxyHeader(out, src, dst, key)
	case keyRequired:
		return nil, false
	}
	rc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, false
	}
	out = append(out, first...)
	rc.SetDeadline(time.Now().Add(handshakeWait))
	if _, err := rc.Write(out); err != nil {
		rc.Close()
		return nil, false
	}
	rr := bufio.NewReader(rc)
	if await {
		if _, err := rr.Peek(1); err != nil {
			rc.Close()
			return nil, false
		}
	}
	rc.SetDeadline(time.Time{})
	nc.pre = nil // sent
	return &bufConn{Conn: rc, br: rr}, true
}

// proxy copies bytes both ways until either side ends, then closes both.
func proxy(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		// What the gateway buffered goes first; then the raw sockets, so
		// that io.Copy splices between them in the kernel.
		if bc, ok := dst.(*bufConn); ok {
			dst = bc.Conn
		}
		if bc, ok := src.(*bufConn); ok {
			if p := bc.pending(); len(p) > 0 {
				if _, err := dst.Write(p); err != nil {
					return
				}
			}
			src = bc.Conn
		}
		io.Copy(dst, src)
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	a.Close()
	b.Close()
	<-done
}

// refusingEngine is the server.Engine that answers a connection no node
// could take: 57P03, as PostgreSQL answers while it starts up.
type refusingEngine struct{}

func (refusingEngine) NewSession(database, user string) (server.Session, error) {
	return nil, &sqlerr.Error{Code: "57P03",
		Message: "no node of the cluster serves SQL right now",
		Hint:    "A quorum of the nodes must be up for one of them to serve; try again shortly."}
}

// serveCluster runs a cluster node's SQL side until a signal on sigs:
// the gateway on ln (cfg.Listen's, listened on before the node started:
// its port is held from the start), and SQL over the node's engine whenever it
// serves (opts opens it), then closes everything.
func serveCluster(cl *shardrepl.Cluster, ln net.Listener, sigs <-chan os.Signal, cfg server.Config, opts sql.Options,
	shutdownGrace time.Duration, hc clusterHTTPConfig, log *slog.Logger) int {
	var err error
	var web *clusterHTTP // --http-listen (clusterhttp.go)
	if hc.addr != "" {
		if web, err = startClusterHTTP(hc.addr, cl, log); err != nil {
			log.Error("cannot listen", "http_addr", hc.addr, "err", err)
			ln.Close()
			closeCluster(cl, nil)
			return 1
		}
		defer web.close()
		log.Info("serving metrics, health and the console", "url", "http://"+web.ln.Addr().String()+"/")
	}
	g := &gateway{ln: ln, cl: cl, log: log, refuse: newConnListener(ln.Addr()), startup: cfg.StartupTimeout}
	if g.startup <= 0 {
		g.startup = server.DefaultStartupTimeout
	}
	rcfg := cfg
	rcfg.Listener = g.refuse
	// It refuses every session: there is nothing to authenticate for.
	rcfg.Auth = server.AuthTrust
	refuser := server.New(rcfg, refusingEngine{})
	if err := refuser.Listen(); err != nil {
		log.Error("cannot listen", "addr", cfg.Listen, "err", err)
		ln.Close()
		closeCluster(cl, nil)
		return 1
	}
	go refuser.Serve(context.Background())
	if g.followers, err = startFollowerReads(cl, cfg, opts, ln.Addr(), log); err != nil {
		log.Error("cannot listen", "addr", cfg.Listen, "err", err)
		ln.Close()
		closeCluster(cl, nil)
		return 1
	}
	go g.run()
	go g.watchServing()
	log.Info("PivotDB cluster node is ready; it serves SQL while it leads the shard group and forwards SQL connections otherwise",
		"addr", ln.Addr().String(), "auth", cfg.Auth.String(), "tls", cfg.TLS != nil)

	var eng *sql.Engine
	var srv *server.Server
	var srvDone chan error
	var cons *console.Server
	stopConsole := func() {
		web.serving(nil)
		if cons != nil {
			// Before the engine: its sampler runs statements on it.
			cons.Close()
			cons = nil
		}
	}
	stopServing := func() error {
		cl.SetReadReplicaSpans(nil)
		if l := g.local.Swap(nil); l != nil {
			l.Close()
		}
		stopConsole()
		if srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			srv.Shutdown(ctx)
			cancel()
			<-srvDone
			srv = nil
		}
		e := eng
		eng = nil
		if err := cl.StepDown(func() error {
			if e != nil {
				return e.Close()
			}
			return cl.Engine.Close()
		}); err != nil {
			return err
		}
		g.followers.resume() // over the reopened engine
		return nil
	}
	// A signal ends a takeover still under way (Serve reads every shard
	// group, and waits up to a minute for a quorum the nodes stopping
	// with this one may have taken away): the node then stops as asked,
	// not a minute later with an error.
	sigCtx, stopSigCtx := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stopSigCtx()
	startServing := func(epoch uint64) error {
		ctx, cancel := context.WithTimeout(sigCtx, time.Minute)
		defer cancel()
		g.followers.suspend() // their sessions end: the local server takes every connection
		if _, err := cl.Serve(ctx, epoch); err != nil {
			return err
		}
		o := opts
		o.DataDir, o.Storage = "", cl.Engine
		o.Cluster = clusterAdmin{m: cl.Placement, cl: cl, clocks: cl.Node.Clocks()}
		o.FollowerReads = servingFollowerReads(o, cl) // follower.go
		e, err := sql.Open(o)
		if err != nil {
			return supersededOr(cl, epoch, err)
		}
		if cfg.Auth.NeedsPasswords() && !e.HasPasswords() {
			// As one node refuses to start (main.go); the forwarded
			// connections authenticate here, on the serving node.
			e.Close()
			return errors.New("--auth " + cfg.Auth.String() + " but no user has a password; " +
				"give the built-in user pivotdb one with --initial-password or PIVOTDB_PASSWORD")
		}
		l := newConnListener(ln.Addr())
		scfg := cfg
		scfg.Listener = l
		var mets *metrics.Metrics
		if web != nil {
			mets = metrics.New(metrics.Sources{Engine: e, Memory: hc.mem, Log: log, Clock: func() metrics.ClockFigures { return clockFigures(cl) }})
			scfg.Observer = mets
		}
		s := server.New(scfg, server.FromSQL(e))
		if err := s.Listen(); err != nil {
			e.Close()
			return err
		}
		if web != nil {
			c, err := startConsole(console.Config{Engine: e, Metrics: mets, Activity: hc.sessions,
				ShuttingDown: s.ShuttingDown, SampleInterval: hc.sample, Log: log})
			if err != nil {
				e.Close()
				return err
			}
			cons = c
			web.serving(c)
		}
		eng, srv, srvDone = e, s, make(chan error, 1)
		go func() { srvDone <- s.Serve(context.Background()) }()
		g.local.Store(l)
		// With --shard-group-per-shard (the default) each partition shard becomes a
		// shard group of its own (cluster/shardrepl's split reconciler).
		if cl.SplitsShardGroups() {
			cl.SetSplitKeys(e.ShardBoundaries)
		}
		// Placement places the read replicas the tables ask for
		// (READ_REPLICAS_SETTINGS; follower.go routes stale reads to them).
		cl.SetReadReplicaSpans(readReplicaSpans(e))
		log.Info("serving SQL", "epoch", epoch)
		return nil
	}

	code := 0
loop:
	for {
		select {
		case sig := <-sigs:
			log.Info("shutting down", "signal", sig.String())
			break loop
		case r := <-cl.Roles():
			var err error
			switch {
			case r.Serve && eng == nil:
				err = startServing(r.Epoch)
				if errors.Is(err, shardrepl.ErrSuperseded) {
					// Nothing served (SQL never opened): the next role
					// is to step down.
					log.Info("another node took over serving SQL before this node served", "epoch", r.Epoch, "err", err)
					err = nil
				}
			case !r.Serve:
				err = stopServing()
				log.Info("stopped serving SQL; forwarding SQL connections to the serving node")
			}
			if err != nil && sigCtx.Err() != nil {
				log.Info("shutting down while changing the SQL role", "serve", r.Serve, "err", err)
				break loop
			}
			if err != nil {
				// The engine is in an unknown state: a restart is the
				// way back (the replica catches up from the log).
				log.Error("cannot change the SQL role; stopping", "serve", r.Serve, "err", err)
				code = 1
				break loop
			}
		}
	}
	g.stopped.Store(true)
	ln.Close()
	if l := g.local.Swap(nil); l != nil {
		l.Close()
	}
	// --shutdown-timeout bounds the wait for running statements, as on
	// the plain engine; a second signal stops waiting.
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	if srv != nil {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("shutdown", "err", err)
		}
		<-srvDone
	}
	stopConsole()
	refuser.Shutdown(ctx)
	cancel()
	g.followers.close()
	if err := closeCluster(cl, eng); err != nil {
		log.Error("closing", "err", err)
		return 1
	}
	if code == 0 {
		log.Info("stopped cleanly")
	}
	return code
}

// supersededOr is err, a failure of the serving node's SQL to open after
// its Serve under epoch, marked shardrepl.ErrSuperseded when another node
// took over serving meanwhile (this node's replica of the first group
// applied a later epoch): sql.Open's own commits (running jobs marked
// failed, shard maps repaired) are then fenced with 57P01, and the node
// must step down as after any takeover, not stop. TestClusterSQL with
// shard groups per shard lost two nodes so: the one whose SQL open was
// fenced stopped ("cannot change the SQL role"), and the one that took
// over then had no quorum for its own Serve and stopped too.
func supersededOr(cl *shardrepl.Cluster, epoch uint64, err error) error {
	if _, now, ok := cl.ServingNow(); ok && now > epoch {
		return fmt.Errorf("%w (epoch %d; this node's was %d): %w", shardrepl.ErrSuperseded, now, epoch, err)
	}
	return err
}
