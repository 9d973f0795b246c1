package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/panics"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// ddl runs a schema change: fn edits the catalog change and may add data
// changes to the batch; both commit atomically. Inside a transaction block
// the change is the transaction's, committed or rolled back with it
// (ddlInBlock, txnddl.go). Every schema change holds the schema-change
// lock (lockDDL) while it runs, one in a block until the block ends.
//
// The catalog's change lock is taken before the shard manager's, always in
// that order; the shard maps install before the catalog so that a table is
// never visible without its shards.
func (s *Session) ddl(fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	b := s.e.storage.NewBatch()
	defer b.Close()
	return s.ddlInto(b, fn)
}

// ddlInto is ddl on a batch that may already hold data changes (a
// rewrite's rows, prepared before the change locks were taken).
func (s *Session) ddlInto(b *storage.Batch, fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	if s.inTxnBlock() {
		if s.txn == nil {
			// The implicit block of a query string: its transaction
			// starts with its first schema change or write.
			s.txn = s.beginTxn()
			s.txn.StartStatement()
		}
		return s.ddlInBlock(b, fn)
	}
	return s.withDDLLock(false, func() error { return s.ddlNow(b, fn) })
}

// ddlNow commits a schema change on its own.
func (s *Session) ddlNow(b *storage.Batch, fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	ch := s.e.catalog.Begin()
	pch := s.e.shards.Begin()
	s.gcDrops = nil
	abort := func(err error) error {
		s.gcDrops = nil
		pch.Abort()
		ch.Abort()
		return err
	}
	if err := fn(ch, pch, b); err != nil {
		return abort(err)
	}
	// The rows of the tables and indexes it drops stay for historical
	// reads; their GC job commits with the change (dropgc.go).
	gc, err := s.e.prepareDropGC(s.gcDrops, s.currentText, s.user, b)
	s.gcDrops = nil
	if err != nil {
		return abort(err)
	}
	// Schema times for historical reads (session_asof.go).
	changes := s.schemaChanges(ch)
	changedAt, err := s.e.storage.RecordSchemaChanges(b, changes)
	if err != nil {
		return abort(err)
	}
	if err := ch.Write(s.e.meta.With(b)); err != nil {
		return abort(err)
	}
	// The new catalog is installed as the batch lands, before a statement
	// can read at its commit timestamp: the statements that see its rows
	// see its schema (catalog.Catalog.At).
	installed := false
	b.OnCommitted(func(ts hlc.Timestamp) {
		// Committed: a panic before both installs would leave the catalog
		// and shard maps in memory behind the disk, with the change locks
		// held.
		defer panics.Crash("sql: installing a committed schema change")
		s.e.dropgc.keep(gc, ts) // before the shard maps go
		pch.Install()
		ch.InstallAt(ts)
		installed = true
	})
	if err := b.Commit(); err != nil {
		if installed {
			s.e.dropgc.start(gc)
			return err
		}
		return abort(err)
	}
	s.e.dropgc.start(gc)
	s.e.storage.NoteSchemaChanges(changes, changedAt)
	// The rest of the statement (CREATE TABLE AS fills the table) sees
	// the change.
	s.stmtCatalog = nil
	s.e.syncKeyFilters()
	return nil
}

func (s *Session) createTable(ctx context.Context, p *bind.CreateTable) (Result, error) {
	var created uint64
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		snap := ch.Snapshot()
		if err := mayCreateIn(s.access(snap), s.currentDB(snap)); err != nil {
			return err
		}
		if snap.RelationExists(s.db.ID, p.Table.Name) {
			if p.IfNotExists {
				s.notice("NOTICE", sqlerr.DuplicateTable, "relation %q already exists, skipping", p.Table.Name)
				return nil
			}
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", p.Table.Name)
		}
		t := *p.Table
		t.ID = ch.NewID()
		created = t.ID
		if p.Temp {
			s.madeTemp = true
			s.setOnCommit(p.Table.Name, p.OnCommit)
		}
		t.Owned = catalog.Owned{Owner: s.user}
		splits := make([][]byte, len(p.Pivots))
		for i, pv := range p.Pivots {
			splits[i] = rowenc.EncodeKeyPrefix(&t, pv)
		}
		s.e.creating.Store(t.ID, &t)
		defer s.e.creating.Delete(t.ID)
		if err := pch.Create(s.e.meta.With(b), t.ID, splits); err != nil {
			return err
		}
		t.Indexes = append([]catalog.Index(nil), t.Indexes...)
		for i := range t.Indexes {
			ix := &t.Indexes[i]
			if ch.Snapshot().RelationExists(s.db.ID, ix.Name) {
				return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", ix.Name)
			}
			ix.ID = ch.NewID()
			if err := s.createIndexData(ctx, pch, b, &t, ix, false); err != nil {
				return err
			}
		}
		t.ForeignKeys = append([]catalog.ForeignKey(nil), t.ForeignKeys...)
		for i := range t.ForeignKeys {
			if t.ForeignKeys[i].RefTable == 0 {
				t.ForeignKeys[i].RefTable = t.ID // a reference to itself
			}
		}
		if err := bumpReferenced(ch, &t, nil); err != nil {
			return err
		}
		ch.PutTable(&t)
		for _, seq := range p.Sequences {
			q := *seq
			q.OwnerTable = t.ID
			q.Owned = catalog.Owned{Owner: t.Owner}
			if err := s.createSequenceIn(ch, b, &q); err != nil {
				return err
			}
		}
		for _, n := range p.Notices {
			s.notice("NOTICE", n.Code, "%s", n.Message)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if created != 0 {
		s.noteFreshTable(created)
	}
	return &tagResult{tag: "CREATE TABLE"}, nil
}

func (s *Session) dropTables(ctx context.Context, p *bind.DropTables) (Result, error) {
	// The sequences the tables own are dropped with them.
	snap := s.catalogSnap()
	var owned []uint64
	for _, tn := range p.Tables {
		if t, ok := snap.Table(s.db.ID, tn.Name.O); ok {
			owned = append(owned, ownedSequenceIDs(snap, s.db.ID, []*catalog.Table{t})...)
		}
	}
	err := s.seqDDL(owned, func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		for _, tn := range p.Tables {
			if schema := tn.Schema.O; schema != "" && !strings.EqualFold(schema, s.db.Name) && !strings.EqualFold(schema, "public") {
				return sqlerr.NotSupported("dropping a table of another database (%s)", schema)
			}
			t, ok := s.tempTable(ch.Snapshot(), tn)
			if !ok && !bind.IsTempName(tn.Name.O) {
				t, ok = ch.Snapshot().Table(s.db.ID, tn.Name.O)
			}
			if !ok {
				if _, isView := ch.Snapshot().View(s.db.ID, tn.Name.O); isView {
					return sqlerr.New(sqlerr.WrongObjectType, "%q is not a table", tn.Name.O)
				}
				if p.IfExists {
					s.notice("NOTICE", sqlerr.UndefinedTable, "table %q does not exist, skipping", tn.Name.O)
					continue
				}
				return sqlerr.New(sqlerr.UndefinedTable, "table %q does not exist", tn.Name.O)
			}
			if err := ownTable(s.access(ch.Snapshot()), t); err != nil {
				return err
			}
			if tables, fks := ch.Snapshot().ReferencingKeys(t.ID); len(tables) > 0 {
				for i, rt := range tables {
					if rt.ID != t.ID && !droppedToo(p, rt.Name) {
						return &sqlerr.Error{Code: sqlerr.DependentObjectsStillExist,
							Message: fmt.Sprintf("cannot drop table %s because other objects depend on it", t.Name),
							Detail:  fmt.Sprintf("constraint %s on table %s depends on table %s", fks[i].Name, rt.Name, t.Name),
							Hint:    "Drop the referencing table or its constraint first."}
					}
				}
			}
			for _, q := range ch.Snapshot().OwnedSequences(s.db.ID, t.ID) {
				if err := s.dropSequenceIn(ch, b, q); err != nil {
					return err
				}
			}
			ch.DropTable(t)
			if err := s.dropTableData(pch, b, t); err != nil {
				return err
			}
		}
		return nil
	})
	for _, id := range owned {
		s.e.seqs.forget(id)
	}
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "DROP TABLE"}, nil
}

func (s *Session) createDatabase(ctx context.Context, p *bind.CreateDatabase) (Result, error) {
	if p.HasOptions {
		return nil, sqlerr.NotSupported("CREATE DATABASE options")
	}
	name := p.Name
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		if !s.access(ch.Snapshot()).CreateDB() {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to create database")
		}
		if _, exists := ch.Snapshot().Database(name); exists {
			if p.IfNotExists {
				s.notice("NOTICE", sqlerr.DuplicateDatabase, "database %q already exists, skipping", name)
				return nil
			}
			return sqlerr.New(sqlerr.DuplicateDatabase, "database %q already exists", name)
		}
		ch.CreateDatabase(name, s.user)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "CREATE DATABASE"}, nil
}

func (s *Session) dropDatabase(ctx context.Context, p *bind.DropDatabase) (Result, error) {
	name := p.Name
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		d, ok := ch.Snapshot().Database(name)
		if !ok {
			if p.IfExists {
				s.notice("NOTICE", sqlerr.UndefinedDatabase, "database %q does not exist, skipping", name)
				return nil
			}
			return sqlerr.New(sqlerr.UndefinedDatabase, "database %q does not exist", name)
		}
		if err := ownDatabase(s.access(ch.Snapshot()), d); err != nil {
			return err
		}
		if d.ID == s.db.ID {
			return sqlerr.New(sqlerr.ObjectInUse, "cannot drop the currently open database")
		}
		if n := s.e.databaseInUse(d.ID, s); n > 0 {
			return &sqlerr.Error{Code: sqlerr.ObjectInUse,
				Message: "database \"" + name + "\" is being accessed by other users",
				Detail:  "There are other sessions using the database."}
		}
		for _, q := range ch.Snapshot().Sequences(d.ID) {
			if err := s.e.meta.With(b).Delete(sequenceKey(q.ID)); err != nil {
				return err
			}
		}
		ch.DropRoleSettings(d.ID, "")
		for _, t := range ch.DropDatabase(d) {
			if err := s.e.dropTableData(pch, b, t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "DROP DATABASE"}, nil
}

// dropTableData removes a table's rows, index entries and shard maps in
// the DDL batch.
func (e *Engine) dropTableData(pch *partition.Change, b *storage.Batch, t *catalog.Table) error {
	for _, ix := range t.Indexes {
		if err := e.dropIndexData(pch, b, ix.ID); err != nil {
			return err
		}
	}
	if err := pch.Drop(e.meta.With(b), t.ID); err != nil {
		return err
	}
	return b.DeleteRange(storage.TableSpan(t.ID))
}

func (s *Session) createView(ctx context.Context, p *bind.CreateView) (Result, error) {
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		snap := ch.Snapshot()
		if err := mayCreateIn(s.access(snap), s.currentDB(snap)); err != nil {
			return err
		}
		if snap.RelationExists(s.db.ID, p.Name) {
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", p.Name)
		}
		ch.PutView(&catalog.View{ID: ch.NewID(), DatabaseID: s.db.ID, Name: p.Name, Definition: p.Text,
			Dialect: p.Dialect, Owned: catalog.Owned{Owner: s.user}})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "CREATE VIEW"}, nil
}

func (s *Session) dropViews(ctx context.Context, p *bind.DropViews) (Result, error) {
	err := s.ddl(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		for _, tn := range p.Views {
			if schema := tn.Schema.O; schema != "" && !strings.EqualFold(schema, s.db.Name) && !strings.EqualFold(schema, "public") {
				return sqlerr.NotSupported("dropping a view of another database (%s)", schema)
			}
			v, ok := ch.Snapshot().View(s.db.ID, tn.Name.O)
			if ok {
				if err := ownView(s.access(ch.Snapshot()), v); err != nil {
					return err
				}
				ch.DropView(v)
				continue
			}
			if _, isTable := ch.Snapshot().Table(s.db.ID, tn.Name.O); isTable {
				return sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", tn.Name.O)
			}
			if p.IfExists {
				s.notice("NOTICE", sqlerr.UndefinedTable, "view %q does not exist, skipping", tn.Name.O)
				continue
			}
			return sqlerr.New(sqlerr.UndefinedTable, "view %q does not exist", tn.Name.O)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "DROP VIEW"}, nil
}

// droppedToo reports whether DROP TABLE drops the named table as well.
func droppedToo(p *bind.DropTables, name string) bool {
	for _, tn := range p.Tables {
		if strings.EqualFold(tn.Name.O, name) {
			return true
		}
	}
	return false
}

// bumpReferenced raises the version of every table t's foreign keys
// reference that old (the table before the change; nil for a new one)
// did not: writers of those tables must now look for t's rows, and a
// transaction that wrote them under the old definition fails at commit.
func bumpReferenced(ch *catalog.Change, t, old *catalog.Table) error {
	for _, fk := range t.ForeignKeys {
		if fk.RefTable == t.ID {
			continue
		}
		if old != nil && slices.ContainsFunc(old.ForeignKeys, func(x catalog.ForeignKey) bool { return x.Name == fk.Name }) {
			continue
		}
		p, ok := ch.Snapshot().TableByID(fk.RefTable)
		if !ok {
			return sqlerr.New(sqlerr.UndefinedTable, "the table foreign key %q references does not exist", fk.Name)
		}
		np := *p
		np.Version++
		ch.PutTable(&np)
	}
	return nil
}
