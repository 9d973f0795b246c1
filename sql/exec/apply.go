package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// applyIter runs a lateral join (planner.Apply): the right plan is built
// again for every left row, with the left row's values bound to its
// hidden parameters, as a correlated subquery runs.
type applyIter struct {
	c     *Context
	n     *planner.Apply
	left  Iter
	lrow  expr.Row // the current left row (a copy)
	right Iter
	sc    Context
	ev    expr.Context
	found bool
	out   expr.Row
	lw    int
}

func newApply(c *Context, n *planner.Apply) (Iter, error) {
	left, err := Build(c, n.Left)
	if err != nil {
		return nil, err
	}
	return &applyIter{c: c, n: n, left: left, lw: len(n.Left.Columns()), out: make(expr.Row, len(n.Cols))}, nil
}

// startRight builds the right plan for the current left row.
func (a *applyIter) startRight() error {
	need := len(a.c.Eval.Params)
	for _, s := range a.n.Slots {
		need = max(need, s)
	}
	params := make([]types.Value, need)
	copy(params, a.c.Eval.Params)
	for i, b := range a.n.Binds {
		v, err := b.Eval(a.c.Eval, a.lrow)
		if err != nil {
			return err
		}
		params[a.n.Slots[i]-1] = v
	}
	a.sc = *a.c
	a.ev = *a.c.Eval
	a.ev.Params = params
	a.ev.Exec = &a.sc
	a.sc.Eval = &a.ev
	var err error
	a.right, err = Build(&a.sc, a.n.Right)
	return err
}

func (a *applyIter) Next() (expr.Row, error) {
	for {
		if a.right == nil {
			l, err := a.left.Next()
			if err != nil || l == nil {
				return nil, err
			}
			a.lrow = append(a.lrow[:0], l...)
			a.found = false
			if err := a.startRight(); err != nil {
				return nil, err
			}
		}
		r, err := a.right.Next()
		if err != nil {
			return nil, err
		}
		if r == nil {
			a.right.Close()
			a.right = nil
			if a.n.Outer && !a.found {
				copy(a.out, a.lrow)
				for i := a.lw; i < len(a.out); i++ {
					a.out[i] = types.NullValue
				}
				return a.out, nil
			}
			continue
		}
		copy(a.out, a.lrow)
		copy(a.out[a.lw:], r)
		if a.n.Cond != nil {
			ok, err := isTrue(a.c, a.n.Cond, a.out)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		a.found = true
		return a.out, nil
	}
}

func (a *applyIter) Close() {
	if a.right != nil {
		a.right.Close()
	}
	a.left.Close()
}
