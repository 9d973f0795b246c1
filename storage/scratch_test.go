package storage

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestScratchPebbleRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	db, err := pebble.Open("x", Options{FS: vfs.NewMem(), Logger: quietLogger{}, MemTableSizeBytes: 64 << 10}.pebbleOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	randKey := func() string {
		b := make([]byte, 1+r.IntN(3))
		for i := range b {
			b[i] = "abc\x00\xff"[r.IntN(5)]
		}
		return string(b)
	}
	m := map[string]bool{}
	for step := range 3000 {
		b := db.NewIndexedBatch()
		for range 1 + r.IntN(8) {
			k := randKey()
			switch r.IntN(4) {
			case 0:
				a, c := randKey(), randKey()
				if a > c {
					a, c = c, a
				}
				c += "\x00"
			if r.IntN(3) == 0 {
				a = "\x00"
			}
				b.DeleteRange([]byte(a), []byte(c), nil)
				for x := range m {
					if x >= a && x < c {
						delete(m, x)
					}
				}
			case 1:
				b.Delete([]byte(k), nil)
				delete(m, k)
			default:
				b.Set([]byte(k), []byte("v"), nil)
				m[k] = true
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		b.Close()
		if step%50 == 0 && r.IntN(2) == 0 {
			db.Flush()
		}
		for range 5 {
			v, c, err := db.Get([]byte(randKey()))
			_ = v
			if err == nil {
				c.Close()
			}
		}
		it, _ := db.NewIter(nil)
		for range 20 {
			switch r.IntN(4) {
			case 0:
				it.SeekGE([]byte(randKey()))
			case 1:
				it.SeekLT([]byte(randKey()))
			case 2:
				if it.Valid() {
					it.Prev()
				}
			case 3:
				if it.Valid() {
					it.Next()
				}
			}
		}
		var got []string
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, string(it.Key()))
		}
		it.Close()
		var want []string
		for x := range m {
			want = append(want, x)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d:\n got %q\nwant %q", step, got, want)
		}
	}
}
