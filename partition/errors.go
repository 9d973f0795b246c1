package partition

import "errors"

// Sentinel errors. They are returned wrapped with detail; classify them with
// errors.Is, never by message text.
var (
	// ErrTableNotFound reports a table that has no shard map: never created,
	// dropped, or being dropped (a Change.Drop not yet installed or aborted).
	ErrTableNotFound = errors.New("partition: table has no shard map")
	// ErrTableExists reports a Create of a table that already has a map.
	ErrTableExists = errors.New("partition: table already has a shard map")
	// ErrInvalidPivot reports a pivot that is outside the table, not a
	// prefix of whole key columns, or out of order.
	ErrInvalidPivot = errors.New("partition: invalid pivot")
	// ErrShardNotFound reports a shard id that is not in the table's current
	// map, typically because a concurrent split or merge replaced it.
	ErrShardNotFound = errors.New("partition: shard not found")
	// ErrCorruptRecord reports a persisted shard record that cannot be
	// decoded or that breaks the map's invariants at Load.
	ErrCorruptRecord = errors.New("partition: corrupt shard record")
	// ErrInvariant reports a broken invariant: a bug, not a user error.
	ErrInvariant = errors.New("partition: invariant violated")
)
