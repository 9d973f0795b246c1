package sql

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Historical reads and read holds (issue 16, items 6 and 7).
//
// AS OF SYSTEM TIME, as CockroachDB has it:
//
//   - SELECT ... AS OF SYSTEM TIME x reads every shard, index and join of
//     the statement at x (one storage.View, as any statement's snapshot).
//     Inside a transaction it must name the transaction's own read
//     timestamp (CockroachDB's "inconsistent AS OF SYSTEM TIME timestamp",
//     0A000).
//   - BEGIN [READ ONLY] AS OF SYSTEM TIME x (also SET TRANSACTION ... before
//     the first query) makes every statement of the block read at x; the
//     block is read-only (writes: 25006), READ WRITE with it is 42601.
//   - x in the future is refused when it is resolved (bind.AsOf.Timestamp);
//     a read of a shard whose GC threshold is above x fails when it opens
//     (storage.BelowGCThresholdError, CockroachDB's "batch timestamp ...
//     must be after replica GC threshold ...").
//   - now() and the TTL cutoff of such a statement are x: rows show as
//     they were, TTL included.
//   - The schema is the one of x when the catalog knows it (asOfCatalog:
//     the catalog's generations in memory or its history on disk, which
//     reach back to the retention window's start or to the first start of
//     a data directory written before the history existed), for a SELECT
//     and for every statement of a block AS OF SYSTEM TIME: tables created
//     since do not exist (42P01), columns and indexes are those of then.
//     A table or index dropped, truncated or rewritten since is read from
//     the rows the drop kept until its GC job removes them (dropgc.go),
//     then refused with the GC-threshold error. Otherwise (x before
//     the history's start or below its GC threshold) the schema is
//     today's and the schema times (storage/schematime.go) refuse a table
//     whose definition changed after x (schemaChangedError).
//
// Read holds: a session holds the oldest read timestamp its open reads may
// still use (storage.ReadHold), so GC never collects a version they need —
// one statement's outside a transaction, the first snapshot's (or the AS
// OF time's) inside one until it ends.

// asOfTimestamp resolves a bound AS OF SYSTEM TIME clause at the clock's
// time now (relative forms count from it; a time after it is refused).
func (s *Session) asOfTimestamp(a *bind.AsOf) (hlc.Timestamp, error) {
	now, err := s.e.storage.Clock().Now()
	if err != nil {
		return hlc.Timestamp{}, err
	}
	t := time.Unix(0, now.WallTime)
	if a.FollowerRead {
		// The cluster's closed target decides how far back (follower.go).
		fr := *a
		fr.Offset = -s.e.opts.FollowerReads.Offset()
		a = &fr
	}
	wall, logical, err := a.Timestamp(t, t)
	if err != nil {
		return hlc.Timestamp{}, err
	}
	return hlc.Timestamp{WallTime: wall, Logical: logical}, nil
}

// prepareAsOf resolves the AS OF SYSTEM TIME clause of a statement about to
// run (Execute, before its snapshot): s.stmtAsOf is set for a SELECT that
// has one, with CockroachDB's errors for one inside a transaction.
func (s *Session) prepareAsOf(st bind.Statement) error {
	s.stmtAsOf = nil
	sel, ok := st.(*bind.Select)
	if !ok || sel.AsOf == nil {
		return nil
	}
	if s.asOfBound != nil && s.txnAsOf == nil {
		s.stmtAsOf = s.asOfBound
		return nil
	}
	ts, err := s.asOfTimestamp(sel.AsOf)
	if err != nil {
		return err
	}
	if s.txn != nil {
		// The transaction reads at one timestamp; a statement may only
		// name it again.
		expected := s.txn.ReadTimestamp()
		if s.txnAsOf != nil {
			expected = *s.txnAsOf
		}
		if ts != expected {
			e := sqlerr.New(sqlerr.FeatureNotSupported, "inconsistent AS OF SYSTEM TIME timestamp; expected: %s, got: %s",
				expected, ts)
			if s.inBlock() {
				e.Hint = "try SET TRANSACTION AS OF SYSTEM TIME"
			}
			return e
		}
	}
	s.stmtAsOf = &ts
	return nil
}

// asOfCatalog makes a SELECT ... AS OF SYSTEM TIME (or any statement of a
// block AS OF SYSTEM TIME) about to be bound bind against the catalog of
// its time, when the catalog knows it exactly (catalog.Catalog.At: its
// generations in memory or its history on disk): the statement sees the
// tables, columns and indexes of then, and reads them through a plain
// view. When it does not, the
// statement binds against today's schema and reads through a historical
// view (storage.View.Historical), which refuses tables whose definition
// changed since (schemaChangedError). Inside another transaction (where
// the AS OF time must be the transaction's own) the statement keeps the
// transaction's catalog. The time is resolved once, here, and
// prepareAsOf keeps it: a relative time resolved again could fall after
// a schema change the binding did not see.
func (s *Session) asOfCatalog(st *parser.Statement) {
	s.asOfBound = nil
	if s.txnAsOf != nil {
		// A block AS OF SYSTEM TIME: every statement binds against the
		// catalog of the block's time (a SELECT naming another time
		// is refused by prepareAsOf). Read-only, so it has no pending
		// schema change.
		if cat, exact := s.asOfCatalogAt(*s.txnAsOf); exact {
			ts := *s.txnAsOf
			s.stmtCatalog = cat
			s.asOfBound = &ts
		}
		return
	}
	// st.AsOf first: building the binder's Env for every statement cost
	// a dozen allocations of each point SELECT (issue 23).
	if st.AsOf == nil || s.txn != nil || (s.tddl != nil && s.tddl.pending != nil) {
		return
	}
	a := bind.StatementAsOf(st, s.bindEnv())
	if a == nil {
		return
	}
	ts, err := s.asOfTimestamp(a)
	if err != nil {
		return // prepareAsOf reports it
	}
	cat, exact := s.asOfCatalogAt(ts)
	if !exact {
		return
	}
	s.stmtCatalog = cat
	s.asOfBound = &ts
}

// currentCatalog is bind.Env.Current for a statement bound against snap:
// the newest committed catalog when snap is the catalog of an AS OF
// SYSTEM TIME, nil otherwise.
func (s *Session) currentCatalog(snap *catalog.Snapshot) *catalog.Snapshot {
	if s.asOfBound == nil {
		return nil
	}
	if cur := s.e.catalog.Snapshot(); cur != snap {
		return cur
	}
	return nil
}

// asOfSnapshot is takeSnapshot's historical case: the statement's or the
// block's AS OF SYSTEM TIME. ok is false when neither applies.
func (s *Session) asOfSnapshot(fix bool) (ok bool, err error) {
	var ts hlc.Timestamp
	switch {
	case s.txnAsOf != nil:
		ts = *s.txnAsOf
	case s.stmtAsOf != nil:
		ts = *s.stmtAsOf
	default:
		return false, nil
	}
	if err := s.holdReads(ts); err != nil {
		return true, err
	}
	// Commits still landing are below the clock's now, and so perhaps
	// at or below ts: wait for them (on a follower, for the closed
	// timestamp: follower.go).
	if err := s.waitReadable(ts); err != nil {
		return true, err
	}
	s.snap = s.e.storage.At(ts)
	if s.asOfBound == nil {
		s.snap = s.snap.Historical()
	} else {
		// The catalog of then may name tables and indexes dropped (or
		// truncated, rewritten) since: their rows are kept until their
		// GC job removes them (dropgc.go).
		s.snap = s.snap.CheckingTables(func(id uint64) error {
			if s.e.follower() {
				return s.followerTableCheck(id, ts) // follower.go
			}
			if s.e.shards.Map(id) == nil {
				return s.e.dropgc.check(id, ts)
			}
			return nil
		})
	}
	s.snapTime = time.Unix(0, ts.WallTime)
	if s.txn != nil {
		s.txn.SetReadTimestamp(ts)
		if fix {
			s.txn.SetIsolation(s.isolation())
			s.txn.StartStatement()
		}
	}
	return true, nil
}

// holdReads makes the session hold reads at ts (zero: a read timestamp
// storage.HoldReads takes and holds; holdReadTimestamp uses it). Inside a transaction the oldest
// hold is kept until it ends; outside one each statement replaces it.
func (s *Session) holdReads(ts hlc.Timestamp) error {
	if s.hold != nil {
		if s.txn != nil && (ts.IsEmpty() || s.hold.Timestamp().LessEq(ts)) {
			return nil
		}
		s.hold.Release()
		s.hold = nil
	}
	h, err := s.e.storage.HoldReads(ts)
	if err != nil {
		return err
	}
	s.hold = h
	return nil
}

// holdReadTimestamp takes a statement's read timestamp, held so that GC
// never passes it: outside a transaction (or at its first hold) the hold
// is taken with the timestamp, in one pick (storage.HoldReads of the zero
// timestamp); a transaction that holds an older timestamp already keeps
// that hold and takes a new read timestamp above it.
func (s *Session) holdReadTimestamp() (hlc.Timestamp, error) {
	if s.hold != nil && s.txn != nil {
		return s.e.storage.ReadTimestamp()
	}
	if err := s.holdReads(hlc.Timestamp{}); err != nil {
		return hlc.Timestamp{}, err
	}
	return s.hold.Timestamp(), nil
}

// releaseReads ends the session's hold (end of a statement outside a
// transaction, end of a transaction, Close).
func (s *Session) releaseReads() {
	s.hold.Release()
	s.hold = nil
}

// statementDone is called when a statement's result is closed: outside a
// transaction nothing reads at its snapshot any more.
func (s *Session) statementDone() {
	s.stmtAsOf, s.asOfBound = nil, nil
	if s.txn == nil && !s.implicit {
		s.releaseReads()
	}
}

// transactionDone is called when a transaction (block or implicit) ends.
func (s *Session) transactionDone() {
	s.txnAsOf = nil
	s.stmtAsOf, s.asOfBound = nil, nil
	s.releaseReads()
}

// beginAsOf applies BEGIN's or SET TRANSACTION's AS OF SYSTEM TIME to the
// open block: read-only, every statement at the timestamp.
func (s *Session) beginAsOf(p *bind.Txn) error {
	if p.Access == parser.AccessReadWrite {
		return sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME specified with READ WRITE mode")
	}
	ts, err := s.asOfTimestamp(p.AsOf)
	if err != nil {
		return err
	}
	if !s.vars.InTxn() {
		return nil // SET TRANSACTION outside a block: checked only
	}
	if s.queried {
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "SET TRANSACTION AS OF SYSTEM TIME must be called before any query")
	}
	if err := s.vars.Set("transaction_read_only", "on"); err != nil {
		return err
	}
	s.txnAsOf = &ts
	return s.holdReads(ts)
}

// asOfReadWrite refuses making an AS OF SYSTEM TIME block read-write.
func (s *Session) asOfReadWrite(name, value string) error {
	if s.txnAsOf != nil && name == "transaction_read_only" && value == "off" {
		return sqlerr.New(sqlerr.SyntaxError, "AS OF SYSTEM TIME specified with READ WRITE mode")
	}
	return nil
}

// belowGCError is CockroachDB's error for a read below a shard's GC
// threshold. CockroachDB gives it no SQLSTATE of its own (XXUUU,
// uncategorized); ok is false for other errors.
func belowGCError(err error) (*sqlerr.Error, bool) {
	var below *storage.BelowGCThresholdError
	if !errors.As(err, &below) {
		return nil, false
	}
	return &sqlerr.Error{Code: "XXUUU", Message: below.Error(),
		Hint: "The versions at that time were garbage-collected: read at a later time, or keep versions longer " +
			"(ALTER TABLE ... SET (GC_TTL = Interval(\"PT...\")) or serve --gc-ttl)."}, true
}

// statementTime is the running statement's time (now(), the TTL cutoff):
// its AS OF SYSTEM TIME, else the engine's clock.
func (s *Session) statementTime() time.Time {
	switch {
	case s.stmtAsOf != nil:
		return time.Unix(0, s.stmtAsOf.WallTime)
	case s.txnAsOf != nil:
		return time.Unix(0, s.txnAsOf.WallTime)
	}
	return s.e.opts.Now()
}

// schemaChanges lists what a schema change about to commit (ch) does to
// the way rows decode, for the schema times of historical reads
// (storage/schematime.go): ids it creates (tables, rewrites, indexes), and
// tables whose columns or primary key change. Settings, constraints,
// owners and names of tables do not change how a row reads.
func (s *Session) schemaChanges(ch *catalog.Change) []storage.SchemaChange {
	old, cur := s.e.catalog.Snapshot(), ch.Snapshot()
	var out []storage.SchemaChange
	for _, db := range cur.Databases() {
		for _, t := range cur.Tables(db.ID) {
			prev, existed := old.TableByID(t.ID)
			if !existed {
				out = append(out, storage.SchemaChange{TableID: t.ID, Kind: storage.SchemaCreated})
			} else if rowShape(prev) != rowShape(t) {
				out = append(out, storage.SchemaChange{TableID: t.ID, Kind: storage.SchemaAltered})
			}
			for _, ix := range t.Indexes {
				if _, _, ok := old.IndexByID(ix.ID); !ok {
					out = append(out, storage.SchemaChange{TableID: ix.ID, Kind: storage.SchemaCreated})
				}
			}
		}
	}
	return out
}

// rowShape renders what decoding a table's rows depends on: its columns
// (name, type, default, computed expression, hidden) and primary key.
func rowShape(t *catalog.Table) string {
	var b strings.Builder
	for _, c := range t.Columns {
		fmt.Fprintf(&b, "%d %q %s %q %q %v %x|", c.ID, c.Name, c.Type, c.Default, c.Computed, c.Hidden, c.Missing)
	}
	fmt.Fprint(&b, t.PrimaryKey)
	return b.String()
}

// schemaChangedError is the SQL error of a historical read of a table
// created or changed after the read's time (storage.SchemaChangedError):
// CockroachDB's 42P01 for a table that did not exist yet; for a changed
// definition or a newer index, 0A000: the statement is bound against
// today's catalog because the catalog's history does not reach back to its
// time (before the history's start on a data directory written without
// it, or below the history's GC threshold).
func (s *Session) schemaChangedError(err error) (*sqlerr.Error, bool) {
	var sc *storage.SchemaChangedError
	if !errors.As(err, &sc) {
		return nil, false
	}
	snap := s.e.catalog.Snapshot()
	if t, entries, ok := snap.IndexByID(sc.TableID); ok {
		return sqlerr.NotSupported("AS OF SYSTEM TIME %s, before index %q of table %q was created (at %s), through that index,",
			sc.ReadTimestamp, strings.TrimPrefix(entries.Name, t.Name+"/"), strings.TrimPrefix(t.Name, s.tempPrefix), sc.Changed), true
	}
	name := fmt.Sprintf("table %d", sc.TableID)
	if t, ok := snap.TableByID(sc.TableID); ok {
		name = strings.TrimPrefix(t.Name, s.tempPrefix)
	}
	if sc.Kind == storage.SchemaCreated {
		return &sqlerr.Error{Code: sqlerr.UndefinedTable, Message: fmt.Sprintf("relation %q does not exist", name),
			Detail: fmt.Sprintf("AS OF SYSTEM TIME %s is before the table was created (or last rewritten) at %s.", sc.ReadTimestamp, sc.Changed)}, true
	}
	e := sqlerr.NotSupported("AS OF SYSTEM TIME %s, before the last change of the columns of table %q (at %s),",
		sc.ReadTimestamp, name, sc.Changed)
	e.Hint = "The catalog's history does not reach back to that time (it starts at the first start of this data " +
		"directory with a version that keeps it, or its versions of then were garbage-collected); read at a time after the change."
	return e, true
}

// droppedSinceError is the error of a historical read, on a follower
// engine, of a table or index it has no shard map of (follower.go): the
// catalog of then names it, but it was dropped, truncated or rewritten
// since (or created after the engine opened). A serving engine reads the
// rows a drop kept until its GC job removes them (dropgc.go).
func droppedSinceError(ts hlc.Timestamp) *sqlerr.Error {
	e := sqlerr.NotSupported("AS OF SYSTEM TIME %s, reading a table or index dropped, truncated or rewritten since then,", ts)
	e.Detail = "A follower-read connection does not read the rows of a table dropped since."
	e.Hint = "Read at a time after the change, or through the serving node."
	return e
}
