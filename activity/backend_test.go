package activity

import (
	"context"
	"testing"
)

func TestBackendStates(t *testing.T) {
	r := NewRegistry()
	b := r.Register(Info{PID: 7, Database: "db", User: "u"})
	if got := r.List(); len(got) != 1 || got[0].State != StateIdle || !got[0].XactStart.IsZero() {
		t.Fatalf("new backend: %+v", got)
	}
	b.StartQuery("SELECT 1", false)
	s := b.Snapshot()
	if s.State != StateActive || s.Query != "SELECT 1" || s.XactStart.IsZero() || s.QueryStart.IsZero() {
		t.Fatalf("active: %+v", s)
	}
	done := FromContext(NewContext(context.Background(), b)).Wait("Lock", "transactionid")
	if s := b.Snapshot(); s.WaitEventType != "Lock" || s.WaitEvent != "transactionid" {
		t.Fatalf("waiting: %+v", s)
	}
	done()
	if s := b.Snapshot(); s.WaitEventType != "" {
		t.Fatalf("after the wait: %+v", s)
	}
	b.Idle('T')
	if s := b.Snapshot(); s.State != StateIdleInTransaction || s.XactStart.IsZero() || s.Query != "SELECT 1" {
		t.Fatalf("idle in transaction: %+v", s)
	}
	b.Idle('E')
	if s := b.Snapshot(); s.State != StateIdleInFailedTx {
		t.Fatalf("failed block: %+v", s)
	}
	b.Idle('I')
	if s := b.Snapshot(); s.State != StateIdle || !s.XactStart.IsZero() {
		t.Fatalf("idle: %+v", s)
	}
	b.SetApplicationName("app2")
	if s := r.List()[0]; s.ApplicationName != "app2" {
		t.Fatalf("after SET application_name: %+v", s)
	}
	if _, ok := r.Lookup(7); !ok {
		t.Fatal("Lookup(7) found nothing")
	}
	r.Unregister(b)
	if _, ok := r.Lookup(7); ok || len(r.List()) != 0 {
		t.Fatal("unregistered backend still listed")
	}
	// A context without a backend, and a nil registry, do nothing.
	FromContext(context.Background()).Wait("Lock", "x")()
	var nr *Registry
	if nr.List() != nil {
		t.Fatal("nil registry lists backends")
	}
}
