package txn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// TestLockStrengthConflicts: two transactions' holds of one key coexist
// exactly when PostgreSQL's table says they do; a transaction's own holds
// never conflict.
func TestLockStrengthConflicts(t *testing.T) {
	strengths := []mvcc.Strength{mvcc.KeyShare, mvcc.Share, mvcc.NoKeyUpdate, mvcc.Update}
	// PostgreSQL 13.3.2, "Conflicting Row-Level Locks".
	conflicts := map[[2]mvcc.Strength]bool{}
	for _, p := range [][2]mvcc.Strength{
		{mvcc.KeyShare, mvcc.Update},
		{mvcc.Share, mvcc.NoKeyUpdate}, {mvcc.Share, mvcc.Update},
		{mvcc.NoKeyUpdate, mvcc.NoKeyUpdate}, {mvcc.NoKeyUpdate, mvcc.Update},
		{mvcc.Update, mvcc.Update},
	} {
		conflicts[p] = true
		conflicts[[2]mvcc.Strength{p[1], p[0]}] = true
	}
	m := newTestManager(t)
	for _, held := range strengths {
		for _, want := range strengths {
			a, b := m.Begin(), m.Begin()
			k := []byte("k")
			if err := a.LockStrength(context.Background(), k, held); err != nil {
				t.Fatal(err)
			}
			if err := a.TryLockStrength(k, want); err != nil {
				t.Fatalf("own %v then %v: %v", held, want, err)
			}
			err := b.TryLockStrength(k, want)
			// a now holds max(held, want).
			wantConflict := conflicts[[2]mvcc.Strength{max(held, want), want}]
			if got := errors.Is(err, ErrLockNotAvailable); got != wantConflict {
				t.Errorf("%v held, %v asked by another: conflict %v (%v), want %v", max(held, want), want, got, err, wantConflict)
			}
			a.Rollback()
			b.Rollback()
		}
	}
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d lock records left", n)
	}
}

// TestLockStrengthWaitAndGiveBack: a waiter for a conflicting strength
// gets the key when the holder weakens its hold (ROLLBACK TO SAVEPOINT) or
// ends; lock_timeout ends the wait with 55P03.
func TestLockStrengthWaitAndGiveBack(t *testing.T) {
	m := newTestManager(t)
	a, b := m.Begin(), m.Begin()
	ctx := context.Background()
	key := []byte("k")
	if err := a.LockStrength(ctx, key, mvcc.KeyShare); err != nil {
		t.Fatal(err)
	}
	mark := len(a.keys)
	if err := a.LockStrength(ctx, key, mvcc.Update); err != nil {
		t.Fatal(err)
	}
	if err := b.TryLockStrength(key, mvcc.Share); !errors.Is(err, ErrLockNotAvailable) {
		t.Fatalf("FOR SHARE against FOR UPDATE: %v", err)
	}
	err := b.LockStrength(WithLockTimeout(ctx, 20*time.Millisecond), key, mvcc.Share)
	if e := sqlerr.As(err); e == nil || e.Code != sqlerr.LockNotAvailable {
		t.Fatalf("lock_timeout: %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- b.LockStrength(ctx, key, mvcc.Share) }()
	time.Sleep(20 * time.Millisecond)
	select {
	case err := <-got:
		t.Fatalf("FOR SHARE taken while FOR UPDATE is held: %v", err)
	default:
	}
	if err := a.giveBackLocks(mark); err != nil { // back to FOR KEY SHARE
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := b.TryLockStrength(key, mvcc.Update); !errors.Is(err, ErrLockNotAvailable) {
		t.Fatalf("FOR UPDATE against FOR KEY SHARE: %v", err)
	}
	a.Rollback()
	if err := b.TryLockStrength(key, mvcc.Update); err != nil {
		t.Fatalf("FOR UPDATE once the other ended: %v", err)
	}
	b.Rollback()
	if n := countLockRecords(t, m); n != 0 {
		t.Fatalf("%d locks left", n)
	}
}

// TestLockUpgradeDeadlock: two transactions that share a key (FOR SHARE)
// and both ask for FOR UPDATE wait for each other; one gets 40P01 and the
// other the lock once the first has ended.
func TestLockUpgradeDeadlock(t *testing.T) {
	m := newTestManager(t)
	a, b := m.Begin(), m.Begin()
	ctx := context.Background()
	key := []byte("k")
	for _, x := range []*Txn{a, b} {
		if err := x.LockStrength(ctx, key, mvcc.Share); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 2)
	for _, x := range []*Txn{a, b} {
		go func(x *Txn) {
			err := x.LockStrength(ctx, key, mvcc.Update)
			if err != nil {
				x.Rollback() // the victim rolls back
			}
			errs <- err
		}(x)
	}
	var deadlocks, granted int
	for range 2 {
		err := <-errs
		switch e := sqlerr.As(err); {
		case err == nil:
			granted++
		case e != nil && e.Code == sqlerr.DeadlockDetected:
			deadlocks++
		default:
			t.Fatal(err)
		}
	}
	if deadlocks != 1 || granted != 1 {
		t.Fatalf("%d deadlocks, %d granted; want 1 and 1", deadlocks, granted)
	}
}
