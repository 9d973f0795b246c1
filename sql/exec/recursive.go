package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// WITH RECURSIVE (planner.RecursiveCTE). Rows stream out as the rounds
// produce them, so LIMIT can stop an endless UNION ALL recursion. The
// iterator holds the round being produced (the next work table) and the
// round being read (the current one, in Context.work); a finished round's
// rows are released from the statement's memory account, so a long
// recursion holding one row per round runs in constant memory, while one
// whose rounds grow fails with 53200 at MemLimit. UNION also keeps the key
// of every row produced (counted), which is what ends a cycle.

type recursiveIter struct {
	c    *Context
	n    *planner.RecursiveCTE
	cur  Iter
	next []expr.Row // the round being produced
	mem  int64      // memory of next
	// held is the memory of the work table being read.
	held int64
	seen map[string]struct{}
	buf  []byte
	done bool
}

func newRecursive(c *Context, n *planner.RecursiveCTE) (Iter, error) {
	base, err := Build(c, n.Base)
	if err != nil {
		return nil, err
	}
	it := &recursiveIter{c: c, n: n, cur: base}
	if !n.All {
		it.seen = map[string]struct{}{}
	}
	return it, nil
}

func (r *recursiveIter) Next() (expr.Row, error) {
	for !r.done {
		row, err := r.cur.Next()
		if err != nil {
			return nil, err
		}
		if row != nil {
			if r.seen != nil {
				r.buf = r.buf[:0]
				for _, v := range row {
					r.buf = types.AppendGroupKey(r.buf, v)
				}
				if _, dup := r.seen[string(r.buf)]; dup {
					continue
				}
				if err := r.c.grow(int64(len(r.buf)) + 16); err != nil {
					return nil, err
				}
				r.seen[string(r.buf)] = struct{}{}
			}
			m := rowMemory(row)
			if err := r.c.grow(m); err != nil {
				return nil, err
			}
			r.mem += m
			cp := append(expr.Row(nil), row...)
			r.next = append(r.next, cp)
			return cp, nil
		}
		// The round is over: its rows are the next work table.
		r.cur.Close()
		r.cur = nil
		if err := r.c.Ctx.Err(); err != nil {
			return nil, err
		}
		r.c.release(r.held)
		if len(r.next) == 0 {
			r.done = true
			delete(r.c.sub.work, r.n)
			break
		}
		if r.c.sub.work == nil {
			r.c.sub.work = map[*planner.RecursiveCTE][]expr.Row{}
		}
		r.c.sub.work[r.n] = r.next
		r.held, r.next, r.mem = r.mem, nil, 0
		if r.cur, err = Build(r.c, r.n.Recursive); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (r *recursiveIter) Close() {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
}

// workTable reads the current round of its recursive query.
func newWorkTable(c *Context, n *planner.WorkTable) Iter {
	return &sliceIter{rows: c.sub.work[n.CTE]}
}
