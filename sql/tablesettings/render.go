package tablesettings

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Render prints the settings as the WITH clause of a CREATE TABLE that
// parser.Parse and ForCreate read back into equal Settings:
//
//	WITH (
//	    AUTO_PARTITIONING_BY_SIZE = ENABLED,
//	    UNIFORM_PARTITIONS = 4,
//	    TTL = Interval("PT1H") ON ts
//	)
//
// Only the settings that were given are printed, in the order of design.md
// §3.2's table, with canonical spellings; "" when there are none.
func (s Settings) Render() string {
	return s.render(s.UniformPartitions, s.PartitionAtKeys, s.MinPartitionsCount)
}

// RenderWithPivots is Render for SHOW CREATE TABLE: the table's current
// shard boundaries, pivots, replace UNIFORM_PARTITIONS and
// PARTITION_AT_KEYS, printed as PARTITION_AT_KEYS (nothing for a single
// shard), so that the statement recreates the table with the shards it has
// now. A leading empty pivot (the shard map's pivot 0) is skipped.
//
// AUTO_PARTITIONING_MIN_PARTITIONS_COUNT defaults to the initial partition
// count, which for the recreated table is the current shard count; when
// that differs from this table's default and the setting is not set, the
// default is printed explicitly so that the recreated table merges down to
// the same floor.
func (s Settings) RenderWithPivots(pivots [][]types.Value) string {
	return s.render(s.withPivots(pivots))
}

// withPivots are render's arguments for RenderWithPivots.
func (s Settings) withPivots(pivots [][]types.Value) (*int64, [][]types.Value, *int64) {
	if len(pivots) > 0 && len(pivots[0]) == 0 {
		pivots = pivots[1:]
	}
	minCount := s.MinPartitionsCount
	if minCount == nil && s.InitialPartitions() != int64(len(pivots))+1 {
		m := s.InitialPartitions()
		minCount = &m
	}
	return nil, pivots, minCount
}

// OptionsWithPivots lists the settings RenderWithPivots prints as
// PostgreSQL's reloptions: "name=value" items, names in lower case
// (pg_class.reloptions; pg_dump writes them back as WITH (name =
// 'value'), which ForCreate reads).
func (s Settings) OptionsWithPivots(pivots [][]types.Value) []string {
	var out []string
	for _, it := range s.items(s.withPivots(pivots)) {
		out = append(out, strings.ToLower(it[0])+"="+it[1])
	}
	return out
}

func (s Settings) render(uniform *int64, keys [][]types.Value, minCount *int64) string {
	var items []string
	for _, it := range s.items(uniform, keys, minCount) {
		items = append(items, it[0]+" = "+it[1])
	}
	if len(items) == 0 {
		return ""
	}
	return "WITH (\n    " + strings.Join(items, ",\n    ") + "\n)"
}

// items are the settings given, as name and value text, in order.
func (s Settings) items(uniform *int64, keys [][]types.Value, minCount *int64) [][2]string {
	var items [][2]string
	add := func(k kind, v string) { items = append(items, [2]string{k.String(), v}) }
	if s.AutoPartitioningBySize != nil {
		add(kBySize, flagText(*s.AutoPartitioningBySize))
	}
	if s.PartitionSizeMB != nil {
		add(kPartitionSize, strconv.FormatInt(*s.PartitionSizeMB, 10))
	}
	if minCount != nil {
		add(kMinPartitions, strconv.FormatInt(*minCount, 10))
	}
	if s.MaxPartitionsCount != nil {
		add(kMaxPartitions, strconv.FormatInt(*s.MaxPartitionsCount, 10))
	}
	if s.AutoPartitioningByLoad != nil {
		add(kByLoad, flagText(*s.AutoPartitioningByLoad))
	}
	if uniform != nil {
		add(kUniform, strconv.FormatInt(*uniform, 10))
	}
	if len(keys) > 0 {
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = FormatKey(k)
		}
		add(kPartitionAtKeys, "("+strings.Join(parts, ", ")+")")
	}
	if s.TTL != nil {
		add(kTTL, s.TTL.String())
	}
	if s.GCTTL != nil {
		add(kGCTTL, "Interval("+quoteString(FormatISOInterval(*s.GCTTL))+")")
	}
	if s.KeyBloomFilter != nil {
		add(kBloomFilter, flagText(*s.KeyBloomFilter))
	}
	if s.ReadReplicas != nil {
		add(kReadReplicas, quoteString(s.ReadReplicas.String()))
	}
	if len(s.DeferredNullableKey) > 0 {
		add(kNullableKey, formatNames(s.DeferredNullableKey))
	}
	return items
}

func flagText(b bool) string {
	if b {
		return "ENABLED"
	}
	return "DISABLED"
}

// String renders the TTL as the TTL setting takes it:
// Interval("PT1H") ON ts [AS SECONDS].
func (t TTL) String() string {
	s := "Interval(" + quoteString(FormatISOInterval(t.Interval)) + ") ON " + QuoteIdent(t.Column)
	if t.Unit != UnitNone {
		s += " AS " + t.Unit
	}
	return s
}

// FormatISOInterval prints microseconds as an ISO 8601 duration in the
// form YQL's Interval literal takes and types.ParseInterval reads back
// exactly: PT1H, P1DT2H30M, PT0.5S, -PT1S, PT0S.
func FormatISOInterval(micros int64) string {
	var b strings.Builder
	u := uint64(micros)
	if micros < 0 {
		b.WriteByte('-')
		u = uint64(-micros) // also right for math.MinInt64
	}
	const usPerDay, usPerHour, usPerMinute, usPerSecond = 86400e6, 3600e6, 60e6, 1e6
	days := u / usPerDay
	u %= usPerDay
	h, m := u/usPerHour, u/usPerMinute%60
	sec, frac := u/usPerSecond%60, u%usPerSecond
	b.WriteByte('P')
	if days > 0 {
		fmt.Fprintf(&b, "%dD", days)
	}
	if u == 0 && days > 0 {
		return b.String()
	}
	b.WriteByte('T')
	if h > 0 {
		fmt.Fprintf(&b, "%dH", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dM", m)
	}
	if sec > 0 || frac > 0 || u == 0 {
		fmt.Fprintf(&b, "%d", sec)
		if frac > 0 {
			b.WriteString("." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0"))
		}
		b.WriteByte('S')
	}
	return b.String()
}

// Literal prints a value as a YQL literal that the setting parser reads
// back to the same value for a key column of the value's type: integers
// and decimals as numbers, strings in double quotes with C-style escapes
// (bytes that are not printable UTF-8 as \xHH), Bool as TRUE / FALSE, NULL,
// and times as typed literals: Date("2024-01-01"),
// Datetime("2024-01-01T10:00:00Z"), Timestamp("2024-01-01T10:00:00.5Z").
func Literal(v types.Value) string {
	switch f := v.Family(); {
	case f == types.Null:
		return "NULL"
	case f == types.Bool:
		if v.Bool() {
			return "TRUE"
		}
		return "FALSE"
	case f.IsInteger():
		return v.Text()
	case f == types.Decimal:
		if d := v.Dec(); d != nil && d.Form != apd.Finite {
			return "Decimal(" + quoteString(v.Text()) + ")" // NaN, Infinity
		}
		return v.Text()
	case f.IsFloat():
		t := v.Text()
		if _, err := strconv.ParseFloat(t, 64); err != nil || strings.ContainsAny(t, "IN") {
			return f.String() + "(" + quoteString(t) + ")" // NaN, Infinity
		}
		return t
	case f == types.Utf8, f == types.String, f == types.Unknown:
		return quoteString(v.Str())
	case f == types.Json:
		return "Json(" + quoteString(v.Str()) + ")"
	case f == types.Date:
		return "Date(" + quoteString(types.FormatDate(v.Int())) + ")"
	case f == types.Datetime:
		return "Datetime(" + quoteString(isoTime(v.Int()*1e6)) + ")"
	case f == types.Timestamp:
		return "Timestamp(" + quoteString(isoTime(v.Int())) + ")"
	case f == types.TimestampTZ:
		return quoteString(types.FormatTimestampTZ(v.Int(), time.UTC)) + "::timestamptz"
	case f == types.Interval:
		return "Interval(" + quoteString(FormatISOInterval(v.Int())) + ")"
	}
	return quoteString(v.Text())
}

// isoTime prints microseconds since the epoch as YQL writes timestamps:
// 2024-01-01T10:00:00Z, with a fraction only when there is one.
func isoTime(micros int64) string {
	secs := micros / 1e6
	frac := micros % 1e6
	if frac < 0 {
		secs--
		frac += 1e6
	}
	s := time.Unix(secs, 0).UTC().Format("2006-01-02T15:04:05")
	if frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", frac), "0")
	}
	return s + "Z"
}

// quoteString writes s as a double-quoted YQL string literal. Printable
// UTF-8 stays as it is; quotes, backslashes, control characters and bytes
// that are not valid UTF-8 are escaped, so any byte string survives.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// QuoteIdent returns a column name as the parser reads it back: bare when
// it is a plain identifier, else in backticks (a backtick inside doubled).
func QuoteIdent(name string) string {
	plain := name != ""
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if plain && !reservedAfterOn[strings.ToLower(name)] {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// reservedAfterOn are words quoted even when plain, so that a column named
// like them never reads as part of the TTL syntax or as a literal.
var reservedAfterOn = map[string]bool{"as": true, "on": true, "null": true, "true": true, "false": true}
