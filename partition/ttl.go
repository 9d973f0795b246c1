package partition

import (
	"context"
	"errors"
	"github.com/pivotdb/pivotdb/panics"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/storage"
)

// The TTL runner (design.md §8) visits, every interval, each shard of each
// table that has a TTL, and asks the SQL layer to erase the shard's expired
// rows (an EraseFunc: it decodes rows and deletes them through the
// transactional write path, which this package knows nothing of). It runs
// the shards one after another in one goroutine, so that erasing never
// takes more than one core from the foreground load, and records per shard
// when it last ran and how many rows it erased (ttl_last_run and
// ttl_rows_erased of sys.partitions). The erased rows' deletes commit
// through Manager.Commit like any write, so shard statistics shrink and the
// balancer may merge the shards.
//
// Like the reads and writes counters, the TTL counters live in memory
// (shardRuntime): they restart with the process, and a shard made by a
// split or merge starts without a run.

// DefaultTTLInterval is the time between TTL runs (--ttl-run-interval).
const DefaultTTLInterval = time.Minute

// TTLTablesFunc lists the tables that have a TTL now (read from the
// catalog at every run, so that ALTER ... SET / RESET (TTL) applies at the
// next run).
type TTLTablesFunc func() []uint64

// EraseFunc erases the expired rows of table in span, a shard's span,
// and returns how many it erased. It must stop early, returning ctx's
// error, when ctx is cancelled.
type EraseFunc func(ctx context.Context, table uint64, span storage.Span) (int64, error)

// TTLOptions configure a TTLRunner.
type TTLOptions struct {
	// Interval is the time between runs; zero or negative means
	// DefaultTTLInterval.
	Interval time.Duration
	// Now is the clock of ttl_last_run; nil means time.Now.
	Now func() time.Time
	// Logger receives Warn lines for failed erasures; nil discards them.
	Logger *slog.Logger
}

// TTLRunner erases expired rows in the background; see the top of the
// file.
type TTLRunner struct {
	m      *Manager
	tables TTLTablesFunc
	erase  EraseFunc
	opts   TTLOptions
	log    *slog.Logger

	mu     sync.Mutex // Serialises runs.
	ctx    context.Context
	cancel context.CancelFunc

	startOnce, stopOnce sync.Once
	done                chan struct{}
}

// NewTTLRunner returns a runner of m's tables; Start runs it in the
// background, or call Run.
func NewTTLRunner(m *Manager, tables TTLTablesFunc, erase EraseFunc, opts TTLOptions) *TTLRunner {
	if opts.Interval <= 0 {
		opts.Interval = DefaultTTLInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &TTLRunner{m: m, tables: tables, erase: erase, opts: opts, log: log, ctx: ctx, cancel: cancel,
		done: make(chan struct{})}
}

// Start runs the runner every Interval in a goroutine until Stop.
func (r *TTLRunner) Start() {
	r.startOnce.Do(func() {
		go func() {
			defer close(r.done)
			t := time.NewTicker(r.opts.Interval)
			defer t.Stop()
			for {
				select {
				case <-r.ctx.Done():
					return
				case <-t.C:
					// Each shard's erase recovers its own panics
					// (eraseRecovered); this catches the rest of the run,
					// so that the next one still comes.
					func() {
						defer panics.Recover("partition: TTL run", nil)
						r.Run()
					}()
				}
			}
		}()
	})
}

// Stop cancels a run in progress (its current batch rolls back or
// commits, never half) and waits for it. The runner cannot be restarted.
func (r *TTLRunner) Stop() {
	r.stopOnce.Do(func() {
		r.cancel()
		started := true
		r.startOnce.Do(func() { started = false; close(r.done) })
		if started {
			<-r.done
		}
		r.mu.Lock() // Wait for a direct Run too.
		r.mu.Unlock()
	})
}

// Run visits every shard of every TTL table once and returns the rows
// erased. Errors of one shard are logged and do not stop the others; a
// table dropped meanwhile is skipped.
func (r *TTLRunner) Run() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var total int64
tables:
	for _, id := range r.tables() {
		sm := r.m.Map(id)
		if sm == nil {
			continue
		}
		for _, sh := range sm.shards {
			if r.ctx.Err() != nil {
				return total
			}
			n, err := r.eraseRecovered(id, sh.Span)
			total += n
			sh.rt.ttlErased.Add(n)
			switch {
			case err == nil:
				sh.rt.ttlLastRun.Store(r.opts.Now().UnixMicro())
			case errors.Is(err, ErrTableNotFound):
				continue tables
			case r.ctx.Err() != nil:
				return total
			default:
				r.log.Warn("partition: TTL run of a shard failed", "table", id, "shard", sh.ID, "erased", n, "err", err)
			}
		}
	}
	return total
}

// eraseRecovered runs the erase function on one shard. A panic is
// recovered, logged with its stack and counted (package panics), and fails
// this shard's run only: the erase commits in one transaction or rolls it
// back (sql's deleteExpired defers the rollback), so nothing is half done.
func (r *TTLRunner) eraseRecovered(id uint64, span storage.Span) (n int64, err error) {
	defer panics.Recover("partition: TTL runner", &err)
	panics.Inject("partition.ttl.erase")
	return r.erase(r.ctx, id, span)
}

// TTLLastRun returns when the TTL runner last finished a run of the shard;
// ok is false if it never did.
func (s Shard) TTLLastRun() (at time.Time, ok bool) {
	if s.rt == nil {
		return time.Time{}, false
	}
	us := s.rt.ttlLastRun.Load()
	if us == 0 {
		return time.Time{}, false
	}
	return time.UnixMicro(us).UTC(), true
}

// TTLRowsErased returns the rows the TTL runner erased from the shard since
// it was created or the process started.
func (s Shard) TTLRowsErased() int64 {
	if s.rt == nil {
		return 0
	}
	return s.rt.ttlErased.Load()
}
