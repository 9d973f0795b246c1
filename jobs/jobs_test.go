package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openEngine(t *testing.T, dir string) (*storage.Engine, *meta.Store) {
	t.Helper()
	eng, err := storage.Open(dir, storage.Options{NoSync: true, Logger: storagetest.QuietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	return eng, meta.Open(eng)
}

// TestRestartShowsJobs: finished jobs survive a restart as they were; a
// job that was running when the server stopped comes back failed, with an
// error that says it was interrupted; ids keep growing.
func TestRestartShowsJobs(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{t: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	eng, store := openEngine(t, dir)
	r, err := Open(store, clk.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := r.Start(KindCreateIndex, "CREATE INDEX i ON t (v)", "alice")
	done.Progress(500, 1000)
	clk.add(time.Second)
	done.Progress(1000, 1000)
	done.Finish(nil)
	bad := r.Start(KindAlterTable, "ALTER TABLE t ALTER COLUMN v TYPE Int32", "bob")
	bad.Finish(errors.New("invalid input syntax"))
	running := r.Start(KindReshard, "ALTER TABLE t RESHARD INTO 4", "alice")
	running.Progress(10, 20)
	clk.add(time.Second) // saved: at most once a second
	running.Progress(12, 20)
	eng.Close() // a crash: running never finishes

	clk.add(time.Minute)
	eng, store = openEngine(t, dir)
	defer eng.Close()
	r, err = Open(store, clk.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	list := r.List()
	if len(list) != 3 || list[0].ID != running.ID() || list[2].ID != done.ID() {
		t.Fatalf("after restart: %+v", list)
	}
	got := list[0]
	if got.Status != Failed || got.Error != interruptedError || got.RowsDone != 12 || got.RowsTotal != 20 ||
		!got.Finished.Equal(clk.now()) || got.Cancelable {
		t.Fatalf("interrupted job: %+v", got)
	}
	if f, ok := got.Fraction(); !ok || f != 0.6 {
		t.Fatalf("interrupted job's fraction %v %v", f, ok)
	}
	if got := list[1]; got.Status != Failed || got.Error != "invalid input syntax" || got.User != "bob" {
		t.Fatalf("failed job: %+v", got)
	}
	if got := list[2]; got.Status != Succeeded || got.RowsDone != 1000 || got.Kind != KindCreateIndex ||
		got.Description != "CREATE INDEX i ON t (v)" || got.Finished.IsZero() {
		t.Fatalf("succeeded job: %+v", got)
	}
	if next := r.Start(KindCopy, "COPY t FROM STDIN", "alice"); next.ID() <= running.ID() {
		t.Fatalf("new job id %d after %d", next.ID(), running.ID())
	}
	// The interrupted job's new state was written: a second restart keeps it.
	eng.Close()
	eng, store = openEngine(t, dir)
	r, err = Open(store, clk.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Get(running.ID()); !ok || got.Error != interruptedError {
		t.Fatalf("second restart: %+v %v", got, ok)
	}
	// The COPY job started before the second restart: interrupted too.
	if list := r.List(); list[0].Kind != KindCopy || list[0].Status != Failed {
		t.Fatalf("second restart: %+v", list[0])
	}
	eng.Close()

	// Retention: finished jobs older than Retention go at the next start.
	clk.add(Retention + time.Hour)
	eng, store = openEngine(t, dir)
	r, err = Open(store, clk.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if list := r.List(); len(list) != 0 {
		t.Fatalf("after the retention: %+v", list)
	}
}

// TestCancel: CANCEL JOB cancels a cancelable job's context with
// ErrCanceled and the job ends canceled; other jobs refuse.
func TestCancel(t *testing.T) {
	eng, store := openEngine(t, t.TempDir())
	defer eng.Close()
	r, err := Open(store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := r.Start(KindCreateIndex, "CREATE INDEX", "u")
	ctx := j.Context(context.Background())
	if rec, _ := r.Get(j.ID()); !rec.Cancelable {
		t.Fatal("a job with a context is cancelable")
	}
	if err := r.Cancel(j.ID()); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), ErrCanceled) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	j.Finish(ctx.Err())
	if rec, _ := r.Get(j.ID()); rec.Status != Canceled || rec.Error != ErrCanceled.Error() {
		t.Fatalf("canceled job: %+v", rec)
	}
	if err := r.Cancel(j.ID()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("cancel of a finished job: %v", err)
	}
	plain := r.Start(KindReshard, "RESHARD", "u")
	if err := r.Cancel(plain.ID()); !errors.Is(err, ErrNotCancelable) {
		t.Fatalf("cancel of a job without a context: %v", err)
	}
	if err := r.Cancel(12345); !errors.Is(err, ErrNotFound) {
		t.Fatalf("cancel of no job: %v", err)
	}
	// A job that ends with an error of its own is failed, not canceled.
	other := r.Start(KindCreateIndex, "CREATE INDEX", "u")
	other.Context(context.Background())
	other.Finish(errors.New("duplicate key"))
	if rec, _ := r.Get(other.ID()); rec.Status != Failed {
		t.Fatalf("failed job: %+v", rec)
	}
}

// TestMaxFinished: beyond MaxFinished finished jobs the oldest are
// forgotten, in memory and on disk; running ones stay.
func TestMaxFinished(t *testing.T) {
	dir := t.TempDir()
	eng, store := openEngine(t, dir)
	r, err := Open(store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := r.Start(KindCopy, "COPY 0", "u") // stays running
	for i := 0; i < MaxFinished+5; i++ {
		r.Start(KindCopy, "COPY", "u").Finish(nil)
	}
	list := r.List()
	if len(list) != MaxFinished+1 || list[len(list)-1].ID != first.ID() {
		t.Fatalf("%d jobs kept, oldest %d", len(list), list[len(list)-1].ID)
	}
	eng.Close()
	eng, store = openEngine(t, dir)
	defer eng.Close()
	if r, err = Open(store, nil, nil); err != nil {
		t.Fatal(err)
	}
	// MaxFinished+1 finished (the interrupted one now among them) is
	// trimmed at the next Start.
	if n := len(r.List()); n != MaxFinished+1 {
		t.Fatalf("%d jobs after restart", n)
	}
}

// TestConcurrentProgress: progress reports, listing and cancel from
// several goroutines (run with -race).
func TestConcurrentProgress(t *testing.T) {
	eng, store := openEngine(t, t.TempDir())
	defer eng.Close()
	r, err := Open(store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := r.Start(KindCreateIndex, "CREATE INDEX", "u")
			ctx := j.Context(context.Background())
			for i := int64(0); i < 2000 && ctx.Err() == nil; i++ {
				j.Progress(i, 2000)
			}
			j.Finish(ctx.Err())
		}()
	}
	for i := 0; i < 50; i++ {
		for _, rec := range r.List() {
			if rec.Status == Running && rec.Cancelable && i == 25 {
				_ = r.Cancel(rec.ID)
			}
		}
	}
	wg.Wait()
	for _, rec := range r.List() {
		if rec.Status == Running {
			t.Fatalf("job still running: %+v", rec)
		}
	}
}

// TestResumableJob: a prepared job exists only once the caller's batch
// commits it; a running resumable job is still running after a restart,
// with its payload and running status, and is listed by Resumable.
func TestResumableJob(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{t: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	eng, store := openEngine(t, dir)
	r, err := Open(store, clk.now, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := clk.now().Add(time.Hour)
	lost, err := r.Prepare(KindSchemaChangeGC, "GC for DROP TABLE lost", "alice", map[string]int{"n": 0}, "waiting", next, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := store.NewBatch()
	if err := lost.Put(b); err != nil {
		t.Fatal(err)
	}
	b.Close() // the change never committed
	j, err := r.Prepare(KindSchemaChangeGC, "GC for DROP TABLE t", "alice", map[string]int{"n": 1}, "waiting", next, 2)
	if err != nil {
		t.Fatal(err)
	}
	b = store.NewBatch()
	if err := j.Put(b); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get(j.ID()); ok {
		t.Fatal("a prepared job is listed before it is added")
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	r.Add(j)
	if err := j.Update(map[string]int{"n": 2}, "waiting more", next, 1, 2, true); err != nil {
		t.Fatal(err)
	}
	eng.Close() // a crash

	eng, store = openEngine(t, dir)
	defer eng.Close()
	if r, err = Open(store, clk.now, nil); err != nil {
		t.Fatal(err)
	}
	if list := r.List(); len(list) != 1 {
		t.Fatalf("after restart: %+v", list)
	}
	res := r.Resumable(KindSchemaChangeGC)
	if len(res) != 1 || res[0].ID() != j.ID() || string(res[0].Payload()) != `{"n":2}` {
		t.Fatalf("resumable after restart: %+v", res)
	}
	got := res[0].Record()
	if got.Status != Running || got.RunningStatus != "waiting more" || !got.NextRun.Equal(next) || got.RowsDone != 1 || got.RowsTotal != 2 {
		t.Fatalf("resumed job: %+v", got)
	}
	res[0].Finish(nil)
	if got := res[0].Record(); got.Status != Succeeded || got.RunningStatus != "" || !got.NextRun.IsZero() {
		t.Fatalf("finished: %+v", got)
	}
	if len(r.Resumable(KindSchemaChangeGC)) != 0 {
		t.Fatal("a finished job is still resumable")
	}
}
