package shardrepl

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/pivotdb/pivotdb/cluster/node"
	"github.com/pivotdb/pivotdb/cluster/raft"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

func wall(n int64) hlc.Timestamp { return hlc.Timestamp{WallTime: n} }

// TestSideClosedWaitsForTheIndex: a side-channel closed timestamp counts
// only once the replica applied the index it names, under the epoch it
// was sent in; it never goes backwards, and a replica that falls behind
// the index it was taken at (dropped and rejoined) does not use it.
func TestSideClosedWaitsForTheIndex(t *testing.T) {
	var observed []hlc.Timestamp
	s := newSideClosed(func(ts hlc.Timestamp) error { observed = append(observed, ts); return nil })
	const g, epoch = raft.GroupID(7), 3
	s.take(&node.ClosedTimestampsRequest{Epoch: epoch, Groups: []node.ClosedGroup{{Group: uint64(g), Wall: 100, Index: 50}}})
	if got := s.closed(g, 49, epoch); !got.IsEmpty() {
		t.Fatalf("applied 49 of 50: closed %s, want none", got)
	}
	if got := s.closed(g, 50, epoch); got != wall(100) {
		t.Fatalf("applied 50: closed %s, want %s", got, wall(100))
	}
	if len(observed) != 1 || observed[0] != wall(100) {
		t.Fatalf("the clock observed %v, want [%s]", observed, wall(100))
	}
	// A later timestamp at a later index waits for it; meanwhile the
	// earlier one holds.
	s.add(g, sideEntry{ts: wall(200), index: 60, epoch: epoch})
	if got := s.closed(g, 55, epoch); got != wall(100) {
		t.Fatalf("applied 55 of 60: closed %s, want %s", got, wall(100))
	}
	// A lower timestamp (a reordered message) never lowers it.
	s.add(g, sideEntry{ts: wall(90), index: 61, epoch: epoch})
	if got := s.closed(g, 61, epoch); got != wall(200) {
		t.Fatalf("applied 61: closed %s, want %s", got, wall(200))
	}
	// The replica fell behind the index the timestamp was taken at.
	if got := s.closed(g, 59, epoch); !got.IsEmpty() {
		t.Fatalf("applied 59 after taking at 60: closed %s, want none", got)
	}
	// Another epoch's entry is dropped once the replica reached its index.
	s.add(g, sideEntry{ts: wall(300), index: 70, epoch: epoch - 1})
	if got := s.closed(g, 70, epoch); got != wall(200) {
		t.Fatalf("an old epoch's entry: closed %s, want %s", got, wall(200))
	}
	if got := s.closed(raft.GroupID(8), 1000, epoch); !got.IsEmpty() {
		t.Fatalf("a group never sent: closed %s", got)
	}
}

// TestSideClosedConcurrent takes messages and reads closed timestamps at
// once (run with -race): the closed timestamp read never goes backwards
// and never passes the newest one whose index was applied.
func TestSideClosedConcurrent(t *testing.T) {
	s := newSideClosed(nil)
	const g, epoch = raft.GroupID(2), 1
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); i <= 2000; i++ {
			s.take(&node.ClosedTimestampsRequest{Epoch: epoch, Groups: []node.ClosedGroup{{Group: uint64(g), Wall: i * 10, Index: uint64(i)}}})
		}
	}()
	var last hlc.Timestamp
	for applied := uint64(0); applied <= 2000; applied++ {
		got := s.closed(g, applied, epoch)
		if got.Less(last) {
			t.Fatalf("applied %d: closed %s went back from %s", applied, got, last)
		}
		if wall(int64(applied) * 10).Less(got) {
			t.Fatalf("applied %d: closed %s, past what the index allows", applied, got)
		}
		last = got
	}
	wg.Wait()
}

// flakyHost answers proposals with err.
type flakyHost struct {
	raft.Host
	err error
}

func (h flakyHost) Propose(context.Context, raft.GroupID, []byte) (raft.Result, error) {
	return raft.Result{}, h.err
}

// TestProposalTrackerMarksUnanswered: a proposal that ends without the
// state machine's answer leaves its group unsettled at a timestamp at or
// above every timestamp taken before it (so the closer keeps the group on
// the Raft path until a Raft Close at or above it applied); an answered
// one only counts.
func TestProposalTrackerMarksUnanswered(t *testing.T) {
	clock, err := hlc.NewClock(hlc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := clock.Now()
	if err != nil {
		t.Fatal(err)
	}
	tr := newProposalTracker(flakyHost{err: raft.ErrTimeout}, clock)
	if _, err := tr.Propose(context.Background(), 5, nil); !errors.Is(err, raft.ErrTimeout) {
		t.Fatalf("got %v", err)
	}
	st := tr.state(5)
	if st.started != 1 || st.inFlight != 0 || !before.Less(st.unsettled) {
		t.Fatalf("after a timeout: %+v, want started 1, none in flight, unsettled above %s", st, before)
	}
	tr.Host = flakyHost{}
	if _, err := tr.Propose(context.Background(), 6, nil); err != nil {
		t.Fatal(err)
	}
	if st := tr.state(6); st.started != 1 || !st.unsettled.IsEmpty() {
		t.Fatalf("after an answer: %+v", st)
	}
}
