package txn

import (
	"context"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestTableLockLateDeadlock: a request waiting for several holders (a
// schema change's SHARE waiting for two writers) is in the graph as
// waiting for one of them; a cycle that closes later through the other —
// that writer waits for a key held by a third writer, queued behind the
// request — is still found (the request looks again every
// deadlockRecheck) and fails the request with 40P01 rather than hanging.
func TestTableLockLateDeadlock(t *testing.T) {
	m := newTestManager(t)
	ctx := context.Background()
	tl := m.Tables()
	a, b, d := m.Begin(), m.Begin(), m.Begin()
	c := m.NewOwner()
	write := func(owner uint64) error {
		return tl.Lock(ctx, LockRequest{Owner: owner, Rel: 7, Mode: RowExclusive, Implicit: true, Name: "t"})
	}
	if err := write(a.ID()); err != nil {
		t.Fatal(err)
	}
	if err := write(b.ID()); err != nil {
		t.Fatal(err)
	}
	if err := d.Lock(ctx, []byte("k")); err != nil {
		t.Fatal(err)
	}
	cErr := make(chan error, 1)
	go func() { cErr <- tl.Lock(ctx, LockRequest{Owner: c, Rel: 7, Mode: Share, Name: "t"}) }()
	time.Sleep(30 * time.Millisecond)
	bErr := make(chan error, 1)
	go func() { bErr <- b.Lock(ctx, []byte("k")) }() // b waits for d
	time.Sleep(30 * time.Millisecond)
	dErr := make(chan error, 1)
	go func() { dErr <- write(d.ID()) }() // d queues behind c
	select {
	case err := <-cErr:
		if e := sqlerr.As(err); e == nil || e.Code != sqlerr.DeadlockDetected {
			t.Fatalf("the SHARE request: %v, want 40P01", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a deadlock that closed after the request started waiting was not found")
	}
	// With the request gone, d's write goes on; d's end lets b on.
	if err := <-dErr; err != nil {
		t.Fatal(err)
	}
	tl.Release(d.ID())
	d.Rollback()
	if err := <-bErr; err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Txn{a, b} {
		tl.Release(x.ID())
		x.Rollback()
	}
}

// BenchmarkTableLockStatement is a statement's table lock: ACCESS SHARE
// taken on one table and released at the statement's end, as every SELECT
// does. Idle tables' states and owners' lists of grants are kept for the
// next statement (TableLocks.spareRels, spareHeld), so it allocates only
// the grant:
//
//	go test ./sql/txn -run '^$' -bench TableLockStatement -benchmem
func BenchmarkTableLockStatement(b *testing.B) {
	tl := newTableLocks(nil) // never waits, so needs no wait-for graph
	ctx := context.Background()
	b.ReportAllocs()
	o := uint64(0)
	for b.Loop() {
		o++
		if err := tl.Lock(ctx, LockRequest{Owner: o, Rel: 7, Mode: AccessShare, Implicit: true, Name: "t"}); err != nil {
			b.Fatal(err)
		}
		tl.Release(o)
	}
}
