// Package placement decides where a cluster's Raft replicas and their
// leaderships live (issue 18, design §12): it drains decommissioned nodes,
// replaces the replicas of dead ones, spreads the groups' leaderships over
// the live nodes (the allocator, allocator.go), and answers sys.nodes.
//
// Today one Raft group holds all the data (cluster/shardrepl's
// FirstGroup) and another the metadata (cluster/node's MetaGroup); the
// policy works on a list of groups (Config.Groups), so per-shard groups
// only lengthen the list.
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
//     recommission both hold moveMu. It refuses a node that already gave
//     up a replica (55000: the group's Removed list has it, and a removed
//     replica id never comes back), so a decommissioned node cannot be
//     recommissioned: it rejoins with an empty data directory as a new node
//     (CockroachDB refuses to recommission a fully decommissioned node
//     too). An active node answers at once; unknown nodes 42704.
//   - Rebalancing (allocator.go, serve --rebalance, on by default): each
//     round of Run, after drains, healing and orphans, spreads the groups'
//     leaderships over the live, active nodes by count, then by the bytes
//     they lead (Group.Size), then by votes, then by id. A leadership moves
//     from L to T only when L leads at least two groups more than T (1 and
//     1 is balanced; a move that would only swap who is ahead is never
//     made), the imbalance has lasted 2 s, the group was not moved in the
//     last 30 s, and T answered a ping within the last 2 s; one move a
//     round, each a LEASE TRANSFER job. While any node holding a replica
//     does not answer, the allocator waits: healing goes first, and a
//     leadership moved then could land on a node about to die.
//   - The allocator never moves the serving group's leadership. With one
//     shard group, its leader serves all SQL: moving it moves all of the
//     SQL load to another node (no spreading) and ends every transaction
//     in flight with 57P01. It spreads the others (today the metadata
//     group) away from the serving node. Per-shard groups (issue 17) would
//     make shard leaderships worth spreading.
//   - The allocator moves no voters or non-voters: every node holds a
//     replica of every group (shardrepl adds each node as a non-voter;
//     each node reads the metadata group locally and finds the serving node
//     through its shard replica), so replica counts are always equal, and a
//     voter moved away from a node would be removed for good (dragonboat
//     cannot demote a voter, and a removed replica id never comes back),
//     leaving that node without the group. Moving voters needs demotion or
//     replica ids that are not node ids (generations), and groups that not
//     every node needs (per-shard groups).
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
//   - Replica ids are node ids and are never reused in a group (raft): a
//     node whose replica was removed (decommissioned, or healed around)
//     never gets one of that group again; it rejoins with an empty data
//     directory, as a new node.
//   - Membership changes made by policy are serialised (moveMu), and each
//     is ordered against concurrent ones by raft's config change ids, so a
//     decision taken on a stale membership fails and is taken again.
//   - Every step can be repeated after a failure: a promotion or removal
//     already in place is not requested again.
//
// # Not done yet
//
// The allocator spreads leaderships only (above: voters cannot move
// without demotion or replica generations), and by count and size, not by
// load (QPS, CPU). No read replicas or localities. A decommissioned node
// cannot be recommissioned (its replica ids are spent). While the serving
// node is down nothing heals until another node serves (the loop runs
// there). Liveness is what the pinging node sees: a node cut off from the
// serving node only is called dead. Moving a replica copies the group
// through a Raft snapshot; on one machine the writes nearly stop while the
// new node writes it (BenchmarkClusterReplicaMove in tests/).
//
// # Debugging
//
// The managing node logs each move ("moved the replica of the shard group
// from node 3 to node 4", "moved the leadership of the metadata group from
// node 1 to node 2"), each death ("node 2 has not answered for 5m0s: it is
// dead"), recommissions, and once each what it cannot do ("cannot replace
// dead node 2's replica of the shard group yet"). sys.nodes (leaders per
// node) and sys.jobs (REPLICA MOVE, LEASE TRANSFER, DECOMMISSION,
// RE-REPLICATION) show the state; raft.Host.Membership shows a group's
// voters and non-voters. The tests: go test -race ./cluster/placement (in
// process: the metadata group, and a second kvsm group for the
// allocator), and over the wire after make build,
// PIVOTDB_BIN=$PWD/bin/pivotdb go test ./tests -run 'TestClusterDecommission|TestClusterHeal|TestClusterRebalance|TestClusterWiped';
// the move benchmark: go test ./tests -run '^$' -bench ClusterReplicaMove
// -benchtime 1x (PIVOTDB_MOVE_BENCH_MB=1024 for a 1 GB shard).
package placement
