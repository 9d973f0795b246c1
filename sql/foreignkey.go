package sql

import (
	"context"
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Foreign keys (catalog.ForeignKey, bind.FKGraph), kept in the writing
// transaction, whichever shards parent and child rows are on:
//
//   - a row that references a parent locks the parent's row key (the
//     per-key lock of sql/txn, held to commit, where FOR KEY SHARE would
//     do in PostgreSQL) and reads it: absent is 23503;
//   - a parent row deleted, or whose key changes, locks its own key (as
//     every write does) and then finds the rows that reference it: with
//     NO ACTION or RESTRICT any is 23503, CASCADE deletes or updates
//     them, SET NULL and SET DEFAULT update them — in the same
//     transaction, with their indexes, checks and own foreign keys.
//
// Both sides take the parent key's lock before they look, so a child
// insert and a parent delete serialise: the later one sees the earlier
// one's committed result, and no orphan can commit.

// fkWriter keeps the foreign keys of one statement's writes.
type fkWriter struct {
	ctx   context.Context
	tx    *txn.Txn
	ec    *expr.Context
	maint map[uint64]*indexMaintainer
	depth int
}

func newFKWriter(ctx context.Context, tx *txn.Txn, ec *expr.Context) *fkWriter {
	return &fkWriter{ctx: ctx, tx: tx, ec: ec, maint: map[uint64]*indexMaintainer{}}
}

// indexes returns the index maintainer of a table the cascades write.
func (f *fkWriter) indexes(t *catalog.Table) *indexMaintainer {
	m, ok := f.maint[t.ID]
	if !ok {
		m = newIndexMaintainer(f.ctx, f.tx, t, nil)
		f.maint[t.ID] = m
	}
	return m
}

// parentKey is the key of the row that row references through fk (nil
// when a referencing column is NULL: MATCH SIMPLE does not check it).
func parentKey(fk *catalog.ForeignKey, parent *catalog.Table, row []types.Value) ([]byte, error) {
	vals := make([]types.Value, len(fk.Columns))
	for k, c := range fk.Columns {
		if row[c].IsNull() {
			return nil, nil
		}
		v, err := types.Cast(row[c], parent.Columns[parent.PrimaryKey[k]].Type)
		if err != nil {
			return nil, err
		}
		vals[k] = v
	}
	return rowenc.EncodeKeyPrefix(parent, vals), nil
}

// checkParents fails with 23503 when row references a parent row that does
// not exist; old (nil for a new row) skips the keys whose columns did not
// change.
func (f *fkWriter) checkParents(ft *bind.FKTable, old, row []types.Value) error {
	for _, p := range ft.Parents {
		if old != nil && sameValues(p.FK.Columns, old, row) {
			continue
		}
		key, err := parentKey(p.FK, p.Parent, row)
		if err != nil || key == nil {
			return err
		}
		// FOR KEY SHARE, as PostgreSQL's foreign key check takes: the
		// parent cannot be deleted or change its key until the
		// transaction ends, but other children and updates of its other
		// columns go on.
		if err := f.tx.LockStrength(f.ctx, key, mvcc.KeyShare); err != nil {
			return err
		}
		if _, ok, err := f.tx.Get(key); err != nil {
			return err
		} else if !ok {
			names, texts := fkColumns(ft.Table, p.FK.Columns, row)
			return &sqlerr.Error{Code: sqlerr.ForeignKeyViolation,
				Message: fmt.Sprintf("insert or update on table %q violates foreign key constraint %q", ft.Table.Name, p.FK.Name),
				Detail:  fmt.Sprintf("Key (%s)=(%s) is not present in table %q.", names, texts, p.Parent.Name)}
		}
	}
	return nil
}

func sameValues(cols []int, a, b []types.Value) bool {
	for _, c := range cols {
		if a[c].IsNull() != b[c].IsNull() || !a[c].IsNull() && types.Compare(a[c], b[c]) != 0 {
			return false
		}
	}
	return true
}

func fkColumns(t *catalog.Table, cols []int, row []types.Value) (names, texts string) {
	n := make([]string, len(cols))
	v := make([]string, len(cols))
	for i, c := range cols {
		n[i] = t.Columns[c].Name
		if row[c].IsNull() {
			v[i] = "null"
		} else {
			v[i] = row[c].Text()
		}
	}
	return strings.Join(n, ", "), strings.Join(v, ", ")
}

// parentChanged applies the foreign keys that reference ft to the rows
// that reference old, a row of ft that is deleted (row nil) or whose key
// changes to row's.
func (f *fkWriter) parentChanged(ft *bind.FKTable, old, row []types.Value) error {
	if len(ft.Children) == 0 {
		return nil
	}
	if f.depth++; f.depth > 64 {
		return sqlerr.New(sqlerr.StatementTooComplex, "foreign key cascades nest more than 64 levels deep")
	}
	defer func() { f.depth-- }()
	t := ft.Table
	if row != nil && sameValues(t.PrimaryKey, old, row) {
		return nil
	}
	for _, c := range ft.Children {
		action := c.FK.OnDelete
		if row != nil {
			action = c.FK.OnUpdate
		}
		refs, err := f.referencing(c, t, old)
		if err != nil {
			return err
		}
		if len(refs) == 0 {
			continue
		}
		switch action {
		case 'a', 'r':
			names, texts := fkColumns(t, t.PrimaryKey, old)
			return &sqlerr.Error{Code: sqlerr.ForeignKeyViolation,
				Message: fmt.Sprintf("update or delete on table %q violates foreign key constraint %q on table %q", t.Name, c.FK.Name, c.Child.Table.Name),
				Detail:  fmt.Sprintf("Key (%s)=(%s) is still referenced from table %q.", names, texts, c.Child.Table.Name)}
		}
		for _, ref := range refs {
			if err := f.act(c, action, ref, row, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// childRow is a row that references a changed parent row.
type childRow struct {
	key []byte
	row []types.Value
	len int
}

// referencing finds the rows of c's table whose foreign key holds the key
// of parent row old (the transaction's own writes included).
func (f *fkWriter) referencing(c bind.FKChild, parent *catalog.Table, old []types.Value) ([]childRow, error) {
	ct := c.Child.Table
	want := make([]types.Value, len(c.FK.Columns))
	for k, pk := range parent.PrimaryKey {
		want[k] = old[pk]
	}
	if ix := fkIndex(ct, c.FK); ix != nil {
		return f.referencingByIndex(ct, ix, want)
	}
	it, err := f.tx.LatestReader().NewIter(storage.TableSpan(ct.ID))
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []childRow
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%1024 == 0 {
			if err := f.ctx.Err(); err != nil {
				return nil, err
			}
		}
		row, err := rowenc.DecodeRow(ct, it.Key(), it.Value())
		if err != nil {
			return nil, err
		}
		match := true
		for k, col := range c.FK.Columns {
			if row[col].IsNull() || types.Compare(row[col], want[k]) != 0 {
				match = false
				break
			}
		}
		if match {
			out = append(out, childRow{key: append([]byte(nil), it.Key()...), row: row, len: len(it.Value())})
		}
	}
	return out, it.Error()
}

// fkIndex returns an index of t whose first columns are fk's columns
// (in any order), or nil.
func fkIndex(t *catalog.Table, fk *catalog.ForeignKey) *catalog.Index {
	for i := range t.Indexes {
		ix := &t.Indexes[i]
		if len(ix.Columns) < len(fk.Columns) {
			continue
		}
		match := true
		for k, c := range fk.Columns {
			if ix.Columns[k] != c {
				match = false
				break
			}
		}
		if match {
			return ix
		}
	}
	return nil
}

// referencingByIndex is referencing through an index whose first columns
// are the foreign key's: the entries with the parent key's values, then
// their rows.
func (f *fkWriter) referencingByIndex(ct *catalog.Table, ix *catalog.Index, want []types.Value) ([]childRow, error) {
	et := ct.IndexTable(ix)
	vals := make([]types.Value, len(want))
	for k := range want {
		v, err := types.Cast(want[k], ct.Columns[ix.Columns[k]].Type)
		if err != nil {
			return nil, err
		}
		vals[k] = v
	}
	prefix := rowenc.EncodeKeyPrefix(et, vals)
	it, err := f.tx.LatestReader().NewIter(storage.Span{Start: prefix, End: storage.PrefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	scratch := make([]types.Value, len(ct.Columns))
	for ok := it.First(); ok; ok = it.Next() {
		clear(scratch)
		if err := rowenc.DecodeKey(et, it.Key(), scratch); err != nil {
			it.Close()
			return nil, err
		}
		keys = append(keys, rowenc.EncodeKey(ct, scratch))
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return nil, err
	}
	var out []childRow
	for _, key := range keys {
		val, ok, err := f.tx.Get(key)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		row, err := rowenc.DecodeRow(ct, key, val)
		if err != nil {
			return nil, err
		}
		out = append(out, childRow{key: key, row: row, len: len(val)})
	}
	return out, nil
}

// act applies CASCADE, SET NULL or SET DEFAULT to one referencing row.
func (f *fkWriter) act(c bind.FKChild, action byte, ref childRow, newParent []types.Value, parent *catalog.Table) error {
	ch := c.Child
	ct := ch.Table
	if err := f.tx.Lock(f.ctx, ref.key); err != nil {
		return err
	}
	val, ok, err := f.tx.Get(ref.key)
	if err != nil || !ok {
		return err // gone meanwhile
	}
	cur, err := rowenc.DecodeRow(ct, ref.key, val)
	if err != nil {
		return err
	}
	if action == 'c' && newParent == nil {
		if err := f.indexes(ct).update(cur, nil); err != nil {
			return err
		}
		if err := f.tx.DeleteRow(ct.ID, ref.key, len(val)); err != nil {
			return err
		}
		return f.parentChanged(ch, cur, nil)
	}
	next := append([]types.Value(nil), cur...)
	for k, col := range c.FK.Columns {
		switch action {
		case 'c':
			next[col] = newParent[parent.PrimaryKey[k]]
		case 'n':
			next[col] = types.NullValue
		case 'd':
			next[col] = types.NullValue
			if d := ch.Defaults[col]; d != nil {
				if next[col], err = d.Eval(f.ec, nil); err != nil {
					return err
				}
			}
		}
		if next[col], err = types.Cast(next[col], ct.Columns[col].Type); err != nil {
			return err
		}
	}
	return f.rewriteChild(ch, ref.key, len(val), cur, next)
}

// rewriteChild writes a referencing row changed by a cascade.
func (f *fkWriter) rewriteChild(ch *bind.FKTable, key []byte, oldLen int, cur, next []types.Value) error {
	ct := ch.Table
	for i, c := range ct.Columns {
		if next[i].IsNull() && c.NotNull {
			return &sqlerr.Error{Code: sqlerr.NotNullViolation,
				Message: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", c.Name, ct.Name),
				Detail:  "Failing row contains " + rowText(visibleColumns(ct, next)) + "."}
		}
	}
	if err := checkRow(f.ec, ct, ch.Checks, next); err != nil {
		return err
	}
	if err := f.checkParents(ch, cur, next); err != nil {
		return err
	}
	newKey := rowenc.EncodeKey(ct, next)
	moved := string(newKey) != string(key)
	present, oldNewLen := false, 0
	if moved {
		if err := f.tx.Lock(f.ctx, newKey); err != nil {
			return err
		}
		v, ok, err := f.tx.Get(newKey)
		if err != nil {
			return err
		}
		if ok {
			names, texts := fkColumns(ct, ct.PrimaryKey, next)
			return &sqlerr.Error{Code: sqlerr.UniqueViolation,
				Message: fmt.Sprintf("duplicate key value violates unique constraint %q", ct.Name+"_pkey"),
				Detail:  fmt.Sprintf("Key (%s)=(%s) already exists.", names, texts)}
		}
		present, oldNewLen = ok, len(v)
		if err := f.parentChanged(ch, cur, next); err != nil {
			return err
		}
	}
	if err := f.indexes(ct).update(cur, next); err != nil {
		return err
	}
	if moved {
		if err := f.tx.DeleteRow(ct.ID, key, oldLen); err != nil {
			return err
		}
	}
	if !moved {
		present, oldNewLen = true, oldLen
	}
	return f.tx.PutRow(ct.ID, newKey, rowenc.EncodeValue(nil, ct, next), present, oldNewLen)
}

// validateForeignKeys checks the stored rows of t against the foreign keys
// an ALTER TABLE adds (names).
func (s *Session) validateForeignKeys(t *catalog.Table, snap *catalog.Snapshot, names []string) error {
	for _, name := range names {
		var fk *catalog.ForeignKey
		for i := range t.ForeignKeys {
			if strings.EqualFold(t.ForeignKeys[i].Name, name) {
				fk = &t.ForeignKeys[i]
			}
		}
		if fk == nil {
			continue
		}
		parent := t
		if fk.RefTable != t.ID {
			p, ok := snap.TableByID(fk.RefTable)
			if !ok {
				return sqlerr.New(sqlerr.UndefinedTable, "the table foreign key %q references does not exist", name)
			}
			parent = p
		}
		it, err := s.ddlReader().NewIter(storage.TableSpan(t.ID))
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
			row, err := rowenc.DecodeRow(t, it.Key(), it.Value())
			if err != nil {
				it.Close()
				return err
			}
			key, err := parentKey(fk, parent, row)
			if err != nil {
				it.Close()
				return err
			}
			if key == nil {
				continue
			}
			if _, found, err := s.e.storage.Get(key); err != nil {
				it.Close()
				return err
			} else if !found {
				it.Close()
				names, texts := fkColumns(t, fk.Columns, row)
				return &sqlerr.Error{Code: sqlerr.ForeignKeyViolation,
					Message: fmt.Sprintf("insert or update on table %q violates foreign key constraint %q", t.Name, name),
					Detail:  fmt.Sprintf("Key (%s)=(%s) is not present in table %q.", names, texts, parent.Name)}
			}
		}
		err = it.Error()
		it.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
