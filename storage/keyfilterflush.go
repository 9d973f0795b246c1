package storage

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Prompt key filters for new writes (KEY_BLOOM_FILTER, design §9).
//
// A key filter is written with an sstable (keyfilter.go), so a row gets one
// only when the memtable holding it is flushed. Pebble flushes a memtable
// when it is full (DefaultMemTableSizeBytes, 64 MB), which under a light
// write load takes minutes: a table created with KEY_BLOOM_FILTER = ENABLED
// showed no filter for 35 s and 47 MB of WAL, while ALTER ... ENABLED gives
// the table's existing rows one within seconds (CompactTable flushes and
// rewrites them). Lookups are not wrong meanwhile (a memtable is searched
// in memory and needs no filter), but the filter the table was created
// with does not exist, sys.partitions shows none, and a restart replays the
// rows from the WAL first.
//
// So a committed batch holding keys of a table with the filter on arms a
// timer, and KeyFilterFlushDelay after the first such commit since the last
// flush the engine flushes its memtables: every row of such a table reaches
// an sstable with its filter within about that delay (plus the flush
// itself). Commits while the timer runs do not re-arm it, so a steady
// stream of writes to such tables flushes once per delay, which bounds the
// extra L0 files to one per delay; writes to tables without the filter
// never flush early.

// DefaultKeyFilterFlushDelay is Options.KeyFilterFlushDelay's default.
const DefaultKeyFilterFlushDelay = time.Second

// filterFlusher flushes the memtables a delay after writes of tables with
// a key filter.
type filterFlusher struct {
	db    *pebble.DB
	delay time.Duration
	log   Logger // nil: flush errors are dropped (the next flush retries)

	// armed is set from the first noted commit until the flush it
	// schedules starts; commits meanwhile need nothing more.
	armed atomic.Bool

	mu      sync.Mutex // Guards timer and closed against stop.
	timer   *time.Timer
	closed  bool
	running sync.WaitGroup // flushes being started, which stop waits for

	// flushes counts the flushes started, for tests.
	flushes atomic.Int64
}

// noted is called after a batch with keys of a filtered table committed.
func (f *filterFlusher) noted() {
	if f == nil || f.armed.Load() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.armed.Load() {
		return
	}
	f.armed.Store(true)
	f.timer = time.AfterFunc(f.delay, f.flush)
}

// flush starts a flush of the memtables without waiting for it.
func (f *filterFlusher) flush() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.running.Add(1)
	// Commits from now on arm the next flush: those that land before the
	// memtable is switched are flushed twice over, never not at all.
	f.armed.Store(false)
	f.mu.Unlock()
	defer f.running.Done()
	f.flushes.Add(1)
	if _, err := f.db.AsyncFlush(); err != nil && f.log != nil {
		f.log.Errorf("storage: key filter flush: %v", err)
	}
}

// stop cancels a pending flush and waits for one being started, so that
// the database can be closed (AsyncFlush on a closed Pebble panics).
func (f *filterFlusher) stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.closed = true
	if f.timer != nil {
		f.timer.Stop()
	}
	f.mu.Unlock()
	f.running.Wait()
}
