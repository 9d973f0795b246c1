package sql

import (
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// COPY ... FREEZE: PostgreSQL writes the rows of such a COPY already
// frozen, which it allows only for a table created or truncated in the
// current subtransaction (no other transaction can see the table's rows
// then). PivotDB keeps that rule, so a script that works here works on
// PostgreSQL; the option itself changes nothing, since PivotDB's versions
// carry timestamps, not transaction IDs that would need freezing before a
// wraparound. A NOTICE says so, as for fillfactor.
//
// The session remembers the tables created or truncated in its
// transaction (by table ID: TRUNCATE gives the table a new one) with the
// savepoint depth they were made at: ROLLBACK TO forgets the deeper ones,
// RELEASE hands them to the enclosing level, the end of the transaction
// forgets them all.

// noteFreshTable records that the transaction created or truncated table
// id.
func (s *Session) noteFreshTable(id uint64) {
	if !s.inBlock() && !s.implicit {
		return // the statement's own transaction has ended
	}
	if s.fresh == nil {
		s.fresh = map[uint64]int{}
	}
	s.fresh[id] = len(s.relMarks)
}

// checkFreeze is the rule for COPY t FROM ... FREEZE.
func (s *Session) checkFreeze(t *catalog.Table) error {
	if len(s.cursors) > 0 {
		return sqlerr.New(sqlerr.InvalidTransactionState, "cannot perform COPY FREEZE because of prior transaction activity")
	}
	if depth, ok := s.fresh[t.ID]; !ok || depth != len(s.relMarks) {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
			"cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction")
	}
	s.notice("NOTICE", sqlerr.SuccessfulCompletion,
		"COPY FREEZE is accepted but changes nothing: PivotDB's row versions carry timestamps, not transaction IDs that would need freezing")
	return nil
}

// freshAfterSavepoint adjusts the record to ROLLBACK TO (release false)
// or RELEASE (true) of the savepoint at index i.
func (s *Session) freshAfterSavepoint(i int, release bool) {
	for id, d := range s.fresh {
		switch {
		case release && d > i:
			s.fresh[id] = i
		case !release && d > i:
			delete(s.fresh, id)
		}
	}
}
