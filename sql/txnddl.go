package sql

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/pivotdb/pivotdb/jobs"
	"github.com/pivotdb/pivotdb/meta"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Transactional DDL (design in sql/catalog/doc.go). Inside a transaction
// block a schema change edits the transaction's pending catalog change
// (catalog.Pending), which its own statements bind against and which
// commits with the transaction's rows; nobody else sees it before. Its
// physical effects are split:
//   - creations (shard maps of new tables and indexes, records of new
//     sequences, the id counter) commit at once, in a batch of their own:
//     no committed descriptor names them, so they are invisible, and the
//     transaction's end drops those its catalog does not keep;
//   - drops (rows, index entries, shard maps, sequence records) wait for
//     the commit and run after it (finishTxnDDL);
//   - index entries of a backfill and the rows a validation reads go
//     through the transaction (its batch, its newest view), so they
//     include its own writes and vanish with it.
//
// A kill -9 before the commit leaves only invisible creations, and one
// after it leaves drops undone; dropOrphans removes both at startup.

// ddlLockKey is the lock, in the transaction lock table, that every schema
// change holds: an autocommit one for its duration, one in a transaction
// block until the block ends (PostgreSQL's ACCESS EXCLUSIVE, for the
// whole catalog). Waits for it take part in deadlock detection and honour
// lock_timeout and statement_timeout.
var ddlLockKey = append(append([]byte(nil), meta.Catalog...), "ddl-lock"...)

// txnDDL is a transaction block's schema changes.
type txnDDL struct {
	// pending is the catalog change (nil until the first schema change).
	pending *catalog.Change
	// created lists what the transaction created physically: key spaces
	// (table and index ids, with shard maps) and sequence records.
	createdSpaces, createdSeqs []uint64
	// dropped lists the physical drops that wait for the commit;
	// dropTexts the statements that asked for them (the GC job's
	// description).
	droppedSpaces, droppedSeqs []uint64
	dropTexts                  []string
	// held are the committed tables the transaction changed (ddlHolds);
	// holder is the transaction's id there.
	held   []uint64
	holder uint64
	// recount lists indexes built by the transaction, whose statistics
	// are counted after the commit.
	recount []uint64
	// settingsOf are tables as they were before the transaction changed
	// their settings: a KEY_BLOOM_FILTER switched on or off rewrites the
	// table's data in the background after the commit (keyFilterChanged).
	settingsOf []*catalog.Table
	// jobs are the sys.jobs entries of its statements (CREATE INDEX),
	// finished when it ends (finishTxnJobs).
	jobs []txnJob
	// The sequences it changed (ALTER SEQUENCE, TRUNCATE ... RESTART
	// IDENTITY): sequence_txn.go.
	blockTxnSeqs
}

// txnJob is a job whose work a transaction block did: it succeeds if the
// block commits with what the job created.
type txnJob struct {
	job     *jobs.Job
	created []uint64 // the table and index ids it created
}

// finishTxnJobs ends the jobs of a transaction's statements: succeeded
// when it committed keeping what they created, failed with the reason
// when it rolled back (or rolled back to a savepoint before them).
func (s *Session) finishTxnJobs(d *txnDDL, committed bool) {
	snap := s.e.catalog.Snapshot()
	for _, j := range d.jobs {
		kept := true
		for _, id := range j.created {
			_, _, isIndex := snap.IndexByID(id)
			_, isTable := snap.TableByID(id)
			kept = kept && (isIndex || isTable)
		}
		switch {
		case !committed:
			j.job.Finish(errors.New("rolled back: the transaction block that ran it was rolled back, so it took no effect"))
		case !kept:
			j.job.Finish(errors.New("rolled back: its transaction block rolled back to a savepoint set before it, so it took no effect"))
		default:
			j.job.Finish(nil)
		}
	}
}

// ddlSavepoint is the pending change when a SAVEPOINT ran.
type ddlSavepoint struct {
	name    string
	pending *catalog.Change
	// seqs are the block's pending sequence positions then.
	seqs map[uint64]*seqPending
}

// ddlHolds are the tables with uncommitted schema changes, by the id of
// the transaction that made them: a commit of another transaction that
// wrote one fails with 40001 (checkSchemaVersions), as its rows were
// checked against the definition the change replaces.
type ddlHolds struct {
	mu sync.Mutex
	by map[uint64]uint64
	// ends has, per holding transaction, a channel closed when it ends
	// (waitHold).
	ends map[uint64]chan struct{}
}

// endOf returns the transaction holding table id and the channel closed
// when it ends, nil when no transaction holds it.
func (h *ddlHolds) endOf(id uint64) (owner uint64, end chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	owner, ok := h.by[id]
	if !ok {
		return 0, nil
	}
	return owner, h.ends[owner]
}

// waitHold makes an autocommit write of a table that a transaction block
// is changing wait for the block to end, as PostgreSQL's ACCESS EXCLUSIVE
// lock makes it wait; it reports whether it waited (the statement then
// binds again, against the schema the block left). Only a statement run
// outside any transaction waits; others (inside a transaction) go on and
// fail at commit with 40001. It may still hold table locks of an earlier
// attempt or of earlier reads of its protocol cycle, which the block's
// next schema change may wait for (they wait for writers): the wait is in
// the wait-for graph, so such a cycle is a deadlock (40P01) rather than a
// hang. lock_timeout and statement_timeout bound the wait.
func (s *Session) waitHold(ctx context.Context, st bind.Statement) (bool, error) {
	if s.txn != nil {
		return false, nil
	}
	var t *catalog.Table
	switch st := st.(type) {
	case *bind.Insert:
		t = st.Table
	case *bind.Modify:
		if st.Scan != nil {
			t = st.Scan.Table
		}
	case *bind.Copy:
		if st.Insert != nil {
			t = st.Insert.Table
		}
	}
	if t == nil {
		return false, nil
	}
	holder, end := s.e.ddlHolds.endOf(t.ID)
	if end == nil {
		return false, nil
	}
	var pid uint32
	if s.backend != nil {
		pid = s.backend.PID
	}
	// (ctx carries lock_timeout: statementContext.)
	if err := s.e.txns.WaitFor(ctx, s.lockOwner(), holder, pid, ddlLockKey, end); err != nil {
		return false, err
	}
	return true, nil
}

func (h *ddlHolds) held(id uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.by[id]
	return ok
}

// catalogSnap is the catalog the session's statements see: its
// transaction's pending change, or the committed catalog.
func (s *Session) catalogSnap() *catalog.Snapshot {
	if s.tddl != nil && s.tddl.pending != nil {
		return s.tddl.pending.Snapshot()
	}
	if s.stmtCatalog != nil {
		return s.stmtCatalog
	}
	return s.e.catalog.Snapshot()
}

// lockDDL takes the schema-change lock for the session's transaction (held
// until it ends), or for a transaction of its own that release ends.
func (s *Session) lockDDL() (release func(), err error) {
	release = func() {}
	if s.ddlLocked {
		return release, nil
	}
	t := s.txn
	if t == nil {
		t = s.beginTxn()
		release = t.Rollback
	}
	if err := t.Lock(s.stmtContext(), ddlLockKey); err != nil {
		release()
		return nil, err
	}
	// A transaction that committed schema changes installs them after its
	// commit released the lock: wait for that before reading the catalog.
	s.e.ddlApply.Lock()
	//lint:ignore SA2001 an empty critical section is the barrier
	s.e.ddlApply.Unlock()
	return release, nil
}

// withDDLLock runs fn holding the schema-change lock and, with gate, the
// transaction manager's schema gate (taken after the lock, so that a
// schema change waiting for the lock never holds the gate).
func (s *Session) withDDLLock(gate bool, fn func() error) error {
	release, err := s.lockDDL()
	if err != nil {
		return err
	}
	defer release()
	was := s.ddlLocked
	s.ddlLocked = true
	defer func() { s.ddlLocked = was }()
	if gate && !s.gateHeld {
		unlock := s.e.txns.LockSchema()
		defer unlock()
		s.gateHeld = true
		defer func() { s.gateHeld = false }()
	}
	return fn()
}

// inTxnDDL reports whether a schema change of a transaction block is
// running its edit (the physical helpers defer drops then).
func (s *Session) inTxnDDL() bool { return s.tddlRunning }

// ddlInBlock runs a schema change inside a transaction block (see the top
// of the file). fn edits a fork of the pending change; creations it adds
// to b and pch commit at once; drops it asks for (dropTableData,
// dropIndexData, dropSequenceIn) are deferred.
func (s *Session) ddlInBlock(b *storage.Batch, fn func(ch *catalog.Change, pch *partition.Change, b *storage.Batch) error) error {
	if !b.Empty() {
		return sqlerr.New(sqlerr.InternalError, "sql: a schema change that rewrites rows reached a transaction block")
	}
	return s.withDDLLock(true, func() error {
		if s.tddl == nil {
			s.tddl = &txnDDL{}
		}
		d := s.tddl
		if d.pending == nil {
			d.pending = s.e.catalog.Pending(s.e.catalog.Snapshot())
		}
		ch := d.pending.Fork()
		real := s.e.catalog.Begin()
		real.KeepIDs()
		pch := s.e.shards.Begin()
		abort := func(err error) error {
			pch.Abort()
			real.Abort()
			return err
		}
		err := func() error {
			s.tddlRunning = true
			defer func() { s.tddlRunning = false }()
			return fn(ch, pch, b)
		}()
		if err != nil {
			return abort(err)
		}
		created := pch.Created()
		if err := real.Write(s.e.meta.With(b)); err != nil {
			return abort(err)
		}
		if err := b.Commit(); err != nil {
			return abort(err)
		}
		pch.Install()
		real.Abort() // nothing to install: the descriptors are pending
		d.createdSpaces = append(d.createdSpaces, created...)
		for _, id := range created {
			// The balancer and the shard manager look new key spaces up
			// by id until the transaction ends.
			if t, ok := ch.Snapshot().TableByID(id); ok {
				s.e.creating.Store(id, t)
			}
		}
		for _, q := range newSequences(d.pending.Snapshot(), ch.Snapshot()) {
			d.createdSeqs = append(d.createdSeqs, q)
		}
		if err := s.holdChanged(d, ch); err != nil {
			return err
		}
		d.pending = ch
		return nil
	})
}

// newSequences lists the sequences of next that prev does not have.
func newSequences(prev, next *catalog.Snapshot) []uint64 {
	var out []uint64
	for _, db := range next.Databases() {
		for _, q := range next.Sequences(db.ID) {
			if _, ok := prev.SequenceByID(q.ID); !ok {
				out = append(out, q.ID)
			}
		}
	}
	return out
}

// holdChanged registers the committed tables ch changes as held by the
// session's transaction (under the schema gate, so no commit of another
// transaction is in flight), after checking that the rows the transaction
// wrote so far were written under their committed definition.
func (s *Session) holdChanged(d *txnDDL, ch *catalog.Change) error {
	committed := s.e.catalog.Snapshot()
	next := ch.Snapshot()
	var ids []uint64
	for _, db := range committed.Databases() {
		for _, t := range committed.Tables(db.ID) {
			if nt, ok := next.TableByID(t.ID); !ok || nt != t {
				ids = append(ids, t.ID)
			}
		}
	}
	// Tables the transaction created: their versions are its own.
	for _, db := range next.Databases() {
		for _, t := range next.Tables(db.ID) {
			if _, ok := committed.TableByID(t.ID); !ok {
				s.txn.OwnSchema(t.ID)
			}
		}
	}
	h := &s.e.ddlHolds
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.by == nil {
		h.by = map[uint64]uint64{}
		h.ends = map[uint64]chan struct{}{}
	}
	if h.ends[s.txn.ID()] == nil {
		h.ends[s.txn.ID()] = make(chan struct{})
	}
	d.holder = s.txn.ID()
	for _, id := range ids {
		if slices.Contains(d.held, id) {
			continue
		}
		t, _ := committed.TableByID(id)
		if v, ok := s.txn.OwnSchema(id); ok && v != indexVersion(t) {
			return sqlerr.New(sqlerr.SerializationFailure,
				"could not serialize access: table %q changed during the transaction", t.Name)
		}
		h.by[id] = s.txn.ID()
		d.held = append(d.held, id)
	}
	return nil
}

// commitTxn commits the session's transaction t with its schema changes.
func (s *Session) commitTxn(t *txn.Txn) error {
	d := s.tddl
	s.tddl, s.ddlSavepoints, s.stmtCatalog = nil, nil, nil
	if d == nil || d.pending == nil {
		err := t.Commit()
		if d != nil {
			s.finishTxnDDL(d, false)
			s.finishTxnJobs(d, err == nil)
		}
		return err
	}
	err := d.pending.Records(s.e.meta.With(t.Batch()))
	if err == nil {
		// Where the sequences it changed stand, with the catalog.
		err = s.writeSeqPending(d, s.e.meta.With(t.Batch()))
	}
	if err != nil {
		t.Rollback()
		s.finishTxnDDL(d, false)
		s.finishTxnJobs(d, false)
		return err
	}
	// Schema times for historical reads (session_asof.go), as ddlNow.
	changes := s.schemaChanges(d.pending)
	changedAt, err := s.e.storage.RecordSchemaChanges(t.Batch(), changes)
	var gc *gcTask
	if err == nil {
		// The rows of what it drops stay for historical reads; their
		// GC job commits with the block (dropgc.go).
		gc, err = s.e.prepareDropGC(s.blockDrops(d), strings.Join(d.dropTexts, "; "), s.user, t.Batch())
	}
	if err != nil {
		t.Rollback()
		s.finishTxnDDL(d, false)
		s.finishTxnJobs(d, false)
		return err
	}
	// The catalog is installed as the commit lands, before a statement can
	// read at its timestamp (storage.Batch.OnCommitted). The commit
	// releases the schema-change lock; should the catalog be installed
	// after that, the next schema change waits on ddlApply for it.
	s.e.ddlApply.Lock()
	applied := false
	t.Batch().OnCommitted(func(ts hlc.Timestamp) {
		s.e.dropgc.keep(gc, ts)
		s.e.catalog.Apply(d.pending, ts)
		applied = true
	})
	err = t.Commit()
	if err == nil || applied {
		s.e.dropgc.start(gc)
	}
	if err == nil {
		s.e.storage.NoteSchemaChanges(changes, changedAt)
	}
	if err == nil && !applied {
		ts, _ := s.e.storage.ReadTimestamp()
		s.e.catalog.Apply(d.pending, ts)
	}
	if err == nil || applied {
		s.applySeqPending(d)
	}
	if err == nil {
		s.e.syncKeyFilters()
	}
	s.e.ddlApply.Unlock()
	// applied: the batch landed even if Commit then failed, and the
	// committed catalog is what finishTxnDDL goes by.
	s.finishTxnDDL(d, err == nil || applied)
	s.finishTxnJobs(d, err == nil || applied)
	return err
}

// rollbackTxn rolls the session's transaction t back with its schema
// changes.
func (s *Session) rollbackTxn(t *txn.Txn) {
	d := s.tddl
	s.tddl, s.ddlSavepoints, s.stmtCatalog = nil, nil, nil
	t.Rollback()
	if d != nil {
		s.finishTxnDDL(d, false)
		s.finishTxnJobs(d, false)
	}
}

// finishTxnDDL releases a transaction's holds and does the physical work
// its end leaves: after a commit, the drops it deferred and the creations
// its catalog does not keep (rolled back to a savepoint); after a
// rollback, every creation. A failure here leaves only invisible data,
// which dropOrphans removes at the next start.
func (s *Session) finishTxnDDL(d *txnDDL, committed bool) {
	s.releaseSeqHolds(d)
	h := &s.e.ddlHolds
	h.mu.Lock()
	for _, id := range d.held {
		delete(h.by, id)
	}
	if end := h.ends[d.holder]; end != nil {
		close(end)
		delete(h.ends, d.holder)
	}
	h.mu.Unlock()
	for _, id := range d.createdSpaces {
		s.e.creating.Delete(id)
	}
	snap := s.e.catalog.Snapshot()
	var spaces, seqs []uint64
	for _, id := range append(slices.Clone(d.createdSpaces), d.droppedSpaces...) {
		if _, ok := snap.TableByID(id); !ok && (committed || slices.Contains(d.createdSpaces, id)) {
			spaces = append(spaces, id)
		}
	}
	for _, id := range append(slices.Clone(d.createdSeqs), d.droppedSeqs...) {
		if _, ok := snap.SequenceByID(id); !ok && (committed || slices.Contains(d.createdSeqs, id)) {
			seqs = append(seqs, id)
		}
	}
	if err := s.e.dropSpaces(spaces, seqs, s.e.dropgc.pending); err != nil {
		s.notice("WARNING", sqlerr.InternalError, "dropped objects' data was not removed (it is at the next start): %v", err)
	}
	if committed {
		for _, old := range d.settingsOf {
			if cur, ok := snap.TableByID(old.ID); ok {
				s.e.keyFilterChanged(old, cur)
			}
		}
		for _, id := range d.recount {
			if _, ok := snap.TableByID(id); ok {
				s.recountIndex(id)
			}
		}
	}
}

// dropSpaces removes key spaces (rows or index entries and shard maps)
// and sequence records that no committed descriptor names; of the spaces
// kept says a GC job removes later (dropgc.go), only the shard map.
func (e *Engine) dropSpaces(spaces, seqs []uint64, kept func(id uint64) bool) error {
	spaces = slices.Compact(slices.Sorted(slices.Values(spaces)))
	seqs = slices.Compact(slices.Sorted(slices.Values(seqs)))
	if len(spaces) == 0 && len(seqs) == 0 {
		return nil
	}
	b := e.storage.NewBatch()
	defer b.Close()
	pch := e.shards.Begin()
	for _, id := range spaces {
		if e.shards.Map(id) != nil {
			if err := pch.Drop(e.meta.With(b), id); err != nil {
				pch.Abort()
				return err
			}
		}
		if kept(id) {
			continue
		}
		if err := b.DeleteRange(storage.TableSpan(id)); err != nil {
			pch.Abort()
			return err
		}
	}
	for _, id := range seqs {
		if err := e.meta.With(b).Delete(sequenceKey(id)); err != nil {
			pch.Abort()
			return err
		}
		e.seqs.forget(id)
	}
	if err := b.Commit(); err != nil {
		pch.Abort()
		return err
	}
	pch.Install()
	return nil
}

// dropOrphans removes, at startup, the key spaces and sequence records
// that no committed descriptor names: creations of a transaction that
// never committed, and drops a committed one did not get to run, when
// the server stopped in between. Of a space a GC job waits for
// (dropgc.go), only the shard map goes.
func (e *Engine) dropOrphans() error {
	snap := e.catalog.Snapshot()
	var spaces, seqs []uint64
	for _, id := range e.shards.Tables() {
		if _, ok := snap.TableByID(id); !ok {
			spaces = append(spaces, id)
		}
	}
	err := e.meta.Scan(storage.Span{Start: meta.Sequence, End: storage.PrefixEnd(meta.Sequence)}, func(k, _ []byte) error {
		if len(k) != len(meta.Sequence)+8 {
			return nil
		}
		id := uint64(0)
		for _, c := range k[len(meta.Sequence):] {
			id = id<<8 | uint64(c)
		}
		if _, ok := snap.SequenceByID(id); !ok {
			seqs = append(seqs, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return e.dropSpaces(spaces, seqs, e.dropgc.pending)
}

// dropTableData drops a table's shard maps (its and its indexes') in the
// DDL batch and keeps their rows for historical reads until the change's
// GC job removes them (dropgc.go), or removes them with the change when
// they are not kept. Inside a transaction block it is deferred to the
// commit.
func (s *Session) dropTableData(pch *partition.Change, b *storage.Batch, t *catalog.Table) error {
	if s.inTxnDDL() {
		s.tddl.droppedSpaces = append(s.tddl.droppedSpaces, t.ID)
		for _, ix := range t.Indexes {
			s.tddl.droppedSpaces = append(s.tddl.droppedSpaces, ix.ID)
		}
		s.noteDropText()
		return nil
	}
	if kept, err := s.keepDroppedTable(pch, b, t); kept || err != nil {
		return err
	}
	return s.e.dropTableData(pch, b, t)
}

// dropIndexData is dropTableData for an index.
func (s *Session) dropIndexData(pch *partition.Change, b *storage.Batch, id uint64) error {
	if s.inTxnDDL() {
		s.tddl.droppedSpaces = append(s.tddl.droppedSpaces, id)
		s.noteDropText()
		return nil
	}
	if kept, err := s.keepDroppedIndex(pch, b, id); kept || err != nil {
		return err
	}
	return s.e.dropIndexData(pch, b, id)
}

// noteDropText records the running statement as one that drops, for the
// block's GC job.
func (s *Session) noteDropText() {
	if n := len(s.tddl.dropTexts); n == 0 || s.tddl.dropTexts[n-1] != s.currentText {
		s.tddl.dropTexts = append(s.tddl.dropTexts, s.currentText)
	}
}

// txnBlockDDL checks, for a statement inside a transaction block, that it
// is one of the schema changes that are transactional; the others are
// refused (before anything runs) rather than committed on their own.
// PostgreSQL never allows CREATE/DROP DATABASE in a block (25001; VACUUM
// checks its own); the ones PivotDB cannot run transactionally yet are
// 0A000. script: the block is the implicit one of a query string of
// several statements.
func txnBlockDDL(st bind.Statement, script bool) error {
	never := func(what string) error {
		return sqlerr.New(sqlerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", what)
	}
	// why says what keeps the statement out of a transaction (the
	// DETAIL).
	notYet := func(what, why string) error {
		if script {
			return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
				Message: what + " cannot run in a query string of several statements yet",
				Detail:  "The statements of one query string form one transaction, and " + why + ".",
				Hint:    "Send it as a query of its own (it commits on its own)."}
		}
		return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: what + " cannot run inside a transaction block yet",
			Detail:  "PivotDB cannot make it transactional: " + why + ".",
			Hint:    "Run it outside a transaction block (it commits on its own)."}
	}
	const shardMaps = "shard boundaries are changed in place, not versioned with the catalog"
	switch st.(type) {
	case *bind.CreateDatabase:
		return never("CREATE DATABASE")
	case *bind.DropDatabase:
		return never("DROP DATABASE")
	case *bind.Reshard:
		return notYet("ALTER TABLE ... RESHARD", shardMaps)
	case *bind.Split:
		return notYet("ALTER TABLE ... SPLIT", shardMaps)
	}
	return nil
}

// runSavepointDDL keeps the pending catalog change with the transaction's
// savepoints: ROLLBACK TO restores the one of the savepoint.
func (s *Session) runSavepointDDL(kind string, name string) {
	var cur *catalog.Change
	var seqs map[uint64]*seqPending
	if s.tddl != nil {
		cur, seqs = s.tddl.pending, maps.Clone(s.tddl.seqs)
	}
	find := func() int {
		for i := len(s.ddlSavepoints) - 1; i >= 0; i-- {
			if s.ddlSavepoints[i].name == name {
				return i
			}
		}
		return -1
	}
	switch kind {
	case "savepoint":
		s.ddlSavepoints = append(s.ddlSavepoints, ddlSavepoint{name: name, pending: cur, seqs: seqs})
	case "release":
		if i := find(); i >= 0 {
			s.ddlSavepoints = s.ddlSavepoints[:i]
		}
	case "rollback":
		if i := find(); i >= 0 {
			if s.tddl != nil {
				s.tddl.pending = s.ddlSavepoints[i].pending
				s.tddl.seqs = maps.Clone(s.ddlSavepoints[i].seqs)
				s.releaseRolledBack(s.tddl)
			}
			s.ddlSavepoints = s.ddlSavepoints[:i+1]
		}
	}
}

// releaseRolledBack ends the block's holds on what ROLLBACK TO SAVEPOINT
// took out of its pending change — committed tables it no longer changes,
// sequences it no longer changes — as PostgreSQL releases the locks of
// the subtransaction: writers and nextval calls waiting for the block
// look again, and other transactions that write those tables commit.
func (s *Session) releaseRolledBack(d *txnDDL) {
	committed := s.e.catalog.Snapshot()
	var next *catalog.Snapshot
	if d.pending != nil {
		next = d.pending.Snapshot()
	}
	h := &s.e.ddlHolds
	h.mu.Lock()
	kept, released := d.held[:0], false
	for _, id := range d.held {
		t, _ := committed.TableByID(id)
		if next != nil {
			if nt, ok := next.TableByID(id); !ok || nt != t {
				kept = append(kept, id)
				continue
			}
		}
		delete(h.by, id)
		released = true
	}
	d.held = kept
	if end := h.ends[d.holder]; released && end != nil {
		// Waiters wake and look again; those still held wait anew.
		close(end)
		h.ends[d.holder] = make(chan struct{})
	}
	h.mu.Unlock()
	s.releaseRolledBackSeqs(d)
}

// ddlReader is what a schema change reads stored rows through (index
// backfills, validations): inside a transaction block the transaction's
// newest view, with its own writes; otherwise the committed data.
func (s *Session) ddlReader() storage.Reader {
	if s.inTxnDDL() {
		return s.txn.LatestReader()
	}
	return s.e.storage
}
