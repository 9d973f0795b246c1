package sql

import (
	"context"
	"errors"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// Row-locking reads: SELECT ... FOR UPDATE | FOR NO KEY UPDATE | FOR SHARE
// | FOR KEY SHARE [OF t] [NOWAIT | SKIP LOCKED].
//
// The bound query gets a planner.LockRows node where PostgreSQL puts its
// LockRows: below the LIMIT, above the ORDER BY (lockingPlan). The primary
// key columns of every locked table are carried up to it as hidden
// columns. For each row that reaches it, the node locks the locked tables'
// rows in the transaction's lock table (txn.Txn.LockStrength, PostgreSQL's
// four strengths and their conflicts), then checks that no transaction
// committed a newer version of the row after the statement's snapshot:
//
//   - READ COMMITTED: if one did, the statement runs again on a new snapshot
//     (with the locks it holds), so a row that no longer matches its WHERE,
//     or was deleted, is left out and a changed row is returned as it is
//     now. PostgreSQL re-checks just that row (EvalPlanQual); running the
//     statement again gives the same answer for the row, and every other row
//     as of a later snapshot, which READ COMMITTED allows. The rows are
//     therefore collected before the first goes to the client.
//   - REPEATABLE READ: 40001, could not serialize access due to concurrent
//     update.
//
// NOWAIT fails with 55P03 when a row is held in a conflicting strength,
// SKIP LOCKED leaves the row out; otherwise the statement waits, under
// lock_timeout (55P03), statement_timeout and deadlock detection (40P01).
// The locks last until the transaction ends, or until ROLLBACK TO a
// savepoint taken before them; outside a transaction block, until the
// statement ends.

// errLockedRowChanged makes a READ COMMITTED locking read run again on a
// new snapshot: a row it locked was changed after its snapshot.
var errLockedRowChanged = errors.New("sql: a locked row changed after the statement's snapshot")

// runLockingSelect runs a SELECT with locking clauses.
func (s *Session) runLockingSelect(ctx context.Context, p *bind.Select, params []types.Value) (Result, error) {
	node, err := lockingPlan(p.Node, p.Locking)
	if err != nil {
		return nil, err
	}
	var rows [][]types.Value
	err = s.writeTxn(ctx, func(t *txn.Txn) error {
		for {
			rows = rows[:0]
			err := s.lockingPass(ctx, t, node, params, &rows)
			if !errors.Is(err, errLockedRowChanged) {
				return err
			}
			// READ COMMITTED: again, on a snapshot that has the change.
			if err := s.takeSnapshot(false); err != nil {
				return err
			}
			t.SetReadTimestamp(s.snap.Timestamp())
		}
	})
	if err != nil {
		return nil, err
	}
	cols := resultColumns(p.Columns())
	visible := len(cols)
	for i, r := range rows {
		rows[i] = r[:visible]
	}
	return staticRows(cols, rows, "SELECT"), nil
}

// lockingPass runs the locking query once on the transaction's snapshot,
// appending its rows to out.
func (s *Session) lockingPass(ctx context.Context, t *txn.Txn, node planner.Node, params []types.Value, out *[][]types.Value) error {
	reader := t.Reader()
	if s.readView != nil {
		reader = s.readView
	}
	ec := &exec.Context{Ctx: ctx, Eval: s.evalContext(ctx, params), Reader: reader,
		Shards: s.e.shards, RangeLimit: s.vars.RangeExpansionLimit(), MemLimit: s.memLimit(),
		Scans: &s.e.tableActivity}
	ec.LockRow = func(tg *planner.LockTarget, key []byte) (bool, error) {
		return lockRow(ctx, t, tg, key)
	}
	it, err := exec.Build(ec, node)
	if err != nil {
		return err
	}
	rows, err := exec.Drain(ec, it)
	if err != nil {
		return err
	}
	for _, r := range rows {
		*out = append(*out, r)
	}
	return nil
}

// lockRow locks one row for a locking read and checks it against the
// statement's snapshot.
func lockRow(ctx context.Context, t *txn.Txn, tg *planner.LockTarget, key []byte) (skip bool, err error) {
	strength := mvcc.Strength(tg.Strength)
	switch parser.LockWait(tg.Wait) {
	case parser.LockWaitBlock:
		err = t.LockStrength(ctx, key, strength)
	default:
		err = t.TryLockStrength(key, strength)
		if errors.Is(err, txn.ErrLockNotAvailable) {
			if parser.LockWait(tg.Wait) == parser.LockSkipLocked {
				return true, nil
			}
			return false, sqlerr.New(sqlerr.LockNotAvailable, "could not obtain lock on row in relation \"%s\"", tg.Table.Name)
		}
	}
	if err != nil {
		return false, err
	}
	changed, err := t.ChangedSince(key)
	if err != nil || !changed {
		return false, err
	}
	if t.SnapshotFixed() {
		return false, txn.ErrConcurrentUpdate()
	}
	return false, errLockedRowChanged
}

// lockingPlan returns the plan of a locking query: node with a LockRows
// node for locks under its LIMIT (or on top), the locked tables' key
// columns carried up to it. The bound plan is not changed (a prepared
// statement runs it again): the nodes on the way are copied.
func lockingPlan(node planner.Node, locks []bind.RowLock) (planner.Node, error) {
	targets := map[uint64]*bind.RowLock{}
	for i := range locks {
		l := &locks[i]
		if prev, ok := targets[l.Table.ID]; ok {
			// Two names of one table (a self-join): a scan of it cannot
			// tell which name it reads, so it takes the stronger lock.
			merged := *prev
			merged.Strength = max(prev.Strength, l.Strength)
			merged.Wait = max(prev.Wait, l.Wait)
			targets[l.Table.ID] = &merged
			continue
		}
		targets[l.Table.ID] = l
	}
	c := &carrier{targets: targets}
	return c.place(node)
}

type carrier struct {
	targets map[uint64]*bind.RowLock
}

// place puts the LockRows node below the query's LIMIT, and on top when
// there is none.
func (c *carrier) place(n planner.Node) (planner.Node, error) {
	switch n := n.(type) {
	case *planner.Limit:
		in, err := c.lockRows(n.Input)
		if err != nil {
			return nil, err
		}
		cp := *n
		cp.Input = in
		return &cp, nil
	case *planner.Project:
		if !hasTopLimit(n.Input) {
			break
		}
		in, err := c.place(n.Input)
		if err != nil {
			return nil, err
		}
		cp := *n
		cp.Input = in
		return &cp, nil
	}
	return c.lockRows(n)
}

func hasTopLimit(n planner.Node) bool {
	for {
		switch x := n.(type) {
		case *planner.Limit:
			return true
		case *planner.Project:
			n = x.Input
		default:
			return false
		}
	}
}

// lockRows puts a LockRows node over n.
func (c *carrier) lockRows(n planner.Node) (planner.Node, error) {
	carried, found, err := c.carry(n)
	if err != nil {
		return nil, err
	}
	lr := &planner.LockRows{Input: carried}
	for _, f := range found {
		lr.Targets = append(lr.Targets, planner.LockTarget{Table: f.table, KeyCols: f.cols,
			Strength: uint8(lockStrength(f.lock.Strength)), Wait: uint8(f.lock.Wait)})
	}
	return lr, nil
}

// lockStrength maps a locking clause to its row lock strength.
func lockStrength(s parser.LockStrength) mvcc.Strength {
	switch s {
	case parser.LockForKeyShare:
		return mvcc.KeyShare
	case parser.LockForShare:
		return mvcc.Share
	case parser.LockForNoKeyUpdate:
		return mvcc.NoKeyUpdate
	}
	return mvcc.Update
}

// carried is a locked table's scan found under the LockRows node: its key
// columns sit at cols of the node's input rows.
type carried struct {
	table *catalog.Table
	lock  *bind.RowLock
	cols  []int
}

// carry returns n rewritten so that its rows end with the key columns of
// every locked table scanned under it (where they are not already part of
// its rows), and where they are.
func (c *carrier) carry(n planner.Node) (planner.Node, []carried, error) {
	switch n := n.(type) {
	case *planner.Scan:
		l, ok := c.targets[n.Table.ID]
		if !ok {
			return n, nil, nil
		}
		// A scan's rows are the table's columns in catalog order.
		return n, []carried{{table: n.Table, lock: l, cols: append([]int(nil), n.Table.PrimaryKey...)}}, nil
	case *planner.Filter:
		in, found, err := c.carry(n.Input)
		if err != nil || len(found) == 0 {
			return n, found, err
		}
		cp := *n
		cp.Input = in
		return &cp, found, nil
	case *planner.Sort:
		in, found, err := c.carry(n.Input)
		if err != nil || len(found) == 0 {
			return n, found, err
		}
		cp := *n
		cp.Input = in
		return &cp, found, nil
	case *planner.Limit:
		in, found, err := c.carry(n.Input)
		if err != nil || len(found) == 0 {
			return n, found, err
		}
		cp := *n
		cp.Input = in
		return &cp, found, nil
	case *planner.Project:
		in, found, err := c.carry(n.Input)
		if err != nil || len(found) == 0 {
			return n, found, err
		}
		cp := *n
		cp.Exprs = append([]expr.Expr(nil), n.Exprs...)
		cp.Cols = append([]planner.Column(nil), n.Cols...)
		inCols := in.Columns()
		for i := range found {
			f := &found[i]
			for j, src := range f.cols {
				f.cols[j] = len(cp.Exprs)
				cp.Exprs = append(cp.Exprs, &expr.ColumnRef{Index: src, Name: inCols[src].Name, Typ: inCols[src].Type})
				col := inCols[src]
				col.Hidden = true
				cp.Cols = append(cp.Cols, col)
			}
		}
		cp.Input = in
		return &cp, found, nil
	case *planner.Join:
		return c.carryJoin(n)
	}
	if c.scansTarget(n) {
		return nil, nil, lockShapeNotSupported()
	}
	return n, nil, nil
}

// scansTarget reports whether a locked table is scanned under n.
func (c *carrier) scansTarget(n planner.Node) bool {
	if s, ok := n.(*planner.Scan); ok {
		_, hit := c.targets[s.Table.ID]
		return hit
	}
	for _, ch := range n.Children() {
		if c.scansTarget(ch) {
			return true
		}
	}
	return false
}

func lockShapeNotSupported() error {
	return sqlerr.NotSupported("a locking clause on a table read through LATERAL or a set operation")
}

// rowLockStrength is the row lock an UPDATE or DELETE takes on each row it
// changes, as PostgreSQL chooses it: FOR NO KEY UPDATE for an UPDATE that
// assigns no key column and no column of a unique index (so FOR KEY SHARE
// readers, such as foreign key checks, do not block it), FOR UPDATE
// otherwise.
func (m *modifier) rowLockStrength() mvcc.Strength {
	if !m.p.Update || m.keyMayChange() {
		return mvcc.Update
	}
	t := m.p.Scan.Table
	for _, col := range m.p.Assign {
		for _, ix := range t.Indexes {
			if !ix.Unique {
				continue
			}
			for _, c := range ix.Columns {
				if c == col {
					return mvcc.Update
				}
			}
		}
	}
	return mvcc.NoKeyUpdate
}

// carryJoin carries key columns through a join. A join's row is its left
// row followed by its right row, so key columns the right side adds go at
// the end; those the left side adds would come between the two, so the
// join's condition is rewritten for the wider left row and a Project over
// the join puts the columns back in the join's order, the added ones last.
func (c *carrier) carryJoin(n *planner.Join) (planner.Node, []carried, error) {
	left, lfound, err := c.carry(n.Left)
	if err != nil {
		return nil, nil, err
	}
	right, rfound, err := c.carry(n.Right)
	if err != nil {
		return nil, nil, err
	}
	if len(lfound)+len(rfound) == 0 {
		return n, nil, nil
	}
	lw, rw := len(n.Left.Columns()), len(n.Right.Columns())
	lx := len(left.Columns()) - lw // key columns the left side added
	cp := *n
	cp.Left, cp.Right = left, right
	cp.Cols = append(append([]planner.Column(nil), left.Columns()...), right.Columns()...)
	if lx == 0 {
		for i := range rfound {
			for j := range rfound[i].cols {
				rfound[i].cols[j] += lw
			}
		}
		return &cp, append(lfound, rfound...), nil
	}
	if cp.Cond != nil {
		// Over the join's row: right columns move up by lx.
		cp.Cond, err = expr.Transform(n.Cond, func(x expr.Expr) (expr.Expr, error) {
			if r, ok := x.(*expr.ColumnRef); ok && r.Index >= lw {
				return &expr.ColumnRef{Index: r.Index + lx, Name: r.Name, Typ: r.Typ}, nil
			}
			return x, nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	// The joined row is left (lw), left's added (lx), right (rw), right's
	// added; the Project gives left, right, left's added, right's added.
	var order []int
	for i := 0; i < lw; i++ {
		order = append(order, i)
	}
	for i := 0; i < rw; i++ {
		order = append(order, lw+lx+i)
	}
	for i := 0; i < lx; i++ {
		order = append(order, lw+i)
	}
	for i := lw + lx + rw; i < len(cp.Cols); i++ {
		order = append(order, i)
	}
	at := make([]int, len(order)) // at[joined index] = projected index
	proj := &planner.Project{Input: &cp}
	for out, in := range order {
		at[in] = out
		col := cp.Cols[in]
		proj.Exprs = append(proj.Exprs, &expr.ColumnRef{Index: in, Name: col.Name, Typ: col.Type})
		proj.Cols = append(proj.Cols, col)
	}
	for i := range lfound {
		for j, x := range lfound[i].cols {
			lfound[i].cols[j] = at[x]
		}
	}
	for i := range rfound {
		for j, x := range rfound[i].cols {
			rfound[i].cols[j] = at[lw+lx+x]
		}
	}
	return proj, append(lfound, rfound...), nil
}
