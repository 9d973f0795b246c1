package sessionvars

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txnmode"
)

func code(err error) string {
	var e *sqlerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestSetNormalisesAndReportsChanges(t *testing.T) {
	v := New(map[string]string{"statement_timeout": "5000"})
	if got := v.StatementTimeout(); got != 5*time.Second {
		t.Fatalf("server default: statement_timeout = %v", got)
	}
	if err := v.Set("DateStyle", "mdy, iso"); err != nil {
		t.Fatal(err)
	}
	if got, _ := v.Get("datestyle"); got != "ISO, MDY" {
		t.Fatalf("DateStyle = %q", got)
	}
	if err := v.Set("application_name", "app"); err != nil {
		t.Fatal(err)
	}
	if err := v.Set("statement_timeout", "2s"); err != nil {
		t.Fatal(err)
	}
	// statement_timeout is not reported; application_name is; DateStyle
	// did not change.
	ch := v.TakeChanged()
	if len(ch) != 1 || ch[0] != (Param{"application_name", "app"}) {
		t.Fatalf("changes = %v", ch)
	}
	found := false
	for _, p := range v.Reported() {
		found = found || p == (Param{"DateStyle", "ISO, MDY"})
	}
	if !found {
		t.Fatalf("DateStyle not reported under its display name: %v", v.Reported())
	}
	if ch := v.TakeChanged(); ch != nil {
		t.Fatalf("changes taken twice: %v", ch)
	}
	if err := v.Reset("statement_timeout"); err != nil {
		t.Fatal(err)
	}
	if got := v.StatementTimeout(); got != 5*time.Second {
		t.Fatalf("RESET returns to the server default, got %v", got)
	}
}

func TestRefusals(t *testing.T) {
	v := New(nil)
	for _, c := range []struct{ name, value, code string }{
		{"no_such_setting", "1", sqlerr.UndefinedObject},
		{"server_version", "16", sqlerr.CantChangeRuntimeParam},
		{"extra_float_digits", "9", sqlerr.InvalidParameterValue},
		{"timezone", "Mars/Olympus", sqlerr.InvalidParameterValue},
		{"sql_dialect", "sqlite", sqlerr.InvalidParameterValue},
		{"DateStyle", "ISO, SQL", sqlerr.InvalidParameterValue},
		{"DateStyle", "banana", sqlerr.InvalidParameterValue},
		{"DateStyle", "ISO DMY", sqlerr.InvalidParameterValue},
		{"IntervalStyle", "ansi", sqlerr.InvalidParameterValue},
		{"range_expansion_limit", "-1", sqlerr.InvalidParameterValue},
	} {
		if err := v.Set(c.name, c.value); code(err) != c.code {
			t.Errorf("SET %s = %s: %v, want %s", c.name, c.value, err, c.code)
		}
	}
	if got := v.RangeExpansionLimit(); got != 200000 {
		t.Errorf("range_expansion_limit = %d", got)
	}
}

func TestDefaultsFromStoredSettings(t *testing.T) {
	v := New(nil)
	if v.PostgreSQLDialect() {
		t.Fatal("default dialect is postgresql")
	}
	if err := v.SetDefault("sql_dialect", "PostgreSQL"); err != nil {
		t.Fatal(err)
	}
	if err := v.Set("sql_dialect", "yql"); err != nil {
		t.Fatal(err)
	}
	if err := v.Reset("sql_dialect"); err != nil {
		t.Fatal(err)
	}
	if !v.PostgreSQLDialect() {
		t.Fatal("RESET did not return to the session's default")
	}
	if other := New(nil); other.PostgreSQLDialect() {
		t.Fatal("SetDefault leaked into another session")
	}
	if err := v.Set("TimeZone", "Europe/Berlin"); err != nil || v.Zone().String() != "Europe/Berlin" {
		t.Fatalf("TimeZone: %v %v", err, v.Zone())
	}
}

// TestDateStyle: a DateStyle value of one part keeps the other, German
// alone means DMY, and SHOW gives PostgreSQL's canonical spelling.
func TestDateStyle(t *testing.T) {
	v := New(nil)
	for _, c := range []struct{ set, want string }{
		{"SQL", "SQL, MDY"},
		{"dmy", "SQL, DMY"},
		{"ISO, YMD", "ISO, YMD"},
		{"German", "German, DMY"},
		{"Postgres, US", "Postgres, MDY"},
		{"euro", "Postgres, DMY"},
		{"German, MDY", "German, MDY"},
		{"default", "ISO, MDY"},
	} {
		if err := v.Set("DateStyle", c.set); err != nil {
			t.Fatalf("SET DateStyle = %s: %v", c.set, err)
		}
		if got, _ := v.Get("DateStyle"); got != c.want {
			t.Errorf("SET DateStyle = %s: SHOW gives %q, want %q", c.set, got, c.want)
		}
	}
	err := v.Set("DateStyle", "ISO, SQL")
	if e := sqlerr.As(err); e == nil || e.Message != `invalid value for parameter "DateStyle": "ISO, SQL"` || e.Detail != `Conflicting "datestyle" specifications.` {
		t.Errorf("conflict: %#v", e)
	}
}

// TestTimeoutsFollowValues checks the parsed timeouts against the values
// they come from, through every way a value changes.
func TestTimeoutsFollowValues(t *testing.T) {
	v := New(map[string]string{"statement_timeout": "5000", "idle_in_transaction_session_timeout": "700"})
	check := func(when string) {
		t.Helper()
		for name, got := range map[string]time.Duration{
			"statement_timeout":                   v.StatementTimeout(),
			"lock_timeout":                        v.LockTimeout(),
			"idle_session_timeout":                v.IdleSessionTimeout(),
			"idle_in_transaction_session_timeout": v.IdleInTransactionTimeout(),
		} {
			ms, _ := strconv.ParseInt(v.values[name], 10, 64)
			if want := time.Duration(ms) * time.Millisecond; got != want {
				t.Errorf("%s: %s = %v, its value %q", when, name, got, v.values[name])
			}
		}
	}
	check("new")
	if v.StatementTimeout() != 5*time.Second || v.IdleInTransactionTimeout() != 700*time.Millisecond {
		t.Fatalf("server defaults: %v, %v", v.StatementTimeout(), v.IdleInTransactionTimeout())
	}
	for _, set := range [][2]string{
		{"statement_timeout", "2s"}, {"lock_timeout", "150"}, {"idle_session_timeout", "1min"},
		{"idle_in_transaction_session_timeout", "3s"}, {"STATEMENT_TIMEOUT", "0"},
	} {
		if err := v.Set(set[0], set[1]); err != nil {
			t.Fatal(err)
		}
		check("SET " + set[0])
	}
	if v.LockTimeout() != 150*time.Millisecond || v.IdleSessionTimeout() != time.Minute || v.StatementTimeout() != 0 {
		t.Fatalf("after SET: lock %v, idle session %v, statement %v", v.LockTimeout(), v.IdleSessionTimeout(), v.StatementTimeout())
	}
	_ = v.Set("lock_timeout", "-1") // refused or taken, the value and its parse agree
	check("SET lock_timeout = -1")
	v.BeginTxn()
	check("BEGIN")
	v.EndTxn()
	if err := v.Reset("statement_timeout"); err != nil {
		t.Fatal(err)
	}
	check("RESET")
	v.ResetAll()
	check("RESET ALL")
	if v.StatementTimeout() != 5*time.Second || v.LockTimeout() != 0 {
		t.Fatalf("after RESET ALL: statement %v, lock %v", v.StatementTimeout(), v.LockTimeout())
	}
}

// BenchmarkStatementTimeouts is what the session and the server read of
// the settings around every statement: statement_timeout and lock_timeout
// (sql's statementContext), idle_session_timeout (the server's
// armIdleTimeout).
func BenchmarkStatementTimeouts(b *testing.B) {
	v := New(nil)
	b.ReportAllocs()
	var sum time.Duration
	for b.Loop() {
		sum += v.StatementTimeout() + v.LockTimeout() + v.IdleSessionTimeout()
	}
	if sum != 0 {
		b.Fatal(sum)
	}
}

// TxnMode's cached answers follow every change: SET of a default or of
// the block's own settings, RESET, and the start and end of a block.
func TestTxnModeFollowsChanges(t *testing.T) {
	v := New(nil)
	check := func(what string, wantIso txnmode.Isolation, wantRO bool) {
		t.Helper()
		m := v.TxnMode()
		if m != v.txnMode() || m.Isolation != wantIso || m.ReadOnly != wantRO {
			t.Fatalf("%s: %+v (computed %+v), want isolation %v read-only %v", what, m, v.txnMode(), wantIso, wantRO)
		}
	}
	base := v.TxnMode().Isolation
	check("defaults", base, false)
	if err := v.Set("default_transaction_read_only", "on"); err != nil {
		t.Fatal(err)
	}
	check("default read-only", base, true)
	v.BeginTxn()
	check("block from the defaults", base, true)
	if err := v.Set("transaction_read_only", "off"); err != nil {
		t.Fatal(err)
	}
	if err := v.Set("transaction_isolation", "serializable"); err != nil {
		t.Fatal(err)
	}
	check("block's own settings", txnmode.Serializable, false)
	v.EndTxn()
	check("after the block", base, true)
	if err := v.Reset("default_transaction_read_only"); err != nil {
		t.Fatal(err)
	}
	check("reset", base, false)
	if err := v.Set("stale_read_only", "on"); err != nil {
		t.Fatal(err)
	}
	check("stale read-only", base, true)
}

// BenchmarkTxnMode: "computed" is what every call cost before (the
// look-ups of txnMode), "cached" what TxnMode costs between changes.
func BenchmarkTxnMode(b *testing.B) {
	v := New(nil)
	b.Run("computed", func(b *testing.B) {
		for range b.N {
			v.txnMode()
		}
	})
	b.Run("cached", func(b *testing.B) {
		for range b.N {
			v.TxnMode()
		}
	})
}
