package expr

import "github.com/pivotdb/pivotdb/sql/types"

// fold replaces a node whose children are all constants by its value.
// Non-deterministic functions and external nodes are never folded, and a
// node whose evaluation fails is kept as it is, so the error surfaces only
// if the expression is evaluated at run time (CASE WHEN false THEN 1/0 ...
// must not fail).
func fold(e Expr) Expr {
	switch n := e.(type) {
	case *Const, *Param, *ColumnRef, Node:
		return e
	case *Func:
		if !n.Deterministic {
			return e
		}
	case *Cast:
		if zoneDependent(n.E.Type(), n.To) {
			return e
		}
	case *Arith:
		if n.Typ.Family == types.TimestampTZ {
			// ± an interval's months and days reads the session's zone.
			return e
		}
	}
	for _, c := range Children(e) {
		if _, ok := c.(*Const); !ok {
			return e
		}
	}
	v, err := e.Eval(&Context{}, nil)
	if err != nil {
		return e
	}
	t := e.Type()
	if v.Family() == types.Unknown && t.Family != types.Unknown {
		return e
	}
	return &Const{Value: v, Typ: t}
}
