// Package placement decides where a cluster's Raft replicas and their
// leaderships live (issue 18, design §12): it drains decommissioned nodes,
// replaces the replicas of dead ones, spreads the groups' leaderships over
// the live nodes (the allocator, allocator.go), and answers sys.nodes.
//
// Today one Raft group holds all the data (cluster/shardrepl's
// FirstGroup) and another the metadata (cluster/node's MetaGroup); the
// policy works on a list of groups (Config.Groups), so per-shard groups
// only lengthen the list. The files: placement.go (liveness, drains,
// healing, decommissions), snapshotjobs.go (snapshot streams as jobs),
// allocator.go (the rebalancing round), plan.go
// (its pure decision function), generations.go (replica-id generations:
// voters that move), locality.go (--locality), readreplicas.go (read
// replicas: READ_REPLICAS_SETTINGS).
//
// # Layers
//
//	sql (ALTER CLUSTER DECOMMISSION|RECOMMISSION      ── cmd/pivotdb adapts
//	  │  NODE, sys.nodes)                                 Manager to
//	  ▼                                                   sql.ClusterAdmin
//	Manager ── liveness: pings every node of the
//	  │         registry (node.Peer, the cluster RPC's Status)
//	  │       ── policy: Decommission, Recommission (statements), Run (the
//	  │          loop: drains, heals, orphans, then rebalance), HandOver
//	  ▼          (shardrepl, when a decommissioning node leads again)
//	raft.Host ── Membership, TransferLeadership, PromoteIf, RemoveReplica
//	  and the metadata group, which records each node's membership
//	  ("node-membership/" + id: decommissioning, decommissioned)
//
// Every node runs Start (pings, so sys.nodes' is_live is answered
// wherever SQL runs); the node that manages the shard group's membership
// (the serving node: shardrepl starts Run beside its own loop, which adds
// every eligible node as a non-voter and promotes caught-up ones up to
// three voters) runs Run.
//
// # Policy
//
//   - Liveness: a node is live while it answered a ping within the last
//     few seconds (never longer than the dead timeout), and dead once it
//     has not answered for DeadNodeTimeout (--dead-node-timeout, 5 minutes
//     by default as CockroachDB's server.time_until_store_dead). A node
//     never heard counts from the manager's start: a restarted serving node
//     gives every node the full timeout.
//   - Eligible for replicas: active (not decommissioning or
//     decommissioned) and not dead. shardrepl's loop adds and promotes
//     only eligible nodes (Eligible).
//   - Replacing a voter of group g on node n (decommission or death): the
//     target is a non-voting replica of g on an eligible, live node that
//     has caught up (Group.CaughtUp), the one voting in fewest groups
//     first. If n is live and leads g, leadership moves first (to the
//     managing node, else another live voter); then the target is promoted
//     while n still votes (PromoteIf), then n's replica is removed. The
//     group thus never has fewer voters than before, and never loses
//     quorum by the move: promoting first means four voters, three of
//     them needed, for a moment. Each replacement is a job (REPLICA MOVE
//     for decommissions, RE-REPLICATION for deaths) whose progress is its
//     three steps. Non-voting replicas of n are simply removed.
//   - Decommission refuses (55000) when the other live, active nodes are
//     fewer than the voters of a group n votes in: it would leave the group
//     short. It refuses unknown nodes (42704). It records "decommissioning"
//     before it moves anything and "decommissioned" when n holds nothing; a
//     decommission whose statement ended early is finished by Run, as a
//     DECOMMISSION job "finish decommissioning node n". It waits up to two
//     minutes for a target (a node that joined and is still catching up).
//   - Decommissioning the node the statement runs on (the serving node:
//     SQL runs there) hands over: after the checks and "decommissioning",
//     it moves the leadership of the serving group (Group.Serving, the
//     shard group) to the live, active voter that leads fewest groups, then
//     of every other group it leads, and returns (a NOTICE says so). The
//     new leader's node claims serving (cluster/shardrepl): the old node's
//     commits are fenced by the serving epoch, its transactions in flight
//     end with 57P01, its SQL closes once their statements end, and it goes
//     back to forwarding. The new serving node's Run finishes the drain.
//     A decommissioning node that an election makes leader again does not
//     claim serving: shardrepl calls HandOver instead (it claims only if no
//     other voter can take the leadership). If the serving group's
//     leadership cannot move, the node is active again and the statement
//     fails (55000).
//   - Recommission (ALTER CLUSTER RECOMMISSION NODE n): a decommissioning
//     node becomes active again; a drain in progress stops before its next
//     move (its statement fails with 57014), since moves and the
//     recommission both hold moveMu. A drain does the groups whose replicas
//     change generations (the shard group) first; a node recommissioned
//     after it gave one of those up gets a non-voter of the next
//     generation back. It refuses a node that gave up a replica of another
//     group (the metadata group: 55000, as its replica id there is its node
//     id and a removed id never comes back), so a decommissioned node
//     cannot be recommissioned: it rejoins with an empty data directory as
//     a new node (CockroachDB refuses to recommission a fully
//     decommissioned node too). An active node answers at once; unknown
//     nodes 42704.
//   - Replica-id generations (generations.go): a node's replica of a group
//     has the id gen<<32 | node id (generation 0 is the node id, as before
//     generations existed). Dragonboat cannot demote a voter and never
//     takes a removed id back, so a voter moves away by promoting the
//     target's non-voter, removing the voter, then adding the node's
//     replica of the next generation as a non-voter and recording its id
//     in the metadata group ("replica-id/" + group + node). The node
//     notices the record (cluster/shardrepl polls it every second), stops
//     its old replica, deletes its log data and its state machine's data
//     of the group, and starts the new id as a joining non-voter, which
//     catches up from a snapshot (Rejoin; a node that was down meanwhile
//     does it when it starts). Only groups with Group.Generations move
//     voters (the shard group); the metadata group's replica ids stay node
//     ids (cluster/node starts that replica by node id).
//   - Rebalancing (allocator.go, plan.go; serve --rebalance, on by
//     default): each round of Run, after drains, healing and orphans,
//     builds a view of the nodes (zone, may it receive) and groups
//     (leader, voters, caught-up non-voters, bytes, write rate) and asks
//     plan, a pure function (TestPlan is its table), for the moves it
//     wants, most urgent first:
//     1. zone diversity: a movable group with two voters in one zone (the
//     first tier of --locality) while a caught-up non-voter sits in a zone
//     without any moves one there (CockroachDB's rule);
//     2. leaderships weighed by load: a leadership weighs
//     0.5 + 0.5·n·rate/Σrate over the n groups (the rate is the group's
//     applied commands per second, smoothed: its writes; 1 each while
//     nothing is written, which is balancing by count), and moves from L
//     to the lightest voter T only when W(L) − W(T) ≥ 2·w: T is not ahead
//     of L afterwards, so a move never just swaps who is ahead and cannot
//     flap; ties go by bytes led, then votes, then id;
//     3. voters per node (over all groups): a movable group's voter on a
//     node with at least two more voters than a node with a caught-up
//     non-voter moves there, unless the group would lose a distinct zone.
//     A group's leader never gives up its voter, nor does a node that may
//     not receive one (draining and healing handle those). A move must be
//     wanted for 2 s in every round, the group must not have moved in the
//     last 30 s, and the target must have answered a ping within the last
//     2 s; one move a round: a LEASE TRANSFER job for a leadership, a
//     REPLICA MOVE ("move a voter of ...") for a voter. While any node
//     holding a replica does not answer, the allocator waits: healing goes
//     first, and a move then could land on a node about to die.
//   - The allocator never moves the serving group's leadership. With one
//     shard group, its leader serves all SQL: moving it moves all of the
//     SQL load to another node (no spreading) and ends every transaction
//     in flight with 57P01. It spreads the others (today the metadata
//     group) away from the serving node. Per-shard groups (issue 17) would
//     make shard leaderships worth spreading.
//   - Every node keeps a replica of every group (shardrepl adds each node
//     as a non-voter; each node reads the metadata group locally and finds
//     the serving node through its shard replica): a voter that moves
//     leaves a non-voter behind, so replica counts stay equal and only
//     voters and leaders are balanced.
//   - Read replicas (readreplicas.go; issue 18 item 6): each round of Run,
//     after healing and before the allocator, takes the shard groups and
//     what their tables ask for (Config.ReadReplicaGroups: cluster/
//     shardrepl gives every group of the serving node's map the most that
//     the tables and indexes whose spans it overlaps ask, PER_AZ:n per
//     zone and ANY_AZ:n in all; with one shard group that is the most any
//     table asks) and chooses the nodes (chooseReadReplicas, a pure
//     function; TestChooseReadReplicas is its table): PER_AZ:n puts n in
//     every zone that has nodes (the first --locality tier; nodes without
//     one are a zone of their own; a node that has not recorded its
//     locality yet, just joined, is left out of the round, so that it does
//     not get a read replica of its own as a zone of none that moves once
//     its record is read), ANY_AZ:n then adds more one at a time
//     in the zone with fewest until n in all. Only a caught-up non-voter
//     of the group on a live, active node qualifies (never a voter); the
//     current ones stay first (no churn), then the nodes holding fewest
//     read replicas, then the lowest id. A zone without enough such nodes
//     gets fewer (logged once: "asks for read replicas PER_AZ:1; placed
//     zone az=b: 0 of 1 ..."). A read replica that stops qualifying (its
//     node died, is draining, or now votes: the allocator promoted it) is
//     replaced, and one beyond a lowered or reset setting removed. The
//     choice is recorded in the metadata group ("read-replica/" + group +
//     node), one READ REPLICAS job per group that changes; records of a
//     group no longer listed are deleted. Every node already holds a
//     non-voter of every group where it does not vote (above), so placing
//     a read replica designates one: it adds no Raft replica. What it
//     changes is where stale reads go (cmd/pivotdb/follower.go:
//     shardrepl.StaleReadTargets reads the records locally and sends a
//     stale read-only connection to the nearest node holding one, same
//     zone first) and sys.partitions' read_replica_node_ids. While the
//     serving node's SQL is not open the round is skipped (an empty list
//     would remove them all).
//   - Healing: Run replaces the voters of every active dead node when a
//     target exists; without one the dead voter stays (removing it would
//     shrink the group and its quorum with it).
//   - Orphans: a replica whose node is no longer in the registry (a node
//     whose data directory was wiped rejoined under a new id, and the join
//     deleted the old entry) is removed at once (removeOrphans): its data
//     is gone for good, and its Raft address is the new incarnation's,
//     which dragonboat refuses to add while the old replica holds it.
//     shardrepl's loop then adds the new node and promotes it.
//
// # Invariants
//
//   - Replica ids are never reused in a group (raft): a node's next
//     generation is the recorded one plus one, recorded right after the
//     managing node added it (an add a crash left unrecorded is repeated
//     with the same id, still a member). The metadata group's ids are node
//     ids: a node whose replica of it was removed (decommissioned, or
//     healed around) never gets one again; it rejoins with an empty data
//     directory, as a new node.
//   - A node runs at most one replica of a group, of its recorded
//     generation or the one before while it rejoins; the old one's data is
//     gone before the new one starts.
//   - Membership changes made by policy are serialised (moveMu), and each
//     is ordered against concurrent ones by raft's config change ids, so a
//     decision taken on a stale membership fails and is taken again.
//   - Every step can be repeated after a failure: a promotion or removal
//     already in place is not requested again.
//
// # Not done yet
//
// Load is the groups' write rate: reads of the serving node do not go
// through Raft and are not counted, and there is no CPU measure. Voters of
// the metadata group do not move (no generations there). Decommissioning
// removes a node's voters rather than leaving it a non-voter until the
// end. Read replicas are designated non-voters, not replicas of their own:
// they add no Raft replica while every node holds every group, and they
// count in no node's replica count of sys.nodes (which counts the Raft
// replicas). Whether a node's non-voter has caught up is asked once per
// node (Config.ReadReplicaCaughtUp: shardrepl answers FirstGroup's record
// for every group, its children's replicas being on the same nodes); a
// child replica still catching up only makes its stale reads wait for its
// closed timestamp.
// While the serving node is down nothing heals until another node serves
// (the loop runs there). Liveness is what the pinging node sees: a node
// cut off from the serving node only is called dead. Moving a replica
// copies the group through a Raft snapshot (the leader's log is compacted
// first, CompactBeforeAdd, so that a bulk load's entries do not go
// through the new replica's in-memory log and trip dragonboat's rate
// limiter, which stopped the group's writes). The snapshot streams and
// installs at the nodes' snapshot rate (serve --snapshot-rate, 32 MiB/s by
// default; cluster/shardsm paces it), which spreads its CPU over time and
// keeps the receiver up with the sender (unpaced, dragonboat gave up
// waiting for a receiver that fell behind and streamed the snapshot a
// second time), and with --snapshot-rate-elastic scaled down to an eighth
// while the node's CPU is short (cluster/shardsm's snapshotpace.go: the
// snapshot yields to the writes; off by default, as a slowed copy of a
// big shard can outlive the leader's log and be streamed again). A stream's end waits for the receiver
// to queue it (cluster/raft's transport), else the leader could stream it
// twice. On one loaded machine the writes slow down while a node joins and the snapshot
// streams and installs (BenchmarkClusterReplicaMove in tests/ reports the
// rates and the nodes' CPU per write, quiet and during the move). The
// promotion and removal are a REPLICA MOVE job; the snapshot's copy
// (shardrepl's manager loop adds the non-voter) is a REPLICA SNAPSHOT job
// (snapshotjobs.go: shardsm.Store.SetSnapshotTracker calls
// StartSnapshotJob as each stream begins; rows_done and rows_total are
// the bytes sent and the stream's, estimated from the replica's stats
// counter until it ends; TestClusterSnapshotJob in tests/). Only the
// serving node has a job registry, so a snapshot another node streams (a
// group led elsewhere, with a group per shard) shows in its log only
// ("streamed a snapshot of N keys, M MB"). The job names the receiving
// node ("to node N"): dragonboat does not tell the state machine where a
// stream goes, but the stream's first chunk names the group and target
// replica, and cluster/raft's transport passes them on (Host.OnSnapshotSend
// → Manager.SnapshotSent; NodeOf maps the replica to its node). That comes
// after the state machine began the stream (the job started; the chunk
// goes once its 2 MB are written, so a running job may not name its node
// yet), and names the oldest running job of the group without a target; a
// target without one is dropped. A job that ended before its first chunk went keeps "to a
// replica catching up", as does every job with dragonboat's own transport
// (tests only). A node that takes over serving runs its rounds before its
// SQL engine is open and attaches the registry (AttachJobs): the jobs it
// starts meanwhile are kept pending, with their progress and outcome, and
// enter the registry when it comes (jobHandle; a decommission the new
// serving node finished in its first second was missing from sys.jobs:
// TestClusterDecommissionServing, TestJobsStartedBeforeTheRegistry).
//
// Split children of the shard group (cluster/shardrepl's groups.go) are
// not placement's groups (Config.Groups is fixed at start): the serving
// node's manager loop keeps every child's members on the shard group's
// members and its voters on the shard group's voters (groupplace.go), one
// round behind placement's moves, replacements and drains; the rule holds
// while the serving node reads its own engine (any voter may serve next).
// The allocator weighs the first shard group alone.
//
// # Debugging
//
// The managing node logs each move ("moved the replica of the shard group
// from node 3 to node 4", "moved the leadership of the metadata group from
// node 1 to node 2", "moved a voter of the shard group from node 3 to node
// 4 (rebalancing: ...); node 3 rejoins as a non-voter"), and a node that
// rejoins "rejoined the shard group as a non-voter (replica 0x100000003)";
// sys.nodes' locality column shows --locality; each death ("node 2 has not answered for 5m0s: it is
// dead"), recommissions, and once each what it cannot do ("cannot replace
// dead node 2's replica of the shard group yet"). sys.nodes (placed_leaders
// per node: this package's groups; leaders counts the split children too)
// and sys.jobs (REPLICA MOVE, LEASE TRANSFER, DECOMMISSION,
// RE-REPLICATION) show the state; raft.Host.Membership shows a group's
// voters and non-voters (replica ids in hex: 0x1_0000_0003 is node 3's
// generation 1). The tests: go test -race ./cluster/placement (in
// process: the metadata group, and a second kvsm group for the allocator
// and for voter moves; TestPlan for the decisions), and over the wire after make build,
// PIVOTDB_BIN=$PWD/bin/pivotdb go test ./tests -run 'TestClusterDecommission|TestClusterHeal|TestClusterRebalance|TestClusterWiped|TestClusterReadReplicas';
// read replicas: the records ("read-replica/" in the metadata group),
// sys.partitions' read_replica_node_ids, the serving node's log ("read
// replicas of the shard group (PER_AZ:1): add node 4; read replicas now on
// [4]"), a forwarding node's debug log ("forwarded a stale read-only
// connection to the nearest read replica");
// the move benchmark: go test ./tests -run '^$' -bench ClusterReplicaMove
// -benchtime 1x (PIVOTDB_MOVE_BENCH_MB=1024 for a 1 GB shard).
package placement
