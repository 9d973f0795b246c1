package tablesettings

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/types"
)

// TestLiteralRoundTrip renders random key values of every key type with
// Literal and reads them back through the parser and PARTITION_AT_KEYS,
// which must give the same value.
func TestLiteralRoundTrip(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	gens := map[string]func() types.Value{}
	for _, f := range integerFamilies {
		f := f
		gens[f.String()] = func() types.Value {
			u := rng.Uint64()
			switch rng.Intn(4) {
			case 0:
				u = 0
			case 1:
				u = math.MaxUint64
			}
			lo, hi := types.IntRange(f)
			if f.IsUnsigned() {
				if hi != math.MaxUint64 {
					u %= hi + 1
				}
				return types.NewUint(f, u)
			}
			span := uint64(int64(hi)-lo) + 1
			if span == 0 { // Int64
				return types.NewInt(f, int64(u))
			}
			return types.NewInt(f, lo+int64(u%span))
		}
	}
	gens["Bool"] = func() types.Value { return types.NewBool(rng.Intn(2) == 0) }
	gens["Utf8"] = func() types.Value { return types.NewUtf8(randUTF8(rng)) }
	gens["String"] = func() types.Value {
		b := make([]byte, rng.Intn(12))
		rng.Read(b)
		return types.NewString(string(b))
	}
	gens["Date"] = func() types.Value { return types.NewDate(rng.Int63n(2932896) - 719162) } // 0001..9999
	gens["Datetime"] = func() types.Value { return types.NewDatetime(rng.Int63n(253402300800+62135596800) - 62135596800) }
	gens["Timestamp"] = func() types.Value {
		return types.NewTimestamp(rng.Int63n(253402300800e6+62135596800e6) - 62135596800e6)
	}
	gens["Decimal(20,5)"] = func() types.Value {
		return types.NewDecimal(apd.New(rng.Int63n(1e15)-5e14, -5))
	}
	gens["Decimal"] = func() types.Value {
		return types.NewDecimal(apd.New(rng.Int63()-math.MaxInt64/2, int32(rng.Intn(40)-20)))
	}
	for typeName, gen := range gens {
		typ, err := types.ParseTypeName(typeName)
		if err != nil {
			t.Fatal(err)
		}
		ti := TableInfo{Columns: []ColumnInfo{{Name: "k", Type: typ}}, KeyColumns: []int{0}}
		for range 200 {
			v := gen()
			if typ.Precision > 0 {
				if v, err = types.Cast(v, typ); err != nil {
					t.Fatal(err)
				}
			}
			lit := Literal(v)
			stmts, err := parser.Parse("CREATE TABLE x (a Int32) WITH (PARTITION_AT_KEYS = ((" + lit + ")))")
			if err != nil {
				t.Fatalf("seed %d: %s literal %s does not parse: %v", seed, typeName, lit, err)
			}
			s, _, err := ForCreate(stmts[0].With, ti)
			if err != nil {
				t.Fatalf("seed %d: %s literal %s is refused: %v", seed, typeName, lit, err)
			}
			back := s.PartitionAtKeys[0][0]
			if back.Family() != v.Family() || types.Compare(back, v) != 0 || back.Str() != v.Str() {
				t.Fatalf("seed %d: %s %v renders as %s and reads back as %v", seed, typeName, v, lit, back)
			}
			if !utf8.ValidString(lit) {
				t.Fatalf("seed %d: %s literal %q is not valid UTF-8", seed, typeName, lit)
			}
		}
	}
}

// randUTF8 returns a short string of runes that need escaping and runes
// that do not.
func randUTF8(rng *rand.Rand) string {
	// No NUL: text holds none (22021, as in PostgreSQL).
	pool := []rune{'a', 'Z', '0', ' ', '"', '\'', '\\', '\n', '\t', '\r', 1, 0x1f, 0x7f, 'é', 'ß', '中', '😀', 0xfffd}
	var b strings.Builder
	for range rng.Intn(10) {
		b.WriteRune(pool[rng.Intn(len(pool))])
	}
	return b.String()
}

func TestFormatISOInterval(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	cases := []int64{0, 1, -1, 1e6, 60e6, 3600e6, 86400e6, 86400e6 + 1, -86400e6, 90061000001, 1<<53 - 1}
	for range 2000 {
		cases = append(cases, rng.Int63n(2e15)-1e15)
	}
	for _, m := range cases {
		s := FormatISOInterval(m)
		back, err := types.ParseInterval(s)
		if err != nil || back != m {
			t.Fatalf("seed %d: %d formats as %s and parses as %d (%v)", seed, m, s, back, err)
		}
	}
	for m, want := range map[int64]string{0: "PT0S", 3600e6: "PT1H", 86400e6: "P1D", 90061500000: "P1DT1H1M1.5S",
		-1e6: "-PT1S", 1: "PT0.000001S", 30 * 60e6: "PT30M"} {
		if got := FormatISOInterval(m); got != want {
			t.Errorf("FormatISOInterval(%d) = %s, want %s", m, got, want)
		}
	}
}

// TestTTLColumnNames renders TTL columns whose names need quoting and
// reads them back.
func TestTTLColumnNames(t *testing.T) {
	for _, name := range []string{"ts", "Ts_2", "expire at", "on", "AS", "null", "a`b", "2ts", "время"} {
		ti := TableInfo{Columns: []ColumnInfo{{Name: "k", Type: types.TypeUint64}, {Name: name, Type: types.TypeTimestamp}},
			KeyColumns: []int{0}}
		s := Settings{TTL: &TTL{Interval: 3600e6, Column: name}}
		r := s.Render()
		stmts, err := parser.Parse("CREATE TABLE x (a Int32) " + r)
		if err != nil {
			t.Fatalf("%q: %s does not parse: %v", name, r, err)
		}
		back, _, err := ForCreate(stmts[0].With, ti)
		if err != nil || !back.Equal(s) {
			t.Fatalf("%q: %s reads back as %+v (%v)", name, r, back.TTL, err)
		}
	}
}

func TestGettersDefaults(t *testing.T) {
	var s Settings
	got := fmt.Sprint(s.BySize(), s.ByLoad(), s.BloomFilter(), s.PartitionSizeBytes(), s.MinPartitions(),
		s.MaxPartitions() == math.MaxInt64, s.InitialPartitions())
	if want := "true false false 2147483648 1 true 1"; got != want {
		t.Errorf("defaults: %s, want %s", got, want)
	}
}
