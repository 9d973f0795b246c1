package partition

import (
	"bytes"
	"slices"
	"sync"
	"testing"
)

// TestObserve: an observer sees every key of its table that a commit
// writes, puts and deletes, on every shard, and nothing of other tables
// or after stop.
func TestObserve(t *testing.T) {
	e := newEnv(t)
	const table, other = 7, 8
	e.create(table, key(table, 10))
	e.create(other)

	var mu sync.Mutex
	var seen [][]byte
	stop := e.m.Observe(table, func(k []byte) {
		mu.Lock()
		seen = append(seen, bytes.Clone(k))
		mu.Unlock()
	})
	e.mustWrite(table, [][]byte{key(table, 1), key(table, 20)}, [][]byte{[]byte("a"), []byte("b")})
	e.mustWrite(other, [][]byte{key(other, 1)}, [][]byte{[]byte("c")})
	e.mustWrite(table, [][]byte{key(table, 1)}, [][]byte{nil})
	stop()
	stop() // idempotent
	e.mustWrite(table, [][]byte{key(table, 2)}, [][]byte{[]byte("d")})

	want := [][]byte{key(table, 1), key(table, 20), key(table, 1)}
	if !slices.EqualFunc(seen, want, bytes.Equal) {
		t.Fatalf("observed %q, want %q", seen, want)
	}
}
