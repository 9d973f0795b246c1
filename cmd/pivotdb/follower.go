package main

import (
	"context"
	"encoding/binary"
	"flag"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/cluster/shardrepl"
	"github.com/pivotdb/pivotdb/server"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// minClosedTarget bounds --closed-timestamp-target from below: a closed
// timestamp is published every 200 ms, so a smaller target would not make
// follower reads any fresher.
const minClosedTarget = 200 * time.Millisecond

func addClosedTargetFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("closed-timestamp-target", shardrepl.DefaultClosedTarget,
		"how far the closed timestamps the serving node publishes trail its clock; follower reads "+
			"(follower_read_timestamp(), stale read-only sessions) read this much plus a margin in the past; with --join")
}

func addFollowerMaxStalenessFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("follower-read-max-staleness", sessionvars.DefaultFollowerReadMaxStaleness,
		"the default of the session setting follower_read_max_staleness: how old the data a follower read without AS OF SYSTEM TIME "+
			"may fall back to while no node publishes closed timestamps (0: no fallback, such reads fail at once with 55000); with --join")
}

// followerReadsOf is o's FollowerReads (serve's
// --follower-read-max-staleness) with the node's closed-timestamp target
// and, for a follower engine, its replica's closed timestamp.
func followerReadsOf(o sql.Options, target time.Duration, closed func() (hlc.Timestamp, bool)) *sql.FollowerReads {
	var f sql.FollowerReads
	if o.FollowerReads != nil {
		f = *o.FollowerReads
	}
	f.Target, f.Closed = target, closed
	return &f
}

// servingFollowerReads is the serving engine's FollowerReads: the node's
// closed-timestamp target, and its replicas' closed timestamp as
// LocalClosed, so that its reads AS OF SYSTEM TIME at or below it
// (follower_read_timestamp()) do not wait for the read lease: they answer
// while the node cannot reach a quorum (sql/follower.go's waitReadable).
func servingFollowerReads(o sql.Options, cl *shardrepl.Cluster) *sql.FollowerReads {
	f := followerReadsOf(o, cl.ClosedTarget(), nil)
	f.LocalClosed = cl.ClosedTimestamp
	return f
}

// followerMaxStalenessOption is sql.FollowerReads.MaxStaleness for
// --follower-read-max-staleness (0, no fallback, it spells negative).
func followerMaxStalenessOption(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// Follower reads (issue 18 item 6). A connection to a node that does not
// serve SQL is forwarded to the serving node (gateway.go), unless its
// startup packet asks for the stale read-only mode: the parameter
// stale_read_only=on, directly or in options ("-c stale_read_only=on",
// libpq's PGOPTIONS). Such a connection is served by this node, from its
// own replica, through a read-only sql.Engine (sql.OpenFollower) whose
// reads wait for the replica's closed timestamp (sql/follower.go). The
// packet must come in clear: a connection that asks for TLS first is
// forwarded as before (its parameters are not readable here).
//
// The engines are shared by the follower sessions and replaced once a
// second (a new connection gets a fresh one, which knows the users and
// databases created since; an open session keeps its engine, whose
// statements bind against the catalog's history at their read time and
// read the shard maps of tables created since from the store:
// sql/follower.go). While the node serves, every connection goes to the local
// server (it reads the stale mode like any session does), and the
// follower engines are closed: their sessions end with 57P01.

// followerRefresh is how old a follower engine may get before a new
// connection gets a fresh one.
const followerRefresh = time.Second

type followerReads struct {
	cl   *shardrepl.Cluster
	opts sql.Options
	log  *slog.Logger
	ln   *connListener
	srv  *server.Server

	mu      sync.Mutex
	off     bool // the node serves (or is changing roles)
	closed  bool // close was called
	cur     *followerEngine
	engines map[*followerEngine]struct{}
}

type followerEngine struct {
	e       *sql.Engine
	opened  time.Time
	refs    int
	retired bool
}

// startFollowerReads starts the follower-read server on a listener of the
// gateway's.
func startFollowerReads(cl *shardrepl.Cluster, cfg server.Config, opts sql.Options, addr net.Addr, log *slog.Logger) (*followerReads, error) {
	f := &followerReads{cl: cl, opts: opts, log: log, ln: newConnListener(addr), engines: map[*followerEngine]struct{}{}}
	scfg := cfg
	scfg.Listener = f.ln
	f.srv = server.New(scfg, f)
	if err := f.srv.Listen(); err != nil {
		return nil, err
	}
	go f.srv.Serve(context.Background())
	go f.watchClock()
	return f, nil
}

// clockWatch is how often the follower reads look at the node's clock.
const clockWatch = 250 * time.Millisecond

// watchClock ends the follower-read sessions once the node's clock is off
// by more than --max-offset (cluster/shardrepl's ClockError): a node that
// may not serve SQL does not serve follower reads either; new ones are
// refused (acquire) until the clock is back within bounds.
func (f *followerReads) watchClock() {
	for {
		time.Sleep(clockWatch)
		f.mu.Lock()
		closed := f.closed
		f.mu.Unlock()
		if closed {
			return
		}
		if err := f.cl.ClockError(); err != nil {
			f.mu.Lock()
			all := f.engines
			f.engines, f.cur = map[*followerEngine]struct{}{}, nil
			f.mu.Unlock()
			if len(all) > 0 {
				f.log.Error("ending the follower-read sessions: this node's clock is off", "err", err)
			}
			for fe := range all {
				fe.e.Close()
			}
		}
	}
}

// wants reports whether a connection whose first message is first asks
// for the stale read-only mode.
func wantsFollowerRead(first []byte) bool {
	if len(first) < 8 || binary.BigEndian.Uint32(first[4:8]) != 3<<16 {
		return false // not a protocol 3.0 startup packet (TLS, GSS, cancel)
	}
	on := func(v string) bool {
		n, err := sessionvars.Validate("stale_read_only", v)
		return err == nil && n == "on"
	}
	fields := strings.Split(string(first[8:]), "\x00")
	for i := 0; i+1 < len(fields) && fields[i] != ""; i += 2 {
		name, value := strings.ToLower(fields[i]), fields[i+1]
		switch name {
		case "stale_read_only":
			return on(value)
		case "options":
			for _, kv := range server.ParseOptions(value) {
				if strings.ToLower(kv[0]) == "stale_read_only" && on(kv[1]) {
					return true
				}
			}
		}
	}
	return false
}

// deliver hands nc (its first message unread) to the follower-read
// server; false while the node serves.
func (f *followerReads) deliver(nc net.Conn) bool {
	f.mu.Lock()
	off := f.off
	f.mu.Unlock()
	return !off && f.ln.deliver(nc)
}

// suspend closes the follower engines (their sessions end) before the
// node starts serving; resume allows them again once it stopped.
func (f *followerReads) suspend() {
	f.mu.Lock()
	f.off = true
	all := f.engines
	f.engines, f.cur = map[*followerEngine]struct{}{}, nil
	f.mu.Unlock()
	for fe := range all {
		fe.e.Close()
	}
}

func (f *followerReads) resume() {
	f.mu.Lock()
	f.off = false
	f.mu.Unlock()
}

func (f *followerReads) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.suspend()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	f.srv.Shutdown(ctx)
}

var errFollowerOff = &sqlerr.Error{Code: sqlerr.AdminShutdown, Fatal: true,
	Message: "terminating connection: this node now serves SQL; connect again for a follower-read session"}

// acquire returns the engine a new session opens on, opening a fresh one
// when the current one is older than followerRefresh.
func (f *followerReads) acquire() (*followerEngine, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off {
		return nil, errFollowerOff
	}
	if err := f.cl.ClockError(); err != nil {
		return nil, shardrepl.ClockSQLError("this node does not serve follower reads", err)
	}
	if f.cur == nil || time.Since(f.cur.opened) > followerRefresh {
		o := f.opts
		o.DataDir, o.Storage, o.Cluster = "", f.cl.Engine, nil
		o.FollowerReads = followerReadsOf(o, f.cl.ClosedTarget(), f.cl.ClosedTimestamp)
		e, err := sql.OpenFollower(o)
		if err != nil {
			f.log.Warn("cannot open a follower-read engine", "err", err)
			return nil, &sqlerr.Error{Code: "57P03", Fatal: true,
				Message: "this node cannot serve follower reads right now: " + err.Error(),
				Hint:    "Connect without stale_read_only to be served by the serving node, or try again."}
		}
		if old := f.cur; old != nil {
			old.retired = true
			if old.refs == 0 {
				delete(f.engines, old)
				go old.e.Close()
			}
		}
		f.cur = &followerEngine{e: e, opened: time.Now()}
		f.engines[f.cur] = struct{}{}
	}
	f.cur.refs++
	return f.cur, nil
}

func (f *followerReads) release(fe *followerEngine) {
	f.mu.Lock()
	fe.refs--
	_, open := f.engines[fe] // suspend closed it already otherwise
	closeIt := open && fe.retired && fe.refs == 0
	if closeIt {
		delete(f.engines, fe)
	}
	f.mu.Unlock()
	if closeIt {
		fe.e.Close()
	}
}

// NewSession implements server.Engine.
func (f *followerReads) NewSession(database, user string) (server.Session, error) {
	fe, err := f.acquire()
	if err != nil {
		return nil, err
	}
	s, err := fe.e.NewSession(database, user)
	if err != nil {
		f.release(fe)
		return nil, err
	}
	return &followerSession{Session: s, release: func() { f.release(fe) }}, nil
}

// PasswordVerifier implements server.PasswordStore: the follower
// authenticates its sessions itself, from its replica's users.
func (f *followerReads) PasswordVerifier(user string) (string, bool) {
	fe, err := f.acquire()
	if err != nil {
		return "", false
	}
	defer f.release(fe)
	return fe.e.PasswordVerifier(user)
}

// followerSession releases its engine when it closes.
type followerSession struct {
	*sql.Session
	once    sync.Once
	release func()
}

func (s *followerSession) Close() {
	s.Session.Close()
	s.once.Do(s.release)
}

// Read replicas (READ_REPLICAS_SETTINGS; cluster/placement's
// readreplicas.go). Once a table asks for read replicas, a stale read-only
// connection is served where they are: a node that holds a read replica
// or a voter of every group that has them serves it from its own
// replicas; another node forwards it, byte for byte after a signed PROXY
// header, to the nearest live node that does (its zone first:
// shardrepl.StaleReadTargets), which serves it without routing it again
// (the header says another node routed it). A target that does not answer
// within handshakeWait (stopped) is skipped for the next; with none left,
// or without the forwarding key (a forwarded connection without the header
// would be routed again), this node serves it: every node holds a replica
// of every group, complete up to its closed timestamp, so the answer is
// the same, only not from the replica placement chose. While no table
// asks for read replicas every node serves its own stale reads.

// staleTargetLookup bounds the lookup of a read replica's SQL address.
const staleTargetLookup = 2 * time.Second

// forwardStaleRead sends a stale read-only connection (first: its startup
// message, already read) to the nearest node holding the read replicas;
// false: this node serves it (nc untouched, its first message still
// buffered).
func (g *gateway) forwardStaleRead(nc *bufConn, first []byte) bool {
	if nc.remote != nil {
		return false // another node's router sent it here
	}
	route := g.cl.StaleReadTargets()
	if route.Local || len(route.Targets) == 0 {
		g.log.Debug("serving a stale read-only connection here", "why", route.Why)
		return false
	}
	if _, ok := g.cl.ForwardKey(context.Background()); !ok {
		g.log.Debug("serving a stale read-only connection here: the forwarding key cannot be read", "why", route.Why)
		return false
	}
	for _, id := range route.Targets {
		ctx, cancel := context.WithTimeout(context.Background(), staleTargetLookup)
		addr, ok := g.cl.SQLAddrOf(ctx, id)
		cancel()
		if !ok {
			g.log.Debug("a read replica's SQL address cannot be read; trying the next", "node", id)
			continue
		}
		if g.forwardTo(nc, first, id, addr) {
			return true
		}
		g.log.Debug("a read replica did not answer a forwarded connection; trying the next", "node", id, "addr", addr)
	}
	g.log.Debug("serving a stale read-only connection here: no read replica answered", "why", route.Why)
	return false
}

// forwardTo sends nc to node id at addr after a signed PROXY header and
// proxies it once the node answered its first message, until it ends.
// false: no answer within handshakeWait (nc untouched).
func (g *gateway) forwardTo(nc *bufConn, first []byte, id uint64, addr string) bool {
	rc, ok := g.dialForwarded(nc, first, addr, true, true)
	if !ok {
		return false
	}
	g.log.Debug("forwarded a stale read-only connection to the nearest read replica", "node", id, "addr", addr)
	proxy(nc, rc)
	return true
}
