package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Window functions. A SELECT's window function calls (select list and
// ORDER BY) are bound after grouping: their arguments, PARTITION BY and
// ORDER BY see the grouped row (aggregates and GROUP BY expressions), as
// in PostgreSQL. Calls over the same PARTITION BY and ORDER BY share one
// planner.Window node; each distinct specification stacks another node
// between the grouped input and the projection. A call becomes a column
// reference to its Window node's output, whose index is only known once
// every aggregate of the query has been found (the Aggregate node's width
// grows until then): windowing.place sets it in finish.

// windowing collects a SELECT's window function calls.
type windowing struct {
	q      *selectQuery
	named  map[string]*ast.WindowSpec
	groups []*windowGroup
	byCall map[string]*expr.ColumnRef
	refs   map[*expr.ColumnRef]bool
	// inner is the grouping's replace (nil: not grouped): window
	// definitions and arguments see aggregates but no window calls.
	inner replaceFn
}

// windowGroup is the calls over one PARTITION BY / ORDER BY.
type windowGroup struct {
	key  string
	node *planner.Window
	refs []*expr.ColumnRef // refs[k] reads node.Funcs[k]
}

func newWindowing(q *selectQuery) (*windowing, error) {
	w := &windowing{q: q, named: map[string]*ast.WindowSpec{}, byCall: map[string]*expr.ColumnRef{}, refs: map[*expr.ColumnRef]bool{}}
	for i := range q.sel.WindowSpecs {
		spec := &q.sel.WindowSpecs[i]
		if _, dup := w.named[spec.Name.L]; dup {
			return nil, sqlerr.New(sqlerr.WindowingError, "window %q is already defined", spec.Name.O)
		}
		w.named[spec.Name.L] = spec
	}
	return w, nil
}

// replace binds a window function call (and leaves every other node to
// next, the grouping's replace).
func (w *windowing) replace(next replaceFn) replaceFn {
	w.inner = next
	return func(n ast.ExprNode) (expr.Expr, bool, error) {
		if call, ok := n.(*ast.WindowFuncExpr); ok {
			e, err := w.call(call)
			return e, err == nil, err
		}
		if next != nil {
			return next(n)
		}
		return nil, false, nil
	}
}

// isRef reports whether e is the column of a window function call.
func (w *windowing) isRef(e expr.Expr) bool {
	ref, ok := e.(*expr.ColumnRef)
	return ok && w != nil && w.refs[ref]
}

// resolve merges a window specification with the named window it refers
// to (OVER w, OVER (w ORDER BY ...)), with PostgreSQL's rules: the copy
// may add ORDER BY and a frame, but not override them or PARTITION BY.
func (w *windowing) resolve(spec *ast.WindowSpec, depth int) (ast.WindowSpec, error) {
	ref := spec.Ref
	if spec.OnlyAlias || (ref.L == "" && spec.Name.L != "" && spec.PartitionBy == nil && spec.OrderBy == nil && spec.Frame == nil) {
		ref = spec.Name
	}
	if ref.L == "" || depth > len(w.named) {
		return *spec, nil
	}
	base, ok := w.named[ref.L]
	if !ok {
		return ast.WindowSpec{}, sqlerr.New(sqlerr.UndefinedObject, "window %q does not exist", ref.O)
	}
	out, err := w.resolve(base, depth+1)
	if err != nil {
		return out, err
	}
	if spec.OnlyAlias || base == spec {
		return out, nil
	}
	if spec.PartitionBy != nil {
		return out, sqlerr.New(sqlerr.WindowingError, "cannot override PARTITION BY clause of window %q", ref.O)
	}
	if spec.OrderBy != nil {
		if out.OrderBy != nil {
			return out, sqlerr.New(sqlerr.WindowingError, "cannot override ORDER BY clause of window %q", ref.O)
		}
		out.OrderBy = spec.OrderBy
	}
	if out.Frame != nil {
		return out, sqlerr.New(sqlerr.WindowingError, "cannot copy window %q because it has a frame clause", ref.O)
	}
	out.Frame = spec.Frame
	return out, nil
}

// call binds one window function call.
func (w *windowing) call(n *ast.WindowFuncExpr) (expr.Expr, error) {
	key := windowCallKey(n)
	if ref, ok := w.byCall[key]; ok {
		return ref, nil
	}
	name := strings.ToLower(n.Name)
	if n.IgnoreNull || n.FromLast {
		return nil, sqlerr.NotSupported("IGNORE NULLS and FROM LAST in window functions")
	}
	spec, err := w.resolve(&n.Spec, 0)
	if err != nil {
		return nil, err
	}
	g, err := w.group(&spec)
	if err != nil {
		return nil, err
	}
	fn, err := w.function(name, n, g)
	if err != nil {
		return nil, err
	}
	if fn.Frame, err = w.frame(spec.Frame, g, &spec); err != nil {
		return nil, err
	}
	g.node.Funcs = append(g.node.Funcs, fn)
	ref := &expr.ColumnRef{Name: name, Typ: fn.Typ}
	g.refs = append(g.refs, ref)
	w.byCall[key] = ref
	w.refs[ref] = true
	return ref, nil
}

// windowCallKey identifies a window function call: equal calls share one
// result. TiDB cannot restore a GROUPS frame (its Restore fails, and
// restore would give every such call the same text), so the frame is
// restored as ROWS and the key marked.
func windowCallKey(n *ast.WindowFuncExpr) string {
	if fc := n.Spec.Frame; fc != nil && fc.Type == ast.Groups {
		fc.Type = ast.Rows
		defer func() { fc.Type = ast.Groups }()
		return "groups:" + strings.ToLower(restore(n))
	}
	return strings.ToLower(restore(n))
}

// group finds or creates the Window node for a PARTITION BY and ORDER BY.
func (w *windowing) group(spec *ast.WindowSpec) (*windowGroup, error) {
	var sb strings.Builder
	if spec.PartitionBy != nil {
		sb.WriteString(restore(spec.PartitionBy))
	}
	sb.WriteString("|")
	if spec.OrderBy != nil {
		sb.WriteString(restore(spec.OrderBy))
	}
	key := strings.ToLower(sb.String())
	for _, g := range w.groups {
		if g.key == key {
			return g, nil
		}
	}
	q := w.q
	node := &planner.Window{PartitionNullsFirst: planner.NullsDefault(false, q.a.pg())}
	if spec.PartitionBy != nil {
		for _, item := range spec.PartitionBy.Items {
			e, err := q.a.build(q.outScope, item.Expr, w.inner)
			if err != nil {
				return nil, err
			}
			node.PartitionBy = append(node.PartitionBy, e)
		}
	}
	if spec.OrderBy != nil {
		// NULLS FIRST/LAST and the dialect's default as in a query's
		// ORDER BY.
		items, err := q.a.orderItems(spec.OrderBy.Items)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			e, err := q.a.build(q.outScope, item.Expr, w.inner)
			if err != nil {
				return nil, err
			}
			node.OrderBy = append(node.OrderBy, planner.WindowOrder{Expr: e, Desc: item.Desc, NullsFirst: item.nullsFirst})
		}
	}
	g := &windowGroup{key: key, node: node}
	w.groups = append(w.groups, g)
	return g, nil
}

// arg builds a window function's argument over the grouped row.
func (w *windowing) arg(n ast.ExprNode) (expr.Expr, error) {
	v := &windowFinder{}
	n.Accept(v)
	if v.found {
		return nil, sqlerr.New(sqlerr.WindowingError, "window function calls cannot be nested")
	}
	return w.q.a.build(w.q.outScope, n, w.inner)
}

func (w *windowing) function(name string, n *ast.WindowFuncExpr, g *windowGroup) (*planner.WindowFunc, error) {
	fn := &planner.WindowFunc{Name: name}
	nargs := func(lo, hi int) error {
		if len(n.Args) < lo || len(n.Args) > hi {
			return sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(n.Args))
		}
		return nil
	}
	if n.Distinct {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions")
	}
	integerArg := func(i int, what string) error {
		w.q.a.hintParam(n.Args[i], types.TypeInt64)
		e, err := w.arg(n.Args[i])
		if err != nil {
			return err
		}
		if f := e.Type().Family; f == types.Unknown || f == types.Null {
			e = expr.NullOf(types.TypeInt64)
		} else if !f.IsInteger() {
			return sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", what, e.Type().PGName())
		}
		fn.Args = append(fn.Args, e)
		return nil
	}
	switch name {
	case "row_number", "rank", "dense_rank":
		fn.Typ = types.TypeInt64
		return fn, nargs(0, 0)
	case "percent_rank", "cume_dist":
		fn.Typ = types.TypeDouble
		return fn, nargs(0, 0)
	case "ntile":
		fn.Typ = types.TypeInt64
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		return fn, integerArg(0, name)
	case "lag", "lead":
		if err := nargs(1, 3); err != nil {
			return nil, err
		}
		x, err := w.arg(n.Args[0])
		if err != nil {
			return nil, err
		}
		fn.Args = append(fn.Args, x)
		if len(n.Args) > 1 {
			if err := integerArg(1, name); err != nil {
				return nil, err
			}
		}
		fn.Typ = x.Type()
		if len(n.Args) > 2 {
			def, err := w.arg(n.Args[2])
			if err != nil {
				return nil, err
			}
			t, err := expr.CommonType(name, x.Type(), def.Type())
			if err != nil {
				return nil, err
			}
			if fn.Args[0], err = coerceTo(fn.Args[0], t); err != nil {
				return nil, err
			}
			if def, err = coerceTo(def, t); err != nil {
				return nil, err
			}
			fn.Args = append(fn.Args, def)
			fn.Typ = t
		}
		return fn, nil
	case "first_value", "last_value", "nth_value":
		if name == "nth_value" {
			if err := nargs(2, 2); err != nil {
				return nil, err
			}
		} else if err := nargs(1, 1); err != nil {
			return nil, err
		}
		x, err := w.arg(n.Args[0])
		if err != nil {
			return nil, err
		}
		fn.Args = append(fn.Args, x)
		fn.Typ = x.Type()
		if name == "nth_value" {
			if err := integerArg(1, name); err != nil {
				return nil, err
			}
		}
		return fn, nil
	}
	args, sep, err := windowAggArgs(&name, n)
	if err != nil {
		return nil, err
	}
	fn.Name = name
	if !expr.IsAggregate(name) {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "function %s is not a window function", name)
	}
	var mods aggMods
	if len(args) > 0 {
		args = append([]ast.ExprNode(nil), args...)
		if args[0], mods, err = takeAggMods(args[0]); err != nil {
			return nil, err
		}
		if mods.order != nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "aggregate ORDER BY is not implemented for window functions")
		}
	}
	star := len(args) == 0
	if len(args) > 1 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
	}
	var arg expr.Expr
	if !star {
		if arg, err = w.arg(args[0]); err != nil {
			return nil, err
		}
		fn.Args = append(fn.Args, arg)
	}
	spec, err := expr.NewAggSpec(name, false, star, arg)
	if err != nil {
		return nil, err
	}
	if sep != nil {
		spec.Separator = *sep
	}
	if mods.filter != nil {
		// The condition is the function's last argument, evaluated with
		// the others for every row (exec's windowIter.aggregate).
		w.q.a.hintParam(mods.filter, types.TypeBool)
		c, err := w.arg(mods.filter)
		if err != nil {
			return nil, err
		}
		if f := c.Type().Family; f != types.Bool && f != types.Null && f != types.Unknown {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of FILTER must be type boolean, not type %s", c.Type().PGName())
		}
		if c, err = coerceTo(c, types.TypeBool); err != nil {
			return nil, err
		}
		fn.Args = append(fn.Args, c)
		spec.Filter = c
	}
	fn.Agg, fn.Typ = spec, spec.Typ
	return fn, nil
}

// windowAggArgs returns the arguments of an aggregate called as a window
// function and its separator (group_concat, string_agg). An aggregate
// TiDB's grammar does not know comes as group_concat(pivot_window_agg('name'),
// args...) (sql/parser/aggcall.go): *name becomes its own. TiDB appends
// group_concat's SEPARATOR to its arguments.
func windowAggArgs(name *string, n *ast.WindowFuncExpr) (args []ast.ExprNode, sep *string, err error) {
	args = n.Args
	if *name != "group_concat" {
		return args, nil, nil
	}
	if len(args) == 0 {
		return nil, nil, sqlerr.New(sqlerr.InternalError, "bind: group_concat without its separator")
	}
	sepText := func(e ast.ExprNode, fn string) (*string, error) {
		if v, ok := e.(*test_driver.ValueExpr); ok {
			if s, isStr := v.GetValue().(string); isStr {
				return &s, nil
			}
		}
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a non-constant separator in %s() is not supported yet", fn)
	}
	last := args[len(args)-1]
	args = args[:len(args)-1]
	if len(args) > 0 {
		if m, ok := args[0].(*ast.FuncCallExpr); ok && m.FnName.L == parser.WindowAggFunc && len(m.Args) == 1 {
			v, ok := m.Args[0].(*test_driver.ValueExpr)
			real, isStr := "", false
			if ok {
				real, isStr = v.GetValue().(string)
			}
			if !isStr {
				return nil, nil, sqlerr.New(sqlerr.InternalError, "bind: malformed %s", parser.WindowAggFunc)
			}
			*name = real
			args = args[1:]
			if len(args) > 0 {
				if d, ok := args[0].(*ast.FuncCallExpr); ok && d.FnName.L == parser.AggDistinctFunc && len(d.Args) == 0 {
					return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions")
				}
			}
			if *name == "string_agg" && len(args) == 2 {
				sep, err = sepText(args[1], *name)
				return args[:1], sep, err
			}
			return args, nil, nil
		}
	}
	sep, err = sepText(last, *name)
	return args, sep, err
}

// coerceTo converts e to type t when it has another.
func coerceTo(e expr.Expr, t types.Type) (expr.Expr, error) {
	if e.Type() == t {
		return e, nil
	}
	if f := e.Type().Family; f == types.Null {
		return expr.NullOf(t), nil
	}
	return expr.NewCast(e, t)
}

// frame binds a frame clause (nil: the default frame).
func (w *windowing) frame(fc *ast.FrameClause, g *windowGroup, spec *ast.WindowSpec) (planner.Frame, error) {
	if fc == nil {
		return planner.DefaultFrame, nil
	}
	var fr planner.Frame
	switch fc.Type {
	case ast.Rows:
		fr.Mode = planner.FrameRows
	case ast.Groups:
		fr.Mode = planner.FrameGroups
		if len(g.node.OrderBy) == 0 {
			return fr, sqlerr.New(sqlerr.WindowingError, "GROUPS mode requires an ORDER BY clause")
		}
	default:
		fr.Mode = planner.FrameRange
	}
	var err error
	if fr.Start, err = w.bound(&fc.Extent.Start, fr.Mode, g, spec); err != nil {
		return fr, err
	}
	if fr.End, err = w.bound(&fc.Extent.End, fr.Mode, g, spec); err != nil {
		return fr, err
	}
	switch {
	case fr.Start.Kind == planner.UnboundedFollowing:
		return fr, sqlerr.New(sqlerr.WindowingError, "frame start cannot be UNBOUNDED FOLLOWING")
	case fr.End.Kind == planner.UnboundedPreceding:
		return fr, sqlerr.New(sqlerr.WindowingError, "frame end cannot be UNBOUNDED PRECEDING")
	case fr.Start.Kind == planner.CurrentRow && fr.End.Kind == planner.OffsetPreceding:
		return fr, sqlerr.New(sqlerr.WindowingError, "frame starting from current row cannot have preceding rows")
	case fr.Start.Kind == planner.OffsetFollowing && (fr.End.Kind == planner.OffsetPreceding || fr.End.Kind == planner.CurrentRow):
		return fr, sqlerr.New(sqlerr.WindowingError, "frame starting from following row cannot have preceding rows")
	}
	return fr, nil
}

func (w *windowing) bound(b *ast.FrameBound, mode planner.FrameMode, g *windowGroup, spec *ast.WindowSpec) (planner.FrameBound, error) {
	var out planner.FrameBound
	switch {
	case b.Type == ast.CurrentRow:
		out.Kind = planner.CurrentRow
		return out, nil
	case b.UnBounded && b.Type == ast.Preceding:
		out.Kind = planner.UnboundedPreceding
		return out, nil
	case b.UnBounded:
		out.Kind = planner.UnboundedFollowing
		return out, nil
	case b.Type == ast.Preceding:
		out.Kind = planner.OffsetPreceding
	default:
		out.Kind = planner.OffsetFollowing
	}
	if b.Unit != ast.TimeUnitInvalid {
		return out, sqlerr.NotSupported("MySQL's INTERVAL ... unit frame offsets (use an interval value)")
	}
	q := w.q
	if mode != planner.FrameRange {
		q.a.hintParam(b.Expr, types.TypeInt64)
		e, err := q.a.build(nil, b.Expr, nil)
		if err != nil {
			return out, err
		}
		if f := e.Type().Family; !f.IsInteger() && f != types.Null && f != types.Unknown {
			return out, sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type bigint, not type %s", mode, e.Type().PGName())
		}
		out.Offset = e
		return out, nil
	}
	if len(g.node.OrderBy) != 1 {
		return out, sqlerr.New(sqlerr.WindowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
	}
	off, err := q.a.build(nil, b.Expr, nil)
	if err != nil {
		return out, err
	}
	out.Offset = off
	// The frame ends where the ORDER BY value is the current one minus the
	// offset (PRECEDING in ascending order, FOLLOWING in descending) or
	// plus it.
	op := opcode.Plus
	if (out.Kind == planner.OffsetPreceding) != g.node.OrderBy[0].Desc {
		op = opcode.Minus
	}
	sum := &ast.BinaryOperationExpr{Op: op, L: spec.OrderBy.Items[0].Expr, R: b.Expr}
	v, err := q.a.build(q.outScope, sum, w.inner)
	if err != nil {
		return out, err
	}
	if _, err := expr.CommonType("RANGE", v.Type(), g.node.OrderBy[0].Expr.Type()); err != nil {
		return out, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s",
			g.node.OrderBy[0].Expr.Type().PGName(), off.Type().PGName())
	}
	out.Value = v
	return out, nil
}

// place stacks the Window nodes over input and points every call's
// column reference at its node's output.
func (w *windowing) place(input planner.Node) planner.Node {
	if w == nil {
		return input
	}
	for _, g := range w.groups {
		cols := append([]planner.Column(nil), input.Columns()...)
		base := len(cols)
		for k, f := range g.node.Funcs {
			cols = append(cols, planner.Column{Name: f.Name, Type: f.Typ})
			g.refs[k].Index = base + k
		}
		g.node.Input, g.node.Cols = input, cols
		input = g.node
	}
	return input
}

// windowFinder finds window function calls (outside subqueries).
type windowFinder struct{ found bool }

func (v *windowFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch n.(type) {
	case *ast.WindowFuncExpr:
		v.found = true
		return n, true
	case *ast.SubqueryExpr:
		return n, true
	}
	return n, v.found
}

func (v *windowFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
