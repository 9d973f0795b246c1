package exec

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/expr"
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
