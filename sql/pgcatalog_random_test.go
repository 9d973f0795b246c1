package sql

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestPgCatalogRandomDDL creates and drops random tables and checks, after
// every change, that pg_class, pg_attribute, pg_index and
// information_schema.columns describe exactly the tables a simple model
// holds. The seed is printed on failure.
func TestPgCatalogRandomDDL(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	e := testEngine(t)
	s := testSession(t, e)

	// typeNames maps a DDL type to what format_type prints.
	typeNames := [][2]string{
		{"Bool", "boolean"}, {"Int16", "smallint"}, {"Int32", "integer"}, {"Int64", "bigint"},
		{"Uint32", "uint32"}, {"Uint64", "uint64"}, {"Double", "double precision"}, {"Float", "real"},
		{"Utf8", "text"}, {"varchar(7)", "character varying(7)"}, {"String", "bytea"}, {"Date", "date"},
		{"Timestamp", "timestamp without time zone"}, {"Decimal(9,4)", "numeric(9,4)"}, {"Json", "json"},
		{"Int8", "tinyint"}, {"Uint8", "uint8"}, {"Uint16", "uint16"}, {"Datetime", "datetime"},
	}
	type column struct{ name, typ string }
	type table struct {
		cols []column
		key  []string
	}
	model := map[string]table{}

	check := func(step int) {
		t.Helper()
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d, step %d: %s", seed, step, fmt.Sprintf(format, args...))
		}
		var names []string
		for n := range model {
			names = append(names, n)
		}
		sort.Strings(names)
		var got []string
		for _, r := range query(t, s, "SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 2200 ORDER BY relname") {
			got = append(got, r[0].Text())
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			fail("pg_class tables %v, model %v", got, names)
		}
		for _, n := range names {
			tb := model[n]
			var want []string
			for _, c := range tb.cols {
				want = append(want, c.name+" "+c.typ)
			}
			var attrs, isCols []string
			for _, r := range query(t, s, "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '"+n+"'::regclass AND attnum > 0 ORDER BY attnum") {
				attrs = append(attrs, r[0].Text()+" "+r[1].Text())
			}
			if strings.Join(attrs, ",") != strings.Join(want, ",") {
				fail("pg_attribute of %s: %v, model %v", n, attrs, want)
			}
			for _, r := range query(t, s, "SELECT column_name FROM information_schema.columns WHERE table_name = '"+n+"' ORDER BY ordinal_position") {
				isCols = append(isCols, r[0].Text())
			}
			if len(isCols) != len(tb.cols) {
				fail("information_schema.columns of %s: %v", n, isCols)
			}
			rows := query(t, s, "SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = '"+n+"'::regclass")
			if len(tb.key) == 0 {
				if len(rows) != 0 {
					fail("table %s without key has index %v", n, rows)
				}
				continue
			}
			wantDef := fmt.Sprintf("CREATE UNIQUE INDEX %s_pkey ON public.%s USING btree (%s)", n, n, strings.Join(tb.key, ", "))
			if len(rows) != 1 || rows[0][0].Text() != wantDef {
				fail("index of %s: %v, want %s", n, rows, wantDef)
			}
		}
	}

	for step := 0; step < 60; step++ {
		if len(model) > 0 && rng.Intn(3) == 0 {
			var names []string
			for n := range model {
				names = append(names, n)
			}
			sort.Strings(names)
			n := names[rng.Intn(len(names))]
			query(t, s, "DROP TABLE "+n)
			delete(model, n)
		} else {
			name := fmt.Sprintf("t%d", rng.Intn(20))
			if _, ok := model[name]; ok {
				continue
			}
			var tb table
			var defs []string
			for i := 0; i < 1+rng.Intn(5); i++ {
				ty := typeNames[rng.Intn(len(typeNames))]
				c := column{fmt.Sprintf("c%d", i), ty[1]}
				tb.cols = append(tb.cols, c)
				defs = append(defs, c.name+" "+ty[0])
			}
			// A key over a prefix of the columns that may be keys, or none.
			for _, c := range tb.cols[:rng.Intn(len(tb.cols)+1)] {
				if c.typ == "json" || c.typ == "double precision" || c.typ == "real" {
					break
				}
				tb.key = append(tb.key, c.name)
			}
			ddl := "CREATE TABLE " + name + " (" + strings.Join(defs, ", ")
			if len(tb.key) > 0 {
				ddl += ", PRIMARY KEY (" + strings.Join(tb.key, ", ") + ")"
			}
			query(t, s, ddl+")")
			model[name] = tb
		}
		check(step)
	}
}
