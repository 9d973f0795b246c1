package partition

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage"
)

// fakeClock is a clock the tests advance by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1700000000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// policyBox holds a table policy that a test changes between ticks, as
// ALTER TABLE does through the catalog.
type policyBox struct {
	mu sync.Mutex
	p  map[uint64]Policy
}

func (b *policyBox) set(id uint64, p Policy) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p == nil {
		b.p = map[uint64]Policy{}
	}
	b.p[id] = p
}

func (b *policyBox) get(id uint64) (Policy, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.p[id]
	return p, ok
}

// sizePolicy splits at splitBytes, without bounds on the shard count.
func sizePolicy(splitBytes int64) Policy {
	return Policy{BySize: true, SplitBytes: splitBytes, MinShards: 1, MaxShards: 1 << 40}
}

// newTestBalancer returns a balancer of e's manager with a fake clock
// advanced by one second per tick (see tickUntilStable), settling shards
// after one tick.
func newTestBalancer(e *env, box *policyBox, clock *fakeClock, opts BalancerOptions) *Balancer {
	opts.Now = clock.Now
	if opts.SettleTicks == 0 {
		opts.SettleTicks = 1
	}
	b := NewBalancer(e.m, box.get, opts)
	e.t.Cleanup(b.Stop)
	return b
}

// tickUntilStable ticks until a tick changes nothing (at most max ticks),
// checking the invariants and exact statistics after every tick, and
// returns the total.
func tickUntilStable(t *testing.T, e *env, b *Balancer, clock *fakeClock, table uint64, max int) TickStats {
	t.Helper()
	var total TickStats
	for i := 0; i < max; i++ {
		clock.Advance(time.Second)
		st := b.Tick()
		e.check()
		e.checkStats(table)
		if st.Failures > 0 {
			t.Fatalf("tick %d: %+v", i, st)
		}
		total.add(st)
		if st.SizeSplits+st.LoadSplits+st.Merges == 0 && i > 0 {
			return total
		}
	}
	t.Fatalf("the balancer did not settle in %d ticks:\n%s", max, mapString(e.m.Map(table)))
	return total
}

// fillValues writes rows (i, b) for i in [lo, hi) with values of n random
// bytes (incompressible, so that disk estimates follow logical sizes).
func fillValues(e *env, table uint64, lo, hi, n int, b string, r *rand.Rand) {
	e.t.Helper()
	for start := lo; start < hi; start += 500 {
		var keys, values [][]byte
		for i := start; i < min(start+500, hi); i++ {
			v := make([]byte, n)
			for j := range v {
				v[j] = byte(r.Uint32())
			}
			keys = append(keys, key(table, i, b))
			values = append(values, v)
		}
		e.mustWrite(table, keys, values)
	}
}

func shardBytesOf(t *testing.T, e *env, table uint64) []int64 {
	t.Helper()
	st, err := e.m.Stats(e.m.Map(table))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(st))
	for k, s := range st {
		out[k] = s.Bytes
	}
	return out
}

// TestBalancerSizeSplitAndMerge grows a table far past the split size and
// shrinks it again:
//
//	fill 4000 rows (~520 KB), split size 16 KB
//	  -> every shard below 16 KB and above a quarter of it (median splits)
//	delete all but 10 rows
//	  -> merged back into one shard; counters splits == merges
func TestBalancerSizeSplitAndMerge(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table, split = 7, 16 << 10
	e.create(table)
	fillValues(e, table, 0, 4000, 100, "r", r)
	box := &policyBox{}
	box.set(table, sizePolicy(split))
	clock := newFakeClock()
	b := newTestBalancer(e, box, clock, BalancerOptions{})
	total := tickUntilStable(t, e, b, clock, table, 50)

	sizes := shardBytesOf(t, e, table)
	if len(sizes) < 30 {
		t.Fatalf("only %d shards:\n%s", len(sizes), mapString(e.m.Map(table)))
	}
	for k, s := range sizes {
		// The largest row is about 120 bytes; a median split leaves each
		// half at least a quarter of a shard of at least split bytes.
		if s >= split || s < split/4-200 {
			t.Errorf("shard %d holds %d bytes, want [%d, %d)", k, s, split/4-200, split)
		}
	}
	// Every pivot is one column: the rows differ in a.
	for _, p := range e.m.Map(table).Splits() {
		if ends, _ := keyColumns(table, p, nil); len(ends) != 1 {
			t.Errorf("pivot %s is not the shortest separating prefix", fmtKey(table, p))
		}
	}
	c, err := e.m.TableCounters(table)
	if err != nil {
		t.Fatal(err)
	}
	if c.Splits-c.Merges != int64(len(sizes)-1) || total.SizeSplits != int(c.Splits) {
		t.Fatalf("counters %+v, tick stats %+v, %d shards", c, total, len(sizes))
	}

	deleteRows(e, table, 10, 4000)
	total = tickUntilStable(t, e, b, clock, table, 50)
	if n := e.m.Map(table).Len(); n != 1 {
		t.Fatalf("%d shards after deleting nearly every row:\n%s", n, mapString(e.m.Map(table)))
	}
	c, _ = e.m.TableCounters(table)
	if c.Merges != c.Splits || total.Merges == 0 {
		t.Fatalf("counters %+v after the merges (tick stats %+v)", c, total)
	}
}

// TestBalancerLimits checks MAX_PARTITIONS_COUNT, MIN_PARTITIONS_COUNT and
// AUTO_PARTITIONING_BY_SIZE, changed between ticks as ALTER TABLE changes
// them.
func TestBalancerLimits(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table, split = 7, 8 << 10
	e.create(table, key(table, 1000), key(table, 2000), key(table, 3000))
	fillValues(e, table, 0, 4000, 50, "r", r) // ~280 KB
	box := &policyBox{}
	clock := newFakeClock()
	b := newTestBalancer(e, box, clock, BalancerOptions{})

	// BY_SIZE = DISABLED: nothing happens.
	p := sizePolicy(split)
	p.BySize, p.MinShards = false, 4
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 5)
	if n := e.m.Map(table).Len(); n != 4 {
		t.Fatalf("BY_SIZE disabled: %d shards", n)
	}

	// MAX_PARTITIONS_COUNT = 6 stops the splits at 6.
	p.BySize, p.MaxShards = true, 6
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 20)
	if n := e.m.Map(table).Len(); n != 6 {
		t.Fatalf("MAX 6: %d shards", n)
	}
	// Lifting it lets them continue.
	p.MaxShards = 1 << 40
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 50)
	if n := e.m.Map(table).Len(); n < 30 {
		t.Fatalf("unbounded: only %d shards", n)
	}

	// Emptied, the table merges down to MIN_PARTITIONS_COUNT and no
	// further.
	deleteRows(e, table, 0, 4000)
	tickUntilStable(t, e, b, clock, table, 50)
	if n := e.m.Map(table).Len(); n != 4 {
		t.Fatalf("MIN 4: %d shards\n%s", n, mapString(e.m.Map(table)))
	}
	p.MinShards = 2
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 50)
	if n := e.m.Map(table).Len(); n != 2 {
		t.Fatalf("MIN 2: %d shards", n)
	}
}

// TestBalancerSkewedKeys splits data where most rows share the first key
// column: the pivots inside the big group need both columns, the others
// one.
//
//	a:   0..99 (1 row each)   5000 (3000 rows, b = 'k0000'..)   6000..6099
//	                 |  |  |  |  |  |  |  |  |  |  |
//	pivots  (n)        (5000, 'k..') ...              (6000) ...
func TestBalancerSkewedKeys(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table, split = 7, 16 << 10
	e.create(table)
	fillValues(e, table, 0, 100, 100, "r", r)
	fillValues(e, table, 6000, 6100, 100, "r", r)
	for lo := 0; lo < 3000; lo += 500 {
		var keys, values [][]byte
		for i := lo; i < lo+500; i++ {
			keys = append(keys, key(table, 5000, fmt.Sprintf("k%04d", i)))
			values = append(values, bytes.Repeat([]byte{byte(r.Uint32())}, 100))
		}
		e.mustWrite(table, keys, values)
	}
	box := &policyBox{}
	box.set(table, sizePolicy(split))
	clock := newFakeClock()
	b := newTestBalancer(e, box, clock, BalancerOptions{})
	tickUntilStable(t, e, b, clock, table, 50)
	two := 0
	for _, p := range e.m.Map(table).Splits() {
		ends, err := keyColumns(table, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ends) == 2 {
			two++
			if !bytes.HasPrefix(p, key(table, 5000)) {
				t.Errorf("two-column pivot %s outside the big group", fmtKey(table, p))
			}
		}
	}
	if two < 10 {
		t.Fatalf("only %d two-column pivots:\n%s", two, mapString(e.m.Map(table)))
	}
	for k, s := range shardBytesOf(t, e, table) {
		if s >= split {
			t.Errorf("shard %d holds %d bytes", k, s)
		}
	}
}

// serve simulates point reads of keys (i, 'r') for i in hot: one read each,
// counted and sampled as the sql layer's scans do.
func serve(e *env, table uint64, hot []int) {
	for _, i := range hot {
		k := key(table, i, "r")
		sm := e.m.Map(table)
		sh := sm.Shard(sm.Find(k))
		sh.AddReads(1)
		e.m.SampleKey(sh, k)
	}
}

// TestBalancerLoadSplit drives a hot range of a one-shard table: the shard
// splits inside the hot range so that the load halves, and the halves
// merge back only after a long quiet period.
//
//	keys 0..999, hot range [600, 700) read 1000 times a tick (1 s)
//	threshold 800 ops/s, 2 ticks  -> split near (650); halves ~500 ops/s
//	                                 (a 128-key sample puts the median
//	                                 within a few keys, far from the 80%
//	                                 that would make a half split again)
//	load stops                    -> no merge for LoadMergeQuiet (60 s),
//	                                 then one shard again
func TestBalancerLoadSplit(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table = 7
	e.create(table)
	fillValues(e, table, 0, 1000, 20, "r", r)
	box := &policyBox{}
	p := sizePolicy(1 << 30)
	p.ByLoad = true
	box.set(table, p)
	clock := newFakeClock()
	b := newTestBalancer(e, box, clock, BalancerOptions{LoadSplitOpsPerSec: 800, LoadSplitTicks: 2, LoadMergeQuiet: time.Minute})

	var hot []int
	for i := 0; i < 1000; i++ {
		hot = append(hot, 600+r.IntN(100))
	}
	var total TickStats
	for tick := 0; tick < 8; tick++ {
		serve(e, table, hot)
		clock.Advance(time.Second)
		total.add(b.Tick())
		e.check()
	}
	sm := e.m.Map(table)
	if sm.Len() != 2 || total.LoadSplits != 1 || total.SizeSplits != 0 {
		t.Fatalf("want one load split, got %+v:\n%s", total, mapString(sm))
	}
	pivot := sm.Splits()[0]
	if bytes.Compare(pivot, key(table, 620)) < 0 || bytes.Compare(pivot, key(table, 680)) > 0 {
		t.Fatalf("load split at %s, want inside the hot range's middle half [620, 680]", fmtKey(table, pivot))
	}
	for id, rate := range b.Loads(table) {
		if rate > 800 {
			t.Errorf("shard %d still serves %.0f ops/s", id, rate)
		}
	}

	// Quiet: 50 ticks of 1 s do not merge (LoadMergeQuiet is 60 s) ...
	for tick := 0; tick < 50; tick++ {
		clock.Advance(time.Second)
		if st := b.Tick(); st.Merges != 0 {
			t.Fatalf("merged after %d quiet seconds", tick+1)
		}
	}
	// ... and after the quiet period they merge.
	for tick := 0; tick < 20 && e.m.Map(table).Len() > 1; tick++ {
		clock.Advance(time.Second)
		b.Tick()
	}
	if n := e.m.Map(table).Len(); n != 1 {
		t.Fatalf("%d shards after a long quiet period", n)
	}
	e.check()
	e.checkStats(table)
}

// TestBalancerLoadSplitWithoutSample: a hot shard whose load the sample
// does not see (writes only) splits at its median by size.
func TestBalancerLoadSplitWithoutSample(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table = 7
	e.create(table)
	fillValues(e, table, 0, 1000, 20, "r", r)
	box := &policyBox{}
	p := sizePolicy(1 << 30)
	p.ByLoad = true
	box.set(table, p)
	clock := newFakeClock()
	b := newTestBalancer(e, box, clock, BalancerOptions{LoadSplitOpsPerSec: 100, LoadSplitTicks: 2})
	for tick := 0; tick < 4; tick++ {
		e.m.Map(table).Shard(0).rt.writes.Add(1000) // Counted, not sampled.
		clock.Advance(time.Second)
		b.Tick()
	}
	sm := e.m.Map(table)
	if sm.Len() != 2 {
		t.Fatalf("%d shards", sm.Len())
	}
	if p := sm.Splits()[0]; bytes.Compare(p, key(table, 400)) < 0 || bytes.Compare(p, key(table, 600)) > 0 {
		t.Fatalf("split at %s, want near the median (500)", fmtKey(table, p))
	}
}

// TestSampleKeyCold: without a warm shard, SampleKey keeps nothing; a warm
// shard's reservoir fills from SampleKey and SampleWrites.
func TestSampleKeyCold(t *testing.T) {
	e := newEnv(t)
	const table = 7
	e.create(table)
	sm := e.m.Map(table)
	e.m.SampleKey(sm.Shard(0), key(table, 5, "r")) // No balancer: no-op.
	b := NewBalancer(e.m, (&policyBox{}).get, BalancerOptions{})
	defer b.Stop()
	e.m.SampleKey(sm.Shard(0), key(table, 5, "r"))
	if keys, seen := b.reg.sample(sm.Shard(0).ID); keys != nil || seen != 0 {
		t.Fatalf("cold shard sampled: %d keys, %d seen", len(keys), seen)
	}
	b.reg.track(sm.Shard(0).ID)
	for i := 0; i < 1000; i++ {
		e.m.SampleKey(sm.Shard(0), key(table, i, "r"))
	}
	e.m.SampleKey(sm.Shard(0), sm.Shard(0).Span.Start) // The shard's start: ignored.
	keys, seen := b.reg.sample(sm.Shard(0).ID)
	if len(keys) != sampleSize || seen != 1000 {
		t.Fatalf("warm shard: %d keys, %d seen", len(keys), seen)
	}
	// SampleWrites feeds the same sample from a transaction's writes.
	b.reg.untrack(sm.Shard(0).ID)
	b.reg.track(sm.Shard(0).ID)
	var w Writes
	for i := 0; i < 10; i++ {
		w.RecordPut(table, key(table, i, "w"), 5, false, 0)
	}
	e.m.SampleWrites(&w)
	if keys, seen := b.reg.sample(sm.Shard(0).ID); len(keys) != 10 || seen != 10 {
		t.Fatalf("SampleWrites: %d keys, %d seen", len(keys), seen)
	}
	b.Stop()
	if _, ok := registries.Load(e.m); ok {
		t.Fatal("Stop left the registry")
	}
}

// TestLoadSplitKey pins the choice from a sample: the weighted median,
// moved to the shortest separating prefix within the middle half; no key
// for a single hot key.
func TestLoadSplitKey(t *testing.T) {
	e := newEnv(t)
	const table = 7
	e.create(table)
	sh := e.m.Map(table).Shard(0)
	var keys [][]byte
	for i := 0; i < 40; i++ {
		keys = append(keys, key(table, 10, fmt.Sprintf("x%02d", i)))
	}
	for i := 0; i < 40; i++ {
		keys = append(keys, key(table, 20+i%3, "y"))
	}
	got, ok, err := e.m.loadSplitKey(table, sh, keys)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	// 40 samples at a = 10, 40 at a = 20..22: the one-column gap at (20)
	// is exactly the median.
	if want := key(table, 20); !bytes.Equal(got, want) {
		t.Fatalf("got %s, want (20)", fmtKey(table, got))
	}
	hotKey := make([][]byte, 100)
	for i := range hotKey {
		hotKey[i] = key(table, 10, "x")
	}
	if _, ok, _ := e.m.loadSplitKey(table, sh, hotKey); ok {
		t.Fatal("split a single hot key")
	}
	if _, ok, _ := e.m.loadSplitKey(table, sh, keys[:minLoadSample-1]); ok {
		t.Fatal("split on a tiny sample")
	}
}

// TestBalancerRandomized applies random writes, deletes, scans, policy
// changes and restarts, with a balancer tick after every step, and
// compares every scan with a sorted-map oracle; the invariants and exact
// statistics are checked after every tick.
func TestBalancerRandomized(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table = 7
	e.create(table)
	oracle := map[string][]byte{}
	box := &policyBox{}
	p := sizePolicy(4 << 10)
	box.set(table, p)
	clock := newFakeClock()
	opts := BalancerOptions{MaxActionsPerTick: 1 << 20}
	b := newTestBalancer(e, box, clock, opts)
	steps := 200
	if testing.Short() {
		steps = 100
	}
	for step := 0; step < steps; step++ {
		switch op := r.IntN(20); {
		case op < 9: // A batch of puts.
			var keys, values [][]byte
			seen := map[string]bool{}
			for range 1 + r.IntN(40) {
				k := key(table, r.IntN(2000), fmt.Sprintf("b%d", r.IntN(3)))
				if seen[string(k)] {
					continue
				}
				seen[string(k)] = true
				v := bytes.Repeat([]byte{'v'}, r.IntN(200))
				keys, values = append(keys, k), append(values, v)
				oracle[string(k)] = v
			}
			e.mustWrite(table, keys, values)
		case op < 13: // Delete a range.
			lo := r.IntN(2000)
			hi := lo + r.IntN(400)
			var keys, values [][]byte
			for k := range oracle {
				if bytes.Compare([]byte(k), key(table, lo)) >= 0 && bytes.Compare([]byte(k), key(table, hi)) < 0 {
					keys, values = append(keys, []byte(k)), append(values, nil)
					delete(oracle, k)
				}
			}
			e.mustWrite(table, keys, values)
		case op < 16: // Scan a range and compare.
			lo := r.IntN(2000)
			span := storage.Span{Start: key(table, lo), End: key(table, lo+r.IntN(500))}
			var want []string
			for k := range oracle {
				if span.Contains([]byte(k)) {
					want = append(want, k)
				}
			}
			sort.Strings(want)
			var got []string
			if err := scan(e.eng, span, func(k, v []byte) error {
				if !bytes.Equal(v, oracle[string(k)]) {
					return fmt.Errorf("value of %s", fmtKey(table, k))
				}
				got = append(got, string(k))
				return nil
			}); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d: scan %s: %d rows, want %d", step, span, len(got), len(want))
			}
		case op < 19: // Change the policy.
			switch r.IntN(4) {
			case 0:
				p.SplitBytes = int64(1+r.IntN(8)) << 10
			case 1:
				p.BySize = !p.BySize
			case 2:
				p.MinShards = int64(1 + r.IntN(4))
			default:
				p.MaxShards = int64(1 + r.IntN(64))
			}
			if p.MaxShards < p.MinShards {
				p.MaxShards = p.MinShards
			}
			box.set(table, p)
		default: // Restart.
			b.Stop()
			e.reopen()
			b = newTestBalancer(e, box, clock, opts)
		}
		clock.Advance(time.Second)
		if st := b.Tick(); st.Failures > 0 {
			t.Fatalf("step %d: %+v", step, st)
		}
		e.check()
		e.checkStats(table)
		sm := e.m.Map(table)
		if p.BySize && int64(sm.Len()) < p.MaxShards {
			// Rows are at most about 230 bytes and the split size at least
			// 1 KB, so every shard over the split size has a median.
			for k, s := range shardBytesOf(t, e, table) {
				if s >= p.SplitBytes {
					t.Fatalf("step %d: shard %d holds %d bytes, split size %d:\n%s", step, k, s, p.SplitBytes, mapString(sm))
				}
			}
		}
	}
}

// TestBalancerMinMaxOnExistingShards: a MAX lowered below the shard count
// merges the table down to it, whatever the shards' sizes; a MIN raised
// above it splits the table up, but only when SplitToMin says MIN was set
// explicitly; an emptied table cannot split up.
func TestBalancerMinMaxOnExistingShards(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table, split = 7, 8 << 10
	e.create(table)
	fillValues(e, table, 0, 1000, 50, "r", r) // ~70 KB
	box := &policyBox{}
	clock := newFakeClock()
	b := newTestBalancer(e, box, clock, BalancerOptions{})
	p := sizePolicy(split)
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 30)
	if n := e.m.Map(table).Len(); n < 8 {
		t.Fatalf("%d shards", n)
	}

	p.MaxShards = 3
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 30)
	if n := e.m.Map(table).Len(); n != 3 {
		t.Fatalf("MAX 3: %d shards\n%s", n, mapString(e.m.Map(table)))
	}

	// MIN 6 by default (SplitToMin unset) leaves the shards alone, set
	// explicitly it splits up to 6, below the split size.
	p.MaxShards, p.SplitBytes, p.MinShards = 1<<40, 1<<30, 6
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 30)
	if n := e.m.Map(table).Len(); n != 3 {
		t.Fatalf("default MIN 6: %d shards", n)
	}
	p.SplitToMin = true
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 30)
	if n := e.m.Map(table).Len(); n != 6 {
		t.Fatalf("MIN 6: %d shards\n%s", n, mapString(e.m.Map(table)))
	}

	// Emptied and merged back to one shard, a table has nothing to split
	// up; MAX still applies first.
	deleteRows(e, table, 0, 1000)
	p.MinShards, p.SplitToMin = 1, false
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 30)
	p.MinShards, p.SplitToMin = 4, true
	box.set(table, p)
	tickUntilStable(t, e, b, clock, table, 30)
	if n := e.m.Map(table).Len(); n != 1 {
		t.Fatalf("empty table, MIN 4: %d shards", n)
	}
}
