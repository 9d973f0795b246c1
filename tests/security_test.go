package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1/localhost
// and its key to dir and returns their paths.
func writeTestCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func connectURL(t *testing.T, url string) (*pgx.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err == nil {
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

func (s *testServer) url(user, password, db, sslmode string) string {
	host, port, _ := net.SplitHostPort(s.addr)
	if host == "0.0.0.0" {
		host = "127.0.0.1"
	}
	cred := user
	if password != "" {
		cred += ":" + password
	}
	return fmt.Sprintf("postgres://%s@%s:%s/%s?sslmode=%s", cred, host, port, db, sslmode)
}

func TestTLS(t *testing.T) {
	cert, key := writeTestCert(t, t.TempDir())
	srv := startServer(t, "--tls-cert", cert, "--tls-key", key)

	c, err := connectURL(t, srv.url("pivotdb", "", "pivotdb", "require"))
	if err != nil {
		t.Fatalf("sslmode=require: %v\n%s", err, srv.log)
	}
	if _, ok := c.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("sslmode=require connection is %T, not TLS", c.PgConn().Conn())
	}
	var n int
	if err := c.QueryRow(ctxT(t), "SELECT 40 + 2").Scan(&n); err != nil || n != 42 {
		t.Fatalf("query over TLS: %v %d", err, n)
	}
	// Clients that do not ask for TLS are still served.
	if _, err := connectURL(t, srv.url("pivotdb", "", "pivotdb", "disable")); err != nil {
		t.Fatalf("sslmode=disable: %v", err)
	}

	// A server without a certificate answers 'N': require fails, prefer
	// falls back to plaintext.
	plain := startServer(t)
	if _, err := connectURL(t, plain.url("pivotdb", "", "pivotdb", "require")); err == nil {
		t.Fatal("sslmode=require connected to a server without TLS")
	}
	if _, err := connectURL(t, plain.url("pivotdb", "", "pivotdb", "prefer")); err != nil {
		t.Fatalf("sslmode=prefer: %v", err)
	}
	if got := requestAnswer(t, plain, 80877103); got != 'N' {
		t.Fatalf("SSLRequest without TLS answered %q", got)
	}
	for _, s := range []*testServer{srv, plain} {
		if got := requestAnswer(t, s, 80877104); got != 'N' {
			t.Fatalf("GSSENCRequest answered %q", got)
		}
	}
}

// requestAnswer sends an 8-byte request (SSLRequest, GSSENCRequest) and
// returns the one-byte answer.
func requestAnswer(t *testing.T, s *testServer, code uint32) byte {
	t.Helper()
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), code)
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		t.Fatal(err)
	}
	return b[0]
}

// TestTLSRejectsPipelinedPlaintext sends a StartupMessage in the clear
// right behind the SSLRequest, before reading the 'S': the server must not
// take it as the startup packet (CVE-2021-23214); the TLS handshake fails
// on it and the connection ends without any protocol message.
func TestTLSRejectsPipelinedPlaintext(t *testing.T) {
	cert, key := writeTestCert(t, t.TempDir())
	srv := startServer(t, "--tls-cert", cert, "--tls-key", key)
	nc, err := net.DialTimeout("tcp", srv.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	msg := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), 80877103)
	startup, err := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "pivotdb", "database": "pivotdb"}}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	query, _ := (&pgproto3.Query{String: "SELECT 1"}).Encode(nil)
	if _, err := nc.Write(append(append(msg, startup...), query...)); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(nc)
	if len(rest) == 0 || rest[0] != 'S' {
		t.Fatalf("SSLRequest answered %q (%v)", rest, err)
	}
	rest = rest[1:]
	// Whatever follows is a TLS alert at most (record type 21), never an
	// authentication request ('R') or any other protocol message.
	if len(rest) > 0 && rest[0] != 21 {
		t.Fatalf("server answered plaintext after SSLRequest: %q", rest)
	}
	// The server is still healthy.
	if _, err := connectURL(t, srv.url("pivotdb", "", "pivotdb", "require")); err != nil {
		t.Fatal(err)
	}
}

// TestPsqlTLS connects psql with sslmode=require and checks it reports TLS.
func TestPsqlTLS(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (make deps installs it)")
	}
	cert, key := writeTestCert(t, t.TempDir())
	srv := startServer(t, "--tls-cert", cert, "--tls-key", key)
	host, port, _ := net.SplitHostPort(srv.addr)
	cmd := exec.Command(psql, "-X", "-At", fmt.Sprintf("host=%s port=%s user=pivotdb dbname=pivotdb sslmode=require", host, port),
		"-c", "SELECT 1", "-c", `\conninfo`)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PAGER=", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql sslmode=require: %v\n%s\n%s", err, out, srv.log)
	}
	if !strings.HasPrefix(string(out), "1\n") || !strings.Contains(string(out), "SSL connection (protocol: TLSv1.3") {
		t.Fatalf("psql output:\n%s", out)
	}
}

func wantAuthFailed(t *testing.T, err error, user string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want 28P01, got %v", err)
	}
	want := fmt.Sprintf("password authentication failed for user %q", user)
	if pe.Code != "28P01" || pe.Severity != "FATAL" || pe.Message != want {
		t.Fatalf("got %s %s %q, want FATAL 28P01 %q", pe.Severity, pe.Code, pe.Message, want)
	}
}

func TestSCRAM(t *testing.T) {
	srv := startServer(t, "--auth", "scram", "--initial-password", "boot pw")
	c, err := connectURL(t, srv.url("pivotdb", "boot%20pw", "pivotdb", "disable"))
	if err != nil {
		t.Fatalf("right password: %v\n%s", err, srv.log)
	}
	_, err = connectURL(t, srv.url("pivotdb", "wrong", "pivotdb", "disable"))
	wantAuthFailed(t, err, "pivotdb")
	_, err = connectURL(t, srv.url("nobody", "boot%20pw", "pivotdb", "disable"))
	wantAuthFailed(t, err, "nobody")
	_, err = connectURL(t, srv.url("pivotdb", "", "pivotdb", "disable"))
	if err == nil {
		t.Fatal("connected without a password")
	}

	mustExec(t, c, "CREATE USER alice WITH PASSWORD 'wonder'")
	mustExec(t, c, `CREATE USER "Bob"`)
	a, err := connectURL(t, srv.url("alice", "wonder", "pivotdb", "disable"))
	if err != nil {
		t.Fatalf("alice: %v", err)
	}
	var n int
	if err := a.QueryRow(ctxT(t), "SELECT 5").Scan(&n); err != nil || n != 5 {
		t.Fatalf("alice's query: %v", err)
	}
	_, err = connectURL(t, srv.url("Bob", "", "pivotdb", "disable"))
	if err == nil {
		t.Fatal("a user without a password logged in")
	}
	_, err = connectURL(t, srv.url("Bob", "x", "pivotdb", "disable"))
	wantAuthFailed(t, err, "Bob")

	mustExec(t, c, "ALTER USER alice WITH PASSWORD 'land'")
	_, err = connectURL(t, srv.url("alice", "wonder", "pivotdb", "disable"))
	wantAuthFailed(t, err, "alice")

	// Users and passwords survive a restart; the flag does not reset a
	// password that was changed.
	mustExec(t, c, "ALTER USER pivotdb WITH PASSWORD 'changed'")
	c.Close(context.Background())
	a.Close(context.Background())
	srv.stop()
	srv.start("--auth", "scram", "--initial-password", "boot pw")
	_, err = connectURL(t, srv.url("pivotdb", "boot%20pw", "pivotdb", "disable"))
	wantAuthFailed(t, err, "pivotdb")
	c, err = connectURL(t, srv.url("pivotdb", "changed", "pivotdb", "disable"))
	if err != nil {
		t.Fatalf("after restart: %v\n%s", err, srv.log)
	}
	if _, err := connectURL(t, srv.url("alice", "land", "pivotdb", "disable")); err != nil {
		t.Fatalf("alice after restart: %v", err)
	}
	mustExec(t, c, "DROP USER alice")
	_, err = connectURL(t, srv.url("alice", "land", "pivotdb", "disable"))
	wantAuthFailed(t, err, "alice")

	// SCRAM over TLS (pgx then offers channel binding, which the server
	// does not advertise; plain SCRAM-SHA-256 must still work).
	cert, key := writeTestCert(t, t.TempDir())
	srv.stop()
	srv.start("--auth", "scram", "--tls-cert", cert, "--tls-key", key)
	if _, err := connectURL(t, srv.url("pivotdb", "changed", "pivotdb", "require")); err != nil {
		t.Fatalf("SCRAM over TLS: %v", err)
	}
}

// TestPsqlSCRAM logs in with psql and PGPASSWORD.
func TestPsqlSCRAM(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (make deps installs it)")
	}
	srv := startServer(t, "--auth", "scram", "--initial-password", "secret")
	host, port, _ := net.SplitHostPort(srv.addr)
	run := func(pw string) (string, error) {
		cmd := exec.Command(psql, "-X", "-At", "-w", "-h", host, "-p", port, "-U", "pivotdb", "-d", "pivotdb", "-c", "SELECT 7")
		cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10", "PGPASSWORD="+pw, "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("secret"); err != nil || strings.TrimSpace(out) != "7" {
		t.Fatalf("psql with the right password: %v\n%s", err, out)
	}
	out, err := run("nope")
	if err == nil || !strings.Contains(out, `password authentication failed for user "pivotdb"`) {
		t.Fatalf("psql with a wrong password: %v\n%s", err, out)
	}
}

// TestRefusesTrustOnPublicAddress: trust authentication is for loopback
// only; --auth scram may listen anywhere.
func TestRefusesTrustOnPublicAddress(t *testing.T) {
	_, port, _ := net.SplitHostPort(freePort(t))
	cmd := exec.Command(serverBin, "serve", "--data-dir", t.TempDir(), "--listen", "0.0.0.0:"+port)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "needs password authentication") {
		t.Fatalf("trust on 0.0.0.0: %v\n%s", err, out)
	}
	// SCRAM without any password would lock everyone out: refused too.
	cmd = exec.Command(serverBin, "serve", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:"+port, "--auth", "scram")
	cmd.Env = append(os.Environ(), "PIVOTDB_PASSWORD=")
	out, err = cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "no user has a password") {
		t.Fatalf("scram without passwords: %v\n%s", err, out)
	}

	s := &testServer{t: t, dataDir: t.TempDir()}
	s.startAt("0.0.0.0:"+port, "--auth", "scram", "--initial-password", "pw")
	t.Cleanup(s.stop)
	if _, err := connectURL(t, s.url("pivotdb", "pw", "pivotdb", "disable")); err != nil {
		t.Fatalf("scram on 0.0.0.0: %v\n%s", err, s.log)
	}
}

func TestMaxConnections(t *testing.T) {
	srv := startServer(t, "--max-connections", "2")
	c1 := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	_, err := connectURL(t, srv.url("pivotdb", "", "pivotdb", "disable"))
	wantCode(t, err, "53300")
	var pe *pgconn.PgError
	if errors.As(err, &pe); pe.Message != "sorry, too many clients already" {
		t.Fatalf("message %q", pe.Message)
	}
	// A full server still takes CancelRequests (pgx sends one on ctx
	// cancel), and a slot frees when a client leaves.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c1.Exec(ctx, "SELECT pg_sleep(30)"); err == nil {
		t.Fatal("not cancelled")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := connectURL(t, srv.url("pivotdb", "", "pivotdb", "disable"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStatementTimeoutKeepsConnection: a statement cancelled by the
// server-wide --statement-timeout or by SET fails with 57014 and the
// connection carries on; so does one cancelled by a CancelRequest.
func TestStatementTimeoutKeepsConnection(t *testing.T) {
	srv := startServer(t, "--statement-timeout", "150ms")
	for name, mode := range execModes {
		t.Run(name, func(t *testing.T) {
			c := srv.connect(t, mode)
			start := time.Now()
			_, err := c.Exec(ctxT(t), "SELECT pg_sleep(10)")
			wantCode(t, err, "57014")
			if time.Since(start) > 5*time.Second {
				t.Fatalf("timeout took %v", time.Since(start))
			}
			var n int
			if err := c.QueryRow(ctxT(t), "SELECT 1").Scan(&n); err != nil {
				t.Fatalf("connection unusable after timeout: %v", err)
			}
			mustExec(t, c, "SET statement_timeout = '0'")
			mustExec(t, c, "SELECT pg_sleep(0.3)")
			mustExec(t, c, "SET statement_timeout = '100ms'")
			_, err = c.Exec(ctxT(t), "SELECT pg_sleep(10)")
			wantCode(t, err, "57014")

			mustExec(t, c, "SET statement_timeout = 0")
			done := make(chan error, 1)
			go func() {
				_, err := c.Exec(context.Background(), "SELECT pg_sleep(30)")
				done <- err
			}()
			time.Sleep(200 * time.Millisecond)
			if err := c.PgConn().CancelRequest(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				wantCode(t, err, "57014")
			case <-time.After(10 * time.Second):
				t.Fatal("CancelRequest did not cancel")
			}
			if err := c.QueryRow(ctxT(t), "SELECT 2").Scan(&n); err != nil || n != 2 {
				t.Fatalf("connection unusable after cancel: %v", err)
			}
		})
	}
}

// TestIdleInTransactionTimeout: a session idle inside a transaction block
// is ended with FATAL 25P03; idle outside a block is not limited.
func TestIdleInTransactionTimeout(t *testing.T) {
	srv := startServer(t)
	fe, nc := rawConnect(t, srv)
	defer nc.Close()
	simpleQuery(t, fe, nc, "SET idle_in_transaction_session_timeout = '300ms'")
	time.Sleep(600 * time.Millisecond) // idle outside a block: fine
	simpleQuery(t, fe, nc, "BEGIN")
	simpleQuery(t, fe, nc, "SELECT 1") // activity restarts the clock
	start := time.Now()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	msg, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := msg.(*pgproto3.ErrorResponse)
	if !ok || e.Code != "25P03" || e.Severity != "FATAL" {
		t.Fatalf("got %#v", msg)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("ended after %v", d)
	}
	if _, err := fe.Receive(); err == nil {
		t.Fatal("connection still open")
	}
}

func rawConnect(t *testing.T, srv *testServer) (*pgproto3.Frontend, net.Conn) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", srv.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "pivotdb", "database": "pivotdb"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, fe, nc)
	return fe, nc
}

func waitReady(t *testing.T, fe *pgproto3.Frontend, nc net.Conn) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer nc.SetReadDeadline(time.Time{})
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			t.Fatalf("error: %s %s", m.Code, m.Message)
		case *pgproto3.ReadyForQuery:
			return
		}
	}
}

// simpleQuery runs one simple Query and waits for its ReadyForQuery.
func simpleQuery(t *testing.T, fe *pgproto3.Frontend, nc net.Conn, sql string) {
	t.Helper()
	fe.Send(&pgproto3.Query{String: sql})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, fe, nc)
}
