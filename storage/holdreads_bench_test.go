package storage

import (
	"testing"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// BenchmarkHoldReadTimestamp measures what every statement outside a
// transaction does to start its snapshot, from 4 goroutines at once:
// "separate" is the way before issue 23's change (a hold at readFloor, then
// ReadTimestamp: the commit tracker's lock twice, the clock's three times),
// "held" is HoldReads of the zero timestamp, which holds the read
// timestamp it takes (the tracker's lock once). Compare cpu-ns/op.
//
//	go test ./storage -run '^$' -bench HoldReadTimestamp -count 3
func BenchmarkHoldReadTimestamp(b *testing.B) {
	e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for _, bc := range []struct {
		name string
		take func() (*ReadHold, hlc.Timestamp, error)
	}{
		{"separate", func() (*ReadHold, hlc.Timestamp, error) {
			floor, err := e.commits.readFloor()
			if err != nil {
				return nil, hlc.Timestamp{}, err
			}
			h, err := e.HoldReads(floor)
			if err != nil {
				return nil, hlc.Timestamp{}, err
			}
			ts, err := e.ReadTimestamp()
			return h, ts, err
		}},
		{"held", func() (*ReadHold, hlc.Timestamp, error) {
			h, err := e.HoldReads(hlc.Timestamp{})
			if err != nil {
				return nil, hlc.Timestamp{}, err
			}
			return h, h.Timestamp(), nil
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(2) // 4 goroutines on this 2-core machine
			cpu0 := benchCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					h, ts, err := bc.take()
					if err != nil {
						b.Fatal(err)
					}
					if ts.Less(h.Timestamp()) {
						b.Fatalf("read at %s below its hold at %s", ts, h.Timestamp())
					}
					h.Release()
				}
			})
			b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
