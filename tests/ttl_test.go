package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TTL over the wire (issue 6, design.md §8): a row stamped in the year 2000
// is hidden at once and erased by the runner, which runs every 50 ms here;
// sys.partitions counts the erased rows; a Uint64 column AS SECONDS works;
// every invalid TTL is refused with its SQLSTATE.

// waitErased polls sys.partitions until the table's ttl_rows_erased reach
// want (the runner is asynchronous) and returns its row_count then.
func waitErased(t *testing.T, c *pgx.Conn, table string, want int64) int64 {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var erased, rows int64
		var ran int
		if err := c.QueryRow(ctx, `SELECT CAST(SUM(ttl_rows_erased) AS Int64), CAST(SUM(row_count) AS Int64),
				CAST(COUNT(ttl_last_run) AS Int32) FROM sys.partitions WHERE table_name = $1`, table).Scan(&erased, &rows, &ran); err != nil {
			t.Fatal(err)
		}
		if erased == want && ran > 0 {
			// The erase committed before the runner counted it, but one
			// statement reads the in-memory TTL counters after its view
			// of the shard statistics was taken: a statement started now
			// sees the rows the erase removed.
			if err := c.QueryRow(ctx, `SELECT CAST(SUM(row_count) AS Int64) FROM sys.partitions WHERE table_name = $1`,
				table).Scan(&rows); err != nil {
				t.Fatal(err)
			}
			return rows
		}
		if erased > want || time.Now().After(deadline) {
			t.Fatalf("%s: ttl_rows_erased = %d (runs seen: %d), want %d", table, erased, ran, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTTLOverTheWire(t *testing.T) {
	srv := startServer(t, "--ttl-run-interval", "50ms")
	c := srv.connect(t, pgx.QueryExecModeExec)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	ids := func(sql string) string {
		t.Helper()
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return fmt.Sprint(got)
	}

	exec(`CREATE TABLE t (id Int64, ts Timestamp, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON ts)`)
	now := time.Now().UTC()
	exec(fmt.Sprintf(`INSERT INTO t VALUES (1, Timestamp("2000-01-01T00:00:00Z")), (2, Timestamp("%s")), (3, NULL)`,
		now.Format("2006-01-02T15:04:05.000000Z")))
	if got := ids("SELECT id FROM t ORDER BY id"); got != "[2 3]" {
		t.Fatalf("rows of t: %s, want [2 3]", got)
	}
	if got := waitErased(t, c, "t", 1); got != 2 {
		t.Fatalf("row_count of t after the run: %d, want 2", got)
	}
	if got := ids("SELECT id FROM t ORDER BY id"); got != "[2 3]" {
		t.Fatalf("rows of t after the run: %s", got)
	}

	// Seconds since the epoch in a Uint64 column.
	exec(`CREATE TABLE u (id Uint64, e Uint64, PRIMARY KEY (id)) WITH (TTL = Interval("PT1H") ON e AS SECONDS)`)
	exec(`INSERT INTO u VALUES (1, 946684800), (2, $1), (3, $2)`, uint64(now.Unix()), uint64(now.Add(-2*time.Hour).Unix()))
	if got := ids("SELECT CAST(id AS Int64) FROM u ORDER BY id"); got != "[2]" {
		t.Fatalf("rows of u: %s, want [2]", got)
	}
	if got := waitErased(t, c, "u", 2); got != 1 {
		t.Fatalf("row_count of u after the run: %d, want 1", got)
	}

	// ALTER ... SET (TTL) makes an existing table's rows expire; RESET stops it.
	exec(`CREATE TABLE m (id Int64, ts Timestamp, PRIMARY KEY (id))`)
	exec(`INSERT INTO m VALUES (1, Timestamp("2000-01-01T00:00:00Z")), (2, Timestamp("2100-01-01T00:00:00Z"))`)
	exec(`ALTER TABLE m SET (TTL = Interval("P1D") ON ts)`)
	var show string
	if err := c.QueryRow(ctx, "SHOW CREATE TABLE m").Scan(new(string), &show); err != nil {
		t.Fatal(err)
	}
	if want := `TTL = Interval("P1D") ON ts`; !strings.Contains(show, want) {
		t.Fatalf("SHOW CREATE TABLE m does not show %s:\n%s", want, show)
	}
	if got := waitErased(t, c, "m", 1); got != 1 {
		t.Fatalf("row_count of m: %d", got)
	}
	exec(`ALTER TABLE m RESET (TTL)`)
	exec(`INSERT INTO m VALUES (3, Timestamp("2000-01-01T00:00:00Z"))`)
	if got := ids("SELECT id FROM m ORDER BY id"); got != "[2 3]" {
		t.Fatalf("rows of m after RESET (TTL): %s", got)
	}

	// Every invalid TTL, with its SQLSTATE.
	exec(`CREATE TABLE x (id Uint64, ts Timestamp, d Date, e Uint64, i Int32, s Utf8, f Double, PRIMARY KEY (id))`)
	for _, tc := range []struct{ setting, code string }{
		{`TTL = 3600 ON ts`, "42601"},                                           // not an Interval literal
		{`TTL = "PT1H" ON ts`, "42601"},                                         // a string is not one either
		{`TTL = Interval("PT1H")`, "42601"},                                     // no column
		{`TTL = Interval("-PT1H") ON ts`, "22023"},                              // negative
		{`TTL = Interval("soon") ON ts`, "22007"},                               // not an interval
		{`TTL = Interval("PT1H") ON nope`, "42703"},                             // unknown column
		{`TTL = Interval("PT1H") ON s`, "42P16"},                                // Utf8
		{`TTL = Interval("PT1H") ON f AS SECONDS`, "42P16"},                     // Double
		{`TTL = Interval("PT1H") ON i AS SECONDS`, "42P16"},                     // Int32
		{`TTL = Interval("PT1H") ON e`, "42P16"},                                // integer without unit
		{`TTL = Interval("PT1H") ON d AS SECONDS`, "42P16"},                     // unit on a time column
		{`TTL = Interval("PT1H") ON e AS HOURS`, "42601"},                       // unknown unit
		{`TTL = Interval("PT1H") ON ts, TTL = Interval("PT2H") ON ts`, "22023"}, // one TTL per table
	} {
		_, err := c.Exec(ctx, `CREATE TABLE y (id Uint64, ts Timestamp, d Date, e Uint64, i Int32, s Utf8, f Double, PRIMARY KEY (id)) WITH (`+tc.setting+`)`)
		wantCode(t, err, tc.code)
		_, err = c.Exec(ctx, `ALTER TABLE x SET (`+tc.setting+`)`)
		wantCode(t, err, tc.code)
	}
	// The TTL column cannot be dropped while the TTL is set: the TTL
	// depends on it (2BP01, as PostgreSQL answers for dependent objects).
	_, err := c.Exec(ctx, `ALTER TABLE t DROP COLUMN ts`)
	wantCode(t, err, "2BP01")
}
