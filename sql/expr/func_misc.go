package expr

import (
	"fmt"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/pivotdb/pivotdb/sql/farmhash"
	"github.com/pivotdb/pivotdb/sql/types"
)

func init() {
	register(&funcDef{1, -1, buildCoalesce}, "coalesce")
	register(&funcDef{2, 2, buildCoalesce}, "ifnull", "nvl")
	register(&funcDef{2, 2, buildNullIf}, "nullif")
	register(&funcDef{3, 3, buildIf}, "if", "iif")
	register(&funcDef{1, -1, buildGreatest(1)}, "greatest")
	register(&funcDef{1, -1, buildGreatest(-1)}, "least")
	register(&funcDef{1, -1, buildFarmHash}, "farm_hash")
	// PostgreSQL's clock functions: an instant (timestamptz), or the
	// session zone's wall clock (localtimestamp, current_date).
	register(&funcDef{0, 0, buildClock(types.TypeTimestampTZ, false)},
		"now", "current_timestamp", "statement_timestamp", "transaction_timestamp")
	register(&funcDef{0, 0, buildClock(types.TypeTimestampTZ, true)}, "clock_timestamp")
	register(&funcDef{0, 0, buildLocalClock(types.TypeTimestamp)}, "localtimestamp")
	register(&funcDef{0, 0, buildLocalClock(types.T(types.Date))}, "current_date")
	// YQL's and MySQL's UTC clocks.
	register(&funcDef{0, 0, buildClock(types.TypeTimestamp, false)}, "currentutctimestamp", "utc_timestamp", "sysdate")
	register(&funcDef{0, 0, buildClock(types.T(types.Date), false)}, "curdate", "currentutcdate", "utc_date")
	register(&funcDef{0, 0, buildClock(types.T(types.Datetime), false)}, "currentutcdatetime")
	register(&funcDef{0, 0, buildLogicalTimestamp}, "cluster_logical_timestamp")
}

// buildLogicalTimestamp: CockroachDB's cluster_logical_timestamp(), the
// statement's read timestamp (Context.ReadWall, ReadLogical) as a decimal
// "wall nanoseconds.logical counter in ten digits", the form AS OF SYSTEM
// TIME reads back. CockroachDB returns its transaction's commit timestamp;
// PivotDB returns the snapshot the statement reads, which AS OF SYSTEM TIME
// with that value reproduces.
func buildLogicalTimestamp(_ *Builder, name string, args []Expr) (Expr, error) {
	f := newFunc(name, types.TypeDecimal, args, true, func(c *Context, _ []types.Value) (types.Value, error) {
		if c == nil || c.ReadWall == 0 {
			return types.NullValue, nil
		}
		d, _, err := apd.NewFromString(fmt.Sprintf("%d.%010d", c.ReadWall, c.ReadLogical))
		if err != nil {
			return types.Value{}, err
		}
		return types.NewDecimal(d), nil
	})
	f.Deterministic = false
	return f, nil
}

// buildCoalesce: coalesce(a, b, ...) and ifnull(a, b) are Coalesce nodes
// over the arguments' common type.
func buildCoalesce(b *Builder, name string, args []Expr) (Expr, error) {
	t, err := b.commonArgs("COALESCE", args, 0)
	if err != nil {
		return nil, err
	}
	return &Coalesce{Args: args, Typ: t}, nil
}

// buildNullIf: nullif(a, b) is NULL when a = b, else a; its type is a's.
func buildNullIf(b *Builder, name string, args []Expr) (Expr, error) {
	l, r, err := b.resolvePair(args[0], args[1])
	if err != nil {
		return nil, err
	}
	if !Comparable(l.Type(), r.Type()) {
		return nil, opNotExist("=", l.Type(), r.Type())
	}
	args[0], args[1] = l, r
	return newFunc(name, l.Type(), args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		if !a[0].IsNull() && !a[1].IsNull() && types.Compare(a[0], a[1]) == 0 {
			return types.NullValue, nil
		}
		return a[0], nil
	}), nil
}

// buildIf: if(c, a, b) is CASE WHEN c THEN a ELSE b END.
func buildIf(b *Builder, name string, args []Expr) (Expr, error) {
	cond, err := b.boolOperand(args[0], "IF")
	if err != nil {
		return nil, err
	}
	res := args[1:]
	t, err := b.commonArgs("IF", res, 0)
	if err != nil {
		return nil, err
	}
	return &Case{Whens: []When{{Cond: cond, Result: res[0]}}, Else: res[1], Typ: t}, nil
}

// buildGreatest: greatest/least over the common type, ignoring NULLs
// (NULL only when every argument is NULL), as in PostgreSQL.
func buildGreatest(sign int) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(b *Builder, name string, args []Expr) (Expr, error) {
		t, err := b.commonArgs(map[int]string{1: "GREATEST", -1: "LEAST"}[sign], args, 0)
		if err != nil {
			return nil, err
		}
		if !Comparable(t, t) || t.Family == types.Json {
			return nil, errSignature
		}
		return newFunc(name, t, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
			var best types.Value
			for _, v := range a {
				if !v.IsNull() && (best.IsNull() || types.Compare(v, best)*sign > 0) {
					best = v
				}
			}
			return best, nil
		}), nil
	}
}

// buildFarmHash is design §7's farm_hash: integers, bools and strings
// (Utf8 or String; untyped literals are strings), NULL hashing as 0; the
// result is Uint64, bit-compatible with YTsaurus.
func buildFarmHash(b *Builder, name string, args []Expr) (Expr, error) {
	for i := range args {
		e, err := b.resolve(args[i], types.TypeUtf8)
		if err != nil {
			return nil, err
		}
		args[i] = e
		switch f := e.Type().Family; {
		case f.IsInteger(), f == types.Bool, f == types.Utf8, f == types.String, f == types.Null:
		default:
			return nil, errSignature
		}
	}
	return newFunc(name, types.TypeUint64, args, false, func(_ *Context, a []types.Value) (types.Value, error) {
		return types.NewUint64(FarmHash(a)), nil
	}), nil
}

// FarmHash computes farm_hash over values of the accepted families (the
// planner calls it when it enumerates computed key columns).
func FarmHash(vals []types.Value) uint64 {
	h := farmhash.New()
	for _, v := range vals {
		switch f := v.Family(); {
		case f == types.Null:
			h.AddNull()
		case f == types.Bool:
			h.AddBool(v.Bool())
		case f.IsUnsigned():
			h.AddUint64(v.Uint())
		case f.IsInteger():
			h.AddInt64(v.Int())
		default:
			h.AddString(v.Str())
		}
	}
	return h.Sum64()
}

// buildClock: now() and friends read the statement time (Context.Now, or
// the wall clock when the caller left it zero); clock_timestamp() always
// reads the wall clock. All are non-deterministic, so never folded at
// build time: a prepared statement sees a new time at every execution.
func buildClock(t types.Type, wall bool) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(_ *Builder, name string, args []Expr) (Expr, error) {
		f := newFunc(name, t, args, true, func(c *Context, _ []types.Value) (types.Value, error) {
			now := time.Time{}
			if c != nil && !wall {
				now = c.Now
			}
			if now.IsZero() {
				now = time.Now()
			}
			micros := now.UnixMicro()
			switch t.Family {
			case types.Date:
				return types.NewDate(floorDiv64(micros, microsPerDay)), nil
			case types.Datetime:
				return types.NewDatetime(floorDiv64(micros, 1e6)), nil
			case types.TimestampTZ:
				return types.NewTimestampTZ(micros), nil
			}
			return types.NewTimestamp(micros), nil
		})
		f.Deterministic = false
		return f, nil
	}
}

func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// buildLocalClock is a clock function read in the session's time zone:
// localtimestamp (a timestamp) and current_date.
func buildLocalClock(t types.Type) func(b *Builder, name string, args []Expr) (Expr, error) {
	return func(_ *Builder, name string, args []Expr) (Expr, error) {
		f := newFunc(name, t, args, true, func(c *Context, _ []types.Value) (types.Value, error) {
			now := time.Time{}
			if c != nil {
				now = c.Now
			}
			if now.IsZero() {
				now = time.Now()
			}
			wall := types.WallMicros(now.UnixMicro(), c.zone())
			if t.Family == types.Date {
				return types.NewDate(floorDiv64(wall, microsPerDay)), nil
			}
			return types.NewTimestamp(wall), nil
		})
		f.Deterministic = false
		return f, nil
	}
}
