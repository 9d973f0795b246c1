package shardrepl

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pivotdb/pivotdb/cluster/shardsm"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestFollowerReadsMatchTheServingNode: while clients write through the
// serving node and its closer publishes closed timestamps (20 ms behind),
// a read-only SQL engine over another node's replica (sql.OpenFollower),
// reading at the closed timestamp its replica applied, sees exactly what
// the serving node sees at that time: no commit at or below a closed
// timestamp reaches a replica after it. No commit is refused by the
// closed-timestamp fence meanwhile (a writer's error fails the test).
func TestFollowerReadsMatchTheServingNode(t *testing.T) {
	ctx := testCtx(t)
	nodes := startGroupCluster(ctx, t, 1)
	nodes[0].serveSQL(ctx)
	conn, err := pgx.Connect(ctx, nodes[0].url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE acct (id Int64, owner Utf8, balance Int64, PRIMARY KEY (id))"); err != nil {
		t.Fatal(err)
	}
	rep := New(nodes[0].host, nodes[0].engine) // the closer's map
	if err := rep.AddGroup(ctx, FirstGroup); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var closer sync.WaitGroup
	closer.Add(1)
	go func() {
		defer closer.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			ts, err := nodes[0].engine.ClosableTimestamp(20 * time.Millisecond)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := closeGroups(ctx, nodes[0].host, slices.Collect(maps.Keys(rep.Groups())), shardsm.Close{Timestamp: ts}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); closer.Wait() }()
	w := startWorkload(ctx, t, nodes[0].url, 4, 0)

	fol := nodes[2]
	closedOf := func() (hlc.Timestamp, bool) {
		v, err := fol.host.StaleRead(FirstGroup, shardsm.State{})
		if err != nil {
			return hlc.Timestamp{}, false
		}
		c := v.(shardsm.StateResult).Closed
		return c, !c.IsEmpty()
	}
	// Wait until the replica closed past the CREATE TABLE, so that the
	// follower's first reads find the table.
	created, err := nodes[0].engine.Clock().Now()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if c, ok := closedOf(); ok && created.Less(c) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the follower's closed timestamp never passed the CREATE TABLE")
		case <-time.After(10 * time.Millisecond):
		}
	}
	fe, err := sql.OpenFollower(sql.Options{Storage: fol.engine, Events: slog.New(slog.DiscardHandler),
		FollowerReads: &sql.FollowerReads{Target: 20 * time.Millisecond, Closed: closedOf}})
	if err != nil {
		t.Fatal(err)
	}
	defer fe.Close()
	s, err := fe.NewSession("pivotdb", "pivotdb")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	compared, last := 0, hlc.Timestamp{}
	for compared < 15 {
		w.wait(20)
		c, ok := closedOf()
		if !ok || !last.Less(c) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		last = c
		q := fmt.Sprintf("SELECT count(*), coalesce(sum(balance), 0) FROM acct AS OF SYSTEM TIME %d.%010d", c.WallTime, c.Logical)
		var n, sum int64
		if err := conn.QueryRow(ctx, q).Scan(&n, &sum); err != nil {
			t.Fatalf("on the serving node: %v", err)
		}
		got, err := followerQuery(s, q)
		if err != nil {
			t.Fatalf("on the follower at its closed timestamp %s: %v", c, err)
		}
		if want := fmt.Sprintf("%d,%d", n, sum); got != want {
			t.Fatalf("at closed timestamp %s the follower reads %s, the serving node %s", c, got, want)
		}
		compared++
	}
	w.stop(false)
	t.Logf("%d reads compared; %d writes acknowledged", compared, w.acked.Load())
}

// followerQuery runs q on s and renders its one row as "a,b".
func followerQuery(s *sql.Session, q string) (string, error) {
	ctx := context.Background()
	s.BeginImplicit()
	p, err := s.Prepare(ctx, q, nil)
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
	var out []string
	for {
		row, err := res.Next(ctx)
		if err != nil {
			s.FailTransaction()
			s.Sync()
			return "", err
		}
		if row == nil {
			break
		}
		for _, v := range row {
			out = append(out, v.String())
		}
	}
	return strings.Join(out, ","), s.Sync()
}
