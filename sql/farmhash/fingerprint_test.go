package farmhash

import (
	"math"
	"testing"

	farm "github.com/dgryski/go-farm"
)

// TestValueFingerprints checks the fingerprints of single values against the
// per-value expectations of YTsaurus's stability test
// (yt/yt/client/unittests/farm_fingerprint_stability_ut.cpp), which pins
// GetFarmFingerprint(TUnversionedValue) forever.
func TestValueFingerprints(t *testing.T) {
	// Variables, not constants: Go rejects uint64(int64(-1)) on constants,
	// and the conversion under test is the run-time two's-complement one.
	n12345678, nMinus1e6 := int64(12345678), int64(-1000000)
	for _, tc := range []struct {
		name string
		got  uint64
		want uint64
	}{
		{"int64 12345678", Fingerprint64(uint64(n12345678)), 18329046069279503950},
		{"uint64 12345678", Fingerprint64(12345678), 18329046069279503950},
		{"uint64 42", Fingerprint64(42), 17355217915646310598},
		{"int64 -1000000", Fingerprint64(uint64(nMinus1e6)), 13952380479379003069},
		{"bool true", Fingerprint64(1), 10105606910506535461},
		{"bool false", Fingerprint64(0), 0},
		// YTsaurus aliases Double with Int64/Uint64 and fingerprints the
		// IEEE-754 bits. PivotDB's farm_hash takes no doubles, but the vector
		// pins the integer fingerprint on a high-entropy input.
		{"double 42.0 bits", Fingerprint64(math.Float64bits(42)), 6259286942292166412},
		{"string \"0\"", farm.Fingerprint64([]byte("0")), 15198969275252572735},
		{"string \"\"", farm.Fingerprint64(nil), 11160318154034397263},
		{"string \"abc\"", farm.Fingerprint64([]byte("abc")), 2640714258260161385},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// TestFingerprint128Order pins the lo/hi order: swapping the halves must
// change the result, and lo == hi must not collapse to a constant.
func TestFingerprint128Order(t *testing.T) {
	const a, b = 0xdeadc0de, 17355217915646310598
	if Fingerprint128(a, b) == Fingerprint128(b, a) {
		t.Fatalf("Fingerprint128 is symmetric in its halves; the lo/hi order is lost")
	}
	if Fingerprint128(1, 1) == Fingerprint128(2, 2) {
		t.Fatalf("Fingerprint128(x, x) does not depend on x")
	}
	// With lo == hi the first mixing step sees 0, leaving b = hi * kMul
	// followed by the same tail as Fingerprint64.
	if got, want := Fingerprint128(7, 7), Fingerprint64(7); got != want {
		t.Fatalf("Fingerprint128(7, 7) = %d, want Fingerprint64(7) = %d", got, want)
	}
}
