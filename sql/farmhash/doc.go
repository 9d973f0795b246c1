// Package farmhash implements farm_hash, PivotDB's row fingerprint, bit for
// bit as YTsaurus computes FarmHash fingerprints of unversioned rows, so that
// values hashed by either system (shard keys, computed hash columns) agree.
//
// # Layers
//
// Two FarmHash integer primitives, which go-farm does not export:
//
//   - Fingerprint64(x): FarmHash's Fingerprint(uint64_t), the fingerprint of
//     a 64-bit integer.
//   - Fingerprint128(lo, hi): FarmHash's Fingerprint(uint128_t), also known
//     as Hash128to64, which folds two 64-bit words into one.
//
// Per value, the fingerprint fp(v) is
//
//	string        go-farm Fingerprint64(bytes)   (FarmHash's Fingerprint64,
//	                                              never Hash64)
//	int64/uint64  Fingerprint64(two's-complement bits)
//	bool          Fingerprint64(0 or 1)
//	NULL          0                              (= Fingerprint64(0))
//
// and a row (v1, ..., vn) folds them left to right:
//
//	r := 0xdeadc0de
//	for each v: r = Fingerprint128(lo=r, hi=fp(v))
//	return r ^ n
//
// Hasher carries r and n so that a caller can feed values one at a time
// without materializing a row; it never allocates.
//
// # Invariants
//
// The output is persistent: it may be stored and compared across versions
// and with YTsaurus, so nothing here may change. The tests pin the two
// vectors of design.md §7 and the stability vectors of YTsaurus's own test.
// Consequences of the format that callers should know:
//
//   - A value's type is not hashed: AddInt64(v) equals AddUint64(uint64(v)),
//     AddBool(true) equals AddInt64(1), and NULL, false and 0 are all equal.
//   - Order and count matter: (1, 2) differs from (2, 1), and (NULL) from
//     (NULL, NULL).
//   - The zero Hasher is the empty row, equal to New(); its Sum64 is
//     0xdeadc0de.
//
// # Where this comes from (YTsaurus, repository ytsaurus/ytsaurus)
//
//   - yt/yt/client/table_client/unversioned_value.cpp:
//     GetFarmFingerprint(const TUnversionedValue&) gives fp(v) (Int64, Uint64
//     and Double share FarmFingerprint(value.Data.Int64); Boolean is
//     FarmFingerprint(bool); Null is FarmFingerprint(0)), and
//     GetFarmFingerprint(begin, end) is the fold above.
//   - The farm_hash UDF (yt/ytlib/query_client/udf/farm_hash.cpp in older
//     trees) returns GetFarmFingerprint(args, args + n) as Uint64.
//   - FarmFingerprint(ui64) is FarmHash's Fingerprint(uint64_t) and
//     FarmFingerprint(ui64 first, ui64 second) is
//     Fingerprint(Uint128(first, second)): first is the low word, which is why
//     the running state is lo.
//   - yt/yt/client/unittests/farm_fingerprint_stability_ut.cpp holds the
//     stability vectors reused in this package's tests.
//
// # Debugging
//
// When a hash disagrees with YTsaurus, check the per-value fingerprints first
// (TestValueFingerprints lists known ones), then the lo/hi order of the fold,
// then the final XOR with the count. go-farm's Hash64 equals Fingerprint64
// for strings of up to 32 bytes and differs beyond, so a mix-up shows only on
// longer strings (TestRandomRowsAgainstOracle draws lengths up to 100 for
// that reason); always use Fingerprint64.
package farmhash
