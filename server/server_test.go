package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// testTimeout is a safety net so that a broken server fails a test instead
// of hanging it; no test depends on how long anything takes.
const testTimeout = 30 * time.Second

// testServer is a server on a loopback port with a fake engine.
type testServer struct {
	*Server
	fake *fakeEngine
	done chan error // Serve's result
}

func startServer(t testing.TB, cfg Config, engine Engine) *testServer {
	t.Helper()
	var fake *fakeEngine
	switch e := engine.(type) {
	case *fakeEngine:
		fake = e
	case directEngine:
		fake = e.fakeEngine
	}
	if engine == nil {
		fake = newFakeEngine()
		engine = fake
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := New(cfg, engine)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, fake: fake, done: make(chan error, 1)}
	go func() { ts.done <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-ts.done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
		if fake != nil {
			if n := fake.openResults.Load(); n != 0 {
				t.Errorf("%d results left open", n)
			}
			if n := fake.openSessions.Load(); n != 0 {
				t.Errorf("%d sessions left open", n)
			}
			fake.checkViolations(t)
		}
	})
	return ts
}

func (ts *testServer) port() int { return ts.Addr().(*net.TCPAddr).Port }

func (ts *testServer) connString(extra string) string {
	return fmt.Sprintf("postgres://pivotdb@127.0.0.1:%d/pivotdb?sslmode=disable%s", ts.port(), extra)
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a pgx connection in the given mode.
func (ts *testServer) connect(t testing.TB, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	conn, err := pgx.ConnectConfig(testContext(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// rawConn is a client that speaks the protocol message by message.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	fe *pgproto3.Frontend
}

func (ts *testServer) dialRaw(t testing.TB) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", ts.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { nc.Close() })
	return &rawConn{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// startup sends a StartupMessage and reads up to ReadyForQuery.
func (ts *testServer) rawStartup(t testing.TB) *rawConn {
	t.Helper()
	rc := ts.dialRaw(t)
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "pivotdb", "database": "pivotdb"}})
	rc.expectUntilReady()
	return rc
}

func (rc *rawConn) send(msgs ...pgproto3.FrontendMessage) {
	rc.t.Helper()
	for _, m := range msgs {
		rc.fe.Send(m)
	}
	if err := rc.fe.Flush(); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawConn) receive() pgproto3.BackendMessage {
	rc.t.Helper()
	m, err := rc.fe.Receive()
	if err != nil {
		rc.t.Fatalf("receive: %v", err)
	}
	return m
}

// expectUntilReady reads messages through ReadyForQuery and returns them in
// a compact text form, one per message.
func (rc *rawConn) expectUntilReady() []string {
	rc.t.Helper()
	var out []string
	for {
		m := rc.receive()
		out = append(out, describeMsg(m))
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			return out
		}
	}
}

// readUntilClosed reads until the server closes and returns what came, so
// tests can look for the error that preceded the close.
func (rc *rawConn) readUntilClosed() []string {
	rc.t.Helper()
	var out []string
	for {
		m, err := rc.fe.Receive()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				rc.t.Fatalf("server did not close the connection; got %v", out)
			}
			return out
		}
		out = append(out, describeMsg(m))
	}
}

func describeMsg(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.ReadyForQuery:
		return "ReadyForQuery " + string(m.TxStatus)
	case *pgproto3.DataRow:
		var vals []string
		for _, v := range m.Values {
			if v == nil {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, string(v))
			}
		}
		return "DataRow " + strings.Join(vals, ",")
	case *pgproto3.CommandComplete:
		return "CommandComplete " + string(m.CommandTag)
	case *pgproto3.ErrorResponse:
		return "ErrorResponse " + m.Severity + " " + m.Code + " " + m.Message
	case *pgproto3.RowDescription:
		var names []string
		for _, f := range m.Fields {
			names = append(names, fmt.Sprintf("%s:%d:%d", f.Name, f.DataTypeOID, f.Format))
		}
		return "RowDescription " + strings.Join(names, ",")
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("ParameterDescription %v", m.ParameterOIDs)
	case *pgproto3.ParameterStatus:
		return "ParameterStatus " + m.Name + "=" + m.Value
	case *pgproto3.NoticeResponse:
		return "NoticeResponse " + m.Severity + " " + m.Message
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", m), "*pgproto3.")
}

// pgCode returns the SQLSTATE of a pgx error, or "" for none.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// mustQueryValue runs a one-value query and returns the value as text.
func mustQueryValue(t testing.TB, conn *pgx.Conn, sql string, args ...any) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(testContext(t), sql, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func checkAlive(t testing.TB, conn *pgx.Conn) {
	t.Helper()
	var n int32
	if err := conn.QueryRow(testContext(t), "select 42").Scan(&n); err != nil || n != 42 {
		t.Fatalf("connection not usable: %v %v", n, err)
	}
}
