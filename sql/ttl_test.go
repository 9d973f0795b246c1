package sql

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// testClock is an injected clock (Options.Now) that tests move by hand.
type testClock struct{ us atomic.Int64 }

func newTestClock(at time.Time) *testClock {
	c := &testClock{}
	c.us.Store(at.UnixMicro())
	return c
}

func (c *testClock) Now() time.Time               { return time.UnixMicro(c.us.Load()).UTC() }
func (c *testClock) Advance(d time.Duration)      { c.us.Add(d.Microseconds()) }
func (c *testClock) micros(d time.Duration) int64 { return c.us.Load() + d.Microseconds() }

// ttlEngine opens an engine (no fsync) on clock; a positive interval runs
// the TTL runner in the background, zero leaves it to RunTTL.
func ttlEngine(t testing.TB, clock *testClock, interval time.Duration) *Engine {
	t.Helper()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, Now: clock.Now, TTLInterval: interval})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// ids returns the first column of rows as int64s.
func ids(rows [][]types.Value) []int64 {
	out := []int64{}
	for _, r := range rows {
		out = append(out, r[0].Int())
	}
	return out
}

func wantIDs(t *testing.T, s *Session, sql string, want ...int64) {
	t.Helper()
	got := ids(query(t, s, sql))
	if fmt.Sprint(got) != fmt.Sprint(append([]int64{}, want...)) {
		t.Fatalf("%s: got ids %v, want %v", sql, got, want)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("got error %v, want SQLSTATE %s", err, code)
	}
}

// partitionTTL returns the sum of ttl_rows_erased and row_count over the
// table's shards, and whether every shard shows a ttl_last_run equal to at.
func partitionTTL(t *testing.T, s *Session, table string, at time.Time) (erased, rows int64, ranAt bool) {
	t.Helper()
	ranAt = true
	for _, r := range query(t, s, "SELECT ttl_rows_erased, row_count, ttl_last_run FROM sys.partitions WHERE table_name = $1",
		types.NewUtf8(table)) {
		erased += r[0].Int()
		rows += r[1].Int()
		if r[2].IsNull() || r[2].Micros() != at.UnixMicro() {
			ranAt = false
		}
	}
	return erased, rows, ranAt
}

// TestTTLHidesExpiredRows checks that every reader treats a row whose
// column + interval <= now as absent before the runner deletes it.
func TestTTLHidesExpiredRows(t *testing.T) {
	clock := newTestClock(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	e := ttlEngine(t, clock, 0)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE t (id Int64, ts Timestamp, v Int64, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 4, TTL = Interval("PT1H") ON ts)`)
	ins := func(id int64, ts types.Value, v int64) {
		query(t, s, "UPSERT INTO t (id, ts, v) VALUES ($1, $2, $3)", types.NewInt64(id), ts, types.NewInt64(v))
	}
	ins(1, types.NewTimestamp(clock.micros(-30*time.Minute)), 10)
	ins(2, types.NewTimestamp(clock.micros(-time.Hour)), 20) // the boundary: expired
	ins(3, types.NullValue, 30)                              // NULL never expires
	ins(4, types.NewTimestamp(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()), 40)
	ins(-5, types.NewTimestamp(clock.micros(-59*time.Minute)), 50)

	wantIDs(t, s, "SELECT id FROM t ORDER BY id", -5, 1, 3)
	wantIDs(t, s, "SELECT id FROM t WHERE id = 2")
	wantIDs(t, s, "SELECT id FROM t WHERE id IN (1, 2, 4)", 1)
	if got := query(t, s, "SELECT COUNT(*) FROM t")[0][0].Int(); got != 3 {
		t.Fatalf("count(*) = %d, want 3", got)
	}

	// A minute later the row stamped 59 minutes ago has expired too.
	clock.Advance(time.Minute)
	wantIDs(t, s, "SELECT id FROM t ORDER BY id", 1, 3)

	// UPDATE and DELETE do not see expired rows.
	if tag := execTag(t, s, "UPDATE t SET v = v + 1 WHERE id IN (2, 4, 1)"); tag != "UPDATE 1" {
		t.Fatalf("UPDATE tag %q", tag)
	}
	if tag := execTag(t, s, "DELETE FROM t WHERE id = 2"); tag != "DELETE 0" {
		t.Fatalf("DELETE tag %q", tag)
	}

	// INSERT of an expired key succeeds and replaces the row; UPSERT does
	// not keep the expired row's columns.
	query(t, s, "INSERT INTO t (id, ts, v) VALUES (2, $1, 21)", types.NewTimestamp(clock.micros(0)))
	query(t, s, "UPSERT INTO t (id, ts) VALUES (4, $1)", types.NewTimestamp(clock.micros(0)))
	rows := query(t, s, "SELECT id, v FROM t WHERE id IN (2, 4) ORDER BY id")
	if len(rows) != 2 || rows[0][1].Int() != 21 || !rows[1][1].IsNull() {
		t.Fatalf("rows after writing over expired ones: %v", rows)
	}
	_, err := tryQuery(s, "INSERT INTO t (id, ts, v) VALUES (2, NULL, 0)")
	wantCode(t, err, sqlerr.UniqueViolation)

	// An UPDATE that moves a row onto an expired key takes its place.
	ins(6, types.NewTimestamp(clock.micros(-2*time.Hour)), 60)
	query(t, s, "UPDATE t SET id = 6 WHERE id = 1")
	wantIDs(t, s, "SELECT v FROM t WHERE id = 6", 11)

	// Inside a transaction block the same holds, for its own writes too.
	query(t, s, "BEGIN")
	ins(7, types.NewTimestamp(clock.micros(-3*time.Hour)), 70)
	wantIDs(t, s, "SELECT id FROM t WHERE id = 7")
	query(t, s, "COMMIT")

	// RESET (TTL) shows the rows the runner has not erased; SET hides them.
	query(t, s, "ALTER TABLE t RESET (TTL)")
	wantIDs(t, s, "SELECT id FROM t ORDER BY id", -5, 2, 3, 4, 6, 7)
	query(t, s, `ALTER TABLE t SET (TTL = Interval("PT2H") ON ts)`)
	wantIDs(t, s, "SELECT id FROM t ORDER BY id", -5, 2, 3, 4, 6)
}

// execTag runs a statement and returns its command tag.
func execTag(t *testing.T, s *Session, sql string) string {
	t.Helper()
	ctx := t.Context()
	s.BeginImplicit()
	p, err := s.Prepare(ctx, sql, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	for {
		row, err := res.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if row == nil {
			break
		}
	}
	tag := res.Tag()
	res.Close()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	return tag
}

// TestTTLRunnerErases checks that a run erases exactly the expired rows of
// every shard, in batches, and shows them in sys.partitions.
func TestTTLRunnerErases(t *testing.T) {
	clock := newTestClock(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	e := ttlEngine(t, clock, 0)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE t (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 4, TTL = Interval("PT1H") ON ts)`)
	query(t, s, `CREATE TABLE u (id Uint64, e Uint64, PRIMARY KEY (id)) WITH (TTL = Interval("PT10M") ON e AS SECONDS)`)
	query(t, s, `CREATE TABLE plain (id Int64, ts Timestamp, PRIMARY KEY (id))`)
	r := rand.New(rand.NewPCG(1, 2))
	// More expired rows than one batch, spread over every shard.
	const n = 2 * ttlBatchRows
	expired := 0
	for i := 0; i < n; i++ {
		id := types.NewInt64(int64(r.Uint64()))
		ts := types.NewTimestamp(clock.micros(-2 * time.Hour))
		if i%3 == 0 {
			ts = types.NewTimestamp(clock.micros(0))
		} else {
			expired++
		}
		query(t, s, "UPSERT INTO t (id, ts) VALUES ($1, $2)", id, ts)
		query(t, s, "UPSERT INTO plain (id, ts) VALUES ($1, $2)", id, ts)
	}
	nowSec := uint64(clock.Now().Unix())
	for i, e := range []uint64{nowSec - 601, nowSec - 600, nowSec - 599, nowSec + 3600} {
		query(t, s, "INSERT INTO u (id, e) VALUES ($1, $2)", types.NewUint64(uint64(i)), types.NewUint64(e))
	}
	// Rows stamped later than now, and NULL, stay.
	query(t, s, "INSERT INTO u (id, e) VALUES (10, NULL)")

	if got := e.RunTTL(); got != int64(expired)+2 {
		t.Fatalf("RunTTL erased %d rows, want %d", got, expired+2)
	}
	erased, rows, ran := partitionTTL(t, s, "t", clock.Now())
	if erased != int64(expired) || rows != int64(n-expired) || !ran {
		t.Fatalf("sys.partitions of t: erased %d rows %d ran %v; want %d, %d, true", erased, rows, ran, expired, n-expired)
	}
	if got := query(t, s, "SELECT COUNT(*) FROM t")[0][0].Int(); got != int64(n-expired) {
		t.Fatalf("t has %d rows, want %d", got, n-expired)
	}
	wantIDs(t, s, "SELECT id FROM u ORDER BY id", 2, 3, 10)
	erased, rows, _ = partitionTTL(t, s, "u", clock.Now())
	if erased != 2 || rows != 3 {
		t.Fatalf("sys.partitions of u: erased %d rows %d", erased, rows)
	}
	// A table without TTL is never visited.
	for _, r := range query(t, s, "SELECT ttl_rows_erased, ttl_last_run, row_count FROM sys.partitions WHERE table_name = 'plain'") {
		if r[0].Int() != 0 || !r[1].IsNull() || r[2].Int() != n {
			t.Fatalf("sys.partitions of plain: %v", r)
		}
	}
	// A second later the row stamped 599 s ago has expired too; nothing
	// else. The run's time is shown.
	clock.Advance(time.Second)
	if got := e.RunTTL(); got != 1 {
		t.Fatalf("second run erased %d, want 1", got)
	}
	wantIDs(t, s, "SELECT id FROM u ORDER BY id", 3, 10)
	if _, _, ran := partitionTTL(t, s, "t", clock.Now()); !ran {
		t.Fatal("ttl_last_run not updated by the second run")
	}
	if err := e.shards.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestTTLRunnerRechecks checks that a row renewed between the runner's scan
// and its delete survives: the delete re-reads it under its lock.
func TestTTLRunnerRechecks(t *testing.T) {
	clock := newTestClock(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	e := ttlEngine(t, clock, 0)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE t (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON ts)`)
	for id := int64(1); id <= 3; id++ {
		query(t, s, "INSERT INTO t (id, ts) VALUES ($1, $2)", types.NewInt64(id), types.NewTimestamp(clock.micros(-2*time.Hour)))
	}
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "t")
	x := ttl.At(tbl, clock.Now())
	keys, next, err := e.collectExpired(tbl, x, storage.TableSpan(tbl.ID))
	if err != nil || next != nil || len(keys) != 3 {
		t.Fatalf("collectExpired: %d keys, next %v, err %v", len(keys), next, err)
	}
	// Row 1 is written anew (an INSERT over an expired row), row 2 deleted.
	query(t, s, "INSERT INTO t (id, ts) VALUES (1, $1)", types.NewTimestamp(clock.micros(0)))
	query(t, s, "REPLACE INTO t (id, ts) VALUES (2, $1)", types.NewTimestamp(clock.micros(0)))
	query(t, s, "DELETE FROM t WHERE id = 2")
	n, err := e.deleteExpired(t.Context(), tbl, keys)
	if err != nil || n != 1 {
		t.Fatalf("deleteExpired: %d, %v; want 1", n, err)
	}
	wantIDs(t, s, "SELECT id FROM t", 1)
	if _, rows, _ := partitionTTL(t, s, "t", time.Time{}); rows != 1 {
		t.Fatalf("row_count %d, want 1", rows)
	}

	// A row locked by an open transaction is left alone, without waiting,
	// and erased by a later run.
	query(t, s, "INSERT INTO t (id, ts) VALUES (4, $1), (5, $1)", types.NewTimestamp(clock.micros(-2*time.Hour)))
	w := testSession(t, e)
	query(t, w, "BEGIN")
	query(t, w, "INSERT INTO t (id, ts) VALUES (4, $1)", types.NewTimestamp(clock.micros(-3*time.Hour)))
	if n := e.RunTTL(); n != 1 {
		t.Fatalf("run with row 4 locked erased %d, want 1", n)
	}
	query(t, w, "COMMIT")
	if n := e.RunTTL(); n != 1 {
		t.Fatalf("run after the commit erased %d, want 1", n)
	}
	if _, rows, _ := partitionTTL(t, s, "t", time.Time{}); rows != 1 {
		t.Fatalf("row_count %d, want 1", rows)
	}
}

// TestTTLRandomized runs random writes, clock steps and TTL runs (by hand
// and by a background runner every millisecond) against an oracle: a map of
// every row ever written with its ts. At every step SELECT returns exactly
// the oracle's live rows, so the runner never erased a live row and reads
// never showed an expired one; at the end, after a run, row_count equals
// the live rows, so the runner erased every expired one. Replay a failure
// with the seed it prints.
func TestTTLRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 6))
	clock := newTestClock(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	e := ttlEngine(t, clock, time.Millisecond)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE t (id Int64, ts Timestamp, v Int64, PRIMARY KEY (id)) WITH (PARTITION_AT_KEYS = (20, 40), TTL = Interval("PT1H") ON ts)`)

	type orow struct {
		ts   int64 // micros; null when !has
		has  bool
		v    int64
		gone bool // deleted
	}
	oracle := map[int64]*orow{}
	live := func(o *orow) bool {
		return o != nil && !o.gone && (!o.has || o.ts+time.Hour.Microseconds() > clock.us.Load())
	}
	randTS := func() (types.Value, int64, bool) {
		if r.IntN(10) == 0 {
			return types.NullValue, 0, false
		}
		us := clock.micros(time.Duration(r.Int64N(int64(3*time.Hour))) - 2*time.Hour)
		return types.NewTimestamp(us), us, true
	}
	const keys = 60
	steps := 600
	if testing.Short() {
		steps = 150
	}
	for step := 0; step < steps; step++ {
		id := r.Int64N(keys)
		o := oracle[id]
		switch op := r.IntN(10); op {
		case 0, 1, 2: // UPSERT
			tsv, us, has := randTS()
			v := r.Int64N(1000)
			query(t, s, "UPSERT INTO t (id, ts, v) VALUES ($1, $2, $3)", types.NewInt64(id), tsv, types.NewInt64(v))
			oracle[id] = &orow{ts: us, has: has, v: v}
		case 3: // INSERT: fails on a live row only
			tsv, us, has := randTS()
			_, err := tryQuery(s, "INSERT INTO t (id, ts, v) VALUES ($1, $2, 7)", types.NewInt64(id), tsv)
			if live(o) {
				wantCode(t, err, sqlerr.UniqueViolation)
			} else if err != nil {
				t.Fatalf("step %d: INSERT over an absent or expired row: %v", step, err)
			} else {
				oracle[id] = &orow{ts: us, has: has, v: 7}
			}
		case 4: // UPDATE v
			query(t, s, "UPDATE t SET v = v + 1 WHERE id = $1", types.NewInt64(id))
			if live(o) {
				o.v++
			}
		case 5: // renew
			tsv, us, has := randTS()
			query(t, s, "UPDATE t SET ts = $2 WHERE id >= $1 AND id < $1 + 3", types.NewInt64(id), tsv)
			for k := id; k < id+3; k++ {
				if ok := oracle[k]; live(ok) {
					ok.ts, ok.has = us, has
				}
			}
		case 6: // DELETE
			query(t, s, "DELETE FROM t WHERE id = $1", types.NewInt64(id))
			if o != nil {
				o.gone = true
			}
		case 7, 8: // time passes
			clock.Advance(time.Duration(r.Int64N(int64(20 * time.Minute))))
		case 9:
			e.RunTTL()
		}
		// SELECT equals the oracle's live rows.
		var want []string
		for k, o := range oracle {
			if live(o) {
				want = append(want, fmt.Sprintf("%d:%d", k, o.v))
			}
		}
		sort.Slice(want, func(i, j int) bool {
			var a, b int64
			fmt.Sscanf(want[i], "%d", &a)
			fmt.Sscanf(want[j], "%d", &b)
			return a < b
		})
		var got []string
		for _, row := range query(t, s, "SELECT id, v FROM t ORDER BY id") {
			got = append(got, fmt.Sprintf("%d:%d", row[0].Int(), row[1].Int()))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d step %d: SELECT\n got %v\nwant %v", seed, step, got, want)
		}
	}
	e.RunTTL()
	nLive := 0
	for _, o := range oracle {
		if live(o) {
			nLive++
		}
	}
	if _, rows, _ := partitionTTL(t, s, "t", time.Time{}); rows != int64(nLive) {
		t.Fatalf("seed %d: row_count %d after a run, want the %d live rows", seed, rows, nLive)
	}
	if err := e.shards.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestTTLLetsShardsMerge: the runner's deletes leave the shard statistics,
// so the balancer merges shards that TTL emptied (issue 5's merge).
func TestTTLLetsShardsMerge(t *testing.T) {
	clock := newTestClock(time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC))
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, Now: clock.Now,
		Balancer: partition.BalancerOptions{Interval: time.Hour, Now: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s := testSession(t, e)
	// Four shards of about 600 KB: two together exceed half the 2 MB split
	// size, so none merges until the TTL erases most rows.
	query(t, s, `CREATE TABLE t (k Int64, ts Timestamp, v String, PRIMARY KEY (k)) WITH (
		PARTITION_AT_KEYS = (1000, 2000, 3000), AUTO_PARTITIONING_PARTITION_SIZE_MB = 2,
		AUTO_PARTITIONING_MIN_PARTITIONS_COUNT = 1, TTL = Interval("PT1H") ON ts)`)
	r := rand.New(rand.NewPCG(3, 4))
	for lo := int64(0); lo < 4000; lo += 50 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO t (k, ts, v) VALUES ")
		var params []types.Value
		for k := lo; k < lo+50; k++ {
			ts := types.NewTimestamp(clock.micros(-2 * time.Hour))
			if k%40 == 0 {
				ts = types.NewTimestamp(clock.micros(0))
			}
			if k > lo {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "($%d, $%d, $%d)", len(params)+1, len(params)+2, len(params)+3)
			params = append(params, types.NewInt64(k), ts, types.NewString(randomValue(r, 580)))
		}
		query(t, s, sb.String(), params...)
	}
	tickUntilStable(t, e, 20)
	if got := summary(t, s, "t"); got.shards != 4 || got.rows != 4000 {
		t.Fatalf("before the TTL run: %+v", got)
	}
	if n := e.RunTTL(); n != 3900 {
		t.Fatalf("RunTTL erased %d, want 3900", n)
	}
	tickUntilStable(t, e, 20)
	got := summary(t, s, "t")
	if got.shards != 1 || got.rows != 100 || got.merges != 3 {
		t.Fatalf("after the TTL run: %+v", got)
	}
	if n := query(t, s, "SELECT count(*) FROM t")[0][0].Int(); n != 100 {
		t.Fatalf("count(*) = %d", n)
	}
}
