package tests

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterServingNodeSilentWithoutQuorum: of three nodes one is killed,
// then the serving node stops (SIGSTOP) while a connection forwarded by the
// last node is open. The last node alone is no quorum, so nobody takes
// over and the stopped node keeps the role; the forwarding node ends the
// connection itself once the serving node has not answered its pings for
// a bound (FATAL 08006, the client being between messages) instead of
// hanging it until the node continues. When it continues, a new connection
// through the same node works again.
func TestClusterServingNodeSilentWithoutQuorum(t *testing.T) {
	procs := startSQLCluster(t)
	serving := servingProc(t, procs)
	var fwd, other *clusterProc
	for _, p := range procs {
		switch {
		case p == serving:
		case fwd == nil:
			fwd = p
		default:
			other = p
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, fwd.url())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	waitSysNodes(t, c, serving, threeNodesVoting)
	if _, err := c.Exec(ctx, "CREATE TABLE t (k Int64, PRIMARY KEY (k))"); err != nil {
		t.Fatal(err)
	}
	other.kill(syscall.SIGKILL)
	if _, err := c.Exec(ctx, "UPSERT INTO t (k) VALUES (1)"); err != nil {
		t.Fatal(err) // two of three voters: a quorum
	}

	claims := strings.Count(fwd.log.String(), "serves SQL under epoch")
	stopProcess(t, serving)
	wantConnEnded(t, ctx, c, "08006", 60*time.Second, 30*time.Second)
	if strings.Count(fwd.log.String(), "serves SQL under epoch") != claims {
		t.Fatalf("the forwarding node took over without a quorum:\n%s", fwd.log)
	}

	// The serving node continues: a new connection through the same node
	// reaches it again.
	if err := serving.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	n := countThrough(t, ctx, fwd, 60*time.Second)
	if n != 1 {
		t.Fatalf("%d rows, want 1", n)
	}
}
