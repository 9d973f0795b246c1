package tests

import (
	"database/sql"
	"net/url"
	"strings"
	"testing"

	_ "github.com/lib/pq"
)

// TestLibPQTLS connects with lib/pq over TLS: sslmode=require, and
// verify-full against the self-signed certificate (which only a TLS
// handshake with the server's certificate can pass); sslmode=require
// against a server without a certificate must fail.
func TestLibPQTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	srv := startServer(t, "--tls-cert", cert, "--tls-key", key)
	ctx := ctxT(t)

	for _, mode := range []string{"require", "verify-full&sslrootcert=" + url.QueryEscape(cert)} {
		db, err := sql.Open("postgres", srv.url("pivotdb", "", "pivotdb", mode))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		var s string
		if err := db.QueryRowContext(ctx, "SELECT 40 + $1::int4, $2", 2, "over tls").Scan(&n, &s); err != nil {
			t.Fatalf("sslmode=%s: %v\n%s", mode, err, srv.log)
		}
		if n != 42 || s != "over tls" {
			t.Fatalf("sslmode=%s: got %d %q", mode, n, s)
		}
	}

	plain := startServer(t)
	db, err := sql.Open("postgres", plain.url("pivotdb", "", "pivotdb", "require"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.PingContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "SSL is not enabled") {
		t.Fatalf("sslmode=require against a server without TLS: %v", err)
	}
}
