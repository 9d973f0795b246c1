package tests

import (
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestLoginHardening runs the server with --tls-required, a login throttle
// and a short --startup-timeout: plaintext clients get FATAL 28000, wrong
// passwords are answered after delays that double up to the cap (read from
// the server log, never timed), a client that connects and says nothing is
// dropped, and the right password over TLS works.
func TestLoginHardening(t *testing.T) {
	cert, key := writeTestCert(t, t.TempDir())
	srv := startServer(t, "--auth", "scram", "--initial-password", "pw", "--tls-cert", cert, "--tls-key", key,
		"--tls-required", "--auth-failure-delay", "20ms", "--auth-failure-max-delay", "50ms", "--startup-timeout", "300ms")

	_, err := connectURL(t, srv.url("pivotdb", "pw", "pivotdb", "disable"))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28000" || pe.Severity != "FATAL" || !strings.Contains(pe.Message, "no encryption") {
		t.Fatalf("plaintext client: got %v, want FATAL 28000", err)
	}
	for range 3 {
		_, err := connectURL(t, srv.url("pivotdb", "wrong", "pivotdb", "require"))
		wantAuthFailed(t, err, "pivotdb")
	}

	nc, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	var buf [1]byte
	if _, err := nc.Read(buf[:]); err == nil || isTimeout(err) {
		t.Fatalf("silent client: read gave %v, want the connection closed by the server", err)
	}

	if _, err := connectURL(t, srv.url("pivotdb", "pw", "pivotdb", "require")); err != nil {
		t.Fatalf("TLS with the right password: %v", err)
	}
	srv.stop()
	log := srv.log.String()
	for _, d := range []string{"delay=20ms", "delay=40ms", "delay=50ms"} {
		if !strings.Contains(log, d) {
			t.Errorf("server log has no failed login with %s:\n%s", d, log)
		}
	}
	if !strings.Contains(log, "plaintext connection refused") {
		t.Errorf("server log does not report the plaintext client:\n%s", log)
	}

	// --tls-required without a certificate is refused at start.
	out, err := exec.Command(serverBin, "serve", "--data-dir", t.TempDir(), "--listen", freePort(t), "--tls-required").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "--tls-required needs") {
		t.Fatalf("--tls-required without a certificate: %v\n%s", err, out)
	}
}

// isTimeout reports a network timeout: the test's own deadline passed, so
// the server never closed the connection.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
