package exec

import (
	"math"
	"strings"
	"sync"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// SubHash is the decorrelated form of a correlated EXISTS / IN subquery
// whose correlation is a conjunction of equalities `inner column = outer
// value` (the binder checks the rest of the inner plan reads no outer
// value, see bind/subquery_hash.go). Instead of running the inner plan
// once per outer row, Plan — the inner plan without those equalities —
// runs once per statement; its rows (Subquery.Width visible columns, then
// one column per key) are grouped by the key columns into a hash table,
// and each outer row probes it with the values of Probe. This is a hash
// semi join (EXISTS, IN) or anti join (NOT EXISTS, NOT IN) on the
// correlation keys, evaluated as a filter so the outer plan keeps its
// shape.
//
// NULL semantics are those of the per-row path: an inner row whose key
// is NULL matches no outer row and an outer NULL key matches no inner
// row (both are `=` comparisons that are not TRUE), so such outer rows see
// an empty inner side; the IN/NOT IN comparison with the group's rows then
// goes through Subquery.in exactly as before, which keeps NOT IN's NULL
// answer when the group holds a NULL.
type SubHash struct {
	Plan  planner.Node
	KeyAt int         // position of the first key column in Plan's rows
	Probe []expr.Expr // outer value of each key (evaluated on the outer row)
	Keys  []string    // "inner = outer" of each key, for EXPLAIN
	// Anti: the node stands for NOT EXISTS or NOT IN (EXPLAIN's label).
	Anti bool
}

// subHashEntry is the statement's table of one node, built once.
type subHashEntry struct {
	once  sync.Once
	table *subHashTable
	err   error
}

// subHashTable is a built probe table: the inner rows of each key.
type subHashTable struct {
	groups map[string]*subResult
}

var emptySubResult = &subResult{}

// SubPlanOperator names the node in EXPLAIN.
func (s *Subquery) SubPlanOperator() string {
	name := "SubPlan "
	if s.Hash != nil {
		name = "HashSemiJoin "
		if s.Hash.Anti {
			name = "HashAntiJoin "
		}
		text := s.String()
		if s.Hash.Anti && s.Kind == SubExists {
			text = "NOT " + text
		}
		return name + text + " on (" + strings.Join(s.Hash.Keys, " AND ") + ")"
	}
	return name + s.String()
}

// hashProbe returns the inner rows matching the outer row whose values
// eval carries, building the statement's table on first use; nil when the
// inner side is too large to hold (the caller then runs the subquery per
// row).
func (c *Context) hashProbe(s *Subquery, eval *expr.Context) (*subResult, error) {
	var t *subHashTable
	if st := c.sub; st != nil {
		// One build per statement, also when the workers of a parallel
		// scan reach the node at once: the others wait for it. The inner
		// plan holds no subquery (the binder checks), so a build never
		// waits for another.
		st.mu.Lock()
		if st.hashed == nil {
			st.hashed = map[*Subquery]*subHashEntry{}
		}
		h := st.hashed[s]
		if h == nil {
			h = &subHashEntry{}
			st.hashed[s] = h
		}
		st.mu.Unlock()
		h.once.Do(func() { h.table, h.err = c.buildSubHash(s, eval) })
		t = h.table
		if h.err != nil {
			return nil, h.err
		}
	} else {
		var err error
		if t, err = c.buildSubHash(s, eval); err != nil {
			return nil, err
		}
	}
	if t == nil {
		return nil, nil
	}
	var buf []byte
	for _, p := range s.Hash.Probe {
		v, err := p.Eval(eval, nil)
		if err != nil {
			return nil, err
		}
		if v.IsNull() {
			return emptySubResult, nil
		}
		buf = appendHashKey(buf, v)
	}
	if r := t.groups[string(buf)]; r != nil {
		return r, nil
	}
	return emptySubResult, nil
}

// buildSubHash runs the inner plan once and groups its rows by key. The
// table's memory counts against the statement's limit like a hash join's
// build side; beyond subCacheRows rows it is dropped (nil) and the
// subquery runs per outer row instead.
func (c *Context) buildSubHash(s *Subquery, eval *expr.Context) (*subHashTable, error) {
	sc := *c
	if c.SubReader != nil {
		sc.Reader = c.SubReader
		sc.Concurrent = false
	}
	ev := *eval
	ev.Exec = &sc
	sc.Eval = &ev
	it, err := Build(&sc, s.Hash.Plan)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	t := &subHashTable{groups: map[string]*subResult{}}
	n := 0
	var held int64 // bytes counted against the statement's memory (grow)
	var buf []byte
	for {
		r, err := it.Next()
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		buf = buf[:0]
		null := false
		for _, v := range r[s.Hash.KeyAt : s.Hash.KeyAt+len(s.Hash.Probe)] {
			null = null || v.IsNull()
			buf = appendHashKey(buf, v)
		}
		if null {
			continue // `inner = outer` is never TRUE
		}
		g := t.groups[string(buf)]
		if g == nil {
			g = &subResult{}
			t.groups[string(buf)] = g
			size := int64(len(buf)) + 64 // the key and its map entry
			if err := c.grow(size); err != nil {
				c.release(held)
				return nil, err
			}
			held += size
		}
		if s.Kind == SubExists {
			if len(g.rows) == 0 {
				g.rows = append(g.rows, nil)
				n++
			}
		} else {
			row := append(expr.Row(nil), r[:s.Width]...)
			if err := c.grow(rowMemory(row)); err != nil {
				c.release(held)
				return nil, err
			}
			held += rowMemory(row)
			g.rows = append(g.rows, row)
			n++
		}
		if n > subCacheRows {
			c.release(held)
			return nil, nil
		}
	}
	if s.Kind == SubIn {
		for _, g := range t.groups {
			g.index()
		}
	}
	return t, nil
}

// appendHashKey appends v's probe key. Integers (the binder only pairs
// integer families with each other) are their 8 bytes, tagged apart from
// unsigned values above the int64 range, which is much cheaper than
// types.AppendGroupKey's decimal form; other values use that form.
func appendHashKey(buf []byte, v types.Value) []byte {
	f := v.Family()
	if !f.IsInteger() {
		return types.AppendGroupKey(buf, v)
	}
	tag := byte(1)
	if f.IsUnsigned() && v.Uint() > math.MaxInt64 {
		tag = 2
	}
	i := uint64(v.Int())
	return append(buf, tag, byte(i>>56), byte(i>>48), byte(i>>40), byte(i>>32), byte(i>>24), byte(i>>16), byte(i>>8), byte(i))
}
