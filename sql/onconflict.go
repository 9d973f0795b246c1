package sql

import (
	"context"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// conflictWriter writes the rows of INSERT ... ON CONFLICT. For each
// proposed row it looks for an existing live row that conflicts on one of
// the arbiters (bind.Conflict), holding the locks that keep the answer
// true until the transaction ends: the primary key's row lock, or the
// unique index's value-tuple lock (indexMaintainer.uniqueOwner). Without a
// conflict the row is inserted as by INSERT; with one, DO NOTHING skips
// it and DO UPDATE updates the existing row as UPDATE would.
//
// As in PostgreSQL, one statement may not update a row twice, nor update
// a row it inserted (21000): the outcome would depend on the order of the
// proposed rows. DO NOTHING simply skips such rows.
type conflictWriter struct {
	w *rowWriter
	c *bind.Conflict
	// m updates the conflicting rows (its Modify holds the SET list).
	m  *modifier
	ec *exec.Context
	// touched holds the keys of the rows this statement inserted or
	// updated; nil when the statement proposes one row, which cannot meet
	// itself.
	touched map[string]bool
	// input is the buffer of the existing row followed by the proposed one.
	input []types.Value
	// The modifier's parts, allocated with the writer.
	mod  modifier
	mp   bind.Modify
	scan planner.Scan
}

func newConflictWriter(w *rowWriter, p *bind.Insert, ec *exec.Context, rows int) *conflictWriter {
	c := &conflictWriter{w: w, c: p.Conflict, ec: ec}
	c.scan = planner.Scan{Table: p.Table}
	c.mp = bind.Modify{Scan: &c.scan, Update: true, Assign: p.Conflict.Assign, Values: p.Conflict.Values, Computed: p.Computed}
	c.mod = modifier{p: &c.mp, tx: w.t, ec: ec, w: w}
	c.m = &c.mod
	if rows > 1 {
		c.touched = map[string]bool{}
	}
	return c
}

// touch records that the statement wrote row.
func (c *conflictWriter) touch(row []types.Value) {
	if c.touched != nil {
		c.touched[string(rowenc.EncodeKey(c.w.table, row))] = true
	}
}

// write inserts the proposed row or resolves its conflict. It returns the
// row written (inserted or updated), nil when nothing was written.
func (c *conflictWriter) write(ctx context.Context, row []types.Value, listed []bool) ([]types.Value, error) {
	w := c.w
	// Complete the row as rowWriter.write does, to know its key and its
	// index values before looking for a conflict.
	if err := w.coerce(row); err != nil {
		return nil, err
	}
	if err := w.compute(row, true); err != nil {
		return nil, err
	}
	if err := w.compute(row, false); err != nil {
		return nil, err
	}
	// A conflicting row found through a unique index may be deleted by
	// another transaction before it is locked; then look again.
	for attempt := 0; ; attempt++ {
		key, val, err := c.conflicting(ctx, row)
		if err != nil {
			return nil, err
		}
		if key == nil {
			if err := w.write(row, listed, bind.ModeInsert); err != nil {
				return nil, err
			}
			c.touch(row)
			return row, nil
		}
		w.peeked.key = nil // only an insert of the row takes the read
		if c.touched[string(key)] {
			if !c.c.Update {
				return nil, nil
			}
			return nil, &sqlerr.Error{Code: sqlerr.CardinalityViolation,
				Message: "ON CONFLICT DO UPDATE command cannot affect row a second time",
				Hint:    "Ensure that no rows proposed for insertion within the same command have duplicate constrained values."}
		}
		if !c.c.Update {
			return nil, nil
		}
		if val == nil {
			// Found through a unique index: lock the row, then read it.
			if err := w.t.Lock(ctx, key); err != nil {
				return nil, err
			}
			v, ok, err := w.t.Get(key)
			if err != nil {
				return nil, err
			}
			if !ok && attempt < 8 {
				continue
			}
			if !ok {
				return nil, sqlerr.New(sqlerr.SerializationFailure,
					"could not serialize access: the conflicting row of ON CONFLICT kept changing")
			}
			val = v
		}
		cur, err := rowenc.DecodeRow(w.table, key, val)
		if err != nil {
			return nil, err
		}
		c.input = append(append(c.input[:0], cur...), row...)
		input := c.input
		if c.c.Where != nil {
			v, err := c.c.Where.Eval(c.ec.Eval, input)
			if err != nil {
				return nil, err
			}
			if v.IsNull() || !v.Bool() {
				return nil, nil
			}
		}
		newRow, err := c.m.update(ctx, key, len(val), cur, input)
		if err != nil {
			return nil, err
		}
		c.touch(newRow)
		return newRow, nil
	}
}

// conflicting returns the key of a live row that conflicts with row on an
// arbiter, nil when none does. When the primary key decided, the row is
// locked and val is its stored value; through a unique index, val is nil.
func (c *conflictWriter) conflicting(ctx context.Context, row []types.Value) (key, val []byte, err error) {
	w := c.w
	for _, a := range c.c.Arbiters {
		if a == bind.PrimaryKeyArbiter {
			key := rowenc.EncodeKey(w.table, row)
			if err := w.t.Lock(ctx, key); err != nil {
				return nil, nil, err
			}
			val, present, err := w.t.Get(key)
			if err != nil {
				return nil, nil, err
			}
			// An insert of this row reads the key again: it may take this
			// read, made under the same lock.
			w.peek(key, val, present)
			if !present {
				continue
			}
			live, err := w.live(key, val)
			if err != nil {
				return nil, nil, err
			}
			if live {
				return key, val, nil
			}
			continue
		}
		m := w.indexes
		key, err := m.uniqueOwner(&w.table.Indexes[a], m.entries[a], row, nil)
		if err != nil || key != nil {
			return key, nil, err
		}
	}
	return nil, nil, nil
}
