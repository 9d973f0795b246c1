package server

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

func TestStartupParameters(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	pc := conn.PgConn()
	for _, key := range []string{
		"server_version", "server_encoding", "client_encoding", "DateStyle", "IntervalStyle",
		"TimeZone", "integer_datetimes", "standard_conforming_strings", "is_superuser",
		"session_authorization", "application_name", "default_transaction_read_only", "in_hot_standby",
	} {
		if pc.ParameterStatus(key) == "" && key != "application_name" {
			t.Errorf("no ParameterStatus for %s", key)
		}
	}
	if v := pc.ParameterStatus("server_version"); !strings.HasPrefix(v, "15.") {
		t.Errorf("server_version = %q", v)
	}
	if v := pc.ParameterStatus("session_authorization"); v != "pivotdb" {
		t.Errorf("session_authorization = %q", v)
	}
	if pc.PID() == 0 || len(pc.SecretKey()) != 4 {
		t.Errorf("BackendKeyData pid=%d secret=%x", pc.PID(), pc.SecretKey())
	}
	if pc.TxStatus() != 'I' {
		t.Errorf("TxStatus %c", pc.TxStatus())
	}
}

func TestStartupSettings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine func() Engine
	}{
		{"through SET", func() Engine { return newFakeEngine() }},
		{"through SetStartupParameter", func() Engine { return directEngine{newFakeEngine()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, Config{}, tc.engine())
			cfg, err := pgx.ParseConfig(ts.connString(""))
			if err != nil {
				t.Fatal(err)
			}
			cfg.RuntimeParams = map[string]string{
				"application_name": "it's me",
				"options":          `-c DateStyle=ISO,\ DMY --TimeZone=Europe/Berlin`,
				"no_such_setting":  "x",
			}
			var notices []string
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n.Severity+" "+n.Message) }
			conn, err := pgx.ConnectConfig(testContext(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(testContext(t))
			pc := conn.PgConn()
			if v := pc.ParameterStatus("application_name"); v != "it's me" {
				t.Errorf("application_name = %q", v)
			}
			if v := pc.ParameterStatus("DateStyle"); v != "ISO, DMY" {
				t.Errorf("DateStyle = %q", v)
			}
			if v := pc.ParameterStatus("TimeZone"); v != "Europe/Berlin" {
				t.Errorf("TimeZone = %q", v)
			}
			if len(notices) != 1 || !strings.Contains(notices[0], "no_such_setting") || !strings.HasPrefix(notices[0], "WARNING") {
				t.Errorf("notices = %q", notices)
			}
		})
	}
}

func TestStartupErrors(t *testing.T) {
	ts := startServer(t, Config{}, nil)

	t.Run("unknown database", func(t *testing.T) {
		_, err := pgx.Connect(testContext(t), strings.Replace(ts.connString(""), "/pivotdb?", "/nope?", 1))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != sqlerr.UndefinedDatabase || pe.Severity != "FATAL" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("no user", func(t *testing.T) {
		rc := ts.dialRaw(t)
		rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"database": "pivotdb"}})
		got := rc.readUntilClosed()
		if !slices.Contains(got, "ErrorResponse FATAL 28000 no PostgreSQL user name specified in startup packet") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("protocol 2", func(t *testing.T) {
		rc := ts.dialRaw(t)
		rc.nc.Write([]byte{0, 0, 0, 8, 0, 2, 0, 0})
		got := rc.readUntilClosed()
		if len(got) != 1 || !strings.HasPrefix(got[0], "ErrorResponse FATAL 0A000 unsupported frontend protocol 2.0") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("protocol 3.2 negotiates 3.0", func(t *testing.T) {
		rc := ts.dialRaw(t)
		rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32,
			Parameters: map[string]string{"user": "pivotdb", "_pq_.thing": "1"}})
		m := rc.receive()
		npv, ok := m.(*pgproto3.NegotiateProtocolVersion)
		if !ok || npv.NewestMinorProtocol != 0 || !slices.Equal(npv.UnrecognizedOptions, []string{"_pq_.thing"}) {
			t.Fatalf("got %#v", m)
		}
		rc.expectUntilReady()
	})
	t.Run("SSLRequest and GSSENCRequest answered N", func(t *testing.T) {
		rc := ts.dialRaw(t)
		for _, code := range []uint32{gssEncRequestCode, sslRequestCode} {
			var b [8]byte
			b[3] = 8
			b[4], b[5], b[6], b[7] = byte(code>>24), byte(code>>16), byte(code>>8), byte(code)
			rc.nc.Write(b[:])
			var ans [1]byte
			if _, err := rc.nc.Read(ans[:]); err != nil || ans[0] != 'N' {
				t.Fatalf("answer %q %v", ans, err)
			}
		}
		rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "pivotdb"}})
		rc.expectUntilReady()
		rc.send(&pgproto3.Query{String: "select 1"})
		got := rc.expectUntilReady()
		if !slices.Contains(got, "DataRow 1") {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("pgx sslmode=prefer falls back", func(t *testing.T) {
		conn, err := pgx.Connect(testContext(t), strings.Replace(ts.connString(""), "sslmode=disable", "sslmode=prefer", 1))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(testContext(t))
		checkAlive(t, conn)
	})
}

func TestSimpleQuery(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	rc := ts.rawStartup(t)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"select 1", []string{"RowDescription ?column?:23:0", "DataRow 1", "CommandComplete SELECT 1", "ReadyForQuery I"}},
		{"select 1 as a, 'x' as b, null; select true",
			[]string{"RowDescription a:23:0,b:25:0,?column?:25:0", "DataRow 1,x,NULL", "CommandComplete SELECT 1",
				"RowDescription ?column?:16:0", "DataRow t", "CommandComplete SELECT 1", "ReadyForQuery I"}},
		{"-- ping", []string{"EmptyQueryResponse", "ReadyForQuery I"}},
		{"", []string{"EmptyQueryResponse", "ReadyForQuery I"}},
		{" ; ;", []string{"EmptyQueryResponse", "ReadyForQuery I"}},
		// An error skips the rest of the string.
		{"select 1; select 1/0; set application_name = 'skipped'",
			[]string{"RowDescription ?column?:23:0", "DataRow 1", "CommandComplete SELECT 1",
				"ErrorResponse ERROR 22012 division by zero", "ReadyForQuery I"}},
		{"show application_name", []string{"RowDescription application_name:25:0", "DataRow ", "CommandComplete SHOW", "ReadyForQuery I"}},
		// A syntax error anywhere fails the whole string before it runs.
		{"set application_name = 'no'; selec 1", []string{"ErrorResponse ERROR 42601 syntax error at or near \"selec\"", "ReadyForQuery I"}},
		{"set application_name = 'yes'", []string{"CommandComplete SET", "ParameterStatus application_name=yes", "ReadyForQuery I"}},
		{"select raise_notice('hello')", []string{"RowDescription raise_notice:25:0", "DataRow ", "CommandComplete SELECT 1",
			"NoticeResponse NOTICE hello", "ReadyForQuery I"}},
		{"begin; select 1/0", []string{"CommandComplete BEGIN", "ErrorResponse ERROR 22012 division by zero", "ReadyForQuery E"}},
		{"select 1", []string{"ErrorResponse ERROR 25P02 current transaction is aborted, commands ignored until end of transaction block", "ReadyForQuery E"}},
		{"rollback", []string{"CommandComplete ROLLBACK", "ReadyForQuery I"}},
		{"select $1", []string{"ErrorResponse ERROR 42P02 there is no parameter $1", "ReadyForQuery I"}},
		{"select generate_series(1, 3)", []string{"RowDescription generate_series:20:0", "DataRow 1", "DataRow 2", "DataRow 3",
			"CommandComplete SELECT 3", "ReadyForQuery I"}},
	} {
		rc.send(&pgproto3.Query{String: tc.query})
		if got := rc.expectUntilReady(); !slices.Equal(got, tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.query, got, tc.want)
		}
	}
}

func TestSimpleProtocolPgx(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testContext(t)
	if v := mustQueryValue(t, conn, "select 'hello'"); v != "hello" {
		t.Errorf("got %q", v)
	}
	// pgx interpolates arguments client-side in this mode.
	if v := mustQueryValue(t, conn, "select $1", "it's"); v != "it's" {
		t.Errorf("got %q", v)
	}
	var n int64
	rows, err := conn.Query(ctx, "select generate_series(1, 100)")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		n += v
	}
	if rows.Err() != nil || n != 5050 {
		t.Fatalf("sum %d err %v", n, rows.Err())
	}
	_, err = conn.Exec(ctx, "select 1/0")
	if pgCode(err) != sqlerr.DivisionByZero {
		t.Fatalf("got %v", err)
	}
	_, err = conn.Exec(ctx, "bogus")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != sqlerr.SyntaxError || pe.Position != 1 {
		t.Fatalf("got %#v", err)
	}
	// Multi-statement results through pgconn.
	results, err := conn.PgConn().Exec(ctx, "select 1; select 2; -- done").ReadAll()
	if err != nil || len(results) != 2 || string(results[1].Rows[0][0]) != "2" {
		t.Fatalf("results %v err %v", results, err)
	}
	if err := conn.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLargeResultStreams(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	conn := ts.connect(t, pgx.QueryExecModeExec)
	rows, err := conn.Query(testContext(t), "select generate_series(1, 200000)")
	if err != nil {
		t.Fatal(err)
	}
	var count int
	for rows.Next() {
		count++
	}
	if rows.Err() != nil || count != 200000 {
		t.Fatalf("count %d err %v", count, rows.Err())
	}
}

func TestErrorResponseFields(t *testing.T) {
	r := errorResponse(&sqlerr.Error{Code: sqlerr.UndefinedTable, Message: `relation "t" does not exist`,
		Detail: "d", Hint: "h", Position: 15})
	if r.Severity != "ERROR" || r.SeverityUnlocalized != "ERROR" || r.Code != "42P01" || r.Detail != "d" || r.Hint != "h" || r.Position != 15 {
		t.Errorf("got %+v", r)
	}
	if r := errorResponse(&sqlerr.Error{Message: "x", Fatal: true}); r.Severity != "FATAL" || r.Code != sqlerr.InternalError || r.Position != 0 {
		t.Errorf("got %+v", r)
	}
	c := &conn{ctx: testContext(t)}
	if e := c.errorFor(nil, errors.New("boom")); e.Code != sqlerr.InternalError || e.Message != "boom" {
		t.Errorf("plain error became %+v", e)
	}
}

func TestParameterChangesInExtendedProtocol(t *testing.T) {
	ts := startServer(t, Config{}, nil)
	for _, mode := range extendedModes {
		conn := ts.connect(t, mode)
		if _, err := conn.Exec(testContext(t), "set application_name = '"+mode.String()+"'"); err != nil {
			t.Fatal(err)
		}
		if v := conn.PgConn().ParameterStatus("application_name"); v != mode.String() {
			t.Errorf("%v: application_name = %q", mode, v)
		}
	}
}
