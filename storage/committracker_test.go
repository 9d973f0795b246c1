package storage

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pivotdb/pivotdb/storage/hlc"
)

// returnsWithin runs fn and reports whether it returned within d; if not,
// the caller must unblock it and then receive from the returned channel.
func returnsWithin[T any](d time.Duration, fn func() T) (T, bool, <-chan T) {
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	select {
	case v := <-ch:
		return v, true, ch
	case <-time.After(d):
		var zero T
		return zero, false, ch
	}
}

type tsErr struct {
	ts  hlc.Timestamp
	err error
}

func readTS(e *Engine) func() tsErr {
	return func() tsErr {
		ts, err := e.ReadTimestamp()
		return tsErr{ts, err}
	}
}

// TestReadTimestampBelowCommitsInFlight: a read does not wait for a commit
// in flight that no ended commit is above; it reads just below it. Once a
// later commit ended (it may have been acknowledged), a read must cover it,
// so it waits for the older one still in flight.
func TestReadTimestampBelowCommitsInFlight(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	k := append(TablePrefix(1), 'a')
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k, []byte("0"))) })
	acked, err := e.ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}

	slow, slowID, err := e.commits.begin()
	if err != nil {
		t.Fatal(err)
	}
	r, ok, _ := returnsWithin(2*time.Second, readTS(e))
	if !ok {
		t.Fatal("a read waited for a commit in flight that nothing acknowledged above")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.ts.Less(slow) || r.ts.Less(acked) {
		t.Fatalf("read at %s, want in [%s, %s)", r.ts, acked, slow)
	}
	if r.ts != slow.Prev() {
		t.Errorf("read at %s, want just below the commit in flight (%s)", r.ts, slow.Prev())
	}

	// A commit above the slow one ends: a read now waits for the slow one.
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(k, []byte("1"))) })
	_, ok, ch := returnsWithin(100*time.Millisecond, readTS(e))
	if ok {
		t.Fatal("a read did not wait for a commit in flight below an ended one")
	}
	e.commits.end(slowID)
	r = <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if v, _, err := e.At(r.ts).Get(k); err != nil || string(v) != "1" {
		t.Fatalf("read at %s after the commit of 1 got %q, %v", r.ts, v, err)
	}
}

// TestPublishedTimestampCovered: a commit of system keys only has no
// registered timestamp; the one its OnCommitted hook gets (a schema
// change installs its catalog at it) is published, so a later read is at
// or above it even with a commit in flight below it.
func TestPublishedTimestampCovered(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	_, slowID, err := e.commits.begin()
	if err != nil {
		t.Fatal(err)
	}
	var hook hlc.Timestamp
	mustCommit(t, e, func(b *Batch) {
		must(t, b.Set([]byte{SystemPrefix, 'x'}, []byte("1")))
		b.OnCommitted(func(ts hlc.Timestamp) { hook = ts })
	})
	_, ok, ch := returnsWithin(100*time.Millisecond, readTS(e))
	if ok {
		t.Fatal("a read after a published timestamp did not wait for the commit in flight below it")
	}
	e.commits.end(slowID)
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.ts.Less(hook) {
		t.Fatalf("read at %s below the published %s", r.ts, hook)
	}
}

// TestHoldBelowLaterReads: a hold at the zero timestamp is at or below the
// read timestamp taken after it, also when that is below a commit in
// flight, and a GC threshold raised at TTL 0 does not pass it either.
func TestHoldBelowLaterReads(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	mustCommit(t, e, func(b *Batch) { must(t, b.Set(append(TablePrefix(1), 'a'), []byte("0"))) })
	slow, slowID, err := e.commits.begin()
	if err != nil {
		t.Fatal(err)
	}
	defer e.commits.end(slowID)
	h, err := e.HoldReads(hlc.Timestamp{})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := e.ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	if !ts.Less(slow) {
		t.Fatalf("read at %s not below the commit in flight at %s", ts, slow)
	}
	if ts.Less(h.Timestamp()) {
		t.Fatalf("read at %s below the hold taken before it at %s", ts, h.Timestamp())
	}
	h.Release()
	th, err := e.raiseGCThreshold(TablesSpan(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ts2, err := e.ReadTimestamp()
	if err != nil {
		t.Fatal(err)
	}
	if ts2.Less(th) {
		t.Fatalf("read at %s below the GC threshold %s raised before it", ts2, th)
	}
}

// TestWaitCommitted: a read at a timestamp of its own (AS OF SYSTEM TIME)
// waits for the commits in flight at or below it, not for those above.
func TestWaitCommitted(t *testing.T) {
	e := openMem(t, NewMemFS(), Options{NoSync: true})
	defer e.Close()
	slow, slowID, err := e.commits.begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := returnsWithin(2*time.Second, func() bool { e.WaitCommitted(slow.Prev()); return true }); !ok {
		t.Fatal("WaitCommitted waited for a commit above its timestamp")
	}
	_, ok, ch := returnsWithin(100*time.Millisecond, func() bool { e.WaitCommitted(slow); return true })
	if ok {
		t.Fatal("WaitCommitted did not wait for a commit at its timestamp")
	}
	e.commits.end(slowID)
	<-ch
}

// TestCommitTrackerRandom: writers begin commits, hold them open for a
// random while and end them; readers check every read timestamp against
// the rules: at or above every commit that ended before the read began
// (linearizability), no commit at or below it still open when it returns
// (visibility), never below the reader's previous one or a floor taken
// before it.
func TestCommitTrackerRandom(t *testing.T) {
	clock, err := hlc.NewClock(hlc.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr := newCommitTracker(clock)
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		ackMu sync.Mutex
		acked hlc.Timestamp // newest ended commit
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 1))
			for !stop.Load() {
				ts, id, err := tr.begin()
				if err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
				tr.end(id)
				ackMu.Lock()
				acked = acked.Forward(ts)
				ackMu.Unlock()
			}
		}(uint64(w))
	}
	var reads atomic.Int64
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev hlc.Timestamp
			for i := 0; i < 2000; i++ {
				ackMu.Lock()
				before := acked
				ackMu.Unlock()
				floor, err := tr.readFloor()
				if err != nil {
					t.Error(err)
					return
				}
				ts, err := tr.readTimestamp()
				if err != nil {
					t.Error(err)
					return
				}
				reads.Add(1)
				switch {
				case ts.Less(before):
					t.Errorf("read at %s below a commit acknowledged before it at %s", ts, before)
				case ts.Less(prev):
					t.Errorf("read at %s below the previous read at %s", ts, prev)
				case ts.Less(floor):
					t.Errorf("read at %s below the floor %s taken before it", ts, floor)
				}
				tr.mu.Lock()
				for _, c := range tr.stamps {
					if c.LessEq(ts) {
						t.Errorf("read at %s returned with a commit at %s in flight", ts, c)
					}
				}
				tr.mu.Unlock()
				if t.Failed() {
					return
				}
				prev = ts
			}
		}()
	}
	for reads.Load() < 6000 && !t.Failed() {
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
}
