package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/placement"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/cluster/shardrepl"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/storage"
)

// serve's cluster flags (issue 17): with --join the node is a member of a
// cluster whose data is one Raft group of three replicas
// (cluster/shardrepl); the group leader's node serves SQL and the others
// forward their SQL connections to it (gateway.go).
type clusterFlags struct {
	listen, raftListen, join *string
	startTimeout             *time.Duration
	deadNodeTimeout          *time.Duration // placement.go
	rebalance                *bool          // placement.go
	locality                 *string        // placement.go
	closedTarget             *time.Duration // follower.go
	maxOffset                *time.Duration // clockoffset.go
	snapshotRate             *int64         // placement.go
	snapshotRateElastic      *bool          // placement.go
	shardGroupPerShard       *bool          // placement.go

	followerMaxStaleness *time.Duration // follower.go
}

func addClusterFlags(fs *flag.FlagSet) clusterFlags {
	return clusterFlags{
		listen: fs.String("cluster-listen", "", "cluster RPC address (HOST:PORT) other nodes' --join lists name; with --join"),
		raftListen: fs.String("raft-listen", "",
			"Raft transport address (HOST:PORT); may not change across restarts of the data directory; with --join"),
		join: fs.String("join", "",
			"comma-separated cluster addresses of the founding nodes (the same list on each) or of any live member: run as a cluster node"),
		startTimeout: fs.Duration("cluster-start-timeout", 5*time.Minute,
			"how long a cluster node waits for a quorum of the join list or a live member"),
		deadNodeTimeout:     addDeadNodeTimeoutFlag(fs),
		rebalance:           addRebalanceFlag(fs),
		locality:            addLocalityFlag(fs),
		closedTarget:        addClosedTargetFlag(fs),
		maxOffset:           addMaxOffsetFlag(fs),
		snapshotRate:        addSnapshotRateFlag(fs),
		snapshotRateElastic: addSnapshotRateElasticFlag(fs),
		shardGroupPerShard:  addShardGroupPerShardFlag(fs),

		followerMaxStaleness: addFollowerMaxStalenessFlag(fs),
	}
}

func (c clusterFlags) enabled() bool { return *c.join != "" }

// check reports a cluster flag given without --join, --join without the
// addresses it needs, and flags a cluster node does not support yet.
func (c clusterFlags) check(fs *flag.FlagSet) error {
	if !c.enabled() {
		if *c.listen != "" || *c.raftListen != "" {
			return errors.New("--cluster-listen and --raft-listen need --join")
		}
		if deadNodeTimeoutSet(fs) {
			return errors.New("--dead-node-timeout needs --join")
		}
		if flagSet(fs, "rebalance") {
			return errors.New("--rebalance needs --join")
		}
		if flagSet(fs, "locality") {
			return errors.New("--locality needs --join")
		}
		if flagSet(fs, "closed-timestamp-target") {
			return errors.New("--closed-timestamp-target needs --join")
		}
		if flagSet(fs, "follower-read-max-staleness") {
			return errors.New("--follower-read-max-staleness needs --join")
		}
		if flagSet(fs, "max-offset") {
			return errors.New("--max-offset needs --join: a node without it has no other clock to be off from")
		}
		if flagSet(fs, "snapshot-rate") {
			return errors.New("--snapshot-rate needs --join")
		}
		if flagSet(fs, "snapshot-rate-elastic") {
			return errors.New("--snapshot-rate-elastic needs --join")
		}
		if flagSet(fs, "shard-group-per-shard") {
			return errors.New("--shard-group-per-shard needs --join")
		}
		return checkNoClockKnob()
	}
	if *c.listen == "" || *c.raftListen == "" {
		return errors.New("--join needs --cluster-listen and --raft-listen")
	}
	if err := c.checkDeadNodeTimeout(); err != nil {
		return err
	}
	if _, err := placement.ParseLocality(*c.locality); err != nil {
		return fmt.Errorf("--locality: %w", err)
	}
	if *c.snapshotRate < 0 {
		return fmt.Errorf("--snapshot-rate %d: want megabytes per second, or 0 for no bound", *c.snapshotRate)
	}
	if *c.closedTarget < minClosedTarget {
		return fmt.Errorf("--closed-timestamp-target %s: it must be at least %s", *c.closedTarget, minClosedTarget)
	}
	if *c.followerMaxStaleness < 0 {
		return fmt.Errorf("--follower-read-max-staleness %s: want a duration of 0 (no fallback) or more", *c.followerMaxStaleness)
	}
	return c.checkMaxOffset()
}

// startCluster starts the node's cluster part with its engine in dataDir
// (the node's membership and Raft log in dataDir/cluster).
//
// With st.NoSync (--unsafe-no-sync) neither the Raft log nor the engine
// fsyncs: a commit is acknowledged once a quorum of nodes wrote it to
// their operating systems, so a machine that stops may lose it, and the
// Raft log may forget entries and votes that Raft's safety rests on (a
// process killed with -9 loses nothing the operating system has).
func startCluster(ctx context.Context, c clusterFlags, dataDir, sqlAddr string, st storage.Options, debug bool, log *slog.Logger) (*shardrepl.Cluster, error) {
	// Dragonboat logs every election, membership change and snapshot at
	// info; it speaks at warning unless the server logs at debug.
	level := "warning"
	if debug {
		level = "info"
	}
	if err := raft.SetEngineLogLevel(level); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, *c.startTimeout)
	defer cancel()
	var join []string
	for _, a := range strings.Split(*c.join, ",") {
		if a = strings.TrimSpace(a); a != "" {
			join = append(join, a)
		}
	}
	locality, err := placement.ParseLocality(*c.locality) // checked by check
	if err != nil {
		return nil, err
	}
	physical, err := clockSource(log) // clockoffset.go
	if err != nil {
		return nil, err
	}
	return shardrepl.StartCluster(ctx, shardrepl.ClusterConfig{
		Node: node.Config{DataDir: filepath.Join(dataDir, "cluster"), Addr: *c.listen, RaftAddr: *c.raftListen, Join: join,
			Raft: raft.HostConfig{NoSync: st.NoSync, Quiesce: shardrepl.QuiescesGroup}, MaxOffset: *c.maxOffset, Physical: physical},
		EngineDir: dataDir, Storage: st, SQLAddr: sqlAddr,
		Logf:                func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) },
		Alarmf:              func(format string, args ...any) { log.Error(fmt.Sprintf(format, args...)) },
		DeadNodeTimeout:     *c.deadNodeTimeout,
		NoRebalance:         !*c.rebalance,
		Locality:            locality,
		ClosedTarget:        *c.closedTarget,
		SnapshotRate:        snapshotRateBytes(*c.snapshotRate),
		SnapshotRateElastic: *c.snapshotRateElastic,
		SplitShardGroups:    *c.shardGroupPerShard,
	})
}

// closeCluster stops the node (its Raft host first: the replicas write into
// the engine) and then closes eng, or the bare engine when eng is nil.
func closeCluster(cl *shardrepl.Cluster, eng *sql.Engine) error {
	err := cl.Close()
	if eng != nil {
		return errors.Join(err, eng.Close())
	}
	return errors.Join(err, cl.Engine.Close())
}

// closeEngine closes eng, after the cluster part when there is one.
func closeEngine(cl *shardrepl.Cluster, eng *sql.Engine) error {
	if cl != nil {
		return closeCluster(cl, eng)
	}
	return eng.Close()
}
