// Package kvsm is the state machine of PivotDB's Raft groups for now: a
// replicated key-value map per group, kept in a span of the node's Pebble
// store (one engine per node, design §12). The shard state machine of the
// MVCC engine (versions, intents, their resolution) will replace its
// command format; the way it stores the applied index, syncs, snapshots and
// recovers stays.
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
