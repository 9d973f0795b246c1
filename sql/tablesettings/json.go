package tablesettings

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cockroachdb/apd/v3"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Settings are stored in the catalog's table descriptor as JSON. The
// scalar settings map to fields named after the YQL settings; key values
// (types.Value has no exported fields) are written as {"t": family, "v":
// text} with text exact for every family: integers and the day/second/
// microsecond counts of times in decimal, decimals in apd's notation, floats
// in Go's shortest round-trip notation, String bytes in base64, Utf8 as is.
// NULL is null. Absent fields are nil settings.

type settingsJSON struct {
	BySize          *bool          `json:"auto_partitioning_by_size,omitempty"`
	PartitionSizeMB *int64         `json:"auto_partitioning_partition_size_mb,omitempty"`
	MinPartitions   *int64         `json:"auto_partitioning_min_partitions_count,omitempty"`
	MaxPartitions   *int64         `json:"auto_partitioning_max_partitions_count,omitempty"`
	ByLoad          *bool          `json:"auto_partitioning_by_load,omitempty"`
	Uniform         *int64         `json:"uniform_partitions,omitempty"`
	PartitionAtKeys [][]*valueJSON `json:"partition_at_keys,omitempty"`
	DeferredPivots  string         `json:"deferred_partition_at_keys,omitempty"`
	NullableKey     []string       `json:"nullable_key_columns,omitempty"`
	TTL             *TTL           `json:"ttl,omitempty"`
	GCTTL           *int64         `json:"gc_ttl_us,omitempty"`
	KeyBloomFilter  *bool          `json:"key_bloom_filter,omitempty"`
	ReadReplicas    *ReadReplicas  `json:"read_replicas_settings,omitempty"`
}

type valueJSON struct {
	T string `json:"t"`
	V string `json:"v"`
}

// MarshalJSON implements json.Marshaler.
func (s Settings) MarshalJSON() ([]byte, error) {
	j := settingsJSON{
		BySize: s.AutoPartitioningBySize, PartitionSizeMB: s.PartitionSizeMB,
		MinPartitions: s.MinPartitionsCount, MaxPartitions: s.MaxPartitionsCount,
		ByLoad: s.AutoPartitioningByLoad, Uniform: s.UniformPartitions,
		TTL: s.TTL, GCTTL: s.GCTTL, KeyBloomFilter: s.KeyBloomFilter, ReadReplicas: s.ReadReplicas,
		DeferredPivots: s.DeferredPivots, NullableKey: s.DeferredNullableKey,
	}
	for _, k := range s.PartitionAtKeys {
		jk := make([]*valueJSON, len(k))
		for i, v := range k {
			jv, err := encodeValue(v)
			if err != nil {
				return nil, err
			}
			jk[i] = jv
		}
		j.PartitionAtKeys = append(j.PartitionAtKeys, jk)
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Settings) UnmarshalJSON(b []byte) error {
	var j settingsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := Settings{
		AutoPartitioningBySize: j.BySize, PartitionSizeMB: j.PartitionSizeMB,
		MinPartitionsCount: j.MinPartitions, MaxPartitionsCount: j.MaxPartitions,
		AutoPartitioningByLoad: j.ByLoad, UniformPartitions: j.Uniform,
		TTL: j.TTL, GCTTL: j.GCTTL, KeyBloomFilter: j.KeyBloomFilter, ReadReplicas: j.ReadReplicas,
		DeferredPivots: j.DeferredPivots, DeferredNullableKey: j.NullableKey,
	}
	for _, jk := range j.PartitionAtKeys {
		k := make([]types.Value, len(jk))
		for i, jv := range jk {
			v, err := decodeValue(jv)
			if err != nil {
				return err
			}
			k[i] = v
		}
		out.PartitionAtKeys = append(out.PartitionAtKeys, k)
	}
	*s = out
	return nil
}

func encodeValue(v types.Value) (*valueJSON, error) {
	f := v.Family()
	text := ""
	switch {
	case f == types.Null:
		return nil, nil
	case f.IsUnsigned():
		text = strconv.FormatUint(v.Uint(), 10)
	case f.IsInteger(), f == types.Bool, f.IsTime(), f == types.Interval:
		text = strconv.FormatInt(v.Int(), 10)
	case f.IsFloat():
		text = strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case f == types.Decimal:
		text = v.Dec().String()
	case f == types.String:
		text = base64.StdEncoding.EncodeToString([]byte(v.Str()))
	case f == types.Utf8, f == types.Json:
		text = v.Str()
	default:
		return nil, fmt.Errorf("tablesettings: cannot store a key value of type %s", f)
	}
	return &valueJSON{T: f.String(), V: text}, nil
}

// families maps a family's name back to the family.
var families = func() map[string]types.Family {
	m := map[string]types.Family{}
	for f := types.Null; f <= types.Interval; f++ {
		m[f.String()] = f
	}
	return m
}()

func decodeValue(j *valueJSON) (types.Value, error) {
	if j == nil {
		return types.NullValue, nil
	}
	bad := func() (types.Value, error) {
		return types.Value{}, fmt.Errorf("tablesettings: corrupt stored key value %s %q", j.T, j.V)
	}
	f, ok := families[j.T]
	if !ok {
		return bad()
	}
	switch {
	case f.IsUnsigned():
		u, err := strconv.ParseUint(j.V, 10, 64)
		if err != nil {
			return bad()
		}
		return types.NewUint(f, u), nil
	case f.IsInteger(), f == types.Bool, f.IsTime(), f == types.Interval:
		i, err := strconv.ParseInt(j.V, 10, 64)
		if err != nil {
			return bad()
		}
		switch f {
		case types.Bool:
			return types.NewBool(i != 0), nil
		case types.Date:
			return types.NewDate(i), nil
		case types.Datetime:
			return types.NewDatetime(i), nil
		case types.Timestamp:
			return types.NewTimestamp(i), nil
		case types.TimestampTZ:
			return types.NewTimestampTZ(i), nil
		case types.Interval:
			return types.NewInterval(i), nil
		}
		return types.NewInt(f, i), nil
	case f.IsFloat():
		x, err := strconv.ParseFloat(j.V, 64)
		if err != nil {
			return bad()
		}
		if f == types.Float {
			return types.NewFloat(x), nil
		}
		return types.NewDouble(x), nil
	case f == types.Decimal:
		d, _, err := apd.NewFromString(j.V)
		if err != nil {
			return bad()
		}
		return types.NewDecimal(d), nil
	case f == types.String:
		b, err := base64.StdEncoding.DecodeString(j.V)
		if err != nil {
			return bad()
		}
		return types.NewString(string(b)), nil
	case f == types.Utf8:
		return types.NewUtf8(j.V), nil
	case f == types.Json:
		return types.NewJson(j.V), nil
	}
	return bad()
}
