package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// setOpIter runs UNION, EXCEPT and INTERSECT. UNION streams both inputs
// (with a seen-set unless ALL); EXCEPT and INTERSECT first count the rows
// of the right input by their DISTINCT key, then stream the left one.
type setOpIter struct {
	c      *Context
	n      *planner.SetOp
	left   Iter
	right  Iter
	onLeft bool
	seen   map[string]struct{} // rows returned (distinct forms)
	counts map[string]int      // right rows (EXCEPT, INTERSECT)
	width  int
	buf    []byte
}

func newSetOp(c *Context, n *planner.SetOp) (Iter, error) {
	l, err := Build(c, n.Left)
	if err != nil {
		return nil, err
	}
	r, err := Build(c, n.Right)
	if err != nil {
		l.Close()
		return nil, err
	}
	it := &setOpIter{c: c, n: n, left: l, right: r, onLeft: true, width: len(n.Cols)}
	if !n.All {
		it.seen = map[string]struct{}{}
	}
	return it, nil
}

func (s *setOpIter) key(r expr.Row) string {
	s.buf = s.buf[:0]
	for _, v := range r[:s.width] {
		s.buf = types.AppendGroupKey(s.buf, v)
	}
	return string(s.buf)
}

func (s *setOpIter) Next() (expr.Row, error) {
	if s.n.Kind != planner.Union && s.counts == nil {
		s.counts = map[string]int{}
		for n := 0; ; n++ {
			if n%256 == 255 {
				if err := s.c.Ctx.Err(); err != nil {
					return nil, err
				}
			}
			r, err := s.right.Next()
			if err != nil {
				return nil, err
			}
			if r == nil {
				break
			}
			k := s.key(r)
			if _, ok := s.counts[k]; !ok {
				if err := s.c.grow(int64(len(k)) + 24); err != nil {
					return nil, err
				}
			}
			s.counts[k]++
		}
	}
	for {
		in := s.left
		if !s.onLeft {
			in = s.right
		}
		r, err := in.Next()
		if err != nil {
			return nil, err
		}
		if r == nil {
			if s.onLeft && s.n.Kind == planner.Union {
				s.onLeft = false
				continue
			}
			return nil, nil
		}
		k := s.key(r)
		switch s.n.Kind {
		case planner.Except:
			if s.n.All {
				if s.counts[k] > 0 {
					s.counts[k]--
					continue
				}
			} else if s.counts[k] > 0 {
				continue
			}
		case planner.Intersect:
			if s.counts[k] == 0 {
				continue
			}
			if s.n.All {
				s.counts[k]--
			}
		}
		if s.seen != nil {
			if _, dup := s.seen[k]; dup {
				continue
			}
			if err := s.c.grow(int64(len(k)) + 16); err != nil {
				return nil, err
			}
			s.seen[k] = struct{}{}
		}
		return r[:s.width], nil
	}
}

func (s *setOpIter) Close() {
	s.left.Close()
	s.right.Close()
}
