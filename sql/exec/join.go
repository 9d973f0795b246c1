package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// joinIter runs a planner.Join: the right input is read into memory (hashed
// on its keys when there are any), then each left row is paired with its
// candidate right rows. Like every iterator it reuses its output row:
// consumers that keep rows copy them (Drain, the build side of a join).
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
	cur         expr.Row // the current left row (a copy)
	haveCur     bool
	out         expr.Row
	intKeys     bool       // every key is an integer: hash the int64 directly
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
	j := &joinIter{c: c, n: n, left: left, right: right, rwidth: len(n.Right.Columns())}
	j.intKeys = len(n.LeftKeys) > 0
	for i := range n.LeftKeys {
		if !n.LeftKeys[i].Type().Family.IsInteger() || !n.RightKeys[i].Type().Family.IsInteger() {
			j.intKeys = false
		}
	}
	return j, nil
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
		if j.intKeys {
			// Signed and unsigned families compare by value: a uint64 past
			// MaxInt64 gets its own tag so it cannot collide with a
			// negative int64.
			tag := byte(0)
			if v.Family().IsUnsigned() && v.Int() < 0 {
				tag = 1
			}
			x := v.Int()
			j.buf = append(j.buf, tag, byte(x>>56), byte(x>>48), byte(x>>40), byte(x>>32), byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
			continue
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
		// The build side is held whole: it counts against the
		// statement's memory limit.
		if err := j.c.grow(rowMemory(r)); err != nil {
			return err
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
		if j.haveCur && j.pos < len(j.cands) {
			r := j.cands[j.pos]
			j.pos++
			out := append(append(j.out[:0], j.cur...), r...)
			j.out = out
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
		if j.haveCur && !j.matched && j.n.Kind == planner.LeftJoin {
			out := append(j.out[:0], j.cur...)
			for range j.rwidth {
				out = append(out, types.NullValue)
			}
			j.out = out
			j.haveCur = false
			return out, nil
		}
		l, err := j.left.Next()
		if err != nil || l == nil {
			j.haveCur = false
			return nil, err
		}
		j.cur = append(j.cur[:0], l...)
		j.haveCur = true
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
