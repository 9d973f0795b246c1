package partition

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pivotdb/pivotdb/storage"
)

// TestConcurrentReshapes runs writers that commit transactions while other
// goroutines split, merge, reshard and recount the table and read its maps
// and statistics. Each writer owns its own keys (a = its number), so it can
// compute its deltas from what it committed. At the end every row must be
// there and every shard's statistics must be exact. Run it with -race.
func TestConcurrentReshapes(t *testing.T) {
	r := newRand(t)
	e := newEnv(t)
	const table = 7
	e.create(table, key(table, 1), key(table, 2), key(table, 3))

	const writers = 4
	txns := 300
	if testing.Short() {
		txns = 60
	}
	var wg sync.WaitGroup
	var writersDone atomic.Int32
	models := make([]map[string][]byte, writers)
	errs := make(chan error, 16)
	seeds := make([]uint64, writers+3)
	for i := range seeds {
		seeds[i] = r.Uint64()
	}
	for w := range writers {
		models[w] = map[string][]byte{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer writersDone.Add(1)
			r := rand.New(rand.NewPCG(seeds[w], 1))
			model := models[w]
			for range txns {
				b := e.eng.NewBatch()
				var ws Writes
				staged := map[string][]byte{}
				for range 1 + r.IntN(6) {
					k := key(table, w, string(rune('a'+r.IntN(26)))+string(rune('a'+r.IntN(26))))
					old, existed, err := b.Get(k)
					if err != nil {
						errs <- err
						return
					}
					if r.IntN(4) == 0 {
						if err := b.Delete(k); err != nil {
							errs <- err
							return
						}
						ws.RecordDelete(table, k, existed, len(old))
						staged[string(k)] = nil
					} else {
						v := bytes.Repeat([]byte{byte(w)}, r.IntN(64))
						if err := b.Set(k, v); err != nil {
							errs <- err
							return
						}
						ws.RecordPut(table, k, len(v), existed, len(old))
						staged[string(k)] = v
					}
				}
				// Point reads, as a session would route them.
				sm := e.m.Map(table)
				sm.Shard(sm.Find(key(table, w, "a"))).AddReads(1)
				if err := e.m.Commit(b, &ws); err != nil {
					errs <- err
					return
				}
				b.Close()
				for k, v := range staged {
					if v == nil {
						delete(model, k)
					} else {
						model[k] = v
					}
				}
			}
		}()
	}

	randPivot := func(r *rand.Rand) []byte {
		if r.IntN(2) == 0 {
			return key(table, r.IntN(writers+1))
		}
		return key(table, r.IntN(writers), string(rune('a'+r.IntN(26))))
	}
	var reshapes atomic.Int64
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seeds[writers+g], 2))
			for writersDone.Load() < writers {
				var err error
				sm := e.m.Map(table)
				switch op := r.IntN(10); {
				case op < 2:
					_, err = e.m.Split(table, [][]byte{randPivot(r)})
				case op < 4:
					_, err = e.m.SplitInBackground(table, [][]byte{randPivot(r)})
				case op < 7:
					if sm.Len() > 1 {
						k := r.IntN(sm.Len() - 1)
						_, err = e.m.Merge(table, sm.Shard(k).ID, 2)
					}
				case op < 8:
					var pivots [][]byte
					if pivots, err = e.m.SplitBySize(table, 1+r.IntN(6)); err == nil {
						_, err = e.m.Reshard(table, pivots)
					}
				case op < 9:
					k := r.IntN(sm.Len())
					var p []byte
					var ok bool
					if p, ok, err = e.m.MedianSplitKey(table, sm.Shard(k).ID); err == nil && ok {
						_, err = e.m.Split(table, [][]byte{p})
					}
				default:
					_, err = e.m.Recount(table)
				}
				// A merge may name a shard that the other goroutine has
				// just replaced.
				if err != nil && !errors.Is(err, ErrShardNotFound) {
					errs <- err
					return
				}
				reshapes.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for writersDone.Load() < writers {
			sm := e.m.Map(table)
			if err := sm.CheckInvariants(); err != nil {
				errs <- err
				return
			}
			st, err := e.m.Stats(sm)
			if err != nil {
				errs <- err
				return
			}
			for _, s := range st {
				// A pending shard holds only the deltas since its split,
				// which deletes can make negative.
				if !s.Pending && (s.Rows < 0 || s.Bytes < 0) {
					errs <- errors.New("negative statistics")
					return
				}
			}
		}
	}()
	wg.Wait()
	e.m.WaitBackground()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	e.check()
	e.checkStats(table)
	all := map[string][]byte{}
	for _, m := range models {
		for k, v := range m {
			all[k] = v
		}
	}
	n := 0
	if err := scan(e.eng, storage.TableSpan(table), func(k, v []byte) error {
		n++
		if want, ok := all[string(k)]; !ok || !bytes.Equal(v, want) {
			t.Errorf("row %s: %x, model %x (present %v)", fmtKey(table, k), v, want, ok)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(all) {
		t.Fatalf("%d rows, model %d", n, len(all))
	}
	t.Logf("%d reshapes during %d transactions; %d shards at the end", reshapes.Load(), writers*txns, e.m.Map(table).Len())
}
