package main

import (
	"math"
	"testing"
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
