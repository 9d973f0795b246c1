package exec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

func TestDrainMemLimit(t *testing.T) {
	rows := make([]expr.Row, 100)
	for i := range rows {
		rows[i] = expr.Row{types.NewUtf8(strings.Repeat("x", 1000))}
	}
	c := &Context{Ctx: context.Background(), MemLimit: 50_000}
	_, err := Drain(c, &sliceIter{rows: rows})
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != sqlerr.OutOfMemory {
		t.Fatalf("got %v, want 53200", err)
	}
	c = &Context{Ctx: context.Background(), MemLimit: 500_000}
	got, err := Drain(c, &sliceIter{rows: rows})
	if err != nil || len(got) != 100 {
		t.Fatalf("within the limit: %d rows, %v", len(got), err)
	}
	c = &Context{Ctx: context.Background()}
	if _, err := Drain(c, &sliceIter{rows: rows}); err != nil {
		t.Fatalf("no limit: %v", err)
	}
}

// TestDrainMemoryAccount checks that held rows are reserved in the
// statement's memory account too: over the account's limit (or the
// server's) the statement fails with 53200 whatever MemLimit says.
func TestDrainMemoryAccount(t *testing.T) {
	rows := make([]expr.Row, 100)
	for i := range rows {
		rows[i] = expr.Row{types.NewUtf8(strings.Repeat("x", 1000))}
	}
	mon := memory.NewMonitor("--max-memory", 80_000) // about 75 of the rows
	acct := mon.NewAccount("statement", 0)
	c := &Context{Ctx: memory.WithAccount(context.Background(), acct)}
	if _, err := Drain(c, &sliceIter{rows: rows}); sqlerr.Code(err) != sqlerr.OutOfMemory {
		t.Fatalf("over the server's budget: %v, want 53200", err)
	}
	acct.Close()
	acct = mon.NewAccount("statement", 0)
	c = &Context{Ctx: memory.WithAccount(context.Background(), acct)}
	rows = rows[:50]
	if _, err := Drain(c, &sliceIter{rows: rows}); err != nil {
		t.Fatalf("within the budget: %v", err)
	}
	if acct.Used() < 50_000 {
		t.Fatalf("50 rows of 1000 bytes reserved %d bytes", acct.Used())
	}
	acct.Close()
	if mon.Used() != 0 {
		t.Fatalf("the budget holds %d after the statement", mon.Used())
	}
}
