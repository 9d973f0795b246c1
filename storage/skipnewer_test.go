package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestScanSkipsNewerVersions reads random histories (keys set and
// deleted over many commits, some keys written only late) at every commit's
// timestamp, forwards with Next and with SeekGE, and compares each scan
// with the history replayed up to that timestamp: the seek past versions
// above the read timestamp (skipnewer.go) must land on the same versions
// stepping does. Each layout runs: memtable, flushed, compacted.
func TestScanSkipsNewerVersions(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	for _, layout := range []string{"memtable", "flushed", "compacted"} {
		t.Run(layout, func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			e, err := Open(t.TempDir(), Options{NoSync: true, Logger: quietLogger{}, GCTTL: -1, IdleFlushTick: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }
			const keys, commits = 60, 25
			state := map[int]string{}
			var snaps []map[int]string
			var stamps []hlc.Timestamp
			for c := 0; c < commits; c++ {
				b := e.NewBatch()
				for n := r.IntN(40); n > 0; n-- {
					k := r.IntN(keys)
					if c < commits/2 && k >= keys*3/4 {
						continue // keys written only in the later commits
					}
					if r.IntN(5) == 0 {
						if err := b.Delete(key(k)); err != nil {
							t.Fatal(err)
						}
						delete(state, k)
						continue
					}
					v := fmt.Sprintf("v%d-%d", k, c)
					if err := b.Set(key(k), []byte(v)); err != nil {
						t.Fatal(err)
					}
					state[k] = v
				}
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				b.Close()
				ts, err := e.ReadTimestamp()
				if err != nil {
					t.Fatal(err)
				}
				snap := make(map[int]string, len(state))
				for k, v := range state {
					snap[k] = v
				}
				snaps, stamps = append(snaps, snap), append(stamps, ts)
			}
			switch layout {
			case "flushed":
				if err := e.Flush(); err != nil {
					t.Fatal(err)
				}
			case "compacted":
				if err := e.Flush(); err != nil {
					t.Fatal(err)
				}
				if err := e.Compact(context.Background(), TablesSpan()); err != nil {
					t.Fatal(err)
				}
			}
			for c, ts := range stamps {
				var want []string
				for k := 0; k < keys; k++ {
					if v, ok := snaps[c][k]; ok {
						want = append(want, fmt.Sprintf("%d=%s", k, v))
					}
				}
				it, err := e.At(ts).NewIter(Span{Start: key(0), End: key(keys)})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for ok := it.First(); ok; ok = it.Next() {
					got = append(got, fmt.Sprintf("%d=%s", binary.BigEndian.Uint64(it.Key()[len(TablePrefix(1)):]), it.Value()))
				}
				if err := it.Error(); err != nil {
					t.Fatal(err)
				}
				// Every key found by a seek, as point reads do.
				for k := 0; k < keys; k++ {
					v, inSnap := snaps[c][k]
					ok := it.SeekGE(key(k))
					found := ok && bytes.Equal(it.Key(), key(k))
					if found != inSnap || (found && string(it.Value()) != v) {
						t.Fatalf("seed %d, commit %d: SeekGE(%d): found %v, want %v %q", seed, c, k, found, inSnap, v)
					}
				}
				it.Close()
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d, commit %d:\n got %v\nwant %v", seed, c, got, want)
				}
			}
		})
	}
}

// BenchmarkEngineScanNewer is a 1,000-row scan of a 10,000-row table read
// at the timestamp of its first version, with 10 or 50 newer versions of
// every row above it: seeking past them (seek, skipnewer.go) against
// stepping over each with Next (next), per layout. Compare cpu-ns/op.
//
//	go test -run '^$' -bench BenchmarkEngineScanNewer -count 3 ./storage
func BenchmarkEngineScanNewer(b *testing.B) {
	const rows = 10000
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(TablePrefix(1), uint64(i)) }
	value := func(i, v int) []byte { return fmt.Appendf(nil, "value-%016d-%03d-%073d", i, v, i*v) }
	for _, run := range []struct {
		layout string
		newer  int
	}{{"compacted", 10}, {"compacted", 50}, {"memtable", 10}, {"memtable", 50}} {
		layout, newer := run.layout, run.newer
		e, err := Open(b.TempDir(), Options{NoSync: true, Logger: quietLogger{}, GCTTL: -1, IdleFlushTick: -1})
		if err != nil {
			b.Fatal(err)
		}
		var readTS hlc.Timestamp
		for v := 0; v <= newer; v++ {
			batch := e.NewBatch()
			for i := 0; i < rows; i++ {
				if err := batch.Set(key(i), value(i, v)); err != nil {
					b.Fatal(err)
				}
			}
			if err := batch.Commit(); err != nil {
				b.Fatal(err)
			}
			batch.Close()
			if v == 0 {
				if readTS, err = e.ReadTimestamp(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if layout == "compacted" {
			if err := e.Flush(); err != nil {
				b.Fatal(err)
			}
			if err := e.Compact(context.Background(), TablesSpan()); err != nil {
				b.Fatal(err)
			}
		}
		view := e.At(readTS)
		for _, way := range []string{"seek", "next"} {
			b.Run(fmt.Sprintf("%s/newer=%d/%s", layout, newer, way), func(b *testing.B) {
				defer func(n int) { newerSteps = n }(newerSteps)
				if way == "next" {
					newerSteps = 1 << 30
				}
				runtime.GC()
				b.ResetTimer()
				cpu0 := benchCPU()
				for i := 0; i < b.N; i++ {
					it, err := view.NewIter(Span{Start: key(4000), End: key(5000)})
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for ok := it.First(); ok; ok = it.Next() {
						if n == 0 && !bytes.Equal(it.Value(), value(4000, 0)) {
							b.Fatalf("read %q, not the first version", it.Value())
						}
						n++
					}
					if err := it.Close(); err != nil || n != 1000 {
						b.Fatal(n, err)
					}
				}
				b.ReportMetric(float64(benchCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
		e.Close()
	}
}
