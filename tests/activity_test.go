package tests

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// backendRow is what a test reads of one pg_stat_activity row.
type backendRow struct {
	state, waitType, query, app, user string
}

// activityOf reads pid's row of pg_stat_activity through c; ok is false
// when there is none.
func activityOf(t *testing.T, c *pgx.Conn, pid uint32) (backendRow, bool) {
	t.Helper()
	var r backendRow
	var wait *string
	err := c.QueryRow(context.Background(), `SELECT state, wait_event_type, query, application_name, usename
		FROM pg_stat_activity WHERE pid = $1`, int32(pid)).Scan(&r.state, &wait, &r.query, &r.app, &r.user)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false
	}
	if err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	if wait != nil {
		r.waitType = *wait
	}
	return r, true
}

// waitFor polls cond until it holds (10 s at most: a hang fails the test
// rather than timing it).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// blockOnRow starts, on c, an UPDATE of the row that another transaction
// holds locked; the returned channel gets its error.
func blockOnRow(c *pgx.Conn) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(context.Background(), "UPDATE acct SET v = v + 1 WHERE id = 1")
		done <- err
	}()
	return done
}

func sqlstate(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func TestPgStatActivityCancelTerminate(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	holder := srv.connect(t, pgx.QueryExecModeCacheStatement)
	cfg, err := pgx.ParseConfig(srv.connString("pivotdb") + "&application_name=waiter")
	if err != nil {
		t.Fatal(err)
	}
	waiter, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close(ctx)
	wpid := waiter.PgConn().PID()

	// pg_backend_pid is the PID of BackendKeyData.
	var got int32
	if err := waiter.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&got); err != nil || uint32(got) != wpid {
		t.Fatalf("pg_backend_pid() = %d, %v; BackendKeyData says %d", got, err, wpid)
	}
	mustExec(t, holder, "CREATE TABLE acct (id Int64, v Int64, PRIMARY KEY (id))")
	mustExec(t, holder, "INSERT INTO acct VALUES (1, 0)")
	if r, ok := activityOf(t, holder, wpid); !ok || r.state != "idle" || r.app != "waiter" || r.user != "pivotdb" ||
		r.query != "SELECT pg_backend_pid()" {
		t.Fatalf("idle waiter: %+v, %v", r, ok)
	}
	mustExec(t, holder, "SET application_name = 'holder'")
	if r, _ := activityOf(t, waiter, holder.PgConn().PID()); r.app != "holder" {
		t.Fatalf("application_name after SET: %+v", r)
	}

	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, "UPDATE acct SET v = 10 WHERE id = 1")
	if r, _ := activityOf(t, waiter, holder.PgConn().PID()); r.state != "idle in transaction" {
		t.Fatalf("holder seen from waiter: %+v", r)
	}

	// A statement waiting on the row lock shows as active, waiting on Lock,
	// and pg_cancel_backend from the other session cancels it.
	done := blockOnRow(waiter)
	waitFor(t, "the waiter to wait on the lock", func() bool {
		r, _ := activityOf(t, holder, wpid)
		return r.state == "active" && r.waitType == "Lock" && strings.HasPrefix(r.query, "UPDATE acct")
	})
	var sent bool
	if err := holder.QueryRow(ctx, "SELECT pg_cancel_backend($1)", int32(wpid)).Scan(&sent); err != nil || !sent {
		t.Fatalf("pg_cancel_backend: %v, %v", sent, err)
	}
	if err := <-done; sqlstate(err) != "57014" {
		t.Fatalf("cancelled statement: %v, want 57014", err)
	}
	// The session carries on.
	if r, ok := activityOf(t, holder, wpid); !ok || r.state != "idle" || r.waitType != "" {
		t.Fatalf("after cancel: %+v, %v", r, ok)
	}
	// No such backend: false.
	if err := holder.QueryRow(ctx, "SELECT pg_cancel_backend(999999)").Scan(&sent); err != nil || sent {
		t.Fatalf("pg_cancel_backend(999999) = %v, %v", sent, err)
	}

	// pg_terminate_backend ends the waiting session with 57P01.
	done = blockOnRow(waiter)
	waitFor(t, "the waiter to wait again", func() bool {
		r, _ := activityOf(t, holder, wpid)
		return r.waitType == "Lock"
	})
	if err := holder.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(wpid)).Scan(&sent); err != nil || !sent {
		t.Fatalf("pg_terminate_backend: %v, %v", sent, err)
	}
	if err := <-done; sqlstate(err) != "57P01" {
		t.Fatalf("terminated statement: %v, want 57P01", err)
	}
	waitFor(t, "the terminated session to leave pg_stat_activity", func() bool {
		_, ok := activityOf(t, holder, wpid)
		return !ok
	})
	mustExec(t, holder, "COMMIT")
}

// A client that goes away while its statement waits has the statement
// cancelled: its session leaves pg_stat_activity although the lock it
// waits for is still held. The client is a psql process killed with
// SIGKILL, so nothing (no Terminate, no CancelRequest) is sent: only the
// closed socket tells.
func TestDisconnectedClientCancelsStatement(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psql is not installed (make deps installs it)")
		}
		t.Skip("psql is not installed (make deps installs it)")
	}
	srv := startServer(t)
	holder := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, holder, "CREATE TABLE acct (id Int64, v Int64, PRIMARY KEY (id))")
	mustExec(t, holder, "INSERT INTO acct VALUES (1, 0)")
	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, "UPDATE acct SET v = 10 WHERE id = 1")

	host, port, _ := net.SplitHostPort(srv.addr)
	client := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", "pivotdb", "-d", "pivotdb",
		"-v", "application_name=doomed", "-c", "UPDATE acct SET v = v + 1 WHERE id = 1")
	client.Env = append(os.Environ(), "PGAPPNAME=doomed", "PGCONNECT_TIMEOUT=10")
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int32
	waitFor(t, "the client to wait on the lock", func() bool {
		err := holder.QueryRow(context.Background(), `SELECT pid FROM pg_stat_activity
			WHERE application_name = 'doomed' AND wait_event_type = 'Lock'`).Scan(&pid)
		return err == nil
	})
	client.Process.Kill()
	client.Wait()
	waitFor(t, "the abandoned statement to be cancelled", func() bool {
		_, ok := activityOf(t, holder, uint32(pid))
		return !ok
	})
	// The lock is still held by the holder, who commits normally.
	mustExec(t, holder, "COMMIT")
	var v int64
	if err := holder.QueryRow(context.Background(), "SELECT v FROM acct WHERE id = 1").Scan(&v); err != nil || v != 10 {
		t.Fatalf("v = %d, %v; want 10 (the abandoned UPDATE must not have run)", v, err)
	}
}

func TestPgStatUserTables(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE st (id Int64, v Int64, PRIMARY KEY (id))")
	mustExec(t, c, "INSERT INTO st VALUES (1, 1), (2, 2), (3, 3), (4, 4)")
	mustExec(t, c, "UPDATE st SET v = 0 WHERE v > 2") // a range read, 2 rows
	mustExec(t, c, "DELETE FROM st WHERE id = 1")     // a primary key lookup
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM st").Scan(&n); err != nil || n != 3 {
		t.Fatalf("count = %d, %v", n, err)
	}
	var seq, idx, ins, upd, del, live int64
	err := c.QueryRow(context.Background(), `SELECT seq_scan, idx_scan, n_tup_ins, n_tup_upd, n_tup_del, n_live_tup
		FROM pg_stat_user_tables WHERE relname = 'st'`).Scan(&seq, &idx, &ins, &upd, &del, &live)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 2 || idx != 1 || ins != 4 || upd != 2 || del != 1 || live != 3 {
		t.Fatalf("pg_stat_user_tables: seq_scan %d idx_scan %d ins %d upd %d del %d live %d; want 2 1 4 2 1 3",
			seq, idx, ins, upd, del, live)
	}
}

// Signalling another session follows PostgreSQL's rule: a role may signal
// its own sessions, only a superuser a superuser's; other roles' queries
// are hidden in pg_stat_activity.
func TestSignalPermissions(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	admin := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, admin, "CREATE USER alice")
	connectAs := func(user string) *pgx.Conn {
		c, err := pgx.Connect(ctx, strings.Replace(srv.connString("pivotdb"), "pivotdb@", user+"@", 1))
		if err != nil {
			t.Fatalf("connect as %s: %v", user, err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		return c
	}
	alice, alice2 := connectAs("alice"), connectAs("alice")
	var ok bool
	err := alice.QueryRow(ctx, "SELECT pg_cancel_backend($1)", int32(admin.PgConn().PID())).Scan(&ok)
	if sqlstate(err) != "42501" || !strings.Contains(err.Error(), "must be a superuser to cancel superuser query") {
		t.Fatalf("alice cancelling the superuser's session: %v", err)
	}
	if err := alice.QueryRow(ctx, "SELECT pg_cancel_backend($1)", int32(alice2.PgConn().PID())).Scan(&ok); err != nil || !ok {
		t.Fatalf("alice cancelling her own session: %v, %v", ok, err)
	}
	var query string
	if err := alice.QueryRow(ctx, "SELECT query FROM pg_stat_activity WHERE pid = $1",
		int32(admin.PgConn().PID())).Scan(&query); err != nil || query != "<insufficient privilege>" {
		t.Fatalf("the superuser's query as alice sees it: %q, %v", query, err)
	}
	// The superuser may signal anyone.
	if err := admin.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int32(alice2.PgConn().PID())).Scan(&ok); err != nil || !ok {
		t.Fatalf("superuser terminating alice's session: %v, %v", ok, err)
	}
}

// pg_locks shows a row lock held by one session and awaited by another.
func TestPgLocks(t *testing.T) {
	srv := startServer(t)
	holder := srv.connect(t, pgx.QueryExecModeCacheStatement)
	waiter := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, holder, "CREATE TABLE acct (id Int64, v Int64, PRIMARY KEY (id))")
	mustExec(t, holder, "INSERT INTO acct VALUES (1, 0)")
	mustExec(t, holder, "BEGIN")
	mustExec(t, holder, "UPDATE acct SET v = 10 WHERE id = 1")
	done := blockOnRow(waiter)
	hpid, wpid := int32(holder.PgConn().PID()), int32(waiter.PgConn().PID())
	count := func(where string, args ...any) int {
		var n int
		if err := holder.QueryRow(context.Background(), "SELECT count(*) FROM pg_locks WHERE "+where, args...).Scan(&n); err != nil {
			t.Fatalf("pg_locks: %v", err)
		}
		return n
	}
	waitFor(t, "the waiter's lock request in pg_locks", func() bool {
		return count("pid = $1 AND NOT granted AND locktype = 'transactionid'", wpid) == 1
	})
	if n := count("pid = $1 AND granted AND locktype = 'tuple' AND relation = 'acct'::regclass", hpid); n != 1 {
		t.Errorf("the holder's row locks on acct: %d, want 1", n)
	}
	if n := count(`pid = $1 AND granted AND locktype = 'transactionid' AND mode = 'ExclusiveLock' AND
		transactionid = (SELECT transactionid FROM pg_locks WHERE pid = $2 AND NOT granted)`, hpid, wpid); n != 1 {
		t.Errorf("the waiter does not wait for the holder's transaction: %d", n)
	}
	mustExec(t, holder, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := count("true"); n != 0 {
		t.Errorf("%d locks left after both transactions ended", n)
	}
}
