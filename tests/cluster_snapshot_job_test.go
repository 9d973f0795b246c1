package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterSnapshotJob (issue 18: a move shows in sys.jobs with its
// progress): the snapshot that copies the shard group to a joining node is
// a REPLICA SNAPSHOT job on the serving node, whose rows_done and
// rows_total are the bytes sent of the stream's. The founders stream at
// 2 MB/s (--snapshot-rate), so the 8 MB copy is seen running part way,
// then succeeded with all of its bytes, as many as the node's log says it
// streamed.
func TestClusterSnapshotJob(t *testing.T) {
	procs := newClusterProcs(t, 4)
	founders := strings.Join([]string{procs[0].rpc, procs[1].rpc, procs[2].rpc}, ",")
	for _, p := range procs {
		p.join = founders
	}
	for _, p := range procs[:3] {
		startPlacementNode(p, "--rebalance=false", "--snapshot-rate", "2")
	}
	waitSQL(t, procs[0])
	s := servingProc(t, procs[:3])
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE snap (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	// 8 MB of incompressible 1 KB rows.
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	pad := make([]byte, 1000)
	for k := 0; k < 8192; k += 512 {
		var sb strings.Builder
		sb.WriteString("UPSERT INTO snap VALUES ")
		for i := k; i < k+512; i++ {
			if i > k {
				sb.WriteString(", ")
			}
			for j := range pad {
				pad[j] = alphabet[rng.IntN(len(alphabet))]
			}
			fmt.Fprintf(&sb, "(%d, '%s')", i, pad)
		}
		if _, err := conn.Exec(ctx, sb.String()); err != nil {
			t.Fatal(err)
		}
	}

	startPlacementNode(procs[3], "--rebalance=false")
	type jobRow struct {
		status      string
		description string
		done, total int64
		fraction    float64
	}
	var running, finished *jobRow
	for deadline := time.Now().Add(2 * time.Minute); finished == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no finished REPLICA SNAPSHOT job of 8 MB (seen running: %+v)", running)
		}
		rows, err := conn.Query(ctx, `SELECT status, description, rows_done, rows_total, coalesce(fraction_completed, -1)
			FROM sys.jobs WHERE job_type = 'REPLICA SNAPSHOT' AND rows_total > 4000000`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var r jobRow
			if err := rows.Scan(&r.status, &r.description, &r.done, &r.total, &r.fraction); err != nil {
				t.Fatal(err)
			}
			switch {
			case r.status == "running" && r.done > 0 && r.done < r.total && running == nil:
				running = &r
				t.Logf("running: %+v", r)
			case r.status != "running":
				finished = &r
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("finished: %+v", *finished)
	if running == nil || running.fraction <= 0 || running.fraction >= 1 {
		t.Errorf("the snapshot's job was never seen part way (running, 0 < fraction < 1): %+v", running)
	}
	if finished.status != "succeeded" || finished.done != finished.total || finished.fraction != 1 ||
		!strings.Contains(finished.description, "snapshot of") || !strings.Contains(finished.description, "group") {
		// "the shard group" with one group, "group N" (the table's) with a
		// group per shard
		t.Errorf("the snapshot's job at its end: %+v; want succeeded, all bytes of a shard group's snapshot sent", *finished)
	}
	// It names the node the stream went to: the fourth, by the id it
	// joined under (its log).
	var joinedAs int
	for _, line := range strings.Split(procs[3].log.String(), "\n") {
		if i := strings.Index(line, " as node "); i >= 0 && strings.Contains(line, "joined cluster") {
			fmt.Sscanf(line[i:], " as node %d", &joinedAs)
		}
	}
	if want := fmt.Sprintf("to node %d ", joinedAs); joinedAs == 0 || !strings.Contains(finished.description, want) {
		t.Errorf("the snapshot's job %q does not name the receiving node (%q; the fourth node joined as node %d)", finished.description, want, joinedAs)
	}
	// The job's bytes are the stream's, as the serving node logs it.
	var streamedMB float64
	for _, line := range strings.Split(s.log.String(), "\n") {
		if i := strings.Index(line, "streamed a snapshot of "); i >= 0 {
			var keys int64
			var mb float64
			if _, err := fmt.Sscanf(line[i:], "streamed a snapshot of %d keys, %f MB", &keys, &mb); err == nil && mb > 4 {
				streamedMB = mb
			}
		}
	}
	if got := float64(finished.total) / (1 << 20); got < streamedMB-0.1 || got > streamedMB+0.1 {
		t.Errorf("the job counts %.2f MB, the serving node's log %.1f MB streamed", got, streamedMB)
	}
}
