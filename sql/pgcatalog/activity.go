package pgcatalog

import (
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
		out = append(out, row(pgStatActivityCols, datid, b.Database, int64(b.PID), nil, usesysid, b.User,
			b.ApplicationName, clientAddr, nil, clientPort, b.BackendStart, b.XactStart, b.QueryStart,
			b.StateChange, nullIfEmpty(b.WaitEventType), nullIfEmpty(b.WaitEvent), b.State, nil, nil, nil,
			b.Query, "client backend"))
	}
	return out
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
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
			if b.User != v.User && !v.isSuperuser(v.User) {
				return types.Value{}, sqlerr.New(sqlerr.InsufficientPrivilege,
					"permission denied to %s: must be a superuser or have the same role as the process being signaled",
					map[string]string{"pg_cancel_backend": "cancel query", "pg_terminate_backend": "terminate process"}[name])
			}
			signal(b)
			return types.NewBool(true), nil
		})(v, args[:1])
	}
}

// isSuperuser tells whether role has a superuser's rights. PivotDB has no
// privileges yet (every user may do everything, design.md §2), so every
// role is one, as pg_roles.rolsuper says.
func (v *View) isSuperuser(role string) bool { return true }
