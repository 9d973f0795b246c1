package expr

import (
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Node is implemented by expressions defined outside this package (for
// example subquery nodes built by the SELECT planner) so that Children,
// Walk and Transform can see into them.
type Node interface {
	Expr
	// Children returns the direct sub-expressions.
	Children() []Expr
	// WithChildren returns a copy of the node with its children replaced,
	// in the order Children returned them.
	WithChildren(children []Expr) (Expr, error)
}

// Children returns the direct sub-expressions of e, in evaluation order.
func Children(e Expr) []Expr {
	switch n := e.(type) {
	case *ColumnRef, *Const, *Param:
		return nil
	case *Compare:
		return []Expr{n.L, n.R}
	case *And:
		return []Expr{n.L, n.R}
	case *Or:
		return []Expr{n.L, n.R}
	case *Not:
		return []Expr{n.E}
	case *IsNull:
		return []Expr{n.E}
	case *IsTruth:
		return []Expr{n.E}
	case *In:
		return append([]Expr{n.E}, n.List...)
	case *RowCompare:
		return append(append([]Expr(nil), n.L...), n.R...)
	case *RowIn:
		out := append([]Expr(nil), n.L...)
		for _, r := range n.List {
			out = append(out, r...)
		}
		return out
	case *Arith:
		return []Expr{n.L, n.R}
	case *Unary:
		return []Expr{n.E}
	case *Concat:
		return []Expr{n.L, n.R}
	case *Like:
		return []Expr{n.E, n.Pattern}
	case *Case:
		var out []Expr
		if n.Operand != nil {
			out = append(out, n.Operand)
		}
		for _, w := range n.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if n.Else != nil {
			out = append(out, n.Else)
		}
		return out
	case *Cast:
		return []Expr{n.E}
	case *Coalesce:
		return append([]Expr(nil), n.Args...)
	case *Func:
		return append([]Expr(nil), n.Args...)
	case Node:
		return n.Children()
	}
	return nil
}

// Walk calls fn for e and then, if fn returned true, for each descendant
// (pre-order).
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	for _, c := range Children(e) {
		Walk(c, fn)
	}
}

// Transform rebuilds e bottom-up: each node's children are transformed
// first, then fn is called with the node (a copy when a child changed) and
// its result replaces it. Nodes are never modified in place, so the input
// tree stays valid. The planner uses it to remap column indexes.
func Transform(e Expr, fn func(Expr) (Expr, error)) (Expr, error) {
	if e == nil {
		return nil, nil
	}
	kids := Children(e)
	if len(kids) > 0 {
		newKids := make([]Expr, len(kids))
		changed := false
		for i, k := range kids {
			nk, err := Transform(k, fn)
			if err != nil {
				return nil, err
			}
			newKids[i] = nk
			changed = changed || nk != k
		}
		if changed {
			var err error
			if e, err = withChildren(e, newKids); err != nil {
				return nil, err
			}
		}
	}
	return fn(e)
}

// IsDeterministic reports whether e contains no non-deterministic function
// (random(), now()). Computed columns must be deterministic.
func IsDeterministic(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		if f, isFunc := x.(*Func); isFunc && !f.Deterministic {
			ok = false
		}
		if _, isExt := x.(Node); isExt {
			// External nodes (subqueries) are not known to be deterministic.
			ok = false
		}
		return ok
	})
	return ok
}

// IsRowIndependent reports whether e's value depends neither on the input
// row nor on anything but the parameters: no ColumnRef, no external node,
// every function deterministic. The planner evaluates such expressions once
// per execution (for example the bounds of a key range `k = $1 + 1`).
func IsRowIndependent(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		switch n := x.(type) {
		case *ColumnRef, Node:
			ok = false
		case *Func:
			if !n.Deterministic {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// HasParams reports whether e refers to a parameter.
func HasParams(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*Param); ok {
			found = true
		}
		return !found
	})
	return found
}

// withChildren returns a copy of e with its children replaced (in the
// order Children returns them).
func withChildren(e Expr, k []Expr) (Expr, error) {
	switch n := e.(type) {
	case *Compare:
		return &Compare{Op: n.Op, L: k[0], R: k[1]}, nil
	case *And:
		return &And{L: k[0], R: k[1]}, nil
	case *Or:
		return &Or{L: k[0], R: k[1]}, nil
	case *Not:
		return &Not{E: k[0]}, nil
	case *IsNull:
		return &IsNull{E: k[0], Negate: n.Negate}, nil
	case *IsTruth:
		return &IsTruth{E: k[0], Truth: n.Truth, Negate: n.Negate}, nil
	case *In:
		return NewIn(k[0], k[1:], n.Negate), nil
	case *RowCompare:
		l := len(n.L)
		return &RowCompare{Op: n.Op, L: k[:l:l], R: k[l:]}, nil
	case *RowIn:
		l := len(n.L)
		out := &RowIn{L: k[:l:l], Negate: n.Negate}
		for i := range n.List {
			out.List = append(out.List, k[l+i*l:l+(i+1)*l:l+(i+1)*l])
		}
		return out, nil
	case *Arith:
		return &Arith{Op: n.Op, L: k[0], R: k[1], Typ: n.Typ}, nil
	case *Unary:
		return &Unary{Op: n.Op, E: k[0], Typ: n.Typ}, nil
	case *Concat:
		return &Concat{L: k[0], R: k[1], Typ: n.Typ}, nil
	case *Like:
		return NewLike(k[0], k[1], n.Escape, n.Negate, n.CaseInsensitive)
	case *Case:
		c := &Case{Typ: n.Typ}
		if n.Operand != nil {
			c.Operand, k = k[0], k[1:]
		}
		for range n.Whens {
			c.Whens = append(c.Whens, When{Cond: k[0], Result: k[1]})
			k = k[2:]
		}
		if n.Else != nil {
			c.Else = k[0]
		}
		return c, nil
	case *Cast:
		return &Cast{E: k[0], To: n.To}, nil
	case *Coalesce:
		return &Coalesce{Args: k, Typ: n.Typ}, nil
	case *Func:
		c := *n
		c.Args = k
		return &c, nil
	case Node:
		return n.WithChildren(k)
	}
	return nil, sqlerr.New(sqlerr.InternalError, "expr: cannot rebuild %T", e)
}
