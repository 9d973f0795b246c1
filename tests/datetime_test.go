package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestIntervalAndInfinityBinary: over the wire with pgx's binary format,
// an interval carries PostgreSQL's months, days and microseconds both
// ways, and date/timestamp infinities are PostgreSQL's extreme values
// (pgx reads them as its infinity modifiers); SET DateStyle and
// IntervalStyle report the new values with ParameterStatus and change the
// text format (issue 22 item 8).
func TestIntervalAndInfinityBinary(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	mustExec(t, c, "SET sql_dialect = 'postgresql'")

	var iv pgtype.Interval
	if err := c.QueryRow(ctx, "SELECT interval '1 year 2 mons 3 days 04:05:06.5'").Scan(&iv); err != nil {
		t.Fatal(err)
	}
	if iv.Months != 14 || iv.Days != 3 || iv.Microseconds != (4*3600+5*60+6)*1e6+5e5 {
		t.Errorf("binary interval = %+v", iv)
	}
	var text string
	in := pgtype.Interval{Months: -1, Days: 40, Microseconds: 3600e6, Valid: true}
	if err := c.QueryRow(ctx, "SELECT $1::interval::text", in).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "-1 mons +40 days 01:00:00" {
		t.Errorf("interval parameter reads back as %q", text)
	}

	var ts pgtype.Timestamp
	var d pgtype.Date
	if err := c.QueryRow(ctx, "SELECT 'infinity'::timestamp, '-infinity'::date").Scan(&ts, &d); err != nil {
		t.Fatal(err)
	}
	if ts.InfinityModifier != pgtype.Infinity || d.InfinityModifier != pgtype.NegativeInfinity {
		t.Errorf("infinities read as %+v, %+v", ts, d)
	}
	var ok bool
	if err := c.QueryRow(ctx, "SELECT $1::date < '1000-01-01'::date AND $2::timestamp > now()::timestamp",
		pgtype.Date{InfinityModifier: pgtype.NegativeInfinity, Valid: true},
		pgtype.Timestamp{InfinityModifier: pgtype.Infinity, Valid: true}).Scan(&ok); err != nil || !ok {
		t.Errorf("infinite parameters: %v %v", ok, err)
	}

	mustExec(t, c, "SET DateStyle = 'German'")
	if v := c.PgConn().ParameterStatus("DateStyle"); v != "German, DMY" {
		t.Errorf("ParameterStatus DateStyle = %q", v)
	}
	mustExec(t, c, "SET IntervalStyle = 'iso_8601'")
	if v := c.PgConn().ParameterStatus("IntervalStyle"); v != "iso_8601" {
		t.Errorf("ParameterStatus IntervalStyle = %q", v)
	}
	// Text format of the results follows both; the binary date is the same.
	rows, err := c.Query(ctx, "SELECT date '2024-01-31', interval '1 day 2 hours', date '2024-01-31'",
		pgx.QueryResultFormats{pgx.TextFormatCode, pgx.TextFormatCode, pgx.BinaryFormatCode})
	if err != nil {
		t.Fatal(err)
	}
	var vals [][]byte
	for rows.Next() {
		for _, r := range rows.RawValues() {
			vals = append(vals, append([]byte(nil), r...))
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(vals) != 3 || string(vals[0]) != "31.01.2024" || string(vals[1]) != "P1DT2H" {
		t.Errorf("text results %q", vals)
	}
	var bd time.Time
	if err := c.QueryRow(ctx, "SELECT date '2024-01-31'").Scan(&bd); err != nil || bd.Format("2006-01-02") != "2024-01-31" {
		t.Errorf("binary date under DateStyle German: %v %v", bd, err)
	}
}

// TestTimeOverTheWire: PostgreSQL's time (issue 22 item 8) with pgx's
// binary format both ways (OID 1083, microseconds since midnight), in
// binary COPY FROM (pgx CopyFrom) and text COPY TO, and a qualified
// interval column rounding what a binary parameter carries.
func TestTimeOverTheWire(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	mustExec(t, c, "SET sql_dialect = 'postgresql'")

	var tm pgtype.Time
	if err := c.QueryRow(ctx, "SELECT time '04:05:06.789'").Scan(&tm); err != nil {
		t.Fatal(err)
	}
	if tm.Microseconds != (4*3600+5*60+6)*1e6+789e3 {
		t.Errorf("binary time = %+v", tm)
	}
	var text string
	in := pgtype.Time{Microseconds: 86400e6, Valid: true} // 24:00:00
	if err := c.QueryRow(ctx, "SELECT ($1::time - interval '1 second')::text", in).Scan(&text); err != nil {
		t.Fatal(err)
	}
	if text != "23:59:59" {
		t.Errorf("time parameter: %q", text)
	}

	mustExec(t, c, "CREATE TABLE clocks (id int PRIMARY KEY, t time, p time(0), iv interval minute to second(1))")
	n, err := c.CopyFrom(ctx, pgx.Identifier{"clocks"}, []string{"id", "t", "p", "iv"}, pgx.CopyFromRows([][]any{
		{1, pgtype.Time{Microseconds: 1, Valid: true}, pgtype.Time{Microseconds: 500000, Valid: true},
			pgtype.Interval{Microseconds: 62_345_678, Valid: true}},
		{2, pgtype.Time{Microseconds: 13*3600e6 + 30*60e6, Valid: true}, nil, nil},
	}))
	if err != nil || n != 2 {
		t.Fatalf("CopyFrom: %d, %v", n, err)
	}
	var out strings.Builder
	if _, err := c.PgConn().CopyTo(ctx, &out, "COPY clocks TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	want := "1\t00:00:00.000001\t00:00:01\t00:01:02.3\n2\t13:30:00\t\\N\t\\N\n"
	if out.String() != want {
		t.Errorf("COPY TO:\n%q\nwant\n%q", out.String(), want)
	}
	var cnt int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM clocks WHERE t BETWEEN $1 AND '14:00'",
		pgtype.Time{Microseconds: 1, Valid: true}).Scan(&cnt); err != nil || cnt != 2 {
		t.Errorf("time parameter in a range: %d %v", cnt, err)
	}
}
