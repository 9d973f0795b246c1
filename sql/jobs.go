package sql

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Long statements run as jobs (package jobs): CREATE INDEX and REINDEX
// backfills, ALTER TABLE rewrites, validations and index builds, RESHARD,
// and COPY (which calls startJob). sys.jobs and SHOW JOBS list them with
// their progress; CANCEL JOB stops a backfill or rewrite, whose statement
// then fails with 57014 and leaves nothing behind (the work commits in one
// batch at the end).

// jobWork is a running job's progress in rows, carried on the statement's
// context so that the loops deep in a statement (fillIndex, the rewrite's
// conversion, validation scans) report into the job of the statement that
// runs them. Each loop first adds the rows it expects (expect), then
// advances as it goes.
type jobWork struct {
	job     *jobs.Job
	done    atomic.Int64
	total   atomic.Int64
	unknown atomic.Bool // a loop could not estimate its rows
}

type jobWorkKey struct{}

// jobProgressHook, when set (tests), is called after each progress report.
var jobProgressHook func(job *jobs.Job)

// expect adds the rows a loop is about to go through (n < 0: unknown);
// nil-safe, as are the other methods (a statement that runs no job).
func (w *jobWork) expect(n int64) {
	if w == nil {
		return
	}
	if n < 0 {
		w.unknown.Store(true)
	} else {
		w.total.Add(n)
	}
	w.report(w.done.Load())
}

// advance counts n more rows done.
func (w *jobWork) advance(n int64) {
	if w == nil || n == 0 {
		return
	}
	w.report(w.done.Add(n))
	if h := jobProgressHook; h != nil {
		h(w.job)
	}
}

func (w *jobWork) report(done int64) {
	total := int64(-1)
	if !w.unknown.Load() {
		// The total is an estimate from shard statistics: never below
		// what is done.
		total = max(w.total.Load(), done)
	}
	w.job.Progress(done, total)
}

func jobWorkFrom(ctx context.Context) *jobWork {
	w, _ := ctx.Value(jobWorkKey{}).(*jobWork)
	return w
}

// progressEvery is how many rows a job's loops handle between progress
// reports (they check for cancellation as often).
const progressEvery = 1024

// startJob registers a job of kind for the running statement (its text is
// the description). The caller finishes it. COPY uses it directly:
//
//	job := s.startJob(jobs.KindCopy)
//	... job.Progress(rowsDone, -1) ...
//	job.Finish(err)
func (s *Session) startJob(kind string) *jobs.Job {
	return s.e.jobs.Start(kind, s.currentText, s.user)
}

// runJob runs fn as a job of kind: the job is registered, its progress is
// what fn's loops report (jobWork), and it ends with fn's result. When
// cancelable, CANCEL JOB cancels fn's context and the statement fails with
// 57014; fn must then stop at its next check and leave nothing behind.
func (s *Session) runJob(ctx context.Context, kind string, cancelable bool, fn func(ctx context.Context) error) error {
	job := s.startJob(kind)
	w := &jobWork{job: job}
	w.report(0)
	jctx := ctx
	if cancelable {
		jctx = job.Context(ctx)
	}
	before := 0
	if s.tddl != nil {
		before = len(s.tddl.createdSpaces)
	}
	err := fn(context.WithValue(jctx, jobWorkKey{}, w))
	if err == nil && s.tddl != nil && s.tddl.pending != nil {
		// A schema change of a transaction takes effect at its commit:
		// the job ends with the transaction (finishTxnJobs).
		s.tddl.jobs = append(s.tddl.jobs, txnJob{job: job, created: slices.Clone(s.tddl.createdSpaces[before:])})
		return nil
	}
	job.Finish(err)
	if err != nil && errors.Is(context.Cause(jctx), jobs.ErrCanceled) {
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to CANCEL JOB %d", job.ID())
	}
	// A cancel that lands after fn's last check is too late: the work is
	// done and committed, so the job succeeded (Finish(nil)).
	return err
}

// tableRows estimates a table's rows from its shards' statistics, for a
// job's total; -1 when unknown.
func (s *Session) tableRows(tableID uint64) int64 {
	_, shards, _, err := s.e.shards.TableStats(tableID)
	if err != nil {
		return -1
	}
	var n int64
	for _, sh := range shards {
		if sh.Pending {
			return -1
		}
		n += max(sh.Rows, 0)
	}
	return n
}

// jobRows are the rows of sys.jobs and SHOW JOBS, newest first
// (bind.JobColumns). As in CockroachDB, a superuser sees every job and
// other roles their own: a job's description is its statement's text.
func (s *Session) jobRows() ([][]types.Value, error) {
	var out [][]types.Value
	for _, r := range s.e.jobs.List() {
		if s.seesJob(r) {
			out = append(out, jobRow(r))
		}
	}
	return out, nil
}

// seesJob: a superuser sees and controls every job, other roles theirs.
func (s *Session) seesJob(r jobs.Record) bool {
	return r.User == s.user || s.access(s.catalogSnap()).Superuser()
}

func jobRow(r jobs.Record) []types.Value {
	ts := func(at interface{ UnixMicro() int64 }, ok bool) types.Value {
		if !ok {
			return types.NullValue
		}
		return types.NewTimestamp(at.UnixMicro())
	}
	fraction := types.NullValue
	if f, ok := r.Fraction(); ok {
		fraction = types.NewDouble(f)
	}
	errText := types.NullValue
	if r.Error != "" {
		errText = types.NewUtf8(r.Error)
	}
	total := types.NullValue
	if r.RowsTotal >= 0 {
		total = types.NewInt64(r.RowsTotal)
	}
	return []types.Value{
		types.NewInt64(r.ID), types.NewUtf8(r.Kind), types.NewUtf8(r.Description), types.NewUtf8(r.User),
		types.NewUtf8(string(r.Status)), ts(r.Created, true), ts(r.Started, !r.Started.IsZero()),
		ts(r.Finished, !r.Finished.IsZero()), ts(r.Modified, true), fraction, errText,
		types.NewInt64(r.RowsDone), total, types.NewBool(r.Cancelable && r.Status == jobs.Running),
		nullIfEmpty(r.RunningStatus), ts(r.NextRun, !r.NextRun.IsZero()),
	}
}

// runJobStatement runs SHOW JOBS, SHOW JOB id, CANCEL JOB id, PAUSE JOB id
// and RESUME JOB id.
func (s *Session) runJobStatement(st *bind.JobStatement) (Result, error) {
	switch st.Kind {
	case parser.JobShowAll:
		rows, _ := s.jobRows()
		return staticRows(resultColumns(st.Columns()), rows, "SHOW JOBS"), nil
	case parser.JobShow:
		r, ok := s.e.jobs.Get(st.ID)
		if !ok || !s.seesJob(r) {
			return nil, jobNotFound(st.ID)
		}
		return staticRows(resultColumns(st.Columns()), [][]types.Value{jobRow(r)}, "SHOW JOB"), nil
	case parser.JobCancel:
		r, ok := s.e.jobs.Get(st.ID)
		if !ok {
			return nil, jobNotFound(st.ID)
		}
		// As CockroachDB: the job's owner or a superuser.
		if !s.seesJob(r) {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "must be superuser or the job's owner to cancel job %d", st.ID)
		}
		switch err := s.e.jobs.Cancel(st.ID); {
		case errors.Is(err, jobs.ErrNotRunning):
			return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "job %d is %s, not running: it cannot be canceled", st.ID, r.Status)
		case errors.Is(err, jobs.ErrNotCancelable):
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "canceling a %s job is not supported yet", r.Kind)
		case errors.Is(err, jobs.ErrNotFound):
			return nil, jobNotFound(st.ID)
		case err != nil:
			return nil, err
		}
		return &tagResult{tag: "CANCEL JOB"}, nil
	}
	// PAUSE and RESUME: a job runs inside the statement that started it;
	// there is nothing that could pick a paused job up again.
	verb := map[parser.JobKind]string{parser.JobPause: "PAUSE JOB", parser.JobResume: "RESUME JOB"}[st.Kind]
	return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Message: verb + " is not supported yet",
		Hint: "A job runs inside the statement that started it; CANCEL JOB stops a backfill or rewrite."}
}

func nullIfEmpty(s string) types.Value {
	if s == "" {
		return types.NullValue
	}
	return types.NewUtf8(s)
}

func jobNotFound(id int64) error {
	return sqlerr.New(sqlerr.UndefinedObject, "job with ID %d does not exist", id)
}
