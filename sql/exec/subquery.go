package exec

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// SubqueryKind is the form a subquery takes in an expression.
type SubqueryKind uint8

const (
	// SubScalar is (SELECT x ...): the one value of at most one row (NULL
	// for none; 21000 for more).
	SubScalar SubqueryKind = iota
	// SubExists is EXISTS (SELECT ...).
	SubExists
	// SubIn is L IN (SELECT ...) (NOT IN with Negate).
	SubIn
	// SubAny is L op ANY (SELECT ...) (SOME is the same).
	SubAny
	// SubAll is L op ALL (SELECT ...).
	SubAll
	// SubRow is (a, b) op (SELECT x, y ...): a row compared with the one
	// row of a subquery (NULL for none; 21000 for more), as RowCompare.
	SubRow
	// SubArray is ARRAY(SELECT x ...): the values of all rows, in the
	// plan's order, as an array ('{}' for no rows; rows of arrays make
	// an array of one more dimension).
	SubArray
)

// Subquery is an expression node that runs a query plan. Correlated
// subqueries read the values of enclosing queries as parameters: the
// binder turns each outer column reference into a parameter $N beyond
// the statement's own ($N = Slots[i]), and Binds[i] computes its value on
// the row the subquery is evaluated for. Binds (and the left operands L)
// are the node's children, so planners that remap column indexes
// (expr.Transform) also remap them. Because outer values are parameters,
// the inner plan's key-range inference turns `inner.k = outer.x` into a
// point lookup evaluated per outer row.
//
// Results are cached per statement execution (in the Context): an
// uncorrelated subquery runs once, a correlated one once per distinct
// tuple of outer values (up to subCacheMax tuples; beyond, it reruns).
type Subquery struct {
	Kind   SubqueryKind
	Negate bool       // NOT IN
	Op     expr.CmpOp // for SubAny and SubAll
	Plan   planner.Node
	Width  int         // visible columns of Plan
	L      []expr.Expr // left operands of IN / ANY / ALL (Width of them)
	Binds  []expr.Expr
	Slots  []int
	// Inherited are parameters bound by enclosing subqueries that this
	// one reads (at any depth inside): part of the cache key.
	Inherited []int
	Typ       types.Type
	Text      string // the subquery's SQL text, for EXPLAIN
	// Hash, when set, is the decorrelated form of an EXISTS or IN whose
	// correlation is only equalities of inner columns with outer values
	// (subhash.go): Eval probes a hash table of the inner rows built once
	// per statement instead of running Plan per outer row.
	Hash *SubHash
}

// subCacheMax bounds the outer-value tuples cached per correlated subquery,
// subCacheRows the result rows cached per statement (memory).
const (
	subCacheMax  = 4096
	subCacheRows = 1 << 20
)

func (s *Subquery) Type() types.Type { return s.Typ }

// SubPlan returns the plan for EXPLAIN (planner.SubPlanner).
func (s *Subquery) SubPlan() planner.Node {
	if s.Hash != nil {
		return s.Hash.Plan
	}
	return s.Plan
}

func (s *Subquery) Children() []expr.Expr {
	out := make([]expr.Expr, 0, len(s.L)+len(s.Binds))
	return append(append(out, s.L...), s.Binds...)
}

func (s *Subquery) WithChildren(k []expr.Expr) (expr.Expr, error) {
	if len(k) != len(s.L)+len(s.Binds) {
		return nil, sqlerr.New(sqlerr.InternalError, "exec: subquery rebuilt with %d children", len(k))
	}
	c := *s
	c.L = append([]expr.Expr(nil), k[:len(s.L)]...)
	c.Binds = append([]expr.Expr(nil), k[len(s.L):]...)
	return &c, nil
}

func (s *Subquery) String() string {
	sub := "(" + s.Text + ")"
	var l string
	if len(s.L) == 1 {
		l = s.L[0].String()
	} else if len(s.L) > 1 {
		parts := make([]string, len(s.L))
		for i, e := range s.L {
			parts[i] = e.String()
		}
		l = "(" + strings.Join(parts, ", ") + ")"
	}
	switch s.Kind {
	case SubExists:
		return "EXISTS " + sub
	case SubIn:
		if s.Negate {
			return l + " NOT IN " + sub
		}
		return l + " IN " + sub
	case SubAny:
		return l + " " + s.Op.String() + " ANY " + sub
	case SubAll:
		return l + " " + s.Op.String() + " ALL " + sub
	case SubRow:
		return l + " " + s.Op.String() + " " + sub
	case SubArray:
		return "ARRAY" + sub
	}
	return sub
}

// HasSubquery reports whether e contains a subquery.
func HasSubquery(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if _, ok := x.(*Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

// subResult is the materialized result of one run of a subquery.
type subResult struct {
	rows []expr.Row // Width columns each; for EXISTS at most one row
	// For IN: the rows without NULLs by group key, and those with one.
	set      map[string]struct{}
	nullRows []expr.Row
}

// subState holds the statement's subquery results.
type subState struct {
	mu    sync.Mutex
	cache map[*Subquery]map[string]*subResult // made on first use, under mu
	rows  int                                 // result rows held by cache
	// hashed are the probe tables of decorrelated subqueries (subhash.go);
	// a nil table means the inner side was too large and the subquery runs
	// per outer row.
	hashed map[*Subquery]*subHashEntry
	// lastHashed is the entry of the node last probed, read without mu.
	lastHashed atomic.Pointer[hashedSub]
	// work holds each running recursive query's current work table
	// (recursive.go), made on first use. It lives here, not in Context,
	// so that every copy of the statement's context sees the one made.
	work map[*planner.RecursiveCTE][]expr.Row
}

func (s *Subquery) Eval(c *expr.Context, row expr.Row) (types.Value, error) {
	ec, ok := c.Exec.(*Context)
	if !ok || ec == nil {
		return types.Value{}, sqlerr.NotSupported("a subquery in this context")
	}
	if s.Hash != nil {
		// Decorrelated: probe the statement's table of inner rows with
		// the outer row's values.
		res, ok, err := ec.hashProbe(s, c, row)
		if err != nil {
			return types.Value{}, err
		}
		if ok {
			return s.result(c, row, res)
		}
		// The inner side was too large to hash: run per outer row.
	}
	eval := c
	var buf []byte
	for _, n := range s.Inherited {
		if n <= len(c.Params) {
			buf = types.AppendGroupKey(buf, c.Params[n-1])
		}
	}
	if len(s.Binds) > 0 {
		need := len(c.Params)
		for _, n := range s.Slots {
			need = max(need, n)
		}
		params := make([]types.Value, need)
		copy(params, c.Params)
		for i, b := range s.Binds {
			v, err := b.Eval(c, row)
			if err != nil {
				return types.Value{}, err
			}
			params[s.Slots[i]-1] = v
			buf = types.AppendGroupKey(buf, v)
		}
		nc := *c
		nc.Params = params
		eval = &nc
	}
	res, err := ec.subResult(s, string(buf), eval)
	if err != nil {
		return types.Value{}, err
	}
	return s.result(c, row, res)
}

// result is the subquery's value on row given the inner rows res.
func (s *Subquery) result(c *expr.Context, row expr.Row, res *subResult) (types.Value, error) {
	switch s.Kind {
	case SubScalar:
		if len(res.rows) == 0 {
			return types.NullValue, nil
		}
		return res.rows[0][0], nil
	case SubExists:
		return types.NewBool(len(res.rows) > 0), nil
	case SubArray:
		elems := make([]types.Value, len(res.rows))
		for i, r := range res.rows {
			elems[i] = r[0]
		}
		return expr.MakeArray(s.Typ.ElemType(), elems, s.Plan.Columns()[0].Type.Family == types.Array)
	}
	left := make(expr.Row, len(s.L))
	for i, e := range s.L {
		v, err := e.Eval(c, row)
		if err != nil {
			return types.Value{}, err
		}
		left[i] = v
	}
	switch s.Kind {
	case SubIn:
		v := s.in(res, left)
		if s.Negate && !v.IsNull() {
			v = types.NewBool(!v.Bool())
		}
		return v, nil
	case SubAny:
		return quantified(res.rows, left, s.Op, true), nil
	case SubAll:
		return quantified(res.rows, left, s.Op, false), nil
	case SubRow:
		if len(res.rows) == 0 {
			return types.NullValue, nil
		}
		rc := &expr.RowCompare{Op: s.Op, L: make([]expr.Expr, len(left)), R: make([]expr.Expr, len(left))}
		for i := range left {
			rc.L[i] = expr.NewConst(left[i])
			rc.R[i] = expr.NewConst(res.rows[0][i])
		}
		return rc.Eval(c, nil)
	}
	return types.Value{}, sqlerr.New(sqlerr.InternalError, "exec: unknown subquery kind %d", s.Kind)
}

// in is L IN (rows) with SQL's NULL semantics: TRUE when a row equals L,
// else NULL when some row might equal it (a NULL on either side where the
// other values are equal), else FALSE; FALSE for no rows.
func (s *Subquery) in(res *subResult, left expr.Row) types.Value {
	if len(res.rows) == 0 {
		return types.NewBool(false)
	}
	leftNull := false
	for _, v := range left {
		leftNull = leftNull || v.IsNull()
	}
	candidates := res.rows
	if !leftNull && res.set != nil {
		if _, ok := res.set[types.GroupKey(left)]; ok {
			return types.NewBool(true)
		}
		candidates = res.nullRows
	}
	sawNull := false
	for _, r := range candidates {
		switch rowEqual(left, r) {
		case 1:
			return types.NewBool(true)
		case 0:
			sawNull = true
		}
	}
	if sawNull {
		return types.NullValue
	}
	return types.NewBool(false)
}

// rowEqual compares two rows for equality: 1 true, -1 false, 0 NULL.
func rowEqual(a, b expr.Row) int {
	res := 1
	for i := range a {
		if a[i].IsNull() || b[i].IsNull() {
			res = 0
			continue
		}
		if types.Compare(a[i], b[i]) != 0 {
			return -1
		}
	}
	return res
}

// quantified is L op ANY (rows) (any=true) or L op ALL (rows): ANY is TRUE
// when some comparison is TRUE, else NULL when some is NULL, else FALSE
// (FALSE for no rows); ALL is FALSE when some comparison is FALSE, else
// NULL when some is NULL, else TRUE (TRUE for no rows).
func quantified(rows []expr.Row, left expr.Row, op expr.CmpOp, any bool) types.Value {
	sawNull := false
	for _, r := range rows {
		l, v := left[0], r[0]
		if l.IsNull() || v.IsNull() {
			sawNull = true
			continue
		}
		c := types.Compare(l, v)
		var holds bool
		switch op {
		case expr.EQ:
			holds = c == 0
		case expr.NE:
			holds = c != 0
		case expr.LT:
			holds = c < 0
		case expr.LE:
			holds = c <= 0
		case expr.GT:
			holds = c > 0
		case expr.GE:
			holds = c >= 0
		}
		if holds == any {
			return types.NewBool(any)
		}
	}
	if sawNull {
		return types.NullValue
	}
	return types.NewBool(!any)
}

// subResult returns the cached result of s for the outer values key, running
// the plan with eval (whose parameters carry those values) when needed.
func (c *Context) subResult(s *Subquery, key string, eval *expr.Context) (*subResult, error) {
	st := c.sub
	if st != nil {
		st.mu.Lock()
		r := st.cache[s][key]
		st.mu.Unlock()
		if r != nil {
			return r, nil
		}
	}
	r, err := c.runSubquery(s, eval)
	if err != nil {
		return nil, err
	}
	if st != nil {
		st.mu.Lock()
		if st.cache == nil {
			st.cache = map[*Subquery]map[string]*subResult{}
		}
		m := st.cache[s]
		if m == nil {
			m = map[string]*subResult{}
			st.cache[s] = m
		}
		// An uncorrelated result is always kept: it serves every row.
		uncorrelated := len(s.Binds) == 0 && len(s.Inherited) == 0
		if uncorrelated || (len(m) < subCacheMax && st.rows+len(r.rows) <= subCacheRows) {
			m[key] = r
			st.rows += len(r.rows)
		}
		st.mu.Unlock()
	}
	return r, nil
}

func (c *Context) runSubquery(s *Subquery, eval *expr.Context) (*subResult, error) {
	sc := *c
	if c.SubReader != nil {
		sc.Reader = c.SubReader
		sc.Concurrent = false
	}
	ev := *eval
	ev.Exec = &sc
	sc.Eval = &ev
	it, err := Build(&sc, s.Plan)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	res := &subResult{}
	for {
		r, err := it.Next()
		if err != nil {
			return nil, err
		}
		if r == nil {
			break
		}
		switch s.Kind {
		case SubExists:
			res.rows = append(res.rows, nil)
			return res, nil
		case SubScalar, SubRow:
			if len(res.rows) > 0 {
				return nil, sqlerr.New(sqlerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
			}
		}
		res.rows = append(res.rows, append(expr.Row(nil), r[:s.Width]...))
	}
	if s.Kind == SubIn {
		res.index()
	}
	return res, nil
}

// index hashes the rows of an IN subquery's result when there are enough
// of them for the set to pay off.
func (res *subResult) index() {
	if len(res.rows) > 8 {
		res.set = make(map[string]struct{}, len(res.rows))
		for _, r := range res.rows {
			hasNull := false
			for _, v := range r {
				hasNull = hasNull || v.IsNull()
			}
			if hasNull {
				res.nullRows = append(res.nullRows, r)
				continue
			}
			res.set[types.GroupKey(r)] = struct{}{}
		}
	}
}
