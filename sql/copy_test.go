package sql

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// copyIn runs COPY ... FROM STDIN with data cut into pieces of chunk bytes,
// as its own protocol cycle, and returns the tag.
func copyIn(s *Session, sql, data string, chunk int) (string, error) {
	ctx := context.Background()
	s.BeginImplicit()
	p, err := s.Prepare(ctx, sql, nil)
	if err != nil {
		s.Sync()
		return "", err
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		s.FailTransaction()
		s.Sync()
		return "", err
	}
	defer res.Close()
	cs := CopyOf(res)
	if cs == nil || !cs.In() {
		s.Sync()
		return "", fmt.Errorf("%s: not a COPY FROM", sql)
	}
	for len(data) > 0 && err == nil {
		n := min(chunk, len(data))
		err = cs.Write([]byte(data[:n]))
		data = data[n:]
	}
	if err == nil {
		err = cs.Done()
	}
	if err != nil {
		s.FailTransaction()
		s.Sync()
		return "", err
	}
	return res.Tag(), s.Sync()
}

// copyOut runs COPY ... TO STDOUT and returns its data.
func copyOut(t *testing.T, s *Session, sql string) string {
	t.Helper()
	ctx := context.Background()
	s.BeginImplicit()
	defer s.Sync()
	p, err := s.Prepare(ctx, sql, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var b strings.Builder
	cs := CopyOf(res)
	for {
		data, err := cs.Read()
		if err != nil {
			t.Fatal(err)
		}
		if data == nil {
			return b.String()
		}
		b.Write(data)
	}
}

// smallBulkRuns makes the bulk path spill after a few kilobytes, so that
// tests exercise runs, merges and ingestion with few rows.
func smallBulkRuns(t *testing.T) {
	run, batch, sst := bulkRunBytes, bulkBatchBytes, bulkSSTBytes
	bulkRunBytes, bulkBatchBytes, bulkSSTBytes = 16<<10, 4<<10, 32<<10
	t.Cleanup(func() { bulkRunBytes, bulkBatchBytes, bulkSSTBytes = run, batch, sst })
}

func TestCopyBulkPath(t *testing.T) {
	smallBulkRuns(t)
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE parent (id Int64, PRIMARY KEY (id))`)
	query(t, s, `INSERT INTO parent (id) VALUES (1), (2), (3)`)
	query(t, s, `CREATE TABLE cb (k Int64, h Uint64 AS (farm_hash(k)), v Utf8, u Int64, p Int64 REFERENCES parent (id),
		d Int32 DEFAULT 42, CHECK (u >= 0), PRIMARY KEY (h, k))`)
	query(t, s, `CREATE INDEX cb_v ON cb (v)`)
	query(t, s, `CREATE UNIQUE INDEX cb_u ON cb (u)`)
	var progress []CopyProgress
	var mu sync.Mutex
	e.SetCopyProgressHook(func(p CopyProgress) {
		mu.Lock()
		progress = append(progress, p)
		mu.Unlock()
	})
	rows := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			u := fmt.Sprint(i)
			if i%10 == 0 {
				u = `\N` // NULLs never conflict in a unique index
			}
			fmt.Fprintf(&b, "%d\tvalue %d\t%s\t%d\n", i, i%100, u, i%3+1)
		}
		return b.String()
	}
	const n = 20000
	tag, err := copyIn(s, "COPY cb (k, v, u, p) FROM STDIN", rows(0, n), 7777)
	if err != nil || tag != fmt.Sprintf("COPY %d", n) {
		t.Fatalf("bulk COPY: %q %v", tag, err)
	}
	if got := query(t, s, "SELECT count(*), sum(d), count(DISTINCT v) FROM cb"); got[0][0].Text() != fmt.Sprint(n) || got[0][1].Text() != fmt.Sprint(42*n) || got[0][2].Text() != "100" {
		t.Fatalf("after the bulk COPY: %v", got)
	}
	// Every row has its own values (the runs' pairs are read back into
	// reused buffers).
	if got := query(t, s, "SELECT count(*) FROM cb WHERE v = 'value ' || CAST(k % 100 AS Utf8) AND (u = k OR u IS NULL AND k % 10 = 0) AND p = k % 3 + 1"); got[0][0].Text() != fmt.Sprint(n) {
		t.Fatalf("rows with their own values: %v of %d", got, n)
	}
	if got := query(t, s, "SELECT k FROM cb WHERE v = 'value 7' ORDER BY k LIMIT 2"); len(got) != 2 || got[0][0].Text() != "7" || got[1][0].Text() != "107" {
		t.Fatalf("read through the index: %v", got)
	}
	checkIndexes(t, e)
	if rows := query(t, s, "SELECT sum(row_count)::Int64 FROM sys.partitions WHERE table_name = 'cb'"); rows[0][0].Text() != fmt.Sprint(n) {
		t.Errorf("shard statistics count %v rows, want %d", rows[0][0], n)
	}
	mu.Lock()
	last := progress[len(progress)-1]
	mu.Unlock()
	if !last.Done || last.Err != nil || last.Rows != n || last.Relation != "cb" || !last.From || len(progress) < 2 {
		t.Errorf("progress reports: %d, last %+v", len(progress), last)
	}

	// Every failure leaves nothing: a key already committed, a key twice
	// in the COPY (in different runs), a unique value already committed
	// and twice in the COPY, a CHECK, a missing parent.
	for _, tc := range []struct {
		data, code, where string
	}{
		{rows(n, n+5000) + "5\tx\t\\N\t1\n", "23505", "COPY cb, line 5001"},
		{rows(n, n+5000) + fmt.Sprintf("%d\tx\t\\N\t1\n", n+3), "23505", "COPY cb, line 5001"},
		{rows(n, n+5000) + "999999\tx\t7\t1\n", "23505", "COPY cb, line 5001"},
		{"999999\tx\t77777\t1\n" + rows(n, n+5000) + "999998\tx\t77777\t1\n", "23505", "COPY cb, line 5002"},
		{rows(n, n+5000) + "999999\tx\t-1\t1\n", "23514", "COPY cb, line 5001"},
		{rows(n, n+5000) + "999999\tx\t\\N\t9\n", "23503", "COPY cb, line 5001"},
	} {
		_, err := copyIn(s, "COPY cb (k, v, u, p) FROM STDIN", tc.data, 4096)
		e := sqlerr.As(err)
		if err == nil || e.Code != tc.code || !strings.HasPrefix(e.Where, tc.where) {
			t.Errorf("want %s at %q, got %v (%s, %q)", tc.code, tc.where, err, e.Code, e.Where)
		}
		if got := query(t, s, "SELECT count(*) FROM cb"); got[0][0].Text() != fmt.Sprint(n) {
			t.Fatalf("a failed COPY left rows: %v", got)
		}
	}
	checkIndexes(t, e)

	// A small COPY commits in a batch; a COPY in a block goes through the
	// transaction and rolls back with it.
	if _, err := copyIn(s, "COPY cb (k, v, u, p) FROM STDIN", rows(n, n+10), 3); err != nil {
		t.Fatal(err)
	}
	query(t, s, "BEGIN")
	if _, err := copyIn(s, "COPY cb (k, v, u, p) FROM STDIN", rows(n+10, n+2000), 1000); err != nil {
		t.Fatal(err)
	}
	if got := query(t, s, "SELECT count(*) FROM cb"); got[0][0].Text() != fmt.Sprint(n+2000) {
		t.Fatalf("in the block: %v", got)
	}
	query(t, s, "ROLLBACK")
	if got := query(t, s, "SELECT count(*) FROM cb"); got[0][0].Text() != fmt.Sprint(n+10) {
		t.Fatalf("after ROLLBACK: %v", got)
	}
	checkIndexes(t, e)

	// Without a column list, COPY TO leaves out the computed column h.
	if out := copyOut(t, s, "COPY cb TO STDOUT"); strings.Count(strings.SplitN(out, "\n", 2)[0], "\t") != 4 {
		t.Errorf("COPY cb TO: first line %q, want k, v, u, p, d", strings.SplitN(out, "\n", 2)[0])
	}
	// COPY TO gives the rows back in key order.
	out := copyOut(t, s, "COPY (SELECT k, v FROM cb WHERE k < 3 ORDER BY k) TO STDOUT (FORMAT csv, HEADER)")
	if out != "k,v\n0,value 0\n1,value 1\n2,value 2\n" {
		t.Errorf("COPY TO: %q", out)
	}
}

// TestCopyBulkConcurrentWriters: INSERTs into the table while bulk COPYs
// load it never lose a row or let a duplicate in.
func TestCopyBulkConcurrentWriters(t *testing.T) {
	smallBulkRuns(t)
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, `CREATE TABLE cw (k Int64, v Utf8, PRIMARY KEY (k))`)
	var wg sync.WaitGroup
	inserted := make([]bool, 400)
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := testSession(t, e)
		for i := range inserted {
			// Keys 0..399, some of which the COPYs load too.
			_, err := tryQuery(w, fmt.Sprintf("INSERT INTO cw (k, v) VALUES (%d, 'insert')", i*50))
			inserted[i] = err == nil
			if err != nil && sqlerr.Code(err) != sqlerr.UniqueViolation {
				t.Errorf("INSERT: %v", err)
			}
		}
	}()
	loaded := 0
	for c := 0; c < 4; c++ {
		var b strings.Builder
		for i := c * 5000; i < (c+1)*5000; i++ {
			fmt.Fprintf(&b, "%d\tcopy\n", i)
		}
		_, err := copyIn(s, "COPY cw FROM STDIN", b.String(), 8192)
		switch {
		case err == nil:
			loaded += 5000
		case sqlerr.Code(err) != sqlerr.UniqueViolation:
			t.Fatalf("COPY: %v", err)
		}
	}
	wg.Wait()
	got := query(t, s, "SELECT count(*) FROM cw WHERE v = 'copy'")
	if got[0][0].Text() != fmt.Sprint(loaded) {
		t.Errorf("%v rows from COPYs, want %d", got[0][0], loaded)
	}
	ins := 0
	for _, ok := range inserted {
		if ok {
			ins++
		}
	}
	got = query(t, s, "SELECT count(*) FROM cw WHERE v = 'insert'")
	if got[0][0].Text() != fmt.Sprint(ins) {
		t.Errorf("%v rows from INSERTs, want %d", got[0][0], ins)
	}
}

// BenchmarkCopyFrom loads b.N rows with one COPY FROM STDIN (text format)
// into an empty table through the bulk path, in process: the SQL layer's
// cost per row without the wire. `make bench` compares the whole server
// with PostgreSQL (tests/bench, "COPY FROM 1M rows").
func BenchmarkCopyFrom(b *testing.B) {
	e := testEngine(b)
	s := testSession(b, e)
	query(b, s, "CREATE TABLE bc (k Int64, v Utf8, PRIMARY KEY (k))")
	var data strings.Builder
	for i := 0; i < b.N; i++ {
		fmt.Fprintf(&data, "%d\tvalue number %d\n", i, i)
	}
	b.SetBytes(int64(data.Len() / max(1, b.N)))
	b.ResetTimer()
	tag, err := copyIn(s, "COPY bc FROM STDIN", data.String(), 64<<10)
	if err != nil || tag != fmt.Sprintf("COPY %d", b.N) {
		b.Fatalf("%q %v", tag, err)
	}
}

func TestCopyReadOnly(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE ro (k Int64, PRIMARY KEY (k))")
	query(t, s, "BEGIN READ ONLY")
	_, err := copyIn(s, "COPY ro FROM STDIN", "1\n", 10)
	if sqlerr.Code(err) != sqlerr.ReadOnlySQLTransaction || err.Error() != "cannot execute COPY FROM in a read-only transaction" {
		t.Fatalf("COPY FROM in a read-only block: %v", err)
	}
	query(t, s, "ROLLBACK")
	query(t, s, "BEGIN READ ONLY")
	if out := copyOut(t, s, "COPY ro TO STDOUT"); out != "" {
		t.Fatalf("COPY TO: %q", out)
	}
	query(t, s, "COMMIT")
}

// TestCopyBulkMemoryBudget: the bulk path's buffer grows only as far as
// the statement's memory account allows, spilling runs earlier instead;
// a budget too small for even one record is 53200.
func TestCopyBulkMemoryBudget(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE mb (k Int64, v Utf8, PRIMARY KEY (k))")
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "mb")
	mon := memory.NewMonitor("test", 1<<20)
	acct := mon.NewAccount("statement", 0)
	defer acct.Close()
	b := newBulkLoad(memory.WithAccount(context.Background(), acct), e, tbl, "mb")
	defer b.close()
	row := []types.Value{{}, types.NewUtf8(strings.Repeat("x", 100))}
	for i := 0; i < 50000; i++ {
		row[0] = types.NewInt64(int64(i))
		if err := b.addRow(row, int64(i+1)); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if len(b.runs) < 3 || mon.Peak() > 1<<20 {
		t.Fatalf("%d runs, peak %d bytes under a 1 MiB budget", len(b.runs), mon.Peak())
	}
	tiny := memory.NewMonitor("tiny", 1<<10).NewAccount("statement", 0)
	defer tiny.Close()
	b2 := newBulkLoad(memory.WithAccount(context.Background(), tiny), e, tbl, "mb")
	defer b2.close()
	if err := b2.addRow(row, 1); sqlerr.Code(err) != sqlerr.OutOfMemory {
		t.Fatalf("a 1 KiB budget: %v", err)
	}
}

// TestCopyJobs: a COPY is a job in sys.jobs with the rows it copied, and
// ends succeeded or failed.
func TestCopyJobs(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE cj (k Int64, PRIMARY KEY (k))")
	var b strings.Builder
	for i := 0; i < 25000; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	if _, err := copyIn(s, "COPY cj FROM STDIN", b.String(), 1<<16); err != nil {
		t.Fatal(err)
	}
	if _, err := copyIn(s, "COPY cj FROM STDIN", "x\n", 10); err == nil {
		t.Fatal("bad COPY accepted")
	}
	copyOut(t, s, "COPY cj TO STDOUT")
	rows := query(t, s, "SELECT job_type, status, rows_done FROM sys.jobs WHERE job_type = 'COPY' ORDER BY job_id")
	var got []string
	for _, r := range rows {
		got = append(got, r[0].Text()+" "+r[1].Text()+" "+r[2].Text())
	}
	want := []string{"COPY succeeded 25000", "COPY failed 0", "COPY succeeded 25000"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sys.jobs: %q, want %q", got, want)
	}
}

// TestCopyDateTimeSettings: COPY reads and writes dates, times and
// intervals as a statement's literals and results are: a timestamptz
// without an offset in the session's TimeZone, a numeric date in
// DateStyle's order, an interval under IntervalStyle; out in DateStyle
// and IntervalStyle (PostgreSQL 15 gives the same lines).
func TestCopyDateTimeSettings(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "SET sql_dialect = 'postgresql'")
	query(t, s, "CREATE TABLE cp (k int PRIMARY KEY, d date, i interval, t timestamptz)")
	query(t, s, "SET DateStyle = 'ISO, DMY'")
	query(t, s, "SET IntervalStyle = 'sql_standard'")
	query(t, s, "SET TimeZone = 'Europe/Berlin'")
	for _, chunk := range []int{1000} {
		if _, err := copyIn(s, "COPY cp FROM STDIN", "1\t01/02/2003\t1 year 2 mons\t2024-01-01 10:00\n2\t13/02/2003\t-1 2:03:04\t2024-07-01 10:00\n", chunk); err != nil {
			t.Fatal(err)
		}
	}
	want := "1\t2003-02-01\t1-2\t2024-01-01 10:00:00+01\n2\t2003-02-13\t-1 2:03:04\t2024-07-01 10:00:00+02\n"
	if out := copyOut(t, s, "COPY cp TO STDOUT"); out != want {
		t.Errorf("COPY TO:\n%s\nwant\n%s", out, want)
	}
	query(t, s, "SET DateStyle = 'German'")
	query(t, s, "SET IntervalStyle = 'postgres'")
	want = "1\t01.02.2003\t1 year 2 mons\t01.01.2024 10:00:00 CET\n2\t13.02.2003\t-1 days -02:03:04\t01.07.2024 10:00:00 CEST\n"
	if out := copyOut(t, s, "COPY cp TO STDOUT"); out != want {
		t.Errorf("COPY TO in German:\n%s\nwant\n%s", out, want)
	}
}

// TestCopyBulkRunOrderAcrossChunks: a run's records span several chunks;
// records of one key sort in line order whichever chunks hold them (the
// order that names the later line of a duplicate key).
func TestCopyBulkRunOrderAcrossChunks(t *testing.T) {
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE rc (k Int64, v Utf8, PRIMARY KEY (k))")
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "rc")
	b := newBulkLoad(context.Background(), e, tbl, "rc")
	defer b.close()
	row := []types.Value{types.NewInt64(1), {}}
	const n = 2000 // about 470 KiB: chunks of 64, 128 and 256 KiB
	for i := 0; i < n; i++ {
		row[1] = types.NewUtf8(fmt.Sprintf("%0200d", n-i))
		if err := b.addRow(row, int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if len(b.chunks) < 3 || len(b.runs) > 0 {
		t.Fatalf("%d chunks, %d runs", len(b.chunks), len(b.runs))
	}
	b.sortRun()
	m := &memSource{b: b}
	for want := int64(1); ; want++ {
		p, ok, _ := m.next()
		if !ok {
			if want != n+1 {
				t.Fatalf("%d records", want-1)
			}
			break
		}
		if p.line != want {
			t.Fatalf("record %d is line %d", want, p.line)
		}
	}
}

// TestCopyBulkStatsAfterSplit: a split of the table after the
// ingestion's routing of the statistics, before their locks, has the
// pairs routed again through the current shards: every shard's
// row_count is its rows.
func TestCopyBulkStatsAfterSplit(t *testing.T) {
	smallBulkRuns(t)
	e := testEngine(t)
	s := testSession(t, e)
	query(t, s, "CREATE TABLE ss (k Int64, v Utf8, PRIMARY KEY (k))")
	query(t, s, "CREATE INDEX ss_v ON ss (v)")
	tbl, _ := e.catalog.Snapshot().Table(s.db.ID, "ss")
	const n = 5000
	split := false
	bulkBeforeStatsLock = func() {
		at := rowenc.EncodeKey(tbl, []types.Value{types.NewInt64(n / 2), {}})
		if _, err := e.shards.Split(tbl.ID, [][]byte{at}); err != nil {
			t.Error(err)
		}
		split = true
	}
	t.Cleanup(func() { bulkBeforeStatsLock = nil })
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d\tv%d\n", i, i%7)
	}
	if _, err := copyIn(s, "COPY ss FROM STDIN", b.String(), 4096); err != nil || !split {
		t.Fatalf("COPY: %v (split %v)", err, split)
	}
	got := query(t, s, "SELECT shard_id, row_count FROM sys.partitions WHERE table_name = 'ss' ORDER BY shard_id")
	if len(got) != 2 || got[0][1].Text() != fmt.Sprint(n/2) || got[1][1].Text() != fmt.Sprint(n/2) {
		t.Fatalf("shards after the split: %v", got)
	}
	if err := e.shards.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
