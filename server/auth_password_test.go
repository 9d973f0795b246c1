package server

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestPasswordLogin: --auth password asks for the password in the clear and
// checks it against the stored SCRAM verifiers; every failure is the same
// FATAL 28P01 without detail.
func TestPasswordLogin(t *testing.T) {
	ts := startServer(t, Config{Auth: AuthPassword, Passwords: scramPasswords(t)}, nil)
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
		{"pivotdb", "wrong"}, {"pivotdb", "Right"}, {"nobody", "right"}, {"nopw", "x"}, {"broken", "x"},
	} {
		err := try(tc.user, tc.pw)
		var pe *pgconn.PgError
		want := fmt.Sprintf("password authentication failed for user %q", tc.user)
		if !errors.As(err, &pe) || pe.Code != "28P01" || pe.Severity != "FATAL" || pe.Message != want || pe.Detail != "" {
			t.Errorf("%s/%s: got %v, want FATAL 28P01 %q without detail", tc.user, tc.pw, err, want)
		}
	}
}

// TestPasswordProtocol drives the exchange by hand: the server asks for a
// cleartext password; an empty one fails as a wrong one does, and a
// message of another kind in its place is a protocol violation.
func TestPasswordProtocol(t *testing.T) {
	ts := startServer(t, Config{Auth: AuthPassword, Passwords: scramPasswords(t)}, nil)
	start := func() *rawConn {
		rc := ts.dialRaw(t)
		rc.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
			Parameters: map[string]string{"user": "pivotdb"}})
		rc.fe.Flush()
		msg, err := rc.fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.AuthenticationCleartextPassword); !ok {
			t.Fatalf("got %#v, want AuthenticationCleartextPassword", msg)
		}
		return rc
	}
	result := func(rc *rawConn) (ok bool, code string) {
		t.Helper()
		for {
			msg, err := rc.fe.Receive()
			if err != nil {
				t.Fatalf("connection ended without an answer: %v", err)
			}
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				if m.Severity != "FATAL" {
					t.Fatalf("got %s %s %s, want a FATAL", m.Severity, m.Code, m.Message)
				}
				return false, m.Code
			case *pgproto3.AuthenticationOk:
				return true, ""
			}
		}
	}
	for _, tc := range []struct {
		msg  pgproto3.FrontendMessage
		ok   bool
		code string
	}{
		{&pgproto3.PasswordMessage{Password: "right"}, true, ""},
		{&pgproto3.PasswordMessage{Password: ""}, false, "28P01"},
		{&pgproto3.PasswordMessage{Password: "wrong"}, false, "28P01"},
		// A SASL message has the password message's type byte: it is read
		// as a password (its text up to the first zero byte), as
		// PostgreSQL reads it, and fails as a wrong one.
		{&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")}, false, "28P01"},
		{&pgproto3.Query{String: "SELECT 1"}, false, "08P01"},
	} {
		rc := start()
		rc.fe.Send(tc.msg)
		rc.fe.Flush()
		if ok, code := result(rc); ok != tc.ok || code != tc.code {
			t.Errorf("%#v: authenticated %v, code %q; want %v, %q", tc.msg, ok, code, tc.ok, tc.code)
		}
	}
	if m, err := ParseAuthMethod("Password"); err != nil || m != AuthPassword || m.String() != "password" || !m.NeedsPasswords() {
		t.Errorf("ParseAuthMethod(Password) = %v, %v", m, err)
	}
	if err := New(Config{Auth: AuthPassword, Listen: "127.0.0.1:0"}, nil).Listen(); err == nil {
		t.Error("password authentication without a password store listened")
	}
}
