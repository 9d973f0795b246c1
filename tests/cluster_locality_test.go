package tests

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterLocality: three founders in zones a, a and b, a fourth node
// in zone c. sys.nodes shows each node's --locality; once the fourth node
// caught up, the allocator moves the shard group's voter out of zone a
// (diversity), not node b's (which votes as often, and a move by count
// alone would take the highest id), so the group votes in three zones.
func TestClusterLocality(t *testing.T) {
	procs := newClusterProcs(t, 4)
	founders := strings.Join([]string{procs[0].rpc, procs[1].rpc, procs[2].rpc}, ",")
	zones := []string{"az=a,rack=1", "az=a,rack=2", "az=b", "az=c"}
	for i, p := range procs {
		p.join = founders
		if i < 3 {
			startPlacementNode(p, "--locality", zones[i])
		}
	}
	waitSQL(t, procs[0])
	s := servingProc(t, procs[:3])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k Int64, v Utf8, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	w := startKVWriters(t, s.url(), 1)
	waitSysNodes(t, conn, s, func(ns []nodeRow) bool {
		return len(ns) == 3 && ns[0].voters == 2 && ns[1].voters == 2 && ns[2].voters == 2
	})
	startPlacementNode(procs[3], "--locality", zones[3])
	after := waitSysNodes(t, conn, s, func(ns []nodeRow) bool {
		return len(ns) == 4 && ns[3].voters == 1 && ns[3].replicas == 2
	})
	t.Logf("voters %v", voterCounts(after))
	locality := map[int64]string{}
	rows, err := conn.Query(ctx, "SELECT node_id, locality FROM sys.nodes ORDER BY node_id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var loc string
		if err := rows.Scan(&id, &loc); err != nil {
			t.Fatal(err)
		}
		locality[id] = loc
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	got := []string{locality[1], locality[2], locality[3], locality[4]}
	all := strings.Join(got, " ")
	for _, z := range zones {
		if !strings.Contains(" "+all+" ", " "+z+" ") {
			t.Fatalf("sys.nodes localities %q, want each of %q", got, zones)
		}
	}
	var from string
	re := regexp.MustCompile(`moved a voter of the shard group from node (\d+) to node 4 \((\w+)`)
	for deadline := time.Now().Add(10 * time.Second); from == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m := re.FindStringSubmatch(s.log.String()); m != nil {
			from = m[1]
			if m[2] != "diversity" {
				t.Fatalf("the voter moved for %s, want diversity:\n%s", m[2], s.log)
			}
		}
	}
	if from == "" {
		t.Fatalf("no voter of the shard group moved to node 4:\n%s", s.log)
	}
	var fromZone string
	if err := conn.QueryRow(ctx, "SELECT locality FROM sys.nodes WHERE node_id = "+from).Scan(&fromZone); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fromZone, "az=a,") {
		t.Fatalf("the voter moved away from node %s in %q, want one in zone a", from, fromZone)
	}
	t.Logf("moved the shard group's voter from node %s (%s) to node 4 (%s)", from, fromZone, locality[4])
	w.finish(t, conn)
}
