package server

import (
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

var extendedModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement,
	pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeExec,
}

func TestExtendedModesPgx(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	for _, mode := range extendedModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := ts.connect(t, mode)
			ctx := testContext(t)
			for i := range 3 { // the cached modes take another path the second time
				var a int64
				var b string
				var c *string
				if err := conn.QueryRow(ctx, "select $1::int8, $2::text, $3::text", int64(i), "x", nil).Scan(&a, &b, &c); err != nil {
					t.Fatal(err)
				}
				if a != int64(i) || b != "x" || c != nil {
					t.Fatalf("got %v %q %v", a, b, c)
				}
			}
			_, err := conn.Exec(ctx, "select 1/0")
			if pgCode(err) != sqlerr.DivisionByZero {
				t.Fatalf("got %v", err)
			}
			checkAlive(t, conn)
			// A parameter the client sends as text where the statement
			// wants an integer is parsed by the server.
			var n int32
			err = conn.QueryRow(ctx, "select $1::int4", "not a number").Scan(&n)
			if mode == pgx.QueryExecModeExec {
				// pgx sends the string as a text parameter: 22P02 from the server.
				if pgCode(err) != sqlerr.InvalidTextRepresentation {
					t.Fatalf("got %v", err)
				}
			} else if err == nil {
				t.Fatal("expected an error")
			}
			checkAlive(t, conn)
		})
	}
}

func TestBatchPipeline(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	for _, mode := range extendedModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := ts.connect(t, mode)
			ctx := testContext(t)
			b := &pgx.Batch{}
			for i := range 10 {
				b.Queue("select $1::int4 as n", int32(i))
			}
			b.Queue("select generate_series(1, 5)")
			br := conn.SendBatch(ctx, b)
			for i := range 10 {
				var n int32
				if err := br.QueryRow().Scan(&n); err != nil || n != int32(i) {
					t.Fatalf("query %d: %v %v", i, n, err)
				}
			}
			rows, err := br.Query()
			if err != nil {
				t.Fatal(err)
			}
			vals, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil || !slices.Equal(vals, []int64{1, 2, 3, 4, 5}) {
				t.Fatalf("%v %v", vals, err)
			}
			if err := br.Close(); err != nil {
				t.Fatal(err)
			}

			// An error in the middle: the statements after it do not run.
			b = &pgx.Batch{}
			b.Queue("select 1")
			b.Queue("select 1/0")
			b.Queue("select 2")
			br = conn.SendBatch(ctx, b)
			if _, err := br.Exec(); err != nil {
				t.Fatal(err)
			}
			if _, err := br.Exec(); pgCode(err) != sqlerr.DivisionByZero {
				t.Fatalf("got %v", err)
			}
			if _, err := br.Exec(); err == nil {
				t.Fatal("statement after the error ran")
			}
			br.Close()
			checkAlive(t, conn)
		})
	}
}

func TestExtendedMessages(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	rc := ts.rawStartup(t)
	type step struct {
		msgs []pgproto3.FrontendMessage
		want []string
	}
	sync := &pgproto3.Sync{}
	for i, s := range []step{
		// Describe statement: one OID per $n, then the row description.
		{[]pgproto3.FrontendMessage{
			&pgproto3.Parse{Name: "s1", Query: "select $1::int8 as a, $2 as b", ParameterOIDs: []uint32{0, types.OIDVarchar}},
			&pgproto3.Describe{ObjectType: 'S', Name: "s1"}, sync,
		}, []string{"ParseComplete", "ParameterDescription [20 1043]", "RowDescription a:20:0,b:25:0", "ReadyForQuery I"}},
		// A duplicate named statement is 42P05.
		{[]pgproto3.FrontendMessage{&pgproto3.Parse{Name: "s1", Query: "select 1"}, sync},
			[]string{"ErrorResponse ERROR 42P05 prepared statement \"s1\" already exists", "ReadyForQuery I"}},
		// Bind with per-parameter formats and one result format for all;
		// Describe portal reports the formats.
		{[]pgproto3.FrontendMessage{
			&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{1, 0},
				Parameters: [][]byte{{0, 0, 0, 0, 0, 0, 0, 7}, []byte("b")}, ResultFormatCodes: []int16{0}},
			&pgproto3.Describe{ObjectType: 'P'},
			&pgproto3.Execute{}, sync,
		}, []string{"BindComplete", "RowDescription a:20:0,b:25:0", "DataRow 7,b", "CommandComplete SELECT 1", "ReadyForQuery I"}},
		// Statements without rows describe as NoData; the unnamed statement
		// is replaced by the next Parse.
		{[]pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "set application_name = 'x'"},
			&pgproto3.Parse{Query: "begin"},
			&pgproto3.Describe{ObjectType: 'S'},
			&pgproto3.Bind{}, &pgproto3.Execute{}, sync,
		}, []string{"ParseComplete", "ParseComplete", "ParameterDescription []", "NoData", "BindComplete", "CommandComplete BEGIN", "ReadyForQuery T"}},
		// An error discards everything up to Sync and fails the block.
		{[]pgproto3.FrontendMessage{
			&pgproto3.Parse{Query: "select 1"}, &pgproto3.Bind{}, &pgproto3.Execute{},
			&pgproto3.Parse{Query: "select 1/0"}, &pgproto3.Bind{}, &pgproto3.Execute{},
			&pgproto3.Parse{Query: "select 2"}, &pgproto3.Bind{}, &pgproto3.Execute{},
			&pgproto3.Query{String: "select 3"},
			sync,
		}, []string{"ParseComplete", "BindComplete", "DataRow 1", "CommandComplete SELECT 1",
			"ParseComplete", "BindComplete", "ErrorResponse ERROR 22012 division by zero", "ReadyForQuery E"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Query{String: "rollback"}}, []string{"CommandComplete ROLLBACK", "ReadyForQuery I"}},
		// Errors the protocol layer finds itself.
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "nope"}, sync},
			[]string{"ErrorResponse ERROR 26000 prepared statement \"nope\" does not exist", "ReadyForQuery I"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "s1"}, sync},
			[]string{"ErrorResponse ERROR 08P01 bind message supplies 0 parameters, but prepared statement \"s1\" requires 2", "ReadyForQuery I"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{1, 1, 1}, Parameters: [][]byte{nil, nil}}, sync},
			[]string{"ErrorResponse ERROR 08P01 bind message has 3 parameter formats but 2 parameters", "ReadyForQuery I"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{2}, Parameters: [][]byte{nil, nil}}, sync},
			[]string{"ErrorResponse ERROR 22023 unsupported format code: 2", "ReadyForQuery I"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{nil, nil}, ResultFormatCodes: []int16{0, 1, 0}}, sync},
			[]string{"ErrorResponse ERROR 08P01 bind message has 3 result formats but query has 2 columns", "ReadyForQuery I"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "s1", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{1, 2, 3}, nil}}, sync},
			[]string{"ErrorResponse ERROR 22P03 incorrect binary data format in bind parameter 1", "ReadyForQuery I"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Execute{Portal: "nope"}, sync},
			[]string{"ErrorResponse ERROR 34000 portal \"nope\" does not exist", "ReadyForQuery I"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Describe{ObjectType: 'S', Name: "nope"}, sync},
			[]string{"ErrorResponse ERROR 26000 prepared statement \"nope\" does not exist", "ReadyForQuery I"}},
		// A protocol-layer error inside a block fails the block.
		{[]pgproto3.FrontendMessage{&pgproto3.Query{String: "begin"}}, []string{"CommandComplete BEGIN", "ReadyForQuery T"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "nope"}, sync},
			[]string{"ErrorResponse ERROR 26000 prepared statement \"nope\" does not exist", "ReadyForQuery E"}},
		{[]pgproto3.FrontendMessage{&pgproto3.Query{String: "rollback"}}, []string{"CommandComplete ROLLBACK", "ReadyForQuery I"}},
		// Close: statements and portals; unknown names are fine.
		{[]pgproto3.FrontendMessage{
			&pgproto3.Close{ObjectType: 'S', Name: "s1"}, &pgproto3.Close{ObjectType: 'P', Name: "nope"},
			&pgproto3.Describe{ObjectType: 'S', Name: "s1"}, sync,
		}, []string{"CloseComplete", "CloseComplete", "ErrorResponse ERROR 26000 prepared statement \"s1\" does not exist", "ReadyForQuery I"}},
		// Empty statements answer EmptyQueryResponse to Execute.
		{[]pgproto3.FrontendMessage{&pgproto3.Parse{Query: "-- ping"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, sync},
			[]string{"ParseComplete", "BindComplete", "NoData", "EmptyQueryResponse", "ReadyForQuery I"}},
		// Flush sends what is pending without ending the cycle.
		{[]pgproto3.FrontendMessage{&pgproto3.Parse{Query: "select 1"}, &pgproto3.Flush{}}, []string{"ParseComplete"}},
		{[]pgproto3.FrontendMessage{sync}, []string{"ReadyForQuery I"}},
	} {
		rc.send(s.msgs...)
		var got []string
		if strings.HasPrefix(s.want[len(s.want)-1], "ReadyForQuery") {
			got = rc.expectUntilReady()
		} else {
			for range s.want {
				got = append(got, describeMsg(rc.receive()))
			}
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d:\n got %q\nwant %q", i, got, s.want)
		}
	}
}

func TestPortalSuspended(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	rc := ts.rawStartup(t)
	sync := &pgproto3.Sync{}

	rc.send(&pgproto3.Parse{Query: "select generate_series(1, 5)"}, &pgproto3.Bind{},
		&pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2}, sync)
	want := []string{"ParseComplete", "BindComplete",
		"DataRow 1", "DataRow 2", "PortalSuspended",
		"DataRow 3", "DataRow 4", "PortalSuspended",
		"DataRow 5", "CommandComplete SELECT 1",
		"CommandComplete SELECT 0",
		"ReadyForQuery I"}
	if got := rc.expectUntilReady(); !slices.Equal(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}

	// Outside a transaction block the portal ends with the Sync.
	rc.send(&pgproto3.Bind{DestinationPortal: "p"}, &pgproto3.Execute{Portal: "p", MaxRows: 1}, sync,
		&pgproto3.Execute{Portal: "p", MaxRows: 1}, sync)
	want = []string{"BindComplete", "DataRow 1", "PortalSuspended", "ReadyForQuery I",
		"ErrorResponse ERROR 34000 portal \"p\" does not exist", "ReadyForQuery I"}
	got := rc.expectUntilReady()
	got = append(got, rc.expectUntilReady()...)
	if !slices.Equal(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}

	// Inside one it lives on across Syncs until the block ends.
	rc.send(&pgproto3.Query{String: "begin"})
	rc.expectUntilReady()
	// (The simple Query dropped the unnamed statement, as in PostgreSQL.)
	rc.send(&pgproto3.Parse{Name: "g", Query: "select generate_series(1, 5)"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "g", ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{Portal: "p", MaxRows: 1}, sync)
	want = []string{"ParseComplete", "BindComplete", "DataRow \x00\x00\x00\x00\x00\x00\x00\x01", "PortalSuspended", "ReadyForQuery T"}
	if got := rc.expectUntilReady(); !slices.Equal(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	rc.send(&pgproto3.Execute{Portal: "p", MaxRows: 1}, sync)
	want = []string{"DataRow \x00\x00\x00\x00\x00\x00\x00\x02", "PortalSuspended", "ReadyForQuery T"}
	if got := rc.expectUntilReady(); !slices.Equal(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	rc.send(&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "g"}, sync)
	want = []string{"ErrorResponse ERROR 42P03 portal \"p\" already exists", "ReadyForQuery E"}
	if got := rc.expectUntilReady(); !slices.Equal(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	rc.send(&pgproto3.Query{String: "rollback"})
	rc.expectUntilReady()
	rc.send(&pgproto3.Execute{Portal: "p"}, sync)
	want = []string{"ErrorResponse ERROR 34000 portal \"p\" does not exist", "ReadyForQuery I"}
	if got := rc.expectUntilReady(); !slices.Equal(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}

	// Closing a suspended portal releases its result (checked by the
	// fake's open-result count at cleanup).
	rc.send(&pgproto3.Bind{DestinationPortal: "q", PreparedStatement: "g"}, &pgproto3.Execute{Portal: "q", MaxRows: 1},
		&pgproto3.Close{ObjectType: 'P', Name: "q"}, sync)
	want = []string{"BindComplete", "DataRow 1", "PortalSuspended", "CloseComplete", "ReadyForQuery I"}
	if got := rc.expectUntilReady(); !slices.Equal(got, want) {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
}
