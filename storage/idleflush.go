package storage

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Flushing a memtable that stopped receiving writes.
//
// Reads cost more in the memtable than in sstables, and most where they
// meet old versions:
//
//   - a skiplist has no bloom filter, so every point read seeks it from the
//     top (tens of key comparisons in a memtable of 100k rows);
//   - a scan leaves a row with older versions by a skiplist seek or by
//     stepping over each version, where a columnar sstable block skips them
//     with its prefix bitmap (BenchmarkEngineScanVersions: 1,000 rows with
//     10 old versions each cost about 6x as much in the memtable as flushed
//     into one L0 file).
//
// Pebble flushes a memtable only when it is full (64 MB), which after a
// burst of writes may not happen for hours: the rows and versions the burst
// wrote stay in the memtable, and every later read pays for them (`make
// bench`: the range scan and correlated EXISTS rows, which run after the
// UPSERT rows, read kv at a third of their speed on a quiet server).
//
// So a background loop looks at the memtables every idleFlushTick and
// flushes them when nothing was written since the previous look (the WAL
// took no bytes) and they hold at least idleFlushMinBytes: the cost is one
// flush per write burst, of a memtable that would have been flushed anyway,
// plus one L0 file. The minimum keeps a trickle of small writes with pauses
// between them from making a file per pause. A steady write load never
// looks idle and keeps Pebble's own policy. A restart after an idle flush
// also replays less of the WAL.
//
// Options.IdleFlushTick sets the tick (negative: off, for benchmarks that
// measure reads of a memtable).
const (
	idleFlushTick     = time.Second
	idleFlushMinBytes = 1 << 20
)

// idleFlusher is the loop; stop ends it before the database closes.
type idleFlusher struct {
	db   *pebble.DB
	log  Logger // nil: errors dropped (the next tick retries)
	tick time.Duration

	stopOnce sync.Once
	quit     chan struct{}
	done     chan struct{}

	// walBytes is the WAL's logical size at the previous look.
	walBytes uint64
	// pending is closed when the last flush started here is done; no
	// other starts before (the memtables queued for it still count as
	// unflushed).
	pending <-chan struct{}
	// flushes counts the flushes started, for tests.
	flushes atomic.Int64
}

// startIdleFlusher starts the loop; nil when tick < 0 (off).
func startIdleFlusher(db *pebble.DB, log Logger, tick time.Duration) *idleFlusher {
	if tick < 0 {
		return nil
	}
	if tick == 0 {
		tick = idleFlushTick
	}
	f := &idleFlusher{db: db, log: log, tick: tick, quit: make(chan struct{}), done: make(chan struct{})}
	go f.run()
	return f
}

func (f *idleFlusher) run() {
	defer close(f.done)
	t := time.NewTicker(f.tick)
	defer t.Stop()
	for {
		select {
		case <-f.quit:
			return
		case <-t.C:
			f.look()
		}
	}
}

// look flushes the memtables if they are idle and large enough; it
// reports whether it started a flush.
func (f *idleFlusher) look() bool {
	if f.pending != nil {
		select {
		case <-f.pending:
			f.pending = nil
		default:
			return false
		}
	}
	m := f.db.Metrics()
	// WAL.BytesIn counts every byte committed; WAL.Size is the part of
	// the WAL whose memtables are not flushed yet (MemTable.Size is their
	// capacity, not their use).
	wal := m.WAL.BytesIn
	idle := wal == f.walBytes
	f.walBytes = wal
	if !idle || m.WAL.Size < idleFlushMinBytes {
		return false
	}
	done, err := f.db.AsyncFlush()
	if err != nil {
		if f.log != nil {
			f.log.Errorf("storage: idle memtable flush: %v", err)
		}
		return false
	}
	f.pending = done
	f.flushes.Add(1)
	return true
}

// stop ends the loop and waits for it (AsyncFlush on a closed Pebble
// panics). Stopping twice is harmless.
func (f *idleFlusher) stop() {
	if f == nil {
		return
	}
	f.stopOnce.Do(func() { close(f.quit) })
	<-f.done
}
