package mvcc

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestVersionStatsDeltaMatchesRecount lays random point writes over random
// versions and checks VersionStatsDelta against ComputeStatsOfSpans after
// minus before (its lock records left out), and that it declines range
// deletions and merges into versions. Keys have up to nine versions, so
// that Delta's walk stops above some of them; a StatsDeltaReader used for
// other writes first must answer the same as a fresh one.
func TestVersionStatsDeltaMatchesRecount(t *testing.T) {
	r := newRand(t)
	for round := 0; round < 300; round++ {
		db := openTestDB(t)
		uk := func(i int) []byte { return []byte(fmt.Sprintf("k%d", i)) }
		ts := func() hlc.Timestamp { return hlc.Timestamp{WallTime: int64(1 + r.IntN(12))} }
		value := func() []byte {
			switch r.IntN(4) {
			case 0:
				return appendTombstone(nil)
			case 1:
				return appendIntent(nil, &TxnMeta{ID: TxnID{1}, Anchor: uk(0)}, Update, nil, []byte("iv"), r.IntN(2) == 0)
			}
			return appendCommitted(nil, []byte(fmt.Sprintf("v%d", r.IntN(100))))
		}
		var keys [][]byte // version keys written so far
		setup := db.NewBatch()
		for i := 0; i < 6; i++ {
			for n := r.IntN(10); n > 0; n-- {
				k := AppendVersionKey(nil, uk(i), ts())
				keys = append(keys, k)
				setup.Set(k, value(), nil)
			}
			if r.IntN(3) == 0 {
				setup.Set(AppendBareKey(nil, uk(i)), []byte("bare"), nil)
			}
			if r.IntN(3) == 0 {
				setup.Set(AppendBareKey(nil, lockPrefix(uk(i))), []byte("lock"), nil)
			}
		}
		if err := setup.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		var spans []storage.Span
		for i := 0; i < 6; i++ {
			if r.IntN(3) > 0 {
				end := append(uk(i), 0)
				if n := len(spans); n > 0 && string(spans[n-1].End) == string(uk(i)) {
					spans[n-1].End = end
					continue
				}
				spans = append(spans, storage.Span{Start: uk(i), End: end})
			}
		}
		var ms []storage.Mutation
		declines := false
		for n := 1 + r.IntN(6); n > 0; n-- {
			switch c := r.IntN(20); {
			case c < 8:
				ms = append(ms, storage.Mutation{Kind: storage.MutationSet, Key: AppendVersionKey(nil, uk(r.IntN(7)), ts()), Value: value()})
			case c < 11 && len(keys) > 0:
				ms = append(ms, storage.Mutation{Kind: storage.MutationSet, Key: keys[r.IntN(len(keys))], Value: value()})
			case c < 14 && len(keys) > 0:
				ms = append(ms, storage.Mutation{Kind: storage.MutationDelete, Key: keys[r.IntN(len(keys))]})
			case c < 15 && len(keys) > 0:
				ms = append(ms, storage.Mutation{Kind: storage.MutationSingleDelete, Key: keys[r.IntN(len(keys))]})
			case c < 17:
				ms = append(ms, storage.Mutation{Kind: storage.MutationSet, Key: AppendBareKey(nil, uk(r.IntN(7))), Value: []byte("b")})
			case c < 18:
				ms = append(ms, storage.Mutation{Kind: storage.MutationSet, Key: AppendBareKey(nil, lockPrefix(uk(r.IntN(7)))), Value: []byte("l")})
			case c < 19:
				ms = append(ms, storage.Mutation{Kind: storage.MutationDeleteRange, Key: AppendBareKey(nil, uk(r.IntN(3))), Value: AppendBareKey(nil, uk(3+r.IntN(3)))})
				declines = true
			default:
				k := AppendVersionKey(nil, uk(r.IntN(7)), ts())
				ms = append(ms, storage.Mutation{Kind: storage.MutationMerge, Key: k, Value: appendCommitted(nil, []byte("m"))})
				if u, _, _, _ := DecodeKey(k); inSpans(spans, u) {
					declines = true
				}
			}
		}
		before, err := ComputeStatsOfSpans(db, spans)
		if err != nil {
			t.Fatal(err)
		}
		delta, ok, err := VersionStatsDelta(db, spans, ms)
		if err != nil {
			t.Fatal(err)
		}
		// The same through a reader that answered for other writes first.
		reused := NewStatsDeltaReader(db)
		if _, _, err := reused.Delta(spans, []storage.Mutation{{Kind: storage.MutationSet,
			Key: AppendVersionKey(nil, uk(r.IntN(7)), ts()), Value: value()}}); err != nil {
			t.Fatal(err)
		}
		delta2, ok2, err := reused.Delta(spans, ms)
		if err := firstErr(err, reused.Close()); err != nil {
			t.Fatal(err)
		}
		if delta2 != delta || ok2 != ok {
			t.Fatalf("round %d: a reused reader answers %+v %v, a fresh one %+v %v", round, delta2, ok2, delta, ok)
		}
		if ok == declines {
			t.Fatalf("round %d: ok = %v for writes %v", round, ok, ms)
		}
		if !ok {
			continue
		}
		b := db.NewBatch()
		if err := storage.ApplyMutations(b, ms); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		after, err := ComputeStatsOfSpans(db, spans)
		if err != nil {
			t.Fatal(err)
		}
		after.Sub(before)
		after.LockBytes, after.LockCount = 0, 0
		if delta != after {
			t.Fatalf("round %d: spans %v, writes %v: delta %+v, recount %+v", round, spans, ms, delta, after)
		}
	}
}

func inSpans(spans []storage.Span, k []byte) bool {
	for _, s := range spans {
		if s.Contains(k) {
			return true
		}
	}
	return false
}
