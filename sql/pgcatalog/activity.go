package pgcatalog

import (
	"strconv"

	"github.com/pivotdb/pivotdb/activity"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The live sessions: pg_stat_activity and the functions that signal
// another session (pg_cancel_backend, pg_terminate_backend), read from the
// registry of package activity through the session's own Backend.

var pgStatActivityCols = cols("datid oid, datname name, pid int4, leader_pid int4, usesysid oid, usename name, " +
	"application_name text, client_addr text, client_hostname text, client_port int4, backend_start timestamp, " +
	"xact_start timestamp, query_start timestamp, state_change timestamp, wait_event_type text, wait_event text, " +
	"state text, backend_xid xid, backend_xmin xid, query_id int8, query text, backend_type text")

func pgStatActivityRows(v *View) [][]types.Value {
	var out [][]types.Value
	for _, b := range v.Backend.Registry().List() {
		var datid any
		for _, d := range v.Snapshot.Databases() {
			if d.Name == b.Database {
				datid = d.ID
			}
		}
		var usesysid any
		for i, r := range v.roles() {
			if r == b.User {
				usesysid = roleOID(i)
			}
		}
		var clientAddr, clientPort any
		if b.ClientAddr != "" {
			clientAddr, clientPort = b.ClientAddr, b.ClientPort
		} else {
			clientPort = -1 // PostgreSQL's answer for a Unix socket
		}
		if !v.seesActivityOf(b.User) {
			// PostgreSQL hides what another role's session does from
			// those without its privileges or pg_read_all_stats.
			out = append(out, row(pgStatActivityCols, datid, b.Database, int64(b.PID), nil, usesysid, b.User,
				b.ApplicationName, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
				"<insufficient privilege>", "client backend"))
			continue
		}
		out = append(out, row(pgStatActivityCols, datid, b.Database, int64(b.PID), nil, usesysid, b.User,
			b.ApplicationName, clientAddr, nil, clientPort, b.BackendStart, b.XactStart, b.QueryStart,
			b.StateChange, nullIfEmpty(b.WaitEventType), nullIfEmpty(b.WaitEvent), b.State, nil, nil, nil,
			b.Query, "client backend"))
	}
	return out
}

// backendFuncs are pg_backend_pid and the signalling functions.
func backendFuncs() map[string]*sessionFunc {
	return map[string]*sessionFunc{
		"pg_backend_pid": sig(0, 0).as(func(v *View, _ []expr.Expr) (expr.Expr, error) {
			if v.Backend == nil {
				return expr.NullOf(tInt4), nil
			}
			return &expr.Const{Value: types.NewInt(types.Int32, int64(v.Backend.PID)), Typ: tInt4}, nil
		}),
		"pg_cancel_backend": sig(1, 1, tInt4).as(signalBackend("pg_cancel_backend", func(b *activity.Backend) {
			b.Cancel()
		})),
		"pg_terminate_backend": sig(1, 2, tInt4, types.TypeInt64).as(signalBackend("pg_terminate_backend", func(b *activity.Backend) {
			b.Terminate()
		})),
	}
}

// signalBackend builds a function that signals the backend with the PID
// of its argument, as PostgreSQL's do: true when the signal was sent, a
// WARNING-free false for a PID that is not a live session, 42501 for a
// session of another user unless the caller is a superuser.
func signalBackend(name string, signal func(*activity.Backend)) buildFunc {
	return func(v *View, args []expr.Expr) (expr.Expr, error) {
		return perRow(name, tBool, func(a []types.Value) (types.Value, error) {
			b, ok := v.Backend.Registry().Lookup(uint32(a[0].Int()))
			if !ok || a[0].Int() < 0 {
				return types.NewBool(false), nil
			}
			if err := v.maySignal(name, b.User); err != nil {
				return types.Value{}, err
			}
			signal(b)
			return types.NewBool(true), nil
		})(v, args[:1])
	}
}

// maySignal applies PostgreSQL's rule for signalling another session:
// only a superuser may signal a superuser's session; otherwise the caller
// must have the privileges of the session's role (be it, or a member of
// it) or be a member of pg_signal_backend.
func (v *View) maySignal(fn, target string) error {
	acc := v.Snapshot.Access(v.User)
	super, member := "must be a superuser to cancel superuser query",
		"must be a member of the role whose query is being canceled or member of pg_signal_backend"
	if fn == "pg_terminate_backend" {
		super, member = "must be a superuser to terminate superuser process",
			"must be a member of the role whose process is being terminated or member of pg_signal_backend"
	}
	if v.role(target).Superuser && !acc.Superuser() {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "%s", super)
	}
	if target == v.User || acc.MemberOf(target) || acc.InRole("pg_signal_backend") {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "%s", member)
}

// seesActivityOf tells whether the session's user may see what a session
// of role does (state, query, times, client address).
func (v *View) seesActivityOf(role string) bool {
	acc := v.Snapshot.Access(v.User)
	return role == v.User || acc.MemberOf(role) || acc.InRole("pg_read_all_stats")
}

// TableStats are one table's figures for pg_stat_user_tables.
type TableStats struct {
	SeqScan, IdxScan int64
	// SeqTupRead is the rows range scans read from storage, IdxTupFetch
	// the rows point lookups found plus the entries index scans read.
	SeqTupRead, IdxTupFetch    int64
	Inserted, Updated, Deleted int64
	LiveRows                   int64
	// LiveRowsUnknown: a split's counts have not landed yet.
	LiveRowsUnknown bool
	// VACUUM and ANALYZE runs since the server started, and when the last
	// one ended (Unix microseconds; 0: none).
	Vacuums, Analyzes       int64
	LastVacuum, LastAnalyze int64
}

var pgStatUserTablesCols = cols("relid oid, schemaname name, relname name, seq_scan int8, seq_tup_read int8, " +
	"idx_scan int8, idx_tup_fetch int8, n_tup_ins int8, n_tup_upd int8, n_tup_del int8, n_tup_hot_upd int8, " +
	"n_live_tup int8, n_dead_tup int8, n_mod_since_analyze int8, n_ins_since_vacuum int8, last_vacuum timestamp, " +
	"last_autovacuum timestamp, last_analyze timestamp, last_autoanalyze timestamp, vacuum_count int8, " +
	"autovacuum_count int8, analyze_count int8, autoanalyze_count int8")

// pgStatUserTablesRows: scans, rows read, row writes and VACUUM / ANALYZE
// runs counted since the server started, live rows from the shard
// statistics. PivotDB has neither dead tuples, HOT updates nor autovacuum:
// those columns are NULL rather than a made-up zero.
func pgStatUserTablesRows(v *View) [][]types.Value {
	if v.TableStats == nil {
		return nil
	}
	var out [][]types.Value
	for _, t := range v.tables() {
		st, err := v.TableStats(t.ID)
		if err != nil {
			continue
		}
		var live any = st.LiveRows
		if st.LiveRowsUnknown {
			live = nil
		}
		at := func(micros int64) any {
			if micros == 0 {
				return nil
			}
			return types.NewTimestamp(micros)
		}
		out = append(out, row(pgStatUserTablesCols, int64(t.ID), "public", t.Name, st.SeqScan, st.SeqTupRead, st.IdxScan,
			st.IdxTupFetch, st.Inserted, st.Updated, st.Deleted, nil, live, nil, nil, nil, at(st.LastVacuum), nil,
			at(st.LastAnalyze), nil, st.Vacuums, nil, st.Analyzes, nil))
	}
	return out
}

// LockRow is one row of pg_locks.
type LockRow struct {
	LockType      string // "relation", "tuple" or "transactionid"
	Relation      int64  // a tuple lock's table
	TransactionID int64  // a transactionid lock's transaction
	PID           uint32
	Mode          string
	Granted       bool
	Virtual       uint64 // the transaction holding or requesting the lock
}

var pgLocksCols = cols("locktype text, database oid, relation oid, page int4, tuple int2, virtualxid text, " +
	"transactionid xid, classid oid, objid oid, objsubid int2, virtualtransaction text, pid int4, mode text, " +
	"granted bool, fastpath bool, waitstart timestamp")

func pgLocksRows(v *View) ([][]types.Value, error) {
	if v.Locks == nil {
		return nil, nil
	}
	locks, err := v.Locks()
	if err != nil {
		return nil, err
	}
	var out [][]types.Value
	for _, l := range locks {
		var database, relation, xid any
		if l.LockType != "transactionid" {
			relation = l.Relation
			if t, ok := v.Snapshot.TableByID(uint64(l.Relation)); ok {
				database = int64(t.DatabaseID)
			}
		} else {
			xid = l.TransactionID
		}
		var pid any
		if l.PID != 0 {
			pid = int64(l.PID)
		}
		out = append(out, row(pgLocksCols, l.LockType, database, relation, nil, nil, nil, xid, nil, nil, nil,
			"1/"+strconv.FormatUint(l.Virtual, 10), pid, l.Mode, l.Granted, false, nil))
	}
	return out, nil
}
