package sql

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/storage"
)

// runningJob starts stmt on its own session and returns once the job's
// first progress report has paused it (jobProgressHook); release lets it
// go on, and done delivers its result.
func runningJob(t *testing.T, e *Engine, stmt string) (job *jobs.Job, release func(), done <-chan error) {
	t.Helper()
	paused := make(chan *jobs.Job, 1)
	resume := make(chan struct{})
	jobProgressHook = func(j *jobs.Job) {
		select {
		case paused <- j:
			<-resume
		default:
		}
	}
	t.Cleanup(func() { jobProgressHook = nil })
	s := testSession(t, e)
	res := make(chan error, 1)
	go func() {
		_, err := tryQuery(s, stmt)
		res <- err
	}()
	select {
	case job = <-paused:
	case err := <-res:
		t.Fatalf("%s finished before reporting progress: %v", stmt, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s reported no progress", stmt)
	}
	var once bool
	return job, func() {
		if !once {
			once = true
			close(resume)
		}
	}, res
}

// TestJobProgressFromAnotherSession: while a CREATE INDEX backfills, a
// second session sees its job running in sys.jobs and SHOW JOB with the
// rows done so far; afterwards it has succeeded with every row.
func TestJobProgressFromAnotherSession(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE jp (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO jp SELECT x, x % 100 FROM generate_series(1, 5000) AS g(x)")
	job, release, done := runningJob(t, e, "CREATE INDEX jp_v ON jp (v)")
	defer release()

	other := testSession(t, e)
	rows := query(t, other, "SELECT job_id, job_type, status, rows_done, rows_total, fraction_completed, cancelable, user_name FROM sys.jobs WHERE description = 'CREATE INDEX jp_v ON jp (v)'")
	if len(rows) != 1 {
		t.Fatalf("sys.jobs: %v", rows)
	}
	r := rows[0]
	if r[0].Int() != job.ID() || r[1].Str() != "CREATE INDEX" || r[2].Str() != "running" || r[3].Int() != progressEvery ||
		r[4].Int() != 5000 || r[5].Float() != float64(progressEvery)/5000 || !r[6].Bool() || r[7].Str() != "pivotdb" {
		t.Fatalf("running job in sys.jobs: %v", r)
	}
	show := query(t, other, "SHOW JOB "+r[0].Text())
	if len(show) != 1 || show[0][4].Str() != "running" || !show[0][7].IsNull() {
		t.Fatalf("SHOW JOB: %v", show)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rows = query(t, other, "SELECT status, rows_done, rows_total, fraction_completed, cancelable FROM sys.jobs WHERE job_id = "+r[0].Text())
	if got := rows[0]; got[0].Str() != "succeeded" || got[1].Int() != 5000 || got[2].Int() != 5000 || got[3].Float() != 1 || got[4].Bool() {
		t.Fatalf("finished job: %v", got)
	}
	if n := query(t, other, "SELECT count(*) FROM jp WHERE v = 7")[0][0].Int(); n != 50 {
		t.Fatalf("index read %d rows", n)
	}
}

// TestCancelJob: CANCEL JOB from another session stops a backfill and an
// ALTER TABLE rewrite; their statements fail with 57014 and leave nothing
// behind; only the job's owner or a superuser may cancel.
func TestCancelJob(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE jc (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO jc SELECT x, x % 100 FROM generate_series(1, 3000) AS g(x)")
	query(t, s, "CREATE USER mallory")
	for _, tc := range []struct{ stmt, check string }{
		// Nothing took effect: no index, v still an integer.
		{"CREATE INDEX jc_v ON jc (v)", "SELECT count(*) FROM pg_class WHERE relname = 'jc_v'"},
		{"ALTER TABLE jc ALTER COLUMN v TYPE Utf8 USING v::Utf8", "SELECT v - 1 FROM jc WHERE k = 1"},
	} {
		job, release, done := runningJob(t, e, tc.stmt)
		id := job.Record().ID
		mallory := asUser(t, e, "mallory")
		_, err := tryQuery(mallory, "CANCEL JOB "+itoa(id))
		wantCode(t, err, "42501")
		// Other roles' jobs are not listed to her.
		if rows := query(t, mallory, "SELECT count(*) FROM sys.jobs"); rows[0][0].Int() != 0 {
			t.Fatalf("mallory sees %d jobs", rows[0][0].Int())
		}
		_, err = tryQuery(mallory, "SHOW JOB "+itoa(id))
		wantCode(t, err, "42704")
		query(t, testSession(t, e), "CANCEL JOB "+itoa(id))
		release()
		err = <-done
		wantCode(t, err, "57014")
		rec, _ := e.jobs.Get(id)
		if rec.Status != jobs.Canceled || rec.Error != jobs.ErrCanceled.Error() {
			t.Fatalf("%s: canceled job %+v", tc.stmt, rec)
		}
		if n := query(t, s, tc.check)[0][0].Int(); n != 0 {
			t.Fatalf("%s: canceled, yet it took effect", tc.stmt)
		}
		_, err = tryQuery(s, "CANCEL JOB "+itoa(id))
		wantCode(t, err, "55000")
	}
	// RESHARD is metadata only and checks no context: not cancelable.
	query(t, s, "ALTER TABLE jc RESHARD INTO 2 UNIFORM")
	id := query(t, s, "SELECT max(job_id) FROM sys.jobs WHERE job_type = 'RESHARD'")[0][0].Int()
	if rec, _ := e.jobs.Get(id); rec.Status != jobs.Succeeded {
		t.Fatalf("reshard job %+v", rec)
	}
	// The table is whole after all this.
	if n := query(t, s, "SELECT count(*) FROM jc")[0][0].Int(); n != 3000 {
		t.Fatalf("%d rows", n)
	}
}

// TestJobsAfterRestart: finished jobs show after the engine reopens, with
// their progress and errors.
func TestJobsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	quiet := storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := e.NewSession("pivotdb", "pivotdb")
	query(t, s, "CREATE TABLE jr (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO jr SELECT x, x FROM generate_series(1, 2000) AS g(x)")
	query(t, s, "CREATE INDEX jr_v ON jr (v)")
	if _, err := tryQuery(s, "ALTER TABLE jr ADD CONSTRAINT small CHECK (v < 100)"); err == nil {
		t.Fatal("CHECK over existing rows passed")
	}
	before := query(t, s, "SELECT job_id, job_type, status, rows_done, error FROM sys.jobs ORDER BY job_id")
	s.Close()
	e.Close()
	e, err = Open(Options{DataDir: dir, NoSync: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ = e.NewSession("pivotdb", "pivotdb")
	defer s.Close()
	after := query(t, s, "SELECT job_id, job_type, status, rows_done, error FROM sys.jobs ORDER BY job_id")
	if len(before) != 2 || len(after) != 2 {
		t.Fatalf("before %v, after %v", before, after)
	}
	for i := range before {
		for j := range before[i] {
			if before[i][j].String() != after[i][j].String() {
				t.Fatalf("row %d before %v, after %v", i, before[i], after[i])
			}
		}
	}
	if after[1][2].Str() != "failed" || after[1][4].IsNull() {
		t.Fatalf("failed ALTER: %v", after[1])
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestJobsInTransactionBlock: a CREATE INDEX or a rewriting ALTER TABLE in
// a transaction block is done when the block commits: its sys.jobs entry succeeds then, and fails
// with the reason when the block rolls back, or rolls back to a savepoint
// set before it.
func TestJobsInTransactionBlock(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE jb (k Int64, v Int64, PRIMARY KEY (k))")
	query(t, s, "INSERT INTO jb VALUES (1, 1), (2, 2)")
	job := func(desc string) string {
		t.Helper()
		return strings.Trim(formatRows(query(t, s, "SELECT status || ',' || coalesce(error, '') FROM sys.jobs WHERE description = '"+desc+"'")), `"`)
	}
	query(t, s, "BEGIN")
	query(t, s, "CREATE INDEX jb_a ON jb (v)")
	if got := job("CREATE INDEX jb_a ON jb (v)"); got != "running," {
		t.Fatalf("before the commit: %q", got)
	}
	query(t, s, "ROLLBACK")
	if got := job("CREATE INDEX jb_a ON jb (v)"); !strings.HasPrefix(got, "failed,rolled back: the transaction block that ran it was rolled back") {
		t.Fatalf("after ROLLBACK: %q", got)
	}
	query(t, s, "BEGIN")
	query(t, s, "CREATE INDEX jb_b ON jb (v)")
	query(t, s, "SAVEPOINT sp")
	query(t, s, "CREATE INDEX jb_c ON jb (v)")
	query(t, s, "ROLLBACK TO SAVEPOINT sp")
	query(t, s, "COMMIT")
	if got := job("CREATE INDEX jb_b ON jb (v)"); got != "succeeded," {
		t.Fatalf("committed: %q", got)
	}
	if got := job("CREATE INDEX jb_c ON jb (v)"); !strings.HasPrefix(got, "failed,rolled back: its transaction block rolled back to a savepoint") {
		t.Fatalf("rolled back to a savepoint: %q", got)
	}
	// A rewrite's job too (ALTER COLUMN TYPE, in a block since issue 22).
	query(t, s, "BEGIN")
	query(t, s, "SAVEPOINT sp")
	query(t, s, "ALTER TABLE jb ALTER COLUMN v TYPE Int32")
	query(t, s, "ROLLBACK TO SAVEPOINT sp")
	query(t, s, "ALTER TABLE jb ALTER COLUMN v TYPE Utf8 USING v::Utf8")
	if got := job("ALTER TABLE jb ALTER COLUMN v TYPE Utf8 USING v::Utf8"); got != "running," {
		t.Fatalf("rewrite before the commit: %q", got)
	}
	query(t, s, "COMMIT")
	if got := job("ALTER TABLE jb ALTER COLUMN v TYPE Utf8 USING v::Utf8"); got != "succeeded," {
		t.Fatalf("committed rewrite: %q", got)
	}
	if got := job("ALTER TABLE jb ALTER COLUMN v TYPE Int32"); !strings.HasPrefix(got, "failed,rolled back: its transaction block rolled back to a savepoint") {
		t.Fatalf("rewrite rolled back to a savepoint: %q", got)
	}
	// Outside a block the job ends with its statement.
	query(t, s, "CREATE INDEX jb_d ON jb (v)")
	if got := job("CREATE INDEX jb_d ON jb (v)"); got != "succeeded," {
		t.Fatalf("autocommit: %q", got)
	}
}
