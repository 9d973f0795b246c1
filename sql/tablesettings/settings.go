package tablesettings

import (
	"math"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Defaults and limits of the settings (design.md §3.2).
const (
	// DefaultPartitionSizeMB is AUTO_PARTITIONING_PARTITION_SIZE_MB when it
	// is not set: a shard splits when its data reaches 2 GiB (YDB).
	DefaultPartitionSizeMB = 2048
	// MaxPartitionSizeMB keeps PartitionSizeBytes within an int64.
	MaxPartitionSizeMB = math.MaxInt64 >> 20
	// MaxInitialPartitions bounds UNIFORM_PARTITIONS and the number of
	// shards PARTITION_AT_KEYS creates, so that a typo cannot make a CREATE
	// TABLE allocate billions of shards.
	MaxInitialPartitions = 100000
	// MaxReadReplicas bounds the count of READ_REPLICAS_SETTINGS.
	MaxReadReplicas = 1 << 16
)

// TTL units: "" for Date, Datetime and Timestamp columns, one of the others
// for Uint32, Uint64 and Int64 columns holding a time since the Unix epoch.
const (
	UnitNone         = ""
	UnitSeconds      = "SECONDS"
	UnitMilliseconds = "MILLISECONDS"
	UnitMicroseconds = "MICROSECONDS"
	UnitNanoseconds  = "NANOSECONDS"
)

// Read replica modes of READ_REPLICAS_SETTINGS.
const (
	ReplicasPerAZ = "PER_AZ"
	ReplicasAnyAZ = "ANY_AZ"
)

// Settings are a table's YQL settings: what CREATE TABLE ... WITH (...)
// gave and ALTER TABLE ... SET / RESET changed since. A nil pointer means
// the setting was never given and its default applies; read the effective
// values through the methods (BySize, PartitionSizeBytes, MinPartitions,
// ...), never by dereferencing.
//
// Settings are values: ForCreate and ApplyAlter return new ones and never
// modify what they were given, so a catalog snapshot may share them. They
// serialise to JSON (see MarshalJSON) for the catalog's table descriptor.
type Settings struct {
	// AutoPartitioningBySize is AUTO_PARTITIONING_BY_SIZE (default
	// ENABLED).
	AutoPartitioningBySize *bool
	// PartitionSizeMB is AUTO_PARTITIONING_PARTITION_SIZE_MB, >= 1
	// (default DefaultPartitionSizeMB).
	PartitionSizeMB *int64
	// MinPartitionsCount is AUTO_PARTITIONING_MIN_PARTITIONS_COUNT, >= 1
	// (default: the initial partition count, see InitialPartitions).
	MinPartitionsCount *int64
	// MaxPartitionsCount is AUTO_PARTITIONING_MAX_PARTITIONS_COUNT, >= 1
	// (default unbounded).
	MaxPartitionsCount *int64
	// AutoPartitioningByLoad is AUTO_PARTITIONING_BY_LOAD (default
	// DISABLED).
	AutoPartitioningByLoad *bool
	// UniformPartitions is UNIFORM_PARTITIONS: the table was created with
	// this many shards of equal ranges of the first key column. CREATE
	// only; never changes afterwards (the shard map does).
	UniformPartitions *int64
	// PartitionAtKeys is PARTITION_AT_KEYS: the pivots the table was
	// created with, each a prefix of the key columns, values of the key
	// columns' types, strictly ascending. CREATE only.
	PartitionAtKeys [][]types.Value
	// DeferredPivots is a PARTITION_AT_KEYS given as a '...' literal (as
	// pg_dump writes pg_class.reloptions back) to a table created without
	// a primary key: pg_dump adds the key after the rows (ALTER TABLE ...
	// ADD PRIMARY KEY), so the pivots are of that key, checked and
	// applied when it comes. The text of the value, or "".
	DeferredPivots string
	// DeferredNullableKey is NULLABLE_KEY_COLUMNS (nullablekey.go): the
	// columns of a table created without a primary key that stay nullable
	// when ALTER TABLE ... ADD PRIMARY KEY makes them key columns. CREATE
	// only; ADD PRIMARY KEY clears it.
	DeferredNullableKey []string
	// TTL is the time to live of rows (nil: rows never expire).
	TTL *TTL
	// GCTTL is GC_TTL in microseconds, > 0: how long versions that a
	// newer one replaced are kept (nil: the server's --gc-ttl).
	GCTTL *int64
	// KeyBloomFilter is KEY_BLOOM_FILTER (default DISABLED).
	KeyBloomFilter *bool
	// ReadReplicas is READ_REPLICAS_SETTINGS (nil: none). Stored and shown
	// only: a single-node server has no replicas.
	ReadReplicas *ReadReplicas
}

// TTL is `TTL = Interval("PT1H") ON column [AS unit]`: a row expires when
// column + Interval <= now (design.md §8).
type TTL struct {
	// Interval is the expiry delay in microseconds, >= 0.
	Interval int64 `json:"interval_us"`
	// Column is the column's name as the table spells it.
	Column string `json:"column"`
	// Unit is UnitNone for Date, Datetime and Timestamp columns, else the
	// unit the integral column counts in since the Unix epoch.
	Unit string `json:"unit,omitempty"`
}

// ReadReplicas is READ_REPLICAS_SETTINGS = "MODE:count".
type ReadReplicas struct {
	Mode  string `json:"mode"` // ReplicasPerAZ or ReplicasAnyAZ
	Count int    `json:"count"`
}

// TableInfo is what validating settings needs to know about a table: its
// columns and its primary key. Build it from the catalog's descriptor
// (Columns in order, PrimaryKey as KeyColumns); for a table without a
// PRIMARY KEY the hidden key column is part of both.
type TableInfo struct {
	Columns []ColumnInfo
	// KeyColumns lists indexes into Columns, in key order.
	KeyColumns []int
}

// ColumnInfo is one column of a TableInfo.
type ColumnInfo struct {
	Name string
	Type types.Type
	// Hidden columns (the generated key of a table without PRIMARY KEY)
	// cannot be named by a TTL.
	Hidden bool
}

// KeyTypes returns the types of the key columns in key order.
func (t TableInfo) KeyTypes() []types.Type {
	out := make([]types.Type, len(t.KeyColumns))
	for i, k := range t.KeyColumns {
		out[i] = t.Columns[k].Type
	}
	return out
}

// column finds a visible column by name, case-insensitively.
func (t TableInfo) column(name string) (ColumnInfo, bool) {
	for _, c := range t.Columns {
		if !c.Hidden && strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return ColumnInfo{}, false
}

// Notice is an informational message for the client, raised by a setting
// that is accepted but has no effect here. The session sends it as a
// NoticeResponse of severity NOTICE with this SQLSTATE.
type Notice struct {
	Code    string
	Message string
}

// BySize reports whether shards split automatically when they grow
// (AUTO_PARTITIONING_BY_SIZE, default ENABLED).
func (s Settings) BySize() bool { return s.AutoPartitioningBySize == nil || *s.AutoPartitioningBySize }

// ByLoad reports whether shards split automatically under load
// (AUTO_PARTITIONING_BY_LOAD, default DISABLED).
func (s Settings) ByLoad() bool { return s.AutoPartitioningByLoad != nil && *s.AutoPartitioningByLoad }

// BloomFilter reports whether the table keeps a key bloom filter
// (KEY_BLOOM_FILTER, default DISABLED).
func (s Settings) BloomFilter() bool { return s.KeyBloomFilter != nil && *s.KeyBloomFilter }

// GCTTLDuration returns GC_TTL; ok is false when the table has none (the
// server's --gc-ttl applies).
func (s Settings) GCTTLDuration() (ttl time.Duration, ok bool) {
	if s.GCTTL == nil {
		return 0, false
	}
	return time.Duration(*s.GCTTL) * time.Microsecond, true
}

// PartitionSizeMBOrDefault returns AUTO_PARTITIONING_PARTITION_SIZE_MB with its
// default.
func (s Settings) PartitionSizeMBOrDefault() int64 {
	if s.PartitionSizeMB != nil {
		return *s.PartitionSizeMB
	}
	return DefaultPartitionSizeMB
}

// PartitionSizeBytes is the data size at which a shard splits when
// splitting by size is enabled: AUTO_PARTITIONING_PARTITION_SIZE_MB MiB.
func (s Settings) PartitionSizeBytes() int64 { return s.PartitionSizeMBOrDefault() << 20 }

// InitialPartitions is the number of shards the table was created with:
// UNIFORM_PARTITIONS, or one more than the PARTITION_AT_KEYS pivots, or 1.
func (s Settings) InitialPartitions() int64 {
	switch {
	case s.UniformPartitions != nil:
		return *s.UniformPartitions
	case len(s.PartitionAtKeys) > 0:
		return int64(len(s.PartitionAtKeys)) + 1
	}
	return 1
}

// MinPartitions is the shard count below which automatic merges stop
// (AUTO_PARTITIONING_MIN_PARTITIONS_COUNT, default InitialPartitions).
func (s Settings) MinPartitions() int64 {
	if s.MinPartitionsCount != nil {
		return *s.MinPartitionsCount
	}
	return s.InitialPartitions()
}

// MaxPartitions is the shard count automatic splits do not exceed
// (AUTO_PARTITIONING_MAX_PARTITIONS_COUNT); math.MaxInt64 when unbounded.
func (s Settings) MaxPartitions() int64 {
	if s.MaxPartitionsCount != nil {
		return *s.MaxPartitionsCount
	}
	return math.MaxInt64
}

// InitialPivots returns the pivots the table's shards start with, without
// the empty pivot 0: UniformPivots over the first key column for
// UNIFORM_PARTITIONS, the PARTITION_AT_KEYS prefixes, or none. The slices
// are fresh; the values are shared (values are immutable).
func (s Settings) InitialPivots(t TableInfo) ([][]types.Value, error) {
	if s.UniformPartitions != nil {
		if len(t.KeyColumns) == 0 {
			return nil, errorf(codeTable, 0, "UNIFORM_PARTITIONS needs a key column")
		}
		vals, err := UniformPivots(t.Columns[t.KeyColumns[0]].Type, *s.UniformPartitions)
		if err != nil {
			return nil, err
		}
		out := make([][]types.Value, len(vals))
		for i, v := range vals {
			out[i] = []types.Value{v}
		}
		return out, nil
	}
	out := make([][]types.Value, len(s.PartitionAtKeys))
	for i, k := range s.PartitionAtKeys {
		out[i] = append([]types.Value(nil), k...)
	}
	return out, nil
}

// Equal reports whether two Settings hold the same settings. Key values
// compare by family and value (types.Compare), so it is exact for every key
// type.
func (s Settings) Equal(o Settings) bool {
	if !eqPtr(s.AutoPartitioningBySize, o.AutoPartitioningBySize) || !eqPtr(s.PartitionSizeMB, o.PartitionSizeMB) ||
		!eqPtr(s.MinPartitionsCount, o.MinPartitionsCount) || !eqPtr(s.MaxPartitionsCount, o.MaxPartitionsCount) ||
		!eqPtr(s.AutoPartitioningByLoad, o.AutoPartitioningByLoad) || !eqPtr(s.UniformPartitions, o.UniformPartitions) ||
		!eqPtr(s.TTL, o.TTL) || !eqPtr(s.GCTTL, o.GCTTL) || !eqPtr(s.KeyBloomFilter, o.KeyBloomFilter) || !eqPtr(s.ReadReplicas, o.ReadReplicas) {
		return false
	}
	if len(s.PartitionAtKeys) != len(o.PartitionAtKeys) {
		return false
	}
	for i := range s.PartitionAtKeys {
		a, b := s.PartitionAtKeys[i], o.PartitionAtKeys[i]
		if len(a) != len(b) {
			return false
		}
		for j := range a {
			if a[j].Family() != b[j].Family() || types.Compare(a[j], b[j]) != 0 {
				return false
			}
		}
	}
	return true
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// CompareKeys orders two key prefixes as the shard map does: column by
// column with NULL first (types.Compare), and a prefix before every longer
// key that starts with it, so () sorts first.
func CompareKeys(a, b []types.Value) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := types.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}
