package logictest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// DefaultHashThreshold is the hash threshold a file starts with, as in the
// reference runner (DEFAULT_HASH_THRESHOLD): results with more than 8 values
// compare by hash unless the file sets "hash-threshold".
const DefaultHashThreshold = 8

// Options configure a run.
type Options struct {
	// Addr is the server's host:port.
	Addr string
	// User and Database to connect as; both default to "pivotdb".
	User, Database string
	// Password, if set; otherwise PGPASSWORD / ~/.pgpass apply as in libpq.
	Password string
	// SSLMode is the libpq sslmode ("disable", "prefer", "require", ...).
	// Empty means libpq's default ("prefer", or PGSSLMODE).
	SSLMode string

	// Engine is the engine name that skipif/onlyif compare with
	// (case-insensitively); default "pivotdb".
	Engine string

	// Verbose prints each failing record with its SQL, expected and actual
	// result to Out, as it happens.
	Verbose bool
	// Out receives verbose output; nil discards it.
	Out io.Writer

	// KnownFailures lists records expected to fail (see KnownFailures).
	// Listed records are skipped, counted in Skipped and FileResult.Known.
	KnownFailures KnownFailures
	// RunKnownFailures runs the listed records anyway: one that still fails
	// is counted as skipped and known, one that passes as passed and fixed.
	// Neither counts as a failure.
	RunKnownFailures bool

	// FileTimeout bounds each file's run (0: no limit). When it expires,
	// the remaining records of the file fail as "not run".
	FileTimeout time.Duration
	// RecordTimeout bounds each statement or query (0: no limit). On expiry
	// the client sends a CancelRequest; the record fails, and the file goes
	// on if the connection survives.
	RecordTimeout time.Duration
	// ConnectTimeout bounds connecting (default 10s).
	ConnectTimeout time.Duration

	// FreshDatabase runs every file in a database of its own: before the
	// file, CREATE DATABASE logictest_<pid>_<n> over a connection to
	// Database; after it, DROP DATABASE of that name. Without it every file
	// runs in Database itself and nothing is dropped (the corpus files
	// create tables with the same names, so they then need a fresh server).
	FreshDatabase bool
}

func (o Options) withDefaults() Options {
	if o.User == "" {
		o.User = "pivotdb"
	}
	if o.Database == "" {
		o.Database = "pivotdb"
	}
	if o.Engine == "" {
		o.Engine = "pivotdb"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	return o
}

// Failure describes a record that did not pass.
type Failure struct {
	File string
	Line int // line of the record's statement/query line; 0 for file-level problems
	// Kind is the record kind ("statement", "query", "invalid").
	Kind    string
	SQL     string
	Message string
	// Expected and Got are the result lines compared, for wrong query
	// results (Got is a hash line when the expected result is one).
	Expected, Got []string
}

// FileResult is the outcome of one file.
type FileResult struct {
	File string
	// Passed, Failed and Skipped count statement, query and invalid records.
	Passed, Failed, Skipped int
	// Known counts records (included in Skipped) listed in
	// Options.KnownFailures that were skipped or still failed.
	Known int
	// Fixed counts records (included in Passed) listed in
	// Options.KnownFailures that ran and passed (Options.RunKnownFailures).
	Fixed int
	// Halted reports that an unguarded halt stopped the file.
	Halted bool
	// Err is a file-level problem: the file could not be read, connecting
	// failed, the file timed out, or the connection was lost. Records that
	// could not run because of it are counted as failed.
	Err error
	// Failures lists the failed records, in file order.
	Failures []Failure
	// KnownFailures lists the listed records that did not pass; Message is
	// the listed reason for records not run, else the new failure message.
	KnownFailures []Failure
	// FixedLines lists the lines of the Fixed records.
	FixedLines []int
	Elapsed    time.Duration
}

// OK reports whether the file had no failures and no file-level error.
func (r *FileResult) OK() bool { return r.Failed == 0 && r.Err == nil }

// Summary returns "FILE: N passed, N failed, N skipped".
func (r *FileResult) Summary() string {
	return fmt.Sprintf("%s: %d passed, %d failed, %d skipped", r.File, r.Passed, r.Failed, r.Skipped)
}

// Problems lists what fails a test of the file, one message each: the
// file's error, every failing record with its SQL and expected and actual
// values, and a file in which nothing passed.
func (r *FileResult) Problems() []string {
	var out []string
	if r.Err != nil {
		out = append(out, fmt.Sprintf("%s: %v", r.File, r.Err))
	}
	for _, f := range r.Failures {
		out = append(out, fmt.Sprintf("%s:%d: %s\n%s\nexpected %v\ngot      %v", f.File, f.Line, f.Message, f.SQL, f.Expected, f.Got))
	}
	if r.Passed == 0 {
		out = append(out, fmt.Sprintf("%s: nothing passed", r.File))
	}
	return out
}

// RunFiles runs each file in turn, each on a fresh connection. It returns an
// error only for unusable options or when ctx is done (with the results so
// far); problems within a file are reported in its FileResult.
func RunFiles(ctx context.Context, opts Options, files []string) ([]FileResult, error) {
	if opts.Addr == "" {
		return nil, errors.New("logictest: no server address")
	}
	var results []FileResult
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		results = append(results, RunFile(ctx, opts, f))
	}
	return results, ctx.Err()
}

var dbCounter atomic.Int64

// RunFile runs one file on a fresh connection (and, with
// Options.FreshDatabase, in a fresh database).
func RunFile(ctx context.Context, opts Options, file string) FileResult {
	opts = opts.withDefaults()
	return runFile(ctx, opts, file, func(fctx context.Context) (Conn, func() error, error) {
		return openFileConn(fctx, opts)
	})
}

// RunConn runs one file on conn, which the caller opened and closes:
// package sql's tests run the files over a session in their own process
// this way. Options that concern connecting are ignored.
func RunConn(ctx context.Context, opts Options, file string, conn Conn) FileResult {
	return runFile(ctx, opts.withDefaults(), file, func(context.Context) (Conn, func() error, error) {
		return conn, func() error { return nil }, nil
	})
}

// runFile reads and runs one file on the connection open gives; the file's
// records count as not run when open fails. done, called after the file,
// may report an error of its own (a database it could not drop).
func runFile(ctx context.Context, opts Options, file string, open func(context.Context) (c Conn, done func() error, err error)) (res FileResult) {
	start := time.Now()
	res.File = file
	defer func() { res.Elapsed = time.Since(start) }()
	recs, err := readFile(file)
	if err != nil {
		res.Err = err
		return res
	}
	fctx, cancel := fileContext(ctx, opts)
	defer cancel()
	r := newFileRun(opts, file, &res)
	conn, done, err := open(fctx)
	if err != nil {
		res.Err = fmt.Errorf("connect: %w", err)
		r.stopped = "not run: could not connect"
	} else {
		r.conn = conn
	}
	r.run(fctx, recs)
	if done != nil {
		if derr := done(); derr != nil && res.Err == nil {
			res.Err = derr
		}
	}
	return res
}

// openFileConn connects for one file, in a database of its own with
// Options.FreshDatabase; done closes the connection and drops the database.
func openFileConn(fctx context.Context, opts Options) (Conn, func() error, error) {
	database := opts.Database
	var admin *pgx.Conn
	if opts.FreshDatabase {
		var err error
		if admin, err = connect(fctx, opts, opts.Database); err != nil {
			return nil, nil, err
		}
		database = fmt.Sprintf("logictest_%d_%d", os.Getpid(), dbCounter.Add(1))
		if _, err = admin.PgConn().Exec(fctx, "CREATE DATABASE "+database).ReadAll(); err != nil {
			admin.Close(context.Background())
			return nil, nil, fmt.Errorf("CREATE DATABASE %s: %w", database, err)
		}
	}
	conn, err := connect(fctx, opts, database)
	done := func() error {
		if conn != nil {
			conn.Close(context.Background())
		}
		if admin == nil {
			return nil
		}
		defer admin.Close(context.Background())
		return dropDatabase(admin, database)
	}
	if err != nil {
		return nil, done, err
	}
	return pgxConn{conn}, done, nil
}

func readFile(file string) ([]Record, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(string(data)), nil
}

// fileContext applies Options.FileTimeout.
func fileContext(ctx context.Context, opts Options) (context.Context, context.CancelFunc) {
	if opts.FileTimeout > 0 {
		return context.WithTimeout(ctx, opts.FileTimeout)
	}
	return context.WithCancel(ctx)
}

func newFileRun(opts Options, file string, res *FileResult) *fileRun {
	return &fileRun{
		opts:      opts,
		file:      file,
		res:       res,
		threshold: DefaultHashThreshold,
		labels:    make(map[string]string),
	}
}

func dropDatabase(admin *pgx.Conn, name string) error {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = admin.PgConn().Exec(ctx, "DROP DATABASE "+name).ReadAll()
		cancel()
		if err == nil || admin.IsClosed() {
			break
		}
		// PostgreSQL refuses while the file's backend is still exiting.
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("DROP DATABASE %s: %w", name, err)
	}
	return nil
}

func connect(ctx context.Context, opts Options, database string) (*pgx.Conn, error) {
	if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
		return nil, fmt.Errorf("bad address %q: %w", opts.Addr, err)
	}
	u := url.URL{Scheme: "postgres", Host: opts.Addr, Path: "/" + database}
	if opts.Password != "" {
		u.User = url.UserPassword(opts.User, opts.Password)
	} else {
		u.User = url.User(opts.User)
	}
	if opts.SSLMode != "" {
		u.RawQuery = "sslmode=" + url.QueryEscape(opts.SSLMode)
	}
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	// On a record timeout send a CancelRequest first, so that the session
	// survives; close the socket only if the server does not react.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 5 * time.Second}
	}
	cctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	return pgx.ConnectConfig(cctx, cfg)
}

type fileRun struct {
	opts      Options
	file      string
	res       *FileResult
	conn      Conn
	threshold int
	labels    map[string]string // label → MD5 of its values
	stopped   string            // non-empty: records are no longer run, and why
}

func (r *fileRun) run(ctx context.Context, recs []Record) {
	for i := range recs {
		rec := &recs[i]
		if rec.Skipped(r.opts.Engine) {
			// A record guarded off for this engine does not touch its
			// label: its expected result belongs to another engine (the
			// corpus's "onlyif mysql" variants list MySQL's output), so
			// the label's hash is fixed by the records that run here.
			if rec.Counted() {
				r.res.Skipped++
			}
			continue
		}
		switch rec.Kind {
		case KindHashThreshold:
			r.threshold = rec.Threshold
			continue
		case KindHalt:
			r.res.Halted = true
			return
		}

		reason, known := r.opts.KnownFailures.Lookup(r.file, rec.Line)
		if known && !r.opts.RunKnownFailures {
			r.res.Skipped++
			r.res.Known++
			r.res.KnownFailures = append(r.res.KnownFailures, Failure{
				File: r.file, Line: rec.Line, Kind: rec.Kind.String(), SQL: rec.SQL, Message: reason,
			})
			r.registerExpectedLabel(rec)
			continue
		}

		var f *Failure
		notRun := r.stopped != ""
		if notRun {
			f = &Failure{Message: r.stopped}
		} else {
			f = r.runRecord(ctx, rec)
			if f != nil && r.checkStopped(ctx) && r.opts.Verbose {
				fmt.Fprintf(r.opts.Out, "%s:%d: %v; the remaining records count as failed\n\n", r.file, rec.Line, r.res.Err)
			}
		}
		if f == nil {
			r.res.Passed++
			if known {
				r.res.Fixed++
				r.res.FixedLines = append(r.res.FixedLines, rec.Line)
			}
			continue
		}
		f.File, f.Line, f.Kind, f.SQL = r.file, rec.Line, rec.Kind.String(), rec.SQL
		if known {
			r.res.Skipped++
			r.res.Known++
			r.res.KnownFailures = append(r.res.KnownFailures, *f)
			continue
		}
		r.res.Failed++
		r.res.Failures = append(r.res.Failures, *f)
		if r.opts.Verbose && !notRun {
			printFailure(r.opts.Out, f)
		}
	}
}

// checkStopped notices, after a failure, that the file cannot go on, and
// reports whether it stopped.
func (r *fileRun) checkStopped(ctx context.Context) bool {
	switch {
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.opts.FileTimeout > 0 {
			r.res.Err = fmt.Errorf("file timeout (%v) expired", r.opts.FileTimeout)
			r.stopped = "not run: file timeout expired"
		} else {
			r.res.Err = ctx.Err()
			r.stopped = "not run: " + ctx.Err().Error()
		}
	case r.conn.Lost():
		r.res.Err = errors.New("connection lost")
		r.stopped = "not run: connection lost"
	}
	return r.stopped != ""
}

// registerExpectedLabel records the expected hash of a labeled query that
// is meant to run on this engine but is not run because it is a known
// failure: its listed result is what it should produce here, so later
// variants of the label are still checked against it.
func (r *fileRun) registerExpectedLabel(rec *Record) {
	if rec.Kind != KindQuery || rec.Label == "" {
		return
	}
	if _, seen := r.labels[rec.Label]; seen {
		return
	}
	if h, ok := rec.ExpectedHash(); ok {
		r.labels[rec.Label] = h
	}
}

func (r *fileRun) runRecord(ctx context.Context, rec *Record) *Failure {
	switch rec.Kind {
	case KindInvalid:
		return &Failure{Message: rec.Err}
	case KindStatement:
		err := r.exec(ctx, rec.SQL)
		switch {
		case rec.ExpectError && err == nil:
			return &Failure{Message: "statement succeeded, expected an error"}
		case !rec.ExpectError && err != nil:
			return &Failure{Message: "statement failed: " + errText(err)}
		case rec.ErrorCode != "":
			if errCode(err) != rec.ErrorCode {
				return &Failure{Message: "statement failed with " + errText(err) + ", expected SQLSTATE " + rec.ErrorCode}
			}
		}
		return nil
	case KindQuery:
		return r.query(ctx, rec)
	}
	return nil
}

func (r *fileRun) recordCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.opts.RecordTimeout > 0 {
		return context.WithTimeout(ctx, r.opts.RecordTimeout)
	}
	return context.WithCancel(ctx)
}

func (r *fileRun) exec(ctx context.Context, sql string) error {
	rctx, cancel := r.recordCtx(ctx)
	defer cancel()
	err := r.conn.Exec(rctx, sql)
	return annotateTimeout(rctx, ctx, err, r.opts.RecordTimeout)
}

func annotateTimeout(rctx, fctx context.Context, err error, d time.Duration) error {
	if err != nil && rctx.Err() != nil && fctx.Err() == nil {
		return fmt.Errorf("record timeout (%v) expired: %w", d, err)
	}
	return err
}

func (r *fileRun) query(ctx context.Context, rec *Record) *Failure {
	rctx, cancel := r.recordCtx(ctx)
	defer cancel()
	types := rec.Types
	ncols, rows, err := r.conn.Query(rctx, rec.SQL)
	var values []string
	if ncols == len(types) {
		for _, row := range rows {
			for i, v := range row {
				values = append(values, FormatValue(types[i], v, v == nil))
			}
		}
	}
	if err := annotateTimeout(rctx, ctx, err, r.opts.RecordTimeout); err != nil {
		return &Failure{Message: "query failed: " + errText(err)}
	}
	if ncols < 0 {
		ncols = 0
	}
	if ncols != len(types) {
		return &Failure{Message: fmt.Sprintf("wrong number of result columns: expected %d but got %d", len(types), ncols)}
	}

	SortValues(values, len(types), rec.SortMode)
	f := compareResult(rec, values, r.threshold)
	if rec.Label == "" {
		return f
	}
	hash := HashValues(values)
	prev, seen := r.labels[rec.Label]
	if seen && prev != hash {
		msg := fmt.Sprintf("labeled result [%s] does not agree with previous values", rec.Label)
		if f == nil {
			return &Failure{Message: msg, Expected: []string{"(hash " + prev + ")"}, Got: []string{HashLine(values)}}
		}
		f.Message += "; " + msg
		return f
	}
	if !seen && f == nil {
		r.labels[rec.Label] = hash
	}
	return f
}

// compareResult compares sorted, formatted values with a query record's
// expected lines. It returns nil when they agree.
func compareResult(rec *Record, values []string, threshold int) *Failure {
	exp := rec.Expected
	if len(exp) == 1 {
		if n, h, ok := ParseHashLine(exp[0]); ok {
			if n == len(values) && h == HashValues(values) {
				return nil
			}
			return &Failure{Message: "wrong result hash", Expected: exp, Got: []string{HashLine(values)}}
		}
	}
	if equalStrings(exp, values) {
		return nil
	}
	if len(exp) != len(values) {
		// Several values per line?
		var fields []string
		for _, l := range exp {
			fields = append(fields, strings.Fields(l)...)
		}
		if equalStrings(fields, values) {
			return nil
		}
	}
	got := values
	if threshold > 0 && len(values) > threshold {
		got = append([]string{HashLine(values)}, values...)
	}
	if len(exp) != len(values) {
		return &Failure{
			Message:  fmt.Sprintf("wrong result: expected %d values, got %d", len(exp), len(values)),
			Expected: exp, Got: got,
		}
	}
	for i := range exp {
		if exp[i] != values[i] {
			return &Failure{
				Message:  fmt.Sprintf("wrong result: value %d: expected %q, got %q", i+1, exp[i], values[i]),
				Expected: exp, Got: got,
			}
		}
	}
	return nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// errCode is the SQLSTATE of an error from either kind of Conn: a
// *pgconn.PgError over the wire, a *sqlerr.Error in process.
func errCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return sqlerr.Code(err)
}

func errText(err error) string {
	// A *pgconn.PgError prints as "ERROR: message (SQLSTATE code)".
	return err.Error()
}

const maxPrintedLines = 40

func printFailure(w io.Writer, f *Failure) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s: %s\n", f.File, f.Line, f.Kind, f.Message)
	if f.SQL != "" {
		for _, l := range strings.Split(f.SQL, "\n") {
			b.WriteString("    " + l + "\n")
		}
	}
	if f.Expected != nil || f.Got != nil {
		writeLines(&b, "expected", f.Expected)
		writeLines(&b, "got", f.Got)
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}

func writeLines(b *strings.Builder, title string, lines []string) {
	b.WriteString("  " + title + ":" + "\n")
	if len(lines) == 0 {
		b.WriteString("    (no values)\n")
	}
	for i, l := range lines {
		if i == maxPrintedLines {
			b.WriteString("    ... (" + strconv.Itoa(len(lines)-i) + " more)\n")
			break
		}
		b.WriteString("    " + l + "\n")
	}
}
