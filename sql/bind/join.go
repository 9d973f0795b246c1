package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// fromItem is one input of an inner-join group: a table, a derived table,
// a view, or a LEFT JOIN planned as a unit.
type fromItem struct {
	node planner.Node
	sc   *scope
	off  int // position of its first column in the group's FROM-order row
	// filters are the conditions on this item alone, in its own columns.
	filters []expr.Expr
}

// buildFromWhere plans a FROM clause with its WHERE condition (nil: none).
// Its rows and scope have the columns of the FROM items in the order they
// are written.
//
// The inner and cross joins of the clause (comma joins included) form one
// group: the WHERE and ON conditions are split into conjuncts, those on one
// item are pushed into its scan (where they narrow the key ranges), and the
// items are joined greedily: each step adds the cheapest item connected to
// the joined ones by an equality (a hash join), else by any condition,
// else the cheapest one. This keeps the 64-table joins of sqllogictest's
// select5 linear in the size of the tables instead of exponential.
func (a *binder) buildFromWhere(j *ast.Join, where ast.ExprNode) (planner.Node, *scope, error) {
	var items []*fromItem
	var ons []ast.ExprNode
	if err := a.flattenFrom(j, &items, &ons); err != nil {
		return nil, nil, err
	}
	return a.joinGroup(items, ons, where)
}

// joinGroup plans the inner-join group of items with its ON conditions
// (over the items' columns in FROM order) and WHERE condition (nil: none).
func (a *binder) joinGroup(items []*fromItem, ons []ast.ExprNode, where ast.ExprNode) (planner.Node, *scope, error) {
	full := &scope{}
	for _, it := range items {
		it.off = len(full.cols)
		full.cols = append(full.cols, it.sc.cols...)
	}
	var conds []expr.Expr
	for _, on := range ons {
		c, err := a.buildCondition(full, on, "JOIN/ON")
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, c)
	}
	if where != nil {
		c, err := a.buildCondition(full, where, "WHERE")
		if err != nil {
			return nil, nil, err
		}
		conds = append(conds, c)
	}
	if len(items) == 1 {
		node, err := a.applyFilters(items[0].node, conds)
		return node, full, err
	}

	// owner maps a FROM-order column to its item.
	owner := make([]int, len(full.cols))
	for i, it := range items {
		for k := range it.sc.cols {
			owner[it.off+k] = i
		}
	}
	var top []expr.Expr // conditions applied after the joins
	var preds []*joinPred
	for _, c := range conds {
		for _, conj := range splitAnd(c) {
			refs, ok := itemRefs(conj, owner)
			switch {
			case !ok || len(refs) == 0:
				// Subqueries and constant conditions are evaluated
				// once the whole row is there.
				top = append(top, conj)
			case len(refs) == 1:
				it := items[refs[0]]
				local, err := remapColumns(conj, func(i int) int { return i - it.off })
				if err != nil {
					return nil, nil, err
				}
				it.filters = append(it.filters, local)
			default:
				preds = append(preds, &joinPred{e: conj, refs: refs})
			}
		}
	}
	for _, it := range items {
		node, err := a.applyFilters(it.node, it.filters)
		if err != nil {
			return nil, nil, err
		}
		it.node = node
	}

	node, pos, err := joinItems(items, preds, owner, a.setting("enable_hashjoin"))
	if err != nil {
		return nil, nil, err
	}
	// Back to FROM order.
	exprs := make([]expr.Expr, len(full.cols))
	cols := make([]planner.Column, len(full.cols))
	for _, it := range items {
		for k, c := range it.node.Columns() {
			g := it.off + k
			exprs[g] = &expr.ColumnRef{Index: pos[g], Name: c.Name, Typ: c.Type}
			cols[g] = c
		}
	}
	var out planner.Node = &planner.Project{Input: node, Exprs: exprs, Cols: cols}
	if len(top) > 0 {
		out = &planner.Filter{Input: out, Cond: andAll(top)}
	}
	return out, full, nil
}

// joinPred is a condition over two or more FROM items.
type joinPred struct {
	e    expr.Expr
	refs []int // the items it reads, ascending
	done bool
}

// joinItems joins the items greedily (see buildFromWhere). pos maps each
// FROM-order column to its position in the joined row. hash false
// (enable_hashjoin off) keeps equalities in the join condition, so every
// join is a nested loop.
func joinItems(items []*fromItem, preds []*joinPred, owner []int, hash bool) (planner.Node, []int, error) {
	pos := make([]int, len(owner))
	joined := make([]bool, len(items))
	width := 0
	place := func(i int) {
		it := items[i]
		for k := range it.sc.cols {
			pos[it.off+k] = width + k
		}
		width += len(it.sc.cols)
		joined[i] = true
	}
	// connected reports how item i relates to the joined items: 2 for an
	// equality usable as hash key, 1 for another condition, 0 for none.
	connected := func(i int) int {
		best := 0
		for _, p := range preds {
			if p.done || !readyWith(p.refs, joined, i) {
				continue
			}
			if _, _, ok := splitEquality(p.e, owner, i); ok {
				return 2
			}
			best = 1
		}
		return best
	}
	// Items linked by conditions form components; each component is
	// joined through its conditions before the next one is added, so that
	// cross products between components come last, when the conditions
	// have made each side as small as they can.
	comp := make([]int, len(items))
	for i := range comp {
		comp[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if comp[i] != i {
			comp[i] = find(comp[i])
		}
		return comp[i]
	}
	for _, p := range preds {
		for _, r := range p.refs[1:] {
			comp[find(r)] = find(p.refs[0])
		}
	}
	compCost := map[int]int{}
	for i, it := range items {
		c := find(i)
		if cost, ok := compCost[c]; !ok || itemCost(it) < cost {
			compCost[c] = itemCost(it)
		}
	}
	// enabler reports whether joining the small item i now turns an
	// equality into a hash key for an item still to join: in pgjdbc's
	// `pka.attnum = con.confkey[pos.n]` over generate_series(1, 32)
	// pos(n), joining pos right after con lets pka join by hash on
	// (attrelid, attnum) instead of a nested loop over every pair of
	// columns testing 32 positions each.
	enabler := func(i int) bool {
		if _, small := knownRows(items[i].node); !small {
			return false
		}
		for _, p := range preds {
			if p.done {
				continue
			}
			for _, x := range p.refs {
				if x == i || joined[x] || !readyWithout(p.refs, joined, i, x) {
					continue
				}
				if _, _, ok := splitEquality(p.e, owner, x); ok {
					return true
				}
			}
		}
		return false
	}
	// pick returns the next item: in the current component a small
	// enabler, else the best connected one, else the cheapest item of the
	// cheapest component.
	cur := -1
	pick := func() int {
		if hash && cur >= 0 {
			for i := range items {
				if !joined[i] && find(i) == cur && enabler(i) {
					return i
				}
			}
		}
		next, nextConn := -1, -1
		for i := range items {
			if joined[i] || find(i) != cur {
				continue
			}
			c := connected(i)
			if c > nextConn || (c == nextConn && itemCost(items[i]) < itemCost(items[next])) {
				next, nextConn = i, c
			}
		}
		if next >= 0 {
			return next
		}
		for i := range items {
			if joined[i] {
				continue
			}
			if next < 0 || compCost[find(i)] < compCost[find(next)] ||
				(find(i) == find(next) && itemCost(items[i]) < itemCost(items[next])) {
				next = i
			}
		}
		cur = find(next)
		return next
	}
	first := pick()
	node := items[first].node
	cols := append([]planner.Column(nil), node.Columns()...)
	place(first)
	for n := 1; n < len(items); n++ {
		next := pick()
		right := items[next]
		leftPos := append([]int(nil), pos...)
		leftJoined := append([]bool(nil), joined...)
		place(next)
		j := &planner.Join{Kind: planner.InnerJoin, Left: node, Right: right.node}
		var rest []expr.Expr
		for _, p := range preds {
			if p.done || !readyWith(p.refs, leftJoined, next) {
				continue
			}
			p.done = true
			if l, r, ok := splitEquality(p.e, owner, next); ok && hash {
				lk, err := remapColumns(l, func(i int) int { return leftPos[i] })
				if err != nil {
					return nil, nil, err
				}
				rk, err := remapColumns(r, func(i int) int { return i - right.off })
				if err != nil {
					return nil, nil, err
				}
				j.LeftKeys = append(j.LeftKeys, lk)
				j.RightKeys = append(j.RightKeys, rk)
				continue
			}
			e, err := remapColumns(p.e, func(i int) int { return pos[i] })
			if err != nil {
				return nil, nil, err
			}
			rest = append(rest, e)
		}
		if len(rest) > 0 {
			j.Cond = andAll(rest)
		}
		cols = append(cols, right.node.Columns()...)
		j.Cols = append([]planner.Column(nil), cols...)
		node = j
	}
	return node, pos, nil
}

// readyWith reports whether every item in refs is joined or is item i, and
// i is one of them.
func readyWith(refs []int, joined []bool, i int) bool {
	has := false
	for _, r := range refs {
		if r == i {
			has = true
		} else if !joined[r] {
			return false
		}
	}
	return has
}

// readyWithout reports whether every item in refs other than i and x is
// joined, and i is one of them: once i is joined, only x is missing.
func readyWithout(refs []int, joined []bool, i, x int) bool {
	has := false
	for _, r := range refs {
		switch {
		case r == i:
			has = true
		case r != x && !joined[r]:
			return false
		}
	}
	return has
}

// smallItemRows bounds the items whose cross product is joined early to
// complete a hash key (joinItems' enabler).
const smallItemRows = 1024

// knownRows returns the number of rows of a node known at plan time, when
// it is at most smallItemRows: a VALUES list, or generate_series with
// constant integer bounds.
func knownRows(n planner.Node) (int64, bool) {
	switch n := n.(type) {
	case *planner.Values:
		return int64(len(n.Rows)), len(n.Rows) <= smallItemRows
	case *planner.Series:
		start, ok1 := constInt(n.Start)
		stop, ok2 := constInt(n.Stop)
		step, ok3 := int64(1), true
		if n.Step != nil {
			step, ok3 = constInt(n.Step)
		}
		if !ok1 || !ok2 || !ok3 || step == 0 {
			return 0, false
		}
		rows := int64(0)
		if (step > 0 && stop >= start) || (step < 0 && stop <= start) {
			rows = (stop-start)/step + 1
		}
		return rows, rows <= smallItemRows
	}
	return 0, false
}

// constInt returns the value of an integer constant, through casts.
func constInt(e expr.Expr) (int64, bool) {
	for {
		c, ok := e.(*expr.Cast)
		if !ok {
			break
		}
		e = c.E
	}
	c, ok := e.(*expr.Const)
	if !ok || !c.Value.Family().IsInteger() {
		return 0, false
	}
	return c.Value.Int(), true
}

// itemCost guesses an item's row count, lower for items with conditions
// (fewer rows to carry through the joins).
func itemCost(it *fromItem) int {
	cost := 1000
	if len(it.filters) > 0 {
		cost = 100
		if scan, ok := it.node.(*planner.Scan); ok && scan.Ranges != nil {
			cost = 10
		}
	}
	return cost
}

// splitEquality recognises `l = r` where one side reads only item i and
// the other only items other than i, with hash-compatible types. It
// returns the side over the other items first.
func splitEquality(e expr.Expr, owner []int, i int) (other, mine expr.Expr, ok bool) {
	c, isCmp := e.(*expr.Compare)
	if !isCmp || c.Op != expr.EQ || !hashCompatible(c.L.Type(), c.R.Type()) {
		return nil, nil, false
	}
	side := func(x expr.Expr) int { // 1: only i, 2: only others, 0: mixed/none
		refs, ok := itemRefs(x, owner)
		if !ok || len(refs) == 0 {
			return 0
		}
		only := true
		none := true
		for _, r := range refs {
			if r == i {
				none = false
			} else {
				only = false
			}
		}
		switch {
		case only:
			return 1
		case none:
			return 2
		}
		return 0
	}
	ls, rs := side(c.L), side(c.R)
	switch {
	case ls == 2 && rs == 1:
		return c.L, c.R, true
	case ls == 1 && rs == 2:
		return c.R, c.L, true
	}
	return nil, nil, false
}

// hashCompatible reports whether values of types a and b are equal under
// `=` exactly when their group keys are (types.AppendGroupKey): numbers
// with numbers, strings with strings, otherwise the same family.
func hashCompatible(a, b types.Type) bool {
	switch {
	case a.Family.IsNumeric() && b.Family.IsNumeric():
		return true
	case a.Family.IsStringLike() && b.Family.IsStringLike():
		return a.Family != types.Json && b.Family != types.Json
	}
	return a.Family == b.Family && a.Family != types.Unknown && a.Family != types.Null
}

// itemRefs lists the items whose columns e reads (ascending); ok is false
// when e contains an expression the planner cannot see into (a subquery)
// or a non-deterministic function, which must not be moved.
func itemRefs(e expr.Expr, owner []int) (refs []int, ok bool) {
	ok = true
	seen := map[int]bool{}
	expr.Walk(e, func(x expr.Expr) bool {
		if external(x) {
			ok = false
			return false
		}
		switch n := x.(type) {
		case *expr.ColumnRef:
			if n.Index < 0 || n.Index >= len(owner) {
				ok = false
				return false
			}
			seen[owner[n.Index]] = true
		case *expr.Func:
			if !n.Deterministic {
				ok = false
			}
		}
		return ok
	})
	for i := range len(owner) {
		if len(seen) == 0 {
			break
		}
		if seen[i] {
			refs = append(refs, i)
			delete(seen, i)
		}
	}
	return refs, ok
}

// remapColumns rewrites every column reference's index with f.
func remapColumns(e expr.Expr, f func(int) int) (expr.Expr, error) {
	return expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.ColumnRef); ok {
			return &expr.ColumnRef{Index: f(c.Index), Name: c.Name, Typ: c.Typ}, nil
		}
		return x, nil
	})
}

func splitAnd(e expr.Expr) []expr.Expr {
	if a, ok := e.(*expr.And); ok {
		return append(splitAnd(a.L), splitAnd(a.R)...)
	}
	return []expr.Expr{e}
}

func andAll(es []expr.Expr) expr.Expr {
	out := es[0]
	for _, e := range es[1:] {
		out = &expr.And{L: out, R: e}
	}
	return out
}

// applyFilters adds conditions to a node, pushing them as far down as
// they can go (pushFilter).
func (a *binder) applyFilters(node planner.Node, conds []expr.Expr) (planner.Node, error) {
	if len(conds) == 0 {
		return node, nil
	}
	return a.pushFilter(node, andAll(conds))
}

// pushFilter adds cond to node: into a scan's condition (where it narrows
// the key ranges), through filters, sorts and projections (a derived
// table's or view's select list, its column references replaced by the
// expressions they name), else as a Filter on top. It stops at
// aggregates, DISTINCT, LIMIT and joins, and does not move subqueries or
// non-deterministic expressions.
func (a *binder) pushFilter(node planner.Node, cond expr.Expr) (planner.Node, error) {
	switch n := node.(type) {
	case *planner.Scan:
		if n.Filter != nil {
			cond = &expr.And{L: n.Filter, R: cond}
		}
		if err := a.setScanCondition(n, cond); err != nil {
			return nil, err
		}
		return n, nil
	case *planner.Filter:
		in, err := a.pushFilter(n.Input, cond)
		if err != nil {
			return nil, err
		}
		return &planner.Filter{Input: in, Cond: n.Cond}, nil
	case *planner.Sort:
		in, err := a.pushFilter(n.Input, cond)
		if err != nil {
			return nil, err
		}
		return &planner.Sort{Input: in, Keys: n.Keys}, nil
	case *planner.Join:
		return a.pushIntoJoin(n, cond)
	case *planner.Apply:
		return a.pushIntoApply(n, cond)
	case *planner.Project:
		if sub, ok := substituteColumns(cond, n.Exprs); ok {
			in, err := a.pushFilter(n.Input, sub)
			if err != nil {
				return nil, err
			}
			return &planner.Project{Input: in, Exprs: n.Exprs, Cols: n.Cols}, nil
		}
	}
	return &planner.Filter{Input: node, Cond: cond}, nil
}

// pushIntoJoin pushes the conjuncts of cond that read one side of a join
// into that side: either side of an inner join, only the preserved (left)
// side of a LEFT join, as a condition on the NULL-padded side must see the
// padding. The rest is a Filter on top.
func (a *binder) pushIntoJoin(n *planner.Join, cond expr.Expr) (planner.Node, error) {
	lw := len(n.Left.Columns())
	owner := make([]int, len(n.Cols))
	for i := lw; i < len(owner); i++ {
		owner[i] = 1
	}
	var left, right, rest []expr.Expr
	var leftKeys, rightKeys []expr.Expr
	for _, conj := range splitAnd(cond) {
		refs, ok := itemRefs(conj, owner)
		switch {
		case ok && len(refs) == 2 && n.Kind == planner.InnerJoin && a.setting("enable_hashjoin"):
			// An equality between the sides of an inner join is one more
			// hash key (a condition pushed into a lateral join's left
			// side, pushIntoApply, meets a join built without it).
			if l, r, eq := splitEquality(conj, owner, 1); eq {
				rk, err := remapColumns(r, func(i int) int { return i - lw })
				if err != nil {
					return nil, err
				}
				leftKeys, rightKeys = append(leftKeys, l), append(rightKeys, rk)
				continue
			}
			rest = append(rest, conj)
		case !ok || len(refs) != 1:
			rest = append(rest, conj)
		case refs[0] == 0:
			left = append(left, conj)
		case n.Kind == planner.InnerJoin:
			local, err := remapColumns(conj, func(i int) int { return i - lw })
			if err != nil {
				return nil, err
			}
			right = append(right, local)
		default:
			rest = append(rest, conj)
		}
	}
	out := *n
	if len(leftKeys) > 0 {
		out.LeftKeys = append(append([]expr.Expr(nil), n.LeftKeys...), leftKeys...)
		out.RightKeys = append(append([]expr.Expr(nil), n.RightKeys...), rightKeys...)
	}
	var err error
	if out.Left, err = a.applyFilters(n.Left, left); err != nil {
		return nil, err
	}
	if out.Right, err = a.applyFilters(n.Right, right); err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		return &out, nil
	}
	return &planner.Filter{Input: &out, Cond: andAll(rest)}, nil
}

// pushIntoApply pushes the conjuncts of cond that read only the left
// side of a lateral join into that side (it is preserved by an outer
// Apply too), so that `FROM a, b, f(b.x) WHERE a.k = b.k` joins a and b
// by hash before f runs per row; the rest is a Filter on top.
func (a *binder) pushIntoApply(n *planner.Apply, cond expr.Expr) (planner.Node, error) {
	lw := len(n.Left.Columns())
	owner := make([]int, len(n.Cols))
	for i := lw; i < len(owner); i++ {
		owner[i] = 1
	}
	var left, rest []expr.Expr
	for _, conj := range splitAnd(cond) {
		if refs, ok := itemRefs(conj, owner); ok && len(refs) == 1 && refs[0] == 0 {
			left = append(left, conj)
		} else {
			rest = append(rest, conj)
		}
	}
	if len(left) == 0 {
		return &planner.Filter{Input: n, Cond: cond}, nil
	}
	out := *n
	var err error
	if out.Left, err = a.applyFilters(n.Left, left); err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		return &out, nil
	}
	return &planner.Filter{Input: &out, Cond: andAll(rest)}, nil
}

// substituteColumns rewrites cond over a projection's output into a
// condition over its input; ok is false when that would move a subquery or
// a non-deterministic expression.
func substituteColumns(cond expr.Expr, exprs []expr.Expr) (expr.Expr, bool) {
	if !movable(cond) {
		return nil, false
	}
	ok := true
	out, err := expr.Transform(cond, func(x expr.Expr) (expr.Expr, error) {
		c, isRef := x.(*expr.ColumnRef)
		if !isRef {
			return x, nil
		}
		if c.Index < 0 || c.Index >= len(exprs) || !movable(exprs[c.Index]) {
			ok = false
			return x, nil
		}
		return exprs[c.Index], nil
	})
	if err != nil || !ok {
		return nil, false
	}
	return out, true
}

// movable reports whether e may be evaluated somewhere else in the plan:
// no subquery (or other external node) and no non-deterministic function.
func movable(e expr.Expr) bool {
	ok := true
	expr.Walk(e, func(x expr.Expr) bool {
		if external(x) {
			ok = false
		} else if f, isFunc := x.(*expr.Func); isFunc && !f.Deterministic {
			ok = false
		}
		return ok
	})
	return ok
}

// external reports whether x is an expression node defined outside package
// expr (exec.Subquery): the planner cannot see what it reads, so it is
// never moved. expr's own nodes (array subscripts and constructors, record
// fields) are plain expressions over their children: `a.x = b.arr[c.i]`
// is a join condition like any other.
func external(x expr.Expr) bool {
	if _, ok := x.(expr.Node); !ok {
		return false
	}
	switch x.(type) {
	case *expr.ArrayElem, *expr.ArraySlice, *expr.ArrayCtor, *expr.ArrayCompare, *expr.ArrayContains,
		*expr.RowExpr, *expr.FieldSelect:
		return false
	}
	return true
}

// flattenFrom collects the items and ON conditions of an inner-join group.
func (a *binder) flattenFrom(n ast.ResultSetNode, items *[]*fromItem, ons *[]ast.ExprNode) error {
	j, ok := n.(*ast.Join)
	if !ok {
		it, err := a.fromLeaf(n)
		if err != nil {
			return err
		}
		*items = append(*items, it)
		return nil
	}
	if j.Right == nil {
		return a.flattenFrom(j.Left, items, ons)
	}
	// A lateral-capable item of an outer or NATURAL/USING join that names
	// no column at all cannot read the items to its left: a plain join
	// (t RIGHT JOIN generate_series(1, 3) g ON ...). Inner joins find out
	// by binding (flattenLateral).
	plainJoin := j.NaturalJoin || len(j.Using) > 0 || j.Tp == ast.LeftJoin || j.Tp == ast.RightJoin
	if isLateral(j.Right) && !(plainJoin && !readsColumns(j.Right)) {
		return a.flattenLateral(j, items, ons)
	}
	if j.NaturalJoin || len(j.Using) > 0 {
		it, err := a.usingJoin(j)
		if err != nil {
			return err
		}
		*items = append(*items, it)
		return nil
	}
	switch j.Tp {
	case ast.LeftJoin:
		it, err := a.buildLeftJoin(j)
		if err != nil {
			return err
		}
		*items = append(*items, it)
		return nil
	case ast.RightJoin:
		it, err := a.buildRightJoin(j)
		if err != nil {
			return err
		}
		*items = append(*items, it)
		return nil
	}
	if err := a.flattenFrom(j.Left, items, ons); err != nil {
		return err
	}
	if err := a.flattenFrom(j.Right, items, ons); err != nil {
		return err
	}
	if j.On != nil {
		*ons = append(*ons, j.On.Expr)
	}
	return nil
}

// buildLeftJoin plans `l LEFT JOIN r ON cond` as one item. Conjuncts of
// cond on r alone filter r before the join; equalities between the sides
// become hash keys; the rest decide matches (a left row that matches
// nothing still appears once, NULL-padded).
func (a *binder) buildLeftJoin(j *ast.Join) (*fromItem, error) {
	return a.leftJoin(j.Left, j.Right, j.On)
}

// buildRightJoin plans `l RIGHT JOIN r ON cond` as `r LEFT JOIN l ON cond`
// with the columns put back in the written order.
func (a *binder) buildRightJoin(j *ast.Join) (*fromItem, error) {
	it, err := a.leftJoin(j.Right, j.Left, j.On)
	if err != nil {
		return nil, err
	}
	jn := it.node.(*planner.Join)
	rw := len(jn.Left.Columns())
	lw := len(jn.Right.Columns())
	var exprs []expr.Expr
	var cols []planner.Column
	sc := &scope{}
	for k := range lw + rw {
		i := rw + k // the written left side first
		if k >= lw {
			i = k - lw
		}
		c := jn.Cols[i]
		exprs = append(exprs, &expr.ColumnRef{Index: i, Name: c.Name, Typ: c.Type})
		cols = append(cols, c)
		sc.cols = append(sc.cols, it.sc.cols[i])
	}
	return &fromItem{node: &planner.Project{Input: jn, Exprs: exprs, Cols: cols}, sc: sc}, nil
}

// leftJoin plans outer LEFT JOIN inner ON on.
func (a *binder) leftJoin(outer, inner ast.ResultSetNode, on *ast.OnCondition) (*fromItem, error) {
	lnode, lsc, err := a.buildFromNode(outer)
	if err != nil {
		return nil, err
	}
	rnode, rsc, err := a.buildFromNode(inner)
	if err != nil {
		return nil, err
	}
	sc := &scope{cols: append(append([]scopeColumn(nil), lsc.cols...), rsc.cols...)}
	lw := len(lsc.cols)
	owner := make([]int, len(sc.cols))
	for i := lw; i < len(owner); i++ {
		owner[i] = 1
	}
	jn := &planner.Join{Kind: planner.LeftJoin}
	var rfilters, rest []expr.Expr
	if on == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "an outer join requires an ON condition")
	}
	cond, err := a.buildCondition(sc, on.Expr, "JOIN/ON")
	if err != nil {
		return nil, err
	}
	for _, conj := range splitAnd(cond) {
		refs, ok := itemRefs(conj, owner)
		if ok && len(refs) == 1 && refs[0] == 1 {
			local, err := remapColumns(conj, func(i int) int { return i - lw })
			if err != nil {
				return nil, err
			}
			rfilters = append(rfilters, local)
			continue
		}
		if l, r, ok := splitEquality(conj, owner, 1); ok && a.setting("enable_hashjoin") {
			rk, err := remapColumns(r, func(i int) int { return i - lw })
			if err != nil {
				return nil, err
			}
			jn.LeftKeys = append(jn.LeftKeys, l)
			jn.RightKeys = append(jn.RightKeys, rk)
			continue
		}
		rest = append(rest, conj)
	}
	if rnode, err = a.applyFilters(rnode, rfilters); err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		jn.Cond = andAll(rest)
	}
	jn.Left, jn.Right = lnode, rnode
	jn.Cols = append(append([]planner.Column(nil), lnode.Columns()...), rnode.Columns()...)
	return &fromItem{node: jn, sc: sc}, nil
}

// buildFromNode plans one side of a LEFT JOIN.
func (a *binder) buildFromNode(n ast.ResultSetNode) (planner.Node, *scope, error) {
	if j, ok := n.(*ast.Join); ok {
		return a.buildFromWhere(j, nil)
	}
	it, err := a.fromLeaf(n)
	if err != nil {
		return nil, nil, err
	}
	return it.node, it.sc, nil
}

// fromLeaf plans a table, view or derived table of a FROM clause.
func (a *binder) fromLeaf(n ast.ResultSetNode) (*fromItem, error) {
	ts, ok := n.(*ast.TableSource)
	if !ok {
		return nil, sqlerr.NotSupported("this FROM clause")
	}
	alias := ts.AsName.O
	switch src := ts.Source.(type) {
	case *ast.TableName:
		node, sc, err := a.tableSource(src, alias)
		if err != nil {
			return nil, err
		}
		return &fromItem{node: node, sc: sc}, nil
	case *ast.Join:
		node, sc, err := a.buildFromWhere(src, nil)
		if err != nil {
			return nil, err
		}
		if alias != "" {
			return nil, sqlerr.NotSupported("an alias for a parenthesised join")
		}
		return &fromItem{node: node, sc: sc}, nil
	case *ast.SelectStmt, *ast.SetOprStmt:
		// A LATERAL item first in FROM has nothing to refer to: a
		// plain derived table (lateral.go plans the others).
		names, _ := columnAliases(ts)
		if call := tableFuncCall(src); call != nil {
			return a.fromFunction(call, alias, names)
		}
		if call := seriesCall(src); call != nil {
			if call.FnName.L != parser.SeriesFunc {
				return a.fromUnnest(call, alias, names)
			}
			return a.fromSeries(call, alias, names)
		}
		node, err := a.fromQuery(src)
		if err != nil {
			return nil, err
		}
		node, sc := derivedTable(node, alias, names)
		return &fromItem{node: node, sc: sc}, nil
	}
	return nil, sqlerr.NotSupported("this FROM clause")
}

// seriesCall returns the call of generate_series(...) in FROM, which the
// dialect front spells as the derived table (SELECT
// pivot_generate_series(...)), or nil when n is another query.
func seriesCall(n ast.ResultSetNode) *ast.FuncCallExpr {
	sel, ok := n.(*ast.SelectStmt)
	if !ok || sel.From != nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil ||
		sel.OrderBy != nil || sel.Limit != nil || sel.Distinct || len(sel.Fields.Fields) != 1 {
		return nil
	}
	call, ok := sel.Fields.Fields[0].Expr.(*ast.FuncCallExpr)
	if !ok {
		return nil
	}
	switch call.FnName.L {
	case parser.SeriesFunc, parser.UnnestFunc, parser.UnnestOrdinalityFunc:
		return call
	}
	return nil
}

// fromUnnest plans unnest(a [, b ...]) [WITH ORDINALITY] in FROM: one
// column per array, named unnest (or after the alias for one array, or
// the column aliases), and ordinality (bigint) last.
func (a *binder) fromUnnest(call *ast.FuncCallExpr, alias string, names []string) (*fromItem, error) {
	if len(call.Args) == 0 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function unnest() does not exist")
	}
	ord := call.FnName.L == parser.UnnestOrdinalityFunc
	node := &planner.Unnest{Ordinality: ord}
	for _, n := range call.Args {
		b := a.builder(nil, nil)
		e, err := b.BuildUntyped(n)
		if err == nil && e.Type().Family == types.Unknown {
			// unnest('{1,2}'): PostgreSQL cannot choose; neither can we.
			err = sqlerr.New(sqlerr.IndeterminateDatatype, "could not determine polymorphic type because input has type unknown")
		}
		a.params = b.ParamTypes
		if err != nil {
			return nil, err
		}
		switch e.Type().Family {
		case types.Array:
		case types.Utf8:
			// The catalog's text form of an array.
			e = expr.TextArray(e)
		default:
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function unnest(%s) does not exist", expr.TypeName(e.Type()))
		}
		node.Args = append(node.Args, e)
	}
	var cols []string
	switch {
	case len(node.Args) == 1 && alias != "":
		cols = []string{alias}
	default:
		for range node.Args {
			cols = append(cols, "unnest")
		}
	}
	if ord {
		cols = append(cols, "ordinality")
	}
	if len(names) > len(cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "table \"%s\" has %d columns available but %d columns specified", alias, len(cols), len(names))
	}
	copy(cols, names)
	table := "unnest"
	if alias != "" {
		table = alias
	}
	sc := &scope{}
	for i, c := range cols {
		t := types.TypeInt64
		if i < len(node.Args) {
			t = node.Args[i].Type().ElemType()
		}
		node.Cols = append(node.Cols, planner.Column{Name: c, Type: t})
		sc.cols = append(sc.cols, scopeColumn{table: strings.ToLower(table), name: c, typ: t})
	}
	return &fromItem{node: node, sc: sc}, nil
}

// fromSeries plans generate_series(start, stop [, step]) in FROM: the
// integers from start to stop, one column named generate_series, or after
// the alias (FROM generate_series(1, 3) s names the column s), or the
// column alias. The arguments may refer to an outer query.
func (a *binder) fromSeries(call *ast.FuncCallExpr, alias string, names []string) (*fromItem, error) {
	if len(call.Args) < 2 || len(call.Args) > 3 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function generate_series with %d arguments does not exist", len(call.Args))
	}
	var args [3]expr.Expr
	for i, n := range call.Args {
		// An untyped literal or parameter is a bigint, as in PostgreSQL.
		b := a.builder(nil, nil)
		e, err := b.BuildUntyped(n)
		if err == nil {
			e, err = b.Resolve(e, types.TypeInt64)
		}
		a.params = b.ParamTypes
		if err != nil {
			return nil, err
		}
		switch f := e.Type().Family; {
		case f == types.Null:
			e = expr.NullOf(types.TypeInt64)
		case f.IsInteger():
			if f != types.Int64 {
				if e, err = expr.NewCast(e, types.TypeInt64); err != nil {
					return nil, err
				}
			}
		default:
			return nil, sqlerr.New(sqlerr.UndefinedFunction, "function generate_series(%s) does not exist: only the integer form is supported", e.Type().PGName())
		}
		args[i] = e
	}
	if len(names) > 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "table \"%s\" has 1 columns available but %d columns specified", alias, len(names))
	}
	table, col := "generate_series", "generate_series"
	if alias != "" {
		table, col = alias, alias
	}
	if len(names) == 1 {
		col = names[0]
	}
	node := &planner.Series{Start: args[0], Stop: args[1], Step: args[2],
		Cols: []planner.Column{{Name: col, Type: types.TypeInt64}}}
	sc := &scope{cols: []scopeColumn{{table: strings.ToLower(table), name: col, typ: types.TypeInt64}}}
	return &fromItem{node: node, sc: sc}, nil
}

// columnAliases returns a derived table's column alias list; lateral is
// false when the rewriter spelled a plain derived table with one as
// LATERAL (parser.DerivedColumnsMarker ends the list then).
func columnAliases(ts *ast.TableSource) (names []string, lateral bool) {
	for _, c := range ts.ColumnNames {
		names = append(names, c.O)
	}
	if n := len(names); n > 0 && names[n-1] == parser.DerivedColumnsMarker {
		return names[:n-1], false
	}
	return names, ts.Lateral
}

// fromQuery plans a query used as a relation (a derived table, a view).
func (a *binder) fromQuery(n ast.ResultSetNode) (planner.Node, error) {
	switch n.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return a.buildQuery(n)
	}
	return nil, sqlerr.NotSupported("this query")
}

// derivedTable makes a query's visible columns a relation named alias,
// the columns renamed by names when given.
func derivedTable(node planner.Node, alias string, names []string) (planner.Node, *scope) {
	var exprs []expr.Expr
	var cols []planner.Column
	hidden := false
	for i, c := range node.Columns() {
		if c.Hidden {
			hidden = true
			continue
		}
		exprs = append(exprs, &expr.ColumnRef{Index: i, Name: c.Name, Typ: c.Type})
		cols = append(cols, planner.Column{Name: c.Name, Type: c.Type})
	}
	for i := range cols {
		if i < len(names) {
			cols[i].Name = names[i]
		}
	}
	if hidden || len(names) > 0 {
		node = &planner.Project{Input: node, Exprs: exprs, Cols: cols}
	}
	sc := &scope{}
	for _, c := range cols {
		sc.cols = append(sc.cols, scopeColumn{table: strings.ToLower(alias), name: c.Name, typ: c.Type})
	}
	return node, sc
}
