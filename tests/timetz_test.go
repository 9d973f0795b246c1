package tests

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestTimeTZOverTheWire checks timetz's wire forms as PostgreSQL's
// timetz_send/timetz_recv have them (the time of day in microseconds, then
// the zone in seconds west of UTC, 12 bytes), its OID 1266 in
// RowDescription, and COPY of a timetz column both ways.
func TestTimeTZOverTheWire(t *testing.T) {
	srv := startServer(t)
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := ctxT(t)
	mustExec(t, c, "SET sql_dialect = 'postgresql'")

	res := c.PgConn().ExecParams(ctx, "SELECT '12:34:56.5+02:30'::timetz", nil, nil, nil, []int16{1}).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if oid := res.FieldDescriptions[0].DataTypeOID; oid != 1266 {
		t.Errorf("RowDescription type OID %d, want 1266", oid)
	}
	b := res.Rows[0][0]
	if len(b) != 12 {
		t.Fatalf("binary timetz is %d bytes: %x", len(b), b)
	}
	if us, zone := int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:])); us != (12*3600+34*60+56)*1e6+5e5 || zone != -9000 {
		t.Errorf("binary timetz = %d us, zone %d; want %d, -9000", us, zone, int64((12*3600+34*60+56)*1e6+5e5))
	}

	// A binary parameter: 23:00:00, 5 hours west.
	param := binary.BigEndian.AppendUint64(nil, uint64(23*3600e6))
	param = binary.BigEndian.AppendUint32(param, uint32(5*3600))
	res = c.PgConn().ExecParams(ctx, "SELECT ($1::timetz + interval '2 hours')::text", [][]byte{param}, []uint32{1266}, []int16{1}, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := string(res.Rows[0][0]); got != "01:00:00-05" {
		t.Errorf("binary parameter: %q, want 01:00:00-05", got)
	}

	mustExec(t, c, "CREATE TABLE meetings (id int PRIMARY KEY, at timetz(0))")
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader("1\t09:30:00.6+01\n2\t17:00-08\n3\t\\N\n"), "COPY meetings FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, err := c.PgConn().CopyTo(ctx, &out, "COPY (SELECT id, at FROM meetings ORDER BY at NULLS LAST) TO STDOUT"); err != nil {
		t.Fatal(err)
	}
	if want := "1\t09:30:01+01\n2\t17:00:00-08\n3\t\\N\n"; out.String() != want {
		t.Errorf("COPY TO:\n%q\nwant\n%q", out.String(), want)
	}
}
