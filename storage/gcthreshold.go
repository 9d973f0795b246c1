package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// GC thresholds and read holds (issue 16, items 6 and 7).
//
// A shard's GC threshold is the timestamp below which its old versions may
// be gone: a read at a timestamp below it is refused
// (BelowGCThresholdError), one at or above it sees every version it needs.
// It is kept in the shard's own key space, as storage/mvcc lays it out
// (mvcc.GCThresholdKey): the bare key 0x03 0x03 <shard span start> holding
// a 12-byte timestamp, so it travels with the shard's data once shards
// live on several nodes (issue 12).
//
// A threshold key at pivot p covers the keys from p up to the next
// threshold key of the same table. The threshold of a span is the highest
// of the entry at or before its start (within its table) and the entries
// inside it. That is what lets splits and merges stay metadata-only: a
// split's right half is covered by its parent's entry, and a merged shard
// takes the higher of its parts' entries. A GC pass over a shard writes its
// entry at the shard's start and removes the entries inside it, which are
// at most the new threshold.
//
// Thresholds only rise, and never above an open read: every statement and
// transaction holds its read timestamp (HoldReads) while it may still
// read, and a pass takes the lower of now minus the TTL and the oldest
// hold. The thresholds in memory (gcState) and the holds are changed under
// one mutex, so a read that registered its hold is never overtaken by a
// pass that did not see it, and a read whose hold came after a pass's
// threshold finds that threshold when it opens an iterator (checkGC).
//
// The entries are loaded at Open; a pass writes its entry (unsynced)
// before deleting a version, so after a crash the key on disk is at least
// the threshold of every deletion that survived (Pebble's WAL keeps the
// order of batches).

// gcThresholdPrefix starts every GC threshold user key: storage/mvcc's
// shard-local area (0x03) and its GC state kind (0x03).
var gcThresholdPrefix = []byte{0x03, 0x03}

// GCThresholdKey returns the user key of the GC threshold of the shard
// whose span starts at spanStart. Its engine key is mvcc.GCThresholdKey's.
func GCThresholdKey(spanStart []byte) []byte {
	return append(append([]byte(nil), gcThresholdPrefix...), spanStart...)
}

func encodeGCThreshold(ts hlc.Timestamp) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(ts.WallTime))
	return binary.BigEndian.AppendUint32(b, uint32(ts.Logical))
}

func decodeGCThreshold(key, v []byte) (hlc.Timestamp, error) {
	if len(v) != 12 {
		return hlc.Timestamp{}, fmt.Errorf("%w: GC threshold %s of %d bytes", ErrCorruptEncoding, FormatKey(key), len(v))
	}
	return hlc.Timestamp{WallTime: int64(binary.BigEndian.Uint64(v)), Logical: int32(binary.BigEndian.Uint32(v[8:]))}, nil
}

// BelowGCThresholdError reports a read at a timestamp below the GC
// threshold of a shard it reads: versions it would need may be gone. The
// message is CockroachDB's.
type BelowGCThresholdError struct {
	ReadTimestamp hlc.Timestamp
	Threshold     hlc.Timestamp
}

func (e *BelowGCThresholdError) Error() string {
	return fmt.Sprintf("batch timestamp %s must be after replica GC threshold %s", e.ReadTimestamp, e.Threshold)
}

// gcEntry is one threshold key in memory: the span start it is kept at.
type gcEntry struct {
	start string
	ts    hlc.Timestamp
}

// gcState is the engine's thresholds and read holds.
type gcState struct {
	// passes serializes the GC passes with the collect-then-compact
	// sequences (CollectAndCompact): a background pass's deletes that
	// landed after a compaction of the same span would stay on disk as
	// tombstones of keys already gone, until the next compaction there.
	// Taken before mu.
	passes  sync.Mutex
	mu      sync.Mutex
	entries []gcEntry // by start
	holds   map[uint64]hlc.Timestamp
	nextID  uint64
	// maxWall is the highest wall time of any entry: a read above it
	// needs no check (the common case, kept off the mutex).
	maxWall atomic.Int64
}

func newGCState() *gcState {
	return &gcState{holds: map[uint64]hlc.Timestamp{}}
}

// load reads every threshold key (Open).
func (g *gcState) load(db *pebble.DB) error {
	span := PrefixSpan(gcThresholdPrefix)
	lower, upper := engineBounds(span)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		uk, ok := enginekey.UserKeyOf(it.Key())
		if !ok {
			return fmt.Errorf("%w: engine key %x in the GC threshold area", ErrCorruptEncoding, it.Key())
		}
		ts, err := decodeGCThreshold(uk, it.Value())
		if err != nil {
			return err
		}
		g.entries = append(g.entries, gcEntry{start: string(uk[len(gcThresholdPrefix):]), ts: ts})
		if ts.WallTime > g.maxWall.Load() {
			g.maxWall.Store(ts.WallTime)
		}
	}
	return it.Error()
}

// thresholdLocked returns the threshold of span (see above); g.mu held.
func (g *gcState) thresholdLocked(span Span) hlc.Timestamp {
	var out hlc.Timestamp
	start := string(span.Start)
	// The entry at or before the start covers it if it is of the same
	// table (a table's first shard starts at its prefix).
	i := sort.Search(len(g.entries), func(i int) bool { return g.entries[i].start > start })
	if i > 0 && covers(g.entries[i-1].start, start) {
		out = g.entries[i-1].ts
	}
	for ; i < len(g.entries); i++ {
		e := g.entries[i]
		if span.End != nil && e.start >= string(span.End) {
			break
		}
		out = out.Forward(e.ts)
	}
	return out
}

// covers reports whether the threshold entry at entry (at or before key)
// covers key: it is of the same table, or a prefix of key (an entry of a
// pass over a span wider than a table, such as the whole table area).
func covers(entry, key string) bool {
	if strings.HasPrefix(key, entry) {
		return true
	}
	return len(entry) >= tablePrefixLen && len(key) >= tablePrefixLen && entry[:tablePrefixLen] == key[:tablePrefixLen]
}

// publishLocked sets the entry at span's start to ts and drops those
// inside the span (all at or below ts); g.mu held.
func (g *gcState) publishLocked(span Span, ts hlc.Timestamp) (dropped []string) {
	start := string(span.Start)
	i := sort.Search(len(g.entries), func(i int) bool { return g.entries[i].start >= start })
	j := i
	for j < len(g.entries) && (span.End == nil || g.entries[j].start < string(span.End)) {
		if g.entries[j].start != start {
			dropped = append(dropped, g.entries[j].start)
		}
		j++
	}
	g.entries = append(g.entries[:i], append([]gcEntry{{start: start, ts: ts}}, g.entries[j:]...)...)
	if ts.WallTime > g.maxWall.Load() {
		g.maxWall.Store(ts.WallTime)
	}
	return dropped
}

// oldestHoldLocked returns the oldest held read timestamp; ok is false
// when nothing is held.
func (g *gcState) oldestHoldLocked() (oldest hlc.Timestamp, ok bool) {
	for _, ts := range g.holds {
		if !ok || ts.Less(oldest) {
			oldest, ok = ts, true
		}
	}
	return oldest, ok
}

// checkGC returns a BelowGCThresholdError when a read at ts of span is
// below the span's GC threshold. Reads at MaxTimestamp (the newest state)
// and above every threshold return at once.
func (e *Engine) checkGC(ts hlc.Timestamp, span Span) error {
	g := e.gcs
	if ts.WallTime > g.maxWall.Load() || !isVersioned(span.Start) {
		return nil
	}
	g.mu.Lock()
	th := g.thresholdLocked(span)
	g.mu.Unlock()
	if ts.Less(th) {
		return &BelowGCThresholdError{ReadTimestamp: ts, Threshold: th}
	}
	return nil
}

// checkGCKey is checkGC for a point read of key.
func (e *Engine) checkGCKey(ts hlc.Timestamp, key []byte) error {
	if ts.WallTime > e.gcs.maxWall.Load() || !isVersioned(key) {
		return nil
	}
	return e.checkGC(ts, Span{Start: key, End: append(bytes.Clone(key), 0)})
}

// GCThresholdOf returns the GC threshold of span (zero when GC never ran
// over it): reads below it are refused.
func (e *Engine) GCThresholdOf(span Span) hlc.Timestamp {
	e.gcs.mu.Lock()
	defer e.gcs.mu.Unlock()
	return e.gcs.thresholdLocked(span)
}

// ReadHold keeps GC from collecting versions a read at its timestamp (or
// later) may need. Release it when the reads are done.
type ReadHold struct {
	e  *Engine
	id uint64
	ts hlc.Timestamp
}

// HoldReads registers a hold at ts. A zero ts takes a read timestamp as
// ReadTimestamp does and holds it: it passes the read gate, picks the
// timestamp and registers the hold together (so no GC threshold passes it
// in between), then waits until every commit at or below it is visible;
// the hold's Timestamp is then the statement's read timestamp. That is one
// acquisition of the commit tracker's lock per statement where a hold at
// readFloor followed by ReadTimestamp took two (issue 23). A hold below a
// span's threshold is allowed: the reads of that span are refused when
// they open (checkGC).
func (e *Engine) HoldReads(ts hlc.Timestamp) (*ReadHold, error) {
	if !ts.IsEmpty() {
		g := e.gcs
		g.mu.Lock()
		defer g.mu.Unlock()
		return e.holdLocked(ts), nil
	}
	t := e.commits
	if err := t.passGate(); err != nil {
		return nil, err
	}
	// Lock order: the GC state's mutex, then the commit tracker's (as
	// everywhere); the GC state is let go before the wait, which keeps
	// only the tracker's.
	e.gcs.mu.Lock()
	t.mu.Lock()
	defer t.mu.Unlock()
	ts, err := t.pickLocked()
	if err != nil {
		e.gcs.mu.Unlock()
		return nil, err
	}
	h := e.holdLocked(ts)
	e.gcs.mu.Unlock()
	// Commits that begin from here on take timestamps above the clock's
	// now, so only those open already can be at or below ts.
	for t.anyThroughLocked(ts) {
		t.cond.Wait()
	}
	return h, nil
}

// holdLocked registers a hold at ts; the caller holds e.gcs.mu.
func (e *Engine) holdLocked(ts hlc.Timestamp) *ReadHold {
	g := e.gcs
	id := g.nextID
	g.nextID++
	g.holds[id] = ts
	return &ReadHold{e: e, id: id, ts: ts}
}

// Timestamp returns the held timestamp.
func (h *ReadHold) Timestamp() hlc.Timestamp { return h.ts }

// Release ends the hold; releasing twice or a nil hold is harmless.
func (h *ReadHold) Release() {
	if h == nil || h.e == nil {
		return
	}
	g := h.e.gcs
	g.mu.Lock()
	delete(g.holds, h.id)
	g.mu.Unlock()
	h.e = nil
}

// OldestReadHold returns the oldest held read timestamp (ok false when
// none), for monitoring and tests.
func (e *Engine) OldestReadHold() (hlc.Timestamp, bool) {
	e.gcs.mu.Lock()
	defer e.gcs.mu.Unlock()
	return e.gcs.oldestHoldLocked()
}

// GCSpanStats describes a GC pass over one span (a shard).
type GCSpanStats struct {
	GCStats
	Threshold hlc.Timestamp // the span's threshold after the pass
}

// GCSpan collects the old versions of span, a shard of the table area,
// with a retention window of ttl (0: its table's, GCPolicy.TTL, else the
// engine's): it raises the span's threshold to the
// lower of now minus ttl and the oldest read hold (never lowering it),
// records it in the shard's threshold key, and removes the versions no
// read at or above it can see (GCVersions).
func (e *Engine) GCSpan(ctx context.Context, span Span, ttl time.Duration) (GCSpanStats, error) {
	var st GCSpanStats
	if err := span.validate(); err != nil {
		return st, err
	}
	if !isVersioned(span.Start) {
		return st, fmt.Errorf("storage: GC of %s: not a span of the table area", span)
	}
	if e.gc == nil || !e.gcAllowed() {
		return st, nil // GC is off (or this replica does not serve): every version is kept
	}
	if ttl <= 0 {
		ttl = e.gc.ttlOf(span.Start)
	}
	th, err := e.raiseGCThreshold(span, ttl)
	if err != nil {
		return st, err
	}
	st.Threshold = th
	if th.IsEmpty() {
		return st, nil
	}
	st.GCStats, err = e.GCVersions(ctx, span, th)
	return st, err
}

// CollectAndCompact collects each of spans (GCSpan with their tables'
// windows) and then runs compact, with no background GC pass in between:
// VACUUM and the balancer's compaction of a merged shard give back the
// space of what the collection deleted.
func (e *Engine) CollectAndCompact(ctx context.Context, spans []Span, compact func() error) (GCStats, error) {
	e.gcs.passes.Lock()
	defer e.gcs.passes.Unlock()
	var sum GCStats
	for _, span := range spans {
		st, err := e.GCSpan(ctx, span, 0)
		sum.Keys += st.Keys
		sum.Versions += st.Versions
		sum.Deleted += st.Deleted
		if err != nil {
			return sum, err
		}
	}
	return sum, compact()
}

// raiseGCThreshold picks and records the new threshold of span (see
// GCSpan) and returns it.
func (e *Engine) raiseGCThreshold(span Span, ttl time.Duration) (hlc.Timestamp, error) {
	g := e.gcs
	g.mu.Lock()
	locked := true
	defer func() {
		if locked {
			g.mu.Unlock()
		}
	}()
	cur := g.thresholdLocked(span)
	// Not the clock's now: a read that starts after this may read below
	// it, just under commits in flight (committracker.go).
	now, err := e.commits.readFloor()
	if err != nil {
		return hlc.Timestamp{}, err
	}
	if ttl < 0 {
		ttl = 0
	}
	want := hlc.Timestamp{}
	if now.WallTime > int64(ttl) {
		want = hlc.Timestamp{WallTime: now.WallTime - int64(ttl)}
	}
	if oldest, ok := g.oldestHoldLocked(); ok && oldest.Less(want) {
		want = oldest
	}
	if !cur.Less(want) {
		return cur, nil // never lowered
	}
	// The key is written before any version goes, under the mutex so that
	// two passes write their keys in the order of their thresholds.
	dropped := g.publishLocked(span, want)
	b := e.db.NewBatch()
	defer b.Close()
	if err := b.Set(bareKey(GCThresholdKey(span.Start)), encodeGCThreshold(want), nil); err != nil {
		return hlc.Timestamp{}, err
	}
	for _, s := range dropped {
		if err := b.Delete(bareKey(GCThresholdKey([]byte(s))), nil); err != nil {
			return hlc.Timestamp{}, err
		}
	}
	if e.replOn.Load() {
		// A Raft round, not under the mutex that every read's hold takes;
		// passes are serialized (gcs.passes), so the keys are still
		// written in the order of their thresholds. If it fails, the
		// threshold is raised in memory only (reads below it are refused
		// here) and nothing is deleted.
		g.mu.Unlock()
		locked = false
	}
	if err := e.commitGC(b); err != nil {
		return hlc.Timestamp{}, err
	}
	return want, nil
}

// VersionStats is what a span's versions take (VersionBytes).
type VersionStats struct {
	// OldBytes and OldCount are the versions no read at the newest state
	// sees: those a newer version shadows, and tombstones (a deleted row
	// is old even when the tombstone is its newest version). Bytes are
	// len(engine key) + len(value), as the live size counts rows.
	OldBytes, OldCount int64
	// Threshold is the span's GC threshold (zero when GC never ran).
	Threshold hlc.Timestamp
}

// VersionBytes scans span (of the table area) and returns the bytes its
// old versions take. It reads every version: sys.partitions calls it, not
// a hot path.
func (e *Engine) VersionBytes(ctx context.Context, span Span) (VersionStats, error) {
	st := VersionStats{Threshold: e.GCThresholdOf(span)}
	if err := span.validate(); err != nil {
		return st, err
	}
	lower, upper := engineBounds(span.Intersect(TablesSpan()))
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return st, err
	}
	defer it.Close()
	var prefix []byte
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		p := enginekey.Split(k)
		if p == len(k) {
			continue // bare: not a version
		}
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return st, err
		}
		newest := prefix == nil || !bytes.Equal(k[:p], prefix)
		if newest {
			prefix = append(prefix[:0], k[:p]...)
			if len(v) > 0 && v[0] == tagValue {
				continue // the live version
			}
		}
		st.OldBytes += int64(len(k) + len(v))
		st.OldCount++
	}
	return st, it.Error()
}

// removeLocked drops the in-memory entries inside span, its start
// included (CollectDropped, once the span's keys are gone); g.mu held.
func (g *gcState) removeLocked(span Span) {
	start := string(span.Start)
	i := sort.Search(len(g.entries), func(i int) bool { return g.entries[i].start >= start })
	j := i
	for j < len(g.entries) && g.entries[j].start < string(span.End) {
		j++
	}
	g.entries = append(g.entries[:i], g.entries[j:]...)
}
