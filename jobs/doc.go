// Package jobs is PivotDB's registry of long-running statements: CREATE
// INDEX and REINDEX backfills, ALTER TABLE rewrites and validations,
// RESHARD / SPLIT and COPY. Each is a job with a kind, a description (the
// statement's text), an owner, a status (running, succeeded, failed,
// canceled), times and its progress in rows; sys.jobs and SHOW JOBS show
// them (package sql, jobs.go), as does the web console's jobs page.
//
// Using it (the statement that does the work owns its job):
//
//	job := registry.Start(jobs.KindCopy, "COPY t FROM STDIN", user)
//	ctx = job.Context(ctx) // only if the work stops when ctx is cancelled
//	... job.Progress(rowsDone, rowsTotal) ... // rowsTotal -1: unknown
//	job.Finish(err)
//
// Persistence: every job is a JSON record in the metadata store (namespace
// meta.Jobs, key "job/" + id big-endian), written durably when the job
// starts and ends, when its total changes, and at most once a second while
// it reports progress;
// sys.jobs reads the registry's memory, which is always current. Open loads
// the records: a job recorded as running was interrupted by a stop or crash
// (the work of every job kind commits in one batch at its end, so nothing
// of it took effect) and is marked failed with an error that says so —
// except a resumable one.
//
// Resumable jobs (KindSchemaChangeGC: the rows of a dropped table, removed
// once its GC_TTL has passed; sql/dropgc.go) are not tied to a statement.
// Prepare builds one whose record the caller writes into the batch of its
// own change (Put), so the job exists exactly when the change committed;
// Add registers it after that commit. It carries its owner's state
// (Payload) and says what it waits for (RunningStatus, NextRun: sys.jobs'
// running_status and next_run); Update changes those. Open keeps it
// running, and its owner picks it up again (Resumable).
// Finished jobs are kept for Retention (deleted at the next start after
// that) and at most MaxFinished of them.
//
// Cancellation: Job.Context derives a context that CANCEL JOB cancels with
// cause ErrCanceled; a job without one (RESHARD: metadata only, it does not
// check a context) refuses CANCEL JOB. There is no PAUSE / RESUME: a job
// runs inside the statement that started it, and nothing could pick a
// paused job up again.
//
// Concurrency: the Registry and each Job are safe for concurrent use; the
// lock order is the registry's lock, then a job's.
//
// Debugging: storage.FormatKey prints a job's key as /System/6a6f622f...;
// the value is readable JSON.
package jobs
