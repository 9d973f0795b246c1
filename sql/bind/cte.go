package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// WITH: common table expressions.
//
// A WITH clause pushes its queries on the binder's CTE stack for the
// statement it heads; a table name without a schema is looked up there
// (innermost first) before the catalog. Each reference binds the CTE's
// query again, as a derived table, in the names visible where the CTE was
// defined (the CTEs before it, the queries around the WITH), so a CTE
// referenced twice is two reads of its query — the same rows, since a
// statement reads one snapshot (volatile functions such as random() are
// evaluated per reference, where PostgreSQL materializes the CTE once).
//
// WITH RECURSIVE t AS (base UNION [ALL] recursive): a query that refers to
// itself becomes a planner.RecursiveCTE whose recursive term reads the
// previous round through a planner.WorkTable. PostgreSQL's rules apply
// (42P19): the reference must be in the recursive term, once, and not in a
// subquery; the term has no aggregates. The columns take the base's types;
// the recursive term's values are converted to them.

// cteDef is one WITH query in scope.
type cteDef struct {
	name string
	cte  *ast.CommonTableExpression
	// recursive is set under WITH RECURSIVE.
	recursive bool
	// Where the CTE was defined: the CTEs visible to its query (itself
	// included under WITH RECURSIVE), the enclosing queries, and the
	// statement whose text it is in (a view's WITH is in the view's).
	visible []*cteDef
	outer   []*outerLevel
	stmt    *parser.Statement
	checkAs string // the role privileges are checked for (a view's owner)

	// While the recursive term is bound: its work table, the number of
	// references to it, and the depth of subqueries at the term.
	work      *planner.RecursiveCTE
	workRefs  int
	workOuter int

	// dml is set for a data-modifying WITH query (with_dml.go); cte is
	// then nil.
	dml *dmlCTE
}

// pushWith puts a WITH clause's queries in scope; pop removes them.
func (a *binder) pushWith(w *ast.WithClause) (pop func(), err error) {
	saved := a.ctes
	pop = func() { a.ctes = saved }
	seen := map[string]bool{}
	for _, c := range w.CTEs {
		name := c.Name.L
		if seen[name] {
			return pop, sqlerr.New(sqlerr.DuplicateAlias, "WITH query name %q specified more than once", c.Name.O)
		}
		seen[name] = true
		def := &cteDef{name: name, cte: c, recursive: w.IsRecursive || c.IsRecursive, outer: a.outer, stmt: a.stmt, checkAs: a.checkAs}
		def.visible = append([]*cteDef(nil), a.ctes...)
		if def.recursive {
			def.visible = append(def.visible, def)
		}
		a.ctes = append(a.ctes, def)
	}
	return pop, nil
}

// lookupCTE finds the WITH query a table name refers to.
func (a *binder) lookupCTE(tn *ast.TableName) *cteDef {
	if tn.Schema.O != "" {
		return nil
	}
	for i := len(a.ctes) - 1; i >= 0; i-- {
		if a.ctes[i].name == tn.Name.L {
			return a.ctes[i]
		}
	}
	return nil
}

// cteSource plans a reference to a WITH query in FROM; ok is false when
// the name is not one.
func (a *binder) cteSource(tn *ast.TableName, alias string) (planner.Node, *scope, bool, error) {
	def := a.lookupCTE(tn)
	if def == nil {
		return nil, nil, false, nil
	}
	if def.dml != nil {
		node, sc, err := a.dmlSource(def, alias)
		return node, sc, true, err
	}
	if alias == "" {
		alias = def.cte.Name.O
	}
	if def.work != nil {
		// The recursive term's reference to its own query.
		if len(a.outer) != def.workOuter {
			return nil, nil, true, sqlerr.New(sqlerr.InvalidRecursion, "recursive reference to query %q must not appear within a subquery", def.cte.Name.O)
		}
		def.workRefs++
		if def.workRefs > 1 {
			return nil, nil, true, sqlerr.New(sqlerr.InvalidRecursion, "recursive reference to query %q must not appear more than once", def.cte.Name.O)
		}
		node, sc := derivedTable(&planner.WorkTable{CTE: def.work, Cols: def.work.Cols}, alias, nil)
		return node, sc, true, nil
	}
	if a.viewDepth >= maxViewDepth {
		return nil, nil, true, sqlerr.New(sqlerr.InvalidObjectDefinition, "WITH queries nested too deeply at %q", def.cte.Name.O)
	}
	savedCTEs, savedOuter, savedStmt, savedAs := a.ctes, a.outer, a.stmt, a.checkAs
	a.ctes, a.outer, a.stmt, a.checkAs = def.visible, def.outer, def.stmt, def.checkAs
	a.viewDepth++
	node, err := a.cteQuery(def)
	a.viewDepth--
	a.ctes, a.outer, a.stmt, a.checkAs = savedCTEs, savedOuter, savedStmt, savedAs
	if err != nil {
		return nil, nil, true, err
	}
	var names []string
	for _, c := range def.cte.ColNameList {
		names = append(names, c.O)
	}
	if cols := visibleColumns(node); len(names) > len(cols) {
		return nil, nil, true, sqlerr.New(sqlerr.InvalidColumnReference, "WITH query %q has %d columns available but %d columns specified", def.cte.Name.O, len(cols), len(names))
	}
	node, sc := derivedTable(node, alias, names)
	return node, sc, true, nil
}

// cteQuery binds a WITH query's body.
func (a *binder) cteQuery(def *cteDef) (planner.Node, error) {
	body := def.cte.Query.Query
	if !def.recursive || !refersTo(body, def.name) {
		return a.buildQuery(body)
	}
	name := def.cte.Name.O
	formErr := sqlerr.New(sqlerr.InvalidRecursion, "recursive query %q does not have the form non-recursive-term UNION [ALL] recursive-term", name)
	set, ok := body.(*ast.SetOprStmt)
	if !ok || set.SelectList == nil || len(set.SelectList.Selects) < 2 {
		return nil, formErr
	}
	if set.With != nil {
		return nil, sqlerr.NotSupported("WITH inside a recursive query's body")
	}
	if set.OrderBy != nil || set.Limit != nil {
		return nil, sqlerr.NotSupported("ORDER BY or LIMIT in a recursive query")
	}
	arms := set.SelectList.Selects
	last := arms[len(arms)-1]
	var op *ast.SetOprType
	switch t := last.(type) {
	case *ast.SelectStmt:
		op = t.AfterSetOperator
		if t.GroupBy != nil || t.Having != nil || hasAggregate(t.Fields.Fields, t.OrderBy) {
			return nil, sqlerr.New(sqlerr.InvalidRecursion, "aggregate functions are not allowed in a recursive query's recursive term")
		}
		if t.OrderBy != nil || t.Limit != nil {
			return nil, sqlerr.NotSupported("ORDER BY or LIMIT in a recursive query's recursive term")
		}
	case *ast.SetOprSelectList:
		op = t.AfterSetOperator
	}
	if op == nil || (*op != ast.Union && *op != ast.UnionAll) {
		return nil, formErr
	}
	for _, arm := range arms[:len(arms)-1] {
		if refersTo(arm, def.name) {
			return nil, sqlerr.New(sqlerr.InvalidRecursion, "recursive reference to query %q must not appear within its non-recursive term", name)
		}
	}
	// The non-recursive term: one arm, or the set operation of the arms
	// before the last.
	var base planner.Node
	var err error
	if len(arms) == 2 {
		if sel, ok := arms[0].(*ast.SelectStmt); ok {
			base, err = a.buildSelect(sel)
		} else {
			base, err = a.buildSetList(&ast.SetOprSelectList{Selects: arms[:1]})
		}
	} else {
		base, err = a.buildSetList(&ast.SetOprSelectList{Selects: arms[:len(arms)-1]})
	}
	if err != nil {
		return nil, err
	}
	cols := typedColumns(visibleColumns(base))
	for i, c := range def.cte.ColNameList {
		if i < len(cols) {
			cols[i].Name = c.O
		}
	}
	if base, err = convertArm(base, cols); err != nil {
		return nil, err
	}
	rc := &planner.RecursiveCTE{Name: name, Base: base, All: *op == ast.UnionAll, Cols: cols}
	def.work, def.workRefs, def.workOuter = rc, 0, len(a.outer)
	var rec planner.Node
	switch t := last.(type) {
	case *ast.SelectStmt:
		a.setOpArm = true
		rec, err = a.buildSelect(t)
	case *ast.SetOprSelectList:
		rec, err = a.buildSetList(t)
	}
	def.work = nil
	if err != nil {
		return nil, err
	}
	recCols := visibleColumns(rec)
	if len(recCols) != len(cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "each UNION query must have the same number of columns")
	}
	if rc.Recursive, err = convertArm(rec, cols); err != nil {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "recursive query %q: the recursive term's values do not convert to the non-recursive term's column types: %v", name, err)
	}
	return rc, nil
}

// refersTo reports whether a query names the table name (unqualified)
// anywhere, subqueries included.
func refersTo(n ast.Node, name string) bool {
	v := &tableNameFinder{name: name}
	n.Accept(v)
	return v.found
}

type tableNameFinder struct {
	name  string
	found bool
}

func (v *tableNameFinder) Enter(n ast.Node) (ast.Node, bool) {
	if tn, ok := n.(*ast.TableName); ok && tn.Schema.O == "" && strings.EqualFold(tn.Name.O, v.name) {
		v.found = true
	}
	return n, v.found
}

func (v *tableNameFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
