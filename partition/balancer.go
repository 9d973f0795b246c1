package partition

import (
	"context"
	"errors"
	"github.com/pivotdb/pivotdb/panics"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/storage"
)

// The balancer: automatic partitioning (design §5, issue 5).
//
// A Balancer wakes up every Interval and, for every table with a shard map,
// asks the owner for the table's Policy (the sql layer reads it from the
// table's settings in the current catalog snapshot, so ALTER TABLE ... SET
// takes effect at the next tick without a restart), measures each shard's
// load, and then repeats, up to MaxActionsPerTick times per table, the first
// applicable action of:
//
//  1. split by size: the largest shard whose data_size_bytes reached
//     Policy.SplitBytes, while the table has fewer than MaxShards shards and
//     BySize is on, splits at its median by bytes (MedianSplitKey, or its
//     estimate for big shards; estimate.go);
//  2. split by load: the busiest shard whose load stayed at or above
//     LoadSplitOpsPerSec for LoadSplitTicks consecutive ticks, while the
//     table has fewer than MaxShards shards and ByLoad is on, splits at the
//     weighted median of the keys it served (load.go), so that its load
//     halves;
//  3. split up to MIN: while the table has fewer than MinShards shards
//     (and fewer than MaxShards) and SplitToMin is set, its largest shard with at least two rows
//     splits at its median by bytes, whatever its size;
//  4. merge: the first run of adjacent shards, at least two, whose combined
//     data_size_bytes is at most SplitBytes/2 and whose merge leaves the
//     table at least MinShards shards, all of them eligible, merges into
//     one.
//
// Before all of these, a table with more than MaxShards shards merges the
// eligible adjacent pair with the smallest combined size, whatever its
// size, until it is back at MaxShards. Steps 3 and this one make an ALTER
// of MIN or MAX take effect on a table that already has shards; both act
// only while BySize or ByLoad is on (automatic partitioning at all).
//
// A shard is eligible for a merge when its statistics are exact (not
// pending), it has existed for SettleTicks ticks (so that a manual split, a
// restart or the balancer's own split is not undone at once), and, if ByLoad
// is on, its load is below LowLoadFraction of the split threshold — and, for
// a shard that a load split made, has stayed there for LoadMergeQuiet. A
// run merges because of size (BySize on) or because load-split shards went
// quiet (ByLoad on and the run holds one of them). The split threshold is
// twice the merge threshold, so a shard just split never qualifies for a
// merge with its sibling: there is no ping-pong.
//
// Each split and merge is Manager.Split or Manager.Merge: one atomic swap
// batch of metadata, readers and writers paused only for that commit. A
// crash at any moment leaves the previous or the next map, never something
// in between (reshape.go); the balancer keeps no persistent state of its
// own. What it keeps in memory — load measurements, which shards a load
// split made — restarts empty: after a restart load-split shards count as
// ordinary shards, and every shard settles again before it may merge.
//
// Ticks are serialised; Tick may also be called directly (tests, or an
// operator's "balance now").

// Policy is one table's automatic partitioning settings.
type Policy struct {
	// BySize is AUTO_PARTITIONING_BY_SIZE: split shards that reach
	// SplitBytes, merge small neighbours.
	BySize bool
	// SplitBytes is AUTO_PARTITIONING_PARTITION_SIZE_MB in bytes.
	SplitBytes int64
	// MinShards is AUTO_PARTITIONING_MIN_PARTITIONS_COUNT: merges stop there.
	MinShards int64
	// SplitToMin makes a table with fewer than MinShards shards split up
	// to MinShards. The sql layer sets it when MIN_PARTITIONS_COUNT is set
	// explicitly, not when it defaults to the initial shard count: a
	// manual RESHARD INTO fewer shards is then left alone.
	SplitToMin bool
	// MaxShards is AUTO_PARTITIONING_MAX_PARTITIONS_COUNT: splits stop there.
	MaxShards int64
	// ByLoad is AUTO_PARTITIONING_BY_LOAD.
	ByLoad bool
}

// PolicyFunc returns a table's current Policy; ok is false for a table the
// balancer must leave alone (unknown to the owner, being created or
// dropped).
type PolicyFunc func(tableID uint64) (p Policy, ok bool)

// Defaults of BalancerOptions.
const (
	DefaultBalancerInterval   = 10 * time.Second
	DefaultLoadSplitOpsPerSec = 2000
	DefaultLoadSplitTicks     = 3
	DefaultLoadMergeQuiet     = 10 * time.Minute
	DefaultSettleTicks        = 3
	DefaultMaxActionsPerTick  = 64
	DefaultEstimateAbove      = 64 << 20
	DefaultReclaimAbove       = 8 << 20
	// LowLoadFraction of LoadSplitOpsPerSec is the load under which a shard
	// counts as quiet for merges (YDB merges below about a third of its
	// split threshold).
	LowLoadFraction = 0.3
)

// BalancerOptions configure a Balancer. Zero fields take the defaults above.
type BalancerOptions struct {
	// Interval is the time between ticks.
	Interval time.Duration
	// LoadSplitOpsPerSec is the load threshold of split by load: operations
	// (reads plus row writes) a shard serves per second, measured over one
	// tick.
	LoadSplitOpsPerSec float64
	// LoadSplitTicks is how many consecutive ticks a shard's load must stay
	// at or above the threshold before it splits.
	LoadSplitTicks int
	// LoadMergeQuiet is how long a shard made by a load split must stay
	// below LowLoadFraction of the threshold before it may merge again.
	LoadMergeQuiet time.Duration
	// SettleTicks is how many ticks a shard must have existed before it may
	// merge.
	SettleTicks int
	// MaxActionsPerTick bounds the splits and merges of one table per tick.
	MaxActionsPerTick int
	// EstimateAbove is the shard size from which the split key is estimated
	// rather than found by a scan (estimate.go); negative always scans.
	EstimateAbove int64
	// ReclaimAbove is the garbage, in bytes, from which the balancer
	// compacts a shard it has just merged: when the shard's sstables
	// (EstimateDiskUsage) exceed twice its logical size by at least this
	// much, the rows a big DELETE removed still take disk space, and a
	// range compaction of the shard's span drops them. Negative never
	// compacts.
	ReclaimAbove int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives one Info line per split or merge and Warn lines for
	// failures; nil discards them.
	Logger *slog.Logger
}

func (o *BalancerOptions) setDefaults() {
	if o.Interval <= 0 {
		o.Interval = DefaultBalancerInterval
	}
	if o.LoadSplitOpsPerSec <= 0 {
		o.LoadSplitOpsPerSec = DefaultLoadSplitOpsPerSec
	}
	if o.LoadSplitTicks <= 0 {
		o.LoadSplitTicks = DefaultLoadSplitTicks
	}
	if o.LoadMergeQuiet <= 0 {
		o.LoadMergeQuiet = DefaultLoadMergeQuiet
	}
	if o.SettleTicks <= 0 {
		o.SettleTicks = DefaultSettleTicks
	}
	if o.MaxActionsPerTick <= 0 {
		o.MaxActionsPerTick = DefaultMaxActionsPerTick
	}
	if o.EstimateAbove == 0 {
		o.EstimateAbove = DefaultEstimateAbove
	}
	if o.ReclaimAbove == 0 {
		o.ReclaimAbove = DefaultReclaimAbove
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Balancer splits and merges shards automatically; see the top of the file.
type Balancer struct {
	m      *Manager
	policy PolicyFunc
	opts   BalancerOptions
	log    *slog.Logger
	reg    *loadRegistry

	mu       sync.Mutex // Serialises ticks; guards the fields below.
	tick     int64
	lastTick time.Time
	tables   map[uint64]map[ShardID]*shardLoad
	total    TickStats

	startOnce, stopOnce sync.Once
	stop, done          chan struct{}
	// ctx is cancelled by Stop: it interrupts a reclaiming compaction.
	ctx    context.Context
	cancel context.CancelFunc
}

// shardLoad is what the balancer remembers of a shard between ticks.
type shardLoad struct {
	firstTick int64     // The tick at which the balancer first saw it.
	lastOps   int64     // Reads+Writes at the previous tick.
	rate      float64   // Operations per second over the previous tick.
	hotTicks  int       // Consecutive ticks at or above the threshold.
	loadSplit bool      // Made by a split by load.
	lastBusy  time.Time // Last tick at or above LowLoadFraction of the threshold.
}

// TickStats count a balancer's actions.
type TickStats struct {
	SizeSplits, LoadSplits, Merges int
	// Compactions counts merged shards compacted to reclaim space.
	Compactions int
	// Failures counts splits and merges that returned an error other than
	// a concurrent change of the table (logged).
	Failures int
}

func (s *TickStats) add(o TickStats) {
	s.SizeSplits += o.SizeSplits
	s.LoadSplits += o.LoadSplits
	s.Merges += o.Merges
	s.Compactions += o.Compactions
	s.Failures += o.Failures
}

// NewBalancer returns a balancer of m's tables; Start runs it in the
// background, or call Tick.
func NewBalancer(m *Manager, policy PolicyFunc, opts BalancerOptions) *Balancer {
	opts.setDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	b := &Balancer{m: m, policy: policy, opts: opts, log: log, reg: &loadRegistry{},
		tables: map[uint64]map[ShardID]*shardLoad{}, stop: make(chan struct{}), done: make(chan struct{})}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	// The read path finds the key samples through the manager; one balancer
	// per manager.
	registries.Store(m, b.reg)
	return b
}

// Start runs ticks every Interval in a goroutine until Stop.
func (b *Balancer) Start() {
	b.startOnce.Do(func() {
		go func() {
			defer close(b.done)
			t := time.NewTicker(b.opts.Interval)
			defer t.Stop()
			for {
				select {
				case <-b.stop:
					return
				case <-t.C:
					// Each table's turn recovers its own panics
					// (balanceTableRecovered); this catches the rest of
					// the tick, so that the next one still comes.
					func() {
						defer panics.Recover("partition: balancer tick", nil)
						b.Tick()
					}()
				}
			}
		}()
	})
}

// Stop stops the background ticks, waits for the split or merge in
// progress, if any, to complete (including a split's landing, also one
// counted in the background; the rest of the tick is skipped), and stops the load sampling. The balancer cannot be
// restarted.
func (b *Balancer) Stop() {
	b.stopOnce.Do(func() {
		close(b.stop)
		b.cancel()
		started := true
		b.startOnce.Do(func() { started = false; close(b.done) })
		if started {
			<-b.done
		}
		b.mu.Lock() // Wait for a direct Tick too.
		registries.CompareAndDelete(b.m, b.reg)
		b.mu.Unlock()
		b.m.WaitBackground() // The counts of big splits.
	})
}

func (b *Balancer) stopping() bool {
	select {
	case <-b.stop:
		return true
	default:
		return false
	}
}

// Total returns the actions of every tick so far.
func (b *Balancer) Total() TickStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Tick runs one round over every table and returns what it did.
func (b *Balancer) Tick() TickStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopping() {
		return TickStats{}
	}
	now := b.opts.Now()
	var elapsed float64
	if !b.lastTick.IsZero() {
		elapsed = now.Sub(b.lastTick).Seconds()
	}
	b.lastTick = now
	b.tick++
	var st TickStats
	live := map[uint64]bool{}
	for _, id := range b.m.Tables() {
		live[id] = true
		st.add(b.balanceTableRecovered(id, now, elapsed))
	}
	for id, shards := range b.tables {
		if !live[id] {
			for sid := range shards {
				b.reg.untrack(sid)
			}
			delete(b.tables, id)
		}
	}
	b.total.add(st)
	return st
}

// balanceTableRecovered balances one table (its policy, then
// balanceTable). A panic is recovered, logged with its stack and counted
// (package panics) and fails only this table's turn of the tick; the
// splits and merges it runs protect their own critical section
// (reshape's swap crashes the process instead, see panics.Crash).
func (b *Balancer) balanceTableRecovered(id uint64, now time.Time, elapsed float64) (st TickStats) {
	var err error
	defer func() {
		if err != nil {
			st.Failures++
			b.log.Error("partition: balancing a table failed", "table", id, "err", err)
		}
	}()
	defer panics.Recover("partition: balancer", &err)
	panics.Inject("partition.balancer.tick")
	p, ok := b.policy(id)
	if !ok {
		return TickStats{}
	}
	return b.balanceTable(id, p, now, elapsed)
}

// balanceTable measures a table's load and then applies actions until none
// applies or MaxActionsPerTick is reached.
func (b *Balancer) balanceTable(id uint64, p Policy, now time.Time, elapsed float64) TickStats {
	var st TickStats
	sm := b.m.Map(id)
	if sm == nil {
		return st
	}
	loads := b.observe(id, sm, p, now, elapsed)
	skip := map[ShardID]bool{} // Shards that cannot split this tick.
	for range b.opts.MaxActionsPerTick {
		if b.stopping() {
			return st // Stop waits for at most one split or merge.
		}
		sm, stats, _, err := b.m.TableStats(id)
		if errors.Is(err, ErrTableNotFound) {
			return st
		}
		if err != nil {
			b.log.Warn("partition: balancer cannot read statistics", "table", id, "err", err)
			st.Failures++
			return st
		}
		done, stop := b.act(id, sm, stats, loads, p, now, skip, &st)
		if stop || !done {
			return st
		}
	}
	return st
}

// observe updates the load of every shard of sm and the sampling of warm
// shards, forgets shards that are gone, and returns the table's loads.
func (b *Balancer) observe(id uint64, sm *ShardMap, p Policy, now time.Time, elapsed float64) map[ShardID]*shardLoad {
	loads := b.tables[id]
	if loads == nil {
		loads = map[ShardID]*shardLoad{}
		b.tables[id] = loads
	}
	thr := b.opts.LoadSplitOpsPerSec
	current := make(map[ShardID]bool, sm.Len())
	for _, sh := range sm.shards {
		current[sh.ID] = true
		ops := sh.Reads() + sh.Writes()
		l := loads[sh.ID]
		if l == nil {
			// First seen: no rate yet, only a baseline.
			loads[sh.ID] = &shardLoad{firstTick: b.tick, lastOps: ops, lastBusy: now}
			continue
		}
		l.rate = 0
		if elapsed > 0 {
			l.rate = float64(ops-l.lastOps) / elapsed
		}
		l.lastOps = ops
		if l.rate >= thr {
			l.hotTicks++
		} else {
			l.hotTicks = 0
		}
		if l.rate >= thr*LowLoadFraction {
			l.lastBusy = now
		}
		if p.ByLoad && l.rate >= thr/2 {
			b.reg.track(sh.ID)
		} else {
			b.reg.untrack(sh.ID)
		}
	}
	for sid := range loads {
		if !current[sid] {
			delete(loads, sid)
			b.reg.untrack(sid)
		}
	}
	return loads
}

// act applies the first applicable action to the table. done reports that
// one was applied; stop that the table changed under the balancer (dropped,
// or resharded concurrently) and should be left until the next tick.
func (b *Balancer) act(id uint64, sm *ShardMap, stats []ShardStats, loads map[ShardID]*shardLoad,
	p Policy, now time.Time, skip map[ShardID]bool, st *TickStats) (done, stop bool) {
	n := int64(sm.Len())
	maxShards := p.MaxShards
	if maxShards <= 0 {
		maxShards = math.MaxInt64
	}

	// A shard may merge when its statistics are exact, it has settled and
	// (under split by load) it is quiet.
	thr := b.opts.LoadSplitOpsPerSec
	eligible := func(k int) bool {
		s, l := stats[k], loads[stats[k].ID]
		if s.Pending || l == nil || b.tick-l.firstTick < int64(b.opts.SettleTicks) {
			return false
		}
		if p.ByLoad {
			if l.rate >= thr*LowLoadFraction {
				return false
			}
			if l.loadSplit && now.Sub(l.lastBusy) < b.opts.LoadMergeQuiet {
				return false
			}
		}
		return true
	}
	auto := p.BySize || p.ByLoad

	// 0. Merge down to MAX: a table with more than MaxShards shards (after
	// an ALTER lowered it) merges the eligible adjacent pair with the
	// smallest combined size, whatever that size: MAX bounds the shard
	// count, and a table held at MAX has shards above the split size
	// anyway.
	if auto && n > maxShards {
		best := -1
		for k := 0; k+1 < len(stats); k++ {
			if eligible(k) && eligible(k+1) && (best < 0 || stats[k].Bytes+stats[k+1].Bytes < stats[best].Bytes+stats[best+1].Bytes) {
				best = k
			}
		}
		if best >= 0 {
			return b.merge(id, stats, loads, best, 2, stats[best].Bytes+stats[best+1].Bytes, now, st)
		}
	}

	// 1. Split by size: the largest shard over the threshold.
	if p.BySize && p.SplitBytes > 0 && n < maxShards {
		best := -1
		for k, s := range stats {
			if !s.Pending && !skip[s.ID] && s.Bytes >= p.SplitBytes && (best < 0 || s.Bytes > stats[best].Bytes) {
				best = k
			}
		}
		if best >= 0 {
			s := stats[best]
			key, ok, err := b.m.splitKeyBySize(id, s.ID, s.Bytes, b.opts.EstimateAbove)
			return b.split(id, sm.shards[best], s.Bytes, key, ok, err, false, loads, now, skip, st)
		}
	}

	// 2. Split by load: the busiest shard that stayed hot long enough.
	if p.ByLoad && n < maxShards {
		best := -1
		var bestRate float64
		for k, sh := range sm.shards {
			l := loads[sh.ID]
			if l != nil && !skip[sh.ID] && !stats[k].Pending && l.hotTicks >= b.opts.LoadSplitTicks && l.rate > bestRate {
				best, bestRate = k, l.rate
			}
		}
		if best >= 0 {
			sh := sm.shards[best]
			keys, _ := b.reg.sample(sh.ID)
			key, ok, err := b.m.loadSplitKey(id, sh, keys)
			if err == nil && !ok {
				// No usable sample (a write-only load, or too few reads):
				// the median by size halves an even load.
				key, ok, err = b.m.splitKeyBySize(id, sh.ID, stats[best].Bytes, b.opts.EstimateAbove)
			}
			return b.split(id, sh, stats[best].Bytes, key, ok, err, true, loads, now, skip, st)
		}
	}

	// 3. Split up to MIN: a table with fewer than MinShards shards (after
	// an ALTER raised it) splits its largest shard at its median, as long
	// as it has rows to split.
	if auto && p.SplitToMin && n < p.MinShards && n < maxShards {
		best := -1
		for k, s := range stats {
			if !s.Pending && !skip[s.ID] && s.Rows > 1 && (best < 0 || s.Bytes > stats[best].Bytes) {
				best = k
			}
		}
		if best >= 0 {
			s := stats[best]
			key, ok, err := b.m.splitKeyBySize(id, s.ID, s.Bytes, b.opts.EstimateAbove)
			return b.split(id, sm.shards[best], s.Bytes, key, ok, err, false, loads, now, skip, st)
		}
	}

	// 4. Merge: the first eligible run of small neighbours.
	if n > p.MinShards && p.SplitBytes > 0 {
		limit := p.SplitBytes / 2
		for k := 0; k < len(stats); k++ {
			if !eligible(k) {
				continue
			}
			size, hasLoadSplit := stats[k].Bytes, loads[stats[k].ID].loadSplit
			j := k + 1
			for j < len(stats) && eligible(j) && size+stats[j].Bytes <= limit && n-int64(j-k) >= p.MinShards {
				size += stats[j].Bytes
				hasLoadSplit = hasLoadSplit || loads[stats[j].ID].loadSplit
				j++
			}
			if j-k < 2 || !(p.BySize || (p.ByLoad && hasLoadSplit)) {
				continue
			}
			return b.merge(id, stats, loads, k, j-k, size, now, st)
		}
	}
	return false, false
}

// merge merges count shards from index k, chosen by act.
func (b *Balancer) merge(id uint64, stats []ShardStats, loads map[ShardID]*shardLoad, k, count int, size int64,
	now time.Time, st *TickStats) (done, stop bool) {
	next, err := b.m.Merge(id, stats[k].ID, count)
	if err != nil && next == nil {
		return false, b.failed(id, "merge", stats[k].ID, err, st)
	}
	if err != nil {
		b.log.Warn("partition: merge landed without statistics", "table", id, "shard", stats[k].ID, "err", err)
	}
	st.Merges++
	b.adopt(loads, next, now, false)
	b.log.Info("partition: balancer merged shards", "table", id, "first", stats[k].ID, "count", count,
		"bytes", size, "shards", next.Len())
	if k < next.Len() {
		b.reclaim(id, next.shards[k], size, st)
	}
	return true, false
}

// reclaim compacts a just merged shard whose sstables hold much more than
// its rows (see BalancerOptions.ReclaimAbove): after a big DELETE the
// deleted rows and their tombstones stay on disk until a compaction reaches
// them, which in a table that no longer grows may take long. The
// compaction runs in the tick (so Stop waits for it, and cancels it); it
// rewrites only the shard's span, which the merge just made small.
func (b *Balancer) reclaim(id uint64, sh Shard, logical int64, st *TickStats) {
	if b.opts.ReclaimAbove < 0 {
		return
	}
	disk, err := b.m.eng.EstimateDiskUsage(sh.Span)
	if err != nil {
		b.log.Warn("partition: balancer cannot estimate a shard's disk usage", "table", id, "shard", sh.ID, "err", err)
		return
	}
	if int64(disk) < 2*logical || int64(disk)-logical < b.opts.ReclaimAbove {
		return
	}
	// Deleted rows are tombstone versions, and replaced rows old versions,
	// until they leave the GC window: collect those that have, so that the
	// compaction can drop them.
	// The pass raises the shard's GC threshold as the background loop
	// would (its table's TTL, never above an open read).
	var compactErr error
	if _, err := b.m.eng.CollectAndCompact(b.ctx, []storage.Span{sh.Span}, func() error {
		compactErr = b.m.eng.Compact(b.ctx, sh.Span)
		return compactErr
	}); err != nil {
		if b.ctx.Err() == nil {
			st.Failures++
			what := "collect a merged shard's old versions"
			if compactErr != nil {
				what = "compact a merged shard"
			}
			b.log.Warn("partition: balancer cannot "+what, "table", id, "shard", sh.ID, "err", err)
		}
		return
	}
	st.Compactions++
	after, _ := b.m.eng.EstimateDiskUsage(sh.Span)
	b.log.Info("partition: balancer compacted a merged shard", "table", id, "shard", sh.ID,
		"logical", logical, "disk_before", disk, "disk_after", after)
}

// split applies a split chosen by act. A shard of at least EstimateAbove
// bytes splits with SplitInBackground: the balancer does not wait for the
// count of its halves, which stay pending (not split or merged again) until
// it lands.
func (b *Balancer) split(id uint64, sh Shard, bytes int64, key []byte, ok bool, err error, byLoad bool,
	loads map[ShardID]*shardLoad, now time.Time, skip map[ShardID]bool, st *TickStats) (done, stop bool) {
	reason := "size"
	if byLoad {
		reason = "load"
	}
	if err != nil {
		return false, b.failed(id, "choose split key ("+reason+")", sh.ID, err, st)
	}
	if !ok {
		// One huge row, or one hot key: nothing to split at. Try again at
		// the next tick, when the data or the load may have changed.
		skip[sh.ID] = true
		b.log.Debug("partition: shard has no split key", "table", id, "shard", sh.ID, "reason", reason)
		return true, false
	}
	parent := loads[sh.ID]
	splitFn := b.m.Split
	if b.opts.EstimateAbove > 0 && bytes >= b.opts.EstimateAbove {
		splitFn = b.m.SplitInBackground
	}
	next, err := splitFn(id, [][]byte{key})
	if err != nil && next == nil {
		skip[sh.ID] = true
		if errors.Is(err, ErrInvalidPivot) {
			b.log.Warn("partition: balancer chose an invalid pivot", "table", id, "shard", sh.ID, "key", storage.FormatKey(key), "err", err)
			st.Failures++
			return true, false
		}
		return false, b.failed(id, "split ("+reason+")", sh.ID, err, st)
	}
	if err != nil {
		b.log.Warn("partition: split landed without statistics", "table", id, "shard", sh.ID, "err", err)
	}
	if byLoad {
		st.LoadSplits++
	} else {
		st.SizeSplits++
	}
	added := b.adopt(loads, next, now, byLoad)
	if byLoad && parent != nil {
		// Each half starts with half the parent's rate, so that it does not
		// count as quiet at once; it becomes hot again only if it measures
		// hot for LoadSplitTicks ticks of its own.
		for _, l := range added {
			l.rate = parent.rate / 2
		}
	}
	b.reg.untrack(sh.ID)
	b.log.Info("partition: balancer split shard", "table", id, "shard", sh.ID, "reason", reason,
		"at", storage.FormatKey(key), "shards", next.Len())
	return true, false
}

// adopt records the shards of sm the balancer has not seen yet (those a
// split or merge just made): their counters start at zero.
func (b *Balancer) adopt(loads map[ShardID]*shardLoad, sm *ShardMap, now time.Time, loadSplit bool) []*shardLoad {
	var added []*shardLoad
	for _, sh := range sm.shards {
		if loads[sh.ID] == nil {
			l := &shardLoad{firstTick: b.tick, lastOps: 0, loadSplit: loadSplit, lastBusy: now}
			loads[sh.ID] = l
			added = append(added, l)
		}
	}
	return added
}

// failed logs a failed action and reports whether the table should be left
// alone until the next tick: always, since the map may have changed.
func (b *Balancer) failed(id uint64, what string, shard ShardID, err error, st *TickStats) bool {
	if errors.Is(err, ErrTableNotFound) || errors.Is(err, ErrShardNotFound) {
		return true // Dropped or resharded concurrently.
	}
	st.Failures++
	b.log.Warn("partition: balancer cannot "+what, "table", id, "shard", shard, "err", err)
	return true
}

// Loads returns the load (operations per second over the last tick) of the
// table's shards the balancer measured, by shard id; for tests and
// introspection.
func (b *Balancer) Loads(tableID uint64) map[ShardID]float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[ShardID]float64{}
	for id, l := range b.tables[tableID] {
		out[id] = l.rate
	}
	return out
}
