// Package kvsm is a replicated key-value map per Raft group, kept in a span
// of a Pebble store with Pebble's default key order: the node registry of
// cluster/node runs on it. Shards of the storage engine have their own
// state machine, cluster/shardsm, over the engine's key layout (versions,
// intents, lock records); it stores the applied index, syncs, snapshots and
// recovers the way this package does.
//
// # Layers
//
//	Store ── one Pebble instance per node (OpenStore, or NewStore over one
//	  │      shared with the storage engine); the groups' spans (keys.go)
//	  ▼
//	stateMachine ── raft.StateMachine of one replica: Apply, Lookup,
//	                Sync, snapshots (snapshot.go)
//
// Commands (command.go) are batches of puts, deletes and counter additions,
// applied atomically and in order. Queries (query.go) are Get, Scan and
// Applied.
//
// # Invariants
//
//   - Group g's state is exactly the span [03|g, 03|g+1); its applied index
//     lives inside the span (keys.go), so an Apply batch writes the index with
//     the effects and a snapshot recovery replaces both in one step.
//   - Apply commits with NoSync; Pebble's WAL keeps batches in order, so a
//     crash leaves a prefix of them and Open's index matches the data.
//   - Apply is deterministic: a malformed command is skipped with
//     ResultMalformed on every replica, never an error (which would stop the
//     node).
//   - Snapshots stream one key at a time (SaveSnapshot from a Pebble
//     snapshot taken between two Applies); recovery writes a staging sstable
//     and installs it with IngestAndExcise, atomically and durably.
//
// # Debugging
//
// Store.Stats counts snapshots saved and installed. AppliedIndex reads a
// group's index directly. Staging files live in <dir>/staging and are
// removed on open (a recovery interrupted by a crash is repeated by the
// engine from its snapshot file).
package kvsm
