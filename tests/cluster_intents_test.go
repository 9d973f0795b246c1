package tests

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterIntents runs three processes whose transaction blocks move
// their writes to intents every 64 kB (PIVOTDB_INTENT_FLUSH_BYTES), so
// that every block below goes through Raft as intents (issue 17 item 1),
// on a table of four shard groups: a block's rows, written into every
// quarter, are seen by the block only until COMMIT, then by every node.
// A serving node killed (kill -9) in the middle of a flushed block leaves
// none of its rows: the node that takes over removes its intents. A
// serving node killed right after a flushed block's COMMIT was sent
// leaves all of its rows or none, never part (the record, durable in its
// anchor's group, says which; the new serving node resolves or removes
// before it serves). Every node agrees at the end, after the killed ones
// restart.
func TestClusterIntents(t *testing.T) {
	withShardGroupPerShard(t)
	procs := newClusterProcs(t, 3)
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].env = []string{"PIVOTDB_INTENT_FLUSH_BYTES=65536"}
		procs[i].start()
	}
	for _, p := range procs {
		waitSQL(t, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	connect := func(p *clusterProc) *pgx.Conn {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for {
			c, err := pgx.Connect(ctx, p.url())
			if err == nil {
				if _, err = c.Exec(ctx, "SELECT 1"); err == nil {
					return c
				}
				c.Close(ctx)
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s: %v", p.sql, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	exec := func(c *pgx.Conn, q string) {
		t.Helper()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Rows x in [from, to], each in the quarter of Int64 that x % 4 picks
	// (UNIFORM_PARTITIONS = 4 cuts at -2^62, 0, 2^62), 200 bytes each.
	pad := strings.Repeat("p", 200)
	insert := func(c *pgx.Conn, from, to int) string {
		return fmt.Sprintf("INSERT INTO t SELECT (x %% 4 - 2) * 4611686018427387904 + x, x, '%s' FROM generate_series(%d, %d) AS x", pad, from, to)
	}
	type tally struct{ n, sum int64 }
	read := func(c *pgx.Conn) (tl tally, err error) {
		err = c.QueryRow(ctx, "SELECT count(*), coalesce(sum(x), 0) FROM t").Scan(&tl.n, &tl.sum)
		return tl, err
	}
	rows := func(from, to int64) tally { return tally{to - from + 1, (from + to) * (to - from + 1) / 2} }
	add := func(a, b tally) tally { return tally{a.n + b.n, a.sum + b.sum} }

	c := connect(procs[0])
	exec(c, "CREATE TABLE t (k Int64, x Int64, pad Utf8, PRIMARY KEY (k)) WITH (UNIFORM_PARTITIONS = 4)")
	c.Close(ctx)
	waitDistinctGroups(ctx, t, procs[1].url(), "t", 4)

	// A block over four groups: about 15 flushes.
	block := connect(procs[0])
	other := connect(procs[1])
	exec(block, "BEGIN")
	exec(block, insert(block, 1, 4000))
	if got, err := read(block); err != nil || got != rows(1, 4000) {
		t.Fatalf("the block reads %+v (%v), want %+v", got, err, rows(1, 4000))
	}
	if got, err := read(other); err != nil || got != (tally{}) {
		t.Fatalf("another session reads %+v (%v) during the block, want nothing", got, err)
	}
	exec(block, "COMMIT")
	committed := rows(1, 4000)
	for _, p := range procs {
		cc := connect(p)
		if got, err := read(cc); err != nil || got != committed {
			t.Fatalf("through node %s after COMMIT: %+v (%v), want %+v", p.sql, got, err, committed)
		}
		cc.Close(ctx)
	}
	block.Close(ctx)
	other.Close(ctx)

	// The serving node dies in the middle of a flushed block.
	serving := servingProc(t, procs)
	block = connect(serving)
	exec(block, "BEGIN")
	exec(block, insert(block, 4001, 8000))
	serving.kill(syscall.SIGKILL)
	block.Close(ctx)
	var alive *clusterProc
	for _, p := range procs {
		if p != serving {
			alive = p
			break
		}
	}
	cc := connect(alive)
	if got, err := read(cc); err != nil || got != committed {
		t.Fatalf("after the serving node died mid-block: %+v (%v), want %+v (none of the block)", got, err, committed)
	}
	// The keys are free again: a block writes and commits them.
	exec(cc, "BEGIN")
	exec(cc, insert(cc, 4001, 6000))
	exec(cc, "COMMIT")
	committed = add(committed, rows(4001, 6000))
	cc.Close(ctx)
	serving.start()
	waitSQL(t, serving)

	// The serving node dies right after a flushed block's COMMIT was sent.
	serving = servingProc(t, procs)
	block = connect(serving)
	exec(block, "BEGIN")
	exec(block, insert(block, 10001, 14000))
	done := make(chan error, 1)
	go func() {
		_, err := block.Exec(ctx, "COMMIT")
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	serving.kill(syscall.SIGKILL)
	commitErr := <-done
	block.Close(ctx)
	for _, p := range procs {
		if p != serving {
			alive = p
			break
		}
	}
	cc = connect(alive)
	got, err := read(cc)
	cc.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := add(committed, rows(10001, 14000))
	switch got {
	case committed:
		if commitErr == nil {
			t.Fatal("an acknowledged COMMIT lost its rows")
		}
		t.Logf("the block killed at COMMIT left none of its rows (COMMIT: %v)", commitErr)
	case all:
		t.Logf("the block killed at COMMIT left all of its rows (COMMIT: %v)", commitErr)
		committed = all
	default:
		t.Fatalf("after the serving node died at COMMIT: %+v, want %+v or %+v (COMMIT: %v)",
			got, committed, all, commitErr)
	}
	serving.start()
	waitSQL(t, serving)
	for _, p := range procs {
		cc := connect(p)
		if got, err := read(cc); err != nil || got != committed {
			t.Fatalf("through node %s at the end: %+v (%v), want %+v", p.sql, got, err, committed)
		}
		cc.Close(ctx)
	}
}
