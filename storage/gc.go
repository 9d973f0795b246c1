package storage

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Garbage collection of old versions (issue 16, item 7).
//
// Every commit of a row adds a version and keeps the older ones, so that
// reads at earlier timestamps still find theirs. Versions no read can need
// any more are removed by GC: those older than the retention window
// (Options.GCTTL, the server's --gc-ttl, 4 hours by default as in
// CockroachDB) that a newer version at or below the window's start
// shadows. Reads today are at most a statement old (one snapshot per
// statement), so the window is what keeps a long statement's snapshot
// whole; issue 16's historical reads (AS OF SYSTEM TIME) will read inside it.
//
// A background loop runs a pass over the table area every GCInterval. A
// pass is a scan of engine keys that deletes, per key, every version below
// the newest one at or below the threshold (now minus the window) and that
// one too if it is a tombstone. It writes nothing else and takes no locks:
// commits only add versions above the threshold (their timestamps are
// later than now minus the window), so a pass and commits never decide on
// the same versions. Deletes are Pebble point deletions committed without
// fsync in batches: losing them in a crash only leaves garbage for the next
// pass.

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

// GCThreshold returns the engine's GC threshold now: the clock's time minus
// Options.GCTTL. ok is false when GC is off or the clock fails.
func (e *Engine) GCThreshold() (threshold hlc.Timestamp, ok bool) {
	if e.gc == nil {
		return hlc.Timestamp{}, false
	}
	now, err := e.clock.Now()
	if err != nil || now.WallTime-int64(e.gc.ttl) <= 0 {
		return hlc.Timestamp{}, false
	}
	return hlc.Timestamp{WallTime: now.WallTime - int64(e.gc.ttl)}, true
}

// GCVersions removes, in span (of the table area; keys outside it are not
// versioned), the versions that no read at or above threshold can see (see
// above). It returns what it did; ctx stops it between batches.
func (e *Engine) GCVersions(ctx context.Context, span Span, threshold hlc.Timestamp) (GCStats, error) {
	var st GCStats
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
		if err := b.Commit(pebble.NoSync); err != nil {
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

// gcLoop runs GC passes in the background until stopped.
type gcLoop struct {
	e        *Engine
	ttl      time.Duration
	interval time.Duration
	log      *slog.Logger
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

// startGC starts the loop of an engine; nil when GC is off (ttl < 0).
func startGC(e *Engine, ttl, interval time.Duration, log *slog.Logger) *gcLoop {
	if ttl < 0 {
		return nil
	}
	if ttl == 0 {
		ttl = DefaultGCTTL
	}
	if interval <= 0 {
		interval = max(ttl/4, time.Minute)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &gcLoop{e: e, ttl: ttl, interval: interval, log: log, cancel: cancel}
	g.done.Add(1)
	go g.run(ctx)
	return g
}

func (g *gcLoop) run(ctx context.Context) {
	defer g.done.Done()
	t := time.NewTicker(g.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		threshold, ok := g.e.GCThreshold()
		if !ok {
			continue
		}
		st, err := g.e.GCVersions(ctx, TablesSpan(), threshold)
		if err != nil && ctx.Err() == nil {
			g.log.Warn("storage: GC pass failed", "err", err)
		}
		if st.Deleted > 0 {
			g.log.Info("storage: GC removed old versions", "deleted", st.Deleted, "versions", st.Versions,
				"keys", st.Keys, "threshold", threshold.String())
		}
	}
}

// stop ends the loop and waits for a pass in progress to stop.
func (g *gcLoop) stop() {
	if g == nil {
		return
	}
	g.cancel()
	g.done.Wait()
}
