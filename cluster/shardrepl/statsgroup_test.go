package shardrepl

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/sql"
)

// TestSingleShardWriteCommitsInOneGroup: with a group per shard, a
// statement whose rows lie in one shard (an INSERT, an UPSERT of a new
// row, a DELETE, an UPDATE that changes a row's size) commits in that
// shard's group alone, with partition's statistics counter (a shard-local
// key at the shard's pivot, partition/keys.go) in the same proposal: no
// commit across groups. A statement over two shards still commits across
// them, which shows the count can see one. sys.partitions' row counts stay
// exact.
//
// Commits across groups are counted by the serving Replicator's commit id
// sequence (cross.seq), which only commitAcross advances. Nothing else
// writes rows meanwhile: the table is new, the balancer does not act on
// three rows.
func TestSingleShardWriteCommitsInOneGroup(t *testing.T) {
	ctx := testCtx(t)
	cfgs := clusterConfigs(t, 1)
	nodes := startClusterNodesWith(ctx, t, cfgs, &sql.Options{})
	waitServing(ctx, t, nodes, FirstGroup)
	sqlServing(ctx, t, nodes, 1, true)
	execServing(ctx, t, nodes, `CREATE TABLE st (k Int64, v Utf8, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = (10, 20))`)
	// FirstGroup plus a group per shard of st.
	s, groups := sqlServing(ctx, t, nodes, 4, true)
	t.Logf("groups: %v", groups)
	s.mu.Lock()
	url := s.url
	s.mu.Unlock()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rep := s.serving()
	if rep == nil {
		t.Fatal("the node stopped serving")
	}
	exec := func(stmt string) {
		t.Helper()
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	before := rep.cross.seq.Load()
	single := []string{
		"INSERT INTO st VALUES (5, 'a')",
		"INSERT INTO st VALUES (15, 'b')",
		"UPSERT INTO st VALUES (25, 'c')",
		"UPSERT INTO st VALUES (26, 'd')",
		"UPDATE st SET v = 'longer' WHERE k = 15",
		"DELETE FROM st WHERE k = 26",
	}
	for _, stmt := range single {
		exec(stmt)
	}
	if n := rep.cross.seq.Load() - before; n != 0 {
		t.Errorf("%d commits across groups for %d single-shard statements, want 0", n, len(single))
	}
	before = rep.cross.seq.Load()
	exec("INSERT INTO st VALUES (6, 'e'), (16, 'f')")
	if n := rep.cross.seq.Load() - before; n != 1 {
		t.Errorf("%d commits across groups for an INSERT into two shards, want 1", n)
	}
	rows, err := conn.Query(ctx, "SELECT row_count FROM sys.partitions WHERE table_name = 'st' ORDER BY partition_index")
	if err != nil {
		t.Fatal(err)
	}
	counts, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 3 || counts[0] != 2 || counts[1] != 2 || counts[2] != 1 {
		t.Fatalf("row counts %v, want [2 2 1]", counts)
	}
}
