package tablesettings

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// kind identifies a setting. The order is the order Render prints them in,
// which is the order of design.md §3.2's table.
type kind int

const (
	kBySize kind = iota
	kPartitionSize
	kMinPartitions
	kMaxPartitions
	kByLoad
	kUniform
	kPartitionAtKeys
	kTTL
	kGCTTL
	kBloomFilter
	kReadReplicas
	kNullableKey
	numKinds
)

// names are the settings' canonical spellings; names compare
// case-insensitively.
var names = [numKinds]string{
	kBySize:          "AUTO_PARTITIONING_BY_SIZE",
	kPartitionSize:   "AUTO_PARTITIONING_PARTITION_SIZE_MB",
	kMinPartitions:   "AUTO_PARTITIONING_MIN_PARTITIONS_COUNT",
	kMaxPartitions:   "AUTO_PARTITIONING_MAX_PARTITIONS_COUNT",
	kByLoad:          "AUTO_PARTITIONING_BY_LOAD",
	kUniform:         "UNIFORM_PARTITIONS",
	kPartitionAtKeys: "PARTITION_AT_KEYS",
	kTTL:             "TTL",
	kGCTTL:           "GC_TTL",
	kBloomFilter:     "KEY_BLOOM_FILTER",
	kReadReplicas:    "READ_REPLICAS_SETTINGS",
	kNullableKey:     "NULLABLE_KEY_COLUMNS",
}

func (k kind) String() string { return names[k] }

// lookup finds a setting by name, case-insensitively.
func lookup(name string) (kind, bool) {
	for k, n := range names {
		if strings.EqualFold(n, name) {
			return kind(k), true
		}
	}
	return 0, false
}

func unknownSetting(name string, pos int) error {
	return withHint(errorf(codeValue, pos, "Unknown table setting: %s", name),
		"The table settings are %s.", strings.Join(names[:], ", "))
}

// ttlHint says how TTL is written; several TTL errors carry it.
const ttlHint = `Write TTL = Interval("PT1H") ON column, adding AS SECONDS, MILLISECONDS, ` +
	`MICROSECONDS or NANOSECONDS for a Uint32, Uint64 or Int64 column.`

// ForCreate validates the settings of CREATE TABLE ... WITH (...) (the
// parser's Statement.With) against the new table and returns them. Every
// error is a *sqlerr.Error positioned at the offending setting; doc.go
// lists the messages and codes. The notices are for the client (see
// Notice).
func ForCreate(settings []parser.Setting, t TableInfo) (Settings, []Notice, error) {
	var s Settings
	pos := map[kind]int{}
	notices, err := applyList(&s, settings, t, pos, nil)
	if err != nil {
		return Settings{}, nil, err
	}
	if s.UniformPartitions != nil && len(s.PartitionAtKeys) > 0 {
		return Settings{}, nil, errorf(codeTable, max(pos[kUniform], pos[kPartitionAtKeys]),
			"Uniform partitions and partitions at keys settings are mutually exclusive. Use either one of them.")
	}
	if err := checkMinMax(s, pos); err != nil {
		return Settings{}, nil, err
	}
	return s, notices, nil
}

// ApplyAlter applies ALTER TABLE t SET (...) / SET k v / RESET (...) to a
// table's current settings and returns the new settings; cur is not
// modified, and on error nothing is applied. UNIFORM_PARTITIONS and
// PARTITION_AT_KEYS cannot be altered (the shard map is changed by
// resharding instead), and only TTL, GC_TTL and READ_REPLICAS_SETTINGS
// can be reset (design.md §3.2).
func ApplyAlter(cur Settings, stmt *parser.AlterSettings, t TableInfo) (Settings, []Notice, error) {
	if stmt == nil {
		return Settings{}, nil, errorf(sqlerr.InternalError, 0, "tablesettings: ApplyAlter without a statement")
	}
	s := cur
	pos := map[kind]int{}
	notices, err := applyList(&s, stmt.Set, t, pos, func(k kind, at int) error {
		if k == kUniform || k == kPartitionAtKeys {
			return alterUnsupported(k, at)
		}
		if k == kNullableKey {
			return withHint(errorf(codeUnsupported, at, "%s alter is not supported", k),
				"%s only applies to CREATE TABLE; use ALTER TABLE ... ALTER COLUMN ... SET/DROP NOT NULL.", k)
		}
		return nil
	})
	if err != nil {
		return Settings{}, nil, err
	}
	for _, r := range stmt.Reset {
		k, ok := lookup(r.Name)
		if !ok {
			return Settings{}, nil, unknownSetting(r.Name, r.Pos)
		}
		if _, dup := pos[k]; dup {
			return Settings{}, nil, errorf(codeValue, r.Pos, "%s specified multiple times", k)
		}
		pos[k] = r.Pos
		switch k {
		case kUniform, kPartitionAtKeys:
			return Settings{}, nil, alterUnsupported(k, r.Pos)
		case kNullableKey:
			return Settings{}, nil, errorf(codeUnsupported, r.Pos, "%s reset is not supported", k)
		case kTTL:
			s.TTL = nil
		case kGCTTL:
			s.GCTTL = nil
		case kReadReplicas:
			// The cluster's placement removes the read replicas.
			s.ReadReplicas = nil
		default:
			return Settings{}, nil, withHint(errorf(codeUnsupported, r.Pos, "%s reset is not supported", k),
				"Set it to the value you want with ALTER TABLE ... SET (%s = ...).", k)
		}
	}
	if err := checkMinMax(s, pos); err != nil {
		return Settings{}, nil, err
	}
	return s, notices, nil
}

func alterUnsupported(k kind, pos int) error {
	return withHint(errorf(codeUnsupported, pos, "%s alter is not supported", k),
		"%s only applies to CREATE TABLE; reshard the table to change its partitions.", k)
}

// set parses one setting into s.
func set(s *Settings, k kind, st parser.Setting, t TableInfo) ([]Notice, error) {
	v := st.Value
	if k != kTTL && v.On != "" {
		// The parser reads "ON col [AS unit]" after any value so that TTL
		// can name its errors; no other setting has such a clause.
		return nil, errorf(codeSyntax, v.Pos, "%s value cannot have an ON clause: only TTL names a column", k)
	}
	switch k {
	case kBySize:
		b, err := flag(k, v, "auto partitioning by size")
		if err != nil {
			return nil, err
		}
		s.AutoPartitioningBySize = &b
	case kByLoad:
		b, err := flag(k, v, "auto partitioning by load")
		if err != nil {
			return nil, err
		}
		s.AutoPartitioningByLoad = &b
	case kBloomFilter:
		b, err := flag(k, v, "key bloom filter")
		if err != nil {
			return nil, err
		}
		s.KeyBloomFilter = &b
	case kPartitionSize:
		n, err := integer(k, v)
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, errorf(codeValue, st.Pos, "Can't set preferred partition size to %d. "+
				"To disable auto partitioning by size use 'SET AUTO_PARTITIONING_BY_SIZE DISABLED'", n)
		}
		if n > MaxPartitionSizeMB {
			return nil, withHint(errorf(codeValue, v.Pos, "%s value %d is out of range", k, n),
				"The largest partition size is %d MB.", int64(MaxPartitionSizeMB))
		}
		s.PartitionSizeMB = &n
	case kMinPartitions, kMaxPartitions:
		n, err := integer(k, v)
		if err != nil {
			return nil, err
		}
		which := "min"
		if k == kMaxPartitions {
			which = "max"
		}
		if n < 1 {
			return nil, errorf(codeValue, st.Pos, "Can't set %s partition count to %d", which, n)
		}
		if k == kMinPartitions {
			s.MinPartitionsCount = &n
		} else {
			s.MaxPartitionsCount = &n
		}
	case kUniform:
		n, err := integer(k, v)
		if err != nil {
			return nil, err
		}
		if len(t.KeyColumns) == 0 {
			return nil, errorf(codeTable, st.Pos, "UNIFORM_PARTITIONS needs a key column")
		}
		kt := t.Columns[t.KeyColumns[0]].Type
		if err := checkUniform(kt, n); err != nil {
			return nil, sqlerr.WithPosition(err, v.Pos)
		}
		var notices []Notice
		if r, ok := rangeSize(kt.Family); ok && n > r {
			// One shard per value is as far as the type can be cut; keeping
			// the count the table really gets keeps MinPartitions right.
			notices = append(notices, Notice{Code: sqlerr.SuccessfulCompletion, Message: fmt.Sprintf(
				"UNIFORM_PARTITIONS = %d exceeds the %d values of the first key column's type %s; the table gets %d partitions",
				n, r, kt, r)})
			n = r
		}
		s.UniformPartitions = &n
		return notices, nil
	case kPartitionAtKeys:
		keys, err := boundaries(v, t)
		if err != nil {
			return nil, err
		}
		s.PartitionAtKeys = keys
	case kTTL:
		ttl, err := parseTTL(v, t)
		if err != nil {
			return nil, err
		}
		s.TTL = ttl
	case kGCTTL:
		micros, err := parseGCTTL(v)
		if err != nil {
			return nil, err
		}
		s.GCTTL = &micros
	case kNullableKey:
		names, err := nullableKey(v, st.Pos, t)
		if err != nil {
			return nil, err
		}
		s.DeferredNullableKey = names
	case kReadReplicas:
		rr, err := readReplicas(v)
		if err != nil {
			return nil, err
		}
		// The replicas are placed by cluster/placement (readreplicas.go)
		// and serve stale reads; on one node there is nothing to place.
		s.ReadReplicas = rr
	}
	return nil, nil
}

// flag parses ENABLED / DISABLED (any case). what names the flag in YDB's
// message for an unknown word.
func flag(k kind, v parser.Value, what string) (bool, error) {
	if v.Kind != parser.ValueIdent {
		return false, withHint(errorf(codeSyntax, v.Pos, "%s value should be an identifier", k),
			"Use ENABLED or DISABLED.")
	}
	switch strings.ToLower(v.Str) {
	case "enabled":
		return true, nil
	case "disabled":
		return false, nil
	}
	return false, withHint(errorf(codeValue, v.Pos, "Unknown feature flag '%s' for %s", strings.ToLower(v.Str), what),
		"Use ENABLED or DISABLED.")
}

// integer parses an integer setting value. Negative values and zero are
// returned for the caller to reject with the setting's own message.
func integer(k kind, v parser.Value) (int64, error) {
	if v.Kind != parser.ValueNumber {
		return 0, errorf(codeSyntax, v.Pos, "%s value should be an integer", k)
	}
	b, ok := parseIntLiteral(v.Str)
	if !ok {
		return 0, errorf(codeSyntax, v.Pos, "%s value should be an integer", k)
	}
	if !b.IsInt64() {
		return 0, errorf(codeValue, v.Pos, "%s value %s is out of range", k, v.Str)
	}
	return b.Int64(), nil
}

// parseIntLiteral reads an integer literal as the lexer passes it on: an
// optional sign, then decimal digits or a 0x / 0o / 0b prefixed number. A
// leading zero does not make a decimal number octal.
func parseIntLiteral(s string) (*big.Int, bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	base := 10
	if len(s) > 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 10 {
			s = s[2:]
		}
	}
	if s == "" || strings.ContainsAny(s, "+-_") {
		return nil, false
	}
	b, ok := new(big.Int).SetString(s, base)
	if !ok {
		return nil, false
	}
	if neg {
		b.Neg(b)
	}
	return b, true
}

// checkMinMax checks that the effective minimum partition count does not
// exceed an explicit maximum. pos holds the positions of the settings of
// the statement being applied; the error points at the later of the two
// that the statement gave.
func checkMinMax(s Settings, pos map[kind]int) error {
	if s.MaxPartitionsCount == nil || s.MinPartitions() <= *s.MaxPartitionsCount {
		return nil
	}
	e := errorf(codeValue, max(pos[kMinPartitions], pos[kMaxPartitions]),
		"Can't set min partition count (%d) greater than max partition count (%d)",
		s.MinPartitions(), *s.MaxPartitionsCount)
	if s.MinPartitionsCount == nil {
		withDetail(e, "AUTO_PARTITIONING_MIN_PARTITIONS_COUNT is not set and defaults to the initial partition count, %d.",
			s.InitialPartitions())
		withHint(e, "Set AUTO_PARTITIONING_MIN_PARTITIONS_COUNT explicitly.")
	}
	return e
}

// gcTTLHint says how GC_TTL is written.
const gcTTLHint = `Write GC_TTL = Interval("PT1H") (or INTERVAL '1 hour'): how long replaced row versions are kept for AS OF SYSTEM TIME reads.`

// parseGCTTL parses GC_TTL's value, a positive Interval literal, into
// microseconds.
func parseGCTTL(v parser.Value) (int64, error) {
	notInterval := withHint(errorf(codeSyntax, v.Pos, "Literal of Interval type is expected for GC_TTL"), gcTTLHint)
	if v.Kind != parser.ValueTyped {
		return 0, notInterval
	}
	if lt, err := types.ParseTypeName(v.Type); err != nil || lt.Family != types.Interval {
		return 0, notInterval
	}
	micros, err := types.ParseInterval(v.Str)
	if err != nil {
		return 0, sqlerr.WithPosition(err, v.Pos)
	}
	if micros <= 0 {
		return 0, withHint(errorf(codeValue, v.Pos, "GC_TTL must be positive"), gcTTLHint)
	}
	return micros, nil
}

// parseTTL parses `Interval("PT1H") ON column [AS unit]` and checks it
// against the table (design.md §8).
func parseTTL(v parser.Value, t TableInfo) (*TTL, error) {
	notInterval := withHint(errorf(codeSyntax, v.Pos, "Literal of Interval type is expected for TTL"), ttlHint)
	if v.Kind != parser.ValueTyped {
		return nil, notInterval
	}
	if lt, err := types.ParseTypeName(v.Type); err != nil || lt.Family != types.Interval {
		return nil, notInterval
	}
	if v.On == "" {
		return nil, withHint(withDetail(errorf(codeSyntax, v.Pos, "Invalid TTL settings"),
			"The column after ON is missing."), ttlHint)
	}
	micros, err := types.ParseInterval(v.Str)
	if err != nil {
		return nil, sqlerr.WithPosition(err, v.Pos)
	}
	if micros < 0 {
		return nil, errorf(codeValue, v.Pos, "Interval value cannot be negative")
	}
	unit := strings.ToUpper(v.Unit)
	switch unit {
	case UnitNone, UnitSeconds, UnitMilliseconds, UnitMicroseconds, UnitNanoseconds:
	default:
		return nil, withHint(errorf(codeSyntax, v.Pos, "Invalid unit: %s", strings.ToLower(v.Unit)),
			"The units are SECONDS, MILLISECONDS, MICROSECONDS and NANOSECONDS.")
	}
	col, ok := t.column(v.On)
	if !ok {
		return nil, errorf(codeColumn, v.Pos, "Cannot enable TTL on unknown column: '%s'", v.On)
	}
	switch f := col.Type.Family; {
	case f.IsTime():
		if unit != UnitNone {
			return nil, withHint(errorf(codeTable, v.Pos,
				"To enable TTL on date type column '%s' the unit must be omitted", col.Name),
				"A %s column holds a point in time; AS %s is only for integral columns.", col.Type, unit)
		}
	case f == types.Uint32 || f == types.Uint64 || f == types.Int64:
		if unit == UnitNone {
			return nil, withHint(errorf(codeTable, v.Pos,
				"To enable TTL on integral type column '%s' the unit should be specified", col.Name),
				"Add AS SECONDS, MILLISECONDS, MICROSECONDS or NANOSECONDS: the unit the column counts in since the Unix epoch.")
		}
	default:
		return nil, withHint(errorf(codeTable, v.Pos, "Unsupported column type %s for TTL column '%s'", col.Type, col.Name),
			"TTL works on Date, Datetime and Timestamp columns, and on Uint32, Uint64 and Int64 columns with a unit.")
	}
	return &TTL{Interval: micros, Column: col.Name, Unit: unit}, nil
}

// readReplicas parses READ_REPLICAS_SETTINGS as YDB does: "PER_AZ:n" or
// "ANY_AZ:n", case-insensitive, spaces around the parts allowed.
func readReplicas(v parser.Value) (*ReadReplicas, error) {
	if v.Kind != parser.ValueString {
		return nil, errorf(codeSyntax, v.Pos, "READ_REPLICAS_SETTINGS value should be a string literal")
	}
	wrong := errorf(codeValue, v.Pos, "Wrong format for read replicas settings '%s'. It should be one of: "+
		"1) 'PER_AZ:<read_replicas_count>' to set equal read replicas count for every AZ; "+
		"2) 'ANY_AZ:<read_replicas_count>' to set total read replicas count between all AZs", v.Str)
	var azs []string
	for _, az := range strings.Split(strings.ToLower(v.Str), ",") {
		if az != "" {
			azs = append(azs, az)
		}
	}
	if len(azs) == 0 {
		return nil, wrong
	}
	var out *ReadReplicas
	for _, az := range azs {
		var parts []string
		for _, p := range strings.Split(az, ":") {
			if p != "" {
				parts = append(parts, p)
			}
		}
		if len(parts) != 2 {
			return nil, wrong
		}
		name, count := strings.Fields(parts[0]), strings.Fields(parts[1])
		if len(name) != 1 || len(count) != 1 {
			return nil, wrong
		}
		n, err := strconv.ParseUint(count[0], 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return nil, errorf(codeValue, v.Pos, "Read replicas count %s is out of range", count[0])
			}
			return nil, wrong
		}
		if n > MaxReadReplicas {
			return nil, withHint(errorf(codeValue, v.Pos, "Read replicas count %d is out of range", n),
				"The largest count is %d.", MaxReadReplicas)
		}
		switch name[0] {
		case "per_az", "any_az":
			if len(azs) != 1 {
				return nil, wrong
			}
			out = &ReadReplicas{Mode: strings.ToUpper(name[0]), Count: int(n)}
		default:
			return nil, errorf(codeUnsupported, v.Pos,
				"Specifying read replicas count for each AZ in cluster is not supported yet")
		}
	}
	return out, nil
}

// String renders the setting's value as READ_REPLICAS_SETTINGS takes it.
func (r ReadReplicas) String() string { return fmt.Sprintf("%s:%d", r.Mode, r.Count) }

// applyList sets each setting of list on s, recording where each was given
// in pos; a setting named twice or unknown is an error, and allowed, when
// set, may refuse a setting (ALTER cannot change UNIFORM_PARTITIONS).
func applyList(s *Settings, list []parser.Setting, t TableInfo, pos map[kind]int, allowed func(k kind, at int) error) ([]Notice, error) {
	var notices []Notice
	for _, st := range list {
		k, ok := lookup(st.Name)
		if !ok {
			n, heap, err := heapParameter(st)
			if err != nil {
				return nil, err
			}
			if heap {
				notices = append(notices, n)
				continue
			}
			return nil, unknownSetting(st.Name, st.Pos)
		}
		if allowed != nil {
			if err := allowed(k, st.Pos); err != nil {
				return nil, err
			}
		}
		if _, dup := pos[k]; dup {
			return nil, errorf(codeValue, st.Pos, "%s specified multiple times", k)
		}
		pos[k] = st.Pos
		if k == kPartitionAtKeys && st.Value.Kind == parser.ValueString && st.Value.SingleQuoted && hiddenKey(t) {
			// pg_dump's form on a table whose key comes later (see
			// Settings.DeferredPivots).
			s.DeferredPivots = st.Value.Str
			continue
		}
		if st.Value.Kind == parser.ValueString && st.Value.SingleQuoted && k != kReadReplicas {
			// A value given as a '...' literal: its content is the value.
			// pg_dump writes pg_class.reloptions back that way
			// (uniform_partitions = '4'); YDB's "..." strings stay
			// strings, which these settings refuse.
			v, err := parser.ParseSettingValue(st.Value.Str)
			if err != nil {
				e := *sqlerr.As(err)
				e.Position = st.Value.Pos
				return nil, &e
			}
			v.Pos = st.Value.Pos
			st.Value = v
		}
		n, err := set(s, k, st, t)
		if err != nil {
			return nil, err
		}
		notices = append(notices, n...)
	}
	return notices, nil
}

// hiddenKey reports whether the table's key is the generated one of a
// table created without a primary key.
func hiddenKey(t TableInfo) bool {
	return len(t.KeyColumns) == 1 && t.KeyColumns[0] < len(t.Columns) && t.Columns[t.KeyColumns[0]].Hidden
}

// DeferredBoundaries parses and checks the deferred PARTITION_AT_KEYS
// text against t, the table with its primary key.
func DeferredBoundaries(text string, t TableInfo) ([][]types.Value, error) {
	v, err := parser.ParseSettingValue(text)
	if err != nil {
		return nil, err
	}
	return boundaries(v, t)
}
