package bind

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// AsOf is a bound AS OF SYSTEM TIME clause (CockroachDB's historical
// reads): either an absolute timestamp, or an offset from the statement's
// start, which is only known when it runs. Timestamps are those of the
// hybrid logical clock: wall-clock nanoseconds and a logical counter.
type AsOf struct {
	// Relative is set for an interval ('-10s', INTERVAL '-1 hour') and for
	// follower_read_timestamp(): the read is at the statement's time plus
	// Offset (negative).
	Relative bool
	Offset   time.Duration
	// Wall and Logical are the absolute timestamp (Relative false): a
	// timestamp, an integer of nanoseconds, or a decimal
	// "nanoseconds.logical" as CockroachDB prints cluster_logical_timestamp().
	Wall    int64
	Logical int32
	// FollowerRead marks follower_read_timestamp(): a time old enough
	// that any replica can serve it.
	FollowerRead bool
}

// FollowerReadOffset is how far back follower_read_timestamp() reads:
// CockroachDB documents 4.8s with its default closed-timestamp settings.
const FollowerReadOffset = -4800 * time.Millisecond

// Timestamp resolves the clause for a statement that started at stmt and
// runs at now: the (wall, logical) timestamp to read at. A time in the
// future is CockroachDB's error.
func (a *AsOf) Timestamp(stmt, now time.Time) (wall int64, logical int32, err error) {
	wall, logical = a.Wall, a.Logical
	if a.Relative {
		wall, logical = stmt.Add(a.Offset).UnixNano(), 0
	}
	if wall > now.UnixNano() {
		return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue,
			"AS OF SYSTEM TIME: cannot specify timestamp in the future (%d.%010d > %d.%010d)", wall, logical, now.UnixNano(), 0)
	}
	return wall, logical, nil
}

func (a *AsOf) String() string {
	switch {
	case a.FollowerRead:
		return "follower_read_timestamp()"
	case a.Relative:
		return fmt.Sprintf("statement time %s", a.Offset)
	}
	return fmt.Sprintf("%d.%010d", a.Wall, a.Logical)
}

// asOfError is one of CockroachDB's AS OF SYSTEM TIME errors. CockroachDB
// gives most of them no SQLSTATE; PivotDB's is 22023
// (invalid_parameter_value), the code PostgreSQL uses for a bad value of a
// statement option.
func asOfError(format string, args ...any) error {
	return sqlerr.New(sqlerr.InvalidParameterValue, "AS OF SYSTEM TIME: "+format, args...)
}

// bindAsOf evaluates an AS OF SYSTEM TIME expression as CockroachDB does
// (asof.Eval and DatumToHLC): follower_read_timestamp(), or a constant
// expression that is a timestamp, an integer or decimal of nanoseconds, an
// interval, or a string holding one of those (tried in that order).
func (a *binder) bindAsOf(c *parser.AsOfClause) (*AsOf, error) {
	if c == nil {
		return nil, nil
	}
	if call, ok := c.Expr.(*ast.FuncCallExpr); ok {
		switch call.FnName.L {
		case "follower_read_timestamp", "experimental_follower_read_timestamp":
			if len(call.Args) > 0 {
				return nil, sqlerr.New(sqlerr.UndefinedFunction, "unknown signature: %s(%s) (desired <timestamptz>)",
					call.FnName.L, strings.Repeat("string, ", len(call.Args)-1)+"string")
			}
			return &AsOf{Relative: true, Offset: FollowerReadOffset, FollowerRead: true}, nil
		case "with_min_timestamp", "with_max_staleness":
			return nil, sqlerr.NotSupported("bounded staleness reads (%s)", call.FnName.L)
		}
	}
	if err := asOfConstant(c.Expr); err != nil {
		return nil, err
	}
	e, err := a.build(nil, c.Expr, nil)
	if err != nil {
		return nil, err
	}
	v, err := e.Eval(a.evalContext(), nil)
	if err != nil {
		return nil, err
	}
	out := &AsOf{}
	switch f := v.Family(); {
	case f == types.Unknown || f == types.Utf8 || f == types.String:
		if err := a.asOfString(out, v.Str()); err != nil {
			return nil, err
		}
	case f == types.Timestamp || f == types.TimestampTZ:
		out.Wall = v.Int() * 1000
	case f.IsInteger():
		out.Wall = v.Int()
	case f == types.Decimal:
		if out.Wall, out.Logical, err = decimalToHLC(v.Dec()); err != nil {
			return nil, err
		}
	case f == types.Interval:
		// Its span, with 30-day months and 24-hour days, as CockroachDB
		// takes an interval's length here.
		m, ok := v.IntervalMicros()
		if !ok || m < math.MinInt64/1000 {
			return nil, asOfError("interval value %s out of range", quoteInterval(v))
		}
		if m >= 0 {
			return nil, asOfError("interval value %s too large, AS OF interval must be <= -1µs", quoteInterval(v))
		}
		out.Relative, out.Offset = true, time.Duration(m)*time.Microsecond
	default:
		return nil, asOfError("expected timestamp, decimal, or interval, got %s", e.Type().PGName())
	}
	if !out.Relative {
		switch {
		case out.Wall == 0 && out.Logical == 0:
			return nil, asOfError("zero timestamp is invalid")
		case out.Wall < 0:
			return nil, asOfError("timestamp before 1970-01-01T00:00:00Z is invalid")
		}
	}
	return out, nil
}

func quoteInterval(v types.Value) string {
	return "'" + v.Text() + "'"
}

// asOfString reads a string value: a timestamp, a decimal, or an
// interval, in CockroachDB's order.
func (a *binder) asOfString(out *AsOf, s string) error {
	loc := time.UTC
	if a.env.Settings != nil {
		loc = a.env.Settings.Zone()
	}
	if micros, err := types.ParseTimestampIn(s, loc); err == nil {
		out.Wall = micros * 1000
		return nil
	}
	if d, _, err := apd.NewFromString(strings.TrimSpace(s)); err == nil {
		out.Wall, out.Logical, err = decimalToHLC(d)
		return err
	}
	micros, ok := parseAsOfInterval(s)
	if !ok {
		return asOfError("value is neither timestamp, decimal, nor interval")
	}
	quoted := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	switch {
	case micros == 0:
		return asOfError("interval value %s too small, absolute value must be >= 1µs", quoted)
	case micros > 0:
		return asOfError("interval value %s too large, AS OF interval must be <= -1µs", quoted)
	}
	out.Relative, out.Offset = true, time.Duration(micros)*time.Microsecond
	return nil
}

// parseAsOfInterval reads an interval as CockroachDB's AS OF SYSTEM TIME
// takes it: Go's compact form ('-10s', '-1h30m', '-500ms', '-1us') or
// PostgreSQL's interval input ('-1 hour', '-00:00:10'); the result is in
// microseconds, rounded as an interval value is.
func parseAsOfInterval(s string) (int64, bool) {
	t := strings.TrimSpace(s)
	if d, err := time.ParseDuration(t); err == nil {
		return d.Round(time.Microsecond).Microseconds(), true
	}
	if m, err := types.ParseInterval(t); err == nil {
		return m, true
	}
	return 0, false
}

// decimalToHLC reads CockroachDB's decimal timestamp: the integer part is
// wall-clock nanoseconds, the first ten digits of the fraction the
// logical counter (hlc.DecimalToHLC, errors 42601 as there).
func decimalToHLC(d *apd.Decimal) (int64, int32, error) {
	if d.Negative {
		return 0, 0, sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME: cannot be negative")
	}
	var integral, frac apd.Decimal
	d.Modf(&integral, &frac)
	wall, err := integral.Int64()
	if err != nil {
		return 0, 0, sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME: converting timestamp to integer: %v", err)
	}
	if frac.IsZero() {
		return wall, 0, nil
	}
	var logical apd.Decimal
	if _, err := apd.BaseContext.Mul(&logical, &frac, apd.New(1, 10)); err != nil {
		return 0, 0, sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME: determining value of logical clock: %v", err)
	}
	var whole, rest apd.Decimal
	logical.Modf(&whole, &rest)
	if !rest.IsZero() {
		return 0, 0, sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME: logical part has too many digits")
	}
	counter, err := whole.Int64()
	if err != nil {
		return 0, 0, sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME: logical part has too many digits")
	}
	if counter > 1<<31-1 {
		return 0, 0, sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME: logical clock too large: %d", counter)
	}
	return wall, int32(counter), nil
}

// asOfConstant refuses what CockroachDB refuses in AS OF SYSTEM TIME:
// subqueries (0A000) and anything not constant — column references,
// functions such as now() (CockroachDB's "only constant expressions").
func asOfConstant(e ast.ExprNode) error {
	v := &asOfChecker{}
	e.Accept(v)
	return v.err
}

type asOfChecker struct{ err error }

func (v *asOfChecker) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	switch n := n.(type) {
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr:
		v.err = sqlerr.New(sqlerr.FeatureNotSupported, "subqueries are not allowed in AS OF SYSTEM TIME")
	case *test_driver.ValueExpr, *ast.UnaryOperationExpr, *ast.BinaryOperationExpr, *ast.ParenthesesExpr:
	case *ast.FuncCallExpr:
		// The dialect front's spellings of casts and ||, which are
		// constant when their operands are.
		switch n.FnName.L {
		case "pivot_cast", "concat":
		default:
			v.err = asOfError("only constant expressions or follower_read_timestamp are allowed")
		}
	default:
		v.err = asOfError("only constant expressions or follower_read_timestamp are allowed")
	}
	return n, v.err != nil
}

func (v *asOfChecker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// StatementAsOf binds the AS OF SYSTEM TIME clause of a SELECT on its own,
// before the rest: the session binds a historical statement against the
// catalog of its time (sql/session_asof.go). It is nil for statements
// without the clause and for those that refuse it (EXPLAIN, DECLARE, WITH
// ... INSERT); Bind reports those, and the clause's own errors, as ever.
func StatementAsOf(st *parser.Statement, env *Env) *AsOf {
	if st.AsOf == nil || len(st.WithDML) > 0 || st.Cursor != nil {
		return nil
	}
	switch st.AST.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
	default:
		return nil
	}
	params := make([]types.Type, st.NumParams)
	for i := range params {
		params[i] = types.TypeUnknown
	}
	a := &binder{env: env, snap: env.Snapshot, stmt: st, params: params}
	asOf, err := a.bindAsOf(st.AsOf)
	if err != nil {
		return nil
	}
	return asOf
}
