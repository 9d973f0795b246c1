package farmhash

import (
	"unsafe"

	farm "github.com/dgryski/go-farm"
)

// seed is the initial state of a row fingerprint in YTsaurus's
// GetFarmFingerprint(begin, end).
const seed = 0xdeadc0de

// Hasher computes the YTsaurus-compatible FarmHash fingerprint of a row of
// values, one value at a time. It never allocates and is a plain value: copy
// it to fork a prefix, e.g. to fingerprint several rows that share leading
// columns.
//
// The zero Hasher is ready to use and equal to New().
type Hasher struct {
	// x is the running state r XOR seed, so that the zero value is the empty
	// row rather than a state no row can reach.
	x uint64
	// n counts the values added; it is XORed into the result, as YTsaurus
	// XORs in (end - begin).
	n uint64
}

// New returns a Hasher for an empty row.
func New() Hasher {
	return Hasher{}
}

// add folds the fingerprint fp of one value into the state:
// r = Fingerprint128(lo=r, hi=fp).
func (h *Hasher) add(fp uint64) {
	r := h.x ^ seed
	r = Fingerprint128(r, fp)
	h.x = r ^ seed
	h.n++
}

// AddNull adds a NULL value, whose fingerprint is 0 (YTsaurus:
// FarmFingerprint(0), which is 0).
func (h *Hasher) AddNull() {
	h.add(0)
}

// AddInt64 adds a signed integer, fingerprinted by its two's-complement bits.
// AddInt64(v) and AddUint64(uint64(v)) are the same, as in YTsaurus, where
// Int64, Uint64 and Double share one 8-byte union and one case.
func (h *Hasher) AddInt64(v int64) {
	h.add(Fingerprint64(uint64(v)))
}

// AddUint64 adds an unsigned integer.
func (h *Hasher) AddUint64(v uint64) {
	h.add(Fingerprint64(v))
}

// AddBool adds a boolean, fingerprinted as the integer 0 or 1.
func (h *Hasher) AddBool(v bool) {
	var x uint64
	if v {
		x = 1
	}
	h.add(Fingerprint64(x))
}

// AddBytes adds a string value given as bytes; its fingerprint is FarmHash's
// Fingerprint64 of the bytes (go-farm's Fingerprint64, not Hash64, which is
// free to change and is seeded differently).
func (h *Hasher) AddBytes(b []byte) {
	h.add(farm.Fingerprint64(b))
}

// AddString adds a string value; it is the same as AddBytes([]byte(s)).
func (h *Hasher) AddString(s string) {
	// go-farm's Fingerprint64 is assembly on amd64 without a //go:noescape
	// annotation, so []byte(s) would be copied to the heap on every call.
	// The function only reads its argument, so viewing the string's bytes
	// in place is safe.
	h.add(farm.Fingerprint64(unsafe.Slice(unsafe.StringData(s), len(s))))
}

// Len reports how many values have been added.
func (h Hasher) Len() int {
	return int(h.n)
}

// Sum64 returns the fingerprint of the values added so far. It does not
// change the Hasher; more values may be added afterwards.
func (h Hasher) Sum64() uint64 {
	return (h.x ^ seed) ^ h.n
}
