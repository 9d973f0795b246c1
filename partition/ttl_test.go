package partition

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage"
)

// TestTTLRunnerVisitsShards: a run calls the erase function once per shard
// of each listed table, in key order, records the shard's counters, skips
// the rest of a table that is gone, and keeps going after a shard's error.
func TestTTLRunnerVisitsShards(t *testing.T) {
	e := newEnv(t)
	e.create(1, key(1, 10), key(1, 20))
	e.create(2, key(2, 5))
	clock := newFakeClock()
	var mu sync.Mutex
	var visited []string
	failShard := ShardID(0)
	erase := func(_ context.Context, table uint64, span storage.Span) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		sm := e.m.Map(table)
		k := sm.Find(span.Start)
		visited = append(visited, mapShard(table, k))
		switch {
		case table == 2: // dropped meanwhile: its second shard is not visited
			return 0, ErrTableNotFound
		case sm.Shard(k).ID == failShard:
			return 1, errors.New("boom")
		}
		return int64(k + 1), nil
	}
	r := NewTTLRunner(e.m, func() []uint64 { return []uint64{1, 2, 99} }, erase, TTLOptions{Now: clock.Now})
	defer r.Stop()
	if got := r.Run(); got != 1+2+3 {
		t.Fatalf("Run erased %d, want 6", got)
	}
	if got, want := fmtList(visited), "1/0 1/1 1/2 2/0"; got != want {
		t.Fatalf("visited %s, want %s", got, want)
	}
	sm := e.m.Map(1)
	for k := 0; k < 3; k++ {
		at, ok := sm.Shard(k).TTLLastRun()
		if !ok || !at.Equal(clock.Now()) || sm.Shard(k).TTLRowsErased() != int64(k+1) {
			t.Fatalf("shard %d: last run %v %v, erased %d", k, at, ok, sm.Shard(k).TTLRowsErased())
		}
	}
	// A failing shard counts what it erased but keeps its last run time.
	clock.Advance(time.Minute)
	failShard = sm.Shard(1).ID
	visited = nil
	r.Run()
	if at, _ := sm.Shard(1).TTLLastRun(); at.Equal(clock.Now()) || sm.Shard(1).TTLRowsErased() != 3 {
		t.Fatalf("failed shard: last run %v, erased %d", at, sm.Shard(1).TTLRowsErased())
	}
	if at, _ := sm.Shard(2).TTLLastRun(); !at.Equal(clock.Now()) {
		t.Fatal("the shard after a failed one was not run")
	}
	// A shard never run shows no time.
	e.create(4)
	if _, ok := e.m.Map(4).Shard(0).TTLLastRun(); ok {
		t.Fatal("a new shard shows a TTL run")
	}
}

func mapShard(table uint64, k int) string {
	return string(rune('0'+table)) + "/" + string(rune('0'+k))
}

func fmtList(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out
}

// TestTTLRunnerStop: Stop cancels the erase in progress and waits for it;
// the background loop runs every Interval until then.
func TestTTLRunnerStop(t *testing.T) {
	e := newEnv(t)
	e.create(1)
	var runs atomic.Int64
	entered := make(chan struct{}, 1)
	erase := func(ctx context.Context, _ uint64, _ storage.Span) (int64, error) {
		if runs.Add(1) == 3 {
			entered <- struct{}{}
			<-ctx.Done() // a long erasure, interrupted by Stop
			return 0, ctx.Err()
		}
		return 0, nil
	}
	r := NewTTLRunner(e.m, func() []uint64 { return []uint64{1} }, erase, TTLOptions{Interval: time.Millisecond})
	r.Start()
	<-entered
	r.Stop()
	n := runs.Load()
	time.Sleep(5 * time.Millisecond) // no run may start after Stop
	if runs.Load() != n || n != 3 {
		t.Fatalf("runs %d then %d, want 3", n, runs.Load())
	}
	r.Stop() // idempotent
}
