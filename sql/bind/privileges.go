package bind

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Privilege checks happen while binding, against the snapshot the
// statement is bound to: a GRANT or REVOKE changes the catalog, so a
// prepared statement is bound (and checked) again before it next runs. A
// statement bound against an older catalog (AS OF SYSTEM TIME) must hold
// the privilege in the newest one too (Env.Current).
//
// Who is checked: the session's user, except inside a view, whose tables
// are read with the privileges of the view's owner (as in PostgreSQL, so
// that a view can give access to part of a table); the view itself is
// checked for whoever uses it.
//
// What is checked: SELECT on every table and view a query reads (joins,
// subqueries, derived tables, INSERT ... SELECT included); INSERT for
// INSERT, INSERT and UPDATE for UPSERT and REPLACE (they overwrite
// existing rows); UPDATE or DELETE for those, plus SELECT when the
// statement reads the table's columns (in WHERE or in a SET value); owner
// for CREATE INDEX and SPLIT TABLE. System relations (pg_catalog,
// information_schema, sys.partitions) are readable by every role.

// access is the privileges of the role checks are made for.
func (a *binder) access() *catalog.Access {
	role := a.env.User
	if a.checkAs != "" {
		role = a.checkAs
	}
	if a.acc == nil || a.acc.Role() != role {
		a.acc = a.snap.Access(role)
	}
	return a.acc
}

// requireTable fails with 42501 unless the role holds p on table t. It
// also records the use of t for the statement's implicit table lock
// (Env.UseTable): a read for SELECT, a write for the other privileges.
func (a *binder) requireTable(t *catalog.Table, p acl.Privilege) error {
	if err := a.requireTablePrivilege(t, p); err != nil {
		return err
	}
	if p == acl.Select {
		a.useTable(t, UseRead)
	} else {
		a.useTable(t, UseWrite)
	}
	return nil
}

func (a *binder) requireTablePrivilege(t *catalog.Table, p acl.Privilege) error {
	if a.access().Has(&t.Owned, acl.Table, p) && a.currentHas(t.ID, 0, p) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table %s", t.Name)
}

// currentHas reports whether a statement bound against an older catalog
// (Env.Current, AS OF SYSTEM TIME) may also use the table (or view of
// database viewDB) with that id as the newest catalog has it: a REVOKE
// is not undone by reading from before it (CockroachDB checks the
// historical descriptor only, its open issue 51861). An object the
// newest catalog no longer has passes here: its rows went with its drop,
// which the read reports.
func (a *binder) currentHas(id, viewDB uint64, p acl.Privilege) bool {
	cur := a.env.Current
	if cur == nil || cur == a.snap {
		return true
	}
	var o *catalog.Owned
	if viewDB == 0 {
		t, ok := cur.TableByID(id)
		if !ok {
			return true
		}
		o = &t.Owned
	} else {
		for _, v := range cur.Views(viewDB) {
			if v.ID == id {
				o = &v.Owned
			}
		}
		if o == nil {
			return true
		}
	}
	return cur.Access(a.access().Role()).Has(o, acl.Table, p)
}

// TableUse is how a statement uses a table, which decides the table lock
// it takes when it runs, as in PostgreSQL: ACCESS SHARE to read, ROW
// SHARE to lock rows (FOR UPDATE and its kind), ROW EXCLUSIVE to write.
type TableUse uint8

// The uses, weakest first.
const (
	UseRead TableUse = iota + 1
	UseLockRows
	UseWrite
)

func (a *binder) useTable(t *catalog.Table, u TableUse) {
	if a.onRelation != nil {
		a.onRelation(LockRelation{Table: t, Role: a.access().Role()})
	}
	if a.env.UseTable != nil {
		a.env.UseTable(t, u)
	}
}

// requireView fails with 42501 unless the role holds p on view v.
func (a *binder) requireView(v *catalog.View, p acl.Privilege) error {
	if a.access().Has(&v.Owned, acl.Table, p) && a.currentHas(v.ID, v.DatabaseID, p) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for view %s", v.Name)
}

// requireOwner fails with 42501 unless the role owns table t.
func (a *binder) requireOwner(t *catalog.Table) error {
	if a.access().Owns(&t.Owned) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of table %s", t.Name)
}

// readsColumns reports whether any of the expressions names a column.
func readsColumns(nodes ...ast.Node) bool {
	v := &columnFinder{}
	for _, n := range nodes {
		if n != nil && !v.found {
			n.Accept(v)
		}
	}
	return v.found
}

type columnFinder struct{ found bool }

func (v *columnFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.ColumnNameExpr); ok {
		v.found = true
	}
	return n, v.found
}

func (v *columnFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }
