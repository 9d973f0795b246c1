package exec

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// Context is what iterators need at run time.
type Context struct {
	Ctx    context.Context
	Eval   *expr.Context
	Reader storage.Reader
	// Shards cuts table scans at shard boundaries; nil reads each span
	// as one piece.
	Shards *partition.Manager
	// Concurrent allows several iterators on Reader at once (true for
	// committed data, false for a transaction's write batch).
	Concurrent bool
	// RangeLimit bounds the key ranges one table read may enumerate
	// (range_expansion_limit).
	RangeLimit int
	// Scans, when set, counts every table read the statement starts
	// (pg_stat_user_tables' seq_scan and idx_scan).
	Scans ScanCounter

	// LockRow locks the rows a LockRows node names (SELECT ... FOR
	// UPDATE); nil in statements that lock no rows.
	LockRow RowLocker

	// SubReader, when set, is what subqueries read instead of Reader: a
	// writing statement gives them a view of its transaction as of the
	// statement's start, so that they do not see its own writes (as in
	// PostgreSQL, where a statement's subqueries read its snapshot). It is
	// read by one goroutine at a time.
	SubReader storage.Reader

	// sub caches subquery results for the statement; Build creates it.
	sub *subState
	// analyze is the statement's EXPLAIN ANALYZE collector (from Ctx; nil
	// when not analysing); reads, set on a scan's copy of the context, is
	// the scan node's share of it (analyze.go).
	analyze *Analysis
	reads   *NodeStats

	// MemLimit bounds the bytes of rows the statement may hold at once in
	// iterators that materialise (sort, grouping, DISTINCT, an INSERT's
	// source); beyond it the statement fails with 53200 instead of
	// growing the server's heap without bound. Zero: no limit. Streaming
	// iterators hold one row and are not counted.
	MemLimit int64
	// mem is what the statement's materialising iterators hold, shared by
	// every copy of the context (subqueries run on a copy, possibly inside
	// a parallel scan's worker), so it is a pointer behind a lock.
	mem *memState
}

// memState is a statement's memory bookkeeping: the bytes counted against
// MemLimit and the statement's account in the server's memory budget
// (memory.FromContext(Ctx), looked up on first use): what MemLimit counts is
// reserved there too, so that rows held by all statements together stay
// within --max-memory. The account is closed by whoever opened it when the
// statement ends.
type memState struct {
	mu    sync.Mutex
	used  int64
	acct  *memory.Account
	bound bool
}

// bind prepares a context on its first Build: expressions evaluated with
// c.Eval reach the executor (subqueries) through Eval.Exec. Build is called
// by the statement's goroutine before any row is read, so this does not
// race with the workers of a parallel scan.
func (c *Context) bind() {
	if c.sub == nil || c.mem == nil {
		// One allocation for both: every statement makes them, and most
		// use neither (the subquery cache and the recursive work tables
		// are made on first use).
		st := &struct {
			sub subState
			mem memState
		}{}
		if c.sub == nil {
			c.sub = &st.sub
			c.analyze = analysisFrom(c.Ctx)
		}
		if c.mem == nil {
			c.mem = &st.mem
		}
	}
	if c.Eval != nil && c.Eval.Exec == nil {
		c.Eval.Exec = c
	}
}

// valueOverhead approximates the memory of a types.Value besides its
// string or bytes payload.
const valueOverhead = int64(unsafe.Sizeof(types.Value{}))

// rowMemory approximates the memory a copied row holds.
func rowMemory(r expr.Row) int64 {
	n := int64(24) // the slice header
	for _, v := range r {
		n += valueOverhead + int64(v.PayloadSize()) // the string/bytes payload or an array's elements
	}
	return n
}

// grow accounts n more bytes held by the statement against MemLimit and
// the statement's memory account.
func (c *Context) grow(n int64) error { return c.growMem(n, true) }

// growBudget accounts n more bytes against the statement's memory account
// only (the server's --max-memory / --max-query-memory), not MemLimit.
func (c *Context) growBudget(n int64) error { return c.growMem(n, false) }

func (c *Context) growMem(n int64, workMem bool) error {
	if c.mem == nil {
		// Drain without Build: one goroutine, no copies yet.
		c.mem = &memState{}
	}
	m := c.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.bound {
		m.acct, m.bound = memory.FromContext(c.Ctx), true
	}
	if err := m.acct.Grow(n, "rows held for sorting, grouping, DISTINCT, a join or an INSERT's source"); err != nil {
		return err
	}
	if c.MemLimit <= 0 || !workMem {
		return nil
	}
	m.used += n
	if m.used > c.MemLimit {
		return &sqlerr.Error{Code: sqlerr.OutOfMemory, Message: "out of memory",
			Detail: fmt.Sprintf("The statement needs more than %d bytes to hold rows for sorting, grouping, DISTINCT or an INSERT's source.", c.MemLimit),
			Hint:   "Narrow the query (WHERE, LIMIT), or raise the server's --max-query-memory."}
	}
	return nil
}

// release returns n bytes to the statement's account: rows an iterator
// held and no longer does (a recursive query's finished round).
func (c *Context) release(n int64) {
	m := c.mem
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acct.Shrink(n)
	if c.MemLimit > 0 {
		m.used -= n
	}
}

// Iter is a row iterator.
type Iter interface {
	// Next returns the next row, or nil at the end.
	Next() (expr.Row, error)
	Close()
}

// Build returns the iterator for a plan.
func Build(c *Context, n planner.Node) (Iter, error) {
	c.bind()
	if c.analyze != nil {
		return c.analyze.buildAnalyzed(c, n)
	}
	return build(c, n)
}

// build makes the iterator of one node; its inputs come through Build.
func build(c *Context, n planner.Node) (Iter, error) {
	switch n := n.(type) {
	case *planner.Scan:
		return newScan(c, n)
	case *planner.Values:
		return &valuesIter{c: c, n: n}, nil
	case *planner.Series:
		return newSeries(c, n)
	case *planner.Unnest:
		return newUnnest(c, n)
	case *planner.ProjectSet:
		in, err := Build(c, n.Input)
		if err != nil {
			return nil, err
		}
		return &projectSetIter{c: c, n: n, in: in}, nil
	case *planner.Generate:
		rows, err := n.Rows()
		if err != nil {
			return nil, err
		}
		// A generated table (pg_catalog, information_schema, sys.*) is
		// a scan, not a sort or hash: its rows count against the memory
		// budget but not against work_mem (MemLimit), as PostgreSQL reads
		// pg_settings under its smallest work_mem.
		var held int64
		for _, r := range rows {
			held += rowMemory(r)
		}
		if err := c.growBudget(held); err != nil {
			return nil, err
		}
		return &sliceIter{rows: rows}, nil
	case *planner.Filter:
		in, err := Build(c, n.Input)
		if err != nil {
			return nil, err
		}
		return &filterIter{c: c, in: in, cond: n.Cond}, nil
	case *planner.Project:
		in, err := Build(c, n.Input)
		if err != nil {
			return nil, err
		}
		return &projectIter{c: c, in: in, exprs: n.Exprs, out: make(expr.Row, len(n.Exprs))}, nil
	case *planner.Aggregate:
		in, err := Build(c, n.Input)
		if err != nil {
			return nil, err
		}
		return &aggIter{c: c, in: in, n: n}, nil
	case *planner.Sort:
		in, err := Build(c, n.Input)
		if err != nil {
			return nil, err
		}
		return &sortIter{c: c, in: in, keys: n.Keys}, nil
	case *planner.Limit:
		in, err := Build(c, n.Input)
		if err != nil {
			return nil, err
		}
		return newLimit(c, in, n)
	case *planner.Join:
		return newJoin(c, n)
	case *planner.Distinct:
		in, err := Build(c, n.Input)
		if err != nil {
			return nil, err
		}
		return &distinctIter{c: c, in: in, n: n.N, on: n.On, seen: map[string]struct{}{}}, nil
	case *planner.SetOp:
		return newSetOp(c, n)
	case *planner.Window:
		return newWindow(c, n)
	case *planner.RecursiveCTE:
		return newRecursive(c, n)
	case *planner.WorkTable:
		return newWorkTable(c, n), nil
	case *planner.Apply:
		return newApply(c, n)
	case *planner.LockRows:
		return newLockRows(c, n)
	}
	return nil, sqlerr.New(sqlerr.InternalError, "exec: unknown plan node %T", n)
}

// Drain runs an iterator to the end, copying every row; the copies count
// against c.MemLimit.
func Drain(c *Context, it Iter) ([]expr.Row, error) {
	defer it.Close()
	var rows []expr.Row
	v, fresh := it.(*valuesIter)
	if fresh {
		// A VALUES list (a multi-row INSERT's source) says how many rows
		// come: one allocation instead of the doublings. Its rows are its
		// own and never reused, so they need no copy.
		rows = make([]expr.Row, 0, len(v.n.Rows)-v.pos)
	}
	for {
		r, err := it.Next()
		if err != nil {
			return nil, err
		}
		if r == nil {
			return rows, nil
		}
		if err := c.grow(rowMemory(r)); err != nil {
			return nil, err
		}
		if !fresh {
			r = append(expr.Row(nil), r...)
		}
		rows = append(rows, r)
	}
}

// isTrue evaluates a condition: only TRUE passes (NULL and FALSE do not).
func isTrue(c *Context, cond expr.Expr, row expr.Row) (bool, error) {
	v, err := cond.Eval(c.Eval, row)
	if err != nil {
		return false, err
	}
	return !v.IsNull() && v.Bool(), nil
}

// ScanCounter counts table reads: index is true for a read through a
// secondary index or by primary key lookups (PostgreSQL's idx_scan), false
// for a read of key ranges (seq_scan).
type ScanCounter interface {
	CountScan(tableID uint64, index bool)
	// CountRowsRead counts rows read from storage by such reads
	// (seq_tup_read, idx_tup_fetch): a range scan's rows visited, a point
	// lookup's rows found, an index scan's entries.
	CountRowsRead(tableID uint64, index bool, rows int64)
}

func newScan(c *Context, n *planner.Scan) (Iter, error) {
	if n.Index != nil {
		if c.Scans != nil {
			c.Scans.CountScan(n.Table.ID, true)
		}
		return newIndexScan(c, n)
	}
	spans, filter, points := scanSpans(c, n)
	if c.Scans != nil {
		c.Scans.CountScan(n.Table.ID, points)
	}
	parts := scanParts(c, n, spans)
	if len(parts) == 0 {
		return &sliceIter{}, nil
	}
	// The TTL is evaluated once, at the statement's time, so that every
	// row of the statement is judged against the same moment.
	expiry := ttl.At(n.Table, c.ReadTime())
	if points {
		return newPointScan(c, n, filter, expiry, parts)
	}
	if len(parts) > 1 && c.Concurrent {
		return newParallelScan(c, n, filter, expiry, parts), nil
	}
	return &serialScan{c: c, n: n, filter: filter, expiry: expiry, parts: parts}, nil
}

// Now returns the statement's time (expr.Context.Now), or the wall clock
// when the context has none.
func (c *Context) Now() time.Time {
	if c.Eval != nil && !c.Eval.Now.IsZero() {
		return c.Eval.Now
	}
	return time.Now()
}

// ReadTime returns the time of the statement's snapshot
// (expr.Context.ReadTime), at which table reads judge TTL; Now when unset.
func (c *Context) ReadTime() time.Time {
	if c.Eval != nil && !c.Eval.ReadTime.IsZero() {
		return c.Eval.ReadTime
	}
	return c.Now()
}

// ScanSpans evaluates a scan's key ranges with the statement's parameters:
// the key spans to read (sorted, disjoint; none when the condition is a
// contradiction) and the filter still to apply to the rows read.
func ScanSpans(c *Context, n *planner.Scan) ([]storage.Span, expr.Expr) {
	spans, filter, _ := scanSpans(c, n)
	return spans, filter
}

// scanSpans is ScanSpans that also reports whether every span is one full
// primary key (planner.Ranges.FullKeyPoints), read by point lookups.
func scanSpans(c *Context, n *planner.Scan) ([]storage.Span, expr.Expr, bool) {
	if n.Ranges == nil {
		return []storage.Span{storage.TableSpan(n.Table.ID)}, n.Filter, false
	}
	limit := c.RangeLimit
	if limit <= 0 {
		limit = planner.DefaultRangeExpansionLimit
	}
	res := n.Ranges.Evaluate(c.Eval.Params, limit)
	return res.Ranges.ToSpans(n.Table), res.Filter, res.Ranges.FullKeyPoints(n.Table)
}

type valuesIter struct {
	c   *Context
	n   *planner.Values
	pos int
	// slab is where the next rows are cut from: one allocation for up to
	// valuesSlabRows rows instead of one per row. Rows are never reused,
	// so a caller may keep them (Drain does, without a copy).
	slab []types.Value
}

// valuesSlabRows is how many rows of a VALUES list share an allocation.
const valuesSlabRows = 256

func (v *valuesIter) Next() (expr.Row, error) {
	if v.pos >= len(v.n.Rows) {
		return nil, nil
	}
	exprs := v.n.Rows[v.pos]
	v.pos++
	if len(exprs) == 0 {
		return expr.Row{}, nil // a row of no columns (SELECT without FROM); nil would end the rows
	}
	if len(v.slab) < len(exprs) {
		v.slab = make([]types.Value, len(exprs)*min(valuesSlabRows, len(v.n.Rows)-v.pos+1))
	}
	// Capped, so that an append to the row cannot run into the next.
	row := expr.Row(v.slab[:len(exprs):len(exprs)])
	v.slab = v.slab[len(exprs):]
	for i, e := range exprs {
		val, err := e.Eval(v.c.Eval, nil)
		if err != nil {
			return nil, err
		}
		row[i] = val
	}
	return row, nil
}

func (v *valuesIter) Close() {}

// seriesIter streams generate_series: it holds no rows, so the statement's
// memory cap does not apply (a LIMIT or the client stops a long series).
type seriesIter struct {
	cur, stop, step int64
	done            bool
}

func newSeries(c *Context, n *planner.Series) (Iter, error) {
	vals := make([]types.Value, 3)
	vals[2] = types.NewInt64(1)
	for i, e := range []expr.Expr{n.Start, n.Stop, n.Step} {
		if e == nil {
			continue
		}
		v, err := e.Eval(c.Eval, nil)
		if err != nil {
			return nil, err
		}
		if v.IsNull() {
			// PostgreSQL: a NULL argument gives no rows.
			return &seriesIter{done: true}, nil
		}
		vals[i] = v
	}
	it := &seriesIter{cur: vals[0].Int(), stop: vals[1].Int(), step: vals[2].Int()}
	if it.step == 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	it.done = it.step > 0 && it.cur > it.stop || it.step < 0 && it.cur < it.stop
	return it, nil
}

func (s *seriesIter) Next() (expr.Row, error) {
	if s.done {
		return nil, nil
	}
	v := s.cur
	// Stop before stepping past stop or overflowing int64.
	next := v + s.step
	if s.step > 0 && (next > s.stop || next < v) || s.step < 0 && (next < s.stop || next > v) {
		s.done = true
	}
	s.cur = next
	return expr.Row{types.NewInt64(v)}, nil
}

func (s *seriesIter) Close() {}

// unnestIter streams unnest's rows from the evaluated arrays.
type unnestIter struct {
	arrays [][]types.Value
	n, pos int
	ord    bool
}

func newUnnest(c *Context, n *planner.Unnest) (Iter, error) {
	it := &unnestIter{ord: n.Ordinality}
	for _, e := range n.Args {
		v, err := e.Eval(c.Eval, nil)
		if err != nil {
			return nil, err
		}
		elems := v.ArrayElems()
		it.arrays = append(it.arrays, elems)
		it.n = max(it.n, len(elems))
	}
	return it, nil
}

func (u *unnestIter) Next() (expr.Row, error) {
	if u.pos >= u.n {
		return nil, nil
	}
	row := make(expr.Row, 0, len(u.arrays)+1)
	for _, a := range u.arrays {
		if u.pos < len(a) {
			row = append(row, a[u.pos])
		} else {
			row = append(row, types.NullValue)
		}
	}
	u.pos++
	if u.ord {
		row = append(row, types.NewInt64(int64(u.pos)))
	}
	return row, nil
}

func (u *unnestIter) Close() {}

// projectSetIter expands each input row by the arrays of a select-list
// unnest (planner.ProjectSet).
type projectSetIter struct {
	c      *Context
	n      *planner.ProjectSet
	in     Iter
	row    expr.Row
	arrays [][]types.Value
	pos, m int
}

func (p *projectSetIter) Next() (expr.Row, error) {
	for p.pos >= p.m {
		row, err := p.in.Next()
		if err != nil || row == nil {
			return nil, err
		}
		p.row, p.pos, p.m = row, 0, 0
		p.arrays = p.arrays[:0]
		for _, e := range p.n.Arrays {
			v, err := e.Eval(p.c.Eval, row)
			if err != nil {
				return nil, err
			}
			p.arrays = append(p.arrays, v.ArrayElems())
			p.m = max(p.m, len(v.ArrayElems()))
		}
	}
	out := make(expr.Row, 0, len(p.row)+len(p.arrays))
	out = append(out, p.row...)
	for _, a := range p.arrays {
		if p.pos < len(a) {
			out = append(out, a[p.pos])
		} else {
			out = append(out, types.NullValue)
		}
	}
	p.pos++
	return out, nil
}

func (p *projectSetIter) Close() { p.in.Close() }

type sliceIter struct {
	rows [][]types.Value
	pos  int
}

func (s *sliceIter) Next() (expr.Row, error) {
	if s.pos >= len(s.rows) {
		return nil, nil
	}
	s.pos++
	return s.rows[s.pos-1], nil
}

func (s *sliceIter) Close() {}

type filterIter struct {
	c    *Context
	in   Iter
	cond expr.Expr
}

func (f *filterIter) Next() (expr.Row, error) {
	for {
		r, err := f.in.Next()
		if err != nil || r == nil {
			return r, err
		}
		ok, err := isTrue(f.c, f.cond, r)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	}
}

func (f *filterIter) Close() { f.in.Close() }

type projectIter struct {
	c     *Context
	in    Iter
	exprs []expr.Expr
	out   expr.Row
}

func (p *projectIter) Next() (expr.Row, error) {
	r, err := p.in.Next()
	if err != nil || r == nil {
		return nil, err
	}
	for i, e := range p.exprs {
		v, err := e.Eval(p.c.Eval, r)
		if err != nil {
			return nil, err
		}
		p.out[i] = v
	}
	return p.out, nil
}

func (p *projectIter) Close() { p.in.Close() }

type aggGroup struct {
	key  expr.Row
	aggs []expr.AggFunc
}

type aggIter struct {
	c      *Context
	in     Iter
	n      *planner.Aggregate
	result []expr.Row
	pos    int
	done   bool
}

func (a *aggIter) run() error {
	if len(a.n.Sets) > 0 {
		return a.runSets()
	}
	groups := map[string]*aggGroup{}
	var order []*aggGroup
	newGroup := func(key expr.Row) *aggGroup {
		return newAggGroup(a.n, key, 0, &order)
	}
	if len(a.n.GroupBy) == 0 {
		groups[""] = newGroup(nil)
	}
	keyVals := make(expr.Row, len(a.n.GroupBy))
	var buf []byte
	for n := 0; ; n++ {
		r, err := a.nextInput(n)
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		buf = buf[:0]
		for i, e := range a.n.GroupBy {
			v, err := e.Eval(a.c.Eval, r)
			if err != nil {
				return err
			}
			keyVals[i] = v
			buf = types.AppendGroupKey(buf, v)
		}
		g, ok := groups[string(buf)]
		if !ok {
			// A group holds its key twice (map key and row) and its
			// aggregate states; count them roughly.
			if err := a.c.grow(int64(len(buf)) + rowMemory(keyVals) + int64(len(a.n.Aggs))*64); err != nil {
				return err
			}
			g = newGroup(append(expr.Row(nil), keyVals...))
			groups[string(buf)] = g
		}
		for i, s := range a.n.Aggs {
			in, err := s.Input(a.c.Eval, r)
			if err != nil {
				return err
			}
			if err := s.Add(g.aggs[i], in); err != nil {
				return err
			}
		}
	}
	return a.finish(order)
}

// nextInput is the n-th input row (nil at the end); every 256 rows it
// checks whether the statement was cancelled, as a long aggregation
// returns no row to let the caller check.
func (a *aggIter) nextInput(n int) (expr.Row, error) {
	if n%256 == 255 {
		if err := a.c.Ctx.Err(); err != nil {
			return nil, err
		}
	}
	return a.in.Next()
}

// newAggGroup starts a group of grouping set set (0 without sets).
func newAggGroup(n *planner.Aggregate, key expr.Row, set int, order *[]*aggGroup) *aggGroup {
	g := &aggGroup{key: key, aggs: make([]expr.AggFunc, len(n.Aggs))}
	for i, s := range n.Aggs {
		if s.GroupingMasks != nil {
			g.aggs[i] = constAgg{types.NewInt(types.Int32, s.GroupingMasks[set])}
			continue
		}
		g.aggs[i] = s.New()
	}
	*order = append(*order, g)
	return g
}

// constAgg is grouping(...): a value per grouping set, no input.
type constAgg struct{ v types.Value }

func (constAgg) Add(types.Value) error          { return nil }
func (c constAgg) Result() (types.Value, error) { return c.v, nil }

// runSets aggregates by grouping sets: every row joins one group per set.
// A set without columns has its group even for no input, as GROUP BY ()
// does.
func (a *aggIter) runSets() error {
	groups := map[string]*aggGroup{}
	var order []*aggGroup
	vals := make(expr.Row, len(a.n.GroupBy))
	inputs := make([]expr.AggInput, len(a.n.Aggs))
	var buf []byte
	for n := 0; ; n++ {
		r, err := a.nextInput(n)
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		for i, e := range a.n.GroupBy {
			if vals[i], err = e.Eval(a.c.Eval, r); err != nil {
				return err
			}
		}
		for i, s := range a.n.Aggs {
			if inputs[i], err = s.Input(a.c.Eval, r); err != nil {
				return err
			}
		}
		for si, set := range a.n.Sets {
			buf = append(buf[:0], byte(si), byte(si>>8))
			for _, c := range set {
				buf = types.AppendGroupKey(buf, vals[c])
			}
			g, ok := groups[string(buf)]
			if !ok {
				key := make(expr.Row, len(vals))
				for _, c := range set {
					key[c] = vals[c]
				}
				if err := a.c.grow(int64(len(buf)) + rowMemory(key) + int64(len(a.n.Aggs))*64); err != nil {
					return err
				}
				g = newAggGroup(a.n, key, si, &order)
				groups[string(buf)] = g
			}
			for i, s := range a.n.Aggs {
				if err := s.Add(g.aggs[i], inputs[i]); err != nil {
					return err
				}
			}
		}
	}
	for si, set := range a.n.Sets {
		if len(set) == 0 {
			if _, ok := groups[string([]byte{byte(si), byte(si >> 8)})]; !ok {
				newAggGroup(a.n, make(expr.Row, len(a.n.GroupBy)), si, &order)
			}
		}
	}
	return a.finish(order)
}

// finish turns the groups into result rows.
func (a *aggIter) finish(order []*aggGroup) error {
	for _, g := range order {
		row := make(expr.Row, 0, len(g.key)+len(g.aggs))
		row = append(row, g.key...)
		for _, f := range g.aggs {
			v, err := f.Result()
			if err != nil {
				return err
			}
			row = append(row, v)
		}
		a.result = append(a.result, row)
	}
	return nil
}

func (a *aggIter) Next() (expr.Row, error) {
	if !a.done {
		a.done = true
		if err := a.run(); err != nil {
			return nil, err
		}
	}
	if a.pos >= len(a.result) {
		return nil, nil
	}
	a.pos++
	return a.result[a.pos-1], nil
}

func (a *aggIter) Close() { a.in.Close() }

type sortIter struct {
	c    *Context
	in   Iter
	keys []planner.SortKey
	rows []expr.Row
	pos  int
	done bool
}

func (s *sortIter) Next() (expr.Row, error) {
	if !s.done {
		s.done = true
		rows, err := Drain(s.c, s.in)
		if err != nil {
			return nil, err
		}
		sort.SliceStable(rows, func(i, j int) bool {
			for _, k := range s.keys {
				a, b := rows[i][k.Index], rows[j][k.Index]
				if an, bn := a.IsNull(), b.IsNull(); an || bn {
					if an == bn {
						continue
					}
					return an == k.NullsFirst
				}
				c := types.Compare(a, b)
				if c != 0 {
					if k.Desc {
						return c > 0
					}
					return c < 0
				}
			}
			return false
		})
		s.rows = rows
	}
	if s.pos >= len(s.rows) {
		return nil, nil
	}
	s.pos++
	return s.rows[s.pos-1], nil
}

func (s *sortIter) Close() { s.in.Close() }

type limitIter struct {
	in            Iter
	count, offset int64 // count < 0: unlimited
	seen          int64
}

func newLimit(c *Context, in Iter, n *planner.Limit) (Iter, error) {
	l := &limitIter{in: in, count: -1}
	eval := func(e expr.Expr, what string) (int64, error) {
		v, err := e.Eval(c.Eval, nil)
		if err != nil {
			return 0, err
		}
		if v.IsNull() {
			return -1, nil
		}
		iv, err := types.Cast(v, types.TypeInt64)
		if err != nil {
			return 0, err
		}
		if iv.Int() < 0 {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%s must not be negative", what)
		}
		return iv.Int(), nil
	}
	var err error
	if n.Count != nil {
		if l.count, err = eval(n.Count, "LIMIT"); err != nil {
			in.Close()
			return nil, err
		}
	}
	if n.Offset != nil {
		if l.offset, err = eval(n.Offset, "OFFSET"); err != nil {
			in.Close()
			return nil, err
		}
		if l.offset < 0 {
			l.offset = 0
		}
	}
	return l, nil
}

func (l *limitIter) Next() (expr.Row, error) {
	for l.offset > 0 {
		r, err := l.in.Next()
		if err != nil || r == nil {
			return nil, err
		}
		l.offset--
	}
	if l.count >= 0 && l.seen >= l.count {
		return nil, nil
	}
	r, err := l.in.Next()
	if err != nil || r == nil {
		return nil, err
	}
	l.seen++
	return r, nil
}

func (l *limitIter) Close() { l.in.Close() }

type distinctIter struct {
	c    *Context
	in   Iter
	n    int
	on   []int // DISTINCT ON's columns (nil: the first n)
	seen map[string]struct{}
	buf  []byte
}

func (d *distinctIter) Next() (expr.Row, error) {
	for {
		r, err := d.in.Next()
		if err != nil || r == nil {
			return nil, err
		}
		d.buf = d.buf[:0]
		if d.on != nil {
			for _, i := range d.on {
				d.buf = types.AppendGroupKey(d.buf, r[i])
			}
		} else {
			for _, v := range r[:d.n] {
				d.buf = types.AppendGroupKey(d.buf, v)
			}
		}
		if _, ok := d.seen[string(d.buf)]; ok {
			continue
		}
		if err := d.c.grow(int64(len(d.buf)) + 16); err != nil {
			return nil, err
		}
		d.seen[string(d.buf)] = struct{}{}
		return r, nil
	}
}

func (d *distinctIter) Close() { d.in.Close() }
