package sql

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Rows of dropped tables, kept for historical reads (issue 16).
//
// A schema change that drops a key space — DROP TABLE, TRUNCATE (which
// replaces the table by an empty one under a new id), a rewrite (ALTER
// COLUMN TYPE, ADD PRIMARY KEY: a new table under a new id), DROP INDEX,
// REINDEX — drops its shard map when it commits but keeps its rows, as
// CockroachDB does: a read AS OF SYSTEM TIME before the change binds
// against the catalog of its time (which names the old id) and reads them
// there. A SCHEMA CHANGE GC job, recorded in the change's own batch so it
// exists exactly when the drop does, removes them once the table's
// GC_TTL (else --gc-ttl), counted from the drop's commit timestamp, has
// passed and no read holds an earlier time (storage.CollectDropped); from
// then on such a read fails with the GC-threshold error (XXUUU), as one
// below any shard's threshold does.
//
// TRUNCATE keeps its old rows by the new id it already gave the table:
// the old key space stays as it was, so TRUNCATE still costs the same
// whatever the table holds (a range deletion later, by the job). Writing a
// tombstone per row instead would make TRUNCATE read and write every row,
// and leave tombstones that GC must remove again, for nothing a new id
// does not give. BenchmarkTruncateKeep (PIVOTDB_TRUNCATE_ROWS=1000000, 2
// shared cores): TRUNCATE 0.38 ms, a tombstone per row (DELETE FROM t)
// 67 s; at 100,000 rows 0.21-0.27 ms against 1.1-1.2 s.
//
// The job is resumable (jobs.Record.Resumable): Open picks up the running
// ones (resumeDropGC) before it removes orphaned key spaces (dropOrphans
// leaves the data of those) and starts the loop (runDropGC) that wakes
// for the next one due. sys.jobs shows it running with running_status
// "waiting for GC TTL" and next_run when it will act; rows_done and
// rows_total count its key spaces (tables and indexes).
//
// Removed at once, as before, with no job: temporary tables (private to a
// session that is gone or dropping them), DROP DATABASE's tables (no
// session can name them any more), creations a transaction rolled back,
// everything when GC is off (the engine has no retention window), and
// any drop while the disk is below its reserve (a drop is how a user
// frees space on a full disk; the statement says so with a WARNING).

// gcSpace is one key space a GC job removes.
type gcSpace struct {
	ID   uint64 `json:"id"`
	Name string `json:"name"`
	// TTL is its table's retention window at the drop, in nanoseconds.
	TTL  int64 `json:"ttl_ns"`
	Done bool  `json:"done,omitempty"`
}

// gcPayload is a SCHEMA CHANGE GC job's state (jobs.Record.Payload).
type gcPayload struct {
	// The drop's commit timestamp (until the commit returns: the clock's
	// time before it, a lower bound).
	Wall    int64     `json:"dropped_wall"`
	Logical int32     `json:"dropped_logical"`
	Spaces  []gcSpace `json:"spaces"`
}

func (p *gcPayload) at() hlc.Timestamp { return hlc.Timestamp{WallTime: p.Wall, Logical: p.Logical} }

// done counts the key spaces removed.
func (p *gcPayload) done() int64 {
	var n int64
	for _, sp := range p.Spaces {
		if sp.Done {
			n++
		}
	}
	return n
}

// nextDue is when the first key space not removed yet is due.
func (p *gcPayload) nextDue() time.Time {
	var next time.Time
	for _, sp := range p.Spaces {
		if due := time.Unix(0, p.Wall+sp.TTL); !sp.Done && (next.IsZero() || due.Before(next)) {
			next = due
		}
	}
	return next
}

// gcTask is one GC job in memory; its payload is the loop's alone once
// the job started.
type gcTask struct {
	job *jobs.Job
	p   gcPayload
}

// gcWaitingTTL is a GC job's running_status before its time.
const gcWaitingTTL = "waiting for GC TTL"

// dropGC is the engine's state of dropped key spaces.
type dropGC struct {
	e  *Engine
	mu sync.Mutex
	// kept are the ids whose rows a read before the drop may still read.
	kept map[uint64]bool
	// gone are ids whose rows were removed, with their drop's timestamp
	// (the error's threshold), from the finished jobs Open saw and those
	// that finished since; at most goneMax.
	gone  map[uint64]hlc.Timestamp
	tasks []*gcTask
	wake  chan struct{}
	stop  context.CancelFunc
	done  sync.WaitGroup
}

const goneMax = 4096

func newDropGC(e *Engine) *dropGC {
	return &dropGC{e: e, kept: map[uint64]bool{}, gone: map[uint64]hlc.Timestamp{}, wake: make(chan struct{}, 1)}
}

// keepsDropped returns the retention window of t's rows once dropped, and
// false when they go at once (see the top of the file). disk is true when
// that is because the disk is below its reserve.
func (e *Engine) keepsDropped(t *catalog.Table) (ttl time.Duration, keep, disk bool) {
	def, on := e.storage.DefaultTTL()
	if !on || bind.IsTempName(t.Name) {
		return 0, false, false
	}
	// (AvailBytes 0: statfs failed, which is not a full disk.)
	if ds := e.storage.DiskSpace(); ds.Enabled && (ds.Refusing || ds.AvailBytes > 0 && ds.AvailBytes < ds.ReserveBytes) {
		return 0, false, true
	}
	if ttl, ok := t.Settings.GCTTLDuration(); ok {
		return ttl, true, false
	}
	return def, true, false
}

// diskFullDropWarning tells the client that a drop removed its rows at once.
func (s *Session) diskFullDropWarning() {
	s.notice("WARNING", sqlerr.DiskFull, "the disk is below its reserve: the dropped rows are removed now, "+
		"not kept for AS OF SYSTEM TIME reads until GC_TTL passes")
}

// keepDroppedTable drops the shard maps of t and its indexes in the DDL
// batch and lists their key spaces for the statement's GC job (ddlNow); ok
// is false when they must go at once.
func (s *Session) keepDroppedTable(pch *partition.Change, b *storage.Batch, t *catalog.Table) (ok bool, err error) {
	ttl, keep, disk := s.e.keepsDropped(t)
	if !keep {
		if disk {
			s.diskFullDropWarning()
		}
		return false, nil
	}
	for _, ix := range t.Indexes {
		if err := pch.Drop(s.e.meta.With(b), ix.ID); err != nil {
			return false, err
		}
		s.gcDrops = append(s.gcDrops, gcSpace{ID: ix.ID, Name: ix.Name, TTL: int64(ttl)})
	}
	if err := pch.Drop(s.e.meta.With(b), t.ID); err != nil {
		return false, err
	}
	s.gcDrops = append(s.gcDrops, gcSpace{ID: t.ID, Name: strings.TrimPrefix(t.Name, s.tempPrefix), TTL: int64(ttl)})
	return true, nil
}

// keepDroppedIndex is keepDroppedTable for an index of a committed table.
func (s *Session) keepDroppedIndex(pch *partition.Change, b *storage.Batch, id uint64) (ok bool, err error) {
	t, ix, found := s.e.catalog.Snapshot().IndexByID(id)
	if !found {
		return false, nil // created by this very change: nothing to read
	}
	ttl, keep, disk := s.e.keepsDropped(t)
	if !keep {
		if disk {
			s.diskFullDropWarning()
		}
		return false, nil
	}
	if err := pch.Drop(s.e.meta.With(b), id); err != nil {
		return false, err
	}
	s.gcDrops = append(s.gcDrops, gcSpace{ID: id, Name: ix.Name, TTL: int64(ttl)})
	return true, nil
}

// blockDrops lists, at a transaction block's commit, the key spaces its
// schema changes dropped that the committed catalog names (the others were
// created by the block and go at once), with their windows.
func (s *Session) blockDrops(d *txnDDL) []gcSpace {
	snap := s.e.catalog.Snapshot()
	var out []gcSpace
	seen := map[uint64]bool{}
	warned := false
	for _, id := range d.droppedSpaces {
		if seen[id] || slices.Contains(d.createdSpaces, id) {
			continue
		}
		seen[id] = true
		t, ok := snap.TableByID(id)
		name := ""
		if ok {
			name = t.Name
		} else {
			var ix *catalog.Table
			if t, ix, ok = snap.IndexByID(id); !ok {
				continue
			}
			name = ix.Name
		}
		ttl, keep, disk := s.e.keepsDropped(t)
		if !keep {
			if disk && !warned {
				warned = true
				s.diskFullDropWarning()
			}
			continue
		}
		out = append(out, gcSpace{ID: id, Name: strings.TrimPrefix(name, s.tempPrefix), TTL: int64(ttl)})
	}
	return out
}

// prepareDropGC writes the GC job of spaces into b, the batch of the
// schema change that drops them (nil when there are none). Its drop time
// is the clock's now until the commit gives the exact one (keep).
func (e *Engine) prepareDropGC(spaces []gcSpace, text, user string, b *storage.Batch) (*gcTask, error) {
	if len(spaces) == 0 {
		return nil, nil
	}
	now, err := e.storage.Clock().Now()
	if err != nil {
		return nil, err
	}
	t := &gcTask{p: gcPayload{Wall: now.WallTime, Logical: now.Logical, Spaces: spaces}}
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	t.job, err = e.jobs.Prepare(jobs.KindSchemaChangeGC, "GC for "+text, user, t.p, gcWaitingTTL, t.p.nextDue(),
		int64(len(spaces)))
	if err != nil {
		return nil, err
	}
	return t, t.job.Put(e.meta.With(b))
}

// keep makes the rows of t's key spaces readable for reads before ts,
// the drop's commit timestamp. It runs in the batch's OnCommitted, before
// the shard maps go from memory.
func (d *dropGC) keep(t *gcTask, ts hlc.Timestamp) {
	if t == nil {
		return
	}
	t.p.Wall, t.p.Logical = ts.WallTime, ts.Logical
	d.mu.Lock()
	for _, sp := range t.p.Spaces {
		d.kept[sp.ID] = true
	}
	d.mu.Unlock()
}

// start registers a committed drop's job (sys.jobs) with its exact drop
// time, and wakes the loop.
func (d *dropGC) start(t *gcTask) {
	if t == nil {
		return
	}
	d.e.jobs.Add(t.job)
	// Unsynced: a crash before it lands leaves the clock's time before
	// the commit, a few microseconds early, in the record.
	if err := t.job.Update(t.p, gcWaitingTTL, t.p.nextDue(), 0, int64(len(t.p.Spaces)), false); err != nil {
		d.log().Warn("sql: cannot update a GC job's record", "job", t.job.ID(), "err", err)
	}
	d.mu.Lock()
	d.tasks = append(d.tasks, t)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// now is the engine clock's time: drop times are its timestamps, which
// may run ahead of the system clock (after a restart, up to its persisted
// high-water mark).
func (d *dropGC) now() time.Time {
	ts, err := d.e.storage.Clock().Now()
	if err != nil {
		return d.e.opts.Now()
	}
	return time.Unix(0, ts.WallTime)
}

func (d *dropGC) log() *slog.Logger {
	if d.e.opts.Events != nil {
		return d.e.opts.Events
	}
	return slog.Default()
}

// pending reports whether id's rows wait for a GC job (dropOrphans and a
// block's commit drop only its shard map).
func (d *dropGC) pending(id uint64) bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.tasks {
		for _, sp := range t.p.Spaces {
			if sp.ID == id && !sp.Done {
				return true
			}
		}
	}
	return d.kept[id]
}

// check is the historical read's test of a table or index with no shard
// map (one the catalog of its time names): nil while its rows are kept,
// the GC-threshold error once they are gone.
func (d *dropGC) check(id uint64, ts hlc.Timestamp) error {
	d.mu.Lock()
	kept := d.kept[id]
	at, gone := d.gone[id]
	d.mu.Unlock()
	switch {
	case kept:
		return nil
	case gone:
		return &storage.BelowGCThresholdError{ReadTimestamp: ts, Threshold: at}
	}
	// Removed by a job this server no longer remembers, or at once (see
	// the top of the file).
	return &sqlerr.Error{Code: "XXUUU",
		Message: fmt.Sprintf("AS OF SYSTEM TIME %s: the rows of a table or index dropped, truncated or rewritten since then were removed", ts),
		Hint: "Read at a time after the change. Dropped rows are kept for the table's GC_TTL (else serve --gc-ttl) " +
			"after the drop; temporary tables, DROP DATABASE and drops on a full disk remove them at once."}
}

// forget is a space's removal, seen by reads (storage.CollectDropped's
// forget).
func (d *dropGC) forget(id uint64, at hlc.Timestamp) {
	d.mu.Lock()
	delete(d.kept, id)
	if len(d.gone) >= goneMax {
		clear(d.gone)
	}
	d.gone[id] = at
	d.mu.Unlock()
}

// resume picks up the GC jobs that were running when the server stopped
// (Open, before dropOrphans): spaces not due yet stay readable; those due
// are not (their removal may have landed before the stop), and the loop
// removes them at once.
func (d *dropGC) resume() error {
	now := d.now()
	for _, r := range d.e.jobs.List() {
		if r.Kind != jobs.KindSchemaChangeGC || r.Status != jobs.Succeeded {
			continue
		}
		var p gcPayload
		if json.Unmarshal(r.Payload, &p) == nil {
			for _, sp := range p.Spaces {
				d.gone[sp.ID] = p.at()
			}
		}
	}
	for _, j := range d.e.jobs.Resumable(jobs.KindSchemaChangeGC) {
		t := &gcTask{job: j}
		if err := json.Unmarshal(j.Payload(), &t.p); err != nil {
			return fmt.Errorf("sql: GC job %d: %w", j.ID(), err)
		}
		for _, sp := range t.p.Spaces {
			if !sp.Done && now.Before(time.Unix(0, t.p.Wall+sp.TTL)) {
				d.kept[sp.ID] = true
			}
		}
		d.tasks = append(d.tasks, t)
	}
	return nil
}

// run is the loop that removes dropped key spaces when they are due.
func (d *dropGC) run() {
	ctx, cancel := context.WithCancel(context.Background())
	d.stop = cancel
	d.done.Add(1)
	go func() {
		defer d.done.Done()
		for {
			wait := d.collect(ctx)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-d.wake:
				t.Stop()
			case <-t.C:
			}
		}
	}()
}

// close stops the loop, waiting for a removal under way.
func (d *dropGC) close() {
	if d != nil && d.stop != nil {
		d.stop()
		d.done.Wait()
	}
}

// Times the loop waits: at most gcIdle with nothing due; gcRetryHold
// while a read holds a time before a due drop; gcRetryErr after an error.
const (
	gcIdle      = time.Minute
	gcRetryHold = time.Second
	gcRetryErr  = 5 * time.Second
)

// collect removes the key spaces that are due and returns how long to
// wait for the next.
func (d *dropGC) collect(ctx context.Context) time.Duration {
	d.mu.Lock()
	tasks := slices.Clone(d.tasks)
	d.mu.Unlock()
	wait := gcIdle
	for _, t := range tasks {
		status, next := gcWaitingTTL, time.Time{}
		changed := false
		at := t.p.at()
		for i := range t.p.Spaces {
			sp := &t.p.Spaces[i]
			if sp.Done {
				continue
			}
			now := d.now()
			due := time.Unix(0, t.p.Wall+sp.TTL)
			if now.Before(due) {
				wait = min(wait, due.Sub(now))
				if next.IsZero() || due.Before(next) {
					next = due
				}
				continue
			}
			id := sp.ID
			ok, err := d.e.storage.CollectDropped(ctx, storage.TableSpan(id), at, time.Duration(sp.TTL),
				func() { d.forget(id, at) })
			switch {
			case ctx.Err() != nil:
				return wait
			case err != nil:
				d.log().Warn("sql: removing a dropped table's rows failed; retrying", "job", t.job.ID(), "id", id, "err", err)
				status, next = "retrying after an error: "+err.Error(), now.Add(gcRetryErr)
				wait = min(wait, gcRetryErr)
			case !ok:
				// A read at a time before the drop is open, or this node
				// does not serve.
				status, next = "waiting for reads at times before the drop to end", now.Add(gcRetryHold)
				wait = min(wait, gcRetryHold)
			default:
				d.mu.Lock() // pending reads the payload
				sp.Done, changed = true, true
				d.mu.Unlock()
			}
		}
		if t.p.done() == int64(len(t.p.Spaces)) {
			_ = t.job.Update(t.p, "", time.Time{}, t.p.done(), int64(len(t.p.Spaces)), false)
			t.job.Finish(nil)
			d.mu.Lock()
			d.tasks = slices.DeleteFunc(d.tasks, func(x *gcTask) bool { return x == t })
			d.mu.Unlock()
			d.log().Info("removed the rows of dropped tables and indexes", "job", t.job.ID(), "spaces", len(t.p.Spaces))
			continue
		}
		if rec := t.job.Record(); changed || rec.RunningStatus != status || !rec.NextRun.Equal(next.UTC()) {
			if err := t.job.Update(t.p, status, next, t.p.done(), int64(len(t.p.Spaces)), changed); err != nil {
				d.log().Warn("sql: cannot update a GC job's record", "job", t.job.ID(), "err", err)
			}
		}
	}
	return max(wait, 10*time.Millisecond)
}
