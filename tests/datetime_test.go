package tests

import (
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
