package bind

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// RowLock is the row lock a query's locking clauses take on one table of
// its FROM clause (or of a derived table in it): the strongest strength
// and wait policy of the clauses that apply to it, as PostgreSQL combines
// them.
type RowLock struct {
	Table *catalog.Table
	// Name is the table's name in the query: its alias, or its name.
	Name     string
	Strength parser.LockStrength
	Wait     parser.LockWait
}

// bindLocking resolves a query's locking clauses against its FROM clause,
// with PostgreSQL's checks and errors (CheckSelectLocking and
// transformLockingClause in its analyze.c). The query is already bound, so
// its names are known to resolve.
func (a *binder) bindLocking(n ast.Node, clauses []parser.LockingClause) ([]RowLock, error) {
	if len(clauses) == 0 {
		return nil, nil
	}
	first := clauses[0].Strength
	sel, ok := n.(*ast.SelectStmt)
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not allowed with UNION/INTERSECT/EXCEPT", first)
	}
	if sel.Kind == ast.SelectStmtKindValues {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s cannot be applied to VALUES", first)
	}
	var locks []RowLock
	found := make([]bool, 0)
	for _, lc := range clauses {
		for range lc.Of {
			found = append(found, false)
		}
	}
	k := 0
	for _, lc := range clauses {
		if err := checkSelectLocking(sel, lc.Strength); err != nil {
			return nil, err
		}
		var err error
		locks, err = a.lockFrom(sel, lc, locks, found[k:k+len(lc.Of)], false)
		if err != nil {
			return nil, err
		}
		for i, t := range lc.Of {
			if !found[k+i] {
				return nil, sqlerr.WithPosition(sqlerr.New(sqlerr.UndefinedTable,
					"relation %q in %s clause not found in FROM clause", t.Name, lc.Strength), t.Pos)
			}
		}
		k += len(lc.Of)
	}
	for _, l := range locks {
		// PostgreSQL asks for UPDATE privilege on every table a locking
		// clause locks, besides SELECT.
		if err := a.requireTablePrivilege(l.Table, acl.Update); err != nil {
			return nil, err
		}
		a.useTable(l.Table, UseLockRows)
	}
	return locks, nil
}

// checkSelectLocking refuses the query shapes whose rows are not table
// rows, as PostgreSQL does (0A000).
func checkSelectLocking(sel *ast.SelectStmt, s parser.LockStrength) error {
	var why string
	switch {
	case sel.Distinct:
		why = "DISTINCT clause"
	case sel.GroupBy != nil:
		why = "GROUP BY clause"
	case sel.Having != nil:
		why = "HAVING clause"
	case sel.Fields != nil && hasAggregate(sel.Fields.Fields, sel.OrderBy):
		why = "aggregate functions"
	case hasWindowFunc(sel):
		why = "window functions"
	default:
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s is not allowed with %s", s, why)
}

// lockFrom applies clause lc to the relations of sel's FROM clause: every
// table when lc names none, else the ones it names (found[i] records that
// lc.Of[i] matched). all is set inside a derived table that lc applies to
// as a whole.
func (a *binder) lockFrom(sel *ast.SelectStmt, lc parser.LockingClause, locks []RowLock, found []bool, all bool) ([]RowLock, error) {
	if sel.From == nil {
		return locks, nil
	}
	ctes := map[string]bool{}
	if sel.With != nil {
		for _, c := range sel.With.CTEs {
			ctes[c.Name.L] = true
		}
	}
	var walk func(n ast.ResultSetNode, nullable bool) error
	walk = func(n ast.ResultSetNode, nullable bool) error {
		switch n := n.(type) {
		case nil:
			return nil
		case *ast.Join:
			left, right := nullable, nullable
			switch n.Tp {
			case ast.LeftJoin:
				right = true
			case ast.RightJoin:
				left = true
			}
			if err := walk(n.Left, left); err != nil {
				return err
			}
			return walk(n.Right, right)
		case *ast.TableSource:
			return a.lockSource(n, lc, &locks, found, all, nullable, ctes)
		}
		return nil
	}
	err := walk(sel.From.TableRefs, false)
	return locks, err
}

// lockSource applies lc to one item of a FROM clause.
func (a *binder) lockSource(ts *ast.TableSource, lc parser.LockingClause, locks *[]RowLock, found []bool, all, nullable bool, ctes map[string]bool) error {
	name := strings.ToLower(ts.AsName.O)
	named := func() bool {
		hit := false
		for i, t := range lc.Of {
			if t.Name == name || strings.EqualFold(t.Name, name) {
				found[i], hit = true, true
			}
		}
		return hit
	}
	applies := func(what string) (bool, error) {
		if all || len(lc.Of) == 0 {
			return what == "", nil
		}
		if !named() {
			return false, nil
		}
		if what != "" {
			return false, sqlerr.New(sqlerr.FeatureNotSupported, "%s cannot be applied to %s", lc.Strength, what)
		}
		return true, nil
	}
	switch src := ts.Source.(type) {
	case *ast.TableName:
		if name == "" {
			name = src.Name.L
		}
		if src.Schema.O == "" && ctes[src.Name.L] {
			_, err := applies("a WITH query")
			return err
		}
		if pgcatalog.Lookup(src.Schema.O, src.Name.O) != nil || isPartitionsView(src) {
			if ok, err := applies(""); !ok || err != nil {
				return err
			}
			return sqlerr.NotSupported("%s on a system table", lc.Strength)
		}
		if _, ok := a.snap.View(a.env.Database.ID, src.Name.O); ok && src.Schema.O == "" {
			if ok, err := applies(""); !ok || err != nil {
				return err
			}
			return sqlerr.NotSupported("%s on a view", lc.Strength)
		}
		ok, err := applies("")
		if !ok || err != nil {
			return err
		}
		t, err := a.lookupTable(src)
		if err != nil {
			return err
		}
		if nullable {
			return sqlerr.New(sqlerr.FeatureNotSupported, "%s cannot be applied to the nullable side of an outer join", lc.Strength)
		}
		*locks = addLock(*locks, RowLock{Table: t, Name: name, Strength: lc.Strength, Wait: lc.Wait})
		return nil
	case *ast.SelectStmt:
		if seriesCall(src) != nil {
			_, err := applies("a function")
			return err
		}
		if src.Kind == ast.SelectStmtKindValues {
			_, err := applies("VALUES")
			return err
		}
		whole := all || len(lc.Of) == 0 || named()
		if !whole {
			return nil
		}
		// A derived table is locked as a whole: every table in it.
		if err := checkSelectLocking(src, lc.Strength); err != nil {
			return err
		}
		inner := lc
		var err error
		*locks, err = a.lockFrom(src, inner, *locks, nil, true)
		return err
	case *ast.SetOprStmt:
		if all || len(lc.Of) == 0 || named() {
			return sqlerr.New(sqlerr.FeatureNotSupported, "%s is not allowed with UNION/INTERSECT/EXCEPT", lc.Strength)
		}
		return nil
	case *ast.Join:
		if !all && len(lc.Of) > 0 && name != "" && named() {
			return sqlerr.New(sqlerr.FeatureNotSupported, "%s cannot be applied to a join", lc.Strength)
		}
		var err error
		*locks, err = a.lockFrom(&ast.SelectStmt{From: &ast.TableRefsClause{TableRefs: src}}, lc, *locks, found, all)
		return err
	}
	return nil
}

// addLock adds l, or strengthens the lock already taken on the same name
// (PostgreSQL keeps the strongest strength and wait policy).
func addLock(locks []RowLock, l RowLock) []RowLock {
	for i := range locks {
		if locks[i].Name == l.Name && locks[i].Table == l.Table {
			locks[i].Strength = max(locks[i].Strength, l.Strength)
			locks[i].Wait = max(locks[i].Wait, l.Wait)
			return locks
		}
	}
	return append(locks, l)
}

// hasWindowFunc reports whether a query's select list or ORDER BY calls a
// window function.
func hasWindowFunc(sel *ast.SelectStmt) bool {
	v := &windowFinder{}
	if sel.Fields != nil {
		for _, f := range sel.Fields.Fields {
			if f.Expr != nil {
				f.Expr.Accept(v)
			}
		}
	}
	if sel.OrderBy != nil {
		sel.OrderBy.Accept(v)
	}
	return v.found
}

// planQueryClausesElsewhere refuses locking clauses and AS OF SYSTEM TIME
// where PivotDB does not run them yet: under EXPLAIN, in DECLARE CURSOR
// and beside data-modifying WITH queries. The clauses are bound first so
// that bad input still gets its own error.
func (a *binder) planQueryClausesElsewhere() (Statement, error) {
	st := a.stmt
	if len(st.WithDML) == 0 {
		var q ast.Node = st.AST
		if ex, ok := q.(*ast.ExplainStmt); ok {
			q = ex.Stmt
		}
		if _, ok, err := a.buildQueryStmt(q); ok {
			if err != nil {
				return nil, err
			}
			if _, err := a.bindLocking(q, st.Locking); err != nil {
				return nil, err
			}
		}
		if _, err := a.bindAsOf(st.AsOf); err != nil {
			return nil, err
		}
	}
	where := "EXPLAIN"
	switch {
	case st.Cursor != nil:
		where = "DECLARE CURSOR"
	case len(st.WithDML) > 0:
		where = "a query with data-modifying WITH queries"
	}
	if len(st.Locking) > 0 {
		return nil, sqlerr.NotSupported("%s in %s", st.Locking[0].Strength, where)
	}
	return nil, sqlerr.NotSupported("AS OF SYSTEM TIME in %s", where)
}
