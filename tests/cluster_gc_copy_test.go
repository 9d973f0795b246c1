package tests

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Garbage collection and bulk ingestion on a three-process cluster (issue
// 17): both are replicated writes, so every replica holds what the serving
// node decided; cluster/shardrepl's TestGCThroughShardGroup and
// TestBulkLoadThroughShardGroup compare the replicas byte for byte.

// startGCCluster starts three nodes with extra serve flags and waits until
// the serving node answers.
func startGCCluster(t *testing.T, extra ...string) []*clusterProc {
	t.Helper()
	procs := newClusterProcs(t, 3)
	for i := len(procs) - 1; i >= 0; i-- {
		startPlacementNode(procs[i], extra...)
	}
	for _, p := range procs {
		waitSQL(t, p)
	}
	// Every node votes in both groups (a joining node is a non-voter
	// until it caught up): stopping any one then keeps a quorum.
	serving := servingProc(t, procs)
	ctx := ctxT(t)
	conn, err := pgx.Connect(ctx, serving.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	waitSysNodes(t, conn, serving, threeNodesVoting)
	return procs
}

// takeOver stops the serving node (SIGTERM), waits for another to serve,
// restarts the stopped one with extra and returns the new serving node.
func takeOver(t *testing.T, procs []*clusterProc, old *clusterProc, extra ...string) *clusterProc {
	t.Helper()
	old.kill(syscall.SIGTERM)
	s := servingProc(t, procs)
	startPlacementNode(old, extra...)
	waitSQL(t, old)
	return s
}

// TestClusterGC: with --gc-ttl on a cluster, the serving node collects old
// versions through the shard group. A table updated many times loses its
// old versions; then each node in turn serves (the one serving is stopped,
// another takes over): on each, the old versions are gone, the newest are
// intact, and a read AS OF SYSTEM TIME below the GC threshold fails
// (XXUUU), also through a forwarding node.
func TestClusterGC(t *testing.T) {
	extra := []string{"--gc-ttl", "1s"}
	procs := startGCCluster(t, extra...)
	ctx := ctxT(t)
	conn, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "CREATE TABLE quick (k Int64, v Int64, PRIMARY KEY (k))")
	mustExec(t, conn, "INSERT INTO quick SELECT x, 0 FROM generate_series(1, 50) AS g(x)")
	var before string
	if err := conn.QueryRow(ctx, "SELECT now()::Utf8").Scan(&before); err != nil {
		t.Fatal(err)
	}
	// The catalog's history goes through the group too: every serving
	// node reads the schema of then (sql/catalog/history.go).
	mustExec(t, conn, `CREATE TABLE shape (k Int64, a Utf8, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	mustExec(t, conn, "INSERT INTO shape VALUES (1, 'then')")
	// A truncated and a dropped table: their old rows stay for reads
	// before the change until their GC jobs remove them, through the
	// group too (sql/dropgc.go); the jobs resume on the next serving node.
	mustExec(t, conn, `CREATE TABLE kept (k Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT1H"))`)
	mustExec(t, conn, "INSERT INTO kept VALUES (1), (2)")
	mustExec(t, conn, `CREATE TABLE short (k Int64, PRIMARY KEY (k)) WITH (GC_TTL = Interval("PT0.1S"))`)
	mustExec(t, conn, "INSERT INTO short VALUES (3)")
	var shapeTS string
	if err := conn.QueryRow(ctx, "SELECT now()::Utf8").Scan(&shapeTS); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		mustExec(t, conn, "UPDATE quick SET v = v + 1")
	}
	mustExec(t, conn, "ALTER TABLE shape ADD COLUMN b Int64 DEFAULT 7")
	mustExec(t, conn, "ALTER TABLE shape DROP COLUMN a")
	mustExec(t, conn, "TRUNCATE kept")
	mustExec(t, conn, "DROP TABLE short")
	conn.Close(ctx)

	check := func(p *clusterProc, waitGC bool) {
		t.Helper()
		// A minute for each node's checks, not one for the whole test:
		// the takeovers before it (up to 12, each a stop, an election and
		// a restart) took 68 s of a clean-clone CI run.
		ctx := ctxT(t)
		c, err := pgx.Connect(ctx, p.url())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var old, count int64
		var th *time.Time
		deadline := time.Now().Add(20 * time.Second)
		for {
			if err := c.QueryRow(ctx, "SELECT sum(old_versions)::Int64, min(gc_threshold) FROM sys.partitions WHERE table_name = 'quick'").Scan(&old, &th); err != nil {
				t.Fatal(err)
			}
			if (old == 0 && th != nil) || !waitGC || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if old != 0 || th == nil {
			t.Fatalf("node %s: %d old versions, GC threshold %v", p.sql, old, th)
		}
		var sum int64
		if err := c.QueryRow(ctx, "SELECT count(*), sum(v)::Int64 FROM quick").Scan(&count, &sum); err != nil || count != 50 || sum != 1000 {
			t.Fatalf("node %s: %d rows, sum %d (want 50, 1000): %v", p.sql, count, sum, err)
		}
		_, err = c.Exec(ctx, "SELECT * FROM quick AS OF SYSTEM TIME '"+before+"'")
		wantCode(t, err, "XXUUU")
		rows, err := c.Query(ctx, "SELECT * FROM shape AS OF SYSTEM TIME '"+shapeTS+"'")
		if err != nil {
			t.Fatalf("node %s: shape AS OF then: %v", p.sql, err)
		}
		n := len(rows.FieldDescriptions())
		var k int64
		var a string
		for rows.Next() {
			if err := rows.Scan(&k, &a); err != nil {
				t.Fatalf("node %s: %v", p.sql, err)
			}
		}
		if rows.Err() != nil || n != 2 || k != 1 || a != "then" {
			t.Fatalf("node %s: shape AS OF then: %d columns, row %d %q, %v", p.sql, n, k, a, rows.Err())
		}
		var kept, now int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM kept AS OF SYSTEM TIME '"+shapeTS+"'").Scan(&kept); err != nil || kept != 2 {
			t.Fatalf("node %s: kept AS OF before its TRUNCATE: %d rows, %v", p.sql, kept, err)
		}
		if err := c.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&now); err != nil || now != 0 {
			t.Fatalf("node %s: kept after its TRUNCATE: %d rows, %v", p.sql, now, err)
		}
		for {
			_, err = c.Exec(ctx, "SELECT * FROM short AS OF SYSTEM TIME '"+shapeTS+"'")
			if err != nil || !waitGC || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		wantCode(t, err, "XXUUU")
	}
	serving := servingProc(t, procs)
	check(serving, true) // the background loop collects within seconds
	for _, p := range procs {
		if p != serving {
			check(p, false) // forwarded
			break
		}
	}
	served := map[*clusterProc]bool{serving: true}
	// Which node takes over is up to the election: a few rounds may pass
	// before each node had its turn.
	for i := 0; len(served) < len(procs); i++ {
		if i == 12 {
			t.Fatalf("only %d of the nodes served after %d takeovers", len(served), i)
		}
		serving = takeOver(t, procs, serving, extra...)
		served[serving] = true
		check(serving, false)
	}
}

// TestClusterCopy: a COPY big enough for the bulk path (over 8 MB, outside
// a block) through a forwarding node loads every row; the serving node's
// memory stays bounded; after a takeover the next node serves the same
// rows; and a COPY that fails (a duplicate key found when the load is
// checked) leaves nothing.
func TestClusterCopy(t *testing.T) {
	procs := startGCCluster(t)
	ctx := ctxT(t)
	serving := servingProc(t, procs)
	var fwd *clusterProc
	for _, p := range procs {
		if p != serving {
			fwd = p
			break
		}
	}
	// pgx's CopyFrom learns the column types from SELECT "k", ..., which
	// needs the postgresql dialect (copy_test.go).
	conn, err := pgx.Connect(ctx, fwd.url()+"&sql_dialect=postgresql")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	mustExec(t, conn, "CREATE TABLE big (k Int64, v Utf8, PRIMARY KEY (k))")
	// 150k rows (about 12 MB): the bulk path. PIVOTDB_CLUSTER_COPY_ROWS
	// sets another count (the 1M-row figures of the notes).
	rows := 150_000
	if v := os.Getenv("PIVOTDB_CLUSTER_COPY_ROWS"); v != "" {
		if rows, err = strconv.Atoi(v); err != nil || rows < 77777 {
			t.Fatalf("PIVOTDB_CLUSTER_COPY_ROWS=%q: want a number of at least 77777", v)
		}
	}
	src := &clusterCopyRows{n: rows}
	start := time.Now()
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"big"}, []string{"k", "v"}, src)
	if err != nil || n != int64(rows) {
		t.Fatalf("CopyFrom: %d rows, %v", n, err)
	}
	took := time.Since(start)
	checkBig := func(p *clusterProc) {
		t.Helper()
		c, err := pgx.Connect(ctx, p.url())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var count, sum int64
		if err := c.QueryRow(ctx, "SELECT count(*), sum(k)::Int64 FROM big").Scan(&count, &sum); err != nil ||
			count != int64(rows) || sum != int64(rows)*int64(rows+1)/2 {
			t.Fatalf("node %s: %d rows, sum %d: %v", p.sql, count, sum, err)
		}
		var v string
		if err := c.QueryRow(ctx, "SELECT v FROM big WHERE k = 77777").Scan(&v); err != nil || v != src.value(77777) {
			t.Fatalf("node %s: row 77777 = %q, %v", p.sql, v, err)
		}
	}
	checkBig(serving)
	hwm := peakRSS(t, serving)
	t.Logf("COPY of %d rows through a forwarding node: %s; the serving node's peak RSS %d MiB", rows, took.Round(time.Millisecond), hwm>>20)
	if hwm > 600<<20 {
		t.Errorf("the serving node's peak RSS is %d MiB after the COPY", hwm>>20)
	}
	// A second COPY repeats a key: 23505, and nothing of it stays.
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"big"}, []string{"k", "v"}, &clusterCopyRows{n: rows, from: rows - 10})
	wantCode(t, err, "23505")
	serving = takeOver(t, procs, serving)
	checkBig(serving)
}

// clusterCopyRows yields rows from+1 .. from+n of (k, v) for CopyFrom.
type clusterCopyRows struct {
	n, from, i int
}

func (c *clusterCopyRows) value(k int) string {
	return fmt.Sprintf("row %d of the copy, padded to make the load bigger", k)
}

func (c *clusterCopyRows) Next() bool { c.i++; return c.i <= c.n }
func (c *clusterCopyRows) Values() ([]any, error) {
	k := c.from + c.i
	return []any{int64(k), c.value(k)}, nil
}
func (c *clusterCopyRows) Err() error { return nil }

// peakRSS returns the process's peak resident set size (VmHWM).
func peakRSS(t *testing.T, p *clusterProc) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
