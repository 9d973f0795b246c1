// Package tablesettings is the YQL table-settings layer: it validates the
// settings of CREATE TABLE ... WITH (...) and ALTER TABLE ... SET / RESET
// (design.md §3.2) against a table, holds them as a JSON-serialisable
// Settings value for the catalog's table descriptor, answers the effective
// values with their defaults, computes the initial pivots of
// UNIFORM_PARTITIONS and PARTITION_AT_KEYS (design.md §5), and prints the
// settings back for SHOW CREATE TABLE.
//
// # API
//
//	func ForCreate(with []parser.Setting, t TableInfo) (Settings, []Notice, error)
//	func ApplyAlter(cur Settings, stmt *parser.AlterSettings, t TableInfo) (Settings, []Notice, error)
//	func UniformPivots(keyType types.Type, n int64) ([]types.Value, error)
//	func CompareKeys(a, b []types.Value) int
//
//	func (s Settings) BySize() bool                 // AUTO_PARTITIONING_BY_SIZE, default ENABLED
//	func (s Settings) PartitionSizeBytes() int64    // AUTO_PARTITIONING_PARTITION_SIZE_MB MiB, default 2048
//	func (s Settings) MinPartitions() int64         // default InitialPartitions()
//	func (s Settings) MaxPartitions() int64         // math.MaxInt64 when unbounded
//	func (s Settings) ByLoad() bool                 // default DISABLED
//	func (s Settings) BloomFilter() bool            // default DISABLED
//	func (s Settings) GCTTLDuration() (time.Duration, bool) // GC_TTL; false: the server's --gc-ttl
//	func (s Settings) InitialPartitions() int64     // shards at CREATE: N, len(keys)+1 or 1
//	func (s Settings) InitialPivots(t TableInfo) ([][]types.Value, error)
//	func (s Settings) Render() string               // the WITH clause as stored
//	func (s Settings) RenderWithPivots(p [][]types.Value) string // SHOW CREATE TABLE
//
// TableInfo is what validation needs about the table: its columns (name,
// type, hidden) and the key columns' indexes; the caller builds it from the
// catalog descriptor (or from the CREATE TABLE statement being executed).
// This package does not import the catalog, so the catalog's Table can hold
// a Settings field.
//
// # Lifecycle
//
//	CREATE TABLE ... WITH (...)
//	  parser.Parse ──Statement.With──▶ ForCreate ──Settings──▶ catalog descriptor (JSON)
//	                                       │
//	                                       └─▶ InitialPivots ──▶ the partition layer's first shard map
//	ALTER TABLE t SET / RESET
//	  parser.Parse ──Statement.Settings──▶ ApplyAlter(current) ──▶ new descriptor
//	SHOW CREATE TABLE t
//	  descriptor Settings + current shard map pivots ──▶ RenderWithPivots
//
// Settings are immutable values: ForCreate and ApplyAlter return new ones
// and never modify their input, so catalog snapshots can share them. A nil
// field means "never given": the default applies, and Render leaves it
// out. Render and ForCreate are inverses: Render's output parsed by
// parser.Parse and read by ForCreate gives Settings that are Equal (the
// data-driven tests check this after every statement).
//
// PostgreSQL's heap storage parameters (fillfactor, autovacuum_*,
// toast_tuple_target, ...; heap.go) are accepted in CREATE TABLE and ALTER
// TABLE SET with a notice that they change nothing in an LSM tree, and are
// not kept: the one exception to "nothing accepted and ignored", so that
// pgbench -i and PostgreSQL-made dumps run unmodified.
//
// Notices are for the client (severity NOTICE, SQLSTATE 00000): a
// UNIFORM_PARTITIONS larger than the first key type has values (the count
// is lowered to one shard per value).
//
// # Decisions
//
//   - Names compare case-insensitively; values are YDB's: ENABLED /
//     DISABLED identifiers (any case, not strings, not TRUE/FALSE);
//     integers (decimal, or 0x / 0o / 0b prefixed; a leading 0 stays
//     decimal); TTL as an Interval literal (YQL Interval("PT1H") or
//     PostgreSQL's INTERVAL '1 hour'); READ_REPLICAS_SETTINGS as a string.
//   - Every count and size is at least 1. AUTO_PARTITIONING_MIN_PARTITIONS_COUNT
//     defaults to the initial partition count (design.md), so MAX below
//     that default is refused until MIN is set explicitly.
//   - MAX below the initial count is allowed when MIN is explicit: the
//     table starts with more shards than automatic splitting would make
//     and merges down to MIN.
//   - A setting given twice in one statement is an error, also in RESET.
//   - UNIFORM_PARTITIONS and PARTITION_AT_KEYS are CREATE-only and stored
//     as given: they describe the initial shards, which resharding and
//     automatic splits change later. SHOW CREATE TABLE prints the current
//     pivots as PARTITION_AT_KEYS instead, and prints MIN explicitly when
//     its default would otherwise change in the recreated table.
//   - UNIFORM_PARTITIONS needs an integer first key column (Int8..Uint64;
//     not Bool, dates or decimals). It is capped by MaxInitialPartitions
//     and lowered, with a notice, to the number of values of types narrower
//     than 64 bits.
//   - PARTITION_AT_KEYS literals convert only within their kind, as YQL
//     literals do: numbers to numeric columns, "strings" (or 'strings') to
//     String and Utf8, typed literals (Date("..."), Timestamp("..."),
//     Uint8("7"), ...) to their own family (integers to any integer type
//     that holds the value), NULL to any column, TRUE / FALSE to Bool.
//     Decimals round to the column's scale like a cast. Keys compare as
//     tuples: NULL first, and a prefix before the longer keys it starts.
//   - TTL columns: Date, Datetime, Timestamp without a unit; Uint32,
//     Uint64, Int64 (PivotDB adds Int64 to YDB's list) with AS SECONDS |
//     MILLISECONDS | MICROSECONDS | NANOSECONDS; hidden columns cannot be
//     named. The interval is kept in microseconds and must not be
//     negative. Only TTL, GC_TTL and READ_REPLICAS_SETTINGS can be RESET; RESET of an
//     unset one does nothing.
//   - GC_TTL = Interval("PT1H") is how long versions a newer one replaced
//     are kept (AS OF SYSTEM TIME reads inside it; storage/gcthreshold.go);
//     it must be positive; RESET returns to the server's --gc-ttl.
//     What the TTL does (expiry, hiding, erasing) is package sql/ttl's and
//     the sql engine's (sql/ttl_runner.go).
//   - READ_REPLICAS_SETTINGS is parsed as YDB parses it ("PER_AZ:n" or
//     "ANY_AZ:n", case-insensitive, n up to MaxReadReplicas); per-AZ lists
//     are refused as in YDB. On a cluster it places read replicas: the
//     shard groups holding the table's (and its indexes') rows get n
//     non-voting read replicas in every zone of the nodes' --locality
//     (PER_AZ), or n in all spread over the zones (ANY_AZ); a group
//     holding several tables' shards gets the most any of them asks for
//     (cluster/placement's readreplicas.go, sql.Engine.ReadReplicaSpans).
//     They serve stale reads (stale_read_only,
//     follower_read_timestamp(): sql/follower.go, cmd/pivotdb/follower.go)
//     and show in sys.partitions' read_replica_node_ids. RESET (or a lower
//     count) removes them. On one node there is nothing to place: the
//     setting is kept and shown only.
//   - NULLABLE_KEY_COLUMNS = ("a", "c") is PivotDB's, for pg_dump
//     (nullablekey.go): on a table created without a primary key it names
//     the columns that a later ADD PRIMARY KEY leaves nullable; it is not
//     a stored setting afterwards, pg_class.reloptions derives it from the
//     key columns that allow NULL. CREATE-only, not with a declared key.
//
// # Errors
//
// Every error is a *sqlerr.Error positioned (1-based, in the script) at the
// setting's name or value, with YDB's wording where YDB has one:
//
//	42601 syntax_error — the value has the wrong shape:
//	      "X value should be an integer" / "an identifier" / "a string literal",
//	      "Literal of Interval type is expected for TTL", "Invalid TTL settings"
//	      (no ON column), "Invalid unit: x", "X value cannot have an ON clause: only TTL
//	      names a column",
//	      "PARTITION_AT_KEYS value should be a list of keys. Example1: ...",
//	      "Empty key in partition at keys", "Identifier is not expected in partition at keys",
//	      "Only the first pivot may be the empty key ()" (RESHARD AT)
//	22023 invalid_parameter_value — out of range, unknown word or setting:
//	      "Can't set preferred partition size to 0. To disable auto partitioning by size use
//	      'SET AUTO_PARTITIONING_BY_SIZE DISABLED'", "Can't set min partition count to 0",
//	      "Can't set max partition count to 0", "Invalid partition count specified: 0",
//	      "Can't set min partition count (10) greater than max partition count (5)",
//	      "Unknown feature flag 'x' for auto partitioning by size", "Unknown table setting: x",
//	      "X specified multiple times", "Interval value cannot be negative",
//	      "Wrong format for read replicas settings '...'. ...", "X value N is out of range"
//	0A000 feature_not_supported:
//	      "UNIFORM_PARTITIONS alter is not supported", "PARTITION_AT_KEYS alter is not supported",
//	      "X reset is not supported" (every setting but TTL and GC_TTL),
//	      "Specifying read replicas count for each AZ in cluster is not supported yet"
//	42703 undefined_column: "Cannot enable TTL on unknown column: 'x'",
//	      "column \"x\" named in NULLABLE_KEY_COLUMNS does not exist"
//	42P16 invalid_table_definition — the setting does not fit the table or another setting:
//	      "Partition at keys has 2 key values while there are only 1 key columns",
//	      "Failed to convert value \"abc\" to a corresponding key column type" (detail: the column
//	      and its type), "Partition ranges are not sorted at index 1" (detail: the two boundaries),
//	      "Unsupported first key column type Utf8, only integer types are supported",
//	      "Uniform partitions and partitions at keys settings are mutually exclusive. Use either
//	      one of them.", "Unsupported column type Utf8 for TTL column 's'",
//	      "To enable TTL on date type column 'ts' the unit must be omitted",
//	      "To enable TTL on integral type column 'e' the unit should be specified",
//	      "NULLABLE_KEY_COLUMNS is only for a table created without a primary key",
//	      "column \"x\" is named in NULLABLE_KEY_COLUMNS but is not in the primary key" (ADD
//	      PRIMARY KEY)
//
// A malformed literal inside a value keeps the code of its type's parser
// (Interval("x") is 22007, as PostgreSQL reports bad interval input).
// Shapes the grammar cannot express at all (WITH (), a parameter as a
// value) are the parser's syntax errors.
//
// # Debugging
//
// The data-driven files in testdata/settings show a statement, the
// normalised settings, the effective values and the notices, or the
// error; add a case and run `go test ./sql/tablesettings/ -run TestSettings
// -rewrite`, then read the diff. Every case also checks the render → parse
// and JSON round trips. FormatKey prints a pivot in the tuple notation of
// design.md §6 with YQL literals.
package tablesettings
