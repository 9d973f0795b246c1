package sql

import (
	"strings"
	"testing"
)

// TestCastColumnNames: a cast is named as PostgreSQL names it — after what
// it casts when that has a name (a column, a function, a subquery's
// column), otherwise after the target type's pg_type name as its grammar
// spells it (x::integer is int4, not PivotDB's int32; 1::text is text,
// not utf8). The list is PostgreSQL 15.18's output for the same query.
func TestCastColumnNames(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "SET sql_dialect = 'postgresql'")
	const q = "SELECT 1::text, 1.5::numeric, 1::int8, 1::integer, 1::smallint, 1::float8, 1::real, " +
		"1::double precision, 1::boolean, 'a'::char(3), 'a'::varchar(3), '1 day'::interval, interval '1' day, " +
		"date '2020-01-01', time '01:00', timestamp '2020-01-01', '2020-01-01'::timestamptz, 'x'::bytea, " +
		"'{1}'::int[], x::text, (x+1)::text, cast(x as text), now()::date, (case when true then 1 end)::text, " +
		"1::int::text, (select 1 as y)::text, coalesce(1)::text, '{}'::json FROM (SELECT 1 AS x) s"
	want := "text numeric int8 int4 int2 float8 float4 float8 bool bpchar varchar interval interval " +
		"date time timestamp timestamptz bytea int4 x text x now text text y coalesce json"
	p, err := s.Prepare(t.Context(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Sync()
	var got []string
	for _, c := range p.Columns {
		got = append(got, c.Name)
	}
	if strings.Join(got, " ") != want {
		t.Fatalf("column names:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// TestFunctionColumnNames: div(a, b) and mod(a, b), which the dialect front
// spells pivot_div and pivot_mod (TiDB reads them as operators), are named
// div and mod; an operator (%, ^) is ?column?. PostgreSQL 15.18's names.
func TestFunctionColumnNames(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "SET sql_dialect = 'postgresql'")
	p, err := s.Prepare(t.Context(), "SELECT div(9, 4), mod(7, 3), 7 % 3, 2 ^ 3, sqrt(2.0), scale(1.5), width_bucket(1.0, 0, 2, 4), gcd(4, 6)", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Sync()
	var got []string
	for _, c := range p.Columns {
		got = append(got, c.Name)
	}
	if want := "div mod ?column? ?column? sqrt scale width_bucket gcd"; strings.Join(got, " ") != want {
		t.Fatalf("column names: %s, want %s", strings.Join(got, " "), want)
	}
}
