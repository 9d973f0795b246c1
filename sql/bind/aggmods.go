package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Aggregate ORDER BY and FILTER. The dialect front wraps an aggregate's
// first argument in parser.AggOrderFunc (ORDER BY) and, for array_agg,
// parser.AggFilterFunc (FILTER); see sql/parser/aggcall.go. takeAggMods
// takes them off; aggregation.applyMods binds them over the aggregation's
// input and sets AggSpec.Order and Filter.

// aggMods are the ORDER BY keys and the FILTER condition of one call.
type aggMods struct {
	order  []aggOrderKey
	filter ast.ExprNode
}

type aggOrderKey struct {
	expr  ast.ExprNode
	flags int64
}

// takeAggMods returns arg without its ORDER BY and FILTER markers.
func takeAggMods(arg ast.ExprNode) (ast.ExprNode, aggMods, error) {
	var m aggMods
	if call, ok := arg.(*ast.FuncCallExpr); ok && call.FnName.L == parser.AggOrderFunc {
		if len(call.Args) < 3 || len(call.Args)%2 != 1 {
			return nil, m, sqlerr.New(sqlerr.InternalError, "bind: malformed %s", parser.AggOrderFunc)
		}
		arg = call.Args[0]
		for i := 1; i < len(call.Args); i += 2 {
			v, ok := call.Args[i+1].(*test_driver.ValueExpr)
			flags, isInt := int64(0), false
			if ok {
				flags, isInt = v.GetValue().(int64)
			}
			if !isInt {
				return nil, m, sqlerr.New(sqlerr.InternalError, "bind: malformed %s", parser.AggOrderFunc)
			}
			m.order = append(m.order, aggOrderKey{expr: unparen(call.Args[i]), flags: flags})
		}
	}
	if call, ok := arg.(*ast.FuncCallExpr); ok && call.FnName.L == parser.AggFilterFunc {
		if len(call.Args) != 2 {
			return nil, m, sqlerr.New(sqlerr.InternalError, "bind: malformed %s", parser.AggFilterFunc)
		}
		arg, m.filter = unparen(call.Args[0]), call.Args[1]
	}
	return arg, m, nil
}

func unparen(n ast.ExprNode) ast.ExprNode {
	for {
		p, ok := n.(*ast.ParenthesesExpr)
		if !ok {
			return n
		}
		n = p.Expr
	}
}

// applyMods binds m's ORDER BY keys and FILTER over the aggregation's
// input into spec. args are the call's arguments (without markers): with
// DISTINCT, every ORDER BY key must be one of them, as in PostgreSQL.
func (g *aggregation) applyMods(spec *expr.AggSpec, m aggMods, args []ast.ExprNode) error {
	if spec.Distinct {
		for _, k := range m.order {
			text := strings.ToLower(restore(k.expr))
			found := false
			for _, a := range args {
				found = found || strings.ToLower(restore(unparen(a))) == text
			}
			if !found {
				return sqlerr.New(sqlerr.InvalidColumnReference, "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
			}
		}
	}
	for _, k := range m.order {
		e, err := g.a.build(g.input, k.expr, nil)
		if err != nil {
			return err
		}
		if e.Type().Family == types.Unknown {
			// An untyped literal or parameter sorts as text.
			if e, err = coerceTo(e, types.TypeUtf8); err != nil {
				return err
			}
		}
		o := expr.AggOrder{Expr: e, Desc: k.flags&parser.AggOrderDesc != 0}
		switch {
		case k.flags&parser.AggOrderNullsFirst != 0:
			o.NullsFirst = true
		case k.flags&parser.AggOrderNullsLast != 0:
		default:
			o.NullsFirst = planner.NullsDefault(o.Desc, g.a.pg())
		}
		spec.Order = append(spec.Order, o)
	}
	if m.filter != nil {
		g.a.hintParam(m.filter, types.TypeBool)
		c, err := g.a.build(g.input, m.filter, nil)
		if err != nil {
			return err
		}
		switch f := c.Type().Family; f {
		case types.Bool:
		case types.Null, types.Unknown:
			if c, err = coerceTo(c, types.TypeBool); err != nil {
				return err
			}
		default:
			return sqlerr.New(sqlerr.DatatypeMismatch, "argument of FILTER must be type boolean, not type %s", c.Type().PGName())
		}
		spec.Filter = c
	}
	return nil
}
