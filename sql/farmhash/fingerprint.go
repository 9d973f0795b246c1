package farmhash

// kMul is the multiplier of FarmHash's Murmur-inspired integer fingerprints
// (farmhash.h: Fingerprint(uint64_t) and Fingerprint(uint128_t)).
const kMul = 0x9ddfea08eb382d69

// Fingerprint64 is FarmHash's forever-fixed fingerprint of a 64-bit integer
// (farmhash.h: Fingerprint(uint64_t); YTsaurus: FarmFingerprint(ui64)).
//
// Signed integers are fingerprinted by their two's-complement bits, so callers
// pass uint64(v) for an int64 v. Fingerprint64(0) is 0, which is why a false
// boolean and a NULL both contribute 0 to a row fingerprint.
//
// It is not go-farm's Fingerprint64, which hashes a byte string; go-farm does
// not export the integer variant, so it is written out here.
func Fingerprint64(x uint64) uint64 {
	b := x * kMul
	b ^= b >> 44
	b *= kMul
	b ^= b >> 41
	b *= kMul
	return b
}

// Fingerprint128 is FarmHash's forever-fixed fingerprint of the 128-bit value
// whose low half is lo and whose high half is hi (farmhash.h:
// Fingerprint(uint128_t), the same function as CityHash's Hash128to64;
// YTsaurus: FarmFingerprint(ui64 first, ui64 second) =
// Fingerprint(Uint128(first, second)), so first is lo).
//
// The halves are not interchangeable: Fingerprint128(a, b) differs from
// Fingerprint128(b, a) in general, and a row fingerprint depends on getting
// the order right (the running state is lo, the value's fingerprint is hi).
func Fingerprint128(lo, hi uint64) uint64 {
	a := (lo ^ hi) * kMul
	a ^= a >> 47
	b := (hi ^ a) * kMul
	b ^= b >> 44
	b *= kMul
	b ^= b >> 41
	b *= kMul
	return b
}
