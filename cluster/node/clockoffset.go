package node

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Clock offsets between nodes (issue 17 item 6; CockroachDB's
// pkg/rpc/clock_offset.go). Every ping (Peer.Ping) carries the answering
// node's wall clock; the pinging node reads its own before sending and after
// the answer, and estimates the peer's offset as the answer's clock minus
// the midpoint of the two, with half the round trip as the uncertainty: the
// answer was taken somewhere inside the round trip, so the true offset lies
// within Offset ± Uncertainty (when the two directions are equally slow it
// is Offset).
//
// ClockMonitor keeps one estimate per peer: a new measurement replaces the
// kept one when that one is less certain (CockroachDB's rule: a slow ping
// does not blur a good estimate) or older than half the monitor's TTL
// (CockroachDB waits for the whole TTL, so a peer answering every ping
// may be unknown between its kept estimate's expiry and the next ping;
// here a peer heard within half a TTL is always known). A peer
// whose estimate went stale (no answer for a TTL: dead, cut off) counts for
// nothing. A peer's clock is within bounds when it may be within the
// tolerated offset, 80% of the maximum offset: |Offset| - Uncertainty at
// most that (an uncertain case counts as within, as in CockroachDB: a slow
// network must not stop the cluster). The node's own clock is healthy when
// the clocks within bounds, its own included, are more than half of the
// clocks it knows (its own and every peer with a fresh estimate).
//
// Unlike CockroachDB, which counts only the peers (and so stops every node
// of three when one is off: 1 of 2 is not more than half), this node counts
// itself: of three nodes, the one whose clock is off sees two of three
// clocks off and stops; the other two each see two of three within bounds
// and go on. Two nodes whose clocks disagree both stop: neither can tell
// which clock is wrong.

// ToleratedOffsetPercent is the share of the maximum offset a peer's clock
// may be off before it counts against this node (CockroachDB's 80%): the
// margin leaves room for drift between pings.
const ToleratedOffsetPercent = 80

// DefaultMaxOffset is the default bound on the clock offset between nodes
// (CockroachDB's --max-offset default).
const DefaultMaxOffset = 500 * time.Millisecond

// DefaultOffsetTTL is how long an offset estimate stays fresh: several
// pings (every 500 ms), so that one missed ping keeps the estimate.
const DefaultOffsetTTL = 3 * time.Second

// RemoteOffset is one estimate of a peer's clock against this node's.
type RemoteOffset struct {
	// Offset is the peer's clock minus this node's.
	Offset time.Duration
	// Uncertainty bounds the error: the true offset is within Offset ±
	// Uncertainty. Half the ping's round trip.
	Uncertainty time.Duration
	// MeasuredAt is when the answer came, on this process's monotonic
	// clock (not the wall clock the offset is about).
	MeasuredAt time.Time
}

// MeasureOffset makes the estimate of a ping sent at local wall time sent
// (ns) and answered at received (ns) with the peer's wall time remote (ns).
func MeasureOffset(sent, remote, received int64, at time.Time) RemoteOffset {
	rtt := max(received-sent, 0)
	mid := sent + rtt/2
	return RemoteOffset{Offset: time.Duration(remote - mid), Uncertainty: time.Duration(rtt / 2), MeasuredAt: at}
}

// withinTolerance reports whether the peer's clock may be within tolerated
// of this node's.
func (o RemoteOffset) withinTolerance(tolerated time.Duration) bool {
	abs := o.Offset
	if abs < 0 {
		abs = -abs
	}
	return abs-o.Uncertainty <= tolerated
}

func (o RemoteOffset) stale(ttl time.Duration, now time.Time) bool {
	return now.Sub(o.MeasuredAt) > ttl
}

// ClockOffsetError says this node's clock is off from a majority of the
// clocks it knows. Its message names the peers and their offsets.
type ClockOffsetError struct {
	MaxOffset time.Duration
	Within    int // clocks within bounds, this node's included
	Known     int // clocks known, this node's included
	Off       []PeerOffset
}

// PeerOffset is a peer's estimate, for messages and sys.nodes.
type PeerOffset struct {
	Node uint64
	RemoteOffset
}

func (e *ClockOffsetError) Error() string {
	s := fmt.Sprintf("this node's clock is off by more than %s (80%% of --max-offset %s) from %d of the %d clocks it knows:",
		e.MaxOffset*ToleratedOffsetPercent/100, e.MaxOffset, e.Known-e.Within, e.Known)
	for _, p := range e.Off {
		s += fmt.Sprintf(" node %d is %s (±%s) from it;", p.Node, fmtOffset(p.Offset), p.Uncertainty.Round(time.Microsecond))
	}
	return s[:len(s)-1]
}

func fmtOffset(d time.Duration) string {
	d = d.Round(time.Microsecond)
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// ClockMonitor keeps the offset estimates of a node's peers and judges
// its own clock by them. It is safe for concurrent use.
type ClockMonitor struct {
	maxOffset time.Duration // 0: no check
	ttl       time.Duration
	now       func() time.Time // monotonic; for staleness

	mu      sync.Mutex
	offsets map[uint64]RemoteOffset
	// maxSeen is the largest |Offset| estimated since start (a metric).
	maxSeen time.Duration
}

// NewClockMonitor returns a monitor with the given bound (0: it never
// reports an error) and estimate lifetime (0: DefaultOffsetTTL). now nil
// means time.Now.
func NewClockMonitor(maxOffset, ttl time.Duration, now func() time.Time) *ClockMonitor {
	if ttl <= 0 {
		ttl = DefaultOffsetTTL
	}
	if now == nil {
		now = time.Now
	}
	return &ClockMonitor{maxOffset: maxOffset, ttl: ttl, now: now, offsets: map[uint64]RemoteOffset{}}
}

// MaxOffset returns the configured bound (0: unchecked).
func (m *ClockMonitor) MaxOffset() time.Duration { return m.maxOffset }

// Record folds in a measurement of peer's clock.
func (m *ClockMonitor) Record(peer uint64, o RemoteOffset) {
	m.mu.Lock()
	defer m.mu.Unlock()
	abs := o.Offset
	if abs < 0 {
		abs = -abs
	}
	m.maxSeen = max(m.maxSeen, abs)
	old, ok := m.offsets[peer]
	if !ok || old.stale(m.ttl/2, m.now()) || o.Uncertainty < old.Uncertainty {
		m.offsets[peer] = o
	}
}

// Offsets returns the fresh estimates, by node id order.
func (m *ClockMonitor) Offsets() []PeerOffset {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.freshLocked(m.now())
}

func (m *ClockMonitor) freshLocked(now time.Time) []PeerOffset {
	out := make([]PeerOffset, 0, len(m.offsets))
	for id, o := range m.offsets {
		if o.stale(m.ttl, now) {
			delete(m.offsets, id)
			continue
		}
		out = append(out, PeerOffset{Node: id, RemoteOffset: o})
	}
	slices.SortFunc(out, func(a, b PeerOffset) int {
		switch {
		case a.Node < b.Node:
			return -1
		case a.Node > b.Node:
			return 1
		}
		return 0
	})
	return out
}

// MaxSeen returns the largest offset (absolute) any measurement estimated
// since the monitor started.
func (m *ClockMonitor) MaxSeen() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.maxSeen
}

// Check returns a *ClockOffsetError when this node's clock is off from a
// majority of the clocks it knows (see the rule above), nil otherwise and
// when the bound is 0.
func (m *ClockMonitor) Check() error {
	if m.maxOffset <= 0 {
		return nil
	}
	m.mu.Lock()
	fresh := m.freshLocked(m.now())
	m.mu.Unlock()
	tolerated := m.maxOffset * ToleratedOffsetPercent / 100
	within, known := 1, 1+len(fresh) // this node's own clock
	var off []PeerOffset
	for _, p := range fresh {
		if p.withinTolerance(tolerated) {
			within++
		} else {
			off = append(off, p)
		}
	}
	if 2*within > known {
		return nil
	}
	return &ClockOffsetError{MaxOffset: m.maxOffset, Within: within, Known: known, Off: off}
}
