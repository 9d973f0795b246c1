package tablesettings

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/pivotdb/pivotdb/sql/types"
)

// TestJSONFormat pins the stored format: catalogs written by one version
// are read by the next, so a change here needs a migration.
func TestJSONFormat(t *testing.T) {
	tr, fa := true, false
	n := func(i int64) *int64 { return &i }
	s := Settings{
		AutoPartitioningBySize: &fa, PartitionSizeMB: n(512), MinPartitionsCount: n(2), MaxPartitionsCount: n(64),
		AutoPartitioningByLoad: &tr,
		PartitionAtKeys: [][]types.Value{
			{types.NullValue},
			{types.NewUint64(math.MaxUint64), types.NewInt(types.Int8, -5), types.NewBool(true)},
			{types.NewUtf8("ü\"x"), types.NewString("\x00\xff"), types.NewDecimal(apd.New(150, -2))},
			{types.NewDate(19723), types.NewDatetime(1704067200), types.NewTimestamp(-1), types.NewInterval(5)},
			{types.NewDouble(0.1), types.NewFloat(2.5)},
		},
		TTL:            &TTL{Interval: 3600e6, Column: "ts", Unit: UnitSeconds},
		KeyBloomFilter: &tr,
		ReadReplicas:   &ReadReplicas{Mode: ReplicasPerAZ, Count: 1},
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"auto_partitioning_by_size":false,"auto_partitioning_partition_size_mb":512,` +
		`"auto_partitioning_min_partitions_count":2,"auto_partitioning_max_partitions_count":64,` +
		`"auto_partitioning_by_load":true,"partition_at_keys":[[null],` +
		`[{"t":"Uint64","v":"18446744073709551615"},{"t":"Int8","v":"-5"},{"t":"Bool","v":"1"}],` +
		`[{"t":"Utf8","v":"ü\"x"},{"t":"String","v":"AP8="},{"t":"Decimal","v":"1.50"}],` +
		`[{"t":"Date","v":"19723"},{"t":"Datetime","v":"1704067200"},{"t":"Timestamp","v":"-1"},{"t":"Interval","v":"5"}],` +
		`[{"t":"Double","v":"0.1"},{"t":"Float","v":"2.5"}]],` +
		`"ttl":{"interval_us":3600000000,"column":"ts","unit":"SECONDS"},"key_bloom_filter":true,` +
		`"read_replicas_settings":{"mode":"PER_AZ","count":1}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Settings
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(s) {
		t.Fatalf("round trip: %s", back.Render())
	}
	// A table descriptor holds Settings as a field.
	type descriptor struct {
		Name     string   `json:"name"`
		Settings Settings `json:"settings"`
	}
	b, err = json.Marshal(descriptor{Name: "t"})
	if err != nil || string(b) != `{"name":"t","settings":{}}` {
		t.Fatalf("empty settings: %s %v", b, err)
	}
}

func TestJSONCorrupt(t *testing.T) {
	for _, in := range []string{
		`{"partition_at_keys":[[{"t":"Nope","v":"1"}]]}`,
		`{"partition_at_keys":[[{"t":"Uint64","v":"-1"}]]}`,
		`{"partition_at_keys":[[{"t":"String","v":"%%"}]]}`,
		`{"partition_at_keys":[[{"t":"Decimal","v":"x"}]]}`,
		`{"uniform_partitions":"4"}`,
	} {
		var s Settings
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}
