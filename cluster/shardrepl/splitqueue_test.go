package shardrepl

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/storage"
)

// sqlServing waits until one of nodes serves SQL and its shard map has at
// least minGroups groups, one starting at every shard boundary of its
// engine; with exact, each ends where the next boundary begins (the last:
// anywhere after it). Without exact, a group may end sooner: partition's
// merges leave the groups as they are. It returns the node and its
// groups.
func sqlServing(ctx context.Context, t *testing.T, nodes []*clusterNode, minGroups int, exact bool) (*clusterNode, []raft.GroupID) {
	t.Helper()
	var last string
	for {
		for _, n := range nodes {
			if n == nil || n.c == nil {
				continue
			}
			n.mu.Lock()
			rep, eng := n.rep, n.sql
			n.mu.Unlock()
			if rep == nil || eng == nil {
				continue
			}
			if gs, why := groupsMatchShards(rep, eng.ShardBoundaries(), minGroups, exact); why == "" {
				return n, gs
			} else {
				last = why
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the shard groups never matched the shards: %s", last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// groupsMatchShards checks rep's map against the shard boundaries: a
// group begins at each, and ends at the next one. It returns the groups,
// or why they do not match yet.
func groupsMatchShards(rep *Replicator, boundaries [][]byte, minGroups int, exact bool) ([]raft.GroupID, string) {
	slices.SortFunc(boundaries, bytes.Compare)
	boundaries = slices.CompactFunc(boundaries, bytes.Equal)
	rep.mu.RLock()
	routes := slices.Clone(rep.routes)
	rep.mu.RUnlock()
	var groups []raft.GroupID
	for _, rt := range routes {
		groups = append(groups, rt.group)
	}
	if len(routes) < minGroups {
		return nil, fmt.Sprintf("%d groups, want at least %d", len(routes), minGroups)
	}
	for i, b := range boundaries {
		k := slices.IndexFunc(routes, func(rt route) bool { return bytes.Equal(rt.desc.Span.Start, b) })
		if k < 0 {
			return nil, fmt.Sprintf("no group begins at %s", storage.FormatKey(b))
		}
		if exact && i+1 < len(boundaries) && !bytes.Equal(routes[k].desc.Span.End, boundaries[i+1]) {
			var bs []string
			for _, b := range boundaries {
				bs = append(bs, storage.FormatKey(b))
			}
			return nil, fmt.Sprintf("group %d %s ends before or after the next boundary %s (boundaries %s)",
				routes[k].group, routes[k].desc.Span, storage.FormatKey(boundaries[i+1]), strings.Join(bs, " "))
		}
	}
	slices.Sort(groups)
	return slices.Compact(groups), ""
}

// execServing runs an idempotent statement on whichever node serves SQL,
// again after an error: under load (-race on a busy machine) the serving
// node's read lease may lapse and end the connection (57P01), and
// serving may move.
func execServing(ctx context.Context, t *testing.T, nodes []*clusterNode, stmt string, args ...any) {
	t.Helper()
	for {
		var url string
		for _, n := range nodes {
			if n == nil || n.c == nil {
				continue
			}
			n.mu.Lock()
			if n.sql != nil {
				url = n.url
			}
			n.mu.Unlock()
		}
		var err error
		if url != "" {
			var c *pgx.Conn
			if c, err = pgx.Connect(ctx, url); err == nil {
				_, err = c.Exec(ctx, stmt, args...)
				c.Close(context.Background())
			}
			if err == nil {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// bank is the accounts of table acct: 8 accounts of 1000, two in each of
// its four uniform shards, and transfers between random pairs of them.
type bank struct {
	ids   []int64
	total int64
}

func newBank() *bank {
	b := &bank{}
	for i := int64(0); i < 8; i++ {
		b.ids = append(b.ids, (2*i-7)<<60) // 2 per quarter of Int64
	}
	b.total = 1000 * int64(len(b.ids))
	return b
}

// transfer moves an amount between two accounts in one transaction.
func (b *bank) transfer(ctx context.Context, c *pgx.Conn, rng *rand.Rand) error {
	from, to := b.ids[rng.IntN(len(b.ids))], b.ids[rng.IntN(len(b.ids))]
	if from == to {
		return nil
	}
	amount := rng.Int64N(50) + 1
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "UPDATE acct SET balance = balance - $1 WHERE id = $2", amount, from); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "UPDATE acct SET balance = balance + $1 WHERE id = $2", amount, to); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// check reads every balance through the serving node (again after an
// error: see execServing): their sum never changes.
func (b *bank) check(ctx context.Context, t *testing.T, nodes []*clusterNode) {
	t.Helper()
	for {
		n, _ := sqlServing(ctx, t, nodes, 1, false)
		n.mu.Lock()
		url := n.url
		n.mu.Unlock()
		c, err := pgx.Connect(ctx, url)
		var sum, count int64
		if err == nil {
			err = c.QueryRow(ctx, "SELECT sum(balance), count(*) FROM acct WHERE pad = ''").Scan(&sum, &count)
			c.Close(context.Background())
		}
		if err == nil {
			if sum != b.total || count != int64(len(b.ids)) {
				t.Fatalf("%d accounts hold %d, want %d holding %d", count, sum, len(b.ids), b.total)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// transfers runs workers transferring through url until stop; it returns
// how many committed. A failed commit is fine (the sum check tells).
func (b *bank) transfers(ctx context.Context, t *testing.T, url string, workers int, stop <-chan struct{}) func() int64 {
	var wg sync.WaitGroup
	var done atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			// The node may stop serving under load before a worker
			// connects (its SQL server closes): the caller counts the
			// commits, and knows whether serving moved.
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Logf("worker %d: %v", w, err)
				return
			}
			defer c.Close(context.Background())
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := b.transfer(ctx, c, rng); err != nil {
					if ctx.Err() != nil || strings.Contains(err.Error(), "conn closed") {
						return
					}
					continue // a serialization failure: the next one
				}
				done.Add(1)
			}
		}()
	}
	return func() int64 { wg.Wait(); return done.Load() }
}

// Shard groups follow partition's shards: a table created with
// UNIFORM_PARTITIONS = 4 becomes four groups of its own (the serving
// node's split reconciler), whose spans are the shards'; transfers between
// accounts in different shards commit atomically across the groups; an
// automatic split by size makes a new group; a restarted node and a
// takeover keep the groups, and the new serving node splits too.
func TestClusterGroupsFollowShards(t *testing.T) {
	if testing.Short() {
		// 25-75 s with -race at a load average of about 20 (up to 125 s
		// seen). It used to miss a group made right after the takeover
		// about one run in four (a founder that missed the split:
		// TestClusterFounderThatMissedSplitGetsChild).
		t.Skip("long: a three-node cluster, bulk writes, a restart and a takeover")
	}
	// Longer than testCtx's: with -race at a load average of about 20 its
	// steps (three nodes forming, 15 bulk UPSERTs, a restart, a takeover)
	// took 86-125 s in all.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfgs := clusterConfigs(t, 3)
	sqlOpts := &sql.Options{Balancer: partition.BalancerOptions{Interval: 200 * time.Millisecond, EstimateAbove: -1}}
	nodes := startClusterNodesWith(ctx, t, cfgs, sqlOpts)
	s := waitServing(ctx, t, nodes, FirstGroup)
	waitVoters(ctx, t, s.host(), FirstGroup, 3)
	s, _ = sqlServing(ctx, t, nodes, 1, true)

	execServing(ctx, t, nodes, `CREATE TABLE IF NOT EXISTS acct (id Int64, balance Int64, pad Utf8, PRIMARY KEY (id))
		WITH (UNIFORM_PARTITIONS = 4, AUTO_PARTITIONING_PARTITION_SIZE_MB = 1, AUTO_PARTITIONING_MIN_PARTITIONS_COUNT = 4)`)
	b := newBank()
	for _, id := range b.ids {
		execServing(ctx, t, nodes, "UPSERT INTO acct VALUES ($1, 1000, '')", id)
	}
	s, groups := sqlServing(ctx, t, nodes, 5, true)
	t.Logf("groups after CREATE TABLE: %v", groups)

	// An automatic split: shard 2 ([0, 2^62)) outgrows 1 MB. (The
	// balancer may then merge two small shards: their groups stay.)
	pad := strings.Repeat("p", 1000)
	for i := 0; i < 15; i++ {
		var vals []string
		for j := 0; j < 100; j++ {
			vals = append(vals, fmt.Sprintf("(%d, NULL, '%s')", 1+i*100+j, pad))
		}
		execServing(ctx, t, nodes, "UPSERT INTO acct VALUES "+strings.Join(vals, ", "))
	}
	s, grown := sqlServing(ctx, t, nodes, len(groups)+1, false)
	t.Logf("groups after the automatic split: %v", grown)
	// Transfers between accounts in different groups (one after the
	// other with the bulk rows above: -race on a busy machine is slow).
	stop := make(chan struct{})
	wait := b.transfers(ctx, t, s.url, 4, stop)
	time.Sleep(2 * time.Second)
	close(stop)
	if n := wait(); n == 0 {
		t.Fatal("no transfer committed")
	}
	b.check(ctx, t, nodes)
	for _, g := range grown {
		waitGroupOn(ctx, t, nodes, g)
	}
	convergedGroups(t, nodes, grown)

	// A node that does not serve restarts; then it takes over serving.
	var other *clusterNode
	for _, n := range nodes {
		if n != s {
			other = n
			break
		}
	}
	id := other.c.id
	other.close()
	restarted, err := startClusterNodeWith(ctx, t, other.cfg, sqlOpts)
	if err != nil {
		t.Fatal(err)
	}
	nodes[id-1] = restarted
	t.Cleanup(restarted.close)
	for _, g := range grown {
		waitGroupOn(ctx, t, []*clusterNode{restarted}, g)
	}
	if err := s.host().TransferLeadership(ctx, FirstGroup, restarted.c.replicaID()); err != nil {
		t.Fatal(err)
	}
	// Under load (-race on a busy machine) an election may move serving
	// again at any time: from here on, whichever node serves counts.
	next, after := sqlServing(ctx, t, nodes, len(grown), false)
	if !slices.Equal(after, grown) {
		t.Fatalf("groups after the takeover %v, want %v", after, grown)
	}
	if next != restarted {
		t.Logf("node %d serves after the takeover (an election moved it on)", next.c.id)
	}
	next.mu.Lock()
	url := next.url
	next.mu.Unlock()
	stop = make(chan struct{})
	wait = b.transfers(ctx, t, url, 4, stop)
	// The new serving node splits too: a new table.
	execServing(ctx, t, nodes, `CREATE TABLE IF NOT EXISTS other (k Int64, PRIMARY KEY (k)) WITH (PARTITION_AT_KEYS = (10, 20))`)
	_, final := sqlServing(ctx, t, nodes, len(grown)+3, false)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	if n := wait(); n == 0 {
		if next.serving() != nil {
			t.Fatal("no transfer committed after the takeover")
		}
		t.Logf("no transfer committed after the takeover: serving moved on under them")
	}
	b.check(ctx, t, nodes)
	// The old groups stay; the new ones have new ids.
	for _, g := range grown {
		if !slices.Contains(final, g) {
			t.Fatalf("groups %v after %v: group %d is gone", final, grown, g)
		}
	}
	// A node that was no founder of a new group (it was stepping down)
	// gets it from the manager loop (groupplace.go), a moment later.
	for _, g := range final {
		waitGroupOn(ctx, t, nodes, g)
	}
	convergedGroups(t, nodes, final)
}
