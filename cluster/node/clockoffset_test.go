package node

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMeasureOffset: the midpoint estimate with half the round trip as its
// uncertainty.
func TestMeasureOffset(t *testing.T) {
	at := time.Unix(0, 0)
	for _, c := range []struct {
		sent, remote, received int64
		offset, uncertainty    time.Duration
	}{
		{1000, 1500, 2000, 0, 500},      // the answer at the midpoint
		{1000, 11500, 2000, 10000, 500}, // the peer 10 µs ahead
		{1000, -8500, 2000, -10000, 500},
		{1000, 1000, 1000, 0, 0},
		{2000, 1500, 1000, -500, 0}, // a local clock that went back: no negative round trip
	} {
		o := MeasureOffset(c.sent, c.remote, c.received, at)
		if o.Offset != c.offset || o.Uncertainty != c.uncertainty {
			t.Errorf("MeasureOffset(%d, %d, %d) = %v ± %v, want %v ± %v", c.sent, c.remote, c.received,
				o.Offset, o.Uncertainty, c.offset, c.uncertainty)
		}
	}
}

// TestClockMonitorRandomized runs random pings of peers with random true
// offsets (which change now and then) and random one-way delays on a fake
// monotonic clock, and checks the monitor against the simulated truth,
// taken when each kept estimate was measured:
//
//   - every kept estimate contains the peer's true offset (Offset ±
//     Uncertainty) and is at most a TTL old; a peer heard within half a
//     TTL is known;
//   - every clock a failed Check names as off was truly off by more than
//     the tolerated offset, and Check passes whenever more than half of
//     the known clocks (its own included) were truly within it;
//   - the majority rule counted by a plain loop over the estimates agrees
//     with Check, and with the error's figures.
func TestClockMonitorRandomized(t *testing.T) {
	type measured struct {
		o     RemoteOffset
		truth time.Duration
	}
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed*7))
		maxOffset := time.Duration(1+rng.IntN(1000)) * time.Millisecond
		ttl := time.Duration(1+rng.IntN(5)) * time.Second
		tolerated := maxOffset * ToleratedOffsetPercent / 100
		now := time.Unix(1000, 0)
		m := NewClockMonitor(maxOffset, ttl, func() time.Time { return now })
		peers := 1 + rng.IntN(6)
		truth := map[uint64]time.Duration{}
		history := map[uint64][]measured{}
		lastHeard := map[uint64]time.Time{}
		for step := 0; step < 200; step++ {
			now = now.Add(time.Duration(1+rng.IntN(700)) * time.Millisecond)
			id := uint64(1 + rng.IntN(peers))
			if _, ok := truth[id]; !ok || rng.IntN(20) == 0 {
				// Mostly within the bound, sometimes far off.
				truth[id] = time.Duration(rng.Int64N(int64(maxOffset))) - maxOffset/2
				if rng.IntN(3) == 0 {
					truth[id] = time.Duration(rng.Int64N(int64(4*maxOffset))) - 2*maxOffset
				}
			}
			sent := now.UnixNano()
			out := time.Duration(rng.IntN(200_000_000))
			back := time.Duration(rng.IntN(200_000_000))
			if rng.IntN(4) != 0 { // some pings go unanswered
				o := MeasureOffset(sent, sent+int64(out+truth[id]), sent+int64(out+back), now)
				m.Record(id, o)
				history[id] = append(history[id], measured{o, truth[id]})
				lastHeard[id] = now
			}

			fresh := m.Offsets()
			seen := map[uint64]bool{}
			within, known, trulyWithin := 1, 1+len(fresh), 1
			for _, p := range fresh {
				seen[p.Node] = true
				if now.Sub(p.MeasuredAt) > ttl {
					t.Fatalf("seed %d: a stale estimate of node %d is kept", seed, p.Node)
				}
				var tr time.Duration
				found := false
				for _, h := range history[p.Node] {
					if h.o == p.RemoteOffset {
						tr, found = h.truth, true
					}
				}
				if !found {
					t.Fatalf("seed %d: node %d's estimate %+v was never measured", seed, p.Node, p.RemoteOffset)
				}
				if tr < p.Offset-p.Uncertainty || tr > p.Offset+p.Uncertainty {
					t.Fatalf("seed %d: node %d's estimate %v ± %v misses its true offset %v", seed, p.Node, p.Offset, p.Uncertainty, tr)
				}
				if abs(p.Offset)-p.Uncertainty <= tolerated {
					within++
				}
				if abs(tr) <= tolerated {
					trulyWithin++
				}
			}
			for id, at := range lastHeard {
				if now.Sub(at) <= ttl/2 && !seen[id] {
					t.Fatalf("seed %d: node %d, heard %s ago, is not known", seed, id, now.Sub(at))
				}
			}
			err := m.Check()
			if (2*within > known) != (err == nil) {
				t.Fatalf("seed %d step %d: %d of %d clocks within bounds, Check: %v", seed, step, within, known, err)
			}
			if 2*trulyWithin > known && err != nil {
				t.Fatalf("seed %d step %d: %d of %d clocks truly within bounds, Check: %v", seed, step, trulyWithin, known, err)
			}
			var ce *ClockOffsetError
			if err != nil {
				if !errors.As(err, &ce) || ce.Within != within || ce.Known != known || len(ce.Off) != known-within {
					t.Fatalf("seed %d: Check's error %v: want %d within of %d", seed, err, within, known)
				}
				for _, p := range ce.Off {
					for _, h := range history[p.Node] {
						if h.o == p.RemoteOffset && abs(h.truth) <= tolerated {
							t.Fatalf("seed %d: node %d named off, truly %v (tolerated %v)", seed, p.Node, h.truth, tolerated)
						}
					}
				}
			}
		}
	}
}

// TestClockMonitorKeepsCertainEstimate: within the TTL a less certain
// measurement does not replace a more certain one; a stale one is
// replaced by any; a zero bound never fails.
func TestClockMonitorKeepsCertainEstimate(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewClockMonitor(500*time.Millisecond, time.Second, func() time.Time { return now })
	m.Record(2, RemoteOffset{Offset: time.Millisecond, Uncertainty: time.Millisecond, MeasuredAt: now})
	now = now.Add(500 * time.Millisecond)
	m.Record(2, RemoteOffset{Offset: time.Second, Uncertainty: 10 * time.Millisecond, MeasuredAt: now})
	if o := m.Offsets(); len(o) != 1 || o[0].Offset != time.Millisecond {
		t.Fatalf("kept %+v, want the 1ms estimate", o)
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(600 * time.Millisecond) // the first is stale now
	m.Record(2, RemoteOffset{Offset: time.Second, Uncertainty: 10 * time.Millisecond, MeasuredAt: now})
	if o := m.Offsets(); len(o) != 1 || o[0].Offset != time.Second {
		t.Fatalf("kept %+v, want the 1s estimate", o)
	}
	// Two clocks that disagree: neither can tell which is wrong.
	if err := m.Check(); err == nil {
		t.Fatal("one peer 1s off of two clocks: Check passed")
	}
	m.Record(3, RemoteOffset{Offset: -time.Millisecond, Uncertainty: time.Millisecond, MeasuredAt: now})
	if err := m.Check(); err != nil {
		t.Fatalf("node 2 off, node 3 and this one agree: %v", err)
	}
	if m.MaxSeen() != time.Second {
		t.Fatalf("MaxSeen %v", m.MaxSeen())
	}
	now = now.Add(2 * time.Second)
	if o := m.Offsets(); len(o) != 0 {
		t.Fatalf("stale estimates kept: %+v", o)
	}
	off := NewClockMonitor(0, time.Second, func() time.Time { return now })
	off.Record(2, RemoteOffset{Offset: time.Hour, MeasuredAt: now})
	if err := off.Check(); err != nil {
		t.Fatalf("bound 0: %v", err)
	}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
