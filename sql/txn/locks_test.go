package txn

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestSpanLock: LockSpan waits for the holders of key locks inside the
// span; while it is held, other transactions' Lock of keys inside waits
// and TryLock fails, keys outside are free; two span owners that wait on
// each other's keys get 40P01 rather than hanging.
func TestSpanLock(t *testing.T) {
	lt := NewLockTable()
	ctx := context.Background()
	if _, err := lt.acquire(ctx, 1, 0, "b1"); err != nil {
		t.Fatal(err)
	}
	var got atomic.Bool
	done := make(chan *spanLock)
	go func() {
		sl, err := lt.acquireSpan(ctx, 2, 0, "b", "c")
		if err != nil {
			t.Error(err)
		}
		got.Store(true)
		done <- sl
	}()
	time.Sleep(20 * time.Millisecond)
	if got.Load() {
		t.Fatal("span taken while txn 1 holds b1")
	}
	lt.release(1, []string{"b1"})
	sl := <-done
	if taken, held := lt.tryAcquire(3, 0, "b5"); taken || held {
		t.Fatal("TryLock inside a held span succeeded")
	}
	if _, err := lt.acquire(ctx, 3, 0, "c1"); err != nil {
		t.Fatal("a key outside the span:", err)
	}
	var locked atomic.Bool
	waited := make(chan error)
	go func() {
		_, err := lt.acquire(ctx, 3, 0, "b5")
		locked.Store(true)
		waited <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if locked.Load() {
		t.Fatal("Lock inside a held span did not wait")
	}
	// The span owner locks a key inside its own span freely.
	if _, err := lt.acquire(ctx, 2, 0, "b7"); err != nil {
		t.Fatal(err)
	}
	lt.release(2, []string{"b7"})
	lt.releaseSpan(sl)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	// Txn 3 holds b5 and c1. A span over them by txn 4 waits for txn 3;
	// if txn 3 then waits for a key of txn 4, that is a deadlock.
	if _, err := lt.acquire(ctx, 4, 0, "z"); err != nil {
		t.Fatal(err)
	}
	spanErr := make(chan error)
	go func() {
		sl, err := lt.acquireSpan(ctx, 4, 0, "b", "d")
		if sl != nil {
			lt.releaseSpan(sl)
		}
		spanErr <- err
	}()
	time.Sleep(20 * time.Millisecond)
	_, err := lt.acquire(ctx, 3, 0, "z")
	if err == nil {
		err = <-spanErr
	} else {
		lt.release(3, []string{"b5", "c1"})
		if e := <-spanErr; e != nil {
			t.Fatalf("the span after the deadlock victim gave up: %v", e)
		}
	}
	if sqlerr.Code(err) != sqlerr.DeadlockDetected {
		t.Fatalf("want 40P01, got %v", err)
	}
}
