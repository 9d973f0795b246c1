package storage

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Garbage collection of old versions (issue 16, item 7).
//
// Every commit of a row adds a version and keeps the older ones, so that
// reads at earlier timestamps still find theirs. Versions no read can need
// any more are removed by GC: those older than the retention window (the
// table's GC_TTL, else Options.GCTTL, the server's --gc-ttl, 4 hours by
// default as in CockroachDB) that a newer version at or below the window's
// start shadows, and never one an open read still needs (read holds,
// gcthreshold.go). AS OF SYSTEM TIME reads inside the window.
//
// GC works shard by shard (GCSpan; the SQL layer lists the shards and
// their windows through SetGCPolicy). A pass over a shard first raises and
// records its GC threshold (gcthreshold.go), then scans its engine keys
// and deletes, per key, every version below the newest one at or below
// the threshold and that one too if it is a tombstone (GCVersions). It
// writes nothing else and takes no locks: commits only add versions above
// the threshold (their timestamps are later than now minus the window and
// than every open read), so a pass and commits never decide on the same
// versions. Deletes are Pebble point deletions committed without fsync in
// batches: losing them in a crash only leaves garbage for the next pass.
//
// A background loop collects each shard every quarter of its window (at
// least a second; Options.GCInterval when set), the first time within a
// minute of Open. VACUUM and the balancer's compaction of a merged shard
// run a pass over their shards at once.

// DefaultGCTTL is Options.GCTTL's default.
const DefaultGCTTL = 4 * time.Hour

// gcBatchDeletes is how many version deletions a GC batch carries.
const gcBatchDeletes = 1024

// GCStats describes one GC pass.
type GCStats struct {
	Keys     int64 // user keys visited
	Versions int64 // versions visited
	Deleted  int64 // versions deleted
}

// GCVersions removes, in span (of the table area; keys outside it are not
// versioned), the versions that no read at or above threshold can see (see
// above). It returns what it did; ctx stops it between batches.
func (e *Engine) GCVersions(ctx context.Context, span Span, threshold hlc.Timestamp) (GCStats, error) {
	var st GCStats
	if !e.gcAllowed() {
		return st, &ReplicatedError{Op: "garbage collection"} // replication.go
	}
	if err := span.validate(); err != nil {
		return st, err
	}
	span = span.Intersect(TablesSpan())
	lower, upper := engineBounds(span)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return st, err
	}
	defer it.Close()
	b := e.db.NewBatch()
	defer func() { b.Close() }()
	flush := func() error {
		if b.Empty() {
			return nil
		}
		// On a replicated engine, a replicated command: every replica
		// deletes the same versions (replication.go).
		if err := e.commitGC(b); err != nil {
			return err
		}
		b.Close()
		b = e.db.NewBatch()
		return ctx.Err()
	}
	var prefix []byte
	shadowed := false // a version at or below threshold was kept for this key
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		n := enginekey.Split(k)
		if n == len(k) {
			continue // bare: not a version (never committed in this area)
		}
		_, ts, ok := enginekey.DecodeVersion(k)
		if !ok {
			return st, fmt.Errorf("%w: engine key %x", ErrCorruptEncoding, k)
		}
		if prefix == nil || string(k[:n]) != string(prefix) {
			prefix = append(prefix[:0], k[:n]...)
			shadowed = false
			st.Keys++
		}
		st.Versions++
		if threshold.Less(ts) {
			continue // inside the window
		}
		del := shadowed
		if !shadowed {
			// The newest version at or below the threshold: what a read
			// at the threshold sees. Kept, unless it is a tombstone.
			shadowed = true
			v, err := it.ValueAndErr()
			if err != nil {
				return st, err
			}
			_, deleted, err := decodeVersioned(k, v)
			if err != nil {
				return st, err
			}
			del = deleted
		}
		if !del {
			continue
		}
		if err := b.Delete(k, nil); err != nil {
			return st, err
		}
		st.Deleted++
		if b.Count() >= gcBatchDeletes {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	if err := it.Error(); err != nil {
		return st, err
	}
	return st, flush()
}

// GCTarget is one span a GC pass collects, with its retention window:
// a shard of a table and the table's GC_TTL.
type GCTarget struct {
	Span Span
	TTL  time.Duration
}

// GCPolicy is what the SQL layer tells GC about its tables.
type GCPolicy struct {
	// Targets returns the spans a pass collects: every shard of every
	// table and index, with its table's TTL. Called at every pass.
	Targets func() []GCTarget
	// TTL returns the retention window of a table or index (by id in the
	// table area); ok false means the engine's default.
	TTL func(tableID uint64) (ttl time.Duration, ok bool)
}

// SetGCPolicy sets the SQL layer's policy. Without one a pass collects the
// whole table area with the engine's TTL as one span, or nothing at all
// when the engine was opened with Options.GCWaitsForPolicy.
func (e *Engine) SetGCPolicy(p GCPolicy) {
	if e.gc != nil {
		e.gc.policy.Store(&p)
	}
}

// ttlOf returns the retention window of the table whose span starts at
// start: the policy's, else the engine's.
func (g *gcLoop) ttlOf(start []byte) time.Duration {
	if p := g.policy.Load(); p != nil && p.TTL != nil {
		if id, _, err := DecodeTablePrefix(start); err == nil {
			if ttl, ok := p.TTL(id); ok && ttl > 0 {
				return ttl
			}
		}
	}
	return g.ttl
}

// DefaultTTL returns the engine's retention window (Options.GCTTL); ok is
// false when GC is off.
func (e *Engine) DefaultTTL() (ttl time.Duration, ok bool) {
	if e.gc == nil {
		return 0, false
	}
	return e.gc.ttl, true
}

// RunGC runs one pass over the targets now (as the background loop does),
// for tests and VACUUM; it returns the sum of the passes' stats.
func (e *Engine) RunGC(ctx context.Context) (GCStats, error) {
	if e.gc == nil {
		return GCStats{}, nil
	}
	st, _, err := e.gc.pass(ctx, false)
	return st, err
}

// gcLoop runs GC passes in the background until stopped.
type gcLoop struct {
	e        *Engine
	ttl      time.Duration
	interval time.Duration
	log      *slog.Logger
	policy   atomic.Pointer[GCPolicy]
	mu       sync.Mutex
	lastRun  map[string]time.Time // shard span start -> end of its last pass
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

// gcMinPeriod is the shortest time between two passes over one shard
// (a table with a GC_TTL of a few seconds is collected every second).
const gcMinPeriod = time.Second

// startGC starts the loop of an engine; nil when GC is off (ttl < 0).
func startGC(e *Engine, ttl, interval time.Duration, log *slog.Logger) *gcLoop {
	if ttl < 0 {
		return nil
	}
	if ttl == 0 {
		ttl = DefaultGCTTL
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &gcLoop{e: e, ttl: ttl, interval: interval, log: log, cancel: cancel, lastRun: map[string]time.Time{}}
	g.done.Add(1)
	go g.run(ctx)
	return g
}

// period is how often a shard with retention window ttl is collected: a
// quarter of its window (at least gcMinPeriod), or Options.GCInterval when
// given.
func (g *gcLoop) period(ttl time.Duration) time.Duration {
	if g.interval > 0 {
		return g.interval
	}
	return max(ttl/4, gcMinPeriod)
}

func (g *gcLoop) run(ctx context.Context) {
	defer g.done.Done()
	// The first pass comes within a minute of Open, so that tables with a
	// short GC_TTL need not wait for the default window's period.
	wait := g.period(g.ttl)
	if g.interval <= 0 {
		wait = min(wait, time.Minute)
	}
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		var st GCStats
		var err error
		st, wait, err = g.pass(ctx, true)
		if err != nil && ctx.Err() == nil {
			g.log.Warn("storage: GC pass failed", "err", err)
		}
		if st.Deleted > 0 {
			g.log.Info("storage: GC removed old versions", "deleted", st.Deleted, "versions", st.Versions,
				"keys", st.Keys)
		}
	}
}

// targets returns what a pass collects: the policy's shards, else the
// whole table area with the engine's window.
func (g *gcLoop) targets() []GCTarget {
	if p := g.policy.Load(); p != nil && p.Targets != nil {
		return p.Targets()
	}
	return []GCTarget{{Span: TablesSpan(), TTL: g.ttl}}
}

// pass collects the targets — with due, only those whose period has
// passed since their last pass — and returns when the next one is due.
func (g *gcLoop) pass(ctx context.Context, due bool) (sum GCStats, next time.Duration, err error) {
	next = g.period(g.ttl)
	if !g.e.gcAllowed() {
		return sum, next, nil // a replica's engine while its node does not serve
	}
	if g.e.gcWaitsForPolicy && g.policy.Load() == nil {
		return sum, next, nil // the SQL layer has not said what to keep yet
	}
	seen := map[string]bool{}
	for _, t := range g.targets() {
		ttl := t.TTL
		if ttl <= 0 {
			ttl = g.ttlOf(t.Span.Start)
		}
		period := g.period(ttl)
		key := string(t.Span.Start)
		seen[key] = true
		g.mu.Lock()
		last, ran := g.lastRun[key]
		g.mu.Unlock()
		if due && ran {
			if left := period - time.Since(last); left > 0 {
				next = min(next, left)
				continue
			}
		}
		g.e.gcs.passes.Lock()
		st, err := g.e.GCSpan(ctx, t.Span, ttl)
		g.e.gcs.passes.Unlock()
		sum.Keys += st.Keys
		sum.Versions += st.Versions
		sum.Deleted += st.Deleted
		if err != nil {
			return sum, next, err
		}
		if err := ctx.Err(); err != nil {
			return sum, next, err
		}
		g.mu.Lock()
		g.lastRun[key] = time.Now()
		g.mu.Unlock()
		next = min(next, period)
	}
	if due {
		// Shards that split, merged or were dropped since.
		g.mu.Lock()
		for k := range g.lastRun {
			if !seen[k] {
				delete(g.lastRun, k)
			}
		}
		g.mu.Unlock()
	}
	return sum, max(next, gcMinPeriod/10), nil
}

// stop ends the loop and waits for a pass in progress to stop.
func (g *gcLoop) stop() {
	if g == nil {
		return
	}
	g.cancel()
	g.done.Wait()
}

// Dropped tables (issue 16): a schema change that drops a table or index
// (DROP TABLE, TRUNCATE, a rewrite, DROP INDEX) no longer deletes its keys
// when it commits. They stay, so that a read AS OF SYSTEM TIME before the
// drop still finds them, until the table's retention window has passed
// the drop; then the SQL layer's GC job calls CollectDropped.

// CollectDropped removes every key of span — a table's or index's key
// space that a schema change committed at `at` dropped — once no read can
// still need it: now minus ttl and the oldest read hold must both be at or
// after `at`. It reports false, doing nothing, before that (or while this
// replica's engine does not serve). Otherwise the span's GC threshold is
// raised to `at` in memory first (under the mutex the read holds share),
// so that a read that starts meanwhile is refused (BelowGCThresholdError)
// rather than reading a half-deleted span; then one batch deletes the
// span's keys and its GC threshold keys (through the replicator on a
// replicated engine). forget (may be nil) runs after that batch and before
// the in-memory threshold goes: from then on the caller refuses the reads
// of the span itself, knowing the table is gone. A crash before the batch
// lands leaves the keys for the next call.
func (e *Engine) CollectDropped(ctx context.Context, span Span, at hlc.Timestamp, ttl time.Duration, forget func()) (bool, error) {
	if err := span.validate(); err != nil {
		return false, err
	}
	if span.End == nil || !isVersioned(span.Start) {
		return false, fmt.Errorf("storage: collecting dropped %s: not a bounded span of the table area", span)
	}
	if !e.gcAllowed() {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	g := e.gcs
	g.passes.Lock()
	defer g.passes.Unlock()
	g.mu.Lock()
	now, err := e.commits.readFloor()
	if err != nil {
		g.mu.Unlock()
		return false, err
	}
	if now.WallTime-int64(max(ttl, 0)) < at.WallTime {
		g.mu.Unlock()
		return false, nil
	}
	if oldest, ok := g.oldestHoldLocked(); ok && oldest.Less(at) {
		g.mu.Unlock()
		return false, nil
	}
	cur := g.thresholdLocked(span)
	g.publishLocked(span, cur.Forward(at))
	g.mu.Unlock()

	b := e.db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange(bareKey(rangeStart(span.Start)), bareKey(span.End), nil); err != nil {
		return false, err
	}
	if err := b.DeleteRange(bareKey(GCThresholdKey(span.Start)), bareKey(GCThresholdKey(span.End)), nil); err != nil {
		return false, err
	}
	if err := e.commitGC(b); err != nil {
		return false, err
	}
	if forget != nil {
		forget()
	}
	g.mu.Lock()
	g.removeLocked(span)
	g.mu.Unlock()
	return true, nil
}
