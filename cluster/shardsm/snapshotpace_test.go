package shardsm

import (
	"math"
	"runtime/metrics"
	"testing"
	"time"
)

// fakeLatencies is a scheduling latency histogram a test fills: buckets
// of 10 µs, 100 µs, 1 ms, 10 ms and 100 ms upper bounds.
type fakeLatencies struct {
	h metrics.Float64Histogram
}

func newFakeLatencies() *fakeLatencies {
	return &fakeLatencies{h: metrics.Float64Histogram{
		Counts:  make([]uint64, 6),
		Buckets: []float64{0, 10e-6, 100e-6, 1e-3, 10e-3, 100e-3, math.Inf(1)},
	}}
}

// add records n goroutines that waited about d (the upper bound of the
// bucket d falls in).
func (f *fakeLatencies) add(n uint64, d time.Duration) {
	for i := range f.h.Counts {
		if d.Seconds() <= f.h.Buckets[i+1] {
			f.h.Counts[i] += n
			return
		}
	}
}

func (f *fakeLatencies) read(s []metrics.Sample) {
	h := f.h
	h.Counts = append([]uint64(nil), f.h.Counts...)
	s[0].Value = metricsHistogramValue(&h)
}

// metricsHistogramValue makes a metrics.Value holding h: the package has
// no constructor, so the test reads a real histogram and swaps in h's
// counts through the pointer it returns.
func metricsHistogramValue(h *metrics.Float64Histogram) metrics.Value {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	real := s[0].Value.Float64Histogram()
	real.Counts = h.Counts
	real.Buckets = h.Buckets
	return s[0].Value
}

// The share of the snapshot rate halves, down to an eighth, while the
// scheduling latency's 99th percentile is above the target, grows back a
// sixteenth an interval while it is below, changes at most once an
// interval, and ignores the latency of a long pause between snapshots.
func TestElasticShare(t *testing.T) {
	f := newFakeLatencies()
	e := newElasticShare()
	e.on.Store(true)
	e.latency = f.read
	now := time.Unix(1000, 0)
	step := func(d time.Duration, slow uint64) float64 {
		now = now.Add(d)
		f.add(1000-slow, 5*time.Microsecond)
		f.add(slow, 5*time.Millisecond)
		return e.current(now)
	}
	// Off (the default), the share is whole whatever the latency.
	e.on.Store(false)
	for range 3 {
		if got := step(elasticInterval, 500); got != 1 {
			t.Fatalf("off: share %v, want 1", got)
		}
	}
	e.on.Store(true)
	if got := step(time.Minute, 0); got != 1 {
		t.Fatalf("first sample: share %v, want 1", got)
	}
	// Five slow goroutines in a thousand: above the 99th percentile? No,
	// 0.5%: the share stays whole.
	if got := step(elasticInterval, 5); got != 1 {
		t.Fatalf("p99 under the target: share %v, want 1", got)
	}
	// Twenty in a thousand: p99 at 10 ms, over the 1 ms target.
	want := 1.0
	for i := range 5 {
		want = max(want/2, elasticMinShare)
		if got := step(elasticInterval, 20); got != want {
			t.Fatalf("slow interval %d: share %v, want %v", i+1, got, want)
		}
	}
	if want != elasticMinShare {
		t.Fatalf("five halvings ended at %v, want the floor %v", want, elasticMinShare)
	}
	// Within an interval nothing changes, whatever the latency.
	if got := step(elasticInterval/2, 0); got != elasticMinShare {
		t.Fatalf("within an interval: share %v, want %v", got, elasticMinShare)
	}
	if got := step(elasticInterval/2, 0); got != elasticMinShare+elasticStep {
		t.Fatalf("a quick interval: share %v, want %v", got, elasticMinShare+elasticStep)
	}
	for range 20 {
		step(elasticInterval, 0)
	}
	if got := e.current(now); got != 1 {
		t.Fatalf("after twenty quick intervals: share %v, want 1", got)
	}
	// A minute without snapshots, during which the process was slow: the
	// next sample starts a fresh interval and changes nothing.
	if got := step(time.Minute, 500); got != 1 {
		t.Fatalf("after a pause: share %v, want 1", got)
	}
	if got := step(elasticInterval, 20); got != 0.5 {
		t.Fatalf("a slow interval after the pause: share %v, want 0.5", got)
	}
}

// deltaPercentile reads the quantile of what the histogram gained, from
// bucket upper bounds (the last, unbounded bucket by its lower bound).
func TestDeltaPercentile(t *testing.T) {
	f := newFakeLatencies()
	f.add(1000, 5*time.Millisecond) // before: not counted
	prev := append([]uint64(nil), f.h.Counts...)
	if got := deltaPercentile(&f.h, prev, 0.99); got != 0 {
		t.Fatalf("no new samples: %v, want 0", got)
	}
	f.add(99, 50*time.Microsecond)
	f.add(1, time.Second)
	if got := deltaPercentile(&f.h, prev, 0.99); got != 100e-6 {
		t.Fatalf("p99 of 99 fast and 1 slow: %v, want 100e-6", got)
	}
	if got := deltaPercentile(&f.h, prev, 1); got != 100e-3 {
		t.Fatalf("p100 with one in the unbounded bucket: %v, want its lower bound 100e-3", got)
	}
}
