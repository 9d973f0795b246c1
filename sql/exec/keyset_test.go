package exec

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestKeySetMatchesMap adds and looks up random keys — short and long,
// the empty key, many sharing a prefix, repeated — in a keySet and in a
// Go map, from a set sized for none of them (it grows many times) and
// one sized for all: membership, add's answer and len agree throughout.
func TestKeySetMatchesMap(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 9))
	for trial := 0; trial < 40; trial++ {
		n := r.IntN(3000)
		keys := make([]string, n)
		for i := range keys {
			switch r.IntN(4) {
			case 0:
				keys[i] = ""
			case 1:
				keys[i] = fmt.Sprintf("value-%016d", r.IntN(n+1))
			case 2:
				keys[i] = strings.Repeat("x", r.IntN(200))
			default:
				b := make([]byte, r.IntN(12))
				for j := range b {
					b[j] = byte(r.IntN(4))
				}
				keys[i] = string(b)
			}
		}
		hint := 0
		if trial%2 == 1 {
			hint = n
		}
		s := newKeySet(hint, 0)
		oracle := map[string]bool{}
		for i, k := range keys {
			if i%2 == 0 {
				if got, want := s.add([]byte(k)), !oracle[k]; got != want {
					t.Fatalf("seed %d: add(%q) = %v, want %v", seed, k, got, want)
				}
			} else if got, want := s.addString(k), !oracle[k]; got != want {
				t.Fatalf("seed %d: addString(%q) = %v, want %v", seed, k, got, want)
			}
			oracle[k] = true
			probe := keys[r.IntN(len(keys))] + []string{"", "y"}[r.IntN(2)]
			if s.has([]byte(probe)) != oracle[probe] || s.hasString(probe) != oracle[probe] {
				t.Fatalf("seed %d: has(%q) = %v, want %v", seed, probe, s.hasString(probe), oracle[probe])
			}
		}
		if s.len() != len(oracle) {
			t.Fatalf("seed %d: len %d, want %d", seed, s.len(), len(oracle))
		}
		for k := range oracle {
			if !s.hasString(k) {
				t.Fatalf("seed %d: %q lost", seed, k)
			}
		}
	}
}

// BenchmarkKeySet builds the table of 10,000 text keys a decorrelated
// EXISTS over the bench's kv rows builds, and probes each key once, with
// a keySet and with the map[string] it replaces (one string allocated per
// key on the build side).
func BenchmarkKeySet(b *testing.B) {
	const n = 10000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "value-%016d", i)
	}
	probes := make([]string, n)
	for i := range probes {
		probes[i] = string(keys[i])
	}
	b.Run("keySet", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := newKeySet(n, n*22)
			for _, k := range keys {
				s.add(k)
			}
			for _, p := range probes {
				if !s.hasString(p) {
					b.Fatal(p)
				}
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m := make(map[string]*subResult, n)
			for _, k := range keys {
				m[string(k)] = existsHit
			}
			for _, p := range probes {
				if m[p] == nil {
					b.Fatal(p)
				}
			}
		}
	})
}
