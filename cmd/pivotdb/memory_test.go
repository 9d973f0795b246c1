package main

import (
	"math"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
)

// TestGCPercent: GOGC is raised only when the operator set none and a
// memory limit bounds the heap.
func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		env    string
		limit  int64
		want   int
		wantOK bool
	}{
		{"", 1 << 30, defaultGCPercent, true}, // --max-memory's limit
		{"", math.MaxInt64, 0, false},         // no limit: keep GOGC's default
		{"100", 1 << 30, 0, false},            // the operator's GOGC wins
		{"off", 1 << 30, 0, false},            // even GOGC=off
		{"200", math.MaxInt64, 0, false},
	} {
		got, ok := gcPercent(c.env, c.limit)
		if got != c.want || ok != c.wantOK {
			t.Errorf("gcPercent(%q, %d) = %d, %v; want %d, %v", c.env, c.limit, got, ok, c.want, c.wantOK)
		}
	}
}

// TestSplitMemory: the block cache is taken out of --max-memory (a
// quarter of it unless --cache-size says otherwise), statements get the
// rest, and a cache that would leave them nothing is refused.
func TestSplitMemory(t *testing.T) {
	for _, c := range []struct {
		maxMem, cacheFlag    int64
		wantCache, wantStmts int64
		wantErr              bool
	}{
		{0, 0, storage.DefaultCacheSizeBytes, 0, false}, // no budget: the old default, statements unlimited
		{0, 512 << 20, 512 << 20, 0, false},
		{256 << 20, 0, 64 << 20, 192 << 20, false}, // the memory tests' budget: the old 64 MiB
		{4 << 30, 0, 1 << 30, 3 << 30, false},
		{4 << 30, 512 << 20, 512 << 20, 4<<30 - 512<<20, false},
		{256 << 20, 256 << 20, 0, 0, true}, // nothing left for statements
		{256 << 20, 1 << 30, 0, 0, true},
	} {
		cache, stmts, err := splitMemory(c.maxMem, c.cacheFlag)
		if (err != nil) != c.wantErr || cache != c.wantCache || stmts != c.wantStmts {
			t.Errorf("splitMemory(%d, %d) = %d, %d, %v; want %d, %d, error %v",
				c.maxMem, c.cacheFlag, cache, stmts, err, c.wantCache, c.wantStmts, c.wantErr)
		}
	}
}
