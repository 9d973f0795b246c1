package mvcc

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// randomEngineKey returns a bare, versioned or lock-record key over a small
// alphabet, so that user keys are often prefixes of one another (the case
// the 0x00 sentinel exists for).
func randomEngineKey(r *rand.Rand) []byte {
	uk := make([]byte, r.IntN(4))
	for i := range uk {
		uk[i] = []byte{0x00, 0x01, 'a', 0xff}[r.IntN(4)]
	}
	switch r.IntN(3) {
	case 0:
		return AppendBareKey(nil, uk)
	case 1:
		return AppendVersionKey(nil, uk, hlc.Timestamp{WallTime: r.Int64N(3) + 1, Logical: r.Int32N(2)})
	default:
		var id TxnID
		id[0] = byte(r.IntN(2))
		return appendLockKey(nil, uk, Strength(r.IntN(4)+1), id)
	}
}

// TestComparerProperties checks the rules Pebble's Comparer documentation
// sets for Split, Compare, Separator, Successor and ImmediateSuccessor on
// random keys, and that Compare orders user keys bytewise and versions
// newest first.
func TestComparerProperties(t *testing.T) {
	r := newRand(t)
	cmp := Comparer.Compare
	pfx := func(k []byte) []byte { return k[:split(k)] }
	for range 20000 {
		a, b := randomEngineKey(r), randomEngineKey(r)
		c := cmp(a, b)
		if c != -cmp(b, a) || (c == 0) != bytes.Equal(a, b) {
			t.Fatalf("Compare(%x, %x) = %d, inconsistent", a, b, c)
		}
		// Split rule 1: a prefix sorts before the keys with that prefix.
		if split(a) < len(a) && cmp(pfx(a), a) >= 0 {
			t.Fatalf("prefix of %x does not sort first", a)
		}
		// Split rule 2: prefixes order keys.
		if pc := bytes.Compare(pfx(a), pfx(b)); pc != 0 && pc != c {
			t.Fatalf("Compare(%x, %x) = %d but prefixes compare %d", a, b, c, pc)
		}
		// User keys order bytewise; versions of one key newest first.
		ua, tsa, va, _ := DecodeKey(a)
		ub, tsb, vb, _ := DecodeKey(b)
		if va && vb {
			if uc := bytes.Compare(ua, ub); uc != 0 && uc != c {
				t.Fatalf("%s vs %s: Compare %d, user keys %d", FormatKey(a), FormatKey(b), c, uc)
			} else if uc == 0 && c != tsb.Compare(tsa) {
				t.Fatalf("%s vs %s: Compare %d, not newest first", FormatKey(a), FormatKey(b), c)
			}
		}
		if c < 0 && len(a) > 0 {
			s := Comparer.Separator(nil, a, b)
			if cmp(a, s) > 0 || cmp(s, b) >= 0 {
				t.Fatalf("Separator(%x, %x) = %x, not in [a, b)", a, b, s)
			}
		}
		if s := Comparer.Successor(nil, a); cmp(a, s) > 0 {
			t.Fatalf("Successor(%x) = %x, before it", a, s)
		}
		p := pfx(a)
		if s := Comparer.ImmediateSuccessor(nil, p); split(s) != len(s) || cmp(p, s) >= 0 {
			t.Fatalf("ImmediateSuccessor(%x) = %x", p, s)
		}
		if c < 0 && Comparer.AbbreviatedKey(a) > Comparer.AbbreviatedKey(b) {
			t.Fatalf("AbbreviatedKey out of order for %x < %x", a, b)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	ts := hlc.Timestamp{WallTime: 1700000000000000001, Logical: 3}
	uk := []byte("\x02row\x00key")
	k := AppendVersionKey(nil, uk, ts)
	got, gotTS, versioned, err := DecodeKey(k)
	if err != nil || !versioned || !bytes.Equal(got, uk) || gotTS != ts {
		t.Fatalf("DecodeKey(%x) = %q, %v, %v, %v", k, got, gotTS, versioned, err)
	}
	if split(k) != len(uk)+1 {
		t.Fatalf("split = %d, want %d", split(k), len(uk)+1)
	}
	for _, bad := range [][]byte{nil, {5}, {1, 2, 3, 13}} {
		if _, _, _, err := DecodeKey(bad); err == nil {
			t.Errorf("DecodeKey(%x) accepted", bad)
		}
	}
}

// TestBloomFilterOnUserKey shows that with Comparer the per-table key bloom
// filters of storage/keyfilter.go are built over, and probed with, user
// keys: a point read of a row finds the right version among many with one
// prefix seek, and reads of absent rows are answered by the filters of
// every level without touching data blocks.
func TestBloomFilterOnUserKey(t *testing.T) {
	const table = 7
	db := openTestDB(t, table)
	row := func(i int64) []byte { return storage.AppendInt64(storage.TablePrefix(table), i) }
	b := db.NewIndexedBatch()
	for i := int64(0); i < 1000; i += 2 { // even rows exist, odd rows never did
		for v := int64(1); v <= 3; v++ {
			if _, err := PutCommitted(b, row(i), hlc.Timestamp{WallTime: v * 10}, []byte{byte(v)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(t.Context(), []byte{0}, []byte{0xff}, false); err != nil {
		t.Fatal(err)
	}
	// Present rows at each timestamp: the newest version at or below it.
	for i := int64(0); i < 1000; i += 2 {
		for v := int64(1); v <= 3; v++ {
			got, ts, found, err := Get(db, row(i), hlc.Timestamp{WallTime: v*10 + 5}, ReadOptions{})
			if err != nil || !found || !bytes.Equal(got, []byte{byte(v)}) || ts.WallTime != v*10 {
				t.Fatalf("row %d at %d: %v %v %v %v", i, v*10+5, got, ts, found, err)
			}
		}
	}
	before := db.Metrics().Filter
	for i := int64(1); i < 1000; i += 2 {
		if _, _, found, err := Get(db, row(i), hlc.Timestamp{WallTime: 100}, ReadOptions{}); err != nil || found {
			t.Fatalf("absent row %d: found %v, err %v", i, found, err)
		}
	}
	after := db.Metrics().Filter
	// With about 1% false positives, nearly all 500 absent rows must be
	// answered by the filter (a hit: no data block read). The present rows
	// above were all found, so the filter gave no false negative for the
	// prefixes their versions were filed under.
	if hits := after.Hits - before.Hits; hits < 450 {
		t.Fatalf("filter excluded %d of 500 absent rows; the filter does not work on user keys", hits)
	}
	// A table without the setting gets no filter: its absent rows read
	// data blocks (misses stay counted as misses, never as hits).
	other := func(i int64) []byte { return storage.AppendInt64(storage.TablePrefix(table+1), i) }
	b = db.NewIndexedBatch()
	for i := int64(0); i < 100; i += 2 {
		if _, err := PutCommitted(b, other(i), hlc.Timestamp{WallTime: 10}, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	before = db.Metrics().Filter
	for i := int64(1); i < 100; i += 2 {
		if _, _, found, err := Get(db, other(i), hlc.Timestamp{WallTime: 100}, ReadOptions{}); err != nil || found {
			t.Fatalf("absent row %d of the unfiltered table: found %v, err %v", i, found, err)
		}
	}
	if hits := db.Metrics().Filter.Hits - before.Hits; hits != 0 {
		t.Fatalf("filter excluded %d rows of a table without KEY_BLOOM_FILTER", hits)
	}
}

// TestPrefixSeekSeesAllVersions: SeekPrefixGE with a row's bare key stays
// within the row and walks its versions newest first.
func TestPrefixSeekSeesAllVersions(t *testing.T) {
	db := openTestDB(t)
	b := db.NewIndexedBatch()
	keys := [][]byte{[]byte("a"), []byte("a\x00"), []byte("ab")}
	for _, k := range keys {
		for v := int64(1); v <= 3; v++ {
			if _, err := PutCommitted(b, k, hlc.Timestamp{WallTime: v}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var got []string
	for ok := it.SeekPrefixGE(AppendBareKey(nil, []byte("a"))); ok; ok = it.Next() {
		got = append(got, FormatKey(it.Key()))
	}
	want := []string{"0x61@0.000000003,0", "0x61@0.000000002,0", "0x61@0.000000001,0"}
	if !slices.Equal(got, want) {
		t.Fatalf("prefix seek of a: %v, want %v", got, want)
	}
}

// TestPebbleCheckComparer runs Pebble's own checks of a Comparer
// (pebble.CheckComparer) over prefixes that extend one another and over
// version and lock-record suffixes.
func TestPebbleCheckComparer(t *testing.T) {
	var prefixes, suffixes [][]byte
	for _, uk := range []string{"", "\x00", "a", "a\x00", "a\x00\x00", "ab", "b", "\xff"} {
		prefixes = append(prefixes, AppendBareKey(nil, []byte(uk)))
	}
	for _, ts := range []hlc.Timestamp{{WallTime: 1}, {WallTime: 1, Logical: 1}, {WallTime: 2}, {WallTime: 1 << 62, Logical: 7}} {
		k := AppendVersionKey(nil, nil, ts)
		suffixes = append(suffixes, k[split(k):])
	}
	for _, st := range []Strength{KeyShare, Update} {
		for _, id := range []TxnID{{1}, {2}} {
			k := appendLockKey(nil, nil, st, id)
			suffixes = append(suffixes, k[split(k):])
		}
	}
	if err := pebble.CheckComparer(Comparer, prefixes, suffixes); err != nil {
		t.Fatal(err)
	}
}

// TestPointReadPastVersionsBeforeLocalKeys: a point read below every version
// of a row with many versions seeks past them (itersBeforeSeek); when the
// row is the last one before the 0x03 local area (a lock record here), the
// seek lands on a bare local key, which is another key, not a corrupt
// version: the row is not found.
func TestPointReadPastVersionsBeforeLocalKeys(t *testing.T) {
	const table = 7
	db := openTestDB(t)
	row := storage.AppendInt64(storage.TablePrefix(table), 1)
	b := db.NewIndexedBatch()
	for v := int64(1); v <= 3*itersBeforeSeek; v++ {
		if _, err := PutCommitted(b, row, hlc.Timestamp{WallTime: 100 + v}, []byte{byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	txn := &TxnMeta{ID: NewTxnID(), Anchor: row, WriteTimestamp: hlc.Timestamp{WallTime: 200}}
	if _, err := AcquireLock(b, storage.AppendInt64(storage.TablePrefix(table), 2), txn, hlc.Timestamp{WallTime: 200}, Update); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if _, _, found, err := Get(db, row, hlc.Timestamp{WallTime: 50}, ReadOptions{}); err != nil || found {
		t.Fatalf("below every version: found %v, err %v; want not found", found, err)
	}
	got, ts, found, err := Get(db, row, hlc.Timestamp{WallTime: 103}, ReadOptions{})
	if err != nil || !found || ts.WallTime != 103 || !bytes.Equal(got, []byte{3}) {
		t.Fatalf("at 103: %v %v %v %v", got, ts, found, err)
	}
}
