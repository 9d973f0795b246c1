package tests

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestAutoPartitioningDoneWhenOverWire is issue 5's acceptance scenario
// against a server process, over the wire, with the background balancer
// ticking every 20 ms:
//
//	big:    AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, 8 MB of random rows
//	        -> several shards of at most 2 MB, every row there exactly once
//	capped: the same with MAX_PARTITIONS_COUNT = 3 -> 3 shards, and stays
//	DELETE all but 100 rows of big -> back to one or two shards
func TestAutoPartitioningDoneWhenOverWire(t *testing.T) {
	srv := startServer(t, "--balancer-interval", "20ms")
	c := srv.connect(t, pgx.QueryExecModeCacheStatement)
	mustExec(t, c, "CREATE TABLE big (k Int64, v Utf8, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1)")
	mustExec(t, c, "CREATE TABLE capped (k Int64, v Utf8, PRIMARY KEY (k)) WITH (AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, AUTO_PARTITIONING_MAX_PARTITIONS_COUNT = 3)")

	const rows, rowSize = 8192, 1000 // 8 MB of values.
	r := rand.New(rand.NewPCG(21, 22))
	keys := r.Perm(rows)
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	value := func() string {
		b := make([]byte, rowSize)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for _, table := range []string{"big", "capped"} {
		for lo := 0; lo < rows; lo += 50 {
			var sb strings.Builder
			fmt.Fprintf(&sb, "INSERT INTO %s (k, v) VALUES ", table)
			var args []any
			for i, k := range keys[lo:min(lo+50, rows)] {
				if i > 0 {
					sb.WriteString(", ")
				}
				fmt.Fprintf(&sb, "($%d, $%d)", 2*i+1, 2*i+2)
				args = append(args, int64(k), value())
			}
			mustExec(t, c, sb.String(), args...)
		}
	}

	type shape struct{ shards, maxBytes, rows int64 }
	shapeOf := func(table string) shape {
		t.Helper()
		var s shape
		if err := c.QueryRow(ctxT(t), "SELECT count(*), max(data_size_bytes), sum(row_count) FROM sys.partitions WHERE table_name = $1",
			table).Scan(&s.shards, &s.maxBytes, &s.rows); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// waitFor polls the table's shape until ok holds for 10 polls in a
	// row (half a second: the balancer has settled), or fails after 60 s.
	waitFor := func(table string, ok func(shape) bool) shape {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		good := 0
		for {
			s := shapeOf(table)
			if ok(s) {
				good++
				if good == 10 {
					return s
				}
			} else {
				good = 0
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: shape %+v after 60 s", table, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	checkKeys := func(table string, n int) {
		t.Helper()
		got, err := c.Query(ctxT(t), fmt.Sprintf("SELECT k, length(v) FROM %s ORDER BY k", table))
		if err != nil {
			t.Fatal(err)
		}
		defer got.Close()
		want := int64(0)
		for got.Next() {
			var k, l int64
			if err := got.Scan(&k, &l); err != nil {
				t.Fatal(err)
			}
			if k != want || l != rowSize {
				t.Fatalf("%s: row %d is (%d, length %d)", table, want, k, l)
			}
			want++
		}
		if err := got.Err(); err != nil {
			t.Fatal(err)
		}
		if want != int64(n) {
			t.Fatalf("%s: %d rows, want %d", table, want, n)
		}
	}

	big := waitFor("big", func(s shape) bool { return s.shards >= 4 && s.maxBytes <= 2<<20 && s.rows == rows })
	t.Logf("big: %+v", big)
	checkKeys("big", rows)
	capped := waitFor("capped", func(s shape) bool { return s.shards == 3 })
	t.Logf("capped: %+v", capped)
	if capped.rows != rows {
		t.Fatalf("capped: %+v", capped)
	}
	checkKeys("capped", rows)

	mustExec(t, c, "DELETE FROM big WHERE k >= 100")
	shrunk := waitFor("big", func(s shape) bool { return s.shards <= 2 })
	t.Logf("big after DELETE: %+v", shrunk)
	if shrunk.rows != 100 {
		t.Fatalf("big after DELETE: %+v", shrunk)
	}
	checkKeys("big", 100)
	var splits, merges int64
	if err := c.QueryRow(ctxT(t), "SELECT max(splits), max(merges) FROM sys.partitions WHERE table_name = 'big'").Scan(&splits, &merges); err != nil {
		t.Fatal(err)
	}
	if splits < big.shards-1 || merges < splits-1 {
		t.Fatalf("big: %d splits, %d merges", splits, merges)
	}
}
