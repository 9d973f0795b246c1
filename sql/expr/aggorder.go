package expr

import (
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Aggregate ORDER BY and FILTER. array_agg(x ORDER BY k DESC) feeds its
// inputs sorted by k; FILTER (WHERE c) of array_agg, which keeps NULL
// inputs, skips the rows where c is not true (the other aggregates ignore
// NULLs, and their FILTER is folded into the argument by the dialect
// front). The executor evaluates a call's input with AggSpec.Input and
// hands it to the accumulator with AggSpec.Add.

// AggOrder is one ORDER BY key of an aggregate call.
type AggOrder struct {
	Expr       Expr
	Desc       bool
	NullsFirst bool
}

// AggInput is one row's input to an aggregate: the argument's value and
// the ORDER BY keys. Skip is set when FILTER rejected the row.
type AggInput struct {
	V    types.Value
	Keys []types.Value
	Skip bool
}

// Input evaluates s's argument, FILTER and ORDER BY keys on row r. Keys
// is a fresh slice (the accumulator keeps it).
func (s *AggSpec) Input(c *Context, r Row) (AggInput, error) {
	var in AggInput
	if s.Filter != nil {
		v, err := s.Filter.Eval(c, r)
		if err != nil {
			return in, err
		}
		if v.IsNull() || !v.Bool() {
			in.Skip = true
			return in, nil
		}
	}
	if s.Arg != nil {
		v, err := s.Arg.Eval(c, r)
		if err != nil {
			return in, err
		}
		in.V = v
	}
	if len(s.Order) > 0 {
		in.Keys = make([]types.Value, len(s.Order))
		for i, o := range s.Order {
			v, err := o.Expr.Eval(c, r)
			if err != nil {
				return in, err
			}
			in.Keys[i] = v
		}
	}
	return in, nil
}

// Add feeds in to a, an accumulator made by s.New.
func (s *AggSpec) Add(a AggFunc, in AggInput) error {
	if in.Skip {
		return nil
	}
	if o, ok := a.(*orderedAgg); ok {
		o.rows = append(o.rows, in)
		return nil
	}
	return a.Add(in.V)
}

// orderedAgg collects the inputs of an aggregate with ORDER BY and feeds
// them, sorted (stably: ties keep the input order), to a fresh
// accumulator of the call without ORDER BY when the result is asked for.
type orderedAgg struct {
	spec *AggSpec // without Order
	keys []AggOrder
	rows []AggInput
	// distinct drops repeated inputs after sorting (array_agg and
	// string_agg, whose own DISTINCT would sort by value).
	distinct bool
}

func (a *orderedAgg) Add(v types.Value) error {
	a.rows = append(a.rows, AggInput{V: v})
	return nil
}

func (a *orderedAgg) Result() (types.Value, error) {
	rows := slices.Clone(a.rows)
	slices.SortStableFunc(rows, func(x, y AggInput) int {
		for i, k := range a.keys {
			if c := compareKey(x.Keys[i], y.Keys[i], k.Desc, k.NullsFirst); c != 0 {
				return c
			}
		}
		return 0
	})
	inner := a.spec.New()
	var seen map[string]struct{}
	var buf []byte
	if a.distinct {
		seen = map[string]struct{}{}
	}
	for _, r := range rows {
		if seen != nil {
			buf = types.AppendGroupKey(buf[:0], r.V)
			if _, dup := seen[string(buf)]; dup {
				continue
			}
			seen[string(buf)] = struct{}{}
		}
		if err := inner.Add(r.V); err != nil {
			return types.Value{}, err
		}
	}
	return inner.Result()
}

// compareKey orders two sort key values: NULLs first or last, the others
// ascending or descending.
func compareKey(x, y types.Value, desc, nullsFirst bool) int {
	switch xn, yn := x.IsNull(), y.IsNull(); {
	case xn && yn:
		return 0
	case xn != yn:
		if xn == nullsFirst {
			return -1
		}
		return 1
	}
	c := types.Compare(x, y)
	if desc {
		c = -c
	}
	return c
}

// orderString renders the ORDER BY of an aggregate call for EXPLAIN.
func (s *AggSpec) orderString() string {
	if len(s.Order) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(" ORDER BY ")
	for i, o := range s.Order {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(o.Expr.String())
		if o.Desc {
			sb.WriteString(" DESC")
		}
		if o.NullsFirst {
			sb.WriteString(" NULLS FIRST")
		} else {
			sb.WriteString(" NULLS LAST")
		}
	}
	return sb.String()
}
