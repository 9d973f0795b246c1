package sql

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

func errCode(err error) string {
	if e := sqlerr.As(err); e != nil {
		return e.Code + " " + e.Message
	}
	return fmt.Sprint(err)
}

// TestStaleReadOnly: a session with stale_read_only = on reads at
// follower_read_timestamp() (the closed target and a margin behind: 80 ms
// for a 50 ms target), with the schema of then, and is read-only.
func TestStaleReadOnly(t *testing.T) {
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: testEngineLogger(),
		FollowerReads: &FollowerReads{Target: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	w, s := testSession(t, e), testSession(t, e)
	query(t, w, "CREATE TABLE f (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, w, "INSERT INTO f VALUES (1, 'a')")
	query(t, s, "SET stale_read_only = on")
	// Just created: not there 80 ms ago.
	if _, err := tryQuery(s, "SELECT count(*) FROM f"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedTable {
		t.Fatalf("a table created just now, read stale: %s", errCode(err))
	}
	time.Sleep(120 * time.Millisecond)
	if got := formatRows(query(t, s, "SELECT k, v FROM f")); got != `1,"a"` {
		t.Fatalf("stale read after the offset: %q", got)
	}
	query(t, w, "INSERT INTO f VALUES (2, 'b')")
	if got := formatRows(query(t, s, "SELECT count(*) FROM f")); got != "1" {
		t.Fatalf("a row written just now, read stale: %q", got)
	}
	// follower_read_timestamp() reads as far back as the mode does.
	if got := formatRows(query(t, w, "SELECT count(*) FROM f AS OF SYSTEM TIME follower_read_timestamp()")); got != "1" {
		t.Fatalf("AS OF SYSTEM TIME follower_read_timestamp(): %q", got)
	}
	if _, err := tryQuery(s, "INSERT INTO f VALUES (3, 'c')"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ReadOnlySQLTransaction {
		t.Fatalf("a write in the stale read-only mode: %s", errCode(err))
	}
	if _, err := tryQuery(s, "CREATE TABLE g (k Int64, PRIMARY KEY (k))"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ReadOnlySQLTransaction {
		t.Fatalf("DDL in the stale read-only mode: %s", errCode(err))
	}
	if got := formatRows(query(t, s, "SHOW stale_read_only")); got != `"on"` {
		t.Fatalf("stale_read_only: %q", got)
	}
	if got := formatRows(query(t, s, "SHOW transaction_read_only")); got != `"on"` {
		t.Fatalf("transaction_read_only in the stale read-only mode: %q", got)
	}
	// A block reads at one stale time.
	query(t, s, "BEGIN")
	if got := formatRows(query(t, s, "SELECT count(*) FROM f")); got != "1" {
		t.Fatalf("in a block: %q", got)
	}
	if _, err := tryQuery(s, "SET stale_read_only = off"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ActiveSQLTransaction {
		t.Fatalf("leaving the mode inside a block: %s", errCode(err))
	}
	query(t, s, "ROLLBACK")
	time.Sleep(120 * time.Millisecond)
	if got := formatRows(query(t, s, "SELECT count(*) FROM f")); got != "2" {
		t.Fatalf("later: %q", got)
	}
	query(t, s, "SET stale_read_only = off")
	query(t, s, "INSERT INTO f VALUES (3, 'c')")
	if got := formatRows(query(t, s, "SELECT count(*) FROM f")); got != "3" {
		t.Fatalf("the mode off: %q", got)
	}
}

// TestFollowerEngine: an engine opened with OpenFollower over a store
// reads only at or below the closed timestamp it is given (a later time
// waits, then fails with 55000; a statement without AS OF reads at the
// closed timestamp while it is within the staleness bound), binds against the catalog's history,
// refuses writes (25006) and leaving the stale mode, writes nothing to
// the store, and leaves the storage engine open when it closes.
func TestFollowerEngine(t *testing.T) {
	dir, e, w := followerSource(t)
	tsOf := func() hlc.Timestamp {
		ts, err := e.storage.Clock().Now()
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	t1 := tsOf()
	query(t, w, "ALTER TABLE f ADD COLUMN x Int64 DEFAULT 7")
	query(t, w, "INSERT INTO f VALUES (2, 'b', 8)")
	t2 := tsOf()
	e.Close()

	var closed atomic.Pointer[hlc.Timestamp]
	stale := hlc.Timestamp{WallTime: t1.WallTime - int64(sessionvars.DefaultFollowerReadMaxStaleness) - int64(time.Second)}
	closed.Store(&stale)
	st, fe := openTestFollower(t, dir, nil, &closed)
	s := testSession(t, fe)
	// The closed timestamp is older than the staleness bound, and before
	// follower_read_timestamp(): a statement without AS OF waits, then
	// fails.
	if _, err := tryQuery(s, "SELECT count(*) FROM f"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("a read past the closed timestamp: %s", errCode(err))
	}
	// The closed timestamp is t1, after follower_read_timestamp() would
	// be (the test's target is 50 ms) but within the bound: such a
	// statement reads at t1 (bounded staleness), before column x.
	closed.Store(&t1)
	if got := formatRows(query(t, s, "SELECT k, v FROM f")); got != `1,"a"` {
		t.Fatalf("bounded staleness, at the closed timestamp t1: %q", got)
	}
	// At t1 the table has no column x yet.
	if got := formatRows(query(t, s, "SELECT * FROM f AS OF SYSTEM TIME "+asOfLiteral(t1))); got != `1,"a"` {
		t.Fatalf("at the closed timestamp t1: %q", got)
	}
	if _, err := tryQuery(s, "SELECT * FROM f AS OF SYSTEM TIME "+asOfLiteral(t2)); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("AS OF a time past the closed timestamp: %s", errCode(err))
	}
	// The closed timestamp moves while a read waits for it.
	go func() {
		time.Sleep(30 * time.Millisecond)
		c := hlc.Timestamp{WallTime: time.Now().Add(time.Hour).UnixNano()}
		closed.Store(&c)
	}()
	if got := formatRows(query(t, s, "SELECT * FROM f AS OF SYSTEM TIME "+asOfLiteral(t2)+" ORDER BY k")); got != `1,"a",7|2,"b",8` {
		t.Fatalf("at t2 once closed: %q", got)
	}
	if got := formatRows(query(t, s, "SELECT k, x FROM f ORDER BY k")); got != "1,7|2,8" {
		t.Fatalf("stale read once closed: %q", got)
	}
	for _, q := range []string{"INSERT INTO f VALUES (3, 'c', 1)", "CREATE TABLE g (k Int64, PRIMARY KEY (k))", "SELECT nextval('s')"} {
		if _, err := tryQuery(s, q); sqlerr.As(err) == nil || (sqlerr.As(err).Code != sqlerr.ReadOnlySQLTransaction && q != "SELECT nextval('s')") {
			t.Fatalf("%s on a follower: %s", q, errCode(err))
		}
	}
	if _, err := tryQuery(s, "SET stale_read_only = off"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.FeatureNotSupported {
		t.Fatalf("leaving the stale mode on a follower: %s", errCode(err))
	}
	if got := formatRows(query(t, s, "SHOW stale_read_only")); got != `"on"` {
		t.Fatalf("stale_read_only on a follower: %q", got)
	}
	s.Close()
	if err := fe.Close(); err != nil {
		t.Fatal(err)
	}
	// The storage engine is still open, and still refuses commits.
	b := st.NewBatch()
	defer b.Close()
	if err := b.Set(append(storage.TablePrefix(99), 'x'), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ReadOnlySQLTransaction {
		t.Fatalf("a commit on the follower's store: %v", err)
	}
}

// TestFollowerReadTimestampFunction: follower_read_timestamp() is the
// statement time less the offset of the engine's closed target (1.6 ×).
func TestFollowerReadTimestampFunction(t *testing.T) {
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: testEngineLogger(),
		FollowerReads: &FollowerReads{Target: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := testSession(t, e)
	got := formatRows(query(t, s, "SELECT CAST(now() - follower_read_timestamp() AS Utf8)"))
	if got != `"00:00:16"` {
		t.Fatalf("now() - follower_read_timestamp(): %s, want 16 s", got)
	}
	d := testSession(t, testEngine(t))
	if got := formatRows(query(t, d, "SELECT CAST(now() - experimental_follower_read_timestamp() AS Utf8)")); got != `"00:00:04.8"` {
		t.Fatalf("with the default target: %s, want 4.8 s", got)
	}
}

// openTestFollower opens dir's storage engine (its wall clock physical,
// nil: the system's) and a follower engine over it that reads at or below
// *closed, with a 50 ms closed target and waits of up to 100 ms. The
// storage engine closes with the test; the caller closes the follower.
func openTestFollower(t *testing.T, dir string, physical func() int64, closed *atomic.Pointer[hlc.Timestamp]) (*storage.Engine, *Engine) {
	t.Helper()
	st, err := storage.Open(dir, storage.Options{NoSync: true, Logger: testEngineLogger(), GCTTL: -1, Physical: physical})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fe, err := OpenFollower(Options{Storage: st, Logger: testEngineLogger(), FollowerReads: &FollowerReads{
		Target: 50 * time.Millisecond, Wait: 100 * time.Millisecond,
		Closed: func() (hlc.Timestamp, bool) { return *closed.Load(), true },
	}})
	if err != nil {
		t.Fatal(err)
	}
	return st, fe
}

// TestFollowerReadMaxStaleness: the staleness bound of a follower
// engine's fallback is the session setting follower_read_max_staleness,
// whose default is the engine's (FollowerReads.MaxStaleness, serve
// --follower-read-max-staleness) or 15 s; 0 turns the fallback off, and a
// bad value is refused with 22023. The replica's closed timestamp here is
// 10 s old (the clock runs 10 s ahead of the writes), behind
// follower_read_timestamp().
func TestFollowerReadMaxStaleness(t *testing.T) {
	dir, e, _ := followerSource(t)
	now, err := e.storage.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	var closed atomic.Pointer[hlc.Timestamp]
	closed.Store(&now)
	ahead := func() int64 { return time.Now().Add(10 * time.Second).UnixNano() }
	answers := func(s *Session, what string) {
		t.Helper()
		if got := formatRows(query(t, s, "SELECT k, v FROM f")); got != `1,"a"` {
			t.Fatalf("%s: %q", what, got)
		}
	}
	fails := func(s *Session, what string) {
		t.Helper()
		if _, err := tryQuery(s, "SELECT k, v FROM f"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.ObjectNotInPrerequisiteState {
			t.Fatalf("%s: %s, want 55000", what, errCode(err))
		}
	}
	// SET, SHOW and RESET answer past the bound too: they read no table.
	shows := func(s *Session, want string) {
		t.Helper()
		if got := formatRows(query(t, s, "SHOW follower_read_max_staleness")); got != `"`+want+`"` {
			t.Fatalf("SHOW follower_read_max_staleness: %s, want %s", got, want)
		}
	}

	st, fe := openTestFollower(t, dir, ahead, &closed)
	reopen := func(maxStaleness time.Duration) *Engine {
		t.Helper()
		fe, err := OpenFollower(Options{Storage: st, Logger: testEngineLogger(), FollowerReads: &FollowerReads{
			Target: 50 * time.Millisecond, Wait: 100 * time.Millisecond, MaxStaleness: maxStaleness,
			Closed: func() (hlc.Timestamp, bool) { return *closed.Load(), true },
		}})
		if err != nil {
			t.Fatal(err)
		}
		return fe
	}
	s := testSession(t, fe)
	shows(s, "15000")
	answers(s, "10 s old, within the default 15 s")
	query(t, s, "SET follower_read_max_staleness = '5s'")
	shows(s, "5000")
	fails(s, "10 s old, past a bound of 5 s")
	query(t, s, "SET follower_read_max_staleness = 0")
	fails(s, "no fallback")
	query(t, s, "SET follower_read_max_staleness = '1min'")
	answers(s, "within a bound of a minute")
	for _, bad := range []string{"'-1'", "'soon'", "'5 parsecs'"} {
		if _, err := tryQuery(s, "SET follower_read_max_staleness = "+bad); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.InvalidParameterValue {
			t.Fatalf("SET follower_read_max_staleness = %s: %s, want 22023", bad, errCode(err))
		}
	}
	shows(s, "60000")
	query(t, s, "RESET follower_read_max_staleness")
	shows(s, "15000")
	s.Close()
	fe.Close()

	// The engine's default (the serve flag): 5 s, and negative for none.
	fe = reopen(5 * time.Second)
	s = testSession(t, fe)
	shows(s, "5000")
	fails(s, "past the server's bound of 5 s")
	query(t, s, "SET follower_read_max_staleness = '20s'")
	answers(s, "within the session's 20 s")
	query(t, s, "RESET follower_read_max_staleness")
	fails(s, "RESET: the server's 5 s again")
	s.Close()
	fe.Close()
	fe = reopen(-1)
	s = testSession(t, fe)
	shows(s, "0")
	fails(s, "the server turned the fallback off")
	s.Close()
	fe.Close()
}

// followerSource opens an engine on a new directory whose table f holds
// (1, 'a'): the store the follower tests open a follower engine on.
func followerSource(t *testing.T) (dir string, e *Engine, w *Session) {
	t.Helper()
	dir = t.TempDir()
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: testEngineLogger()})
	if err != nil {
		t.Fatal(err)
	}
	w = testSession(t, e)
	query(t, w, "CREATE TABLE f (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, w, "INSERT INTO f VALUES (1, 'a')")
	return dir, e, w
}

// TestFollowerEngineTableCreatedAfterOpen: a follower engine opened before
// its replica applied a CREATE TABLE (the replica lags the serving node,
// or the node's cached follower engine opened a moment before) reads the
// table once the read's time passes the creation: a statement prepared
// with the extended protocol binds against the replica's catalog (not the
// one in memory since the engine opened), and the table's shard map is
// read from the store then. The order is forced: the follower engine
// opens, then a writer engine over the same store (as the replica's state
// machine would) creates the table and writes a row.
func TestFollowerEngineTableCreatedAfterOpen(t *testing.T) {
	dir, e, _ := followerSource(t)
	e.Close()
	// The replica's closed timestamp: the time of the open until it has
	// applied the writes below, then an hour ahead (nothing is written
	// after them).
	// The store's clock runs 10 s ahead of the wall clock: past the
	// bound a reopened store starts its clock at, so that it moves.
	ahead := func() int64 { return time.Now().Add(10 * time.Second).UnixNano() }
	var closed atomic.Pointer[hlc.Timestamp]
	atOpen := hlc.Timestamp{WallTime: ahead()}
	closed.Store(&atOpen)
	st, fe := openTestFollower(t, dir, ahead, &closed)
	defer fe.Close()
	s := testSession(t, fe)
	if got := formatRows(query(t, s, "SELECT k, v FROM f")); got != `1,"a"` {
		t.Fatalf("the table of before the open: %q", got)
	}

	// The replica applies a CREATE TABLE and a write: the follower engine's
	// commit refusal is lifted for the writer, then put back.
	st.SetCommitRefusal(nil)
	w, err := Open(Options{Storage: st, NoSync: true, Logger: testEngineLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ws := testSession(t, w)
	query(t, ws, "CREATE TABLE g (k Int64, v Utf8, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 2)")
	query(t, ws, "INSERT INTO g VALUES (1, 'x'), (2, 'y')")
	ws.Close()
	t.Cleanup(func() { w.Close() }) // closes st, after fe (deferred)
	st.SetCommitRefusal(sqlerr.New(sqlerr.ReadOnlySQLTransaction, "test: the follower's store"))
	far := hlc.Timestamp{WallTime: time.Now().Add(time.Hour).UnixNano()}
	closed.Store(&far)

	// Just created: not there at follower_read_timestamp() (80 ms back).
	if _, err := tryQuery(s, "SELECT count(*) FROM g"); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.UndefinedTable {
		t.Fatalf("a table created just now, read on the follower: %s; want 42P01", errCode(err))
	}
	// Wait until follower_read_timestamp() (80 ms behind the store's
	// clock) passes the writes.
	written, err := st.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		now, err := st.Clock().Now()
		if err != nil {
			t.Fatal(err)
		}
		if now.WallTime-int64(fe.opts.FollowerReads.Offset()) > written.WallTime {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store's clock did not pass %s", written)
		}
	}
	// The session open since before the table, and a new one on the same
	// engine, read it.
	for _, ss := range []*Session{s, testSession(t, fe)} {
		if got := formatRows(query(t, ss, "SELECT k, v FROM g ORDER BY k")); got != `1,"x"|2,"y"` {
			t.Fatalf("a table created after the follower engine opened: %q", got)
		}
	}
}

// TestOpenLeavesCallersStorageOpen: an Open that fails leaves a storage
// engine the caller passed (Options.Storage, a cluster node's) open: a
// node whose Open was fenced by a takeover (its commits refused) closed
// its engine under its replicas and panicked ("pebble: closed") instead
// of stepping down. Here the store refuses every commit, so Open's first
// write (the default database of a new directory) fails.
func TestOpenLeavesCallersStorageOpen(t *testing.T) {
	st, err := storage.Open(t.TempDir(), storage.Options{NoSync: true, Logger: testEngineLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.SetCommitRefusal(sqlerr.New(sqlerr.AdminShutdown, "test: fenced"))
	if _, err := Open(Options{Storage: st, NoSync: true, Logger: testEngineLogger()}); sqlerr.As(err) == nil || sqlerr.As(err).Code != sqlerr.AdminShutdown {
		t.Fatalf("Open over a store that refuses commits: %v", err)
	}
	if _, _, err := st.Get([]byte("k")); err != nil {
		t.Fatalf("the caller's store after the failed Open: %v", err)
	}
}
