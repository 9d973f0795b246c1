package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

func TestAuthThrottle(t *testing.T) {
	now := time.Unix(1e9, 0)
	a := newAuthThrottle(time.Second, 5*time.Second)
	a.now = func() time.Time { return now }
	var got []time.Duration
	for range 5 {
		got = append(got, a.failed("10.0.0.1"))
	}
	want := []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("delays %v, want %v", got, want)
	}
	// Another address has its own count.
	if d := a.failed("10.0.0.2"); d != time.Second {
		t.Fatalf("other address: %v", d)
	}
	// Success resets.
	a.succeeded("10.0.0.1")
	if d := a.failed("10.0.0.1"); d != time.Second {
		t.Fatalf("after success: %v", d)
	}
	// So does a quiet spell.
	a.failed("10.0.0.1")
	now = now.Add(authThrottleForget + time.Second)
	if d := a.failed("10.0.0.1"); d != time.Second {
		t.Fatalf("after %v without failures: %v", authThrottleForget, d)
	}
	// Off.
	if d := newAuthThrottle(-1, time.Second).failed("x"); d != 0 {
		t.Fatalf("disabled throttle: %v", d)
	}
	// The map stays bounded.
	b := newAuthThrottle(time.Millisecond, time.Second)
	for i := range authThrottleMaxAddrs + 10 {
		b.failed(fmt.Sprint(i))
	}
	if n := len(b.addrs); n > authThrottleMaxAddrs {
		t.Fatalf("%d addresses remembered", n)
	}
}

// delayRecorder stands in for the throttle's sleep.
type delayRecorder struct {
	mu sync.Mutex
	d  []time.Duration
}

func (r *delayRecorder) sleep(_ context.Context, d time.Duration) {
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

func (r *delayRecorder) take() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.d
	r.d = nil
	return d
}

// TestAuthFailureDelay logs in over the wire with wrong passwords: each
// failure is answered after a delay that doubles up to the cap, and a
// successful login resets it.
func TestAuthFailureDelay(t *testing.T) {
	rec := &delayRecorder{}
	ts := startServer(t, Config{Auth: AuthSCRAM, Passwords: scramPasswords(t),
		AuthFailureDelay: time.Second, AuthFailureMaxDelay: 3 * time.Second, testAuthSleep: rec.sleep}, nil)
	try := func(pw string) error {
		url := fmt.Sprintf("postgres://pivotdb:%s@127.0.0.1:%d/pivotdb?sslmode=disable", pw, ts.port())
		c, err := pgconn.Connect(testContext(t), url)
		if err == nil {
			c.Close(context.Background())
		}
		return err
	}
	for range 4 {
		var pe *pgconn.PgError
		if err := try("wrong"); !errors.As(err, &pe) || pe.Code != "28P01" {
			t.Fatalf("wrong password: %v", err)
		}
	}
	if got, want := rec.take(), []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}; !slices.Equal(got, want) {
		t.Fatalf("delays %v, want %v", got, want)
	}
	if err := try("right"); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("a successful login waited %v", got)
	}
	try("wrong")
	if got := rec.take(); !slices.Equal(got, []time.Duration{time.Second}) {
		t.Fatalf("after a success: delays %v, want [1s]", got)
	}
}

// TestTLSRequired: plaintext clients get FATAL 28000 before they
// authenticate; TLS clients are served.
func TestTLSRequired(t *testing.T) {
	ts := startServer(t, Config{TLS: selfSignedTLS(), TLSRequired: true}, nil)
	_, err := pgconn.Connect(testContext(t), ts.connString(""))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28000" || pe.Severity != "FATAL" ||
		!strings.Contains(pe.Message, "no encryption") || !strings.Contains(pe.Hint, "--tls-required") {
		t.Fatalf("plaintext client: got %v, want FATAL 28000", err)
	}
	url := strings.TrimSuffix(ts.connString(""), "disable") + "require"
	c, err := pgconn.Connect(testContext(t), url)
	if err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	c.Close(context.Background())

	if err := New(Config{TLSRequired: true, Listen: "127.0.0.1:0"}, newFakeEngine()).Listen(); err == nil {
		t.Fatal("TLSRequired without a certificate was accepted")
	}
}

// TestStartupTimeoutDuringAuth: a client that sends its startup packet and
// then never answers the SCRAM challenge is dropped after StartupTimeout
// (the test waits for the close, not for any particular time).
func TestStartupTimeoutDuringAuth(t *testing.T) {
	ts := startServer(t, Config{Auth: AuthSCRAM, Passwords: scramPasswords(t), StartupTimeout: 100 * time.Millisecond}, nil)
	rc := ts.dialRaw(t)
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "pivotdb"}})
	if msg, err := rc.fe.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := msg.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("got %T, want AuthenticationSASL", msg)
	}
	// Say nothing more: the server must close the connection.
	var buf [1]byte
	_, err := rc.nc.Read(buf[:])
	if !errors.Is(err, io.EOF) && !strings.Contains(fmt.Sprint(err), "reset") {
		t.Fatalf("read after the startup timeout: %v, want the connection closed", err)
	}
}
