package sql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/exec"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sessionvars"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/txnmode"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Session is one client's SQL session: settings, transaction state and
// prepared plans. A session is used by one goroutine at a time.
type Session struct {
	e    *Engine
	db   *catalog.Database
	user string
	// lockList is statementLocks' buffer (tablelocks.go).
	lockList []relLock

	vars    *sessionvars.Vars
	notices []Notice
	// readView, while set, is what queries read instead of the
	// transaction: the main SELECT of a statement with data-modifying WITH
	// queries reads the tables as they were when it started (with_dml.go).
	readView storage.Reader
	// snap is the snapshot of the running statement: committed data at the
	// read timestamp taken when it started (takeSnapshot). Every shard and
	// index the statement reads, it reads at that one timestamp.
	snap *storage.View
	// stmtAsOf is the running statement's AS OF SYSTEM TIME, txnAsOf the
	// open block's; hold keeps GC below the session's open reads
	// (session_asof.go).
	stmtAsOf, txnAsOf *hlc.Timestamp
	hold              *storage.ReadHold
	// asOfBound is the AS OF SYSTEM TIME of a statement bound against the
	// catalog of its time (session_asof.go, asOfCatalog); nil: none.
	asOfBound *hlc.Timestamp
	// snapTime is the time of snap on the engine's clock (Options.Now),
	// at which reads judge TTL; txnSnapTime that of the snapshot a
	// REPEATABLE READ transaction keeps.
	snapTime, txnSnapTime time.Time
	// ownAsOf: the running statement has an AS OF SYSTEM TIME clause, a
	// SELECT's or BEGIN's (follower.go's staleSnapshot does not wait for
	// a time it replaces); runningStmt is the statement while
	// executeOnce takes its snapshot (follower.go's closedBindSnapshot
	// resolves its time), nil otherwise.
	ownAsOf     bool
	runningStmt *parser.Statement
	// settingOnly: the running statement is a SET, SHOW or RESET, which
	// reads no table (follower.go: a follower session takes it at the
	// closed timestamp, whatever its staleness bound).
	settingOnly bool

	// txn is the open explicit transaction (BEGIN ... COMMIT), nil outside
	// one. failed marks a block in which a statement failed: everything but
	// COMMIT/ROLLBACK is refused with 25P02 until it ends.
	txn    *txn.Txn
	failed bool
	// queried is set once a statement other than transaction control and
	// SET/SHOW/RESET ran in the current transaction: PostgreSQL's "first
	// snapshot", after which the isolation level is fixed (txnmode.go).
	queried bool
	// implicit marks the implicit transaction of a protocol cycle: the
	// statements of one simple Query string, or of an extended-protocol
	// pipeline up to Sync, commit together at Sync as in PostgreSQL. Its
	// txn is created by the first write; BEGIN turns it into a block.
	implicit bool
	// script marks a simple Query string of several statements: its
	// implicit transaction is PostgreSQL's implicit transaction block
	// (inTxnBlock), in which schema changes are transactional.
	script bool
	// cycleRetry is the statement of the implicit transaction that Sync
	// may run again (session_retry.go); nil: none.
	cycleRetry *cycleStatement
	closed     bool
	// tempPrefix names the session's temporary tables in the catalog
	// (bind/temp.go); madeTemp is set once the session created one.
	tempPrefix string
	madeTemp   bool
	// onCommit maps a temporary table's catalog name to its ON COMMIT
	// action, "delete rows" or "drop" (temptables.go).
	onCommit map[string]string
	// backend is the session's entry in the server's registry of live
	// sessions (activity.go); nil when no server registered it.
	backend *activity.Backend
	// seqs remembers the values nextval gave this session (currval,
	// lastval).
	seqs sessionSequences

	// cursors are the open cursors by name (cursor.go); currentText is
	// the text of the statement running, which DECLARE records.
	cursors     map[string]*cursor
	currentText string
	// gcDrops are the key spaces the running autocommit schema change
	// drops and keeps for historical reads (dropgc.go; ddlNow).
	gcDrops []gcSpace
	// planningTime is how long binding the running statement took
	// (EXPLAIN ANALYZE's Planning Time).
	planningTime time.Duration

	// relOwners are the owners of the table locks the session holds
	// (tablelocks.go), released when the transaction ends; relOwner is
	// the owner of a statement's locks outside a transaction, relMarks
	// the lock counts at each savepoint.
	relOwners []uint64
	relOwner  uint64
	relMarks  []relMark
	// ddlLocks are the running schema change's table locks.
	ddlLocks *stmtDDLLocks
	// fresh are the tables the transaction created or truncated, by the
	// savepoint depth they were made at (COPY FREEZE, copyfreeze.go).
	fresh map[uint64]int
	// Transactional DDL (txnddl.go): tddl is the block's schema changes,
	// ddlSavepoints its pending catalog at each savepoint; ddlLocked and
	// gateHeld mark a statement holding the schema-change lock and the
	// schema gate, tddlRunning one editing the pending catalog. stmtCtx
	// is the running statement's context (lock waits honour it).
	tddl          *txnDDL
	ddlSavepoints []ddlSavepoint
	ddlLocked     bool
	gateHeld      bool
	tddlRunning   bool
	stmtCtx       context.Context
	// seqAfter: where the sequences a running autocommit schema change
	// rewrites stand once it committed (seqDDL).
	seqAfter map[uint64]*seqPending
	// stmtCatalog is the catalog as of the running statement's read
	// timestamp (catalog.Catalog.At), set by takeSnapshot.
	stmtCatalog *catalog.Snapshot
}

// stmtContext is the running statement's context.
func (s *Session) stmtContext() context.Context {
	if s.stmtCtx != nil {
		return s.stmtCtx
	}
	return context.Background()
}

func newSession(e *Engine, db *catalog.Database, user string) *Session {
	s := &Session{e: e, db: db, user: user, vars: sessionvars.New(e.settingDefaults),
		tempPrefix: bind.TempPrefix(e.nextTemp.Add(1))}
	// ALTER DATABASE/ROLE ... SET, by PostgreSQL's precedence; the values
	// were checked when stored, so one failing here is a setting that no
	// longer takes that value: the session starts without it, as
	// PostgreSQL starts with a WARNING.
	for name, value := range e.catalog.Snapshot().SessionSettings(db.ID, user) {
		_ = s.vars.SetDefault(name, value)
	}
	if !e.catalog.Snapshot().Access(user).Superuser() {
		s.vars.Init("is_superuser", "off")
	}
	return s
}

// Close ends the session, rolling back an open transaction.
func (s *Session) Close() {
	if s.closed {
		return
	}
	s.closed = true
	s.closeCursors(func(*cursor) bool { return true })
	if s.txn != nil {
		s.rollbackTxn(s.txn)
		s.txn = nil
	}
	s.transactionDone()
	s.releaseTableLocks()
	s.dropTempTables()
	s.e.removeSession(s)
}

// Database returns the name of the session's database.
func (s *Session) Database() string { return s.db.Name }

// BeginImplicit starts the implicit transaction of a protocol cycle (a
// simple Query, or extended-protocol messages up to Sync). Outside a
// transaction block the cycle's statements then commit together at Sync;
// inside a block it changes nothing.
func (s *Session) BeginImplicit() {
	if s.txn == nil {
		s.implicit = true
	}
}

// Sync ends a protocol cycle: the implicit transaction commits, or rolls
// back if one of its statements failed. An explicit block stays open.
func (s *Session) Sync() error {
	s.stmtCatalog = nil
	s.script = false
	if !s.implicit {
		return nil
	}
	s.implicit = false
	t, failed := s.txn, s.failed
	s.txn, s.failed = nil, false
	s.queried = false
	s.transactionDone()
	if t == nil {
		s.endTransaction(!failed)
		return nil
	}
	if failed {
		s.rollbackTxn(t)
		s.endTransaction(false)
		return nil
	}
	err := s.mapError(context.Background(), s.commitTxn(t))
	if err != nil {
		err = s.rerunAtSync(err)
	}
	s.cycleRetry = nil
	s.endTransaction(err == nil)
	return err
}

// inBlock reports whether an explicit transaction block is open.
func (s *Session) inBlock() bool { return s.txn != nil && !s.implicit }

// inTxnBlock reports whether statements run in a transaction block,
// explicit or the implicit one of a query string of several statements
// (PostgreSQL's implicit transaction block): schema changes are then the
// transaction's, and what cannot run in a block is refused.
func (s *Session) inTxnBlock() bool { return s.inBlock() || (s.implicit && s.script) }

// SetScript tells the session that the simple Query now running holds
// several statements (see inTxnBlock); Sync clears it.
func (s *Session) SetScript(several bool) { s.script = several }

// TxStatus is the ReadyForQuery status: 'I' idle, 'T' in a transaction
// block, 'E' in a failed transaction block.
func (s *Session) TxStatus() byte {
	switch {
	case !s.inBlock():
		return 'I'
	case s.failed:
		return 'E'
	}
	return 'T'
}

// IdleInTransactionTimeout is the idle_in_transaction_session_timeout
// setting: how long the server lets the client stay silent while a
// transaction block is open (0: forever). The server enforces it, since
// only it sees the client being idle.
func (s *Session) IdleInTransactionTimeout() time.Duration { return s.vars.IdleInTransactionTimeout() }

// IdleSessionTimeout is the idle_session_timeout setting: how long the
// client may stay idle outside a transaction block (0: forever). The
// server enforces it.
func (s *Session) IdleSessionTimeout() time.Duration { return s.vars.IdleSessionTimeout() }

// FailTransaction marks an open transaction block as failed, for errors the
// protocol layer detects itself (a bad Bind, say) while in a block.
func (s *Session) FailTransaction() { s.onError() }

// TakeNotices returns (and forgets) the notices raised since the last call.
func (s *Session) TakeNotices() []Notice {
	n := s.notices
	s.notices = nil
	return n
}

func (s *Session) notice(severity, code, format string, args ...any) {
	if !s.vars.SendNotice(severity) {
		return // below client_min_messages
	}
	s.notices = append(s.notices, Notice{Severity: severity, Code: code, Message: fmt.Sprintf(format, args...)})
}

// preparedPlan is the bound form of a statement, rebuilt when the
// catalog changed since it was built.
type preparedPlan struct {
	stmt parser.Statement
	// dialect is the sql_dialect stmt was parsed (and bound) in: the
	// dialect changes how text parses ("..."), so a change re-parses.
	dialect parser.Dialect
	snap    *catalog.Snapshot
	plan    bind.Statement
	// planning is how long binding took.
	planning time.Duration
	// uses are the tables the statement reads and writes, for the table
	// locks it takes (tablelocks.go).
	uses []tableUse
}

type tableUse struct {
	table *catalog.Table
	use   bind.TableUse
}

// dialect is the session's sql_dialect as the parser sees it.
func (s *Session) dialect() parser.Dialect {
	if s.vars.PostgreSQLDialect() {
		return parser.DialectPostgreSQL
	}
	return parser.DialectYQL
}

// reparse parses a prepared statement's text again in the session's
// current dialect (it was prepared under another one).
func (s *Session) reparse(p *Prepared) (parser.Statement, error) {
	stmts, err := parser.ParseDialect(p.SQL, s.dialect())
	if err != nil {
		return parser.Statement{}, err
	}
	if len(stmts) != 1 {
		return parser.Statement{}, sqlerr.New(sqlerr.FeatureNotSupported,
			"statement no longer parses as one statement in sql_dialect %s", s.vars.Dialect())
	}
	return stmts[0], nil
}

// Prepare parses and binds exactly one statement (or none) for the
// extended protocol. paramOIDs are the types the client declared; missing or
// zero entries are inferred.
func (s *Session) Prepare(ctx context.Context, text string, paramOIDs []uint32) (*Prepared, error) {
	s.prepareCatalog()
	stmts, err := parser.ParseDialect(text, s.dialect())
	if err != nil {
		return nil, err
	}
	switch len(stmts) {
	case 0:
		return &Prepared{SQL: text, Empty: true}, nil
	case 1:
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	declared := make([]types.Type, len(paramOIDs))
	for i, oid := range paramOIDs {
		t, ok := types.FromOID(oid)
		if !ok {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "type with OID %d is not supported yet", oid)
		}
		declared[i] = t
	}
	// A historical SELECT describes the columns of its time.
	s.asOfCatalog(&stmts[0])
	defer func() { s.asOfBound, s.stmtCatalog = nil, nil }()
	return s.bind(ctx, stmts[0], declared)
}

// PrepareScript parses a simple-protocol query string, which may hold several
// statements separated by semicolons. A syntax error anywhere fails the whole
// string before anything runs, as in PostgreSQL. Zero statements means an
// empty query.
func (s *Session) PrepareScript(ctx context.Context, text string) ([]*Prepared, error) {
	d := s.dialect()
	stmts, err := parser.ParseDialect(text, d)
	if err != nil {
		return nil, err
	}
	out := make([]*Prepared, len(stmts))
	for i, st := range stmts {
		// Binding needs the catalog as the earlier statements leave it
		// (CREATE TABLE t; INSERT INTO t ...), so it is deferred to Execute;
		// so is parsing again, when an earlier SET changed sql_dialect.
		out[i] = &Prepared{SQL: st.Text, plan: preparedPlan{stmt: st, dialect: d}, deferred: true}
	}
	return out, nil
}

func (s *Session) bind(ctx context.Context, st parser.Statement, declared []types.Type) (*Prepared, error) {
	start := time.Now()
	env := s.bindEnv()
	env.Mem = memory.FromContext(ctx)
	var uses []tableUse
	env.UseTable = func(t *catalog.Table, u bind.TableUse) {
		for i := range uses {
			if uses[i].table.ID == t.ID {
				uses[i].use = max(uses[i].use, u)
				return
			}
		}
		uses = append(uses, tableUse{table: t, use: u})
	}
	plan, params, err := bind.Bind(&st, declared, env)
	if err != nil {
		return nil, err
	}
	planning := time.Since(start)
	return &Prepared{
		SQL:        st.Text,
		ParamTypes: params,
		Columns:    resultColumns(plan.Columns()),
		plan:       preparedPlan{stmt: st, dialect: s.dialect(), snap: env.Snapshot, plan: plan, planning: planning, uses: uses},
	}, nil
}

// bindEnv is what the binder sees of the session.
func (s *Session) bindEnv() *bind.Env {
	snap := s.catalogSnap()
	return &bind.Env{
		Snapshot: snap,
		// The database as snap has it: its ACL may have changed since the
		// session started.
		Database:      s.currentDB(snap),
		User:          s.user,
		Settings:      s.vars,
		Now:           s.e.opts.Now,
		PartitionRows: s.partitionRows,
		JobRows:       s.jobRows,
		NodeRows:      s.nodeRows,
		Backend:       s.backend,
		TableStats:    s.tableStats,
		RelationSize:  s.relationSize,
		TableOptions:  s.tableOptions,
		Notice: func(msg string) {
			s.notice("NOTICE", sqlerr.SuccessfulCompletion, "%s", msg)
		},
		Locks:       s.lockRows,
		SequenceRow: s.sequenceRow,
		Cursor:      s.cursorColumns,
		OpenCursors: s.openCursors,
		TempPrefix:  s.tempPrefix,
		// A historical statement must hold today's privileges too.
		Current: s.currentCatalog(snap),
	}
}

// Execute runs a prepared statement with bound parameters (one per
// ParamTypes entry, already converted to those types, NULL allowed).
// Cancelling ctx aborts it with 57014. At READ COMMITTED a statement that
// fails with a conflict it resolves by running again is run again
// (session_retry.go).
func (s *Session) Execute(ctx context.Context, p *Prepared, params []types.Value) (Result, error) {
	return s.executeRetrying(ctx, p, params)
}

// executeOnce is one run of Execute.
func (s *Session) executeOnce(ctx context.Context, p *Prepared, params []types.Value) (Result, error) {
	if p.Empty {
		return &emptyResult{}, nil
	}
	// st points at the plan's statement, which nothing here changes:
	// copying it (it escapes through asOfCatalog) cost an allocation of
	// its whole struct per execution.
	st := &p.plan.stmt
	// described: the client was told the result's columns at Prepare (a
	// simple query's statements are bound here first).
	described := !p.deferred
	if s.failed && !endsTransaction(*st) {
		return nil, sqlerr.New(sqlerr.InFailedSQLTransaction,
			"current transaction is aborted, commands ignored until end of transaction block")
	}
	// The snapshot comes first: the statement binds against the catalog
	// as of its read timestamp. Transaction control does not take a
	// REPEATABLE READ transaction's snapshot: BEGIN and SET TRANSACTION
	// come before it.
	s.stmtAsOf = nil
	s.ownAsOf = st.AsOf != nil || (st.Txn != nil && st.Txn.AsOf != nil) // follower.go
	s.runningStmt = st
	s.settingOnly = st.Set != nil || st.Show != nil || st.Reset != nil
	err := s.takeSnapshot(st.Txn == nil)
	// Only this takeSnapshot reads it: an idle session must not keep its
	// last statement alive (a 1,000,000-item IN list, a 4 MB literal:
	// TestMemoryBudget's peak RSS went from about 0.5 to 1.2 GB).
	s.runningStmt = nil
	if err != nil {
		s.statementDone()
		s.onError()
		return nil, s.mapError(ctx, err)
	}
	redialect := p.plan.dialect != s.dialect()
	if redialect {
		reparsed, err := s.reparse(p)
		if err != nil {
			s.onError()
			return nil, err
		}
		st = &reparsed
	}
	// A historical SELECT binds against the catalog of its time.
	s.asOfCatalog(st)
	if redialect || p.deferred || p.plan.snap != s.catalogSnap() {
		fresh, err := s.bind(ctx, *st, p.ParamTypes)
		if err != nil {
			s.statementDone()
			s.onError()
			return nil, err
		}
		if described && !sameColumns(fresh.Columns, p.Columns) {
			s.statementDone()
			s.onError()
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
		}
		p.plan = fresh.plan
		p.Columns = fresh.Columns
		p.deferred = false
		if len(params) < len(fresh.ParamTypes) {
			return nil, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", len(params)+1)
		}
	}
	// AS OF SYSTEM TIME is bound with the plan: a historical statement
	// reads at its timestamp.
	if err := s.prepareAsOf(p.plan.plan); err != nil {
		s.statementDone()
		s.onError()
		return nil, err
	}
	// A block AS OF SYSTEM TIME bound against the catalog of its time
	// (asOfCatalog) reads through a plain view, as a historical SELECT.
	if s.stmtAsOf != nil || (s.txnAsOf != nil && s.asOfBound != nil) {
		if _, err := s.asOfSnapshot(st.Txn == nil); err != nil {
			s.statementDone()
			s.onError()
			return nil, s.mapError(ctx, err)
		}
	}
	stmtCtx, cancel := s.statementContext(ctx)
	// An autocommit write of a table whose schema an open block is
	// changing waits for the block (txnddl.go) before it takes any table
	// lock, then binds again against the schema the block left.
	if waited, err := s.waitHold(stmtCtx, p.plan.plan); err != nil || waited {
		cancel()
		s.statementDone()
		if err != nil {
			err = s.mapError(stmtCtx, err)
			s.onError()
			return nil, err
		}
		return s.Execute(ctx, p, params)
	}
	ctx = stmtCtx
	// The table locks (tablelocks.go); a statement that waited for one
	// takes its snapshot again, so that it sees what the holder
	// committed.
	if err := s.lockForStatement(ctx, p, st.Txn == nil); err != nil {
		cancel()
		err = s.mapError(ctx, err)
		s.statementDone()
		s.onError()
		s.releaseStatementLocks()
		return nil, err
	}
	s.currentText = p.SQL
	s.planningTime = p.plan.planning
	res, err := s.run(ctx, p.plan.plan, params)
	if err != nil {
		cancel()
		err = s.mapError(ctx, err)
		s.statementDone()
		s.onError()
		s.releaseStatementLocks()
		return nil, err
	}
	return &sessionResult{Result: res, s: s, ctx: ctx, cancel: cancel}, nil
}

// endsTransaction reports whether st may run in a failed block: it ends
// the block or rolls back to a savepoint, which ends the failure.
func endsTransaction(st parser.Statement) bool {
	return st.Txn != nil && (st.Txn.Kind == parser.TxnCommit || st.Txn.Kind == parser.TxnRollback ||
		st.Txn.Kind == parser.TxnRollbackTo)
}

func sameColumns(a, b []ResultColumn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}

// statementContext applies statement_timeout and lock_timeout.
//
// Without a statement_timeout the statement runs under the caller's
// context itself: nothing the session starts needs a cancellation of its
// own at the result's Close (the executor's parallel scans cancel and wait
// for their workers in their own Close; cursors detach from the statement
// with context.WithoutCancel), and the caller's cancellation still aborts
// the statement. A context.WithCancel here cost every statement a context,
// a channel and a children map in the caller's per-statement context (the
// server's portal), 3.3% of the server's CPU on point SELECTs at 4
// clients (server's BenchmarkWire/point, sql's
// BenchmarkPointSelect/*/portal-context).
func (s *Session) statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := s.vars.LockTimeout(); d > 0 {
		ctx = txn.WithLockTimeout(ctx, d)
	}
	if d := s.vars.StatementTimeout(); d > 0 {
		return context.WithTimeoutCause(ctx, d, errStatementTimeout)
	}
	return ctx, noCancel
}

// noCancel is statementContext's cancel function when the statement has no
// context of its own.
func noCancel() {}

// memLimit is the bytes of rows a statement may hold for sorts, grouping,
// DISTINCT, hash joins and INSERT sources: the session's work_mem, capped
// by the server's --max-query-memory. PostgreSQL applies work_mem per sort
// or hash and spills beyond it; PivotDB counts the statement's total and
// fails with 53200 instead of spilling.
func (s *Session) memLimit() int64 {
	limit := s.vars.WorkMem()
	if m := s.e.opts.MaxQueryMemory; m > 0 && (limit <= 0 || m < limit) {
		limit = m
	}
	return limit
}

var errStatementTimeout = errors.New("statement timeout")

// mapError turns context errors into 57014 with PostgreSQL's wording, and
// a commit refused for want of disk space into 53100.
func (s *Session) mapError(ctx context.Context, err error) error {
	if e, ok := belowGCError(err); ok {
		return e
	}
	if e, ok := s.schemaChangedError(err); ok {
		return e
	}
	if errors.Is(err, storage.ErrOutcomeUnknown) {
		// A replicated commit whose proposal timed out (cluster/shardrepl).
		return &sqlerr.Error{Code: "08007", Message: "transaction resolution unknown: " + err.Error(),
			Hint: "The commit may still take effect; read the data again before retrying."}
	}
	var repl *storage.ReplicatedError
	if errors.As(err, &repl) {
		// An engine whose commits go through Raft groups (cluster/shardrepl).
		return sqlerr.NotSupported("%s on a cluster", repl.Op)
	}
	var full *storage.DiskFullError
	if errors.As(err, &full) {
		return &sqlerr.Error{Code: sqlerr.DiskFull, Message: "could not write to the data directory: No space left on device",
			Detail: fmt.Sprintf("%s of disk space is free; the server keeps %s in reserve (--disk-reserve).",
				storage.FormatBytes(full.AvailBytes), storage.FormatBytes(full.ReserveBytes)),
			Hint: "Free disk space; writes resume without a restart once there is room."}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if errors.Is(context.Cause(ctx), errStatementTimeout) {
			return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")
		}
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	if errors.Is(err, partition.ErrTableNotFound) {
		// The statement was bound to a table that a concurrent schema
		// change dropped or rewrote under a new id (ALTER COLUMN TYPE,
		// ADD PRIMARY KEY); run again, it binds to the table as it is now.
		return sqlerr.New(sqlerr.SerializationFailure,
			"could not serialize access: the table was dropped or rewritten by a concurrent schema change")
	}
	if errors.Is(err, storage.ErrClosed) {
		return &sqlerr.Error{Code: sqlerr.AdminShutdown, Message: "terminating connection due to administrator command", Fatal: true}
	}
	return err
}

// onError fails an open transaction block, as any error does in PostgreSQL.
func (s *Session) onError() {
	if s.txn != nil || s.implicit {
		s.failed = true
	}
}

// reader is what a query reads: the open transaction's view, or the
// committed data of the statement's snapshot; concurrent is set when
// several iterators may read it at once (parallel scans).
func (s *Session) reader() (r storage.Reader, concurrent bool) {
	if s.readView != nil {
		return s.readView, s.txn == nil
	}
	if s.txnAsOf != nil && s.snap != nil {
		// A block AS OF SYSTEM TIME is read-only: it has no writes of its
		// own, and reads the historical view (session_asof.go).
		return s.snap, false
	}
	if s.txn != nil {
		// A transaction that has written nothing reads its snapshot, which
		// parallel scans may share (at REPEATABLE READ and SERIALIZABLE a
		// protocol cycle's query begins one: session_retry.go).
		if v, ok := s.txn.CleanView(); ok {
			return v, true
		}
		return s.txn.Reader(), false
	}
	if s.snap != nil {
		return s.snap, true
	}
	return s.e.storage, true
}

// prepareCatalog sets the catalog a statement is prepared against: the
// one of a REPEATABLE READ transaction's snapshot, else the newest (on a
// follower engine the newest its replica is complete at: follower.go's
// followerPrepareCatalog). Execute binds again if its snapshot's differs.
func (s *Session) prepareCatalog() {
	s.stmtCatalog = nil
	if s.txn != nil && s.txn.SnapshotFixed() {
		s.stmtCatalog, _ = s.e.catalog.At(s.txn.ReadTimestamp())
	} else if s.e.follower() {
		s.stmtCatalog = s.followerPrepareCatalog()
	}
}

// takeSnapshot starts a statement's snapshot: a read timestamp at or above
// every commit acknowledged so far, which the statement's reads of every
// shard and index use, also through the open transaction. READ COMMITTED
// takes one per statement; a REPEATABLE READ transaction keeps the one of
// its first statement that fixes it (fix: not transaction control).
func (s *Session) takeSnapshot(fix bool) error {
	if ok, err := s.asOfSnapshot(fix); ok {
		return err
	}
	if s.txn != nil && s.txn.SnapshotFixed() {
		s.snap = s.e.storage.At(s.txn.ReadTimestamp())
		s.snapTime = s.txnSnapTime
		s.stmtCatalog, _ = s.e.catalog.At(s.snap.Timestamp())
		return nil
	}
	if s.staleReadOnly() {
		return s.staleSnapshot(fix) // follower.go
	}
	if ok, err := s.closedBindSnapshot(); ok {
		return err // follower.go
	}
	ts, err := s.holdReadTimestamp()
	if err != nil {
		return err
	}
	s.snap = s.e.storage.At(ts)
	s.snapTime = s.e.opts.Now()
	s.txnSnapTime = s.snapTime
	// The schema as of the snapshot: every schema change committed at or
	// below ts is installed by now (ReadTimestamp waited for it).
	s.stmtCatalog, _ = s.e.catalog.At(ts)
	if s.txn != nil {
		s.txn.SetReadTimestamp(ts)
		if fix {
			// The level may have changed since BEGIN (SET TRANSACTION);
			// the first statement fixes it.
			s.txn.SetIsolation(s.isolation())
			s.txn.StartStatement()
		}
	}
	return nil
}

// isolation returns the isolation level of the session's current
// transaction (txnMode: the block's, or a statement's own).
func (s *Session) isolation() txn.Isolation {
	switch s.txnMode().Isolation {
	case txnmode.RepeatableRead:
		return txn.RepeatableRead
	case txnmode.Serializable:
		return txn.Serializable
	}
	return txn.ReadCommitted
}

// writeTxn runs fn in the open transaction, or in a transaction of its own
// that commits when fn succeeds (autocommit).
func (s *Session) writeTxn(ctx context.Context, fn func(t *txn.Txn) error) error {
	// A transaction begun by a statement starts with it (at REPEATABLE
	// READ, its snapshot is the statement's).
	if s.txn == nil && s.implicit {
		s.txn = s.beginTxn()
		s.txn.StartStatement()
	}
	if s.txn != nil {
		return fn(s.txn)
	}
	t := s.beginTxn()
	t.StartStatement()
	if err := fn(t); err != nil {
		t.Rollback()
		return err
	}
	return t.Commit()
}

func (s *Session) evalContext(ctx context.Context, params []types.Value) *expr.Context {
	c := &struct {
		ec   expr.Context
		seqs sessionSeqs
	}{}
	s.fillEvalContext(&c.ec, &c.seqs, ctx, params)
	return &c.ec
}

// fillEvalContext sets up ec, whose sequence functions are seqs, for a
// statement running under ctx with params. Callers allocate both with
// whatever else the statement needs, in one piece.
func (s *Session) fillEvalContext(ec *expr.Context, seqs *sessionSeqs, ctx context.Context, params []types.Value) {
	*seqs = sessionSeqs{s, ctx}
	*ec = expr.Context{Ctx: ctx, Params: params, Now: s.statementTime(), ReadTime: s.snapTime, Sequences: seqs, Zone: s.vars.Zone(), Style: s.vars.Style()}
	if s.snap != nil {
		ts := s.snap.Timestamp()
		ec.ReadWall, ec.ReadLogical = ts.WallTime, ts.Logical
	}
	ec.FollowerReadOffset = s.e.opts.FollowerReads.Offset() // follower.go
}

// sessionResult maps errors raised while rows stream (cancel, timeout) and
// fails the transaction block on them.
type sessionResult struct {
	Result
	s      *Session
	ctx    context.Context
	cancel context.CancelFunc
}

func (r *sessionResult) Next(ctx context.Context) ([]types.Value, error) {
	row, err := r.Result.Next(r.ctx)
	if err != nil {
		err = r.s.mapError(r.ctx, err)
		r.s.onError()
	}
	// A timestamptz prints in the session's TimeZone, as it is when the
	// row goes out (the value is an instant; the zone only travels with
	// it for printing). The row may be the executor's own (a constant
	// VALUES row reused by the next execution), so it is copied first.
	return presentRow(row, r.s.vars), err
}

// presentRow readies a row for output in the session's TimeZone (a
// timestamptz prints in it) and DateStyle and IntervalStyle (dates,
// times and intervals print in them): presentation the values carry to
// Text (types.InZone, types.WithStyle). The row may be the executor's own
// (a constant VALUES row reused by the next execution), so it is copied
// before it changes.
func presentRow(row []types.Value, vars *sessionvars.Vars) []types.Value {
	copied := false
	// The settings are looked up only for a row holding a value they
	// apply to: most rows hold none, and the look-ups cost more than the
	// rest of a plain row's way out.
	looked := false
	var zone string
	var st types.Style
	for i, v := range row {
		f := v.Family()
		if f == types.Array {
			f = v.ArrayElemType().Family
		}
		tz := f == types.TimestampTZ
		if !tz && !types.StyleDependent(f) {
			continue
		}
		if !looked {
			zone, st, looked = vars.ZoneName(), vars.Style(), true
		}
		styled := st != 0 && types.StyleDependent(f)
		if !tz && !styled {
			continue
		}
		if !copied {
			row, copied = append([]types.Value(nil), row...), true
		}
		if tz {
			v = v.InZone(zone)
		}
		if styled {
			v = v.WithStyle(st)
		}
		row[i] = v
	}
	return row
}

func (r *sessionResult) Close() {
	r.Result.Close()
	r.cancel()
	r.s.statementDone()
	r.s.releaseStatementLocks()
}

type emptyResult struct{}

func (emptyResult) Columns() []ResultColumn                     { return nil }
func (emptyResult) Next(context.Context) ([]types.Value, error) { return nil, nil }
func (emptyResult) Tag() string                                 { return "" }
func (emptyResult) Close()                                      {}

// tagResult is the result of a statement that returns no rows.
type tagResult struct{ tag string }

func (r *tagResult) Columns() []ResultColumn                     { return nil }
func (r *tagResult) Next(context.Context) ([]types.Value, error) { return nil, nil }
func (r *tagResult) Tag() string                                 { return r.tag }
func (r *tagResult) Close()                                      {}

// rowsResult streams rows from a function.
type rowsResult struct {
	cols []ResultColumn
	// query, when set, are the columns of a query's plan, whose first
	// visible of them (hidden ones come last) are the result's; cols is
	// built from them the first time Columns is asked for, which the
	// extended protocol's Execute never does (the statement was described
	// at Parse), so a prepared point SELECT does not allocate it.
	query   []planner.Column
	visible int
	// The rows come from next, or from selectIt when next is nil: a
	// query's iterator, whose rows are cut to the len(cols) visible
	// columns (hidden ones come last), and which Close closes.
	next     func() ([]types.Value, error)
	close    func()
	selectIt exec.Iter
	count    int
	verb     string
	// wireIt, when set, is the iterator next reads, which may give the
	// same rows' stored encodings (wirerows.go).
	wireIt exec.Iter
}

func (r *rowsResult) Columns() []ResultColumn {
	if r.cols == nil && r.query != nil {
		r.cols = resultColumns(r.query)
	}
	return r.cols
}

// width is the number of the result's columns.
func (r *rowsResult) width() int {
	if r.query != nil {
		return r.visible
	}
	return len(r.cols)
}

func (r *rowsResult) Next(ctx context.Context) ([]types.Value, error) {
	var row []types.Value
	var err error
	if r.next != nil {
		row, err = r.next()
	} else if r.selectIt == nil {
		return nil, nil // closed
	} else if row, err = r.selectIt.Next(); err != nil {
		row = nil
	} else if row != nil {
		row = row[:r.width()]
	}
	if row != nil {
		r.count++
	}
	return row, err
}

func (r *rowsResult) Tag() string {
	if r.verb == "" {
		// Not fmt.Sprintf: every SELECT ends here (2.3% of a point
		// SELECT's server CPU at 4 clients went to formatting it), and
		// the usual counts of a point SELECT are constants.
		if r.count < len(smallSelectTags) {
			return smallSelectTags[r.count]
		}
		return "SELECT " + strconv.Itoa(r.count)
	}
	return r.verb
}

// smallSelectTags are the tags of SELECTs that return no row or one.
var smallSelectTags = [...]string{"SELECT 0", "SELECT 1"}

func (r *rowsResult) Close() {
	if r.close != nil {
		r.close()
		r.close = nil
	}
	if r.selectIt != nil {
		r.selectIt.Close()
		r.selectIt = nil
	}
}

// staticRows returns a result holding precomputed rows.
func staticRows(cols []ResultColumn, rows [][]types.Value, verb string) *rowsResult {
	i := 0
	return &rowsResult{cols: cols, verb: verb, next: func() ([]types.Value, error) {
		if i >= len(rows) {
			return nil, nil
		}
		i++
		return rows[i-1], nil
	}}
}
