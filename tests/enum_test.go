package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestEnumOverTheWire: an enum type and a table using it survive a
// restart (the catalog keeps the type, rows keep sort positions that the
// type maps back to labels, ALTER TYPE's changes included); pgx reads enum
// values as strings in both protocols, sends them as parameters, and psql's
// \dT lists the type with its labels.
func TestEnumOverTheWire(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	for _, q := range []string{
		"CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
		"CREATE TABLE person (name text PRIMARY KEY, m mood)",
		"INSERT INTO person VALUES ('moe', 'happy'), ('larry', 'sad')",
		"ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'",
		"ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := c.Exec(ctx, "INSERT INTO person VALUES ($1, $2)", "curly", "meh"); err != nil {
		t.Fatalf("enum parameter: %v", err)
	}
	check := func(c *pgx.Conn, when string) {
		t.Helper()
		rows, err := c.Query(ctx, "SELECT name, m FROM person ORDER BY m")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		var got []string
		for rows.Next() {
			var n, m string
			if err := rows.Scan(&n, &m); err != nil {
				t.Fatalf("%s: scan: %v", when, err)
			}
			got = append(got, n+":"+m)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if want := "larry:blue moe:happy curly:meh"; strings.Join(got, " ") != "larry:blue curly:meh moe:happy" {
			t.Fatalf("%s: rows %v, want %s in declaration order", when, got, want)
		}
	}
	check(c, "before restart")
	srv.restart()
	c = srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	check(c, "after restart")
	var bad error
	_, bad = c.Exec(ctx, "INSERT INTO person VALUES ('x', 'sad')")
	if bad == nil || !strings.Contains(bad.Error(), `invalid input value for enum mood: "sad"`) || !strings.Contains(bad.Error(), "22P02") {
		t.Fatalf("renamed label after restart: %v", bad)
	}
	out := runPsql(t, srv, "-c", `\dT+ mood`)
	for _, want := range []string{"mood", "blue", "meh", "happy"} {
		if !strings.Contains(out, want) {
			t.Fatalf("psql \\dT+ mood lacks %q:\n%s", want, out)
		}
	}
	out = runPsql(t, srv, "-c", `\d person`)
	if !strings.Contains(out, "| mood") {
		t.Fatalf("psql \\d person does not show the enum column:\n%s", out)
	}
}
