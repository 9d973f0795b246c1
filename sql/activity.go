package sql

import (
	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/sql/pgcatalog"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/mvcc"
)

// SetBackend tells the session its entry in the server's registry of live
// sessions: pg_backend_pid answers its PID, and pg_stat_activity,
// pg_cancel_backend and pg_terminate_backend reach the other sessions of
// the registry through it. The server calls it once, after startup.
func (s *Session) SetBackend(b *activity.Backend) { s.backend = b }

// beginTxn starts a transaction that pg_locks attributes to the session.
func (s *Session) beginTxn() *txn.Txn {
	var t *txn.Txn
	if s.relOwner != 0 {
		// The cycle's table locks were taken before its transaction
		// began (lockOwner): one owner for both.
		t = s.e.txns.BeginAs(s.relOwner)
	} else {
		t = s.e.txns.Begin()
	}
	// Outside a block a transaction is one statement or one protocol
	// cycle and commits in one batch: its row locks stay in memory
	// (txn's one-phase transactions). BEGIN makes a block of it
	// (blockTxn).
	t.SetOnePhase()
	t.SetIsolation(s.isolation())
	if s.snap != nil {
		// A transaction begun by a statement reads at its snapshot.
		t.SetReadTimestamp(s.snap.Timestamp())
	}
	if s.backend != nil {
		t.SetPID(s.backend.PID)
	}
	return t
}

// blockTxn makes the session's transaction the one of a block (BEGIN): its
// locks become lock records, data that the block's later commit resolves.
func (s *Session) blockTxn() error { return s.txn.KeepLocksInStore() }

// lockRows are pg_locks' rows: every key lock held or awaited, as
// PostgreSQL shows row locks — a transaction holds ExclusiveLock on its
// own transaction ID and its rows ("tuple", on the row's table, in the mode
// of its strength: tupleLockMode); a
// session waiting for a row waits, ungranted, for a ShareLock on the
// holder's transaction ID.
func (s *Session) lockRows() ([]pgcatalog.LockRow, error) {
	var out []pgcatalog.LockRow
	txns := map[uint64]uint32{}
	locks, err := s.e.txns.Locks()
	if err != nil {
		return nil, err
	}
	for _, l := range locks {
		if _, isTable := txn.RelFromKey(l.Key); isTable {
			continue // a table lock's waiter: listed below
		}
		if !l.Granted {
			out = append(out, pgcatalog.LockRow{LockType: "transactionid", TransactionID: int64(l.Holder),
				PID: l.PID, Mode: "ShareLock", Virtual: l.Txn})
			continue
		}
		txns[l.Txn] = l.PID
		row := pgcatalog.LockRow{LockType: "tuple", PID: l.PID, Mode: tupleLockMode(l.Strength), Granted: true, Virtual: l.Txn}
		if id, _, err := storage.DecodeTablePrefix([]byte(l.Key)); err == nil {
			row.Relation = int64(id)
		}
		out = append(out, row)
	}
	// Table locks (tablelocks.go), held and awaited, as PostgreSQL's
	// "relation" rows.
	for _, l := range s.e.txns.Tables().List() {
		out = append(out, pgcatalog.LockRow{LockType: "relation", Relation: int64(l.Rel), PID: l.PID,
			Mode: l.Mode.String(), Granted: l.Granted, Virtual: l.Owner})
	}
	for id, pid := range txns {
		out = append(out, pgcatalog.LockRow{LockType: "transactionid", TransactionID: int64(id), PID: pid,
			Mode: "ExclusiveLock", Granted: true, Virtual: id})
	}
	return out, nil
}

// tupleLockMode is the lock mode PostgreSQL takes on a tuple for a row
// lock of strength s (tupleLockExtraInfo in its heapam.c).
func tupleLockMode(s mvcc.Strength) string {
	switch s {
	case mvcc.KeyShare:
		return "AccessShareLock"
	case mvcc.Share:
		return "RowShareLock"
	case mvcc.NoKeyUpdate:
		return "ExclusiveLock"
	}
	return "AccessExclusiveLock"
}
