package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pivotdb/pivotdb/sql/auth"
)

// passwordMap is a PasswordStore for tests.
type passwordMap map[string]string

func (m passwordMap) PasswordVerifier(user string) (string, bool) {
	v, ok := m[user]
	return v, ok && v != ""
}

func scramPasswords(t testing.TB) passwordMap {
	t.Helper()
	v, err := auth.HashPassword("right")
	if err != nil {
		t.Fatal(err)
	}
	return passwordMap{"pivotdb": v, "nopw": "", "broken": "SCRAM-SHA-256$bad"}
}

func TestSCRAMLogin(t *testing.T) {
	ts := startServer(t, Config{Auth: AuthSCRAM, Passwords: scramPasswords(t)}, nil)
	try := func(user, pw string) error {
		url := fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/pivotdb?sslmode=disable", user, pw, ts.port())
		c, err := pgconn.Connect(testContext(t), url)
		if err == nil {
			c.Close(context.Background())
		}
		return err
	}
	if err := try("pivotdb", "right"); err != nil {
		t.Fatalf("right password: %v", err)
	}
	for _, tc := range []struct{ user, pw string }{
		{"pivotdb", "wrong"}, {"nobody", "right"}, {"nopw", "x"}, {"broken", "x"},
	} {
		err := try(tc.user, tc.pw)
		var pe *pgconn.PgError
		want := fmt.Sprintf("password authentication failed for user %q", tc.user)
		if !errors.As(err, &pe) || pe.Code != "28P01" || pe.Severity != "FATAL" || pe.Message != want || pe.Detail != "" {
			t.Errorf("%s/%s: got %v, want FATAL 28P01 %q without detail", tc.user, tc.pw, err, want)
		}
	}
}

// TestSCRAMProtocolErrors drives the exchange by hand with messages a
// correct client never sends.
func TestSCRAMProtocolErrors(t *testing.T) {
	ts := startServer(t, Config{Auth: AuthSCRAM, Passwords: scramPasswords(t)}, nil)
	start := func() *rawConn {
		rc := ts.dialRaw(t)
		rc.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
			Parameters: map[string]string{"user": "pivotdb"}})
		rc.fe.Flush()
		msg, err := rc.fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if m, ok := msg.(*pgproto3.AuthenticationSASL); !ok || len(m.AuthMechanisms) != 1 || m.AuthMechanisms[0] != "SCRAM-SHA-256" {
			t.Fatalf("got %#v, want AuthenticationSASL SCRAM-SHA-256", msg)
		}
		return rc
	}
	wantFatal := func(rc *rawConn, code string) {
		t.Helper()
		for {
			msg, err := rc.fe.Receive()
			if err != nil {
				t.Fatalf("connection ended without an error: %v", err)
			}
			if e, ok := msg.(*pgproto3.ErrorResponse); ok {
				if e.Code != code || e.Severity != "FATAL" {
					t.Fatalf("got %s %s %s, want FATAL %s", e.Severity, e.Code, e.Message, code)
				}
				return
			}
			if _, ok := msg.(*pgproto3.AuthenticationOk); ok {
				t.Fatal("authenticated")
			}
		}
	}

	rc := start()
	rc.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256-PLUS", Data: []byte("p=tls-server-end-point,,n=,r=abc")})
	rc.fe.Flush()
	wantFatal(rc, "08P01")

	rc = start()
	rc.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("garbage")})
	rc.fe.Flush()
	wantFatal(rc, "08P01")

	// A password message where a SASL response belongs.
	rc = start()
	rc.fe.Send(&pgproto3.PasswordMessage{Password: "right"})
	rc.fe.Flush()
	wantFatal(rc, "08P01")

	// A well-formed first message, then a proof that is wrong.
	rc = start()
	rc.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=clientnonce")})
	rc.fe.Flush()
	msg, err := rc.fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	cont, ok := msg.(*pgproto3.AuthenticationSASLContinue)
	if !ok {
		t.Fatalf("got %#v", msg)
	}
	var nonce string
	for _, f := range splitComma(string(cont.Data)) {
		if len(f) > 2 && f[:2] == "r=" {
			nonce = f[2:]
		}
	}
	rc.fe.Send(&pgproto3.SASLResponse{Data: []byte("c=biws,r=" + nonce + ",p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")})
	rc.fe.Flush()
	wantFatal(rc, "28P01")
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func TestMaxConnectionsUnit(t *testing.T) {
	ts := startServer(t, Config{MaxConnections: 1}, nil)
	c, err := pgconn.Connect(testContext(t), ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = pgconn.Connect(testContext(t), ts.connString(""))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || pe.Severity != "FATAL" {
		t.Fatalf("second connection: %v", err)
	}
	c.Close(context.Background())
	// The slot is released once the first connection's goroutine ends.
	for i := 0; ; i++ {
		c2, err := pgconn.Connect(testContext(t), ts.connString(""))
		if err == nil {
			c2.Close(context.Background())
			break
		}
		if i > 1000 {
			t.Fatalf("slot never freed: %v", err)
		}
	}
}
