package sql

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/auth"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

func openAt(t *testing.T, dir string, opts Options) *Engine {
	t.Helper()
	opts.DataDir = dir
	opts.NoSync = true
	opts.Logger = storage.SlogLogger{L: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestUsersPersist(t *testing.T) {
	dir := t.TempDir()
	e := openAt(t, dir, Options{})
	if _, ok := e.PasswordVerifier("pivotdb"); ok || e.HasPasswords() {
		t.Fatal("bootstrap user has a password without --initial-password")
	}
	s := testSession(t, e)
	query(t, s, "CREATE USER alice WITH PASSWORD 'pw1'")
	query(t, s, `CREATE ROLE "Bob" LOGIN`)
	_, err := tryQuery(s, "CREATE USER alice")
	wantCode(t, err, "42710")
	_, err = tryQuery(s, "ALTER USER nobody PASSWORD 'x'")
	wantCode(t, err, "42704")
	v1, ok := e.PasswordVerifier("alice")
	if !ok || !strings.HasPrefix(v1, "SCRAM-SHA-256$4096:") {
		t.Fatalf("alice's verifier %q %v", v1, ok)
	}
	if _, ok := e.PasswordVerifier("Bob"); ok {
		t.Fatal("Bob has a password")
	}
	if _, ok := e.PasswordVerifier("bob"); ok {
		t.Fatal("user names must be case-sensitive")
	}
	// A verifier given as the password is stored as is (pg_dumpall's form).
	query(t, s, "ALTER USER \"Bob\" PASSWORD '"+v1+"'")
	if v, _ := e.PasswordVerifier("Bob"); v != v1 {
		t.Fatalf("verifier not kept: %q", v)
	}
	_, err = tryQuery(s, "ALTER USER alice PASSWORD 'SCRAM-SHA-256$4096:bad'")
	wantCode(t, err, "22023")
	query(t, s, "ALTER USER alice PASSWORD 'pw2'")
	if v, _ := e.PasswordVerifier("alice"); v == v1 {
		t.Fatal("ALTER USER did not change the password")
	}
	s.Close()
	e.Close()

	e = openAt(t, dir, Options{InitialPassword: "boot"})
	defer e.Close()
	s = testSession(t, e)
	if _, ok := e.PasswordVerifier("alice"); !ok {
		t.Fatal("alice lost across restart")
	}
	boot, ok := e.PasswordVerifier("pivotdb")
	if !ok {
		t.Fatal("initial password not set")
	}
	sc, err := auth.Parse(boot)
	if err != nil || sc.Iters != auth.Iterations {
		t.Fatalf("bootstrap verifier %q: %v", boot, err)
	}
	query(t, s, "ALTER USER alice PASSWORD NULL")
	if _, ok := e.PasswordVerifier("alice"); ok {
		t.Fatal("PASSWORD NULL kept the password")
	}
	_, err = tryQuery(s, "DROP USER pivotdb")
	wantCode(t, err, "55006")
	_, err = tryQuery(s, "DROP USER alice, nobody")
	wantCode(t, err, "42704")
	if _, ok := e.catalog.Snapshot().User("alice"); !ok {
		t.Fatal("failed DROP USER dropped part of its list")
	}
	query(t, s, "DROP USER IF EXISTS alice, nobody")
	if _, ok := e.catalog.Snapshot().User("alice"); ok {
		t.Fatal("alice not dropped")
	}
	if n := s.TakeNotices(); len(n) != 1 || !strings.Contains(n[0].Message, `"nobody" does not exist, skipping`) {
		t.Fatalf("notices %v", n)
	}

	// The flag does not overwrite a password that is already set.
	e.Close()
	e = openAt(t, dir, Options{InitialPassword: "other"})
	defer e.Close()
	if v, _ := e.PasswordVerifier("pivotdb"); v != boot {
		t.Fatal("--initial-password replaced an existing password")
	}
}

func TestDropCurrentUser(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE USER carol")
	c, err := e.NewSession("pivotdb", "carol")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = tryQuery(c, "DROP USER carol")
	wantCode(t, err, "55006")
}

func TestTimeoutDefaults(t *testing.T) {
	e := openAt(t, t.TempDir(), Options{StatementTimeout: 1500 * time.Millisecond, IdleInTransactionTimeout: time.Minute})
	defer e.Close()
	s := testSession(t, e)
	show := func(name string) string {
		rows := query(t, s, "SHOW "+name)
		return rows[0][0].Str()
	}
	if got := show("statement_timeout"); got != "1500" {
		t.Fatalf("statement_timeout %q", got)
	}
	// psql's \password reads it to hash the new password itself.
	if got := show("password_encryption"); got != "scram-sha-256" {
		t.Fatalf("password_encryption %q", got)
	}
	if _, err := tryQuery(s, "SET password_encryption = 'md5'"); err == nil {
		t.Fatal("md5 accepted")
	}
	if s.IdleInTransactionTimeout() != time.Minute {
		t.Fatalf("idle timeout %v", s.IdleInTransactionTimeout())
	}
	query(t, s, "SET statement_timeout = 0")
	query(t, s, "RESET statement_timeout")
	if got := show("statement_timeout"); got != "1500" {
		t.Fatalf("RESET gave %q, want the server default", got)
	}
}

// TestMaxQueryMemory: statements that materialise more rows than
// MaxQueryMemory fail with 53200; streaming ones are not limited, and the
// session carries on.
func TestMaxQueryMemory(t *testing.T) {
	e := openAt(t, t.TempDir(), Options{MaxQueryMemory: 32 << 10})
	defer e.Close()
	s := testSession(t, e)
	query(t, s, "CREATE TABLE big (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "CREATE TABLE copy (k Int64, v Utf8, PRIMARY KEY (k))")
	for i := 0; i < 20; i++ {
		query(t, s, "INSERT INTO big (k, v) VALUES ($1, repeat('x', 1000)), ($1 + 100, repeat('y', 1000)), ($1 + 200, repeat('z', 1000)), ($1 + 300, 'w')",
			types.NewInt64(int64(i)))
	}
	// Streaming: 80 rows of ~1 KB pass through without being held.
	if rows := query(t, s, "SELECT k, v FROM big"); len(rows) != 80 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, q := range []string{
		"SELECT k, v FROM big ORDER BY v DESC",
		"SELECT DISTINCT v || CAST(k AS Utf8) FROM big",
		"SELECT v || CAST(k AS Utf8), count(*) FROM big GROUP BY v || CAST(k AS Utf8)",
		"INSERT INTO copy SELECT k, v FROM big",
		"SELECT a.k FROM big AS a JOIN big AS b ON a.v = b.v",
		"SELECT v || CAST(k AS Utf8) FROM big UNION SELECT v FROM big",
	} {
		_, err := tryQuery(s, q)
		if e := sqlerr.As(err); err == nil || e.Code != "53200" {
			t.Fatalf("%s: got %v, want 53200", q, err)
		}
	}
	if rows := query(t, s, "SELECT count(*) FROM copy"); rows[0][0].Int() != 0 {
		t.Fatal("failed INSERT wrote rows")
	}
	// Small enough results are fine.
	if rows := query(t, s, "SELECT k FROM big WHERE k < 10 ORDER BY k DESC"); len(rows) != 10 {
		t.Fatalf("%d rows", len(rows))
	}
}
