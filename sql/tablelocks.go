package sql

import (
	"context"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/sql/acl"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
)

// Table locks (sql/txn/tablelocks.go has the lock manager). As in
// PostgreSQL, every statement locks the tables it uses before it runs, and
// the locks are held to the end of the transaction:
//
//   - a query takes ACCESS SHARE on each table it reads (through views
//     too), FOR UPDATE and its kind ROW SHARE, a write ROW EXCLUSIVE;
//   - DDL takes ACCESS EXCLUSIVE on the tables it changes (DROP, TRUNCATE,
//     ALTER TABLE, DROP INDEX, VACUUM FULL), SHARE UPDATE EXCLUSIVE for the
//     changes that let reads and writes go on (CREATE INDEX and REINDEX,
//     which PivotDB builds online as PostgreSQL's CONCURRENTLY does,
//     VACUUM, ANALYZE, table settings, RESHARD, and a rewriting ALTER
//     TABLE while it converts the rows: it takes ACCESS EXCLUSIVE for its
//     swap, lockForSwap);
//   - LOCK TABLE takes the mode it names; on a view, on the view and on
//     every table and view its query reads, recursively (viewLocks).
//
// A schema change's table locks end with its statement, or, inside a
// transaction block, with the block, as PostgreSQL's do: a writer of a
// table the block changed (ROW EXCLUSIVE, or ROW SHARE for FOR UPDATE)
// waits for the block's end (lock_timeout, deadlocks 40P01) and then binds
// against the schema it left, instead of failing at its commit with
// 40001. ACCESS EXCLUSIVE is kept as EXCLUSIVE once the change's
// statement ended (TableLocks.Weaken): plain reads of the table go on
// with the committed schema, as they do while any schema change runs
// (PostgreSQL's readers would wait). Its own mode waits only for LOCK
// TABLE's and other schema changes' locks, not for the implicit locks of
// the transactions that read the table: readers go on with the catalog of
// their snapshot. ALTER TABLE, the index changes (CREATE and DROP INDEX,
// REINDEX), DROP TABLE and TRUNCATE first take SHARE, which does wait
// for the implicit ROW EXCLUSIVE of the transactions that wrote the
// table, as PostgreSQL's locks make them wait: those would fail at commit
// with 40001 if the change committed before them (their rows follow the
// old definition, or go to a table that is gone). So does a new foreign
// key (CREATE TABLE ... REFERENCES, ALTER TABLE ... ADD FOREIGN KEY) on
// the table it references, whose writers must check it from then on.
// New writers queue behind it until the change's statement ends, except
// behind a rewrite (ALTER COLUMN TYPE, ADD PRIMARY KEY), which lets them
// go on once the writers it found ended: it converts the rows without
// holding writers off, and those still open at its swap fail at commit.
// So pg_dump's ACCESS SHARE holds DROP TABLE off, and LOCK TABLE t IN
// SHARE MODE holds writers off, as in PostgreSQL.
//
// Locks are taken after the statement is bound; a statement that waited
// while the catalog changed is bound again (the table it bound may be
// gone), and takes its snapshot after its locks, so that READ COMMITTED
// sees what the holder committed.
//
// The owner of the locks is the session's transaction; a statement
// outside one holds them under an owner ID of its own until it ends.
// ROLLBACK TO SAVEPOINT gives back the locks taken since the savepoint.

// relLock is one table lock a statement takes.
type relLock struct {
	table *catalog.Table
	// view is set instead of table for LOCK TABLE on a view (the lock
	// manager keys both by catalog ID).
	view *catalog.View
	mode txn.LockMode
	// implicit: a read's or write's lock; ddl: a schema change's (see
	// txn.LockRequest); neither: LOCK TABLE's.
	implicit, ddl bool
	// writers: a schema change's lock (released with its statement) that
	// waits for the implicit locks too, not only for LOCK TABLE's and
	// DDL's: the SHARE lock that makes an index change wait for the open
	// writers of its table (see statementLocks).
	writers bool
	// barrier: given back as soon as it is granted — the statement waits
	// for the current holders of conflicting locks but holds nothing
	// against those that come later (a rewrite's online phase).
	barrier bool
}

// relation is the ID and the display name of what l locks.
func (l relLock) relation() (uint64, string) {
	if l.view != nil {
		return l.view.ID, l.view.Name
	}
	return l.table.ID, bind.TempDisplayName(l.table.Name)
}

// useModes maps the binder's table uses to lock modes.
var useModes = [...]txn.LockMode{bind.UseRead: txn.AccessShare, bind.UseLockRows: txn.RowShare, bind.UseWrite: txn.RowExclusive}

// lockOwner returns the owner of the table locks the session takes now,
// and remembers it to release its locks when the transaction ends.
func (s *Session) lockOwner() uint64 {
	// The implicit transaction of a protocol cycle begins at its first
	// write, after the locks of that write were taken; the cycle's later
	// locks stay with their first owner, since the lock manager knows
	// owners, not sessions, and two owners of one session would wait for
	// each other (`SELECT * FROM t; LOCK t; INSERT INTO t ...`).
	var id uint64
	if s.txn != nil && !(s.implicit && s.relOwner != 0) {
		id = s.txn.ID()
	} else {
		if s.relOwner == 0 {
			s.relOwner = s.e.txns.NewOwner()
		}
		id = s.relOwner
	}
	for _, o := range s.relOwners {
		if o == id {
			return id
		}
	}
	s.relOwners = append(s.relOwners, id)
	return id
}

// lockTables takes the locks in order. Statement cancellation, lock_timeout
// (55P03) and deadlocks (40P01) end the wait.
func (s *Session) lockTables(ctx context.Context, locks []relLock, nowait bool) error {
	_, err := s.lockTablesWaited(ctx, locks, nowait)
	return err
}

// lockTablesWaited is lockTables, also reporting whether it waited.
func (s *Session) lockTablesWaited(ctx context.Context, locks []relLock, nowait bool) (waited bool, err error) {
	if len(locks) == 0 {
		return false, nil
	}
	owner := s.lockOwner()
	var pid uint32
	if s.backend != nil {
		pid = s.backend.PID
	}
	for _, l := range locks {
		mark := 0
		if l.barrier {
			mark = s.e.txns.Tables().Mark(owner)
		}
		rel, name := l.relation()
		w, err := s.e.txns.Tables().LockWaited(ctx, txn.LockRequest{Owner: owner, PID: pid, Rel: rel, Mode: l.mode,
			NoWait: nowait, Name: name, Implicit: l.implicit, DDL: l.ddl && !l.writers})
		waited = waited || w
		if err != nil {
			return waited, err
		}
		if l.barrier {
			s.e.txns.Tables().ReleaseTo(owner, mark)
		}
	}
	return waited, nil
}

// releaseTableLocks gives back every table lock of the transaction that
// ends (or of the statement outside a transaction).
func (s *Session) releaseTableLocks() {
	for _, o := range s.relOwners {
		s.e.txns.Tables().Release(o)
	}
	s.relOwners = s.relOwners[:0]
	s.relOwner = 0
	s.relMarks = nil
	s.ddlLocks = nil
	s.fresh = nil
}

// releaseStatementLocks ends the locks of a statement that ran outside
// any transaction (in process, without a protocol cycle); inside one they
// wait for its end.
func (s *Session) releaseStatementLocks() {
	if d := s.ddlLocks; d != nil {
		if s.inTxnBlock() {
			// Inside a block they last to its end, as in PostgreSQL:
			// a writer of a table the block changed waits for the
			// block instead of failing at its commit. ACCESS EXCLUSIVE
			// becomes EXCLUSIVE, so plain reads go on with the
			// committed schema, as they did while the change ran.
			s.e.txns.Tables().Weaken(d.owner, d.mark, txn.Exclusive)
		} else {
			s.e.txns.Tables().ReleaseTo(d.owner, d.mark)
		}
		s.ddlLocks = nil
	}
	if s.txn == nil && !s.implicit && len(s.relOwners) > 0 {
		s.releaseTableLocks()
	}
}

// stmtDDLLocks are the locks of the running schema change: its owner's
// locks from mark on.
type stmtDDLLocks struct {
	owner uint64
	mark  int
}

// savepointLocks records, at SAVEPOINT name, how many table locks the
// transaction holds, so that ROLLBACK TO gives back the later ones.
func (s *Session) savepointLocks(name string) {
	if s.txn == nil {
		return
	}
	s.relMarks = append(s.relMarks, relMark{name: name, mark: s.e.txns.Tables().Mark(s.txn.ID())})
}

// rollbackLocksTo releases the table locks taken since savepoint name
// (the newest of that name), which stays; release forgets the savepoint
// and the later ones, their locks staying the transaction's.
func (s *Session) rollbackLocksTo(name string, release bool) {
	for i := len(s.relMarks) - 1; i >= 0; i-- {
		if s.relMarks[i].name != name {
			continue
		}
		s.freshAfterSavepoint(i, release)
		if release {
			s.relMarks = s.relMarks[:i]
			return
		}
		if s.txn != nil {
			s.e.txns.Tables().ReleaseTo(s.txn.ID(), s.relMarks[i].mark)
		}
		s.relMarks = s.relMarks[:i+1]
		return
	}
}

type relMark struct {
	name string
	mark int
}

// statementLocks lists the locks st takes before it runs: the uses the
// binder recorded, and the tables DDL changes, resolved by name in the
// current catalog (a name that resolves to nothing is left to the
// statement's own error).
//
// The list is built in the session's lockList, which the next call
// overwrites: a statement locks and checks its list before it asks for
// another (lockForStatement), and every statement asks, so a fresh slice
// was one of a point SELECT's allocations.
func (s *Session) statementLocks(p *preparedPlan) []relLock {
	locks := s.lockList[:0]
	defer func() { s.lockList = locks[:0] }()
	for _, u := range p.uses {
		locks = append(locks, relLock{table: u.table, mode: useModes[u.use], implicit: true})
	}
	snap := s.catalogSnap()
	byName := func(parts []string, mode txn.LockMode) {
		if t, ok := s.truncateTarget(snap, parts); ok {
			locks = append(locks, relLock{table: t, mode: mode, ddl: true})
		}
	}
	astName := func(schema, name string, mode txn.LockMode) {
		if schema != "" {
			byName([]string{schema, name}, mode)
		} else {
			byName([]string{name}, mode)
		}
	}
	byIndex := func(name string, mode txn.LockMode) {
		if t, _, ok := snap.IndexByName(s.db.ID, name); ok {
			locks = append(locks, relLock{table: t, mode: mode, ddl: true})
		}
	}
	// waitWriters makes an index change wait for the transactions that
	// hold ROW EXCLUSIVE on the table (PostgreSQL's SHARE lock of CREATE
	// INDEX): they wrote it maintaining its old indexes, and would fail
	// at commit with 40001 if the change committed first. Writers that
	// come meanwhile queue behind it. Readers do not conflict.
	// It comes before the change's own lock, so that it waits holding
	// nothing a writer needs (DROP INDEX's ACCESS EXCLUSIVE would hold the
	// writer it waits for off: a deadlock).
	waitWriters := func(barrier bool) {
		if n := len(locks); n > 0 && locks[n-1].ddl {
			own := locks[n-1]
			locks = append(locks[:n-1], relLock{table: own.table, mode: txn.Share, ddl: true, writers: true, barrier: barrier}, own)
		}
	}
	// guarded takes ACCESS EXCLUSIVE on tables for a change that replaces
	// or removes their rows (DROP TABLE, TRUNCATE), each after the SHARE
	// lock that waits for its open writers: all the SHARE locks first, so
	// that none is waited for while the statement holds an ACCESS
	// EXCLUSIVE lock a writer of the next table may need.
	guarded := func(tables []*catalog.Table) {
		for _, t := range tables {
			locks = append(locks, relLock{table: t, mode: txn.Share, ddl: true, writers: true})
		}
		for _, t := range tables {
			locks = append(locks, relLock{table: t, mode: txn.AccessExclusive, ddl: true})
		}
	}
	switch st := p.plan.(type) {
	case *bind.DropTables:
		var tables []*catalog.Table
		for _, n := range st.Tables {
			parts := []string{n.Name.O}
			if n.Schema.O != "" {
				parts = []string{n.Schema.O, n.Name.O}
			}
			if t, ok := s.truncateTarget(snap, parts); ok {
				tables = append(tables, t)
			}
		}
		guarded(tables)
	case *bind.Truncate:
		var tables []*catalog.Table
		for _, parts := range st.Tables {
			if t, ok := s.truncateTarget(snap, parts); ok {
				tables = append(tables, t)
			}
		}
		if st.Cascade {
			tables = referencingClosure(snap, tables)
		}
		guarded(tables)
	case *bind.CreateTable:
		// A foreign key makes the writers of the tables it references
		// check it: those that wrote them without would fail at commit
		// (bumpReferenced), so it waits for them and holds new ones off
		// until it commits, as PostgreSQL's SHARE ROW EXCLUSIVE does.
		referencedLocks(&locks, snap, st.Table.ForeignKeys, nil, 0)
	case *bind.AlterTable:
		if st.Old != nil {
			referencedLocks(&locks, snap, st.New.ForeignKeys, st.Old.ForeignKeys, st.Old.ID)
			// A rewrite converts the rows while writers go on (its
			// phase 1, alterRewrite): it only waits for the writers
			// there are when it starts, and holds SHARE UPDATE EXCLUSIVE
			// (which keeps other schema changes off) until its swap,
			// which takes ACCESS EXCLUSIVE (lockForSwap). The writers
			// that come later fail at commit with 40001 if still open at
			// the swap (statements outside a block run again).
			mode := txn.AccessExclusive
			if st.Rewrite != nil {
				mode = txn.ShareUpdateExclusive
			}
			locks = append(locks, relLock{table: st.Old, mode: mode, ddl: true})
			waitWriters(st.Rewrite != nil)
		}
	case *bind.AlterSettings:
		astName(st.Table.Schema.O, st.Table.Name.O, txn.ShareUpdateExclusive)
	case *bind.Reshard:
		astName(st.Table.Schema.O, st.Table.Name.O, txn.ShareUpdateExclusive)
	case *bind.CreateIndex:
		byName([]string{st.Table}, txn.ShareUpdateExclusive)
		waitWriters(false)
	case *bind.DropIndex:
		byIndex(st.Name, txn.AccessExclusive)
		waitWriters(false)
	case *bind.Reindex:
		n := len(locks)
		if st.Kind != "table" {
			byIndex(st.Name, txn.ShareUpdateExclusive)
		}
		if len(locks) == n && st.Kind != "index" {
			byName([]string{st.Name}, txn.ShareUpdateExclusive)
		}
		if len(locks) > n {
			waitWriters(false)
		}
	case *bind.Vacuum:
		mode := txn.ShareUpdateExclusive
		if st.Full {
			mode = txn.AccessExclusive
		}
		for _, parts := range st.Tables {
			byName(parts, mode)
		}
	case *bind.Comment:
		// PostgreSQL's COMMENT takes SHARE UPDATE EXCLUSIVE on the table.
		switch st.Kind {
		case "table":
			byName(st.Parts, txn.ShareUpdateExclusive)
		case "column":
			byName(st.Parts[:len(st.Parts)-1], txn.ShareUpdateExclusive)
		}
	case *bind.AlterOwner:
		if st.Kind == "table" {
			name := st.Name
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			byName([]string{name}, txn.AccessExclusive)
		}
	}
	return locks
}

// referencedLocks adds the SHARE locks that wait for the writers of the
// tables the foreign keys fks reference and had (those of the table self
// aside), in table id order: a new reference changes the referenced
// table's definition (bumpReferenced).
func referencedLocks(locks *[]relLock, snap *catalog.Snapshot, fks, had []catalog.ForeignKey, self uint64) {
	var ids []uint64
	for _, fk := range fks {
		if fk.RefTable == 0 || fk.RefTable == self || slices.Contains(ids, fk.RefTable) ||
			slices.ContainsFunc(had, func(x catalog.ForeignKey) bool { return x.Name == fk.Name }) {
			continue
		}
		ids = append(ids, fk.RefTable)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if t, ok := snap.TableByID(id); ok {
			*locks = append(*locks, relLock{table: t, mode: txn.Share, ddl: true, writers: true})
		}
	}
}

// referencingClosure adds to tables those that reference them, directly
// or not (what TRUNCATE ... CASCADE empties too).
func referencingClosure(snap *catalog.Snapshot, tables []*catalog.Table) []*catalog.Table {
	for i := 0; i < len(tables); i++ {
		refs, _ := snap.ReferencingKeys(tables[i].ID)
		for _, rt := range refs {
			if !slices.ContainsFunc(tables, func(x *catalog.Table) bool { return x.ID == rt.ID }) {
				tables = append(tables, rt)
			}
		}
	}
	return tables
}

// runLock is LOCK [TABLE] name, ... [IN mode MODE] [NOWAIT].
func (s *Session) runLock(ctx context.Context, p *bind.Lock) (Result, error) {
	// As in PostgreSQL, the implicit block of a query string of several
	// statements is a transaction block for LOCK: `LOCK t; SELECT ...`
	// holds the lock to the end of the string.
	if !s.inTxnBlock() {
		return nil, sqlerr.New(sqlerr.NoActiveSQLTransaction, "LOCK TABLE can only be used in transaction blocks")
	}
	mode := lockModeByName[p.Mode]
	snap := s.catalogSnap()
	acc := s.access(snap)
	var locks []relLock
	for _, parts := range p.Tables {
		name := parts[len(parts)-1]
		if len(parts) == 2 && !strings.EqualFold(parts[0], "public") && !strings.EqualFold(parts[0], "pg_temp") &&
			!strings.EqualFold(parts[0], s.db.Name) {
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", parts[0], name)
		}
		t, ok := s.truncateTarget(snap, parts)
		if !ok {
			v, isView := snap.View(s.db.ID, name)
			if !isView || (len(parts) == 2 && strings.EqualFold(parts[0], "pg_temp")) {
				return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
			}
			viewLocks, err := s.viewLocks(snap, acc, v, mode)
			if err != nil {
				return nil, err
			}
			locks = append(locks, viewLocks...)
			continue
		}
		if !lockAllowed(acc, &t.Owned, mode) {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table %s", bind.TempDisplayName(t.Name))
		}
		locks = append(locks, relLock{table: t, mode: mode})
	}
	if err := s.lockTables(ctx, locks, p.NoWait); err != nil {
		return nil, err
	}
	return &tagResult{tag: "LOCK TABLE"}, nil
}

// lockAllowed is PostgreSQL's rule for LOCK TABLE: ACCESS SHARE needs
// SELECT, ROW EXCLUSIVE INSERT, and either any of UPDATE, DELETE and
// TRUNCATE.
func lockAllowed(acc *catalog.Access, o *catalog.Owned, mode txn.LockMode) bool {
	allowed := acc.Has(o, acl.Table, acl.Update) || acc.Has(o, acl.Table, acl.Delete) || acc.Has(o, acl.Table, acl.Truncate)
	switch mode {
	case txn.AccessShare:
		allowed = allowed || acc.Has(o, acl.Table, acl.Select)
	case txn.RowExclusive:
		allowed = allowed || acc.Has(o, acl.Table, acl.Insert)
	}
	return allowed
}

// viewLocks are the locks of LOCK TABLE on view v, as in PostgreSQL: the
// view and, recursively, every table and view its query reads
// (bind.ViewRelations), in mode. The session's user needs the mode's
// privileges on v, the owner of each view those on what its query reads.
func (s *Session) viewLocks(snap *catalog.Snapshot, acc *catalog.Access, v *catalog.View, mode txn.LockMode) ([]relLock, error) {
	if !lockAllowed(acc, &v.Owned, mode) {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for view %s", v.Name)
	}
	rels, err := bind.ViewRelations(s.bindEnv(), v)
	if err != nil {
		return nil, err
	}
	locks := []relLock{{view: v, mode: mode}}
	for _, r := range rels {
		racc := snap.Access(r.Role)
		if r.View != nil {
			if !lockAllowed(racc, &r.View.Owned, mode) {
				return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for view %s", r.View.Name)
			}
			locks = append(locks, relLock{view: r.View, mode: mode})
			continue
		}
		if !lockAllowed(racc, &r.Table.Owned, mode) {
			return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for table %s", bind.TempDisplayName(r.Table.Name))
		}
		locks = append(locks, relLock{table: r.Table, mode: mode})
	}
	return locks, nil
}

var lockModeByName = map[string]txn.LockMode{
	"access share": txn.AccessShare, "row share": txn.RowShare, "row exclusive": txn.RowExclusive,
	"share update exclusive": txn.ShareUpdateExclusive, "share": txn.Share,
	"share row exclusive": txn.ShareRowExclusive, "exclusive": txn.Exclusive, "access exclusive": txn.AccessExclusive,
}

// lockForStatement takes the table locks of the statement p runs. When it
// waited for one, the statement takes its snapshot again (fix as for
// takeSnapshot) so that it sees what the holder committed, and is bound
// again if the catalog it sees changed meanwhile (what it bound may be
// gone); the new plan's locks are taken too.
func (s *Session) lockForStatement(ctx context.Context, p *Prepared, fix bool) error {
	// The list's tables are not kept past the statement's locking (an
	// idle session holds no catalog it no longer uses).
	defer func() { clear(s.lockList[:cap(s.lockList)]) }()
	for tries := 0; ; tries++ {
		locks := s.statementLocks(&p.plan)
		if len(locks) == 0 {
			return nil
		}
		waited := false
		// The implicit locks come first in the list; the schema
		// change's after them, from a mark they are released back to.
		for i, l := range locks {
			if l.ddl {
				if s.ddlLocks == nil {
					owner := s.lockOwner()
					s.ddlLocks = &stmtDDLLocks{owner: owner, mark: s.e.txns.Tables().Mark(owner)}
				}
				w, err := s.lockTablesWaited(ctx, locks[i:], false)
				waited = waited || w
				if err != nil {
					return err
				}
				break
			}
			w, err := s.lockTablesWaited(ctx, locks[i:i+1], false)
			waited = waited || w
			if err != nil {
				return err
			}
		}
		if (!waited && !s.writtenTableChanged(locks)) || tries > 8 || s.stmtAsOf != nil {
			// (A historical read keeps its timestamp.)
			return nil
		}
		if err := s.takeSnapshot(fix); err != nil {
			return err
		}
		if p.plan.snap == nil || p.plan.snap == s.catalogSnap() {
			return nil
		}
		fresh, err := s.bind(ctx, p.plan.stmt, p.ParamTypes)
		if err != nil {
			return err
		}
		if !sameColumns(fresh.Columns, p.Columns) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
		}
		p.plan = fresh.plan
	}
}

// writtenTableChanged reports whether a table the statement writes (its
// ROW EXCLUSIVE locks, now held) has a newer committed definition than
// the one the statement was bound to: an index change committed between
// the statement's snapshot and its lock, without making it wait. Bound
// again (as after a wait), it maintains the indexes the table has now;
// once the lock is held, no index change can commit before the statement
// ends (they wait for writers, statementLocks). Not inside a block that
// changed the schema itself (its own catalog is not the committed one).
func (s *Session) writtenTableChanged(locks []relLock) bool {
	if s.tddl != nil && s.tddl.pending != nil {
		return false
	}
	cur := s.e.catalog.Snapshot()
	for _, l := range locks {
		if !l.implicit || l.mode != txn.RowExclusive {
			continue
		}
		if t, ok := cur.TableByID(l.table.ID); ok && t != l.table {
			return true
		}
	}
	return false
}

// lockForSwap takes ACCESS EXCLUSIVE on t for the rest of the running
// schema change's statement (released with its other locks): a rewrite
// takes it for its swap only, after converting the rows under SHARE
// UPDATE EXCLUSIVE, so that it waits for LOCK TABLE's holders (pg_dump's
// ACCESS SHARE) before the old rows go, but not while it converts.
func (s *Session) lockForSwap(ctx context.Context, t *catalog.Table) error {
	owner := s.lockOwner()
	if s.ddlLocks != nil {
		owner = s.ddlLocks.owner
	}
	var pid uint32
	if s.backend != nil {
		pid = s.backend.PID
	}
	return s.e.txns.Tables().Lock(ctx, txn.LockRequest{Owner: owner, PID: pid, Rel: t.ID, Mode: txn.AccessExclusive,
		Name: bind.TempDisplayName(t.Name), DDL: true})
}
