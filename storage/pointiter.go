package storage

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Reusing Pebble iterators for point reads.
//
// Making a Pebble iterator and closing it (the read state's reference, the
// merging iterator over every memtable and level, each level's sstable
// iterator opened on the first seek) costs about as much as the prefix seek
// itself: BenchmarkPointIterReuse, one key per reader as a point SELECT
// reads, 3.0-4.0 µs fresh against 1.4-1.5 µs on a kept iterator. So the
// engine keeps the iterators of closed PointReaders over its latest state
// in a small pool and hands them to the next ones.
//
// A Pebble iterator's view is fixed when it is made: a later commit is not
// in it, and Pebble v2 has no way to refresh a DB iterator (SetOptions
// refreshes only an iterator over an indexed batch). So a kept iterator is
// reused only while its view is still the store's latest state. Every
// write storage makes into Pebble (commitPebble, ingest) counts itself in
// started before it can land and in finished once it has landed; an
// iterator is tagged with finished as read just before it is made, and is
// lent again only while started still equals that tag. Then every write
// that started by now had finished before the iterator was made, so every
// write that landed before the reader looks (the reader may have seen one
// land through another path: a transaction reading at the latest state
// once a lock record it waited for is gone) is in the iterator's view:
// exactly what a new iterator would see, whatever the write (commits, GC,
// intents and their resolution, lock records, range deletions of dropped
// tables) and whatever the read's timestamp. A write in flight makes every
// kept iterator look stale, never fresh.
//
// An engine whose Pebble others write into (PebbleForReplication: a
// cluster node's shard replicas apply Raft entries straight into it) cannot
// count those writes, so it never reuses: rawWriters turns the pool off for
// good.
//
// A kept iterator also holds its read state: memtables already flushed and
// sstables already compacted away stay in memory and on disk while it
// lives, and reads through it still search the old memtable (slower than
// the sstable it became, see idleflush.go). So the end of every flush,
// compaction and ingestion counts as a change too (lsm), the pool holds at
// most pointIterPoolMax iterators, and a sweeper closes idle ones that went
// stale within pointIterSweep.
const (
	pointIterPoolMax = 64
	pointIterSweep   = time.Second
)

// pointIterOptions are the options of every point read's iterator:
// SeekPrefixGE with every level's bloom filters (keyfilter.go).
var pointIterOptions = pebble.IterOptions{UseL6Filters: true}

// pointIters is an engine's pool of point-read iterators over its latest
// state.
type pointIters struct {
	// started and finished count writes into Pebble begun and landed
	// (or failed); lsm counts flushes, compactions and ingestions that
	// ended.
	started, finished atomic.Uint64
	lsm               atomic.Uint64
	// rawWriters is set once someone outside storage may write into
	// Pebble (PebbleForReplication): no reuse from then on.
	rawWriters atomic.Bool
	// made counts the iterators made (for tests and benchmarks).
	made atomic.Int64

	mu     sync.Mutex
	free   []keptIter
	closed bool
	quit   chan struct{}
	done   chan struct{}
}

// keptIter is an iterator with the counts (finished writes, lsm) read just
// before it was made, and the key buffer of the readers that used it (kept
// with it, to save each statement that allocation too).
type keptIter struct {
	it          *pebble.Iterator
	writes, lsm uint64
	kbuf        []byte
}

func newPointIters() *pointIters {
	return &pointIters{quit: make(chan struct{}), done: make(chan struct{})}
}

// watch makes the end of every flush, compaction and ingestion count as a
// change of the store's layout, keeping the listener's own callbacks.
func (p *pointIters) watch(l *pebble.EventListener) {
	flushEnd, compactionEnd, ingested := l.FlushEnd, l.CompactionEnd, l.TableIngested
	l.FlushEnd = func(info pebble.FlushInfo) {
		p.lsm.Add(1)
		if flushEnd != nil {
			flushEnd(info)
		}
	}
	l.CompactionEnd = func(info pebble.CompactionInfo) {
		p.lsm.Add(1)
		if compactionEnd != nil {
			compactionEnd(info)
		}
	}
	l.TableIngested = func(info pebble.TableIngestInfo) {
		p.lsm.Add(1)
		if ingested != nil {
			ingested(info)
		}
	}
}

// writing records a write into Pebble about to begin; call wrote once it
// has landed (or failed), before anything reports it done.
func (p *pointIters) writing() { p.started.Add(1) }

func (p *pointIters) wrote() { p.finished.Add(1) }

// get returns an iterator over db's latest state, a kept one if it is
// still current, with the counts to give back to put.
func (p *pointIters) get(db *pebble.DB) (keptIter, error) {
	// started, for the kept iterators (whose tags must equal it); and
	// finished, the tag of an iterator made here, read before it is made:
	// a write landing after this makes it look stale, never fresh.
	s, l := p.started.Load(), p.lsm.Load()
	w := p.finished.Load()
	var stale []*pebble.Iterator
	var k keptIter
	p.mu.Lock()
	for n := len(p.free); n > 0; n = len(p.free) {
		c := p.free[n-1]
		p.free[n-1] = keptIter{}
		p.free = p.free[:n-1]
		if c.writes == s && c.lsm == l {
			k = c
			break
		}
		stale = append(stale, c.it)
	}
	p.mu.Unlock()
	for _, it := range stale {
		_ = it.Close() // a kept iterator has only sought: nothing to report
	}
	if k.it != nil {
		return k, nil
	}
	it, err := db.NewIter(&pointIterOptions)
	if err != nil {
		return keptIter{}, err
	}
	p.made.Add(1)
	return keptIter{it: it, writes: w, lsm: l}, nil
}

// put gives back an iterator from get: kept if it is still current and
// there is room, closed otherwise.
func (p *pointIters) put(k keptIter) error {
	if k.it.Error() != nil || !p.current(k) {
		return k.it.Close()
	}
	p.mu.Lock()
	if p.closed || len(p.free) >= pointIterPoolMax {
		p.mu.Unlock()
		return k.it.Close()
	}
	p.free = append(p.free, k)
	p.mu.Unlock()
	return nil
}

// current reports whether k's view is still the store's latest state.
func (p *pointIters) current(k keptIter) bool {
	return !p.rawWriters.Load() && k.writes == p.started.Load() && k.lsm == p.lsm.Load()
}

// sweep closes, every pointIterSweep, the kept iterators that went stale,
// so that an idle engine does not hold old memtables and sstables; it
// ends when close is called.
func (p *pointIters) sweep() {
	defer close(p.done)
	t := time.NewTicker(pointIterSweep)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
		}
		p.dropStale()
	}
}

// dropStale closes the kept iterators that are no longer current.
func (p *pointIters) dropStale() {
	var stale []*pebble.Iterator
	p.mu.Lock()
	kept := p.free[:0]
	for _, k := range p.free {
		if p.current(k) {
			kept = append(kept, k)
		} else {
			stale = append(stale, k.it)
		}
	}
	clear(p.free[len(kept):])
	p.free = kept
	p.mu.Unlock()
	for _, it := range stale {
		_ = it.Close()
	}
}

// close stops the sweeper and closes every kept iterator; iterators given
// back later are closed at once. Call it before Pebble's Close, which
// reports iterators left open.
func (p *pointIters) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	free := p.free
	p.free = nil
	p.mu.Unlock()
	close(p.quit)
	<-p.done
	for _, k := range free {
		_ = k.it.Close()
	}
}

// commitPebble commits a Pebble batch of the engine's and counts the write
// for the point-read iterators' reuse. Every batch storage writes into its
// Pebble goes through here (or through ingest, which counts too):
// TestEveryPebbleWriteCounted looks for others.
func (e *Engine) commitPebble(b *pebble.Batch, opts *pebble.WriteOptions) error {
	// Counted even if it fails: one count too many only costs a new
	// iterator.
	e.points.writing()
	defer e.points.wrote()
	return b.Commit(opts)
}
