package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// shardGroupRows reads table's shards from sys.partitions: the group of
// each, its leader's node and its replicas' nodes.
func shardGroupRows(ctx context.Context, conn *pgx.Conn, table string) ([][3]string, error) {
	rows, err := conn.Query(ctx, `SELECT coalesce(group_id::Utf8, 'NULL'), coalesce(leader_node_id::Utf8, 'NULL'), coalesce(replica_node_ids, 'NULL')
		FROM sys.partitions WHERE table_name = $1 ORDER BY partition_index`, table)
	if err != nil {
		return nil, err
	}
	var out [][3]string
	for rows.Next() {
		var r [3]string
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// waitDistinctGroups waits until every shard of table is in a group of its
// own, led by a node and replicated on three.
func waitDistinctGroups(ctx context.Context, t *testing.T, url, table string, shards int) [][3]string {
	t.Helper()
	deadline := time.Now().Add(60*time.Second + time.Duration(shards)*time.Second)
	var last [][3]string
	var lastErr error
	for time.Now().Before(deadline) {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			last, lastErr = shardGroupRows(ctx, conn, table)
			conn.Close(ctx)
		} else {
			lastErr = err
		}
		seen := map[string]bool{}
		ok := len(last) == shards
		for _, r := range last {
			ok = ok && r[0] != "NULL" && !seen[r[0]] && r[1] != "NULL" && r[2] == "1,2,3"
			seen[r[0]] = true
		}
		if ok {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s's shards are not in distinct groups on three nodes: %v (%v)", table, last, lastErr)
	return nil
}

// TestClusterShardGroups runs three processes: a table with
// UNIFORM_PARTITIONS = 4 becomes four shard groups (sys.partitions shows
// them, each on the three nodes); bank transfers through all three nodes,
// each with a ledger row in another table, commit across the groups
// while the serving node is killed (kill -9) and restarted. Nothing is
// lost or half applied: the balances add up, every acknowledged transfer
// is in the ledger, and each balance is what the ledger says.
func TestClusterShardGroups(t *testing.T) {
	withShardGroupPerShard(t)
	procs := startSQLCluster(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`CREATE TABLE acct (id Int64, balance Int64, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 4)`,
		`CREATE TABLE ledger (id Int64, src Int64, dst Int64, amount Int64, PRIMARY KEY (id))`,
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	var ids []int64
	for i := int64(0); i < 8; i++ {
		ids = append(ids, (2*i-7)<<60) // two in each quarter of Int64
		if _, err := conn.Exec(ctx, "INSERT INTO acct VALUES ($1, 1000)", ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close(ctx)
	before := waitDistinctGroups(ctx, t, procs[1].url(), "acct", 4)
	t.Logf("acct's shards (group, leader, replicas): %v", before)

	var stop atomic.Bool
	var wg sync.WaitGroup
	var acked sync.Map // ledger id → true
	var nAcked atomic.Int64
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := procs[w%len(procs)]
			rng := rand.New(rand.NewPCG(uint64(w), 17))
			var c *pgx.Conn
			defer func() {
				if c != nil {
					c.Close(context.Background())
				}
			}()
			for i := int64(0); !stop.Load(); i++ {
				if c == nil {
					cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					cc, err := pgx.Connect(cctx, p.url())
					cancel()
					if err != nil {
						time.Sleep(100 * time.Millisecond)
						continue
					}
					c = cc
				}
				src, dst := ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))]
				if src == dst {
					continue
				}
				id := int64(w)*1_000_000 + i
				err := transferWithLedger(ctx, c, id, src, dst, rng.Int64N(20)+1)
				if err == nil {
					acked.Store(id, true)
					nAcked.Add(1)
					continue
				}
				if c.IsClosed() || strings.Contains(err.Error(), "conn") || strings.Contains(err.Error(), "57P01") ||
					strings.Contains(err.Error(), "08") {
					c.Close(context.Background())
					c = nil
				}
			}
		}()
	}
	waitAcked := func(n int64) {
		t.Helper()
		target := nAcked.Load() + n
		deadline := time.Now().Add(90 * time.Second)
		for nAcked.Load() < target {
			if time.Now().After(deadline) {
				t.Fatalf("only %d transfers acknowledged, want %d", nAcked.Load(), target)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitAcked(50)
	victim := servingProc(t, procs)
	victim.kill(syscall.SIGKILL)
	servingProc(t, procs)
	waitAcked(50)
	victim.start()
	waitSQL(t, victim)
	waitAcked(50)
	stop.Store(true)
	wg.Wait()

	// Through every node: the sums, the ledger, each balance.
	for _, p := range procs {
		c, err := pgx.Connect(ctx, p.url())
		if err != nil {
			t.Fatal(err)
		}
		var sum, n int64
		if err := c.QueryRow(ctx, "SELECT sum(balance)::Int64, count(*) FROM acct").Scan(&sum, &n); err != nil {
			t.Fatal(err)
		}
		if sum != 8000 || n != 8 {
			t.Fatalf("through %s: %d accounts holding %d, want 8 holding 8000", p.sql, n, sum)
		}
		ledger := map[int64]bool{}
		net := map[int64]int64{}
		rows, err := c.Query(ctx, "SELECT id, src, dst, amount FROM ledger")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, src, dst, amount int64
			if err := rows.Scan(&id, &src, &dst, &amount); err != nil {
				t.Fatal(err)
			}
			ledger[id] = true
			net[src] -= amount
			net[dst] += amount
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		acked.Range(func(k, _ any) bool {
			if !ledger[k.(int64)] {
				t.Fatalf("through %s: acknowledged transfer %d is not in the ledger", p.sql, k)
			}
			return true
		})
		for _, id := range ids {
			var balance int64
			if err := c.QueryRow(ctx, "SELECT balance FROM acct WHERE id = $1", id).Scan(&balance); err != nil {
				t.Fatal(err)
			}
			if balance != 1000+net[id] {
				t.Fatalf("through %s: account %d holds %d, the ledger says %d", p.sql, id, balance, 1000+net[id])
			}
		}
		c.Close(ctx)
	}
	after := waitDistinctGroups(ctx, t, procs[2].url(), "acct", 4)
	for i := range after {
		if after[i][0] != before[i][0] {
			t.Fatalf("acct's groups changed: %v, then %v", before, after)
		}
	}
	t.Logf("%d transfers acknowledged; groups after the kill: %v", nAcked.Load(), after)
}

// transferWithLedger moves amount from src to dst and records it in the
// ledger under id, in one transaction over several shard groups.
func transferWithLedger(ctx context.Context, c *pgx.Conn, id, src, dst, amount int64) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"UPDATE acct SET balance = balance - $1 WHERE id = $2", []any{amount, src}},
		{"UPDATE acct SET balance = balance + $1 WHERE id = $2", []any{amount, dst}},
		{"INSERT INTO ledger VALUES ($1, $2, $3, $4)", []any{id, src, dst, amount}},
	} {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("%s: %w", q.sql, err)
		}
	}
	return tx.Commit(ctx)
}

// withShardGroupPerShard starts the test's cluster nodes with
// --shard-group-per-shard (the default; said explicitly so that these
// tests keep their groups whatever the default, and whatever
// $PIVOTDB_TEST_NODE_FLAGS says before it).
func withShardGroupPerShard(t *testing.T) {
	t.Setenv("PIVOTDB_TEST_NODE_FLAGS", strings.TrimSpace(os.Getenv("PIVOTDB_TEST_NODE_FLAGS")+" --shard-group-per-shard"))
}

// TestClusterNodesCountEveryGroup: sys.nodes' replicas, voters and
// leaders count every shard group a node holds, the split children
// included (a table with UNIFORM_PARTITIONS = 4 on three nodes), not the
// metadata group and the first shard group only (which it counted
// before: 2 replicas per node however many groups).
func TestClusterNodesCountEveryGroup(t *testing.T) {
	withShardGroupPerShard(t)
	procs := startSQLCluster(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, procs[0].url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	mustExec(t, conn, `CREATE TABLE quad (id Int64, v Utf8, PRIMARY KEY (id)) WITH (UNIFORM_PARTITIONS = 4)`)
	for i := int64(0); i < 8; i++ {
		mustExec(t, conn, fmt.Sprintf("INSERT INTO quad VALUES (%d, 'row')", (2*i-7)<<60))
	}
	waitDistinctGroups(ctx, t, procs[1].url(), "quad", 4)
	// The groups: the metadata group (1), the first shard group (2) and
	// every split child a table's shard lies in.
	var children int
	if err := conn.QueryRow(ctx, "SELECT count(DISTINCT group_id) FROM sys.partitions WHERE group_id > 2").Scan(&children); err != nil {
		t.Fatal(err)
	}
	if children < 4 {
		t.Fatalf("quad's four shards lie in %d split children", children)
	}
	groups := 2 + children
	var last string
	// A joining replica of a child is promoted one manager round after it
	// caught up, and a child's leader is known once it elected one.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		rows, err := conn.Query(ctx, "SELECT node_id, replicas, voters, leaders, bytes FROM sys.nodes WHERE is_live ORDER BY node_id")
		if err != nil {
			t.Fatal(err)
		}
		ok, nodes, leaders := true, 0, 0
		last = ""
		for rows.Next() {
			var id, replicas, voters, led, bytes int64
			if err := rows.Scan(&id, &replicas, &voters, &led, &bytes); err != nil {
				t.Fatal(err)
			}
			last += fmt.Sprintf(" node %d: %d replicas, %d voters, %d leaders, %d bytes;", id, replicas, voters, led, bytes)
			ok = ok && replicas == int64(groups) && voters == int64(groups) && bytes > 0
			nodes++
			leaders += int(led)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if ok && nodes == 3 && leaders == groups {
			t.Logf("%d groups:%s", groups, last)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sys.nodes after 60 s, with %d groups (each node holding a voter of each, each group led):%s", groups, last)
		}
	}
}
