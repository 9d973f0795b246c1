package jobs

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
)

// Kinds of jobs (sys.jobs' job_type), as CockroachDB names its own where
// they match.
const (
	KindCreateIndex = "CREATE INDEX"
	KindReindex     = "REINDEX"
	KindReshard     = "RESHARD"
	KindAlterTable  = "ALTER TABLE"
	KindCopy        = "COPY"
	// KindSchemaChangeGC removes the rows of tables and indexes a schema
	// change dropped (DROP TABLE, TRUNCATE, a rewrite, DROP INDEX) once
	// their GC_TTL has passed (sql/dropgc.go). It is resumable: it waits
	// for its time across restarts.
	KindSchemaChangeGC = "SCHEMA CHANGE GC"
)

// Status is where a job stands (sys.jobs' status).
type Status string

const (
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
	Canceled  Status = "canceled"
)

// Retention: finished jobs older than this are deleted when the server
// starts (CockroachDB keeps 14 days too), and at most MaxFinished are kept
// (the oldest go first).
const (
	Retention   = 14 * 24 * time.Hour
	MaxFinished = 1000
)

// saveEvery is how often a running job's progress is written to the
// metadata store at most; sys.jobs shows it live from memory.
const saveEvery = time.Second

// ErrCanceled is the cause of a job's context cancelled by CANCEL JOB.
var ErrCanceled = errors.New("job canceled by CANCEL JOB")

// interruptedError is the error of a job that was running when the server
// stopped.
const interruptedError = "interrupted: the server stopped while the job was running; nothing of it took effect, run its statement again"

// Record is one job as sys.jobs shows it and as it is stored.
type Record struct {
	ID          int64     `json:"id"`
	Kind        string    `json:"kind"`
	Description string    `json:"description"`
	User        string    `json:"user"`
	Status      Status    `json:"status"`
	Created     time.Time `json:"created"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished,omitzero"`
	Modified    time.Time `json:"modified"`
	// RowsDone and RowsTotal are the job's progress in rows; RowsTotal is
	// -1 while unknown (a COPY from a client's stream).
	RowsDone  int64  `json:"rows_done"`
	RowsTotal int64  `json:"rows_total"`
	Error     string `json:"error,omitempty"`
	// Cancelable: CANCEL JOB can stop the job (only while it runs; not
	// persisted: after a restart nothing runs).
	Cancelable bool `json:"-"`
	// Resumable jobs are not tied to a statement: one recorded as running
	// is still running after a restart, and its owner picks it up again
	// (Registry.Resumable). Payload is the owner's state, opaque here.
	Resumable bool            `json:"resumable,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	// RunningStatus says what a running job is doing or waiting for
	// (CockroachDB's running_status); NextRun is when it will next act
	// (zero: not waiting for a time).
	RunningStatus string    `json:"running_status,omitempty"`
	NextRun       time.Time `json:"next_run,omitzero"`
}

// Fraction is the share of the job done, 0 to 1; ok is false when it is
// not known (a running job whose total is unknown).
func (r Record) Fraction() (f float64, ok bool) {
	switch {
	case r.Status == Succeeded:
		return 1, true
	case r.RowsTotal > 0:
		return min(float64(r.RowsDone)/float64(r.RowsTotal), 1), true
	case r.RowsTotal == 0:
		return 0, true
	}
	return 0, false
}

// Registry is the server's jobs: those running, and those finished within
// the retention, persisted in the metadata store (namespace meta.Jobs) so
// that a restart shows them. It is safe for concurrent use.
type Registry struct {
	store *meta.Store
	now   func() time.Time
	log   *slog.Logger

	mu   sync.Mutex
	next int64
	jobs map[int64]*Job
}

// Open loads the jobs of store. Jobs recorded as running were interrupted
// by a stop or crash of the server: they are marked failed with an error
// that says so. now is the clock (nil: time.Now); log reports records that
// cannot be written (the jobs themselves carry on).
func Open(store *meta.Store, now func() time.Time, log *slog.Logger) (*Registry, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Registry{store: store, now: now, log: log, next: 1, jobs: map[int64]*Job{}}
	var recs []Record
	err := store.Scan(storage.Span{Start: meta.Jobs, End: storage.PrefixEnd(meta.Jobs)}, func(key, value []byte) error {
		var rec Record
		if err := json.Unmarshal(value, &rec); err != nil {
			return fmt.Errorf("jobs: record %s: %w", storage.FormatKey(key), err)
		}
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	b := store.NewBatch()
	defer b.Close()
	at := now().UTC()
	for _, rec := range recs {
		r.next = max(r.next, rec.ID+1)
		if rec.Status == Running && !rec.Resumable {
			rec.Status, rec.Error, rec.Finished, rec.Modified = Failed, interruptedError, at, at
			if err := put(b, rec); err != nil {
				return nil, err
			}
		}
		if rec.Status != Running && at.Sub(rec.Finished) > Retention {
			if err := b.Delete(key(rec.ID)); err != nil {
				return nil, err
			}
			continue
		}
		r.jobs[rec.ID] = &Job{r: r, rec: rec}
	}
	if err := b.Commit(); err != nil {
		return nil, err
	}
	return r, nil
}

// key is a job's record key: meta.Jobs, then the id big-endian.
func key(id int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), meta.Jobs...), uint64(id))
}

func put(b *meta.Batch, rec Record) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.Set(key(rec.ID), v)
}

// Start registers a running job of kind for user, described as the
// statement that runs it, and records it durably. A record that cannot be
// written is logged: the job runs and shows in sys.jobs all the same.
func (r *Registry) Start(kind, description, user string) *Job {
	at := r.now().UTC()
	r.mu.Lock()
	id := r.next
	r.next++
	j := &Job{r: r, rec: Record{ID: id, Kind: kind, Description: description, User: user, Status: Running,
		Created: at, Started: at, Modified: at, RowsTotal: -1}}
	r.jobs[id] = j
	r.mu.Unlock()
	j.mu.Lock()
	j.saveLocked(true)
	j.mu.Unlock()
	return j
}

// Prepare builds a resumable job of kind for user, holding payload, with
// its running status, next run and total (Update), whose record the caller
// writes into its own batch (Job.Put) so that the job exists exactly when
// the batch's change does; Add registers it once that batch committed. A
// prepared job that is never added is forgotten (its id is skipped).
func (r *Registry) Prepare(kind, description, user string, payload any, status string, next time.Time, total int64) (*Job, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	at := r.now().UTC()
	r.mu.Lock()
	id := r.next
	r.next++
	r.mu.Unlock()
	return &Job{r: r, rec: Record{ID: id, Kind: kind, Description: description, User: user, Status: Running,
		Created: at, Started: at, Modified: at, RowsTotal: total, Resumable: true, Payload: raw,
		RunningStatus: status, NextRun: next.UTC()}}, nil
}

// Put writes a prepared job's record into b.
func (j *Job) Put(b *meta.Batch) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return put(b, j.rec)
}

// Add registers a prepared job whose record committed: sys.jobs shows it.
func (r *Registry) Add(j *Job) {
	j.mu.Lock()
	j.saved = r.now()
	j.mu.Unlock()
	r.mu.Lock()
	r.jobs[j.rec.ID] = j
	r.mu.Unlock()
}

// Resumable returns the running resumable jobs of kind (those Open found
// running, and those added since), oldest first.
func (r *Registry) Resumable(kind string) []*Job {
	r.mu.Lock()
	var out []*Job
	for _, j := range r.jobs {
		if rec := j.Record(); rec.Kind == kind && rec.Resumable && rec.Status == Running {
			out = append(out, j)
		}
	}
	r.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].rec.ID < out[b].rec.ID })
	return out
}

// trim forgets the oldest finished jobs beyond MaxFinished and deletes
// their records.
func (r *Registry) trim() {
	r.mu.Lock()
	var finished []int64
	for id, j := range r.jobs {
		if j.status() != Running {
			finished = append(finished, id)
		}
	}
	if len(finished) <= MaxFinished {
		r.mu.Unlock()
		return
	}
	sort.Slice(finished, func(a, b int) bool { return finished[a] < finished[b] })
	drop := finished[:len(finished)-MaxFinished]
	for _, id := range drop {
		delete(r.jobs, id)
	}
	r.mu.Unlock()
	b := r.store.NewBatch()
	defer b.Close()
	var err error
	for _, id := range drop {
		if err == nil {
			err = b.Delete(key(id))
		}
	}
	if err == nil {
		err = b.CommitUnsynced()
	}
	if err != nil {
		r.log.Warn("jobs: cannot delete old jobs' records", "err", err)
	}
}

// List returns every job, newest first.
func (r *Registry) List() []Record {
	r.mu.Lock()
	js := make([]*Job, 0, len(r.jobs))
	for _, j := range r.jobs {
		js = append(js, j)
	}
	r.mu.Unlock()
	out := make([]Record, len(js))
	for i, j := range js {
		out[i] = j.Record()
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID > out[b].ID })
	return out
}

// Get returns one job.
func (r *Registry) Get(id int64) (Record, bool) {
	r.mu.Lock()
	j := r.jobs[id]
	r.mu.Unlock()
	if j == nil {
		return Record{}, false
	}
	return j.Record(), true
}

// Errors of Cancel.
var (
	ErrNotFound      = errors.New("job not found")
	ErrNotRunning    = errors.New("job is not running")
	ErrNotCancelable = errors.New("job cannot be canceled")
)

// Cancel stops a running cancelable job: its context (Job.Context) is
// cancelled with ErrCanceled; the job's statement fails and the job ends
// as canceled.
func (r *Registry) Cancel(id int64) error {
	r.mu.Lock()
	j := r.jobs[id]
	r.mu.Unlock()
	if j == nil {
		return ErrNotFound
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.rec.Status != Running:
		return ErrNotRunning
	case j.cancel == nil:
		return ErrNotCancelable
	}
	j.cancel(ErrCanceled)
	return nil
}

// Job is one running job; its owner reports progress and the end.
type Job struct {
	r *Registry

	mu     sync.Mutex
	rec    Record
	saved  time.Time
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// ID is the job's id (sys.jobs' job_id).
func (j *Job) ID() int64 { return j.rec.ID }

// Record returns the job as it stands.
func (j *Job) Record() Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rec
}

func (j *Job) status() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rec.Status
}

// Payload returns the job's payload (Prepare, SetPayload).
func (j *Job) Payload() json.RawMessage {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.rec.Payload
}

// Update changes a running resumable job's payload (nil: unchanged), its
// running status and when it next acts, and its progress; the record is
// written at once, durably when sync.
func (j *Job) Update(payload any, status string, next time.Time, done, total int64, sync bool) error {
	var raw json.RawMessage
	if payload != nil {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return err
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rec.Status != Running {
		return nil
	}
	if raw != nil {
		j.rec.Payload = raw
	}
	j.rec.RunningStatus, j.rec.NextRun = status, next.UTC()
	if next.IsZero() {
		j.rec.NextRun = time.Time{}
	}
	j.rec.RowsDone, j.rec.RowsTotal = done, total
	j.rec.Modified = j.r.now().UTC()
	j.saveLocked(sync)
	return nil
}

// Context makes the job cancelable: it returns a context derived from ctx
// that CANCEL JOB cancels (with cause ErrCanceled). The job's work must
// run under it and stop when it is done.
func (j *Job) Context(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	j.mu.Lock()
	j.ctx, j.cancel = ctx, cancel
	j.rec.Cancelable = true
	j.mu.Unlock()
	return ctx
}

// Progress reports rows done out of total (total < 0: unknown). It is cheap
// enough to call every few hundred rows: the record is written at most
// once a second, and when the total changes.
func (j *Job) Progress(done, total int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rec.Status != Running {
		return
	}
	changedTotal := total != j.rec.RowsTotal
	j.rec.RowsDone, j.rec.RowsTotal = done, total
	now := j.r.now()
	j.rec.Modified = now.UTC()
	// A new total is saved at once and durably (it changes a few times
	// per job), so that an interrupted job still shows how much it had
	// to do; other progress may be lost with the last second's.
	if changedTotal || now.Sub(j.saved) >= saveEvery {
		j.saveLocked(changedTotal)
	}
}

// Describe replaces the description of a running job with what it
// learned since it started (a snapshot stream's target); a finished job
// keeps its own.
func (j *Job) Describe(description string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rec.Status != Running {
		return
	}
	j.rec.Description = description
	j.rec.Modified = j.r.now().UTC()
	j.saveLocked(false)
}

// Finish ends the job: succeeded when err is nil, canceled when CANCEL JOB
// stopped it, failed with err's message otherwise. Later calls do nothing.
func (j *Job) Finish(err error) {
	if j.finish(err) {
		j.r.trim()
	}
}

// finish is Finish under the job's lock; false when already finished.
func (j *Job) finish(err error) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rec.Status != Running {
		return false
	}
	at := j.r.now().UTC()
	j.rec.Finished, j.rec.Modified = at, at
	j.rec.RunningStatus, j.rec.NextRun = "", time.Time{}
	switch {
	case err == nil:
		j.rec.Status = Succeeded
		if j.rec.RowsTotal >= 0 {
			j.rec.RowsTotal = max(j.rec.RowsTotal, j.rec.RowsDone)
		}
	case j.ctx != nil && errors.Is(context.Cause(j.ctx), ErrCanceled):
		j.rec.Status, j.rec.Error = Canceled, ErrCanceled.Error()
	default:
		j.rec.Status, j.rec.Error = Failed, err.Error()
	}
	if j.cancel != nil {
		j.cancel(nil) // release the context's resources
	}
	j.saveLocked(true)
	return true
}

// saveLocked writes the job's record; sync makes it durable before
// returning. Failures are logged: the bookkeeping of a job never fails the
// job.
func (j *Job) saveLocked(sync bool) {
	j.saved = j.r.now()
	b := j.r.store.NewBatch()
	defer b.Close()
	err := put(b, j.rec)
	if err == nil {
		if sync {
			err = b.Commit()
		} else {
			err = b.CommitUnsynced()
		}
	}
	if err != nil {
		j.r.log.Warn("jobs: cannot write the job's record", "job", j.rec.ID, "err", err)
	}
}
