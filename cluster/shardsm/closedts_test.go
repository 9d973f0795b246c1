package shardsm

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

var closedSeed = flag.Uint64("closed-seed", 0, "seed of TestClosedTimestampRandomized (0: the time)")

func encodeClose(t testing.TB, epoch uint64, at int64) []byte {
	t.Helper()
	b, err := EncodeClose(Close{Epoch: epoch, Timestamp: ts(at)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeOf(t testing.TB, epoch uint64, ms ...storage.Mutation) []byte {
	t.Helper()
	_, at, _ := enginekey.DecodeVersion(ms[0].Key)
	b, err := EncodeWrite(Write{Generation: 1, Timestamp: at, Epoch: epoch, Mutations: ms})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func stateOf(t testing.TB, m raft.StateMachine) StateResult {
	t.Helper()
	v, err := m.Lookup(State{})
	if err != nil {
		t.Fatal(err)
	}
	return v.(StateResult)
}

// TestClosedTimestampRandomized: random Writes (at random commit
// timestamps, under the current serving epoch or an old one), Closes
// (from the current epoch or an old one, above or below the closed
// timestamp), takeovers, reopens of the replica and snapshots to a second
// replica. Against a model: no Write is ever applied at or below a closed
// timestamp already applied (ClosedError, nothing written); a Close of an
// old epoch changes nothing; the closed timestamp never goes back,
// survives a reopen and travels in snapshots; the store's clock is moved
// past it; and reads at the closed timestamp see exactly the Writes the
// model accepted at or below it.
func TestClosedTimestampRandomized(t *testing.T) {
	seed := *closedSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-closed-seed to repeat)", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	s := openTestStore(t)
	var clock hlc.Timestamp
	s.SetClock(func(ts hlc.Timestamp) error { clock = clock.Forward(ts); return nil })
	a := &applier{t: t, m: s.NewStateMachine(1, 1)}
	if _, err := a.m.Open(nil); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(mustEncode(t, Init{Descriptor: Descriptor{Span: tableSpan, Generation: 1}})); err != nil {
		t.Fatal(err)
	}
	var epoch uint64
	serve := func() {
		cmd, err := EncodeServe(Serve{Node: uint64(1 + rng.IntN(3))})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.apply(cmd); err != nil {
			t.Fatal(err)
		}
		epoch++
	}
	serve()
	var closed int64
	// model: key -> the accepted versions' timestamps with their values.
	model := map[string]map[int64]string{}
	for step := range 2000 {
		switch r := rng.IntN(100); {
		case r < 60: // a write
			at := closed - 20 + int64(rng.IntN(60))
			if at < 1 {
				at = 1
			}
			we := epoch
			if rng.IntN(10) == 0 {
				we = epoch - 1
			}
			k := fmt.Sprintf("k%d", rng.IntN(8))
			v := fmt.Sprintf("v%d", step)
			if _, ok := model[k][at]; ok {
				continue // a version at the same timestamp: not a commit the engine makes
			}
			err := a.apply(writeOf(t, we, version(k, at, v)))
			var ce *ClosedError
			var fe *FencedError
			switch {
			case we != epoch:
				if !errors.As(err, &fe) {
					t.Fatalf("step %d: a write of old epoch %d: %v", step, we, err)
				}
			case at <= closed:
				if !errors.As(err, &ce) || ce.Closed != ts(closed) || ce.WriteTimestamp != ts(at) {
					t.Fatalf("step %d: a write at %d with %d closed: %v", step, at, closed, err)
				}
			default:
				if err != nil {
					t.Fatalf("step %d: a write at %d above closed %d: %v", step, at, closed, err)
				}
				if model[k] == nil {
					model[k] = map[int64]string{}
				}
				model[k][at] = v
			}
		case r < 85: // a close
			at := closed - 10 + int64(rng.IntN(30))
			if at < 1 {
				at = 1
			}
			ce := epoch
			old := rng.IntN(8) == 0
			if old {
				ce = epoch - 1
			}
			err := a.apply(encodeClose(t, ce, at))
			var fe *FencedError
			if old {
				if !errors.As(err, &fe) {
					t.Fatalf("step %d: a close of old epoch %d: %v", step, ce, err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				closed = max(closed, at)
			}
		case r < 90:
			serve()
		case r < 95: // reopen the replica
			a.m.Close()
			a.m = s.NewStateMachine(1, 1)
			if _, err := a.m.Open(nil); err != nil {
				t.Fatal(err)
			}
		default: // a snapshot to another store's replica
			s2 := openTestStore(t)
			m2 := s2.NewStateMachine(1, 2)
			if _, err := m2.Open(nil); err != nil {
				t.Fatal(err)
			}
			if err := m2.RecoverFromSnapshot(bytes.NewReader(takeSnapshot(t, a.m)), nil); err != nil {
				t.Fatal(err)
			}
			if got := stateOf(t, m2).Closed; got != ts(closed) {
				t.Fatalf("step %d: the snapshot's replica has closed %s, want %d", step, got, closed)
			}
		}
		st := stateOf(t, a.m)
		if st.Closed != ts(closed) {
			t.Fatalf("step %d: closed %s, model %d", step, st.Closed, closed)
		}
		if closed > 0 && clock.Less(ts(closed)) {
			t.Fatalf("step %d: clock %s below closed %d", step, clock, closed)
		}
		if step%100 == 99 {
			got, err := rows(t, a.m, tableSpan, closed)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for k, vs := range model {
				best := int64(-1)
				for at := range vs {
					if at <= closed && at > best {
						best = at
					}
				}
				if best >= 0 {
					want = append(want, k+"="+vs[best])
				}
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: rows at closed %d: %v, model %v", step, closed, got, want)
			}
		}
	}
	checkReplica(t, a.m)
}
