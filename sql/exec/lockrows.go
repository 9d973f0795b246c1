package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// RowLocker locks one table row for a LockRows node (Context.LockRow): key
// is the row's primary key, strength and wait the locking clause's
// (planner.LockTarget). skip reports that the row is to be left out (SKIP
// LOCKED found it held); an error ends the statement (NOWAIT, lock_timeout,
// deadlock, or a row changed after the snapshot).
type RowLocker func(target *planner.LockTarget, key []byte) (skip bool, err error)

// lockRowsIter locks the target rows of each input row before passing it on.
type lockRowsIter struct {
	c   *Context
	in  Iter
	n   *planner.LockRows
	key []byte
}

func newLockRows(c *Context, n *planner.LockRows) (Iter, error) {
	if c.LockRow == nil {
		return nil, sqlerr.New(sqlerr.InternalError, "exec: a LockRows node without a row locker")
	}
	in, err := Build(c, n.Input)
	if err != nil {
		return nil, err
	}
	return &lockRowsIter{c: c, in: in, n: n}, nil
}

func (l *lockRowsIter) Next() (expr.Row, error) {
next:
	for {
		row, err := l.in.Next()
		if err != nil || row == nil {
			return nil, err
		}
		for i := range l.n.Targets {
			tg := &l.n.Targets[i]
			l.key = append(l.key[:0], storage.TablePrefix(tg.Table.ID)...)
			for _, c := range tg.KeyCols {
				l.key = rowenc.AppendKeyValue(l.key, row[c])
			}
			skip, err := l.c.LockRow(tg, l.key)
			if err != nil {
				return nil, err
			}
			if skip {
				continue next
			}
		}
		return row, nil
	}
}

func (l *lockRowsIter) Close() { l.in.Close() }
