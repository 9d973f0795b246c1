package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/sql/memory"
)

// Defaults for Config fields left zero.
const (
	DefaultListen         = "127.0.0.1:5433"
	DefaultMaxMessageSize = 64 << 20
	DefaultStartupTimeout = time.Minute
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("server: closed")

// Config configures a Server. The zero value is usable: every zero field
// takes its default.
type Config struct {
	// Listen is the TCP address to listen on (DefaultListen when empty).
	Listen string
	// Listener, when set, is used instead of listening on Listen: a
	// cluster node's gateway hands the server the connections it serves
	// locally and forwards the others (cmd/pivotdb). Serve and Shutdown
	// close it.
	Listener net.Listener
	// MaxMessageSize bounds the body of one client message in bytes. A
	// longer length prefix ends that connection with 08P01 before any of the
	// body is read, so one client cannot make the server allocate more than
	// this per connection. Default DefaultMaxMessageSize (64 MiB).
	MaxMessageSize int
	// StartupTimeout bounds the time a new connection may take to complete
	// its startup (encryption, startup packet, authentication) up to its
	// first ReadyForQuery, like PostgreSQL's authentication_timeout: a
	// client still in startup then is dropped, so that sockets that never
	// speak do not pin a goroutine and a connection slot forever
	// (--startup-timeout). Default DefaultStartupTimeout.
	StartupTimeout time.Duration
	// Logger receives connection errors and recovered panics. Default
	// slog.Default().
	Logger *slog.Logger
	// TLS, when set, is offered to clients that send SSLRequest (answered
	// 'S'); without it SSLRequest is answered 'N'. Clients that do not ask
	// for TLS are still served in the clear, as PostgreSQL's default "host"
	// lines do, unless TLSRequired; libpq's sslmode=require is how a
	// client insists.
	TLS *tls.Config
	// TLSRequired refuses clients that did not negotiate TLS with FATAL
	// 28000 after their startup packet, before authentication, as a
	// pg_hba.conf of "hostssl" lines does (--tls-required). It needs TLS.
	// CancelRequest is still accepted in the clear, as in PostgreSQL: it
	// carries only the target's secret key.
	TLSRequired bool
	// AuthFailureDelay is the wait before answering the first failed login
	// from a client address; it doubles with each further failure in a row
	// up to AuthFailureMaxDelay (authdelay.go; --auth-failure-delay and
	// --auth-failure-max-delay). Zero takes DefaultAuthFailureDelay and
	// DefaultAuthFailureMaxDelay; a negative AuthFailureDelay turns the
	// delay off.
	AuthFailureDelay    time.Duration
	AuthFailureMaxDelay time.Duration
	// Auth selects how clients authenticate: AuthTrust (the zero value)
	// admits every user, AuthSCRAM makes every connection prove its
	// password with SCRAM-SHA-256 against Passwords, AuthPassword makes
	// it send the password in the clear, checked against Passwords.
	Auth AuthMethod
	// Passwords looks up the stored SCRAM verifiers; required with
	// AuthSCRAM and AuthPassword. FromSQL's engine provides it.
	Passwords PasswordStore
	// MaxConnections caps the connections served at once; one more gets
	// FATAL 53300 during startup. Zero means no cap. CancelRequest
	// connections are never refused by it, so that a full server can still
	// be told to cancel.
	MaxConnections int
	// Memory is the server-wide memory budget (--max-memory) that every
	// statement reserves from: its large protocol messages (gate.go), its
	// parsing, the IN lists and constants it builds, the rows it holds
	// and the rows it sends. Over it the statement fails with 53200. Nil:
	// an unlimited monitor (reservations are still counted).
	Memory *memory.Monitor
	// MaxStatementMemory bounds what one statement may reserve of Memory
	// (--max-query-memory): its message, parse estimate, built tree, held
	// rows and result rows. Zero: only Memory's limit applies.
	MaxStatementMemory int64
	// Activity is the registry of live sessions that pg_stat_activity and
	// pg_cancel_backend read (package activity). Nil: a registry of this
	// server's own.
	Activity *activity.Registry
	// Observer hears about connections and statements (metrics). Nil:
	// nobody.
	Observer Observer
	// SlowQueryThreshold logs every statement that runs at least this long
	// at level WARN with its text (--slow-query-threshold). Zero: none.
	SlowQueryThreshold time.Duration
	// ClientCheckInterval is how often the sockets of connections running a
	// statement are checked for a client that went away, whose statement is
	// then cancelled (clientcheck.go). Default DefaultClientCheckInterval.
	ClientCheckInterval time.Duration

	// testAuthSleep replaces the wait of the login throttle in tests,
	// which record the delays instead of sleeping them.
	testAuthSleep func(ctx context.Context, d time.Duration)
}

func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.StartupTimeout <= 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Memory == nil {
		c.Memory = memory.NewMonitor("--max-memory", 0)
	}
	if c.AuthFailureDelay == 0 {
		c.AuthFailureDelay = DefaultAuthFailureDelay
	}
	if c.Activity == nil {
		c.Activity = activity.NewRegistry()
	}
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	if c.ClientCheckInterval <= 0 {
		c.ClientCheckInterval = DefaultClientCheckInterval
	}
	if c.AuthFailureMaxDelay <= 0 {
		c.AuthFailureMaxDelay = DefaultAuthFailureMaxDelay
	}
	return c
}

// Server accepts PostgreSQL connections and runs each one on its own
// goroutine against a session of the engine.
type Server struct {
	cfg    Config
	engine Engine
	log    *slog.Logger

	mu      sync.Mutex
	ln      net.Listener
	conns   map[*conn]struct{}
	byPID   map[uint32]*conn // connections that completed startup, for CancelRequest
	nextPID uint32
	serving bool
	wg      sync.WaitGroup // one per connection goroutine

	// sessions counts connections admitted past their startup packet, for
	// Config.MaxConnections.
	sessions atomic.Int64

	// authThrottle slows failed logins down per client address
	// (authdelay.go); authSleep waits its delays (tests record them).
	authThrottle *authThrottle
	authSleep    func(ctx context.Context, d time.Duration)

	// draining is set (under mu, so that register sees it) by Shutdown and
	// by a hard stop: no new connections, idle ones end. Connections read
	// it without mu on their way to idle.
	draining atomic.Bool
}

// New returns a server for engine. Nothing listens until Listen or
// ListenAndServe.
func New(cfg Config, engine Engine) *Server {
	cfg = cfg.withDefaults()
	sleep := sleepCtx
	if cfg.testAuthSleep != nil {
		sleep = cfg.testAuthSleep
	}
	if cfg.Passwords == nil {
		if ps, ok := engine.(PasswordStore); ok {
			cfg.Passwords = ps
		}
	}
	return &Server{
		cfg:          cfg,
		engine:       engine,
		log:          cfg.Logger,
		conns:        make(map[*conn]struct{}),
		byPID:        make(map[uint32]*conn),
		authThrottle: newAuthThrottle(cfg.AuthFailureDelay, cfg.AuthFailureMaxDelay),
		authSleep:    sleep,
	}
}

// Listen binds Config.Listen. Addr is valid afterwards, which is how callers
// listening on port 0 learn the port before Serve runs.
func (s *Server) Listen() error {
	if s.cfg.Auth.NeedsPasswords() && s.cfg.Passwords == nil {
		return fmt.Errorf("server: %s authentication needs a password store", s.cfg.Auth)
	}
	if s.cfg.TLSRequired && s.cfg.TLS == nil {
		return errors.New("server: TLS is required but no certificate is configured")
	}
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		ln.Close()
		return errors.New("server: already listening")
	}
	if s.draining.Load() {
		ln.Close()
		return ErrServerClosed
	}
	s.ln = ln
	return nil
}

// ShuttingDown tells whether Shutdown (or a hard stop) has begun: no new
// connections are taken (the HTTP health check answers 503).
func (s *Server) ShuttingDown() bool { return s.draining.Load() }

// Addr is the address the server listens on, or nil before Listen.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// ListenAndServe is Listen followed by Serve.
func (s *Server) ListenAndServe(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Serve accepts connections on the listener bound by Listen until Shutdown
// (it then returns ErrServerClosed) or until ctx is done. Cancelling ctx is
// the hard stop: running statements are cancelled and every connection is
// closed at once; Serve returns ctx.Err() once their goroutines are gone.
// Use Shutdown for a graceful stop.
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	ln := s.ln
	switch {
	case s.draining.Load():
		s.mu.Unlock()
		return ErrServerClosed
	case ln == nil:
		s.mu.Unlock()
		return errors.New("server: Serve called before Listen")
	case s.serving:
		s.mu.Unlock()
		return errors.New("server: Serve called twice")
	}
	s.serving = true
	s.mu.Unlock()

	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		s.forceCloseAll()
	})
	defer stop()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.watchClients(watchCtx)

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				s.wg.Wait()
				return ctx.Err()
			}
			if s.draining.Load() || errors.Is(err, net.ErrClosed) {
				return ErrServerClosed
			}
			// Accept errors such as EMFILE are transient: wait a little
			// rather than spin or give up, as net/http does.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("server: accept error, retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c, ok := s.register(ctx, nc)
		if !ok {
			nc.Close()
			continue
		}
		go c.serve()
	}
}

func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// serveConn runs one connection on the calling goroutine. Tests use it to
// drive a connection over net.Pipe without a listener.
func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	c, ok := s.register(ctx, nc)
	if !ok {
		nc.Close()
		return
	}
	c.serve()
}

// register creates the conn for a new socket and counts it, unless the
// server is shutting down.
func (s *Server) register(ctx context.Context, nc net.Conn) (*conn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining.Load() {
		return nil, false
	}
	s.nextPID++
	if s.nextPID == 0 {
		s.nextPID = 1
	}
	c := newConn(ctx, s, nc, s.nextPID)
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return c, true
}

// admit counts a connection that has sent its startup packet against
// MaxConnections; false means the server is full. CancelRequest
// connections never get here, so a full server can still cancel.
func (s *Server) admit(c *conn) bool {
	if s.cfg.MaxConnections <= 0 {
		return true
	}
	if s.sessions.Add(1) > int64(s.cfg.MaxConnections) {
		s.sessions.Add(-1)
		return false
	}
	c.admitted = true
	return true
}

// unregister forgets a finished connection.
func (s *Server) unregister(c *conn) {
	if c.admitted {
		s.sessions.Add(-1)
	}
	s.mu.Lock()
	delete(s.conns, c)
	if s.byPID[c.pid] == c {
		delete(s.byPID, c.pid)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// publishKey makes a connection reachable by CancelRequest; it is called
// just before BackendKeyData tells the client its key.
func (s *Server) publishKey(c *conn) {
	s.mu.Lock()
	s.byPID[c.pid] = c
	s.mu.Unlock()
}

func (s *Server) snapshot() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// Shutdown stops the server gracefully: it stops accepting, ends idle
// connections at once with FATAL 57P01, and lets connections that are
// running a statement finish it (each ends with 57P01 as soon as it is idle
// again). When ctx is done first, running statements are cancelled and the
// remaining connections closed; Shutdown then waits for their goroutines to
// return (the session must honour cancellation) and returns ctx.Err().
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining.Store(true)
	ln := s.ln
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, c := range s.snapshot() {
		c.endIfIdle()
	}

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	// Past the deadline: cancel what still runs, so that each statement
	// fails and its connection ends itself with FATAL 57P01 (a client
	// told why, not a bare EOF: a cluster node that stops serving in the
	// middle of a COPY), and close the sockets of those that did not end
	// within forceCloseGrace.
	s.cancelAll()
	select {
	case <-done:
		return ctx.Err()
	case <-time.After(forceCloseGrace):
	}
	s.forceCloseAll()
	<-done
	return ctx.Err()
}

// forceCloseGrace is how long Shutdown, past its deadline, lets cancelled
// statements end their connections themselves before it closes the
// sockets.
const forceCloseGrace = time.Second

// cancelAll cancels every connection's context (errShutdown): a running
// statement fails, and its connection reports FATAL 57P01 and ends.
func (s *Server) cancelAll() {
	for _, c := range s.snapshot() {
		c.cancel(errShutdown)
	}
}

// forceCloseAll cancels every running statement and closes every socket.
func (s *Server) forceCloseAll() {
	s.mu.Lock()
	s.draining.Store(true)
	s.mu.Unlock()
	for _, c := range s.snapshot() {
		c.forceClose()
	}
}
