package sql

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/pivotdb/pivotdb/panics"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
)

// Temporary tables (bind/temp.go): catalog tables under a name private to
// their session. They go when the session ends (Close) and, for a server
// that stopped without closing its sessions, at the next startup
// (dropLeftoverTempTables), so no crash leaves one behind.

// tempTable resolves a DROP TABLE name among the session's temporary
// tables.
func (s *Session) tempTable(snap *catalog.Snapshot, tn *ast.TableName) (*catalog.Table, bool) {
	if tn.Schema.O != "" && !strings.EqualFold(tn.Schema.O, "pg_temp") {
		return nil, false
	}
	return snap.Table(s.db.ID, s.tempPrefix+tn.Name.O)
}

// dropTempTables drops the session's temporary tables when it ends. An
// error (the engine closing under it) leaves them to the next startup.
func (s *Session) dropTempTables() {
	if !s.madeTemp {
		return
	}
	_ = s.e.dropTablesWhere(func(t *catalog.Table) bool { return strings.HasPrefix(t.Name, s.tempPrefix) })
}

// dropLeftoverTempTables drops, at startup, every temporary table a
// previous run left: their sessions are gone.
func (e *Engine) dropLeftoverTempTables() error {
	return e.dropTablesWhere(func(t *catalog.Table) bool { return bind.IsTempName(t.Name) })
}

// dropTablesWhere drops, in one schema change, every table match picks.
func (e *Engine) dropTablesWhere(match func(*catalog.Table) bool) error {
	ch := e.catalog.Begin()
	pch := e.shards.Begin()
	b := e.storage.NewBatch()
	defer b.Close()
	abort := func(err error) error {
		pch.Abort()
		ch.Abort()
		return err
	}
	found := false
	snap := ch.Snapshot()
	for _, db := range snap.Databases() {
		for _, t := range snap.Tables(db.ID) {
			if !match(t) {
				continue
			}
			found = true
			ch.DropTable(t)
			if err := e.dropTableData(pch, b, t); err != nil {
				return abort(err)
			}
		}
	}
	if !found {
		return abort(nil)
	}
	if err := ch.Write(e.meta.With(b)); err != nil {
		return abort(err)
	}
	if err := b.Commit(); err != nil {
		return abort(err)
	}
	defer panics.Crash("sql: installing a committed schema change")
	pch.Install()
	ch.Install()
	e.syncKeyFilters()
	return nil
}

// setOnCommit records a new temporary table's ON COMMIT action (name is
// its catalog name); PRESERVE ROWS, the default, needs nothing.
func (s *Session) setOnCommit(name, action string) {
	if action != "delete rows" && action != "drop" {
		delete(s.onCommit, name)
		return
	}
	if s.onCommit == nil {
		s.onCommit = map[string]string{}
	}
	s.onCommit[name] = action
}

// endTransaction applies the ON COMMIT actions when a transaction ends:
// ON COMMIT DROP tables are dropped however it ended (their creation, a
// schema change, committed on its own, so a rollback must drop them too);
// ON COMMIT DELETE ROWS tables are emptied after a commit (after a
// rollback the transaction's rows are gone already). Errors are not the
// client's: the transaction they would report on has ended, so a table
// that cannot be emptied is dropped instead, which the next use reports.
func (s *Session) endTransaction(committed bool) {
	s.releaseTableLocks()
	if len(s.onCommit) == 0 {
		return
	}
	ctx := context.Background()
	for name, action := range s.onCommit {
		if _, ok := s.catalogSnap().Table(s.db.ID, name); !ok {
			delete(s.onCommit, name) // dropped by the client
			continue
		}
		if action == "delete rows" {
			if !committed || s.deleteAllRows(ctx, name) == nil {
				continue
			}
		}
		delete(s.onCommit, name)
		_ = s.e.dropTablesWhere(func(t *catalog.Table) bool { return t.DatabaseID == s.db.ID && t.Name == name })
	}
}

// deleteAllRows empties the session's temporary table catalogName in a
// transaction of its own, through the DELETE path (indexes and shard
// statistics follow).
func (s *Session) deleteAllRows(ctx context.Context, catalogName string) error {
	t, ok := s.catalogSnap().Table(s.db.ID, catalogName)
	if !ok {
		return nil
	}
	// A snapshot of its own: the COMMIT's was taken before the commit it
	// empties the table after.
	if err := s.takeSnapshot(false); err != nil {
		return err
	}
	scan := &planner.Scan{Table: t}
	for i, c := range t.Columns {
		scan.Cols = append(scan.Cols, planner.Column{Name: c.Name, Type: c.Type, Table: t, Index: i})
	}
	res, err := s.modify(ctx, &bind.Modify{Scan: scan}, nil)
	if err != nil {
		return err
	}
	res.Close()
	return nil
}
