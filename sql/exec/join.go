package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// joinIter runs a planner.Join: the right input is read into memory (hashed
// on its keys when there are any), then each left row is paired with its
// candidate right rows. Each output row is freshly allocated, as parents
// may keep rows (Sort, a parent join's build side).
type joinIter struct {
	c           *Context
	n           *planner.Join
	left        Iter
	right       Iter
	built       bool
	rightClosed bool
	hash        map[string][]expr.Row
	all         []expr.Row // the right rows when there are no keys
	rwidth      int
	cur         expr.Row   // the current left row (a copy)
	cands       []expr.Row // its candidate right rows
	pos         int
	matched     bool
	buf         []byte
	steps       int
}

func newJoin(c *Context, n *planner.Join) (Iter, error) {
	left, err := Build(c, n.Left)
	if err != nil {
		return nil, err
	}
	right, err := Build(c, n.Right)
	if err != nil {
		left.Close()
		return nil, err
	}
	return &joinIter{c: c, n: n, left: left, right: right, rwidth: len(n.Right.Columns())}, nil
}

// key appends the hash key of keys evaluated over row; ok is false when a
// key is NULL (it can match nothing).
func (j *joinIter) key(keys []expr.Expr, row expr.Row) (ok bool, err error) {
	j.buf = j.buf[:0]
	for _, k := range keys {
		v, err := k.Eval(j.c.Eval, row)
		if err != nil {
			return false, err
		}
		if v.IsNull() {
			return false, nil
		}
		j.buf = types.AppendGroupKey(j.buf, v)
	}
	return true, nil
}

func (j *joinIter) build() error {
	j.built = true
	if len(j.n.RightKeys) > 0 {
		j.hash = map[string][]expr.Row{}
	}
	for {
		if err := j.tick(); err != nil {
			return err
		}
		r, err := j.right.Next()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		if j.hash == nil {
			j.all = append(j.all, append(expr.Row(nil), r...))
			continue
		}
		ok, err := j.key(j.n.RightKeys, r)
		if err != nil {
			return err
		}
		if ok {
			j.hash[string(j.buf)] = append(j.hash[string(j.buf)], append(expr.Row(nil), r...))
		}
	}
	j.right.Close()
	j.rightClosed = true
	return nil
}

// tick checks for cancellation every so often.
func (j *joinIter) tick() error {
	j.steps++
	if j.steps%1024 == 0 {
		return j.c.Ctx.Err()
	}
	return nil
}

func (j *joinIter) Next() (expr.Row, error) {
	if !j.built {
		if err := j.build(); err != nil {
			return nil, err
		}
	}
	for {
		if err := j.tick(); err != nil {
			return nil, err
		}
		if j.cur != nil && j.pos < len(j.cands) {
			r := j.cands[j.pos]
			j.pos++
			out := make(expr.Row, 0, len(j.cur)+len(r))
			out = append(append(out, j.cur...), r...)
			if j.n.Cond != nil {
				ok, err := isTrue(j.c, j.n.Cond, out)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			j.matched = true
			return out, nil
		}
		if j.cur != nil && !j.matched && j.n.Kind == planner.LeftJoin {
			out := make(expr.Row, len(j.cur)+j.rwidth)
			copy(out, j.cur) // the right columns stay NULL (the zero Value)
			j.cur = nil
			return out, nil
		}
		l, err := j.left.Next()
		if err != nil || l == nil {
			j.cur = nil
			return nil, err
		}
		j.cur = append(j.cur[:0:0], l...)
		j.pos, j.matched = 0, false
		if j.hash == nil {
			j.cands = j.all
			continue
		}
		ok, err := j.key(j.n.LeftKeys, j.cur)
		if err != nil {
			return nil, err
		}
		j.cands = nil
		if ok {
			j.cands = j.hash[string(j.buf)]
		}
	}
}

func (j *joinIter) Close() {
	j.left.Close()
	if !j.rightClosed {
		j.right.Close()
	}
}
