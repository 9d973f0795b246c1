package server

import (
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/pivotdb/pivotdb/activity"
)

// What runs, for pg_stat_activity and the functions that signal another
// session: each connection that completes its startup has an entry in
// Config.Activity (package activity), kept current around every statement.

var (
	// errTerminated is the cause a connection's context is cancelled with
	// by pg_terminate_backend; errClientGone when its client went away
	// while a statement ran.
	errTerminated = errors.New("server: connection terminated by pg_terminate_backend")
	errClientGone = errors.New("server: client closed the connection")
)

// backendSetter is implemented by sessions that answer pg_backend_pid and
// read the registry (*sql.Session).
type backendSetter interface {
	SetBackend(*activity.Backend)
}

// registerBackend enters the connection in the registry, once its session
// exists and just before its key is published.
func (c *conn) registerBackend(database, user string, params map[string]string) {
	info := activity.Info{PID: c.pid, Database: database, User: user, ApplicationName: params["application_name"],
		Cancel: c.cancelRunning, Terminate: c.terminate}
	if tcp, ok := c.raw.RemoteAddr().(*net.TCPAddr); ok {
		info.ClientAddr, info.ClientPort = tcp.IP.String(), tcp.Port
	} else if host, port, err := net.SplitHostPort(c.raw.RemoteAddr().String()); err == nil {
		info.ClientAddr = host
		info.ClientPort, _ = strconv.Atoi(port)
	}
	c.backend = c.srv.cfg.Activity.Register(info)
	c.ctx = activity.NewContext(c.ctx, c.backend)
	if bs, ok := c.sess.(backendSetter); ok {
		bs.SetBackend(c.backend)
	}
}

// terminate is pg_terminate_backend: an idle connection gets FATAL 57P01
// at once; a busy one has its statement cancelled, which reports 57P01 and
// ends the connection (errorFor sees the connection's context done).
func (c *conn) terminate() {
	c.terminating.Store(true)
	c.mu.Lock()
	idle := c.state == stateIdle
	c.mu.Unlock()
	if idle {
		c.endIfIdle()
		return
	}
	c.cancel(errTerminated)
}

// startStatement marks the backend active with text and returns the func
// that reports the statement's end to the observer and the slow-query log.
func (c *conn) startStatement(text string) func(tag string, err error) {
	c.backend.StartQuery(text, c.sess.TxStatus() != 'I')
	start := time.Now()
	return func(tag string, err error) {
		d := time.Since(start)
		c.srv.cfg.Observer.StatementDone(tag, d, err)
		if t := c.srv.cfg.SlowQueryThreshold; t > 0 && d >= t {
			c.log.Warn("slow query", "duration", d, "query", text, "user", c.backend.User,
				"database", c.backend.Database, "failed", err != nil)
		}
	}
}
