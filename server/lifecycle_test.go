package server

import (
	"context"
	"errors"
	"github.com/pivotdb/pivotdb/panics"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// waitSleeping waits until the fake engine runs a pg_sleep.
func waitSleeping(t testing.TB, fake *fakeEngine) {
	t.Helper()
	select {
	case <-fake.sleeping:
	case <-time.After(testTimeout):
		t.Fatal("statement did not start")
	}
}

func TestCancelRequest(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	conn := ts.connect(t, pgx.QueryExecModeExec)
	other := ts.connect(t, pgx.QueryExecModeExec)

	errc := make(chan error, 1)
	go func() {
		_, err := conn.Exec(context.Background(), "select pg_sleep(60)")
		errc <- err
	}()
	waitSleeping(t, ts.fake)

	// A wrong secret or pid cancels nothing.
	pc := conn.PgConn()
	if ts.cancelRequest(pc.PID(), []byte{1, 2, 3, 4}) && !slices.Equal(pc.SecretKey(), []byte{1, 2, 3, 4}) {
		t.Fatal("wrong secret accepted")
	}
	if ts.cancelRequest(other.PgConn().PID(), pc.SecretKey()) {
		t.Fatal("secret of another connection accepted")
	}

	if err := pc.CancelRequest(testContext(t)); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != sqlerr.QueryCanceled || pe.Message != "canceling statement due to user request" || pe.Severity != "ERROR" {
		t.Fatalf("got %v", err)
	}
	// Only the statement was cancelled: both connections carry on.
	checkAlive(t, conn)
	checkAlive(t, other)
	// Nothing is running now, so a cancel is a no-op.
	if !ts.cancelRequest(pc.PID(), pc.SecretKey()) {
		t.Fatal("right key refused")
	}
	checkAlive(t, conn)
}

func TestTerminate(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Query{String: "begin"})
	rc.expectUntilReady()
	rc.send(&pgproto3.Terminate{})
	if got := rc.readUntilClosed(); len(got) != 0 {
		t.Fatalf("got %q after Terminate", got)
	}
	select {
	case <-ts.fake.sessionDone:
	case <-time.After(testTimeout):
		t.Fatal("session not closed")
	}

	conn := ts.connect(t, pgx.QueryExecModeExec)
	if err := conn.Close(testContext(t)); err != nil {
		t.Fatal(err)
	}
	<-ts.fake.sessionDone
}

func TestPanicIsContained(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	bystander := ts.connect(t, pgx.QueryExecModeExec)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	before := panics.Count()
	_, err := conn.Exec(testContext(t), "select panic()")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != sqlerr.InternalError || pe.Severity != "FATAL" || !strings.Contains(pe.Message, "fake: panic() called") {
		t.Fatalf("got %v", err)
	}
	if !conn.PgConn().IsClosed() {
		if err := conn.Ping(testContext(t)); err == nil {
			t.Fatal("connection survived a panic")
		}
	}
	checkAlive(t, bystander)
	checkAlive(t, ts.connect(t, pgx.QueryExecModeExec))
	if panics.Count() <= before {
		t.Fatal("the panic was not counted")
	}
}

func TestShutdownGraceful(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	idle := ts.rawStartup(t)
	busy := ts.rawStartup(t)
	busy.send(&pgproto3.Query{String: "select pg_sleep(1)"})
	waitSleeping(t, ts.fake)

	shutdown := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		shutdown <- ts.Shutdown(ctx)
	}()

	fatal := "ErrorResponse FATAL 57P01 terminating connection due to administrator command"
	if got := idle.readUntilClosed(); !slices.Equal(got, []string{fatal}) {
		t.Errorf("idle connection got %q", got)
	}
	// The running statement finishes; then the connection ends.
	want := []string{"RowDescription pg_sleep:25:0", "DataRow ", "CommandComplete SELECT 1", "ReadyForQuery I", fatal}
	if got := busy.readUntilClosed(); !slices.Equal(got, want) {
		t.Errorf("busy connection got %q\nwant %q", got, want)
	}
	if err := <-shutdown; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if c, err := net.Dial("tcp", ts.Addr().String()); err == nil {
		c.Close()
		t.Fatal("still accepting")
	}
}

func TestShutdownDeadline(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	busy := ts.rawStartup(t)
	busy.send(&pgproto3.Query{String: "select pg_sleep(60)"})
	waitSleeping(t, ts.fake)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has passed already
	if err := ts.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v", err)
	}
	got := busy.readUntilClosed()
	if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "DataRow") }) {
		t.Fatalf("statement finished: %q", got)
	}
	// The cancelled statement ends its connection with a reason, not a
	// bare close.
	if fatal := "ErrorResponse FATAL 57P01 terminating connection due to administrator command"; !slices.Contains(got, fatal) {
		t.Fatalf("busy connection got %q, want %q", got, fatal)
	}
}

func TestServeContextIsHardStop(t *testing.T) {
	fake := newFakeEngine()
	s := New(Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)}, fake)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	ts := &testServer{Server: s, fake: fake}
	rc := ts.rawStartup(t)
	rc.send(&pgproto3.Query{String: "select pg_sleep(60)"})
	waitSleeping(t, fake)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve: %v", err)
	}
	rc.readUntilClosed()
	if n := fake.openSessions.Load(); n != 0 {
		t.Fatalf("%d sessions open after Serve returned", n)
	}
}

// A statement's or portal's context is reused by the next one only when
// it was never cancelled: a CancelRequest's cause must not reach a later
// statement, and a connection being shut down hands out cancelled ones.
func TestContextReuse(t *testing.T) {
	c := &conn{}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())

	a, cancelA := c.takeContext()
	c.giveBackContext(a, cancelA)
	b, cancelB := c.takeContext()
	if b != a {
		t.Fatal("an uncancelled context was not reused")
	}
	cancelB(errCancelRequest)
	c.giveBackContext(b, cancelB)
	d, cancelD := c.takeContext()
	if d == b || d.Err() != nil {
		t.Fatalf("a cancelled context was handed out again (err %v)", d.Err())
	}
	// A second context given back while one is spare is ended, not kept.
	e, cancelE := c.takeContext()
	c.giveBackContext(d, cancelD)
	c.giveBackContext(e, cancelE)
	if e.Err() == nil {
		t.Fatal("a context given back beside the spare one was not cancelled")
	}
	c.cancel(errShutdown)
	f, _ := c.takeContext()
	if f.Err() == nil || context.Cause(f) != errShutdown {
		t.Fatalf("after the connection's end: err %v, cause %v", f.Err(), context.Cause(f))
	}
}
