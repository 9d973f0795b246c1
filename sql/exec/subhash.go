package exec

import (
	"cmp"
	"math"
	"strings"
	"sync"
	"sync/atomic"

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
	// groups is the number of keys the last build of this plan held:
	// the next build (a prepared statement's next execution) sizes its
	// table for them up front instead of growing it step by step.
	groups atomic.Int64
	// keyBytes is the bytes of the keys an EXISTS table held after the
	// last build (keySet's arena), the same kind of hint.
	keyBytes atomic.Int64
}

// subHashEntry is the statement's table of one node, built once.
type subHashEntry struct {
	once  sync.Once
	table *subHashTable
	err   error
	fast  hashedSub // what subState.lastHashed points to once built
}

// hashKeyMode is how a table keys its groups. The common correlations —
// one text column, one integer column — are keyed by the value itself,
// which costs no encoding and, for text, no allocation: the build keeps
// the string the scan decoded and a probe looks its string up as it is.
type hashKeyMode uint8

const (
	keyTuple hashKeyMode = iota // appendHashKey of each key, in strs
	keyText                     // one Utf8 or String key: its bytes, in strs
	keyInt                      // one integer key: in ints, or huge above the int64 range
)

// subHashTable is a built probe table: the inner rows of each key.
type subHashTable struct {
	mode hashKeyMode
	// set holds the keys of an EXISTS table keyed by text or a tuple
	// (keyset.go): such a table needs no rows, only the keys, which it
	// keeps in one arena. strs is then unused.
	set  *keySet
	strs map[string]*subResult
	ints map[int64]*subResult
	huge map[uint64]*subResult
	// probeCol is the outer row's column the one probe value is, as it
	// is when its family is probeFam (or any, for probeFam Unknown): the
	// probe then reads it straight from the row (hashProbe). -1 when the
	// probe is computed or converted (probeValue).
	probeCol int
	probeFam types.Family
}

var emptySubResult = &subResult{}

// existsHit is the group of every key an EXISTS table holds: EXISTS only
// asks whether some inner row matches, so the groups need no rows of
// their own (and no allocation each).
var existsHit = &subResult{rows: []expr.Row{nil}}

// hashKeyModeOf picks the table's key form from the probe types (the
// binder pairs them with inner columns of the same family, or integer
// with integer: bind/subquery_hash.go hashableKeys).
func hashKeyModeOf(h *SubHash) hashKeyMode {
	if len(h.Probe) != 1 {
		return keyTuple
	}
	switch f := h.Probe[0].Type().Family; {
	case f.IsInteger():
		return keyInt
	case f == types.Utf8 || f == types.String:
		return keyText
	}
	return keyTuple
}

// group returns the group of the key vals (non-NULL), nil when absent.
func (t *subHashTable) group(vals []types.Value) *subResult {
	if t.set != nil {
		if t.setHas(vals) {
			return existsHit
		}
		return nil
	}
	switch t.mode {
	case keyText:
		return t.strs[vals[0].Str()]
	case keyInt:
		if v := vals[0]; v.Family().IsUnsigned() && v.Uint() > math.MaxInt64 {
			return t.huge[v.Uint()]
		}
		return t.ints[vals[0].Int()]
	}
	var kb [64]byte
	buf := kb[:0]
	for _, v := range vals {
		buf = appendHashKey(buf, v)
	}
	return t.strs[string(buf)]
}

// setHas reports whether the key vals (non-NULL) is in t.set.
func (t *subHashTable) setHas(vals []types.Value) bool {
	if t.mode == keyText {
		return t.set.hasString(vals[0].Str())
	}
	var kb [64]byte
	buf := kb[:0]
	for _, v := range vals {
		buf = appendHashKey(buf, v)
	}
	return t.set.has(buf)
}

// add puts g under the key vals (non-NULL; absent so far) and returns the
// bytes the entry holds, for the statement's memory account.
func (t *subHashTable) add(vals []types.Value, g *subResult) int64 {
	const entry = 64 // a map slot and its share of the table's growth
	switch t.mode {
	case keyText:
		k := vals[0].Str()
		t.strs[k] = g
		return int64(len(k)) + entry
	case keyInt:
		if v := vals[0]; v.Family().IsUnsigned() && v.Uint() > math.MaxInt64 {
			if t.huge == nil {
				t.huge = map[uint64]*subResult{}
			}
			t.huge[v.Uint()] = g
		} else {
			t.ints[v.Int()] = g
		}
		return entry
	}
	var buf []byte
	for _, v := range vals {
		buf = appendHashKey(buf, v)
	}
	t.strs[string(buf)] = g
	return int64(len(buf)) + entry
}

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

// hashTable returns the statement's probe table of s, building it on first
// use; nil when the inner side is too large to hold (the caller then runs
// the subquery per row). c evaluates the inner plan: it reads no value of
// the outer row (the binder checks), only the statement's parameters.
func (c *Context) hashTable(s *Subquery, eval *expr.Context) (*subHashTable, error) {
	st := c.sub
	if st == nil {
		return c.buildSubHash(s, eval)
	}
	// Every outer row comes here: once built, the table is read without
	// the lock.
	if f := st.lastHashed.Load(); f != nil && f.s == s {
		return f.e.table, f.e.err
	}
	// One build per statement, also when the workers of a parallel scan
	// reach the node at once: the others wait for it. The inner plan
	// holds no subquery (the binder checks), so a build never waits for
	// another.
	st.mu.Lock()
	if st.hashed == nil {
		st.hashed = map[*Subquery]*subHashEntry{}
	}
	h := st.hashed[s]
	if h == nil {
		h = &subHashEntry{}
		h.fast = hashedSub{s: s, e: h}
		st.hashed[s] = h
	}
	st.mu.Unlock()
	h.once.Do(func() { h.table, h.err = c.buildSubHash(s, eval) })
	st.lastHashed.Store(&h.fast)
	return h.table, h.err
}

// hashedSub is the built table of one node, read without subState's lock.
type hashedSub struct {
	s *Subquery
	e *subHashEntry
}

// hashProbe returns the inner rows matching the outer row: the probe
// values are the subquery's binds evaluated on row (each converted as
// its parameter would convert it), with no parameter list built per row.
// ok is false when the inner side was too large to hash.
func (c *Context) hashProbe(s *Subquery, eval *expr.Context, row expr.Row) (res *subResult, ok bool, err error) {
	t, err := c.hashTable(s, eval)
	if err != nil || t == nil {
		return nil, false, err
	}
	var vb [4]types.Value
	if col := t.probeCol; col >= 0 && col < len(row) {
		// The common probe, an outer column as it is: no evaluation and
		// no conversion per outer row.
		v := row[col]
		if v.IsNull() {
			return emptySubResult, true, nil
		}
		if t.probeFam == types.Unknown || v.Family() == t.probeFam {
			vb[0] = v
			if g := t.group(vb[:1]); g != nil {
				return g, true, nil
			}
			return emptySubResult, true, nil
		}
	}
	vals := vb[:0]
	for _, p := range s.Hash.Probe {
		v, err := s.probeValue(p, eval, row)
		if err != nil {
			return nil, false, err
		}
		if v.IsNull() {
			return emptySubResult, true, nil // `inner = NULL` is never TRUE
		}
		vals = append(vals, v)
	}
	if g := t.group(vals); g != nil {
		return g, true, nil
	}
	return emptySubResult, true, nil
}

// plainProbe returns the outer row's column that is the one probe value
// of s as it stands, and the family the value must have for Param.Coerce
// to leave it as it is (Unknown: any); -1 when the probe is no such
// column, or its parameter's type converts it.
func plainProbe(s *Subquery) (int, types.Family) {
	if len(s.Hash.Probe) != 1 {
		return -1, types.Unknown
	}
	pr, ok := s.Hash.Probe[0].(*expr.Param)
	if !ok {
		return -1, types.Unknown
	}
	for i, slot := range s.Slots {
		ref, ok := s.Binds[i].(*expr.ColumnRef)
		if slot != pr.N || !ok || ref.Index < 0 {
			continue
		}
		switch f := pr.Typ.Family; {
		case f == types.Unknown || f == types.Null:
			return ref.Index, types.Unknown
		case pr.Typ.Plain():
			return ref.Index, f
		}
		return -1, types.Unknown
	}
	return -1, types.Unknown
}

// probeValue is the value of probe expression p on the outer row: the
// bind of its parameter slot, coerced as Param.Eval would.
func (s *Subquery) probeValue(p expr.Expr, eval *expr.Context, row expr.Row) (types.Value, error) {
	if pr, ok := p.(*expr.Param); ok {
		for i, slot := range s.Slots {
			if slot == pr.N {
				v, err := s.Binds[i].Eval(eval, row)
				if err != nil {
					return types.Value{}, err
				}
				return pr.Coerce(eval, v)
			}
		}
	}
	// Not one of the node's own slots (the binder only builds those):
	// evaluate it with the statement's parameters.
	return p.Eval(eval, row)
}

// buildSubHash runs the inner plan once and groups its rows by key. The
// table's memory counts against the statement's limit like a hash join's
// build side (in steps of subHashGrowStep bytes: the account's lock is
// not taken per key); beyond subCacheRows rows it is dropped (nil) and the
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
	// The plan is a projection of the inner scan (bind/subquery_hash.go):
	// run the scan and evaluate only what the table keeps — the key
	// columns, and for IN the compared values — into one reused row,
	// rather than every projected value into a row per inner row. Under
	// EXPLAIN ANALYZE the projection runs as a node, to be counted.
	plan, exprs := s.Hash.Plan, []expr.Expr(nil)
	if p, ok := plan.(*planner.Project); ok && c.analyze == nil {
		plan, exprs = p.Input, p.Exprs
	}
	it, err := Build(&sc, plan)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out expr.Row
	from := s.Hash.KeyAt // the first projected value the table keeps
	if s.Kind != SubExists {
		from = 0
	}
	if exprs != nil {
		out = make(expr.Row, len(exprs))
	}
	hint := int(min(s.Hash.groups.Load(), subCacheRows))
	t := &subHashTable{mode: hashKeyModeOf(s.Hash), probeCol: -1}
	t.probeCol, t.probeFam = plainProbe(s)
	switch {
	case t.mode == keyInt:
		t.ints = make(map[int64]*subResult, hint)
	case s.Kind == SubExists:
		t.set = newKeySet(hint, int(min(s.Hash.keyBytes.Load(), subHashArenaHint)))
	default:
		t.strs = make(map[string]*subResult, hint)
	}
	n := 0
	var held, pending int64 // bytes counted against the statement's memory, and not yet
	fail := func(err error) (*subHashTable, error) {
		c.release(held)
		return nil, err
	}
	// count accounts one key or row the table took, of size bytes; false
	// when the build stops (err, or nil for too many rows).
	var err2 error
	count := func(size int64) bool {
		pending += size
		n++
		if pending >= subHashGrowStep {
			if err2 = c.grow(pending); err2 != nil {
				return false
			}
			held, pending = held+pending, 0
		}
		return n <= subCacheRows
	}
	if rk := rawKeyOf(s, t.mode, it, exprs); rk != nil {
		// EXISTS on one stored column of a plain scan: the key straight
		// from each stored row, no row decoded.
		for {
			key, val, err := rk.rows.nextRaw()
			if err != nil {
				return fail(err)
			}
			if key == nil {
				break
			}
			size, added, err := rk.put(t, val)
			if err != nil {
				return fail(err)
			}
			if added && !count(size) {
				return fail(err2)
			}
		}
	} else {
		if err := c.buildRows(s, t, it, exprs, from, out, &ev, count); err != nil || err2 != nil {
			return fail(cmp.Or(err, err2))
		}
		if n > subCacheRows {
			return fail(nil)
		}
	}
	if err := c.grow(pending); err != nil {
		return fail(err)
	}
	s.Hash.groups.Store(int64(t.len()))
	if t.set != nil {
		s.Hash.keyBytes.Store(int64(len(t.set.arena)))
	}
	if s.Kind == SubIn {
		for _, g := range t.strs {
			g.index()
		}
		for _, g := range t.ints {
			g.index()
		}
		for _, g := range t.huge {
			g.index()
		}
	}
	return t, nil
}

// buildRows is buildSubHash's loop over the rows of the inner plan (it,
// projected with exprs from position from into out when exprs is set):
// each row's key goes into t, and for IN its row too; count accounts each
// and false stops the loop.
func (c *Context) buildRows(s *Subquery, t *subHashTable, it Iter, exprs []expr.Expr, from int, out expr.Row, ev *expr.Context, count func(int64) bool) error {
	keys := len(s.Hash.Probe)
	for {
		r, err := it.Next()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		if exprs != nil {
			for i := from; i < len(exprs); i++ {
				if out[i], err = exprs[i].Eval(ev, r); err != nil {
					return err
				}
			}
			r = out
		}
		vals := r[s.Hash.KeyAt : s.Hash.KeyAt+keys]
		null := false
		for _, v := range vals {
			null = null || v.IsNull()
		}
		if null {
			continue // `inner = outer` is never TRUE
		}
		if s.Kind == SubExists {
			// Present or not, the key's group is existsHit: one map
			// operation per row.
			size, added := t.put(vals)
			if !added {
				continue
			}
			if !count(size) {
				return nil
			}
		} else {
			var size int64
			g := t.group(vals)
			if g == nil {
				g = &subResult{}
				size = t.add(vals, g)
			}
			row := append(expr.Row(nil), r[:s.Width]...)
			g.rows = append(g.rows, row)
			if !count(size + rowMemory(row)) {
				return nil
			}
		}
	}
	return nil
}

// subHashArenaHint bounds the arena a build allocates up front from the
// last build's size: a table that large is rare and grows as it goes.
const subHashArenaHint = 64 << 20

// subHashGrowStep is how many bytes a build accounts at a time.
const subHashGrowStep = 64 << 10

// put adds the key vals (non-NULL) to an EXISTS table unless present,
// reporting whether it did and the bytes it added.
func (t *subHashTable) put(vals []types.Value) (int64, bool) {
	const entry = 64
	if t.set != nil {
		var added bool
		var size int
		if t.mode == keyText {
			k := vals[0].Str()
			added, size = t.set.addString(k), len(k)
		} else {
			var kb [64]byte
			buf := kb[:0]
			for _, v := range vals {
				buf = appendHashKey(buf, v)
			}
			added, size = t.set.add(buf), len(buf)
		}
		if !added {
			return 0, false
		}
		return int64(size) + keySetEntryBytes, true
	}
	switch t.mode {
	case keyText:
		k := vals[0].Str()
		before := len(t.strs)
		t.strs[k] = existsHit
		return int64(len(k)) + entry, len(t.strs) > before
	case keyInt:
		v := vals[0]
		if v.Family().IsUnsigned() && v.Uint() > math.MaxInt64 {
			break // rare: the generic path below
		}
		before := len(t.ints)
		t.ints[v.Int()] = existsHit
		return entry, len(t.ints) > before
	}
	if t.group(vals) != nil {
		return 0, false
	}
	return t.add(vals, existsHit), true
}

// len is the number of keys the table holds.
func (t *subHashTable) len() int {
	n := len(t.strs) + len(t.ints) + len(t.huge)
	if t.set != nil {
		n += t.set.len()
	}
	return n
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
