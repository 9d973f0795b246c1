// Package placement decides where a cluster's Raft replicas live (issue
// 18, design §12): it drains decommissioned nodes and replaces the
// replicas of dead ones, and it answers sys.nodes.
//
// Today one Raft group holds all the data (cluster/shardrepl's
// FirstGroup) and another the metadata (cluster/node's MetaGroup); the
// policy works on a list of groups (Config.Groups), so per-shard groups
// only lengthen the list.
//
// # Layers
//
//	sql (ALTER CLUSTER DECOMMISSION NODE, sys.nodes) ── cmd/pivotdb adapts
//	  ▼                                                  Manager to
//	Manager ── liveness: pings every node of the       sql.ClusterAdmin
//	  │         registry (node.Peer, the cluster RPC's Status)
//	  │       ── policy: Decommission (a statement), Run (the loop)
//	  ▼
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
//     short. It refuses the node it runs on (0A000: it serves SQL) and
//     unknown nodes (42704). It records "decommissioning" before it moves
//     anything and "decommissioned" when n holds nothing; a decommission
//     whose statement ended early is finished by Run. It waits up to two
//     minutes for a target (a node that joined and is still catching up).
//   - Healing: Run replaces the voters of every active dead node when a
//     target exists; without one the dead voter stays (removing it would
//     shrink the group and its quorum with it).
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
// No rebalancing (issue 18 item 2: spreading replicas and leaders by count,
// size and load), no read replicas or localities, no recommission. The
// serving node cannot be decommissioned, and while it is down nothing
// heals (the loop runs there). Liveness is what the pinging node sees: a
// node cut off from the serving node only is called dead.
//
// # Debugging
//
// The managing node logs each move ("moved the replica of the shard group
// from node 3 to node 4"), each death ("node 2 has not answered for 5m0s:
// it is dead"), and once each what it cannot do ("cannot replace dead node
// 2's replica of the shard group yet"). sys.nodes and sys.jobs show the
// state; raft.Host.Membership shows a group's voters and non-voters. The
// tests: go test -race ./cluster/placement (in process, the metadata
// group), and over the wire after make build,
// PIVOTDB_BIN=$PWD/bin/pivotdb go test ./tests -run 'TestClusterDecommission|TestClusterHealDeadNode'.
package placement
