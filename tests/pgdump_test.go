package tests

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestReplayPostgreSQLDump replays a dump PostgreSQL 15's pg_dump made
// (tests/pgdump/shop-*.sql, from shop-schema.sql) with psql into a
// PivotDB database set to the postgresql dialect, stopping at the first
// error: its SET lines, CREATE TABLE / VIEW / SEQUENCE, OWNER TO, ALTER
// SEQUENCE ... OWNED BY, SET DEFAULT nextval('...'::regclass), the rows
// (INSERT with --inserts, else COPY ... FROM stdin), setval, ALTER TABLE ONLY ...
// ADD CONSTRAINT (UNIQUE, PRIMARY KEY on a table created without one,
// FOREIGN KEY), CREATE INDEX ... USING btree. Then every row, the
// sequences and the constraints are checked.
func TestReplayPostgreSQLDump(t *testing.T) {
	t.Run("inserts", func(t *testing.T) { replayShopDump(t, "pgdump/shop-inserts.sql") })
	// The same database dumped as pg_dump makes it by default, the rows in
	// COPY ... FROM stdin blocks.
	t.Run("copy", func(t *testing.T) { replayShopDump(t, "pgdump/shop-copy.sql") })
}

func replayShopDump(t *testing.T, file string) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeSimpleProtocol)
	// pg_dump names the owners; the roles come from pg_dumpall -r.
	for _, q := range []string{"CREATE ROLE postgres", "CREATE ROLE app_owner", "CREATE DATABASE shop",
		"ALTER DATABASE shop SET sql_dialect = postgresql"} {
		mustExec(t, c, q)
	}
	dump, _ := filepath.Abs(file)
	out := runPsql(t, srv, "-d", "shop", "-v", "ON_ERROR_STOP=1", "-q", "-f", dump)
	if strings.Contains(out, "ERROR:  COPY is not supported yet") {
		// Until COPY lands (issue 20, item 1): this runs once it does.
		t.Skip("COPY FROM stdin is not supported yet")
	}
	if strings.Contains(out, "ERROR") {
		t.Fatalf("replay:\n%s", out)
	}

	db := srv.dial(t, "pivotdb", "shop", nil)
	rows := func(q string) string {
		t.Helper()
		rs, err := db.Query(ctxT(t), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rs.Close()
		var lines []string
		for rs.Next() {
			vals, err := rs.Values()
			if err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = fmt.Sprint(v)
			}
			lines = append(lines, strings.Join(parts, "|"))
		}
		if err := rs.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return strings.Join(lines, "\n")
	}
	check := func(q, want string) {
		t.Helper()
		if got := rows(q); got != want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", q, got, want)
		}
	}
	check("SELECT id, email, name, vip, created::text FROM customers ORDER BY id",
		"1|ann@example.com|Ann|true|2024-01-01 00:00:00\n"+
			"2|bob@example.com|Bob O'Neil|false|2024-01-01 00:00:00\n"+
			"3|cy@example.com|Cy|<nil>|2024-01-01 00:00:00")
	check("SELECT id, customer_id, total::text, placed::text, note, weight, payload::text FROM orders ORDER BY id",
		"1|1|150.50|2024-02-01|first|1.5|\\xdeadbeef\n"+
			"2|1|20.00|2024-02-02|<nil>|<nil>|<nil>\n"+
			"3|2|999.99|2024-03-01|tab\tand\nnewline|2.25|\\x\n"+
			"4|3|0.00|2024-03-05|zero|-0.5|\\x00")
	check("SELECT at::text, kind, tag::text, body::text FROM events ORDER BY at",
		"2024-01-01 10:00:00+00|1|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|{\"k\": [1, 2]}\n"+
			"2024-01-02 11:30:00+00|2|<nil>|<nil>")
	check("SELECT id, total::text FROM big_orders ORDER BY id", "1|150.50\n3|999.99")
	// The sequences continue where they stood (setval).
	check("SELECT nextval('customers_id_seq'), nextval('orders_id_seq'), nextval('invoice_no')", "4|5|1020")
	check("SELECT pg_get_serial_sequence('customers', 'id'), pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'customers'",
		"public.customers_id_seq|app_owner")
	// The constraints hold: the primary keys and the unique email, the
	// check, the foreign key with its ON DELETE CASCADE.
	check(`SELECT conname, contype FROM pg_constraint WHERE conrelid IN ('customers'::regclass, 'orders'::regclass) ORDER BY 1`,
		"customers_email_key|u\ncustomers_pkey|p\norders_customer_id_fkey|f\norders_pkey|p\norders_total_check|c")
	check("SELECT indexdef FROM pg_indexes WHERE tablename = 'orders' ORDER BY indexname",
		"CREATE INDEX orders_customer ON public.orders USING btree (customer_id)\n"+
			"CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)\n"+
			"CREATE INDEX orders_placed_total ON public.orders USING btree (placed, total)")
	for q, code := range map[string]string{
		"INSERT INTO customers (email, name) VALUES ('ann@example.com', 'Ann 2')":      "23505",
		"INSERT INTO orders (customer_id, total, placed) VALUES (9, 1, '2024-01-01')":  "23503",
		"INSERT INTO orders (customer_id, total, placed) VALUES (1, -1, '2024-01-01')": "23514",
	} {
		var pe *pgconn.PgError
		if _, err := db.Exec(ctxT(t), q); !errors.As(err, &pe) || pe.Code != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
	mustExec(t, db, "DELETE FROM customers WHERE id = 1")
	check("SELECT count(*) FROM orders WHERE customer_id = 1", "0")
	check("SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_attribute a ON a.attrelid = c.oid WHERE c.relname = 'orders_placed_total' ORDER BY a.attnum",
		"placed\ntotal")
}
