package server

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// fakeEngine is a tiny SQL engine for the server's tests. It understands:
//
//	(empty, comments, ;)              EmptyQueryResponse
//	BEGIN / COMMIT / ROLLBACK         transaction status I / T / E
//	SET name = value, SHOW name       reported parameters change
//	SELECT item [AS name], ...        items: integer, 'text', true, false,
//	                                  null, $n, $n::type (echoes the parameter)
//	SELECT generate_series(1, N)      N Int64 rows, produced lazily
//	SELECT pg_sleep(S)                sleeps S seconds or until cancelled
//	SELECT 1/0                        22012 when executed
//	SELECT raise_notice('msg')        a NOTICE, one row
//	SELECT panic()                    panics inside Execute
//
// Anything else is a syntax error at position 1. Statements are re-parsed
// from their SQL text at Execute, so a Prepared carries nothing hidden.
type fakeEngine struct {
	databases map[string]bool

	// sleeping receives a value each time pg_sleep starts, so tests can
	// act while a statement is running without guessing at timing.
	sleeping chan struct{}

	// noSleep makes pg_sleep return at once (the fuzz target's streams
	// must not outlive their client).
	noSleep bool

	openSessions atomic.Int64
	openResults  atomic.Int64
	sessionDone  chan struct{} // a value per closed session

	// violations records misuse of the session API by the server (a
	// double Close, Next after Close). The server recovers panics, so the
	// fake cannot rely on panicking to fail a test; tests check this list.
	mu         sync.Mutex
	violations []string
}

// violated records a misuse and panics.
func (e *fakeEngine) violated(msg string) {
	e.mu.Lock()
	e.violations = append(e.violations, msg)
	e.mu.Unlock()
	panic(msg)
}

func (e *fakeEngine) checkViolations(t testing.TB) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range e.violations {
		t.Errorf("session API misused: %s", v)
	}
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{
		databases:   map[string]bool{"pivotdb": true, "postgres": true},
		sleeping:    make(chan struct{}, 16),
		sessionDone: make(chan struct{}, 1024),
	}
}

func (e *fakeEngine) NewSession(database, user string) (Session, error) {
	if !e.databases[database] {
		return nil, &sqlerr.Error{Code: sqlerr.UndefinedDatabase, Message: fmt.Sprintf("database %q does not exist", database), Fatal: true}
	}
	e.openSessions.Add(1)
	s := &fakeSession{e: e, user: user, tx: 'I', params: map[string]string{}}
	for _, p := range fakeReported {
		s.params[strings.ToLower(p.Name)] = p.Value
	}
	s.params["session_authorization"] = user
	return s, nil
}

// fakeReported are the parameters PostgreSQL 15 reports, with its defaults.
var fakeReported = []sql.ParameterStatus{
	{Name: "application_name", Value: ""},
	{Name: "client_encoding", Value: "UTF8"},
	{Name: "DateStyle", Value: "ISO, MDY"},
	{Name: "default_transaction_read_only", Value: "off"},
	{Name: "in_hot_standby", Value: "off"},
	{Name: "integer_datetimes", Value: "on"},
	{Name: "IntervalStyle", Value: "postgres"},
	{Name: "is_superuser", Value: "on"},
	{Name: "server_encoding", Value: "UTF8"},
	{Name: "server_version", Value: "15.0 (PivotDB)"},
	{Name: "session_authorization", Value: ""},
	{Name: "standard_conforming_strings", Value: "on"},
	{Name: "TimeZone", Value: "UTC"},
}

type fakeSession struct {
	e       *fakeEngine
	user    string
	tx      byte
	params  map[string]string // lower-case names
	changed []sql.ParameterStatus
	notices []sql.Notice
	closed  bool
}

func (s *fakeSession) Close() {
	if s.closed {
		s.e.violated("session closed twice")
	}
	s.closed = true
	s.e.openSessions.Add(-1)
	s.e.sessionDone <- struct{}{}
}

func (s *fakeSession) TxStatus() byte { return s.tx }

func (s *fakeSession) FailTransaction() {
	if s.tx == 'T' {
		s.tx = 'E'
	}
}

func (s *fakeSession) InitialParameters() []sql.ParameterStatus {
	out := make([]sql.ParameterStatus, len(fakeReported))
	for i, p := range fakeReported {
		out[i] = sql.ParameterStatus{Name: p.Name, Value: s.params[strings.ToLower(p.Name)]}
	}
	return out
}

func (s *fakeSession) TakeParameterChanges() []sql.ParameterStatus {
	c := s.changed
	s.changed = nil
	return c
}

func (s *fakeSession) BeginImplicit() {}

func (s *fakeSession) SetScript(bool) {}

func (s *fakeSession) Sync() error { return nil }

func (s *fakeSession) TakeNotices() []sql.Notice {
	n := s.notices
	s.notices = nil
	return n
}

func (s *fakeSession) Prepare(ctx context.Context, text string, paramOIDs []uint32) (*sql.Prepared, error) {
	parts := splitStatements(text)
	switch len(parts) {
	case 0:
		return &sql.Prepared{SQL: text, Empty: true}, nil
	case 1:
		st, err := parseFake(parts[0], paramOIDs)
		if err != nil {
			s.FailTransaction()
			return nil, err
		}
		return st.prepared, nil
	}
	s.FailTransaction()
	return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
}

func (s *fakeSession) PrepareScript(ctx context.Context, text string) ([]*sql.Prepared, error) {
	var out []*sql.Prepared
	for _, part := range splitStatements(text) {
		st, err := parseFake(part, nil)
		if err != nil {
			s.FailTransaction()
			return nil, err
		}
		out = append(out, st.prepared)
	}
	return out, nil
}

func (s *fakeSession) Execute(ctx context.Context, p *sql.Prepared, params []types.Value) (sql.Result, error) {
	if p.Empty {
		return s.result(nil, nil, ""), nil
	}
	st, err := parseFake(p.SQL, nil)
	if err != nil {
		return nil, err
	}
	// Types come from the statement as prepared; the text supplies the rest.
	st.prepared = p
	if len(params) != len(p.ParamTypes) {
		return nil, sqlerr.New(sqlerr.InternalError, "fake: %d params for %d parameters", len(params), len(p.ParamTypes))
	}
	if s.tx == 'E' && st.kind != "commit" && st.kind != "rollback" {
		return nil, sqlerr.New(sqlerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	res, err := s.run(ctx, st, params)
	if err != nil {
		s.FailTransaction()
		return nil, err
	}
	return res, nil
}

func (s *fakeSession) run(ctx context.Context, st *fakeStmt, params []types.Value) (sql.Result, error) {
	cols := st.prepared.Columns
	switch st.kind {
	case "begin":
		if s.tx != 'I' {
			s.notices = append(s.notices, sql.Notice{Severity: "WARNING", Code: "25001", Message: "there is already a transaction in progress"})
		} else {
			s.tx = 'T'
		}
		return s.result(nil, nil, "BEGIN"), nil
	case "commit":
		tag := "COMMIT"
		if s.tx == 'E' {
			tag = "ROLLBACK"
		}
		s.tx = 'I'
		return s.result(nil, nil, tag), nil
	case "rollback":
		s.tx = 'I'
		return s.result(nil, nil, "ROLLBACK"), nil
	case "set":
		name := strings.ToLower(st.arg)
		if _, ok := s.params[name]; !ok {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", st.arg)
		}
		s.params[name] = st.value
		for _, p := range fakeReported {
			if strings.ToLower(p.Name) == name {
				s.changed = append(s.changed, sql.ParameterStatus{Name: p.Name, Value: st.value})
			}
		}
		return s.result(nil, nil, "SET"), nil
	case "show":
		v, ok := s.params[strings.ToLower(st.arg)]
		if !ok {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", st.arg)
		}
		return s.result(cols, [][]types.Value{{types.NewUtf8(v)}}, "SHOW"), nil
	case "series":
		n := st.n
		r := s.result(cols, nil, "")
		r.gen = func(i int64) ([]types.Value, bool) {
			if i >= n {
				return nil, false
			}
			return []types.Value{types.NewInt64(i + 1)}, true
		}
		return r, nil
	case "sleep":
		select {
		case s.e.sleeping <- struct{}{}:
		default:
		}
		if s.e.noSleep {
			return s.result(cols, [][]types.Value{{types.NewUtf8("")}}, "SELECT 1"), nil
		}
		t := time.NewTimer(time.Duration(st.n) * time.Second)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		return s.result(cols, [][]types.Value{{types.NewUtf8("")}}, "SELECT 1"), nil
	case "div0":
		return nil, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	case "notice":
		s.notices = append(s.notices, sql.Notice{Severity: "NOTICE", Code: "00000", Message: st.arg})
		return s.result(cols, [][]types.Value{{types.NewUtf8("")}}, "SELECT 1"), nil
	case "panic":
		panic("fake: panic() called")
	case "select":
		row := make([]types.Value, len(st.items))
		for i, it := range st.items {
			v := it.lit
			if it.param > 0 {
				var err error
				v, err = types.Cast(params[it.param-1], cols[i].Type)
				if err != nil {
					return nil, err
				}
			}
			row[i] = v
		}
		return s.result(cols, [][]types.Value{row}, "SELECT 1"), nil
	}
	return nil, sqlerr.New(sqlerr.InternalError, "fake: unknown kind %q", st.kind)
}

func (s *fakeSession) result(cols []sql.ResultColumn, rows [][]types.Value, tag string) *fakeResult {
	s.e.openResults.Add(1)
	return &fakeResult{e: s.e, cols: cols, rows: rows, tag: tag}
}

// fakeResult streams rows from a slice or a generator.
type fakeResult struct {
	e      *fakeEngine
	cols   []sql.ResultColumn
	rows   [][]types.Value
	gen    func(i int64) ([]types.Value, bool)
	i      int64
	tag    string
	closed bool
}

func (r *fakeResult) Columns() []sql.ResultColumn { return r.cols }
func (r *fakeResult) Tag() string                 { return r.tag }

func (r *fakeResult) Next(ctx context.Context) ([]types.Value, error) {
	if r.closed {
		r.e.violated("Next after Close")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var row []types.Value
	ok := false
	if r.gen != nil {
		row, ok = r.gen(r.i)
	} else if r.i < int64(len(r.rows)) {
		row, ok = r.rows[r.i], true
	}
	if !ok {
		if r.cols != nil && r.gen != nil {
			r.tag = "SELECT " + strconv.FormatInt(r.i, 10)
		}
		return nil, nil
	}
	r.i++
	return row, nil
}

func (r *fakeResult) Close() {
	if r.closed {
		r.e.violated("result closed twice")
	}
	r.closed = true
	r.e.openResults.Add(-1)
}

// The fake's parser.

type fakeItem struct {
	lit   types.Value
	param int // $n, or 0 for a literal
}

type fakeStmt struct {
	kind     string
	arg      string
	value    string
	n        int64
	items    []fakeItem
	prepared *sql.Prepared
}

// splitStatements cuts text at semicolons outside quotes, drops comments,
// and returns the non-empty statements.
func splitStatements(text string) []string {
	var out []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case inQuote:
			cur.WriteByte(ch)
			if ch == '\'' {
				inQuote = false
			}
		case ch == '\'':
			inQuote = true
			cur.WriteByte(ch)
		case ch == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case ch == ';':
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		default:
			cur.WriteByte(ch)
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

var (
	reSet    = regexp.MustCompile(`(?i)^set\s+([a-z_][a-z0-9_.]*)\s*(?:=|\s+to\s+)\s*(.+)$`)
	reShow   = regexp.MustCompile(`(?i)^show\s+([a-z_][a-z0-9_.]*)$`)
	reSeries = regexp.MustCompile(`(?i)^select\s+generate_series\(\s*1\s*,\s*(\d+)\s*\)$`)
	reSleep  = regexp.MustCompile(`(?i)^select\s+pg_sleep\(\s*(\d+)\s*\)$`)
	reNotice = regexp.MustCompile(`(?i)^select\s+raise_notice\('([^']*)'\)$`)
	reSelect = regexp.MustCompile(`(?i)^select\s+(.+)$`)
	reAs     = regexp.MustCompile(`(?i)^(.*?)\s+as\s+([a-z_][a-z0-9_]*)$`)
	reParam  = regexp.MustCompile(`^\$(\d+)(?:::(.+))?$`)
)

func parseFake(text string, declared []uint32) (*fakeStmt, error) {
	text = strings.TrimSpace(text)
	st := &fakeStmt{}
	p := &sql.Prepared{SQL: text}
	st.prepared = p
	lower := strings.ToLower(text)
	textCol := func(name string) []sql.ResultColumn {
		return []sql.ResultColumn{{Name: name, Type: types.TypeUtf8}}
	}
	switch {
	case lower == "begin" || lower == "start transaction":
		st.kind = "begin"
	case lower == "commit" || lower == "end":
		st.kind = "commit"
	case lower == "rollback":
		st.kind = "rollback"
	case lower == "select 1/0":
		st.kind = "div0"
		p.Columns = []sql.ResultColumn{{Name: "?column?", Type: types.TypeInt32}}
	case lower == "select panic()":
		st.kind = "panic"
		p.Columns = textCol("panic")
	case reSet.MatchString(text):
		m := reSet.FindStringSubmatch(text)
		st.kind, st.arg, st.value = "set", m[1], unquote(strings.TrimSpace(m[2]))
	case reShow.MatchString(text):
		m := reShow.FindStringSubmatch(text)
		st.kind, st.arg = "show", m[1]
		p.Columns = textCol(strings.ToLower(m[1]))
	case reSeries.MatchString(text):
		st.kind = "series"
		st.n, _ = strconv.ParseInt(reSeries.FindStringSubmatch(text)[1], 10, 64)
		p.Columns = []sql.ResultColumn{{Name: "generate_series", Type: types.TypeInt64}}
	case reSleep.MatchString(text):
		st.kind = "sleep"
		st.n, _ = strconv.ParseInt(reSleep.FindStringSubmatch(text)[1], 10, 64)
		st.n = min(st.n, 60)
		p.Columns = textCol("pg_sleep")
	case reNotice.MatchString(text):
		st.kind, st.arg = "notice", reNotice.FindStringSubmatch(text)[1]
		p.Columns = textCol("raise_notice")
	case reSelect.MatchString(text):
		st.kind = "select"
		if err := parseItems(st, reSelect.FindStringSubmatch(text)[1], declared); err != nil {
			return nil, err
		}
	default:
		word, _, _ := strings.Cut(text, " ")
		return nil, &sqlerr.Error{Code: sqlerr.SyntaxError, Message: fmt.Sprintf("syntax error at or near %q", word), Position: 1}
	}
	return st, nil
}

func parseItems(st *fakeStmt, list string, declared []uint32) error {
	p := st.prepared
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		name := "?column?"
		if m := reAs.FindStringSubmatch(item); m != nil {
			item, name = strings.TrimSpace(m[1]), m[2]
		}
		var it fakeItem
		var typ types.Type
		lower := strings.ToLower(item)
		switch {
		case reParam.MatchString(item):
			m := reParam.FindStringSubmatch(item)
			n, _ := strconv.Atoi(m[1])
			if n < 1 || n > 100 {
				return sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", n)
			}
			for len(p.ParamTypes) < n {
				p.ParamTypes = append(p.ParamTypes, types.TypeUnknown)
			}
			pt := types.TypeUnknown
			if n <= len(declared) {
				if t, ok := types.FromOID(declared[n-1]); ok {
					pt = t
				}
			}
			typ = types.TypeUtf8
			if m[2] != "" {
				t, err := types.ParseTypeName(m[2])
				if err != nil {
					return err
				}
				typ = t
				if pt.Family == types.Unknown {
					pt = t
				}
			} else if pt.Family != types.Unknown {
				typ = pt
			}
			if p.ParamTypes[n-1].Family == types.Unknown {
				p.ParamTypes[n-1] = pt
			}
			it.param = n
		case lower == "null":
			typ = types.TypeUtf8
		case lower == "true" || lower == "false":
			typ, it.lit = types.TypeBool, types.NewBool(lower == "true")
		case strings.HasPrefix(item, "'") && strings.HasSuffix(item, "'") && len(item) >= 2:
			typ, it.lit = types.TypeUtf8, types.NewUtf8(unquote(item))
		default:
			if i, err := strconv.ParseInt(item, 10, 64); err == nil {
				typ, it.lit = types.TypeInt64, types.NewInt64(i)
				if i >= -1<<31 && i < 1<<31 {
					typ, it.lit = types.TypeInt32, types.NewInt(types.Int32, i)
				}
			} else if d, _, err := apd.NewFromString(item); err == nil && strings.ContainsAny(item, ".") {
				typ, it.lit = types.TypeDecimal, types.NewDecimal(d)
			} else {
				return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: fmt.Sprintf("syntax error at or near %q", item), Position: 8}
			}
		}
		p.Columns = append(p.Columns, sql.ResultColumn{Name: name, Type: typ})
		st.items = append(st.items, it)
	}
	for len(p.ParamTypes) < len(declared) {
		t, _ := types.FromOID(declared[len(p.ParamTypes)])
		p.ParamTypes = append(p.ParamTypes, t)
	}
	return nil
}

// fakeDirectSession is a fake session that takes startup settings directly,
// as *sql.Session does, instead of through SET.
type fakeDirectSession struct{ *fakeSession }

func (s fakeDirectSession) SetStartupParameter(name, value string) error {
	name = strings.ToLower(name)
	if _, ok := s.params[name]; !ok {
		return sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	s.params[name] = value
	return nil
}

// directEngine hands out fakeDirectSessions.
type directEngine struct{ *fakeEngine }

func (e directEngine) NewSession(database, user string) (Session, error) {
	s, err := e.fakeEngine.NewSession(database, user)
	if err != nil {
		return nil, err
	}
	return fakeDirectSession{s.(*fakeSession)}, nil
}

// unquote removes the quotes of a '...' literal and undoes its doubled
// quotes; other text is returned as it is.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}
