package storage

import (
	"encoding/binary"
	"testing"
)

// TestPointReaderGetNoCopy: GetNoCopy finds what Get finds; Get's values
// are copies that later lookups leave alone.
func TestPointReaderGetNoCopy(t *testing.T) {
	e, err := Open(t.TempDir(), Options{NoSync: true, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }
	mustCommit(t, e, func(b *Batch) {
		for i := range 100 {
			must(t, b.Set(key(i), []byte{byte(i), byte(i), byte(i)}))
		}
		must(t, b.Delete(key(7)))
	})
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(key(8), []byte("new"))) })
	ts, err := e.ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	pr, err := e.At(ts).NewPointReader()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	var kept [][]byte
	for i := range 101 {
		want, wantOK := string([]byte{byte(i), byte(i), byte(i)}), i != 7 && i != 100
		if i == 8 {
			want = "new"
		}
		v, ok, err := pr.GetNoCopy(key(i))
		if err != nil || ok != wantOK || ok && string(v) != want {
			t.Fatalf("GetNoCopy(%d) = %q, %v, %v", i, v, ok, err)
		}
		c, ok, err := pr.Get(key(i))
		if err != nil || ok != wantOK || ok && string(c) != want {
			t.Fatalf("Get(%d) = %q, %v, %v", i, c, ok, err)
		}
		kept = append(kept, c)
	}
	for i, c := range kept {
		if i != 7 && i != 8 && i != 100 && string(c) != string([]byte{byte(i), byte(i), byte(i)}) {
			t.Fatalf("Get(%d)'s value changed to %q", i, c)
		}
	}
}

// BenchmarkPointReader looks up 100 random present keys of a 10,000-row
// table in key order, as an IN list of 100 keys does, with Get and with
// GetNoCopy:
//
//	go test -run '^$' -bench BenchmarkPointReader ./storage
func BenchmarkPointReader(b *testing.B) {
	e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }
	batch := e.NewBatch()
	value := make([]byte, 30)
	for i := range 10000 {
		if err := batch.Set(key(i), value); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Commit(); err != nil {
		b.Fatal(err)
	}
	batch.Close()
	keys := make([][]byte, 100)
	for i := range keys {
		keys[i] = key(i * 97)
	}
	ts, err := e.ReadTimestamp()
	if err != nil {
		b.Fatal(err)
	}
	view := e.At(ts)
	for _, mode := range []string{"Get", "GetNoCopy"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := benchCPU()
			for b.Loop() {
				pr, err := view.NewPointReader()
				if err != nil {
					b.Fatal(err)
				}
				for _, k := range keys {
					get := pr.Get
					if mode == "GetNoCopy" {
						get = pr.GetNoCopy
					}
					if _, ok, err := get(k); !ok || err != nil {
						b.Fatal(ok, err)
					}
				}
				pr.Close()
			}
			b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
