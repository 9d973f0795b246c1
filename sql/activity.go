package sql

import "github.com/pivotdb/pivotdb/activity"

// SetBackend tells the session its entry in the server's registry of live
// sessions: pg_backend_pid answers its PID, and pg_stat_activity,
// pg_cancel_backend and pg_terminate_backend reach the other sessions of
// the registry through it. The server calls it once, after startup.
func (s *Session) SetBackend(b *activity.Backend) { s.backend = b }
