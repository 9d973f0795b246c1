package sql

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// Secondary indexes (catalog.Index). An index's entries are a table of
// their own, catalog.Table.IndexTable: key <index id><index columns><the
// primary key columns not among them>, empty value, with a shard map of
// its own. So:
//
//   - every write of a row (INSERT, UPSERT, REPLACE, UPDATE, DELETE and the
//     TTL runner's erasure) deletes the old row's entry and puts the new
//     row's in the same transaction batch (indexMaintainer), atomically
//     with the row;
//   - a UNIQUE index locks the value tuple (the entry key without the
//     primary key part) before it looks for another live row with it, so
//     two writers of the same value serialise; a tuple with a NULL never
//     conflicts (NULLs are distinct, as in PostgreSQL);
//   - CREATE INDEX backfills the entries from the committed rows in the
//     DDL batch while holding the transaction manager's schema gate, and
//     every commit checks that the tables it wrote still have the indexes
//     it maintained (indexVersion), so that no write is missed by the
//     backfill: a transaction that wrote a table under another set of
//     indexes fails with 40001 and is retried by the client;
//   - reads use an index when the WHERE condition constrains its first
//     column (planner.ChooseIndex); exec reads the index ranges, then each
//     row by primary key (exec/indexscan.go), hiding rows expired by TTL.

// indexVersion describes the set of indexes of a table that writers
// maintain: their ids in order. A transaction records it per table it
// writes (txn.UseSchema) and the commit compares it with the catalog's.
func indexVersion(t *catalog.Table) string {
	// Built in a stack buffer: one allocation, as every write statement
	// records it.
	var buf [64]byte
	// The table's version too: ALTER TABLE changes what rows may hold.
	b := strconv.AppendInt(buf[:0], int64(t.Version), 10)
	b = append(b, ':')
	for i, ix := range t.Indexes {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, ix.ID, 10)
	}
	return string(b)
}

// checkSchemaVersions is the transaction manager's schema check.
func (e *Engine) checkSchemaVersions(versions map[uint64]string) error {
	snap := e.catalog.Snapshot()
	for id, v := range versions {
		t, ok := snap.TableByID(id)
		if !ok {
			// Dropped, or rewritten under a new id, since the statement
			// bound it: what it read may miss rows that now live in the
			// new table.
			return sqlerr.New(sqlerr.SerializationFailure,
				"could not serialize access: the table was dropped or rewritten by a concurrent schema change")
		}
		if e.ddlHolds.held(id) {
			return sqlerr.New(sqlerr.SerializationFailure,
				"could not serialize access: table %q has uncommitted schema changes of another transaction", t.Name)
		}
		if indexVersion(t) != v {
			return sqlerr.New(sqlerr.SerializationFailure,
				"could not serialize access: the indexes of table %q changed during the transaction", t.Name)
		}
	}
	return nil
}

// indexMaintainer keeps the indexes of one table in step with its rows
// inside one transaction.
type indexMaintainer struct {
	ctx     context.Context
	tx      *txn.Txn
	table   *catalog.Table
	entries []*catalog.Table // IndexTable of each index
	expiry  *ttl.Expiry
	// scratch row to decode conflicting entries into
	row []types.Value
}

func newIndexMaintainer(ctx context.Context, tx *txn.Txn, t *catalog.Table, expiry *ttl.Expiry) *indexMaintainer {
	tx.UseSchema(t.ID, indexVersion(t))
	if len(t.Indexes) == 0 {
		// Nothing to maintain: update is a no-op on nil, and a table
		// without indexes has no unique index for ON CONFLICT to ask.
		return nil
	}
	m := &indexMaintainer{ctx: ctx, tx: tx, table: t, expiry: expiry}
	for i := range t.Indexes {
		m.entries = append(m.entries, t.IndexTable(&t.Indexes[i]))
	}
	return m
}

// update replaces the entries of oldRow (nil: none) with those of newRow
// (nil: none) in every index whose entry changes, enforcing UNIQUE.
func (m *indexMaintainer) update(oldRow, newRow []types.Value) error {
	if m == nil {
		return nil
	}
	for i, et := range m.entries {
		var oldKey, newKey []byte
		if oldRow != nil {
			oldKey = rowenc.EncodeKey(et, oldRow)
		}
		if newRow != nil {
			newKey = rowenc.EncodeKey(et, newRow)
		}
		if oldKey != nil && newKey != nil && string(oldKey) == string(newKey) {
			continue
		}
		if oldKey != nil {
			if err := m.tx.DeleteRow(et.ID, oldKey, 0); err != nil {
				return err
			}
		}
		if newKey == nil {
			continue
		}
		if ix := &m.table.Indexes[i]; ix.Unique {
			if err := m.checkUnique(ix, et, newRow); err != nil {
				return err
			}
		}
		if err := m.tx.PutRow(et.ID, newKey, nil, false, 0); err != nil {
			return err
		}
	}
	return nil
}

// checkUnique fails with 23505 when another live row has row's values in
// every column of the unique index ix.
func (m *indexMaintainer) checkUnique(ix *catalog.Index, et *catalog.Table, row []types.Value) error {
	other, err := m.uniqueOwner(ix, et, row, rowenc.EncodeKey(m.table, row))
	if err != nil || other == nil {
		return err
	}
	names := make([]string, len(ix.Columns))
	texts := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		names[i] = m.table.Columns[c].Name
		texts[i] = row[c].Text()
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation,
		Message: fmt.Sprintf("duplicate key value violates unique constraint %q", ix.Name),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.",
			strings.Join(names, ", "), strings.Join(texts, ", "))}
}

// uniqueOwner returns the key of a live row other than the one at self
// (nil: none) that has row's values in every column of the unique index
// ix, or nil. It first locks the value tuple, so the answer holds until
// the transaction ends: two writers of the same value serialise.
func (m *indexMaintainer) uniqueOwner(ix *catalog.Index, et *catalog.Table, row []types.Value, self []byte) ([]byte, error) {
	vals := make([]types.Value, len(ix.Columns))
	for i, c := range ix.Columns {
		if row[c].IsNull() {
			return nil, nil // NULLs are distinct
		}
		vals[i] = row[c]
	}
	prefix := rowenc.EncodeKeyPrefix(et, vals)
	// The value tuple's lock serialises writers of the same value; it is
	// not a row key (rows and entries have whole keys, longer than this).
	if err := m.tx.Lock(m.ctx, append([]byte("ix:"), prefix...)); err != nil {
		return nil, err
	}
	it, err := m.tx.LatestReader().NewIter(storage.Span{Start: prefix, End: storage.PrefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	var others [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		others = append(others, append([]byte(nil), it.Key()...))
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return nil, err
	}
	if m.row == nil {
		m.row = make([]types.Value, len(m.table.Columns))
	}
	for _, k := range others {
		if err := rowenc.DecodeKey(et, k, m.row); err != nil {
			return nil, err
		}
		key := rowenc.EncodeKey(m.table, m.row)
		if string(key) == string(self) {
			continue
		}
		val, ok, err := m.tx.Get(key)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if m.expiry != nil {
			other, err := rowenc.DecodeRow(m.table, key, val)
			if err != nil {
				return nil, err
			}
			if m.expiry.Expired(other) {
				continue // expired rows count as absent
			}
		}
		return key, nil
	}
	return nil, nil
}

// createIndex runs as a cancelable job (sys.jobs) reporting its
// backfill's progress.
func (s *Session) createIndex(ctx context.Context, p *bind.CreateIndex) (Result, error) {
	var created uint64
	err := s.runJob(ctx, jobs.KindCreateIndex, true, func(ctx context.Context) error {
		return s.createIndexJob(ctx, p, &created)
	})
	if err != nil {
		return nil, err
	}
	s.recountIndex(created)
	return &tagResult{tag: "CREATE INDEX"}, nil
}

func (s *Session) createIndexJob(ctx context.Context, p *bind.CreateIndex, created *uint64) error {
	return s.indexDDL(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		snap := ch.Snapshot()
		t, ok := snap.Table(s.db.ID, p.Table)
		if !ok {
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", p.Table)
		}
		if err := ownTable(s.access(snap), t); err != nil {
			return err
		}
		if snap.RelationExists(s.db.ID, p.Spec.Name) {
			if p.IfNotExists {
				s.notice("NOTICE", sqlerr.DuplicateTable, "relation %q already exists, skipping", p.Spec.Name)
				return nil
			}
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", p.Spec.Name)
		}
		ix, err := p.Spec.Resolve(t)
		if err != nil {
			return err
		}
		ix.ID = ch.NewID()
		nt := *t
		nt.Indexes = append(append([]catalog.Index(nil), t.Indexes...), ix)
		if err := s.createIndexData(ctx, pch, b, &nt, &nt.Indexes[len(nt.Indexes)-1], true); err != nil {
			return err
		}
		ch.PutTable(&nt)
		*created = ix.ID
		return nil
	})
}

// indexDDL is ddl for changes that add or drop indexes of tables that may
// hold rows: it holds the transaction manager's schema gate, so that no
// write commits between the backfill's read and the change's install.
func (s *Session) indexDDL(fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	return s.withDDLLock(true, func() error { return s.ddl(fn) })
}

// indexDDLInto is indexDDL on a batch that already holds data changes.
func (s *Session) indexDDLInto(b *storage.Batch, fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	return s.withDDLLock(true, func() error { return s.ddlInto(b, fn) })
}

// createIndexData creates the shard map of index ix of t and, when
// backfill is set, writes the entries of every committed row into b,
// enforcing UNIQUE. The entries' statistics are counted after the commit
// (recountIndex), as the shard map starts empty.
func (s *Session) createIndexData(ctx context.Context, pch *partition.Change, b *storage.Batch, t *catalog.Table, ix *catalog.Index, backfill bool) error {
	et := t.IndexTable(ix)
	s.e.creating.Store(et.ID, et)
	defer s.e.creating.Delete(et.ID)
	if err := pch.Create(s.e.meta.With(b), et.ID, nil); err != nil {
		return err
	}
	if !backfill {
		return nil
	}
	if s.inTxnDDL() {
		// The entries of the transaction's own rows too, in its batch:
		// they commit with it.
		s.tddl.recount = append(s.tddl.recount, et.ID)
		return s.fillIndex(ctx, s.txn.Batch(), t, ix, et)
	}
	return s.fillIndex(ctx, b, t, ix, et)
}

// fillIndex writes the entries of every committed row of t into b.
func (s *Session) fillIndex(ctx context.Context, b *storage.Batch, t *catalog.Table, ix *catalog.Index, et *catalog.Table) error {
	it, err := s.ddlReader().NewIter(storage.TableSpan(t.ID))
	if err != nil {
		return err
	}
	defer it.Close()
	expiry := ttl.At(t, s.e.opts.Now())
	// seen maps a unique value tuple to the row that has it.
	var seen map[string]bool
	if ix.Unique {
		seen = map[string]bool{}
	}
	row := make([]types.Value, len(t.Columns))
	work := jobWorkFrom(ctx)
	work.expect(s.tableRows(t.ID))
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			work.advance(progressEvery)
		}
		for i := range row {
			row[i] = types.NullValue
		}
		if err := rowenc.DecodeKey(t, it.Key(), row); err != nil {
			return err
		}
		if err := rowenc.DecodeValue(t, it.Value(), row); err != nil {
			return err
		}
		if seen != nil && (expiry == nil || !expiry.Expired(row)) {
			vals := make([]types.Value, len(ix.Columns))
			hasNull := false
			for i, c := range ix.Columns {
				vals[i] = row[c]
				hasNull = hasNull || row[c].IsNull()
			}
			if !hasNull {
				k := string(rowenc.EncodeKeyPrefix(et, vals))
				if seen[k] {
					names := make([]string, len(ix.Columns))
					texts := make([]string, len(ix.Columns))
					for i, c := range ix.Columns {
						names[i], texts[i] = t.Columns[c].Name, vals[i].Text()
					}
					return &sqlerr.Error{Code: sqlerr.UniqueViolation,
						Message: fmt.Sprintf("could not create unique index %q", ix.Name),
						Detail: fmt.Sprintf("Key (%s)=(%s) is duplicated.",
							strings.Join(names, ", "), strings.Join(texts, ", "))}
				}
				seen[k] = true
			}
		}
		// Expired rows get entries too: they are still stored, and the TTL
		// runner deletes them with their entries.
		if err := b.Set(rowenc.EncodeKey(et, row), nil); err != nil {
			return err
		}
	}
	work.advance(int64(n % progressEvery))
	return it.Error()
}

// recountIndex counts the statistics of a new index's shards from its
// entries (zero id: nothing created). A failure leaves the statistics
// low until the next recount; the index itself is complete.
func (s *Session) recountIndex(id uint64) {
	if id == 0 {
		return
	}
	if s.inTxnBlock() && s.tddl != nil {
		return // after the commit (finishTxnDDL): the entries are in the transaction
	}
	if _, err := s.e.shards.Recount(id); err != nil {
		s.notice("WARNING", sqlerr.InternalError, "index statistics were not counted: %v", err)
	}
}

func (s *Session) dropIndex(ctx context.Context, p *bind.DropIndex) (Result, error) {
	err := s.indexDDL(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		t, ix, ok := ch.Snapshot().IndexByName(s.db.ID, p.Name)
		if ok && p.Table != "" && !strings.EqualFold(t.Name, p.Table) {
			ok = false
		}
		if !ok {
			if p.IfExists {
				s.notice("NOTICE", sqlerr.UndefinedObject, "index %q does not exist, skipping", p.Name)
				return nil
			}
			return sqlerr.New(sqlerr.UndefinedObject, "index %q does not exist", p.Name)
		}
		if !s.access(ch.Snapshot()).Owns(&t.Owned) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of index %s", ix.Name)
		}
		nt := *t
		nt.Indexes = nil
		for _, other := range t.Indexes {
			if other.ID != ix.ID {
				nt.Indexes = append(nt.Indexes, other)
			}
		}
		ch.PutTable(&nt)
		return s.dropIndexData(pch, b, ix.ID)
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "DROP INDEX"}, nil
}

// dropIndexData removes an index's entries and shard map in the DDL batch.
func (e *Engine) dropIndexData(pch *partition.Change, b *storage.Batch, id uint64) error {
	if err := pch.Drop(e.meta.With(b), id); err != nil {
		return err
	}
	return b.DeleteRange(storage.TableSpan(id))
}

// reindex runs as a cancelable job (sys.jobs) reporting its backfills'
// progress.
func (s *Session) reindex(ctx context.Context, p *bind.Reindex) (Result, error) {
	var rebuilt []uint64
	err := s.runJob(ctx, jobs.KindReindex, true, func(ctx context.Context) error {
		return s.reindexJob(ctx, p, &rebuilt)
	})
	if err != nil {
		return nil, err
	}
	for _, id := range rebuilt {
		s.recountIndex(id)
	}
	return &tagResult{tag: "REINDEX"}, nil
}

func (s *Session) reindexJob(ctx context.Context, p *bind.Reindex, rebuilt *[]uint64) error {
	return s.indexDDL(func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error {
		snap := ch.Snapshot()
		var t *catalog.Table
		var ids []uint64
		if p.Kind != "table" {
			if it, ix, ok := snap.IndexByName(s.db.ID, p.Name); ok {
				t, ids = it, []uint64{ix.ID}
			}
		}
		if t == nil && p.Kind != "index" {
			if tt, ok := snap.Table(s.db.ID, p.Name); ok {
				t = tt
				for _, ix := range tt.Indexes {
					ids = append(ids, ix.ID)
				}
			}
		}
		if t == nil {
			if p.Kind == "table" {
				return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", p.Name)
			}
			return sqlerr.New(sqlerr.UndefinedObject, "index %q does not exist", p.Name)
		}
		if err := ownTable(s.access(snap), t); err != nil {
			return err
		}
		// Each index gets a new id: its old entries and shard map are
		// dropped and a complete new set is written in the same batch.
		nt := *t
		nt.Indexes = append([]catalog.Index(nil), t.Indexes...)
		for i := range nt.Indexes {
			ix := &nt.Indexes[i]
			if !containsID(ids, ix.ID) {
				continue
			}
			// (Inside a transaction block the old entries are dropped
			// after its commit.)
			if err := s.dropIndexData(pch, b, ix.ID); err != nil {
				return err
			}
			ix.ID = ch.NewID()
			if err := s.createIndexData(ctx, pch, b, &nt, ix, true); err != nil {
				return err
			}
			*rebuilt = append(*rebuilt, ix.ID)
		}
		ch.PutTable(&nt)
		return nil
	})
}

func containsID(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
