package storage

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// closeLog is the order in which commits reach "the log" (Replicate) and
// closed timestamps are published after ClosableTimestamp returned, as the
// serving node's closer publishes them (cluster/shardrepl/closedts.go).
type closeLog struct {
	mu     sync.Mutex
	events []closeEvent
}

type closeEvent struct {
	closed bool // a closed timestamp, else a commit
	ts     hlc.Timestamp
}

func (l *closeLog) add(ev closeEvent) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

// slowReplicator logs each commit after a random delay (a Raft round of
// varying length), so that commits end out of order and stay in flight
// while the closer runs.
type slowReplicator struct{ log *closeLog }

func (r slowReplicator) Replicate(ts hlc.Timestamp, _ []Mutation) error {
	time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
	r.log.add(closeEvent{ts: ts})
	return nil
}

// TestClosableTimestampNeverBelowACommit: with commits in flight of random
// length from several goroutines and a closer publishing
// ClosableTimestamp without lag as fast as it can, no commit reaches the
// log after a closed timestamp at or above its own: a replica that
// applied a closed timestamp already holds every commit at or below it.
// Closed timestamps never go back.
func TestClosableTimestampNeverBelowACommit(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{GCTTL: -1})
	defer e.Close()
	log := &closeLog{}
	if err := e.SetReplicator(slowReplicator{log: log}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var closer sync.WaitGroup
	closer.Add(1)
	go func() {
		defer closer.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			ts, err := e.ClosableTimestamp(0)
			if err != nil {
				t.Error(err)
				return
			}
			log.add(closeEvent{closed: true, ts: ts})
		}
	}()
	var writers sync.WaitGroup
	for w := range 6 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 150 {
				b := e.NewBatch()
				if err := b.Set(append(TablePrefix(9), fmt.Sprintf("w%d-%d", w, i)...), []byte("v")); err != nil {
					t.Error(err)
				}
				if err := b.Commit(); err != nil {
					t.Error(err)
				}
				b.Close()
			}
		}()
	}
	writers.Wait()
	close(stop)
	closer.Wait()

	var closed hlc.Timestamp
	commits, closes := 0, 0
	for i, ev := range log.events {
		if ev.closed {
			if ev.ts.Less(closed) {
				t.Fatalf("event %d: closed timestamp went back from %s to %s", i, closed, ev.ts)
			}
			closed = ev.ts
			closes++
			continue
		}
		commits++
		if ev.ts.LessEq(closed) {
			t.Fatalf("event %d: a commit at %s reached the log after closed timestamp %s", i, ev.ts, closed)
		}
	}
	if commits != 6*150 || closes < 10 {
		t.Fatalf("%d commits and %d closed timestamps logged", commits, closes)
	}
}

// TestClosableTimestampTrailsByLag: without commits in flight the closed
// timestamp is the clock's now less the lag.
func TestClosableTimestampTrailsByLag(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{GCTTL: -1})
	defer e.Close()
	before := time.Now().UnixNano()
	ts, err := e.ClosableTimestamp(3 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixNano()
	if ts.WallTime < before-int64(3*time.Second) || ts.WallTime > after-int64(3*time.Second) {
		t.Fatalf("closed %d, want within [%d, %d]", ts.WallTime, before-int64(3*time.Second), after-int64(3*time.Second))
	}
}
