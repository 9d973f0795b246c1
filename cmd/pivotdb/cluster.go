package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
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
	// oneNodeCluster: without --join, a one-node cluster through Raft
	// (doc.go) rather than the engine alone.
	oneNodeCluster      *bool
	startTimeout        *time.Duration
	deadNodeTimeout     *time.Duration // placement.go
	rebalance           *bool          // placement.go
	locality            *string        // placement.go
	closedTarget        *time.Duration // follower.go
	maxOffset           *time.Duration // clockoffset.go
	snapshotRate        *int64         // placement.go
	snapshotRateElastic *bool          // placement.go
	shardGroupPerShard  *bool          // placement.go

	followerMaxStaleness *time.Duration // follower.go
}

func addClusterFlags(fs *flag.FlagSet) clusterFlags {
	return clusterFlags{
		listen: fs.String("cluster-listen", "",
			"cluster RPC address (HOST:PORT) other nodes' --join lists name (required with --join; with --one-node-cluster, by default a free loopback port picked at the first start and kept in the data directory)"),
		raftListen: fs.String("raft-listen", "",
			"Raft transport address (HOST:PORT); may not change across restarts of the data directory (required with --join; with --one-node-cluster, as --cluster-listen)"),
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
		oneNodeCluster: fs.Bool(oneNodeClusterFlag, oneNodeClusterDefault,
			"without --join, serve as a one-node cluster: every commit through a Raft group's log, so that other nodes can join it later; "+
				"false: the storage engine alone, without Raft (refused on a data directory a cluster node used)"),
	}
}

// oneNodeClusterFlag names the flag that makes serve without --join a
// one-node cluster.
const oneNodeClusterFlag = "one-node-cluster"

// oneNodeClusterDefault is false until `make test` passes with it true
// (doc.go: what still fails through Raft).
const oneNodeClusterDefault = false

// enabled: the node runs through the cluster code (with --join, or a
// one-node cluster).
func (c clusterFlags) enabled() bool { return *c.join != "" || *c.oneNodeCluster }

// oneNode: no --join, so the node founds (or restarts) a cluster of its
// own (oneNodeAddrs).
func (c clusterFlags) oneNode() bool { return *c.join == "" }

// check reports a cluster flag given to the engine without Raft, --join
// without the addresses it needs, and flags a cluster node does not
// support yet.
func (c clusterFlags) check(fs *flag.FlagSet) error {
	if *c.join != "" && flagSet(fs, oneNodeClusterFlag) {
		return errors.New("--join and --" + oneNodeClusterFlag + " exclude each other: --join makes a node of the cluster it names")
	}
	if !c.enabled() {
		if err := c.checkPlainEngine(fs); err != nil {
			return fmt.Errorf("%w or --%s", err, oneNodeClusterFlag)
		}
		return checkNoClockKnob()
	}
	if c.oneNode() {
		if err := checkOptionalLoopback("--cluster-listen", *c.listen); err != nil {
			return err
		}
		if err := checkOptionalLoopback("--raft-listen", *c.raftListen); err != nil {
			return err
		}
		if *c.listen != "" && *c.listen == *c.raftListen {
			return fmt.Errorf("--cluster-listen and --raft-listen are both %s", *c.listen)
		}
		if err := checkNoClockKnob(); err != nil {
			return err
		}
	} else if *c.listen == "" || *c.raftListen == "" {
		return errors.New("--join needs --cluster-listen and --raft-listen")
	}
	return c.checkClusterValues()
}

// checkPlainEngine refuses the cluster flags, which do nothing without
// Raft.
func (c clusterFlags) checkPlainEngine(fs *flag.FlagSet) error {
	if *c.listen != "" || *c.raftListen != "" {
		return errors.New("--cluster-listen and --raft-listen need --join")
	}
	for _, name := range []string{"dead-node-timeout", "cluster-start-timeout", "rebalance", "locality",
		"closed-timestamp-target", "follower-read-max-staleness", "max-offset", "snapshot-rate",
		"snapshot-rate-elastic", "shard-group-per-shard"} {
		if flagSet(fs, name) {
			return fmt.Errorf("--%s needs --join", name)
		}
	}
	return nil
}

// checkOptionalLoopback checks a one-node cluster's --cluster-listen or
// --raft-listen: empty (chosen at the first start) or a loopback
// HOST:PORT, since serve has no flags for the cluster's mutual TLS yet
// and cluster/node refuses other addresses without it.
func checkOptionalLoopback(flagName, addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flagName, addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s %s: a one-node cluster listens on loopback addresses only (cluster traffic off this machine needs mutual TLS)", flagName, addr)
	}
	return nil
}

// checkClusterValues checks the values of the cluster flags.
func (c clusterFlags) checkClusterValues() error {
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
	addr, raftAddr := *c.listen, *c.raftListen
	if c.oneNode() {
		var err error
		if addr, raftAddr, err = oneNodeAddrs(filepath.Join(dataDir, "cluster"), addr, raftAddr); err != nil {
			return nil, err
		}
		log.Info("one-node cluster (serve without --join): other nodes join it with --join naming its cluster address",
			"cluster_addr", addr, "raft_addr", raftAddr)
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
		Node: node.Config{DataDir: filepath.Join(dataDir, "cluster"), Addr: addr, RaftAddr: raftAddr, Join: join,
			Raft: raft.HostConfig{NoSync: st.NoSync, Quiesce: shardrepl.QuiescesGroup,
				LogStoreMemTableBytes: raft.LogStoreMemTableBytesFor(diskTotalBytes(dataDir)), CampaignAlone: c.oneNode()}, MaxOffset: *c.maxOffset, Physical: physical},
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

// diskTotalBytes is the size of the filesystem that holds dir (or, while
// dir does not exist yet, its nearest existing parent); 0 when the
// filesystem cannot tell. The Raft log store's memtables are sized by it
// (raft.LogStoreMemTableBytesFor), as the engine's are (storage's
// defaultMemTableSize), so that both fit a small disk.
func diskTotalBytes(dir string) uint64 {
	for {
		usage, err := vfs.Default.GetDiskUsage(dir)
		if err == nil {
			return usage.TotalBytes
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return 0
		}
		dir = parent
	}
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

// oneNodeAddrs gives the cluster RPC and Raft addresses of a node started
// without --join (a one-node cluster, doc.go): those of the flags, else
// the ones its identity in nodeDir records (a restart: dragonboat refuses
// a changed Raft address), else free loopback ports (pickLoopbackPort).
// Each address is tried with a listener first, so that a port another
// process took while the node was down is named in the error.
func oneNodeAddrs(nodeDir, addr, raftAddr string) (string, string, error) {
	id, err := node.LoadIdentity(nodeDir)
	if err != nil {
		return "", "", err
	}
	if id != nil {
		if addr == "" {
			addr = id.Addr
		}
		if raftAddr == "" {
			raftAddr = id.RaftAddr
		}
	}
	for _, a := range []*string{&addr, &raftAddr} {
		if *a == "" {
			if *a, err = pickLoopbackPort(addr, raftAddr); err != nil {
				return "", "", err
			}
			continue
		}
		ln, err := net.Listen("tcp", *a)
		if err != nil {
			where := "the flag's"
			if id != nil {
				where = fmt.Sprintf("kept in %s since the first start; the Raft address may not change", nodeDir)
			}
			return "", "", fmt.Errorf("the node's cluster address %s (%s) is not free: %w", *a, where, err)
		}
		ln.Close()
	}
	return addr, raftAddr, nil
}

// pickLoopbackPort finds a free loopback port for a new one-node cluster,
// other than taken's. It picks below Linux's ephemeral range (32768 and
// up), where the kernel never puts the local end of an outgoing
// connection: the node keeps the port across restarts, and an outgoing
// connection made while it is down must not be sitting on it when it
// starts again.
func pickLoopbackPort(taken ...string) (string, error) {
	for range 1000 {
		a := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if slices.Contains(taken, a) {
			continue
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			continue
		}
		ln.Close()
		return a, nil
	}
	return "", errors.New("no free loopback port between 20000 and 32000 for the one-node cluster; give --cluster-listen and --raft-listen")
}
