package sql

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// balancerEngine opens an engine (no fsync) with a balancer. An Interval
// of an hour means the test ticks it by hand (e.balancer.Tick).
func balancerEngine(t testing.TB, opts partition.BalancerOptions) *Engine {
	t.Helper()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// Versions leave the GC window at once, so that space freed by a DELETE
	// can be reclaimed (TestBalancerReclaimsSpace).
	e, err := Open(Options{DataDir: t.TempDir(), NoSync: true, Logger: quiet, Balancer: opts, GCTTL: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if e.balancer == nil {
		t.Fatal("no balancer")
	}
	return e
}

// randomValue returns n incompressible bytes.
func randomValue(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// insertRows inserts rows (k, v) with random values of size bytes, 50 rows
// a statement.
func insertRows(t testing.TB, s *Session, table string, keys []int64, size int, r *rand.Rand) {
	t.Helper()
	for lo := 0; lo < len(keys); lo += 50 {
		hi := min(lo+50, len(keys))
		var sb strings.Builder
		fmt.Fprintf(&sb, "INSERT INTO %s (k, v) VALUES ", table)
		var params []types.Value
		for i := lo; i < hi; i++ {
			if i > lo {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "($%d, $%d)", len(params)+1, len(params)+2)
			params = append(params, types.NewInt64(keys[i]), types.NewString(randomValue(r, size)))
		}
		query(t, s, sb.String(), params...)
	}
}

// shardSummary is a table's shard count, largest shard, row total and
// reshape counters, from sys.partitions.
type shardSummary struct {
	shards, maxBytes, rows, splits, merges int64
}

func summary(t testing.TB, s *Session, table string) shardSummary {
	t.Helper()
	rows := query(t, s, "SELECT count(*), max(data_size_bytes), sum(row_count)::Int64, max(splits), max(merges) FROM sys.partitions WHERE table_name = $1",
		types.NewUtf8(table))
	return shardSummary{rows[0][0].Int(), rows[0][1].Int(), rows[0][2].Int(), rows[0][3].Int(), rows[0][4].Int()}
}

// tickUntilStable ticks e's balancer until a tick changes nothing.
func tickUntilStable(t testing.TB, e *Engine, max int) partition.TickStats {
	t.Helper()
	var total partition.TickStats
	for i := 0; i < max; i++ {
		st := e.balancer.Tick()
		if st.Failures > 0 {
			t.Fatalf("tick %d: %+v", i, st)
		}
		total.SizeSplits += st.SizeSplits
		total.LoadSplits += st.LoadSplits
		total.Merges += st.Merges
		if err := e.shards.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		if st.SizeSplits+st.LoadSplits+st.Merges == 0 && i >= 4 {
			return total
		}
	}
	t.Fatalf("the balancer did not settle in %d ticks", max)
	return total
}

func keyRange(lo, hi int64) []int64 {
	out := make([]int64, 0, hi-lo)
	for k := lo; k < hi; k++ {
		out = append(out, k)
	}
	return out
}

// TestAutoPartitioningDoneWhen is issue 5's acceptance scenario:
//
//	AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, 8 MB of random rows
//	  -> several shards of at most 1 MB, every row still there
//	the same with MAX_PARTITIONS_COUNT = 3 -> exactly 3 shards
//	DELETE nearly every row -> back to one or two shards
//
// and sys.partitions shows the split and merge counters.
func TestAutoPartitioningDoneWhen(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	e := balancerEngine(t, partition.BalancerOptions{Interval: time.Hour})
	s := testSession(t, e)
	query(t, s, "CREATE TABLE big (k Int64, v String, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1)")
	query(t, s, "CREATE TABLE capped (k Int64, v String, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, AUTO_PARTITIONING_MAX_PARTITIONS_COUNT = 3)")
	keys := keyRange(0, 8192)
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	insertRows(t, s, "big", keys, 1000, r)
	insertRows(t, s, "capped", keys[:4096], 1000, r)
	tickUntilStable(t, e, 50)

	big := summary(t, s, "big")
	t.Logf("big: %+v", big)
	if big.shards < 8 || big.maxBytes >= 1<<20 || big.rows != 8192 || big.splits != big.shards-1 {
		t.Fatalf("big: %+v", big)
	}
	if n := query(t, s, "SELECT count(*) FROM big")[0][0].Int(); n != 8192 {
		t.Fatalf("count(*) = %d", n)
	}
	if c := summary(t, s, "capped"); c.shards != 3 || c.rows != 4096 {
		t.Fatalf("capped: %+v", c)
	}

	query(t, s, "DELETE FROM big WHERE k >= 100")
	tickUntilStable(t, e, 50)
	big = summary(t, s, "big")
	t.Logf("big after DELETE: %+v", big)
	if big.shards > 2 || big.rows != 100 || big.merges != big.splits-big.shards+1 {
		t.Fatalf("big after DELETE: %+v", big)
	}
}

// TestBalancerFollowsAlter: settings changed by ALTER TABLE apply at the
// next tick.
func TestBalancerFollowsAlter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	e := balancerEngine(t, partition.BalancerOptions{Interval: time.Hour})
	s := testSession(t, e)
	query(t, s, "CREATE TABLE a (k Int64, v String, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, AUTO_PARTITIONING_BY_SIZE = DISABLED)")
	insertRows(t, s, "a", keyRange(0, 3000), 1000, r)
	tickUntilStable(t, e, 20)
	if n := summary(t, s, "a").shards; n != 1 {
		t.Fatalf("BY_SIZE = DISABLED: %d shards", n)
	}
	query(t, s, "ALTER TABLE a SET (AUTO_PARTITIONING_BY_SIZE = ENABLED, AUTO_PARTITIONING_MAX_PARTITIONS_COUNT = 2)")
	tickUntilStable(t, e, 20)
	if n := summary(t, s, "a").shards; n != 2 {
		t.Fatalf("MAX 2: %d shards", n)
	}
	query(t, s, "ALTER TABLE a SET (AUTO_PARTITIONING_MAX_PARTITIONS_COUNT = 100)")
	tickUntilStable(t, e, 20)
	if n := summary(t, s, "a").shards; n < 3 {
		t.Fatalf("MAX 100: %d shards", n)
	}
	// A bigger partition size lets the shards merge, down to MIN.
	query(t, s, "ALTER TABLE a SET (AUTO_PARTITIONING_PARTITION_SIZE_MB = 100, AUTO_PARTITIONING_MIN_PARTITIONS_COUNT = 2)")
	tickUntilStable(t, e, 20)
	if n := summary(t, s, "a").shards; n != 2 {
		t.Fatalf("MIN 2 after raising the size: %d shards", n)
	}
	// Raising MIN splits the table up, although no shard reached the
	// split size.
	query(t, s, "ALTER TABLE a SET (AUTO_PARTITIONING_MIN_PARTITIONS_COUNT = 5)")
	tickUntilStable(t, e, 20)
	if sum := summary(t, s, "a"); sum.shards != 5 || sum.rows != 3000 {
		t.Fatalf("MIN 5: %+v", sum)
	}
	// Lowering MAX below the shard count merges it down, although the
	// merged shards exceed half the split size.
	query(t, s, "ALTER TABLE a SET (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, AUTO_PARTITIONING_MIN_PARTITIONS_COUNT = 1)")
	tickUntilStable(t, e, 20)
	if n := summary(t, s, "a").shards; n < 4 {
		t.Fatalf("size 1 MB again: %d shards", n)
	}
	query(t, s, "ALTER TABLE a SET (AUTO_PARTITIONING_MAX_PARTITIONS_COUNT = 2)")
	tickUntilStable(t, e, 30)
	if sum := summary(t, s, "a"); sum.shards != 2 || sum.rows != 3000 {
		t.Fatalf("MAX 2 after ALTER: %+v", sum)
	}
	if n := query(t, s, "SELECT count(*) FROM a")[0][0].Int(); n != 3000 {
		t.Fatalf("count(*) = %d", n)
	}
}

// TestLoadSplitHotRange runs point reads on a hot key range of a table
// with AUTO_PARTITIONING_BY_LOAD = ENABLED: the shard splits inside the hot
// range, and merges back after a quiet period.
//
//	k: 0 .......... 600 ## hot ## 700 .......... 999
//	                        ^ split near 650
func TestLoadSplitHotRange(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var clock atomic.Int64 // Seconds; the test advances it by one per tick.
	now := func() time.Time { return time.Unix(1700000000+clock.Load(), 0) }
	e := balancerEngine(t, partition.BalancerOptions{Interval: time.Hour, Now: now,
		LoadSplitOpsPerSec: 400, LoadSplitTicks: 2, LoadMergeQuiet: time.Minute})
	s := testSession(t, e)
	query(t, s, "CREATE TABLE h (k Int64, v String, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_BY_LOAD = ENABLED)")
	insertRows(t, s, "h", keyRange(0, 1000), 10, r)
	tick := func() partition.TickStats {
		clock.Add(1)
		st := e.balancer.Tick()
		if err := e.shards.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		return st
	}
	tick()
	loadSplits := 0
	for i := 0; i < 6; i++ {
		for j := 0; j < 500; j++ {
			rows := query(t, s, "SELECT v FROM h WHERE k = $1", types.NewInt64(600+r.Int64N(100)))
			if len(rows) != 1 {
				t.Fatal("row missing")
			}
		}
		loadSplits += tick().LoadSplits
	}
	starts := query(t, s, "SELECT start_key FROM sys.partitions WHERE table_name = 'h' ORDER BY partition_index")
	if loadSplits != 1 || len(starts) != 2 {
		t.Fatalf("%d load splits, shards %v", loadSplits, starts)
	}
	var pivot int64
	if _, err := fmt.Sscanf(starts[1][0].Str(), "(%d)", &pivot); err != nil || pivot < 625 || pivot > 675 {
		t.Fatalf("split at %v, want within the hot range's middle half", starts[1][0])
	}
	for i := 0; i < 50; i++ {
		if tick().Merges > 0 {
			t.Fatalf("merged after %d quiet seconds", i+1)
		}
	}
	for i := 0; i < 20 && summary(t, s, "h").shards > 1; i++ {
		tick()
	}
	if sum := summary(t, s, "h"); sum.shards != 1 || sum.rows != 1000 {
		t.Fatalf("after a quiet period: %+v", sum)
	}
}

// TestBalancerOnline runs writers and readers through sessions while a
// fast background balancer splits and merges the table under them
// (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, 8 KB rows): no statement may
// fail, a reader must see every row of a range nobody writes exactly once,
// a writer must read its own acknowledged rows, and at the end the table
// holds exactly the acknowledged rows. Run with -race.
//
//	k:  [0, 1000)          stable rows, read by the readers
//	    [1e6·w, 1e6·w+n)   writer w's rows: inserted, then mostly deleted,
//	                       in rounds (the table grows and shrinks)
func TestBalancerOnline(t *testing.T) {
	// Shards of 512 KB and more split in the background (their halves
	// counted while the writers go on), as 64 MB shards do by default.
	e := balancerEngine(t, partition.BalancerOptions{Interval: 2 * time.Millisecond, SettleTicks: 2, EstimateAbove: 512 << 10})
	seed := uint64(time.Now().UnixNano())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	})
	setup := testSession(t, e)
	query(t, setup, "CREATE TABLE o (k Int64, v String, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1)")
	const stable = 1000
	insertRows(t, setup, "o", keyRange(0, stable), 100, rand.New(rand.NewPCG(7, 8)))

	const writers, readers = 3, 2
	rounds, perRound := 3, 200
	if testing.Short() {
		rounds = 1
	}
	var stop atomic.Bool
	var wgW, wgR sync.WaitGroup
	errs := make(chan error, writers+readers)
	oracle := make([]map[int64]bool, writers)
	for w := 0; w < writers; w++ {
		oracle[w] = map[int64]bool{}
		s := testSession(t, e)
		wgW.Add(1)
		go func(w int, s *Session) {
			defer wgW.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			base := int64(1000000 * (w + 1))
			top := base + 1000000
			next := base
			for round := 0; round < rounds; round++ {
				for i := 0; i < perRound; i += 10 {
					var keys []int64
					for j := 0; j < 10; j++ {
						keys = append(keys, next)
						next++
					}
					var sb strings.Builder
					sb.WriteString("INSERT INTO o (k, v) VALUES ")
					var params []types.Value
					for j, k := range keys {
						if j > 0 {
							sb.WriteString(", ")
						}
						fmt.Fprintf(&sb, "($%d, $%d)", 2*j+1, 2*j+2)
						params = append(params, types.NewInt64(k), types.NewString(randomValue(r, 8000)))
					}
					if _, err := tryQuery(s, sb.String(), params...); err != nil {
						errs <- fmt.Errorf("writer %d: insert: %w", w, err)
						return
					}
					for _, k := range keys {
						oracle[w][k] = true
					}
					k := keys[r.IntN(len(keys))]
					rows, err := tryQuery(s, "SELECT k FROM o WHERE k = $1", types.NewInt64(k))
					if err != nil || len(rows) != 1 {
						errs <- fmt.Errorf("writer %d: reading back %d: %v rows, %v", w, k, len(rows), err)
						return
					}
					// Now and then, a scan of the writer's whole range, which
					// spans shards being split and merged, must return
					// exactly its acknowledged rows, in order.
					if r.IntN(4) == 0 {
						rows, err := tryQuery(s, "SELECT k FROM o WHERE k >= $1 AND k < $2 ORDER BY k", types.NewInt64(base), types.NewInt64(top))
						if err != nil {
							errs <- fmt.Errorf("writer %d: scan: %w", w, err)
							return
						}
						if len(rows) != len(oracle[w]) {
							errs <- fmt.Errorf("writer %d: scan returned %d rows, want %d", w, len(rows), len(oracle[w]))
							return
						}
						for i, row := range rows {
							if !oracle[w][row[0].Int()] || (i > 0 && rows[i-1][0].Int() >= row[0].Int()) {
								errs <- fmt.Errorf("writer %d: scan: unexpected or unordered row %d", w, row[0].Int())
								return
							}
						}
					}
				}
				// Delete nine rows in ten of this writer's: the table shrinks
				// and its shards merge.
				cut := next - int64(perRound)*9/10
				if _, err := tryQuery(s, "DELETE FROM o WHERE k >= $1 AND k < $2", types.NewInt64(base), types.NewInt64(cut)); err != nil {
					errs <- fmt.Errorf("writer %d: delete: %w", w, err)
					return
				}
				for k := range oracle[w] {
					if k < cut {
						delete(oracle[w], k)
					}
				}
				base = cut
			}
		}(w, s)
	}
	for rd := 0; rd < readers; rd++ {
		s := testSession(t, e)
		wgR.Add(1)
		go func(rd int, s *Session) {
			defer wgR.Done()
			r := rand.New(rand.NewPCG(uint64(rd), 10))
			for !stop.Load() {
				lo := r.Int64N(stable)
				hi := lo + r.Int64N(stable-lo) + 1
				rows, err := tryQuery(s, "SELECT k FROM o WHERE k >= $1 AND k < $2 ORDER BY k", types.NewInt64(lo), types.NewInt64(hi))
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", rd, err)
					return
				}
				if int64(len(rows)) != hi-lo {
					errs <- fmt.Errorf("reader %d: [%d, %d) returned %d rows", rd, lo, hi, len(rows))
					return
				}
				for i, row := range rows {
					if row[0].Int() != lo+int64(i) {
						errs <- fmt.Errorf("reader %d: [%d, %d): row %d is %d", rd, lo, hi, i, row[0].Int())
						return
					}
				}
				rows, err = tryQuery(s, "SELECT count(*) FROM o WHERE k < $1", types.NewInt64(stable))
				if err != nil || rows[0][0].Int() != stable {
					errs <- fmt.Errorf("reader %d: count of the stable rows: %v, %v", rd, rows, err)
					return
				}
			}
		}(rd, s)
	}
	wgW.Wait()
	stop.Store(true)
	wgR.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	total := e.balancer.Total()
	t.Logf("balancer: %+v", total)
	if total.SizeSplits == 0 || total.Merges == 0 || total.Failures != 0 {
		t.Errorf("want splits and merges during the run, got %+v", total)
	}
	want := map[int64]bool{}
	for k := int64(0); k < stable; k++ {
		want[k] = true
	}
	for _, o := range oracle {
		for k := range o {
			want[k] = true
		}
	}
	rows := query(t, setup, "SELECT k FROM o ORDER BY k")
	if len(rows) != len(want) {
		t.Fatalf("table holds %d rows, want %d", len(rows), len(want))
	}
	for _, row := range rows {
		if !want[row[0].Int()] {
			t.Fatalf("unexpected row %d", row[0].Int())
		}
	}
	e.balancer.Stop()
	if err := e.shards.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if sum := summary(t, setup, "o"); sum.rows != int64(len(want)) {
		t.Fatalf("sys.partitions counts %d rows, want %d", sum.rows, len(want))
	}
}

// TestBalancerReclaimsSpace: after a DELETE of nearly every row, the shards
// merge and the balancer compacts the merged shards, so the table's disk
// usage falls with its logical size.
func TestBalancerReclaimsSpace(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	e := balancerEngine(t, partition.BalancerOptions{Interval: time.Hour, ReclaimAbove: 1 << 20})
	s := testSession(t, e)
	query(t, s, "CREATE TABLE g (k Int64, v String, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1)")
	insertRows(t, s, "g", keyRange(0, 4096), 1000, r)
	tickUntilStable(t, e, 50)
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "g")
	span := storage.TableSpan(tbl.ID)
	disk := func() uint64 {
		t.Helper()
		if err := e.storage.Flush(); err != nil {
			t.Fatal(err)
		}
		d, err := e.storage.EstimateDiskUsage(span)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	before := disk()
	if before < 3<<20 {
		t.Fatalf("4 MB of random rows take %d bytes on disk", before)
	}
	query(t, s, "DELETE FROM g WHERE k >= 40")
	tickUntilStable(t, e, 50)
	after := disk()
	sum := summary(t, s, "g")
	t.Logf("disk %d -> %d bytes; %+v; balancer %+v", before, after, sum, e.balancer.Total())
	if sum.shards > 2 || sum.rows != 40 {
		t.Fatalf("after DELETE: %+v", sum)
	}
	if e.balancer.Total().Compactions == 0 || after > before/4 {
		t.Fatalf("disk usage %d -> %d bytes, %d compactions", before, after, e.balancer.Total().Compactions)
	}
}
