package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// JOIN ... USING (cols) and NATURAL JOIN (USING the columns both sides
// have), inner, LEFT and RIGHT. The join is planned as one FROM item, like
// an outer join: equalities of the named columns become hash keys. Its
// columns are, as in PostgreSQL, the merged USING columns first (the left
// side's values; the right side's for RIGHT JOIN), then the other columns
// of the left side, then those of the right side. The merged columns are
// reachable only unqualified; each side's own copies stay reachable
// qualified (a.x), hidden from SELECT *.

// usingJoin plans a USING or NATURAL join.
func (a *binder) usingJoin(j *ast.Join) (*fromItem, error) {
	if j.Tp != 0 && j.Tp != ast.CrossJoin && j.Tp != ast.LeftJoin && j.Tp != ast.RightJoin {
		return nil, sqlerr.NotSupported("this kind of join with USING")
	}
	left, right := j.Left, j.Right
	if j.Tp == ast.RightJoin {
		left, right = right, left
	}
	lnode, lsc, err := a.buildFromNode(left)
	if err != nil {
		return nil, err
	}
	rnode, rsc, err := a.buildFromNode(right)
	if err != nil {
		return nil, err
	}
	// The written left side's scope decides NATURAL's column order.
	wl, wr := lsc, rsc
	if j.Tp == ast.RightJoin {
		wl, wr = rsc, lsc
	}
	var names []string
	if j.NaturalJoin {
		for _, c := range wl.cols {
			if c.hidden || c.qualifiedOnly {
				continue
			}
			for _, d := range wr.cols {
				if !d.hidden && !d.qualifiedOnly && strings.EqualFold(c.name, d.name) {
					names = append(names, c.name)
					break
				}
			}
		}
	} else {
		for _, c := range j.Using {
			names = append(names, c.Name.O)
		}
	}
	// The positions of the USING columns on each side.
	find := func(sc *scope, name, side string) (int, error) {
		found := -1
		for i, c := range sc.cols {
			if c.hidden || c.qualifiedOnly || !strings.EqualFold(c.name, name) {
				continue
			}
			if found >= 0 {
				return 0, sqlerr.New(sqlerr.AmbiguousColumn, "common column name %q appears more than once in %s table", name, side)
			}
			found = i
		}
		if found < 0 {
			return 0, sqlerr.New(sqlerr.UndefinedColumn, "column %q specified in USING clause does not exist in %s table", name, side)
		}
		return found, nil
	}
	lw := len(lsc.cols)
	lpos, rpos := make([]int, len(names)), make([]int, len(names))
	seen := map[string]bool{}
	for k, name := range names {
		if seen[strings.ToLower(name)] {
			return nil, sqlerr.New(sqlerr.DuplicateColumn, "column name %q appears more than once in USING clause", name)
		}
		seen[strings.ToLower(name)] = true
		ls, rs := "left", "right"
		if j.Tp == ast.RightJoin {
			ls, rs = rs, ls
		}
		if lpos[k], err = find(lsc, name, ls); err != nil {
			return nil, err
		}
		if rpos[k], err = find(rsc, name, rs); err != nil {
			return nil, err
		}
	}

	// The equalities, built over the joined row with the sides named
	// apart, then split into hash keys and the rest.
	both := &scope{}
	for _, c := range lsc.cols {
		both.cols = append(both.cols, scopeColumn{table: "pivot_using_l", name: c.name, typ: c.typ})
	}
	for _, c := range rsc.cols {
		both.cols = append(both.cols, scopeColumn{table: "pivot_using_r", name: c.name, typ: c.typ})
	}
	owner := make([]int, len(both.cols))
	for i := lw; i < len(owner); i++ {
		owner[i] = 1
	}
	kind := planner.InnerJoin
	if j.Tp == ast.LeftJoin || j.Tp == ast.RightJoin {
		kind = planner.LeftJoin
	}
	jn := &planner.Join{Kind: kind, Left: lnode, Right: rnode}
	var rest []expr.Expr
	for k, name := range names {
		col := func(side string) ast.ExprNode {
			return &ast.ColumnNameExpr{Name: &ast.ColumnName{Table: ast.NewCIStr(side), Name: ast.NewCIStr(name)}}
		}
		eq := &ast.BinaryOperationExpr{Op: opcode.EQ, L: col("pivot_using_l"), R: col("pivot_using_r")}
		cond, err := a.buildCondition(indexScope{both, lpos[k], lw + rpos[k]}, eq, "JOIN/USING")
		if err != nil {
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "JOIN/USING types for column %q cannot be matched: %v", name, err)
		}
		if l, r, ok := splitEquality(cond, owner, 1); ok {
			rk, err := remapColumns(r, func(i int) int { return i - lw })
			if err != nil {
				return nil, err
			}
			jn.LeftKeys = append(jn.LeftKeys, l)
			jn.RightKeys = append(jn.RightKeys, rk)
			continue
		}
		rest = append(rest, cond)
	}
	if len(rest) > 0 {
		jn.Cond = andAll(rest)
	}
	jn.Cols = append(append([]planner.Column(nil), lnode.Columns()...), rnode.Columns()...)

	// The projection: merged columns, the written left side's others, the
	// written right side's others, then every column of both sides
	// reachable qualified only.
	var exprs []expr.Expr
	var cols []planner.Column
	sc := &scope{}
	add := func(i int, c scopeColumn) {
		exprs = append(exprs, &expr.ColumnRef{Index: i, Name: c.name, Typ: c.typ})
		cols = append(cols, planner.Column{Name: c.name, Type: c.typ, Hidden: c.hidden || c.qualifiedOnly})
		sc.cols = append(sc.cols, c)
	}
	inUsing := map[int]bool{}
	for k := range names {
		c := lsc.cols[lpos[k]]
		add(lpos[k], scopeColumn{name: c.name, typ: c.typ})
		inUsing[lpos[k]] = true
		inUsing[lw+rpos[k]] = true
	}
	lfirst, lcount, rfirst, rcount := 0, lw, lw, len(rsc.cols)
	if j.Tp == ast.RightJoin {
		lfirst, lcount, rfirst, rcount = lw, len(rsc.cols), 0, lw
	}
	for _, span := range [][2]int{{lfirst, lcount}, {rfirst, rcount}} {
		for i := span[0]; i < span[0]+span[1]; i++ {
			if inUsing[i] {
				continue
			}
			add(i, sideScope(lsc, rsc, lw, i))
		}
	}
	for i := range both.cols {
		if inUsing[i] {
			c := sideScope(lsc, rsc, lw, i)
			c.qualifiedOnly = true
			add(i, c)
		}
	}
	return &fromItem{node: &planner.Project{Input: jn, Exprs: exprs, Cols: cols}, sc: sc}, nil
}

// sideScope is the joined row's column i as its side's scope has it.
func sideScope(lsc, rsc *scope, lw, i int) scopeColumn {
	if i < lw {
		return lsc.cols[i]
	}
	return rsc.cols[i-lw]
}

// indexScope resolves only the two columns of one USING equality, so that
// a side's other columns of the same name cannot make it ambiguous.
type indexScope struct {
	sc   *scope
	l, r int
}

func (s indexScope) ResolveColumn(table, name string) (int, types.Type, error) {
	i := s.l
	if table == "pivot_using_r" {
		i = s.r
	}
	return i, s.sc.cols[i].typ, nil
}
