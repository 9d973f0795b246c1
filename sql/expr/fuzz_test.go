package expr

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// exprGen writes random SQL expressions over the fixture columns.
type exprGen struct {
	rng   *rand.Rand
	names []string
}

var genLiterals = []string{"0", "1", "-1", "7", "2", "9223372036854775807", "9223372036854775808",
	"18446744073709551615", "1.5", "0.0", "-2.25", "1e3", "'abc'", "''", "'7'", "'2024-01-01'", "'PT1H'",
	"'true'", "NULL", "TRUE", "FALSE", "?", "'%a_'", "'ÄÖ'"}

var genBinary = []string{"+", "-", "*", "/", "%", "DIV", "=", "<>", "<", "<=", ">", ">=", "<=>",
	"AND", "OR", "XOR", "||", "LIKE", "NOT LIKE", "ILIKE"}

var genTypes = []string{"Int32", "Int64", "Uint8", "Uint64", "Double", "Float", "Decimal", "Decimal(5,2)",
	"Utf8", "String", "Bool", "Date", "Timestamp", "Datetime", "Interval", "Json", "varchar(2)"}

func (g *exprGen) gen(depth int) string {
	if depth <= 0 || g.rng.IntN(4) == 0 {
		if g.rng.IntN(2) == 0 {
			return g.names[g.rng.IntN(len(g.names))]
		}
		return genLiterals[g.rng.IntN(len(genLiterals))]
	}
	d := depth - 1
	switch g.rng.IntN(12) {
	case 0:
		return "-" + g.gen(d)
	case 1:
		return "NOT " + g.gen(d)
	case 2:
		return g.gen(d) + " IS " + []string{"NULL", "NOT NULL", "TRUE", "NOT FALSE"}[g.rng.IntN(4)]
	case 3:
		n := 1 + g.rng.IntN(10)
		items := make([]string, n)
		for i := range items {
			items[i] = g.gen(d - 1)
		}
		not := ""
		if g.rng.IntN(2) == 0 {
			not = "NOT "
		}
		return g.gen(d) + " " + not + "IN (" + strings.Join(items, ", ") + ")"
	case 4:
		return g.gen(d) + " BETWEEN " + g.gen(d) + " AND " + g.gen(d)
	case 5:
		if g.rng.IntN(2) == 0 {
			return "CASE WHEN " + g.gen(d) + " THEN " + g.gen(d) + " ELSE " + g.gen(d) + " END"
		}
		return "CASE " + g.gen(d) + " WHEN " + g.gen(d) + " THEN " + g.gen(d) + " END"
	case 6, 7:
		names := FunctionNames()
		name := names[g.rng.IntN(len(names))]
		if name == "pg_sleep" {
			name = "abs"
		}
		args := make([]string, g.rng.IntN(4))
		for i := range args {
			args[i] = g.gen(d)
		}
		return name + "(" + strings.Join(args, ", ") + ")"
	case 8:
		return "pivot_cast(" + g.gen(d) + ", '" + genTypes[g.rng.IntN(len(genTypes))] + "')"
	case 9:
		return "(" + g.gen(d) + ", " + g.gen(d) + ") " + []string{"=", "<", "IN", "<>"}[g.rng.IntN(4)] + " (" + g.gen(d) + ", " + g.gen(d) + ")"
	}
	return "(" + g.gen(d) + " " + genBinary[g.rng.IntN(len(genBinary))] + " " + g.gen(d) + ")"
}

// TestRandomExpressions builds and evaluates random expressions: nothing
// may panic, every error must carry a user-facing SQLSTATE (XX000 means a
// bug), and a non-NULL result must be of the expression's static type.
func TestRandomExpressions(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	g := &exprGen{rng: rng}
	for _, c := range fixture {
		if c.name != "a" {
			g.names = append(g.names, c.name)
		}
	}
	p := newParser()
	iters := 20000
	if testing.Short() {
		iters = 2000
	}
	built, evaluated := 0, 0
	for iter := 0; iter < iters; iter++ {
		sql := g.gen(1 + rng.IntN(5))
		n, err := parseExpr(p, sql)
		if err != nil {
			continue
		}
		params := make([]types.Value, 8)
		for i := range params {
			switch rng.IntN(4) {
			case 0:
				params[i] = types.NewUnknown(genLiterals[rng.IntN(len(genLiterals))])
			case 1:
				params[i] = types.NewInt64(rng.Int64N(100) - 50)
			case 2:
				params[i] = types.NewUtf8("x")
			}
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("seed %d: panic on %s: %v", seed, sql, r)
				}
			}()
			b := newTestBuilder()
			e, err := b.Build(n)
			if err != nil {
				if sqlerr.Code(err) == sqlerr.InternalError {
					t.Fatalf("seed %d: build %s: internal error %v", seed, sql, err)
				}
				return
			}
			built++
			_ = e.String()
			for _, pt := range b.ParamTypes {
				if pt.Family == types.Null {
					t.Fatalf("seed %d: %s: parameter typed Null", seed, sql)
				}
			}
			ctx := &Context{Now: testNow, Params: params}
			v, err := e.Eval(ctx, fixtureRow())
			if err != nil {
				if sqlerr.Code(err) == sqlerr.InternalError {
					t.Fatalf("seed %d: eval %s (%s): internal error %v", seed, sql, e, err)
				}
				return
			}
			evaluated++
			if want := e.Type().Family; !v.IsNull() && want != types.Unknown && v.Family() != want {
				t.Fatalf("seed %d: %s (%s): value %v of family %v, static type %v", seed, sql, e, v, v.Family(), e.Type())
			}
			// Transform with the identity rebuilds an equivalent tree.
			e2, err := Transform(e, func(x Expr) (Expr, error) { return x, nil })
			if err != nil {
				t.Fatalf("seed %d: transform %s: %v", seed, sql, err)
			}
			v2, err := e2.Eval(ctx, fixtureRow())
			if err != nil || types.Compare(v, v2) != 0 {
				if !IsDeterministic(e) {
					return
				}
				t.Fatalf("seed %d: %s: %v after Transform, %v before (%v)", seed, sql, v2, v, err)
			}
		}()
	}
	t.Logf("seed %d: %d built, %d evaluated", seed, built, evaluated)
	if built < iters/20 {
		t.Errorf("only %d of %d random expressions built", built, iters)
	}
}
