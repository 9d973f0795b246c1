package expr

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pivotdb/pivotdb/sql/types"
)

// A miniature SELECT executor for the corpus oracle: FROM as a cross
// product of tables (JOIN ... ON conditions filter it), WHERE, GROUP BY
// with aggregates through Builder.Replace and BuildAgg (the way the SELECT
// planner is meant to use them), HAVING, DISTINCT, ORDER BY. Queries
// outside that subset (subqueries, LIMIT, views) report ok=false.

const maxProduct = 200000

type source struct {
	alias string
	tb    *slTable
}

func flattenFrom(n ast.ResultSetNode, tables map[string]*slTable, out *[]source, ons *[]ast.ExprNode) bool {
	switch x := n.(type) {
	case *ast.Join:
		if (x.Tp != ast.CrossJoin && x.Right != nil) || x.Using != nil || x.NaturalJoin || x.StraightJoin {
			return false
		}
		if !flattenFrom(x.Left, tables, out, ons) {
			return false
		}
		if x.Right != nil && !flattenFrom(x.Right, tables, out, ons) {
			return false
		}
		if x.On != nil {
			*ons = append(*ons, x.On.Expr)
		}
		return true
	case *ast.TableSource:
		tn, ok := x.Source.(*ast.TableName)
		if !ok {
			return false
		}
		tb := tables[tn.Name.L]
		if tb == nil || tb.dirty {
			return false
		}
		alias := tn.Name.O
		if x.AsName.O != "" {
			alias = x.AsName.O
		}
		*out = append(*out, source{alias: alias, tb: tb})
		return true
	}
	return false
}

func restore(n ast.Node) string {
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return ""
	}
	return sb.String()
}

type outRow struct {
	vals []types.Value
	src  Row // the row ORDER BY expressions are evaluated on
}

func runSelect(s *ast.SelectStmt, tables map[string]*slTable, sortMode string) ([][]types.Value, bool) {
	if s.From == nil || s.Limit != nil || s.With != nil || s.WindowSpecs != nil {
		return nil, false
	}
	var srcs []source
	var ons []ast.ExprNode
	if !flattenFrom(s.From.TableRefs, tables, &srcs, &ons) {
		return nil, false
	}
	var cols []testCol
	product := 1
	for _, src := range srcs {
		for _, c := range src.tb.cols {
			c.table = src.alias
			cols = append(cols, c)
		}
		product *= max(len(src.tb.rows), 1)
		if product > maxProduct {
			return nil, false
		}
	}
	scope := fixtureScope{cols}
	b := &Builder{Scope: scope}
	var conds []Expr
	for _, n := range append(ons, s.Where) {
		if n == nil {
			continue
		}
		e, err := b.BuildBool(n, "WHERE")
		if err != nil {
			return nil, false
		}
		conds = append(conds, e)
	}
	ctx := &Context{}
	errRows := func(err error) ([][]types.Value, bool) {
		return [][]types.Value{{types.NewUtf8("error: " + err.Error())}}, true
	}
	// Cross product, filtered.
	var input []Row
	var rec func(i int, acc Row) error
	rec = func(i int, acc Row) error {
		if i == len(srcs) {
			for _, c := range conds {
				v, err := c.Eval(ctx, acc)
				if err != nil {
					return err
				}
				if v.IsNull() || !v.Bool() {
					return nil
				}
			}
			input = append(input, append(Row(nil), acc...))
			return nil
		}
		for _, r := range srcs[i].tb.rows {
			if err := rec(i+1, append(acc, r...)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := rec(0, nil); err != nil {
		return errRows(err)
	}

	aggregated := s.GroupBy != nil || s.Having != nil
	for _, f := range s.Fields.Fields {
		if f.Expr != nil && hasAggregate(f.Expr) {
			aggregated = true
		}
	}
	var out []outRow
	fb := b // builds fields, HAVING and ORDER BY
	var fields []Expr
	if aggregated {
		var groupExprs []Expr
		var groupText []string
		if s.GroupBy != nil {
			for _, item := range s.GroupBy.Items {
				if _, isPos := item.Expr.(*ast.PositionExpr); isPos {
					return nil, false
				}
				e, err := b.Build(item.Expr)
				if err != nil {
					return nil, false
				}
				groupExprs = append(groupExprs, e)
				groupText = append(groupText, restore(item.Expr))
			}
		}
		var specs []*AggSpec
		ab := &Builder{}
		ab.Replace = func(n ast.ExprNode) (Expr, bool, error) {
			isAgg := false
			switch x := n.(type) {
			case *ast.AggregateFuncExpr:
				isAgg = true
			case *ast.FuncCallExpr:
				isAgg = IsAggregate(x.FnName.L)
			}
			if isAgg {
				spec, err := (&Builder{Scope: scope}).BuildAgg(n)
				if err != nil {
					return nil, false, err
				}
				specs = append(specs, spec)
				return &ColumnRef{Index: len(groupExprs) + len(specs) - 1, Name: spec.String(), Typ: spec.Typ}, true, nil
			}
			txt := restore(n)
			for i, g := range groupText {
				if txt == g {
					return &ColumnRef{Index: i, Name: g, Typ: groupExprs[i].Type()}, true, nil
				}
			}
			return nil, false, nil
		}
		fb = ab
		for _, f := range s.Fields.Fields {
			if f.WildCard != nil {
				return nil, false
			}
			e, err := ab.Build(f.Expr)
			if err != nil {
				return nil, false
			}
			fields = append(fields, e)
		}
		var having Expr
		if s.Having != nil {
			var err error
			if having, err = ab.BuildBool(s.Having.Expr, "HAVING"); err != nil {
				return nil, false
			}
		}
		type group struct {
			key  []types.Value
			accs []AggFunc
		}
		groups := map[string]*group{}
		var order []string
		for _, row := range input {
			key := make([]types.Value, len(groupExprs))
			for i, g := range groupExprs {
				v, err := g.Eval(ctx, row)
				if err != nil {
					return errRows(err)
				}
				key[i] = v
			}
			k := types.GroupKey(key)
			gr := groups[k]
			if gr == nil {
				gr = &group{key: key}
				for _, sp := range specs {
					gr.accs = append(gr.accs, sp.New())
				}
				groups[k] = gr
				order = append(order, k)
			}
			for i, sp := range specs {
				v := types.NullValue
				if sp.Arg != nil {
					var err error
					if v, err = sp.Arg.Eval(ctx, row); err != nil {
						return errRows(err)
					}
				}
				if err := gr.accs[i].Add(v); err != nil {
					return errRows(err)
				}
			}
		}
		if len(groupExprs) == 0 && len(groups) == 0 {
			gr := &group{}
			for _, sp := range specs {
				gr.accs = append(gr.accs, sp.New())
			}
			groups[""] = gr
			order = append(order, "")
		}
		for _, k := range order {
			gr := groups[k]
			aggRow := append(Row(nil), gr.key...)
			for _, a := range gr.accs {
				v, err := a.Result()
				if err != nil {
					return errRows(err)
				}
				aggRow = append(aggRow, v)
			}
			if having != nil {
				v, err := having.Eval(ctx, aggRow)
				if err != nil {
					return errRows(err)
				}
				if v.IsNull() || !v.Bool() {
					continue
				}
			}
			out = append(out, outRow{src: aggRow})
		}
	} else {
		for _, f := range s.Fields.Fields {
			if f.WildCard != nil {
				for i, c := range cols {
					if f.WildCard.Table.O != "" && !strings.EqualFold(f.WildCard.Table.O, c.table) {
						continue
					}
					fields = append(fields, &ColumnRef{Index: i, Name: c.name, Typ: c.typ})
				}
				continue
			}
			e, err := b.Build(f.Expr)
			if err != nil {
				return nil, false
			}
			fields = append(fields, e)
		}
		for _, row := range input {
			out = append(out, outRow{src: row})
		}
	}
	for i := range out {
		vals := make([]types.Value, len(fields))
		for j, f := range fields {
			v, err := f.Eval(ctx, out[i].src)
			if err != nil {
				return errRows(err)
			}
			vals[j] = v
		}
		out[i].vals = vals
	}
	if s.Distinct {
		seen := map[string]bool{}
		kept := out[:0]
		for _, r := range out {
			k := types.GroupKey(r.vals)
			if !seen[k] {
				seen[k] = true
				kept = append(kept, r)
			}
		}
		out = kept
	}
	if s.OrderBy != nil && sortMode == "nosort" {
		type key struct {
			pos  int
			e    Expr
			desc bool
		}
		var keys []key
		for _, item := range s.OrderBy.Items {
			if p, ok := item.Expr.(*ast.PositionExpr); ok {
				if p.N < 1 || p.N > len(fields) {
					return nil, false
				}
				keys = append(keys, key{pos: p.N - 1, desc: item.Desc})
				continue
			}
			e, err := fb.Build(item.Expr)
			if err != nil {
				return nil, false
			}
			keys = append(keys, key{pos: -1, e: e, desc: item.Desc})
		}
		var sortErr error
		sortVals := make([][]types.Value, len(out))
		for i, r := range out {
			for _, k := range keys {
				v := types.NullValue
				if k.pos >= 0 {
					v = r.vals[k.pos]
				} else {
					var err error
					if v, err = k.e.Eval(ctx, r.src); err != nil {
						sortErr = err
					}
				}
				sortVals[i] = append(sortVals[i], v)
			}
		}
		if sortErr != nil {
			return errRows(sortErr)
		}
		idx := make([]int, len(out))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool {
			for j, k := range keys {
				c := types.Compare(sortVals[idx[a]][j], sortVals[idx[b]][j])
				if k.desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			return false
		})
		sorted := make([]outRow, len(out))
		for i, j := range idx {
			sorted[i] = out[j]
		}
		out = sorted
	}
	rows := make([][]types.Value, len(out))
	for i, r := range out {
		rows[i] = r.vals
	}
	return rows, true
}
