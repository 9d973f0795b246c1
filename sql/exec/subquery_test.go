package exec

import (
	"math/rand"
	"testing"

	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// oracle computes IN, ANY and ALL from their definitions with the expr
// package's own three-valued logic: L IN (r1, r2, ...) is
// (L = r1) OR (L = r2) OR ... (FALSE for no rows), L op ANY is the OR of
// L op ri, L op ALL the AND (TRUE for no rows); a row equality is the AND
// of its column equalities.
func oracle(t *testing.T, left expr.Row, rows []expr.Row, op expr.CmpOp, kind SubqueryKind) types.Value {
	t.Helper()
	var acc expr.Expr = expr.NewConst(types.NewBool(kind == SubAll))
	for _, r := range rows {
		var cmp expr.Expr
		for i := range left {
			c := &expr.Compare{Op: op, L: expr.NewConst(left[i]), R: expr.NewConst(r[i])}
			if cmp == nil {
				cmp = c
			} else {
				cmp = &expr.And{L: cmp, R: c}
			}
		}
		if kind == SubAll {
			acc = &expr.And{L: acc, R: cmp}
		} else {
			acc = &expr.Or{L: acc, R: cmp}
		}
	}
	v, err := acc.Eval(&expr.Context{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func randValue(rng *rand.Rand) types.Value {
	switch rng.Intn(6) {
	case 0:
		return types.NullValue
	case 1:
		return types.NewDouble(float64(rng.Intn(4)))
	}
	return types.NewInt64(int64(rng.Intn(4)))
}

func show(v types.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	return v.Text()
}

// TestSubqueryPredicatesRandom checks IN / NOT IN (hashed and linear),
// ANY and ALL against the oracle on random rows with NULLs and mixed
// numeric families.
func TestSubqueryPredicatesRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	ops := []expr.CmpOp{expr.EQ, expr.NE, expr.LT, expr.LE, expr.GT, expr.GE}
	for iter := 0; iter < 20000; iter++ {
		width := 1 + rng.Intn(2)
		n := rng.Intn(14)
		rows := make([]expr.Row, n)
		for i := range rows {
			rows[i] = make(expr.Row, width)
			for j := range rows[i] {
				rows[i][j] = randValue(rng)
			}
		}
		left := make(expr.Row, width)
		for j := range left {
			left[j] = randValue(rng)
		}
		res := &subResult{rows: rows}
		if rng.Intn(2) == 0 {
			// The hashed form runSubquery builds for large results.
			res.set = map[string]struct{}{}
			for _, r := range rows {
				hasNull := false
				for _, v := range r {
					hasNull = hasNull || v.IsNull()
				}
				if hasNull {
					res.nullRows = append(res.nullRows, r)
				} else {
					res.set[types.GroupKey(r)] = struct{}{}
				}
			}
		}
		s := &Subquery{Kind: SubIn}
		got, want := s.in(res, left), oracle(t, left, rows, expr.EQ, SubIn)
		if show(got) != show(want) {
			t.Fatalf("%v IN %v: got %s, want %s", left, rows, show(got), show(want))
		}
		if width != 1 {
			continue
		}
		op := ops[rng.Intn(len(ops))]
		for _, kind := range []SubqueryKind{SubAny, SubAll} {
			got := quantified(rows, left, op, kind == SubAny)
			want := oracle(t, left, rows, op, kind)
			if show(got) != show(want) {
				t.Fatalf("%v %s ANY/ALL(%d) %v: got %s, want %s", left, op, kind, rows, show(got), show(want))
			}
		}
	}
}
