package tests

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestIdleSessionTimeout: with idle_session_timeout set, a session idle
// outside a transaction block is ended with FATAL 57P05, as in PostgreSQL.
func TestIdleSessionTimeout(t *testing.T) {
	srv := startServer(t)
	fe, nc := rawConnect(t, srv)
	defer nc.Close()
	simpleQuery(t, fe, nc, "SET idle_session_timeout = '300ms'")
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	msg, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := msg.(*pgproto3.ErrorResponse)
	if !ok || e.Code != "57P05" || e.Severity != "FATAL" {
		t.Fatalf("got %#v", msg)
	}
	if _, err := fe.Receive(); err == nil {
		t.Fatal("connection still open")
	}
}
