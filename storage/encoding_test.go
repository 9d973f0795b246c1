package storage

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// The randomized tests below model column values as datums and check the
// encoding against compareDatums, an oracle written from the SQL semantics
// alone (big.Rat for decimals, PostgreSQL's NaN rule for floats), never from
// the encoding.

type kind uint8

const (
	kindBool kind = iota
	kindInt64
	kindUint64
	kindFloat64
	kindBytes
	kindDecimal
	numKinds
)

func (k kind) String() string {
	return [...]string{"Bool", "Int64", "Uint64", "Float64", "Bytes", "Decimal"}[k]
}

// datum is one column value: NULL, the <Max> marker, or a value of its kind.
type datum struct {
	kind      kind
	null, max bool
	b         bool
	i         int64
	u         uint64
	f         float64
	s         []byte
	d         Decimal
}

func (d datum) String() string {
	switch {
	case d.null:
		return "NULL"
	case d.max:
		return "<Max>"
	}
	switch d.kind {
	case kindBool:
		return fmt.Sprint(d.b)
	case kindInt64:
		return fmt.Sprint(d.i)
	case kindUint64:
		return fmt.Sprint(d.u)
	case kindFloat64:
		return fmt.Sprintf("%g(0x%016x)", d.f, math.Float64bits(d.f))
	case kindBytes:
		return fmt.Sprintf("%q", d.s)
	default:
		return d.d.String()
	}
}

func (d datum) encode(buf []byte) []byte {
	switch {
	case d.null:
		return AppendNull(buf)
	case d.max:
		return AppendMax(buf)
	}
	switch d.kind {
	case kindBool:
		return AppendBool(buf, d.b)
	case kindInt64:
		return AppendInt64(buf, d.i)
	case kindUint64:
		return AppendUint64(buf, d.u)
	case kindFloat64:
		return AppendFloat64(buf, d.f)
	case kindBytes:
		return AppendBytes(buf, d.s)
	default:
		return AppendDecimalValue(buf, d.d)
	}
}

func decodeDatum(k kind, b []byte) (d datum, rest []byte, err error) {
	d.kind = k
	switch {
	case PeekNull(b):
		d.null = true
		rest, err = DecodeNull(b)
		return d, rest, err
	case len(b) > 0 && Tag(b[0]) == TagMax:
		d.max = true
		rest, err = DecodeMax(b)
		return d, rest, err
	}
	switch k {
	case kindBool:
		d.b, rest, err = DecodeBool(b)
	case kindInt64:
		d.i, rest, err = DecodeInt64(b)
	case kindUint64:
		d.u, rest, err = DecodeUint64(b)
	case kindFloat64:
		d.f, rest, err = DecodeFloat64(b)
	case kindBytes:
		d.s, rest, err = DecodeBytes(b)
	default:
		d.d, rest, err = DecodeDecimal(b)
	}
	return d, rest, err
}

// compareDatums is the oracle: the SQL order of two datums of one kind, with
// NULL first and <Max> last.
func compareDatums(a, b datum) int {
	rank := func(d datum) int {
		switch {
		case d.null:
			return 0
		case d.max:
			return 2
		}
		return 1
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 || rank(a) != 1 {
		return c
	}
	switch a.kind {
	case kindBool:
		return cmp.Compare(b2i(a.b), b2i(b.b))
	case kindInt64:
		return cmp.Compare(a.i, b.i)
	case kindUint64:
		return cmp.Compare(a.u, b.u)
	case kindFloat64:
		// PostgreSQL: NaN equals NaN and sorts after every number.
		if an, bn := math.IsNaN(a.f), math.IsNaN(b.f); an || bn {
			return cmp.Compare(b2i(an), b2i(bn))
		}
		return cmp.Compare(a.f, b.f) // -0 == +0.
	case kindBytes:
		return bytes.Compare(a.s, b.s)
	default:
		return compareDecimals(a.d, b.d)
	}
}

func compareDecimals(a, b Decimal) int {
	rank := func(d Decimal) int {
		switch d.Form {
		case DecimalInfinite:
			if d.Neg {
				return 0
			}
			return 2
		case DecimalNaN:
			return 3
		}
		return 1
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 || rank(a) != 1 {
		return c
	}
	return decimalRat(a).Cmp(decimalRat(b))
}

// decimalRat is the exact value of a finite decimal. It is only used with
// exponents small enough for 10^|exponent| to be computed.
func decimalRat(d Decimal) *big.Rat {
	c, ok := new(big.Int).SetString("0"+d.Coeff, 10)
	if !ok {
		panic("bad coefficient " + d.Coeff)
	}
	if d.Neg {
		c.Neg(c)
	}
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(d.Exponent, -d.Exponent))), nil)
	if d.Exponent >= 0 {
		return new(big.Rat).SetInt(c.Mul(c, scale))
	}
	return new(big.Rat).SetFrac(c, scale)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sign(c int) int { return cmp.Compare(c, 0) }

// Generators. They favour the values where encodings go wrong: extremes,
// zeros, NaNs, strings with 00 and FF bytes, prefixes of one another, and
// decimals that are equal but written differently.

func randDatum(r *rand.Rand, k kind) datum {
	if r.IntN(10) == 0 {
		return datum{kind: k, null: true}
	}
	return randValue(r, k)
}

func randValue(r *rand.Rand, k kind) datum {
	d := datum{kind: k}
	switch k {
	case kindBool:
		d.b = r.IntN(2) == 1
	case kindInt64:
		switch r.IntN(3) {
		case 0:
			d.i = pick(r, []int64{math.MinInt64, math.MinInt64 + 1, -256, -255, -1, 0, 1, 255, 256, math.MaxInt64 - 1, math.MaxInt64})
		case 1:
			d.i = int64(r.Uint64())
		default:
			d.i = r.Int64N(512) - 256
		}
	case kindUint64:
		switch r.IntN(3) {
		case 0:
			d.u = pick(r, []uint64{0, 1, 255, 256, 1<<63 - 1, 1 << 63, math.MaxUint64 - 1, math.MaxUint64})
		case 1:
			d.u = r.Uint64()
		default:
			d.u = r.Uint64N(512)
		}
	case kindFloat64:
		switch r.IntN(4) {
		case 0:
			d.f = pick(r, []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(),
				math.Float64frombits(0xFFF8000000000001), // A negative NaN with a payload.
				math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64})
		case 1:
			d.f = math.Float64frombits(r.Uint64())
		case 2:
			d.f = r.NormFloat64() * 1e3
		default:
			d.f = float64(r.IntN(9) - 4)
		}
	case kindBytes:
		d.s = randBytes(r, r.IntN(7))
	default:
		d.d = randDecimal(r)
	}
	return d
}

func pick[T any](r *rand.Rand, vs []T) T { return vs[r.IntN(len(vs))] }

func randBytes(r *rand.Rand, n int) []byte {
	s := make([]byte, n)
	for i := range s {
		if r.IntN(4) == 0 {
			s[i] = byte(r.Uint32())
		} else {
			s[i] = pick(r, []byte{0x00, 0x00, 0x01, 0x02, 0xFE, 0xFF, 'a', 'b'})
		}
	}
	return s
}

func randDecimal(r *rand.Rand) Decimal {
	switch r.IntN(12) {
	case 0:
		return Decimal{Form: DecimalNaN}
	case 1:
		return Decimal{Form: DecimalInfinite, Neg: r.IntN(2) == 1}
	}
	var sb strings.Builder
	sb.WriteString(strings.Repeat("0", r.IntN(3)*r.IntN(2))) // Sometimes leading zeros.
	for range r.IntN(14) {
		sb.WriteByte(byte('0' + r.IntN(10)))
	}
	sb.WriteString(strings.Repeat("0", r.IntN(4)*r.IntN(2))) // Sometimes trailing zeros.
	return Decimal{Neg: r.IntN(2) == 1, Coeff: sb.String(), Exponent: int32(r.IntN(41) - 20)}
}

// nearby returns a value close to a, often equal to it or adjacent in order:
// random pairs alone almost never exercise the interesting comparisons.
func nearby(r *rand.Rand, a datum) datum {
	if a.null || a.max {
		return randValue(r, a.kind)
	}
	b := a
	switch a.kind {
	case kindInt64:
		b.i += int64(r.IntN(3) - 1) // Wraps at the extremes, which is fine.
	case kindUint64:
		b.u += uint64(r.IntN(3)) - 1
	case kindFloat64:
		switch r.IntN(3) {
		case 0:
			b.f = math.Nextafter(a.f, math.Inf(1))
		case 1:
			b.f = -a.f
		}
	case kindBytes:
		switch r.IntN(4) {
		case 0:
			b.s = a.s[:r.IntN(len(a.s)+1)] // A prefix.
		case 1:
			b.s = append(bytes.Clone(a.s), randBytes(r, 1+r.IntN(2))...) // An extension.
		case 2:
			if len(a.s) > 0 {
				b.s = bytes.Clone(a.s)
				b.s[len(b.s)-1] += byte(r.IntN(3)) - 1
			}
		}
	case kindDecimal:
		if a.d.Form != DecimalFinite {
			break
		}
		switch r.IntN(4) {
		case 0: // The same value with more trailing zeros.
			k := r.IntN(4)
			b.d.Coeff = a.d.Coeff + strings.Repeat("0", k)
			b.d.Exponent = a.d.Exponent - int32(k)
		case 1: // Leading zeros.
			b.d.Coeff = "00" + a.d.Coeff
		case 2: // A neighbour in the last digit or an extension.
			b.d.Coeff = a.d.Coeff + string(rune('0'+r.IntN(10)))
			b.d.Exponent = a.d.Exponent - 1
		default:
			b.d.Neg = !a.d.Neg
		}
	}
	return b
}

// checkRoundTrip decodes enc(a) followed by junk and checks that it gets a
// back, consumes exactly enc(a), and that the decoded value re-encodes to the
// same bytes (decoders accept only canonical encodings).
func checkRoundTrip(t *testing.T, a datum, junk []byte) {
	t.Helper()
	enc := a.encode(nil)
	got, rest, err := decodeDatum(a.kind, append(bytes.Clone(enc), junk...))
	if err != nil {
		t.Fatalf("decode %s (%x): %v", a, enc, err)
	}
	if !bytes.Equal(rest, junk) {
		t.Fatalf("decode %s (%x): rest %x, want %x", a, enc, rest, junk)
	}
	if compareDatums(a, got) != 0 {
		t.Fatalf("decode %s (%x) = %s", a, enc, got)
	}
	if re := got.encode(nil); !bytes.Equal(re, enc) {
		t.Fatalf("%s re-encodes to %x, was %x", got, re, enc)
	}
}

func TestEncodingOrderAndRoundTrip(t *testing.T) {
	const iterations = 20000
	for k := range numKinds {
		t.Run(k.String(), func(t *testing.T) {
			r := newRand(t)
			for range iterations {
				a := randDatum(r, k)
				b := randDatum(r, k)
				if r.IntN(2) == 0 {
					b = nearby(r, a)
				}
				ea, eb := a.encode(nil), b.encode(nil)
				if got, want := sign(bytes.Compare(ea, eb)), compareDatums(a, b); got != want {
					t.Fatalf("%s vs %s: bytes.Compare(%x, %x) = %d, SQL order %d", a, b, ea, eb, got, want)
				}
				junk := randBytes(r, r.IntN(3))
				checkRoundTrip(t, a, junk)
				checkRoundTrip(t, b, junk)

				// <Max> sorts after the value and after anything that
				// follows it in a longer key; NULL before any value.
				withSuffix := append(ea, junk...)
				if bytes.Compare(AppendMax(nil), withSuffix) <= 0 {
					t.Fatalf("<Max> does not sort after %s (%x)", a, withSuffix)
				}
				if !a.null && bytes.Compare(AppendNull(nil), ea) >= 0 {
					t.Fatalf("NULL does not sort before %s (%x)", a, ea)
				}
			}
		})
	}
}

// randTuple returns a tuple of the schema's kinds, possibly cut short (a key
// prefix) and possibly ending in <Max> (a range bound).
func randTuple(r *rand.Rand, schema []kind) []datum {
	n := len(schema)
	if r.IntN(4) == 0 {
		n = r.IntN(len(schema) + 1)
	}
	t := make([]datum, n, n+1)
	for i := range t {
		t[i] = randDatum(r, schema[i])
	}
	if n < len(schema) && r.IntN(2) == 0 {
		t = append(t, datum{kind: schema[n], max: true})
	}
	return t
}

// nearbyTuple shares a random-length prefix with a and differs after it.
func nearbyTuple(r *rand.Rand, schema []kind, a []datum) []datum {
	b := randTuple(r, schema)
	j := r.IntN(min(len(a), len(b)) + 1)
	copy(b, a[:j])
	if j < len(b) && j < len(a) && r.IntN(2) == 0 {
		b[j] = nearby(r, a[j])
	}
	return b
}

func encodeTuple(t []datum) []byte {
	var buf []byte
	for _, d := range t {
		buf = d.encode(buf)
	}
	return buf
}

// compareTuples is the tuple oracle: column by column, and a tuple that is a
// prefix of another sorts first ((20, 3) is the start of every key beginning
// with (20, 3)).
func compareTuples(a, b []datum) int {
	for i := range min(len(a), len(b)) {
		if c := compareDatums(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func TestEncodingTupleOrder(t *testing.T) {
	r := newRand(t)
	for range 20000 {
		schema := make([]kind, 1+r.IntN(4))
		for i := range schema {
			schema[i] = kind(r.IntN(int(numKinds)))
		}
		a := randTuple(r, schema)
		b := nearbyTuple(r, schema, a)
		ea, eb := encodeTuple(a), encodeTuple(b)
		if got, want := sign(bytes.Compare(ea, eb)), compareTuples(a, b); got != want {
			t.Fatalf("%v vs %v (schema %v): bytes.Compare(%x, %x) = %d, SQL order %d", a, b, schema, ea, eb, got, want)
		}

		// Decoding column after column gives the tuple back.
		rest := ea
		for i := range a {
			var d datum
			var err error
			d, rest, err = decodeDatum(schema[i], rest)
			if err != nil || compareDatums(d, a[i]) != 0 {
				t.Fatalf("%v: column %d decoded as %s, %v", a, i, d, err)
			}
		}
		if len(rest) != 0 {
			t.Fatalf("%v: %x left after decoding", a, rest)
		}
	}
}

// TestEncodingPrefixIsSpan checks that a key prefix is a key range: the keys
// in PrefixSpan(enc(p)) are exactly those of the tuples that start with p,
// and enc(p)+<Max> bounds them from above.
func TestEncodingPrefixIsSpan(t *testing.T) {
	r := newRand(t)
	for range 20000 {
		schema := make([]kind, 2+r.IntN(3))
		for i := range schema {
			schema[i] = kind(r.IntN(int(numKinds)))
		}
		full := func() []datum {
			tu := make([]datum, len(schema))
			for i := range tu {
				tu[i] = randDatum(r, schema[i])
			}
			return tu
		}
		a := full()
		k := r.IntN(len(schema))
		prefix := a[:k]
		ep := encodeTuple(prefix)
		span := PrefixSpan(ep)
		upper := AppendMax(bytes.Clone(ep))

		u := full()
		copy(u, prefix[:r.IntN(k+1)])
		if r.IntN(2) == 0 {
			copy(u, prefix)
			if k < len(u) && r.IntN(2) == 0 {
				u[k] = nearby(r, a[k])
			}
		}
		eu := encodeTuple(u)
		inPrefix := compareTuples(u[:k], prefix) == 0
		if got := span.Contains(eu); got != inPrefix {
			t.Fatalf("prefix %v, key %v: PrefixSpan contains = %v, want %v", prefix, u, got, inPrefix)
		}
		if inPrefix && bytes.Compare(eu, upper) >= 0 {
			t.Fatalf("key %v does not sort before %v + <Max>", u, prefix)
		}
		if !inPrefix && (bytes.Compare(eu, ep) < 0) != (compareTuples(u[:k], prefix) < 0) {
			t.Fatalf("key %v is on the wrong side of prefix %v", u, prefix)
		}
	}
}

// TestDecimalExtremes covers exponents at the ends of int32, which the
// randomized test (whose oracle computes 10^exponent) cannot reach. The values
// are listed in ascending order; rows in one group are equal.
func TestDecimalExtremes(t *testing.T) {
	const maxE, minE = math.MaxInt32, math.MinInt32
	groups := [][]Decimal{
		{{Form: DecimalInfinite, Neg: true}},
		{{Neg: true, Coeff: "11", Exponent: maxE}},
		{{Neg: true, Coeff: "10", Exponent: maxE}, {Neg: true, Coeff: "1000", Exponent: maxE - 2}},
		{{Neg: true, Coeff: "99", Exponent: maxE - 1}},
		{{Neg: true, Coeff: "1", Exponent: maxE}},
		{{Neg: true, Coeff: "1", Exponent: 0}},
		{{Neg: true, Coeff: "1", Exponent: minE}},
		{{Coeff: "0"}, {Coeff: ""}, {Neg: true, Coeff: "000", Exponent: maxE}, {Coeff: "0", Exponent: minE}},
		{{Coeff: "1", Exponent: minE}},
		{{Coeff: "15", Exponent: minE}},
		{{Coeff: "1", Exponent: -1}, {Coeff: "10", Exponent: -2}, {Coeff: "0100", Exponent: -3}},
		{{Coeff: "1", Exponent: 0}},
		{{Coeff: "1", Exponent: maxE}},
		{{Coeff: "99", Exponent: maxE - 1}},
		{{Coeff: "10", Exponent: maxE}},
		{{Coeff: "11", Exponent: maxE}},
		{{Form: DecimalInfinite}},
		{{Form: DecimalNaN}},
	}
	var prev []byte
	for i, g := range groups {
		first := AppendDecimalValue(nil, g[0])
		if prev != nil && bytes.Compare(prev, first) >= 0 {
			t.Errorf("group %d (%s) does not sort after group %d", i, g[0], i-1)
		}
		prev = first
		for _, d := range g {
			enc := AppendDecimalValue(nil, d)
			if !bytes.Equal(enc, first) {
				t.Errorf("%s encodes as %x, but %s, equal to it, as %x", d, enc, g[0], first)
			}
			got, rest, err := DecodeDecimal(enc)
			if err != nil || len(rest) != 0 {
				t.Fatalf("decode %s (%x): %v, rest %x", d, enc, err, rest)
			}
			if re := AppendDecimalValue(nil, got); !bytes.Equal(re, enc) {
				t.Errorf("%s decodes to %s, which re-encodes as %x", d, got, re)
			}
		}
	}

	// Normalisation is visible in the decoded form; the padding case gives
	// back the zeros that the exponent could not absorb.
	for _, tc := range []struct {
		in   Decimal
		want string
	}{
		{Decimal{Coeff: "012300", Exponent: -2}, "123e0"},
		{Decimal{Neg: true, Coeff: "000"}, "0e0"},
		{Decimal{Coeff: "1000", Exponent: maxE - 2}, "10e2147483647"},
		{Decimal{Coeff: "5", Exponent: minE}, "5e-2147483648"},
	} {
		got, _, err := DecodeDecimal(AppendDecimalValue(nil, tc.in))
		if err != nil || got.String() != tc.want {
			t.Errorf("decode(encode(%s)) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}

	// Beyond maxDecimalPadding the decoder refuses rather than allocate.
	huge := AppendDecimal(nil, false, "1"+strings.Repeat("0", maxDecimalPadding+1), maxE)
	if _, _, err := DecodeDecimal(huge); !errors.Is(err, ErrCorruptEncoding) {
		t.Errorf("decoding 1e%d: err = %v, want ErrCorruptEncoding", int64(maxE)+maxDecimalPadding+1, err)
	}
}

func TestAppendDecimalPanicsOnNonDigits(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("AppendDecimal accepted a non-digit coefficient")
		}
	}()
	AppendDecimal(nil, false, "12a", 0)
}

func TestOrderedVarint(t *testing.T) {
	vals := []int64{math.MinInt64, math.MinInt64 + 1, -1 << 40, -65537, -65536, -257, -256, -255, -2, -1,
		0, 1, 2, 255, 256, 257, 65535, 65536, 1 << 40, math.MaxInt64 - 1, math.MaxInt64}
	var prev []byte
	for _, v := range vals {
		enc := appendOrderedVarint(nil, v)
		if prev != nil && bytes.Compare(prev, enc) >= 0 {
			t.Errorf("varint(%d) = %x does not sort after %x", v, enc, prev)
		}
		prev = enc
		got, rest, err := decodeOrderedVarint(enc)
		if err != nil || got != v || len(rest) != 0 {
			t.Errorf("decode(varint(%d) = %x) = %d, %x, %v", v, enc, got, rest, err)
		}
	}
	for _, bad := range [][]byte{{}, {0x81, 0x00}, {0x7E, 0xFF}, {0x89}, {0x76}, {0x82, 0x01}} {
		if _, _, err := decodeOrderedVarint(bad); !errors.Is(err, ErrCorruptEncoding) {
			t.Errorf("decodeOrderedVarint(%x): err = %v, want ErrCorruptEncoding", bad, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		dec  func([]byte) error
		in   []byte
	}{
		{"empty", func(b []byte) error { _, _, err := DecodeInt64(b); return err }, nil},
		{"NULL as value", func(b []byte) error { _, _, err := DecodeInt64(b); return err }, []byte{0x00}},
		{"short int", func(b []byte) error { _, _, err := DecodeUint64(b); return err }, []byte{0x01, 1, 2}},
		{"bool 2", func(b []byte) error { _, _, err := DecodeBool(b); return err }, []byte{0x01, 2}},
		{"-0 float", func(b []byte) error { _, _, err := DecodeFloat64(b); return err },
			[]byte{0x01, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{"unterminated bytes", func(b []byte) error { _, _, err := DecodeBytes(b); return err }, []byte{0x01, 'a', 0x00}},
		{"bad escape", func(b []byte) error { _, _, err := DecodeBytes(b); return err }, []byte{0x01, 'a', 0x00, 0x02}},
		{"decimal no digits", func(b []byte) error { _, _, err := DecodeDecimal(b); return err }, []byte{0x01, 0x05, 0x80, 0x00}},
		{"decimal trailing zero", func(b []byte) error { _, _, err := DecodeDecimal(b); return err }, []byte{0x01, 0x05, 0x80, 11, 1, 0x00}},
		{"decimal leading zero", func(b []byte) error { _, _, err := DecodeDecimal(b); return err }, []byte{0x01, 0x05, 0x80, 2, 0x00}},
		{"decimal bad pair", func(b []byte) error { _, _, err := DecodeDecimal(b); return err }, []byte{0x01, 0x05, 0x80, 102, 0x00}},
		{"unknown tag", func(b []byte) error { _, _, err := DecodeTag(b); return err }, []byte{0x02}},
		{"max as null", func(b []byte) error { _, err := DecodeNull(b); return err }, []byte{0xFF}},
	} {
		if err := tc.dec(tc.in); !errors.Is(err, ErrCorruptEncoding) {
			t.Errorf("%s: err = %v, want ErrCorruptEncoding", tc.name, err)
		}
	}
}

// TestAppendDoesNotAllocate holds the encoders to their promise: with room in
// buf, encoding a key allocates nothing.
func TestAppendDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	buf := make([]byte, 0, 256)
	s, str := []byte("a\x00b\x00c"), "a\x00b"
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendTablePrefix(buf[:0], 7)
		b = AppendNull(b)
		b = AppendBool(b, true)
		b = AppendInt64(b, -5)
		b = AppendUint64(b, 5)
		b = AppendFloat64(b, 1.5)
		b = AppendBytes(b, s)
		b = AppendString(b, str)
		b = AppendDecimal(b, true, "0012300", -4)
		b = AppendDecimalInf(b, false)
		_ = AppendMax(b)
	})
	if allocs != 0 {
		t.Errorf("encoding a key allocated %v times", allocs)
	}
}
