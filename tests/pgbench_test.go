package tests

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPgbenchTPCB initialises pgbench's tables at scale 2 unmodified
// (CREATE TABLE ... WITH (fillfactor = 100), which PivotDB accepts with a
// notice, VACUUM ANALYZE, ALTER TABLE ... ADD PRIMARY KEY), runs the
// built-in TPC-B-like script for 10 seconds from 4 clients, and checks
// that the money adds up: every transaction adds its delta to one
// account, its teller and its branch and logs it in the history, so the
// four sums agree.
//
// The data is generated client-side, pgbench's default: in one
// transaction it truncates the tables and loads them with COPY FROM STDIN
// WITH (FREEZE ON), which PostgreSQL's rule allows there (a NOTICE says
// FREEZE changes nothing here).
func TestPgbenchTPCB(t *testing.T) {
	pgbench := requireTool(t, "pgbench")
	srv := startServer(t)
	out := runClient(t, srv, ".", pgbench, "-i", "-s", "2", "pivotdb")
	for _, want := range []string{"storage parameter fillfactor is accepted but changes nothing",
		"COPY FREEZE is accepted but changes nothing", "generating data (client-side)", "vacuuming...",
		"creating primary keys...", "done in"} {
		if !strings.Contains(out, want) {
			t.Fatalf("pgbench -i: no %q in\n%s", want, out)
		}
	}
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	var accounts, analyzed int64
	if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM pgbench_accounts").Scan(&accounts); err != nil || accounts != 200000 {
		t.Fatalf("pgbench_accounts has %d rows (%v)", accounts, err)
	}
	// pgbench -i vacuums (with ANALYZE) before it adds the primary keys,
	// which rewrite the tables: the history table keeps its counts.
	if err := c.QueryRow(ctxT(t), "SELECT vacuum_count + analyze_count FROM pg_stat_user_tables WHERE relname = 'pgbench_history'").Scan(&analyzed); err != nil || analyzed != 2 {
		t.Fatalf("pgbench_history vacuumed and analyzed %d times (%v)", analyzed, err)
	}

	out = runClient(t, srv, ".", pgbench, "-c", "4", "-j", "2", "-T", "10", "pivotdb")
	m := regexp.MustCompile(`number of transactions actually processed: (\d+)`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" || !strings.Contains(out, "number of failed transactions: 0 ") {
		t.Fatalf("pgbench run:\n%s", out)
	}
	var a, b, tl, h, n int64
	err := c.QueryRow(ctxT(t), `SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(bbalance) FROM pgbench_branches),
		(SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(delta) FROM pgbench_history), (SELECT count(*) FROM pgbench_history)`).
		Scan(&a, &b, &tl, &h, &n)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || b != tl || tl != h || strconv.FormatInt(n, 10) != m[1] {
		t.Fatalf("sums: accounts %d, branches %d, tellers %d, history %d; %d history rows for %s transactions", a, b, tl, h, n, m[1])
	}
}
