package sql

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
)

func (s *Session) insert(ctx context.Context, p *bind.Insert, params []types.Value) (Result, error) {
	count := 0
	err := s.writeTxn(ctx, func(t *txn.Txn) error {
		ec := &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: t.Reader(), Shards: s.e.shards,
			RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.e.opts.MaxQueryMemory}
		// The source is read completely before writing, so INSERT INTO t
		// SELECT ... FROM t never reads its own writes.
		it, err := exec.Build(ec, p.Source)
		if err != nil {
			return err
		}
		rows, err := exec.Drain(ec, it)
		if err != nil {
			return err
		}
		w := &rowWriter{ctx: ctx, t: t, table: p.Table, computed: p.Computed, eval: ec.Eval,
			expiry: ttl.At(p.Table, ec.Now())}
		w.indexes = newIndexMaintainer(ctx, t, p.Table, w.expiry)
		for _, src := range rows {
			row := make([]types.Value, len(p.Table.Columns))
			listed := make([]bool, len(p.Table.Columns))
			for i, ti := range p.Target {
				row[ti] = src[i]
				listed[ti] = true
			}
			for i, d := range p.Defaults {
				if !listed[i] && d != nil {
					v, err := d.Eval(ec.Eval, nil)
					if err != nil {
						return err
					}
					row[i] = v
				}
			}
			if err := w.write(row, listed, p.Mode); err != nil {
				return err
			}
			count++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: fmt.Sprintf("INSERT 0 %d", count)}, nil
}

// rowWriter validates and writes rows of one table inside a transaction.
type rowWriter struct {
	ctx      context.Context
	t        *txn.Txn
	table    *catalog.Table
	computed []expr.Expr // per column; nil when the table has none
	eval     *expr.Context
	// expiry is the table's TTL at the statement's time (nil: none): an
	// expired row that the TTL runner has not deleted yet counts as absent.
	expiry *ttl.Expiry
	// indexes maintains the table's secondary indexes.
	indexes *indexMaintainer
	buf     []byte
}

// live reports whether the stored row key → val is visible: present and
// not expired under the table's TTL.
func (w *rowWriter) live(key, val []byte) (bool, error) {
	if w.expiry == nil {
		return true, nil
	}
	row, err := rowenc.DecodeRow(w.table, key, val)
	if err != nil {
		return false, err
	}
	return !w.expiry.Expired(row), nil
}

// compute fills the computed columns of row; keys selects the key columns
// (computed first, because the key locates the row) or the others.
func (w *rowWriter) compute(row []types.Value, keys bool) error {
	for i, e := range w.computed {
		if e == nil || w.table.IsKeyColumn(i) != keys {
			continue
		}
		v, err := e.Eval(w.eval, row)
		if err != nil {
			return err
		}
		if row[i], err = types.Cast(v, w.table.Columns[i].Type); err != nil {
			return err
		}
	}
	return nil
}

// coerce casts every value to its column's type.
func (w *rowWriter) coerce(row []types.Value) error {
	for i, c := range w.table.Columns {
		v, err := types.Cast(row[i], c.Type)
		if err != nil {
			return err
		}
		row[i] = v
	}
	return nil
}

// checkNotNull enforces NOT NULL on a complete row.
func (w *rowWriter) checkNotNull(row []types.Value) error {
	for i, c := range w.table.Columns {
		if row[i].IsNull() && c.NotNull {
			return &sqlerr.Error{Code: sqlerr.NotNullViolation,
				Message: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", c.Name, w.table.Name),
				Detail:  "Failing row contains " + rowText(row) + "."}
		}
	}
	return nil
}

// write inserts, upserts or replaces one row. listed marks the columns the
// statement supplied (UPSERT keeps the others of an existing row).
func (w *rowWriter) write(row []types.Value, listed []bool, mode bind.InsertMode) error {
	hidden := w.table.HiddenKeyColumn()
	for attempt := 0; ; attempt++ {
		if hidden >= 0 {
			// A table without PRIMARY KEY keys rows by a random 64-bit value,
			// which spreads inserts uniformly over the key space.
			row[hidden] = types.NewUint64(rand.Uint64())
		}
		if err := w.coerce(row); err != nil {
			return err
		}
		if err := w.compute(row, true); err != nil {
			return err
		}
		key := rowenc.EncodeKey(w.table, row)
		if err := w.t.Lock(w.ctx, key); err != nil {
			return err
		}
		// present: the key holds a row; exists: a live one. An expired row
		// is overwritten as if absent (the statistics still see a
		// replacement).
		old, present, err := w.t.Get(key)
		if err != nil {
			return err
		}
		exists := present
		if present {
			if exists, err = w.live(key, old); err != nil {
				return err
			}
		}
		// prev is the stored row (live or expired) whose index entries
		// this write replaces.
		var prev []types.Value
		if present && !(exists && hidden >= 0 && attempt < 8) && len(w.table.Indexes) > 0 {
			if prev, err = rowenc.DecodeRow(w.table, key, old); err != nil {
				return err
			}
		}
		if exists {
			switch {
			case hidden >= 0 && attempt < 8:
				continue // a generated key collided: draw another
			case mode == bind.ModeInsert:
				return w.duplicateKey(row)
			case mode == bind.ModeUpsert:
				cur, err := rowenc.DecodeRow(w.table, key, old)
				if err != nil {
					return err
				}
				for i := range row {
					if !listed[i] {
						row[i] = cur[i]
					}
				}
			}
		}
		if err := w.compute(row, false); err != nil {
			return err
		}
		if err := w.checkNotNull(row); err != nil {
			return err
		}
		if err := w.indexes.update(prev, row); err != nil {
			return err
		}
		w.buf = rowenc.EncodeValue(w.buf[:0], w.table, row)
		return w.t.PutRow(w.table.ID, key, w.buf, present, len(old))
	}
}

func (w *rowWriter) duplicateKey(row []types.Value) error {
	var vals []string
	for _, k := range w.table.PrimaryKey {
		vals = append(vals, row[k].Text())
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation,
		Message: fmt.Sprintf("duplicate key value violates unique constraint %q", w.table.Name+"_pkey"),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.",
			strings.Join(w.table.KeyColumnNames(), ", "), strings.Join(vals, ", "))}
}

func rowText(row []types.Value) string {
	parts := make([]string, len(row))
	for i, v := range row {
		if v.IsNull() {
			parts[i] = "null"
		} else {
			parts[i] = v.Text()
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func (s *Session) modify(ctx context.Context, p *bind.Modify, params []types.Value) (Result, error) {
	count := 0
	t := p.Scan.Table
	err := s.writeTxn(ctx, func(tx *txn.Txn) error {
		ec := &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: tx.Reader(), Shards: s.e.shards,
			RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.e.opts.MaxQueryMemory}
		if p.HasSubquery() {
			// Subqueries read the transaction as it was when the statement
			// started, never the rows this statement has already changed.
			view, err := s.e.storage.NewBatchCopy(tx.Batch())
			if err != nil {
				return err
			}
			defer view.Close()
			ec.SubReader = view
		}
		it, err := exec.Build(ec, p.Scan)
		if err != nil {
			return err
		}
		// Collect the keys first: writing while scanning would let an
		// UPDATE that moves a row forward in key order meet it again.
		var keys [][]byte
		for {
			row, err := it.Next()
			if err != nil {
				it.Close()
				return err
			}
			if row == nil {
				break
			}
			keys = append(keys, rowenc.EncodeKey(t, row))
		}
		it.Close()
		w := &rowWriter{ctx: ctx, t: tx, table: t, computed: p.Computed, eval: ec.Eval,
			expiry: ttl.At(t, ec.Now())}
		w.indexes = newIndexMaintainer(ctx, tx, t, w.expiry)
		for _, key := range keys {
			if err := tx.Lock(ctx, key); err != nil {
				return err
			}
			val, ok, err := tx.Get(key)
			if err != nil {
				return err
			}
			if !ok {
				continue // deleted meanwhile
			}
			row, err := rowenc.DecodeRow(t, key, val)
			if err != nil {
				return err
			}
			if w.expiry != nil && w.expiry.Expired(row) {
				continue // expired: as good as deleted
			}
			if p.Scan.Filter != nil {
				v, err := p.Scan.Filter.Eval(ec.Eval, row)
				if err != nil {
					return err
				}
				if v.IsNull() || !v.Bool() {
					continue // changed meanwhile and no longer matches
				}
			}
			if !p.Update {
				if err := w.indexes.update(row, nil); err != nil {
					return err
				}
				if err := tx.DeleteRow(t.ID, key, len(val)); err != nil {
					return err
				}
				count++
				continue
			}
			newRow := append([]types.Value(nil), row...)
			for i, col := range p.Assign {
				v, err := p.Values[i].Eval(ec.Eval, row)
				if err != nil {
					return err
				}
				newRow[col] = v
			}
			if err := w.coerce(newRow); err != nil {
				return err
			}
			if err := w.compute(newRow, true); err != nil {
				return err
			}
			if err := w.compute(newRow, false); err != nil {
				return err
			}
			if err := w.checkNotNull(newRow); err != nil {
				return err
			}
			newKey := rowenc.EncodeKey(t, newRow)
			if string(newKey) != string(key) {
				// The primary key changed: the row moves.
				if err := tx.Lock(ctx, newKey); err != nil {
					return err
				}
				old, present, err := tx.Get(newKey)
				if err != nil {
					return err
				}
				if present {
					if live, err := w.live(newKey, old); err != nil {
						return err
					} else if live {
						return w.duplicateKey(newRow)
					}
					// An expired row is overwritten: its entries go too.
					if len(t.Indexes) > 0 {
						dead, err := rowenc.DecodeRow(t, newKey, old)
						if err != nil {
							return err
						}
						if err := w.indexes.update(dead, nil); err != nil {
							return err
						}
					}
				}
				if err := w.indexes.update(row, newRow); err != nil {
					return err
				}
				if err := tx.DeleteRow(t.ID, key, len(val)); err != nil {
					return err
				}
				if err := tx.PutRow(t.ID, newKey, rowenc.EncodeValue(w.buf[:0], t, newRow), present, len(old)); err != nil {
					return err
				}
				count++
				continue
			}
			if err := w.indexes.update(row, newRow); err != nil {
				return err
			}
			w.buf = rowenc.EncodeValue(w.buf[:0], t, newRow)
			if err := tx.PutRow(t.ID, newKey, w.buf, true, len(val)); err != nil {
				return err
			}
			count++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	verb := "DELETE"
	if p.Update {
		verb = "UPDATE"
	}
	return &tagResult{tag: fmt.Sprintf("%s %d", verb, count)}, nil
}
