package bind

import (
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
)

// LOCK TABLE on a view locks the view and, recursively, every relation
// its query reads, with the same mode, as PostgreSQL 15 does (LockViewRecurse):
// the tables and views of its FROM clauses, joins, subqueries and CTEs,
// and those of the views it reads in turn. The session checks the lock
// mode's privileges on the view for its user and on what the view reads
// for the view's owner (the role Role names).

// LockRelation is a table or a view a view's query reads.
type LockRelation struct {
	Table *catalog.Table // nil for a view
	View  *catalog.View
	// Role is the role the relation is read for: the owner of the view
	// whose query names it.
	Role string
}

// ViewRelations plans v's query, without recording table uses for the
// running statement, and returns the relations it reads at any depth,
// each table or view once per role, in the order the planner meets them.
func ViewRelations(env *Env, v *catalog.View) ([]LockRelation, error) {
	e := *env
	e.UseTable = nil
	b := &binder{env: &e, snap: env.Snapshot, stmt: &parser.Statement{Text: v.Definition}}
	var out []LockRelation
	seen := map[[2]any]bool{}
	b.onRelation = func(r LockRelation) {
		var id uint64
		if r.Table != nil {
			id = r.Table.ID
		} else {
			id = r.View.ID
		}
		if k := [2]any{id, r.Role}; !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	if _, _, err := b.planView(v); err != nil {
		return nil, err
	}
	return out, nil
}
