package sql

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// x::T[], a[i], array_upper/array_lower over arrays and over the text
// form of an array a text column holds (as the catalog's arrays are),
// generate_series in FROM and string_agg: the pieces of psql 15's
// publications footer of \d NAME.
func TestArrayFunctions(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE a (id Int64, arr Utf8, PRIMARY KEY (id))")
	query(t, s, `INSERT INTO a (id, arr) VALUES (1, '{3,1}'), (2, '{}'), (3, '{2,NULL,x}'), (4, NULL)`)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT '{1, 02,-3}'::int2[]", "{1,2,-3}"},
		{"SELECT '{a,\"b c\",NULL}'::pg_catalog.text[]", `{a,"b c",NULL}`},
		{"SELECT CAST('{1}' AS int4[])", "{1}"},
		{"SELECT array_upper('{1,2,3}'::int4[], 1)", "3"},
		{"SELECT pg_catalog.array_lower('{1,2,3}'::int4[], 1)", "1"},
		{"SELECT array_upper('{}'::int4[], 1)", "NULL"},
		{"SELECT array_upper('{1}'::int4[], 2)", "NULL"},
		{"SELECT ('{4,5,6}'::int4[])[2] + 1", "6"},
		{"SELECT ('{4,5,6}'::int4[])[0]", "NULL"},
		{"SELECT ('{4,5,6}'::int4[])[4]", "NULL"},
		{"SELECT ('{4,NULL}'::int4[])[2]", "NULL"},
		{"SELECT '{2024-01-02}'::date[]", "{2024-01-02}"},
		{"SELECT ('{{1,2},{3,4}}'::int[][])[2][1]", "3"},
		{"SELECT array_to_string(arr, '+') FROM a WHERE id = 3", "2+x"},
		{"SELECT arr[1] FROM a WHERE id = 1", "3"},
		{"SELECT arr[1] + 1 FROM a WHERE id = 1", "4"},
		{"SELECT arr[3] || '!' FROM a WHERE id = 3", "x!"},
		{"SELECT arr[1] FROM a WHERE id = 4", "NULL"},
		{"SELECT count(*) FROM generate_series(1, 10)", "10"},
		{"SELECT sum(g) FROM generate_series(1, 10, 3) g", "22"},
		{"SELECT count(*) FROM generate_series(3, 1)", "0"},
		{"SELECT count(*) FROM generate_series(1, NULL)", "0"},
		{"SELECT max(generate_series) FROM pg_catalog.generate_series(10, 0, -5)", "10"},
		{"SELECT count(*) FROM generate_series(9223372036854775806, 9223372036854775807)", "2"},
		{"SELECT string_agg(CAST(s AS Utf8), ',') FROM generate_series(1, 3) s", "1,2,3"},
		{"SELECT bool_and(s > 0) FROM generate_series(1, 3) s", "t"},
		{"SELECT bool_or(s > 2) FROM generate_series(1, 3) s", "t"},
		{"SELECT count(*) FROM generate_series(1, 4) s GROUP BY s % 2 HAVING string_agg(CAST(s AS Utf8), '') = '24'", "2"},
		// Correlated arguments, a join, and psql's shape: attnum = prattrs[s].
		{"SELECT sum(s) FROM a JOIN generate_series(1, 3) s ON s = a.arr[1]", "5"},
		{`SELECT string_agg(x, '|') FROM (SELECT (SELECT string_agg(CAST(id AS Utf8), ',') FROM generate_series(0, array_upper(o.arr::int2[], 1)) s, a
			WHERE a.id = o.arr[s]) AS x FROM a o WHERE o.id = 1) t`, "3,1"},
	} {
		rows := query(t, s, tc.sql)
		if len(rows) != 1 || rows[0][0].Text() != tc.want {
			t.Errorf("%s = %v, want %s", tc.sql, rows, tc.want)
		}
	}
	for _, tc := range []struct{ sql, code string }{
		{"SELECT '{1,x}'::int2[]", sqlerr.InvalidTextRepresentation},
		{"SELECT '{1,70000}'::int2[]", sqlerr.NumericValueOutOfRange},
		{"SELECT '{1'::int2[]", sqlerr.InvalidTextRepresentation},
		{"SELECT '{x}'::Date[]", sqlerr.InvalidDatetimeFormat},
		{"SELECT '{{1},{2,3}}'::int[][]", sqlerr.InvalidTextRepresentation},
		{"SELECT ('{1,x}'::int2[])[1]", sqlerr.InvalidTextRepresentation},
		{"SELECT * FROM generate_series(1, 5, 0)", sqlerr.InvalidParameterValue},
		{"SELECT * FROM generate_series(1)", sqlerr.UndefinedFunction},
		{"SELECT * FROM generate_series(1.5, 2)", sqlerr.UndefinedFunction},
		{"SELECT string_agg(string_agg(arr, ','), ',') FROM a", sqlerr.GroupingError},
	} {
		if _, err := tryQuery(s, tc.sql); sqlerr.Code(err) != tc.code {
			t.Errorf("%s: err %v, want %s", tc.sql, err, tc.code)
		}
	}

	// Column names follow PostgreSQL: the alias names the series' column.
	for sqlText, want := range map[string]string{
		"SELECT * FROM generate_series(1, 2)":   "generate_series",
		"SELECT * FROM generate_series(1, 2) s": "s",
		"SELECT arr[1] FROM a":                  "arr",
	} {
		p, err := s.Prepare(t.Context(), sqlText, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cols := p.Columns; len(cols) != 1 || cols[0].Name != want {
			t.Errorf("%s: columns = %+v, want %s", sqlText, cols, want)
		}
		s.Sync()
	}
}

// generate_series and a[i] against a simple oracle.
func TestSeriesRandom(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	rng := rand.New(rand.NewSource(1))
	for range 200 {
		start, stop, step := rng.Int63n(41)-20, rng.Int63n(41)-20, rng.Int63n(11)-5
		if step == 0 {
			step = 1
		}
		var want []string
		for v := start; step > 0 && v <= stop || step < 0 && v >= stop; v += step {
			want = append(want, fmt.Sprint(v))
		}
		arr := "{" + strings.Join(want, ",") + "}"
		rows := query(t, s, fmt.Sprintf("SELECT s, ('%s'::int8[])[s - %d + 1] FROM generate_series(%d, %d, %d) s", arr, start, start, stop, step))
		if len(rows) != len(want) {
			t.Fatalf("series(%d, %d, %d): %d rows, want %d", start, stop, step, len(rows), len(want))
		}
		for i, r := range rows {
			if r[0].Text() != want[i] {
				t.Fatalf("series(%d, %d, %d) row %d = %s, want %s", start, stop, step, i, r[0].Text(), want[i])
			}
			// Element s-start+1 of the array of all values exists only
			// for the first len(want) positions (step 1), NULL beyond.
			idx := r[0].Int() - start + 1
			wantElem := "NULL"
			if idx >= 1 && idx <= int64(len(want)) {
				wantElem = want[idx-1]
			}
			if r[1].Text() != wantElem {
				t.Fatalf("series(%d, %d, %d) elem %d = %s, want %s", start, stop, step, idx, r[1].Text(), wantElem)
			}
		}
	}
}
