package sql

import (
	"context"
	"fmt"
	"testing"

	"github.com/pivotdb/pivotdb/sql/types"
)

// A set-returning SQL function's $n are its arguments, never the calling
// statement's parameters: the statement's $1 and $2 keep the types their
// own uses give them, and reach the function's arguments.
func TestSetFunctionParameters(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE FUNCTION evens(n int) RETURNS SETOF int LANGUAGE sql AS 'SELECT x FROM generate_series(1, $1) AS s(x) WHERE x % 2 = 0'")
	query(t, s, "CREATE FUNCTION tagged(n int, tag text) RETURNS TABLE (v int, t text) LANGUAGE sql AS $$ SELECT e, tag || $1 FROM evens(n) AS e $$")
	p, err := s.Prepare(context.Background(), "SELECT $1 || t, v FROM tagged($2, 'x')", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Sync()
	if got := fmt.Sprint(p.ParamTypes); got != fmt.Sprint([]types.Type{types.TypeUtf8, types.TypeInt32}) {
		t.Errorf("parameter types %s", got)
	}
	rows := query(t, s, "SELECT $1 || t, v FROM tagged($2, 'x') ORDER BY v", types.NewUtf8("<"), types.NewInt64(5))
	if got := fmt.Sprint(rows); got != `[["<x5" 2] ["<x5" 4]]` {
		t.Errorf("rows %s", got)
	}
}
