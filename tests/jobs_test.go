package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestJobsOverTheWire: a second connection watches a long CREATE INDEX's
// job progress in sys.jobs; the server is then SIGKILLed in the middle of
// the backfill, and after the restart SHOW JOBS lists the job as failed,
// interrupted, and the index does not exist (its rows_total as when it
// started, rows_done as last saved: at most a second old). A finished job
// shows the same after the restart.
func TestJobsOverTheWire(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE big (k Int64, v Int64, PRIMARY KEY (k))")
	start := time.Now()
	mustExec(t, c, "INSERT INTO big SELECT x, x % 1000 FROM generate_series(1, 60000) AS g(x)")
	t.Logf("loaded in %v", time.Since(start))
	mustExec(t, c, "CREATE TABLE tiny (k Int64, v Int64, PRIMARY KEY (k))")
	mustExec(t, c, "CREATE INDEX small ON tiny (v)")

	builder := srv.connect(t, pgx.QueryExecModeCacheStatement)
	done := make(chan error, 1)
	go func() {
		_, err := builder.Exec(context.Background(), "CREATE INDEX big_v ON big (v)")
		done <- err
	}()
	var id, rowsDone, rowsTotal int64
	var status string
	deadline := time.Now().Add(time.Minute)
	for {
		err := c.QueryRow(ctxT(t), "SELECT job_id, status, rows_done, rows_total FROM sys.jobs WHERE description = 'CREATE INDEX big_v ON big (v)'").
			Scan(&id, &status, &rowsDone, &rowsTotal)
		if err == nil && status == "running" && rowsDone > 0 {
			break
		}
		if err != nil && err != pgx.ErrNoRows {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("CREATE INDEX ended (%v) before its progress was seen (status %q, rows_done %d)", err, status, rowsDone)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress seen")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if rowsTotal != 60000 || rowsDone >= rowsTotal {
		t.Fatalf("running job: rows_done %d, rows_total %d", rowsDone, rowsTotal)
	}
	srv.kill()
	<-done
	srv.start()
	c = srv.connect(t, pgx.QueryExecModeCacheStatement)
	rows, err := c.Query(ctxT(t), "SHOW JOBS")
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		ID                      int64
		Type, Description, User string
		Status                  string
		Created, Started        time.Time
		Finished, Modified      *time.Time
		Fraction                *float64
		Error                   *string
		RowsDone                int64
		RowsTotal               *int64
		Cancelable              bool
		RunningStatus           *string
		NextRun                 *time.Time
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[job])
	if err != nil {
		t.Fatal(err)
	}
	var got *job
	for i := range jobs {
		if jobs[i].ID == id {
			got = &jobs[i]
		}
	}
	if got == nil || got.Status != "failed" || got.Error == nil || !strings.Contains(*got.Error, "interrupted") ||
		got.Finished == nil || got.Cancelable || got.User != "pivotdb" || got.RowsTotal == nil || *got.RowsTotal != 60000 {
		t.Fatalf("after the restart: %+v", got)
	}
	if len(jobs) != 2 || jobs[0].ID != id || jobs[1].ID >= id {
		t.Fatalf("SHOW JOBS is not newest first: %+v", jobs)
	}
	var n int
	if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM pg_class WHERE relname = 'big_v'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the interrupted index exists: %d, %v", n, err)
	}
	// The finished CREATE INDEX small kept its record.
	var small string
	if err := c.QueryRow(ctxT(t), "SELECT status FROM sys.jobs WHERE description LIKE 'CREATE INDEX small%'").Scan(&small); err != nil || small != "succeeded" {
		t.Fatalf("finished job after the restart: %q, %v", small, err)
	}
	_, err = c.Exec(ctxT(t), "CANCEL JOB 600000")
	wantCode(t, err, "42704")
}
