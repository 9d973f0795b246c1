package storage

import (
	"errors"
	"slices"
	"testing"
)

func getCounters(t *testing.T, r Reader, key []byte) []int64 {
	t.Helper()
	v, ok, err := r.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	c, err := DecodeCounters(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCounterMerge checks that merged deltas add up across batches, flushes,
// compactions and restarts, that a Set is a base for later merges, that a
// Delete resets the counters, and that vectors of different lengths add as if
// zero-padded.
func TestCounterMerge(t *testing.T) {
	fs := NewMemFS()
	e := openMem(t, fs, Options{})
	defer func() { e.Close() }()
	key := []byte("\x01counter")
	merge := func(cs ...int64) {
		t.Helper()
		mustCommit(t, e, func(b *Batch) {
			if err := b.Merge(key, AppendCounters(nil, cs...)); err != nil {
				t.Fatal(err)
			}
		})
	}
	check := func(want ...int64) {
		t.Helper()
		if got := getCounters(t, e, key); !slices.Equal(got, want) {
			t.Fatalf("counters = %v, want %v", got, want)
		}
	}

	merge(1, 100)
	merge(2, -30)
	check(3, 70)
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	merge(-1, 5, 7) // A longer vector: the third counter starts at 0.
	check(2, 75, 7)
	if err := e.Compact(t.Context(), Span{}); err != nil {
		t.Fatal(err)
	}
	merge(1)
	check(3, 75, 7)

	// The batch sees its own merges over the committed value.
	b := e.NewBatch()
	if err := b.Merge(key, AppendCounters(nil, 10, 10, 10)); err != nil {
		t.Fatal(err)
	}
	if got := getCounters(t, b, key); !slices.Equal(got, []int64{13, 85, 17}) {
		t.Fatalf("batch view = %v", got)
	}
	b.Close() // Discarded.
	check(3, 75, 7)

	mustCommit(t, e, func(b *Batch) {
		if err := b.Set(key, AppendCounters(nil, 1000, 2000)); err != nil {
			t.Fatal(err)
		}
	})
	merge(1, 1)
	check(1001, 2001)

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openMem(t, fs, Options{})
	check(1001, 2001)
	merge(-1001, -2001)
	check(0, 0)

	mustCommit(t, e, func(b *Batch) {
		if err := b.Delete(key); err != nil {
			t.Fatal(err)
		}
	})
	check()
	merge(4, 4)
	check(4, 4)

	if _, err := DecodeCounters(nil, []byte{1, 2, 3}); !errors.Is(err, ErrCorruptEncoding) {
		t.Fatalf("DecodeCounters of 3 bytes: %v", err)
	}
	b = e.NewBatch()
	defer b.Close()
	if err := b.Merge(nil, AppendCounters(nil, 1)); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("Merge of the empty key: %v", err)
	}
}
