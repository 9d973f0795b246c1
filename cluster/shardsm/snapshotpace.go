package shardsm

import (
	"math"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Snapshot work yields to the node's foreground work (issue 18: writes
// during a replica move at 0.7x of the quiet rate or better). A snapshot's
// streaming and installing are elastic work: it matters that they end, not
// when, while the group's writes wait for every millisecond of CPU they
// are denied. CockroachDB's admission control gives such work CPU only
// while the Go scheduler's latency stays low (its elastic CPU limiter,
// admission.elastic_cpu.scheduler_latency_target, 1 ms at the 99th
// percentile); here the store's snapshot rate is scaled the same way, by
// additive increase and multiplicative decrease:
//
//   - every elasticInterval, the 99th percentile of the scheduling latency
//     (runtime/metrics /sched/latencies:seconds, the time runnable
//     goroutines waited for a thread, which also grows when the operating
//     system runs other processes) over the interval is compared with
//     elasticLatencyTarget;
//   - above it, the share of the configured rate halves, down to
//     elasticMinShare; at or below it, it grows by elasticStep, up to the
//     whole rate.
//
// A node with idle CPU streams at its configured rate; a saturated one at
// an eighth of it (4 MiB/s at the default 32). An unbounded rate
// (--snapshot-rate 0) is not scaled.
//
// It is off unless turned on (serve --snapshot-rate-elastic). It was off
// first because a copy slowed to an eighth outlived the leader's Raft log
// and was streamed again; the leader now keeps its log for a snapshot on
// its way (cluster/raft's logKeeper, up to 512 MiB of commands). It stays
// off as measured since: slowing the copy makes the move longer, and the
// new replica's own work (its process, the other groups it joins, the
// entries it catches up on) lasts as long as the move, so the writes lose
// about as much or more (BenchmarkClusterReplicaMove at 800 writes a
// second offered into the moving group, 64 MB, load average 13-17: the
// move took 32.6 s instead of 8, the writes ran at 0.74x of the quiet
// rate, against 0.80x without it in an earlier run at load average 5-9;
// one run each).
const (
	elasticInterval      = 100 * time.Millisecond
	elasticLatencyTarget = time.Millisecond
	elasticMinShare      = 1.0 / 8
	elasticStep          = 1.0 / 16
)

// elasticShare is the share of the snapshot rate the store's snapshots
// get now.
type elasticShare struct {
	on      atomic.Bool // scaled at all (SetSnapshotRateElastic); off: the whole rate
	mu      sync.Mutex
	share   float64
	sampled time.Time // when prev was read
	sample  []metrics.Sample
	prev    []uint64 // the histogram's counts then
	// latency reads the scheduling latency histogram into sample (tests
	// replace it).
	latency func(s []metrics.Sample)
}

const schedLatencies = "/sched/latencies:seconds"

func newElasticShare() *elasticShare {
	return &elasticShare{share: 1, sample: []metrics.Sample{{Name: schedLatencies}}, latency: metrics.Read}
}

// current returns the share at now, updating it once per elasticInterval.
func (e *elasticShare) current(now time.Time) float64 {
	if !e.on.Load() {
		return 1
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if now.Sub(e.sampled) < elasticInterval {
		return e.share
	}
	e.latency(e.sample)
	if e.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return e.share // not measured by this runtime: the whole rate
	}
	h := e.sample[0].Value.Float64Histogram()
	first := e.prev == nil || now.Sub(e.sampled) > 10*elasticInterval
	if !first {
		p99 := deltaPercentile(h, e.prev, 0.99)
		if p99 > elasticLatencyTarget.Seconds() {
			e.share = max(e.share/2, elasticMinShare)
		} else {
			e.share = min(e.share+elasticStep, 1)
		}
	}
	// A stale sample (no snapshot ran for a while) says nothing of now:
	// the next interval is measured afresh.
	e.prev = append(e.prev[:0], h.Counts...)
	e.sampled = now
	return e.share
}

// deltaPercentile is the upper bound of the bucket holding the p-th
// quantile of the samples h gained since prev (its counts then); 0 when
// there were none.
func deltaPercentile(h *metrics.Float64Histogram, prev []uint64, p float64) float64 {
	var total uint64
	for i, c := range h.Counts {
		if i < len(prev) {
			c -= prev[i]
		}
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(p * float64(total)))
	var seen uint64
	for i, c := range h.Counts {
		if i < len(prev) {
			c -= prev[i]
		}
		seen += c
		if seen >= want {
			upper := h.Buckets[i+1]
			if math.IsInf(upper, 1) {
				return h.Buckets[i]
			}
			return upper
		}
	}
	return 0
}
