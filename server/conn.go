package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/pivotdb/pivotdb/panics"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// connState is where a connection's goroutine is, as Shutdown sees it.
type connState uint8

const (
	// stateStartup: reading startup packets; no session yet.
	stateStartup connState = iota
	// stateIdle: blocked waiting for the client's next message. Shutdown may
	// end an idle connection from its own goroutine.
	stateIdle
	// stateBusy: processing a message. Shutdown leaves it alone until it is
	// idle again (or the deadline passes).
	stateBusy
	// stateClosed: the connection is ending; nobody may write to it any more
	// except the goroutine that moved it here.
	stateClosed
)

// The causes with which statement contexts are cancelled; errorFor uses
// them to tell a CancelRequest from a shutdown.
var (
	errCancelRequest = errors.New("server: statement cancelled by CancelRequest")
	errShutdown      = errors.New("server: shutting down")
)

// flushThreshold is how many bytes of rows may pile up in the output buffer
// before they are written, so that a large result streams instead of being
// held in memory whole.
const flushThreshold = 64 << 10

// directWriteTimeout bounds writes made outside the command loop (the FATAL
// sent to an idle connection at shutdown, the report of a panic), so that a
// client that stopped reading cannot block them.
const directWriteTimeout = time.Second

// conn is one client connection. Everything except mu's fields is owned by
// the connection's goroutine.
type conn struct {
	srv *Server
	// nc is the connection the protocol runs on: the socket, or a TLS
	// connection over it once SSLRequest succeeded. Only the connection's
	// goroutine replaces it, during startup; other goroutines close raw,
	// which ends either.
	nc  net.Conn
	raw net.Conn
	tls bool // nc is TLS
	// admitted: counted against Config.MaxConnections (Server.admit).
	admitted bool
	// idleDeadline: a read deadline for idle_in_transaction_session_timeout
	// is set on nc.
	idleDeadline bool
	log          *slog.Logger
	pid          uint32
	secret       []byte // set during startup, before the key is published

	// ctx lives as long as the connection; every statement context derives
	// from it, so cancelling it (hard stop) cancels whatever runs.
	ctx    context.Context
	cancel context.CancelCauseFunc

	be   *pgproto3.Backend // nil until the startup packet is accepted
	sess Session           // nil until the session is open

	stmts      map[string]*statement
	portals    map[string]*portal
	skipToSync bool // after an error in the extended protocol
	inCycle    bool // extended-protocol messages seen since the last Sync
	// wbuf holds the messages queued since the last flush; send encodes
	// into it and flush writes it with one write call. It is kept across
	// flushes up to keepWriteBuffer bytes of capacity, so a connection
	// that sends results of some size does not grow a buffer from scratch
	// for each (pgproto3's Backend reallocates its buffer after every flush
	// that wrote more than 1 KiB). encodeErr is the first error of an
	// encoding since the last flush, which flush reports.
	wbuf      []byte
	encodeErr error

	// gate reserves large messages before pgproto3 reads them.
	gate *gate
	// msgAcct is the memory account of the message being handled: the
	// gate's reservation, or one opened by statementAccount. The command
	// loop closes it after the message unless a portal took it over.
	// msgRefused is the 53200 the message gets instead of running.
	msgAcct    *memory.Account
	msgRefused error
	// resultAcct is the account that rows being sent are reserved in.
	resultAcct *memory.Account
	// simpleWire is the wire encoder's memory of the last simple-query
	// statement, for the next (sql.WireOf); prepared statements keep
	// their own (statement.wire).
	simpleWire *sql.WireRows
	// sparePortal is the memory of the last unnamed portal closed, for
	// the next Bind (newPortal); nil when none.
	sparePortal *portal
	// spareCtx is a child of ctx that the last statement or portal was
	// done with and that was never cancelled: the next statement or
	// portal takes it (takeContext) instead of deriving a new child,
	// which registers with ctx (its lock and a map entry) and is
	// unregistered again by its cancel (3% of a point SELECT's server CPU).
	// A context is given back only after everything that ran under it
	// has ended: the statement's messages handled, the portal's Result
	// closed, and nobody left to cancel it (setRunning(nil) comes first).
	spareCtx    context.Context
	spareCancel context.CancelCauseFunc

	mu      sync.Mutex
	state   connState
	running context.CancelCauseFunc // cancels the running statement; nil when none

	// backend is the connection's entry in Config.Activity, from the end
	// of startup (activity.go); terminating is set by pg_terminate_backend.
	backend     *activity.Backend
	terminating atomic.Bool
}

func newConn(ctx context.Context, s *Server, nc net.Conn, pid uint32) *conn {
	cctx, cancel := context.WithCancelCause(ctx)
	return &conn{
		srv:     s,
		nc:      nc,
		raw:     nc,
		log:     s.log.With("pid", pid, "remote", nc.RemoteAddr().String()),
		pid:     pid,
		ctx:     cctx,
		cancel:  cancel,
		stmts:   make(map[string]*statement),
		portals: make(map[string]*portal),
		wbuf:    make([]byte, 0, 4096),
	}
}

// connError wraps an error after which the connection cannot continue: the
// socket failed, or a FATAL error has already been sent.
type connError struct{ err error }

func (e connError) Error() string { return e.err.Error() }
func (e connError) Unwrap() error { return e.err }

// serve runs the connection to its end: startup, then the command loop.
func (c *conn) serve() {
	defer c.srv.unregister(c)
	defer c.cleanup()
	var panicErr error
	defer func() {
		if panicErr != nil {
			c.reportPanic(panicErr)
		}
	}()
	defer panics.Recover(fmt.Sprintf("server: connection %d", c.pid), &panicErr)
	if !c.startup() {
		return
	}
	c.commandLoop()
}

// reportPanic tells the client of a connection whose goroutine panicked
// (recovered, logged and counted by package panics) that it is over, with
// FATAL XX000; the server and the other connections carry on.
func (c *conn) reportPanic(err error) {
	c.mu.Lock()
	c.state = stateClosed
	c.mu.Unlock()
	c.writeDirect(&sqlerr.Error{Code: sqlerr.InternalError, Message: err.Error(), Fatal: true})
}

// cleanup releases everything the connection holds. It runs after
// recoverPanic, and the session may be in any state (after a panic, say),
// so each step is shielded: a panic here must not take the server down.
func (c *conn) cleanup() {
	c.cancel(errShutdown)
	c.nc.Close()
	c.shielded("closing portals", c.closeAllPortals)
	// Reservations of a message that was never handled (the connection
	// ended during authentication, or a panic cut a message short).
	c.msgAcct.Close()
	if c.gate != nil {
		a, _ := c.gate.takeMessage()
		a.Close()
	}
	if c.sess != nil {
		c.shielded("closing session", c.sess.Close)
	}
	if c.backend != nil {
		c.srv.cfg.Activity.Unregister(c.backend)
		c.srv.cfg.Observer.ConnectionClosed()
	}
}

func (c *conn) shielded(what string, fn func()) {
	defer panics.Recover("server: "+what, nil)
	fn()
}

// commandLoop reads and handles messages until the client leaves, the
// protocol breaks, or the server shuts down.
func (c *conn) commandLoop() {
	for {
		if !c.becomeIdle() {
			return
		}
		c.armIdleTimeout()
		msg, err := c.be.Receive()
		if !c.becomeBusy() {
			return
		}
		if err != nil {
			if c.idleDeadline && isTimeout(err) {
				if c.sess.TxStatus() == 'I' {
					c.fatal(&sqlerr.Error{Code: sqlerr.IdleSessionTimeout, Fatal: true,
						Message: "terminating connection due to idle-session timeout"})
					return
				}
				c.fatal(&sqlerr.Error{Code: sqlerr.IdleInTransactionTimeout, Fatal: true,
					Message: "terminating connection due to idle-in-transaction timeout"})
				return
			}
			c.receiveFailed(err)
			return
		}
		if c.idleDeadline {
			c.nc.SetReadDeadline(time.Time{})
			c.idleDeadline = false
		}
		c.msgAcct, c.msgRefused = c.gate.takeMessage()
		err = c.dispatch(msg)
		forgetMessage(msg)
		c.msgAcct.Close()
		c.msgAcct, c.msgRefused = nil, nil
		if err != nil {
			return
		}
	}
}

// idleTimeouter is implemented by sessions with the
// idle_in_transaction_session_timeout and idle_session_timeout settings
// (*sql.Session).
type idleTimeouter interface {
	IdleInTransactionTimeout() time.Duration
	IdleSessionTimeout() time.Duration
}

// armIdleTimeout sets a read deadline while the client is idle: inside a
// transaction block per the session's idle_in_transaction_session_timeout
// (such a client holds its transaction's locks and snapshot, so PostgreSQL
// ends its session after that long), outside one per idle_session_timeout.
func (c *conn) armIdleTimeout() {
	var d time.Duration
	if it, ok := c.sess.(idleTimeouter); ok {
		if c.sess.TxStatus() != 'I' {
			d = it.IdleInTransactionTimeout()
		} else {
			d = it.IdleSessionTimeout()
		}
	}
	if d > 0 {
		c.nc.SetReadDeadline(time.Now().Add(d))
		c.idleDeadline = true
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// becomeIdle marks the connection as waiting for input. A draining server
// ends it here instead, so a connection that was busy when Shutdown began
// ends as soon as its statement is done.
func (c *conn) becomeIdle() bool {
	c.mu.Lock()
	if c.state == stateClosed {
		c.mu.Unlock()
		return false
	}
	if c.srv.draining.Load() || c.terminating.Load() {
		c.state = stateClosed
		c.mu.Unlock()
		c.send(errorResponse(adminShutdown()))
		c.flush()
		return false
	}
	c.state = stateIdle
	c.mu.Unlock()
	return true
}

// becomeBusy marks the connection as processing a message, unless Shutdown
// ended it while it waited.
func (c *conn) becomeBusy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateClosed {
		return false
	}
	c.state = stateBusy
	return true
}

// endIfIdle is Shutdown's first pass: an idle connection gets FATAL 57P01
// and is closed from the caller's goroutine (its own goroutine is blocked in
// a read, which the close ends); a busy one is left to finish.
func (c *conn) endIfIdle() {
	c.mu.Lock()
	prev := c.state
	if prev == stateIdle || prev == stateStartup {
		c.state = stateClosed
	}
	c.mu.Unlock()
	switch prev {
	case stateIdle:
		c.writeDirect(adminShutdown())
		c.raw.Close()
	case stateStartup:
		c.raw.Close()
	}
}

// forceClose is the end of a shutdown deadline (or a hard stop): whatever
// runs is cancelled and the socket closed.
func (c *conn) forceClose() {
	c.mu.Lock()
	c.state = stateClosed
	c.mu.Unlock()
	c.cancel(errShutdown)
	c.raw.Close()
}

// setRunning records the cancel function of the statement now running (nil
// when it ends), for CancelRequest.
func (c *conn) setRunning(cancel context.CancelCauseFunc) {
	c.mu.Lock()
	c.running = cancel
	c.mu.Unlock()
}

// cancelRunning is what a CancelRequest does: cancel the running statement,
// if any. A request that arrives between statements does nothing, as in
// PostgreSQL.
func (c *conn) cancelRunning() {
	c.mu.Lock()
	if c.running != nil {
		c.running(errCancelRequest)
	}
	c.mu.Unlock()
}

// statementContext returns a context for one statement and registers it as
// the running one; the returned func ends it.
func (c *conn) statementContext() (context.Context, func()) {
	ctx, cancel := c.takeContext()
	c.setRunning(cancel)
	return ctx, func() {
		c.setRunning(nil)
		c.giveBackContext(ctx, cancel)
	}
}

// takeContext returns a cancellable child of the connection's context for
// one statement or portal: the spare one when there is one (see spareCtx),
// else a new one. A spare context cancelled since (the connection's
// context was) is not handed out.
func (c *conn) takeContext() (context.Context, context.CancelCauseFunc) {
	if ctx, cancel := c.spareCtx, c.spareCancel; ctx != nil {
		c.spareCtx, c.spareCancel = nil, nil
		if ctx.Err() == nil {
			return ctx, cancel
		}
		cancel(nil)
	}
	return context.WithCancelCause(c.ctx)
}

// giveBackContext ends a context from takeContext whose statement or
// portal is over. One that was never cancelled becomes the spare, so that
// the next statement need not derive a new one; a cancelled one (a
// CancelRequest, the connection's end) is dropped, so its cause never
// reaches a later statement.
func (c *conn) giveBackContext(ctx context.Context, cancel context.CancelCauseFunc) {
	if ctx.Err() != nil || c.spareCtx != nil {
		cancel(nil)
		return
	}
	c.spareCtx, c.spareCancel = ctx, cancel
}

func adminShutdown() *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.AdminShutdown, Message: "terminating connection due to administrator command", Fatal: true}
}

// receiveFailed reports why the next message could not be read and ends
// the connection. The report is best effort: the client may be gone.
func (c *conn) receiveFailed(err error) {
	var tooLong *pgproto3.ExceededMaxBodyLenErr
	var e *sqlerr.Error
	switch {
	case errors.Is(err, net.ErrClosed):
		return
	case errors.As(err, &tooLong):
		e = &sqlerr.Error{Code: sqlerr.ProtocolViolation, Fatal: true,
			Message: fmt.Sprintf("invalid message length: %d bytes exceeds the limit of %d bytes", tooLong.ActualBodyLen, tooLong.MaxExpectedBodyLen)}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		e = &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: "unexpected EOF on client connection", Fatal: true}
	default:
		var ne net.Error
		if errors.As(err, &ne) {
			return
		}
		// pgproto3's decode errors: unknown message types, bodies that
		// do not parse.
		e = &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: "invalid frontend message: " + err.Error(), Fatal: true}
	}
	c.log.Debug("server: closing connection", "err", err)
	c.send(errorResponse(e))
	c.flush()
}

// send queues a message; flush writes the queue. Every message the
// connection sends after the startup packet goes through these two, which
// is why the connection keeps its own output buffer instead of pgproto3's
// Backend.Send and Flush.
func (c *conn) send(msg pgproto3.BackendMessage) {
	if c.encodeErr != nil {
		return
	}
	start := len(c.wbuf)
	buf, err := msg.Encode(c.wbuf)
	if err != nil {
		// What was queued before stays; the failed message is dropped and
		// flush reports the error, ending the connection as pgproto3 does.
		c.encodeErr = err
		c.wbuf = c.wbuf[:start]
		return
	}
	c.wbuf = buf
}

// keepWriteBuffer is the largest output buffer kept across flushes: a
// result up to flushThreshold plus the row that crossed it fits, and a
// connection that once sent a huge row gives that memory back.
const keepWriteBuffer = 2 * flushThreshold

func (c *conn) flush() error {
	if err := c.encodeErr; err != nil {
		c.encodeErr = nil
		c.wbuf = c.wbuf[:0]
		return connError{err}
	}
	if len(c.wbuf) == 0 {
		return nil
	}
	_, err := c.nc.Write(c.wbuf)
	if cap(c.wbuf) > keepWriteBuffer {
		c.wbuf = make([]byte, 0, 4096)
	} else {
		c.wbuf = c.wbuf[:0]
	}
	if err != nil {
		return connError{err}
	}
	return nil
}

// writeDirect writes one error straight to the socket, bypassing the
// backend's buffer, for callers that are not the command loop or that
// cannot trust the buffer's state.
func (c *conn) writeDirect(e *sqlerr.Error) {
	buf, err := errorResponse(e).Encode(nil)
	if err != nil {
		return
	}
	c.nc.SetWriteDeadline(time.Now().Add(directWriteTimeout))
	c.nc.Write(buf)
}

// sendSessionEvents forwards what the session has to tell the client
// between statements: notices, then changed parameters.
func (c *conn) sendSessionEvents() {
	for _, n := range c.sess.TakeNotices() {
		sev := n.Severity
		if sev == "" {
			sev = "NOTICE"
		}
		code := n.Code
		if code == "" {
			code = sqlerr.SuccessfulCompletion
		}
		c.send(&pgproto3.NoticeResponse{Severity: sev, SeverityUnlocalized: sev, Code: code, Message: n.Message})
	}
	for _, p := range c.sess.TakeParameterChanges() {
		if p.Name == "application_name" {
			c.backend.SetApplicationName(p.Value)
		}
		c.send(&pgproto3.ParameterStatus{Name: p.Name, Value: p.Value})
	}
}

// readyForQuery ends a command cycle (a simple Query or a Sync).
func (c *conn) readyForQuery() error {
	c.sendSessionEvents()
	status := c.sess.TxStatus()
	if status == 'I' {
		// Portals live no longer than their transaction; outside a
		// transaction block each cycle is its own implicit transaction.
		c.closeAllPortals()
	}
	c.backend.Idle(status)
	if c.encodeErr == nil {
		c.wbuf = append(c.wbuf, 'Z', 0, 0, 0, 5, status) // ReadyForQuery
	}
	return c.flush()
}

// sendCommandComplete queues CommandComplete with tag. It encodes straight
// into wbuf, as pgproto3's CommandComplete would: building that message
// (the struct, which escapes through the BackendMessage interface, and the
// tag copied into a []byte) cost two allocations per statement.
func (c *conn) sendCommandComplete(tag string) {
	if c.encodeErr != nil {
		return
	}
	c.wbuf = append(c.wbuf, 'C')
	c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, uint32(4+len(tag)+1))
	c.wbuf = append(c.wbuf, tag...)
	c.wbuf = append(c.wbuf, 0)
}

// dispatch handles one message. A non-nil error ends the connection.
func (c *conn) dispatch(msg pgproto3.FrontendMessage) error {
	if c.skipToSync {
		// After an error in the extended protocol everything up to the
		// next Sync is discarded, so that the rest of a pipeline does not
		// run against a state the client did not expect.
		switch msg.(type) {
		case *pgproto3.Sync, *pgproto3.Terminate:
		default:
			return nil
		}
	}
	switch msg.(type) {
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute:
		if !c.inCycle {
			// The first extended-protocol message after a Sync opens the
			// cycle's implicit transaction.
			c.inCycle = true
			c.sess.BeginImplicit()
		}
	}
	if c.msgRefused != nil {
		return c.refuseMessage(msg)
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.handleQuery(m.String)
	case *pgproto3.Parse:
		return c.handleParse(m)
	case *pgproto3.Bind:
		return c.handleBind(m)
	case *pgproto3.Describe:
		return c.handleDescribe(m)
	case *pgproto3.Execute:
		return c.handleExecute(m)
	case *pgproto3.Close:
		return c.handleClose(m)
	case *pgproto3.Sync:
		c.skipToSync = false
		c.inCycle = false
		if err := c.sess.Sync(); err != nil {
			if err := c.commandError(nil, err); err != nil {
				return err
			}
		}
		return c.readyForQuery()
	case *pgproto3.Flush:
		return c.flush()
	case *pgproto3.Terminate:
		return connError{io.EOF}
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// PostgreSQL ignores these outside COPY: a client may still be
		// sending the tail of a COPY the server already failed.
		return nil
	case *pgproto3.FunctionCall:
		if err := c.commandError(nil, sqlerr.NotSupported("the function call protocol")); err != nil {
			return err
		}
		return c.readyForQuery()
	default:
		e := &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: fmt.Sprintf("unexpected message type %T", msg), Fatal: true}
		c.send(errorResponse(e))
		c.flush()
		return connError{e}
	}
}

// commandError reports an error raised while running a command. It returns
// nil when the connection carries on, or a connError when it must end (the
// socket failed, or the error was FATAL). ctx is the statement's context, if
// any, to recognise cancellation.
func (c *conn) commandError(ctx context.Context, err error) error {
	var ce connError
	if errors.As(err, &ce) {
		return err
	}
	e := c.errorFor(ctx, err)
	c.send(errorResponse(e))
	c.sess.FailTransaction()
	if e.Fatal {
		c.flush()
		return connError{e}
	}
	return nil
}

// errorFor turns err into what the client sees. A statement that failed
// because its context was cancelled reports why it was cancelled, in
// PostgreSQL's words, whatever error the engine returned for it.
func (c *conn) errorFor(ctx context.Context, err error) *sqlerr.Error {
	if ctx != nil && ctx.Err() != nil {
		var se *sqlerr.Error
		isSQL := errors.As(err, &se)
		if !isSQL || se.Code == sqlerr.QueryCanceled || errors.Is(err, context.Canceled) {
			if c.ctx.Err() != nil {
				return adminShutdown()
			}
			if context.Cause(ctx) == errCancelRequest {
				return &sqlerr.Error{Code: sqlerr.QueryCanceled, Message: "canceling statement due to user request"}
			}
		}
	}
	return sqlerr.As(err)
}

// errorResponse renders e as PostgreSQL does.
func errorResponse(e *sqlerr.Error) *pgproto3.ErrorResponse {
	sev := "ERROR"
	if e.Fatal {
		sev = "FATAL"
	}
	code := e.Code
	if len(code) != 5 {
		code = sqlerr.InternalError
	}
	r := &pgproto3.ErrorResponse{
		Severity:            sev,
		SeverityUnlocalized: sev,
		Code:                code,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Where:               e.Where,
	}
	if e.Position > 0 {
		r.Position = int32(min(e.Position, 1<<31-1))
	}
	return r
}
