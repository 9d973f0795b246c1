// Package node makes a process a member of a PivotDB cluster: the node's
// identity in its data directory, the formation of a new cluster, joining
// an existing one, and the metadata Raft group (MetaGroup) that holds the
// cluster id and the node registry.
//
// # Layers
//
//	Start ── identity (identity.go) ── form or restart (node.go)
//	  │
//	  ├─ cluster RPC (rpc.go, server.go): gRPC with a JSON codec; Status
//	  │  ("empty? which cluster?"), Join, Promote, and ClosedTimestamps,
//	  │  the serving node's closed-timestamp side channel, which the node
//	  │  hands to cluster/shardrepl (SetClosedTimestampHandler; Peer.
//	  │  SendClosedTimestamps sends one)
//	  ├─ raft.Host with the metadata replica
//	  └─ kvsm.Store holding the replicas' state
//
// # Forming and joining
//
// Every founding node gets the same join list. A node without an identity
// asks the others for their status until one of two things happens:
//
//   - a peer belongs to a cluster: it joins through a ready member, which
//     allocates a new node id from a counter in the metadata group, records
//     the node, and adds its metadata replica as a non-voter. The new node
//     starts the replica, waits until it has caught up (a linearizable read
//     on it), and asks for a promotion, granted while the group has fewer
//     than MetaReplicas voters;
//   - it has the lowest address of the list and a quorum of the list
//     (itself included) report empty stores with the same list: it founds
//     the cluster as node 1, the only voter; the others then join it.
//
// A later node joins by naming any member. A restarting member names
// itself in its Status requests; a peer answers whether the metadata group
// removed it (decommissioned, or replaced while dead: cluster/placement),
// and such a node refuses to start, since its replica ids are spent.
// Peer (ping.go) is the liveness ping cluster/placement sends every node;
// each answer also carries the answering node's wall clock, from which the
// pinging node estimates that node's clock offset (clockoffset.go, below).
// A node whose data directory was
// wiped has no identity and joins again under a new id; the member it asks
// removes the old id (same address) from the metadata group first. Nodes of
// two clusters in one join list, founders with different lists, duplicate
// addresses, and a restart whose list names another cluster's node are
// refused with a message that says which.
//
// # Invariants
//
//   - The Raft host starts once the node knows its cluster (restart, found,
//     or just before it asks to join), with a deployment id taken from the
//     cluster id: hosts of different clusters drop each other's messages.
//   - Each step is recorded in the identity before it is taken (State:
//     bootstrapping, joining, member), so a restart repeats the step it
//     stopped in and never founds a cluster a second time. A member whose
//     Raft log is missing is refused rather than restarted under its old id.
//   - Node ids come from one counter in the metadata group and are never
//     reused; a node's metadata replica id is its node id.
//   - The Raft address of a data directory never changes.
//
// # Clock offsets (clockoffset.go, clocksource.go)
//
// ClockMonitor keeps, per peer, the estimate of its clock minus this
// node's from the pings (CockroachDB's pkg/rpc/clock_offset.go): the
// answer's wall clock against the midpoint of the round trip, half the
// round trip as the uncertainty; the more certain estimate is kept until
// it is half a TTL (DefaultOffsetTTL, 3 s) old, and a peer not heard
// within the TTL is forgotten. Check fails (ClockOffsetError) when the
// clocks within 80% of Config.MaxOffset of this node's, its own included,
// are not more than half of the clocks it knows: of three nodes the one
// that is off fails, the two that agree pass; of two that disagree both
// fail. cluster/shardrepl's clock gate acts on it; sys.nodes shows the
// estimates. Config.Physical is the wall clock the pings read and report;
// cmd/pivotdb gives the storage engine's HLC the same one.
//
// TESTING KNOB, never for production: PIVOTDB_TESTING_CLOCK_SHIFT (a
// fixed duration) or PIVOTDB_TESTING_CLOCK_SHIFT_FILE (a file holding
// one, read again every 100 ms) shift that wall clock, not the operating
// system's (TestingClockFromEnv); the server warns at start when either
// is set and refuses them without --join.
//
// Invariants: an estimate's interval (Offset ± Uncertainty) contains the
// true offset when the answer's clock was read inside the round trip;
// a peer heard within half a TTL is known (TestClockMonitorRandomized).
//
// # Debugging
//
// Config.Logf receives what a forming node waits for ("waiting for a quorum
// of the join list: 1 of 3 empty nodes reachable, 2 needed"). The identity
// is the JSON file cluster-identity.json in the data directory. Nodes reads
// the registry; raft.Host.Membership(MetaGroup) shows voters and
// non-voters.
//
// The multi-process nemesis (nemesis_test.go, `make test-cluster`,
// NEMESIS_DURATION=10m by default) kills and freezes node processes under
// register reads and writes and checks the history with porcupine; a failed
// run prints the directory with each node's log.
//
// # Security
//
// Config.TLS makes both the cluster RPC and Raft mutual TLS (a CA, and a
// certificate it signed that is valid as server and client). Without it
// only loopback addresses are accepted.
//
// Not done yet: the cluster RPC and Raft listen on two addresses (Addr,
// RaftAddr); serve has no flags for any of this yet. Non-voters left by
// joins that failed half-way stay in
// the metadata group until a node at the same address joins again.
package node
