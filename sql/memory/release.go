package memory

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// freer runs debug.FreeOSMemory after large releases, at most once per
// interval. FreeOSMemory forces a garbage collection and returns the freed
// heap to the operating system: without it Go keeps the heap a large
// statement left behind (a 60 MB value kept the server at 1.4 GB RSS).
// Requests coalesce: one run after the last of a burst of releases, never
// more than one at a time, never on the goroutine that released.
type freer struct {
	mu        sync.Mutex
	scheduled bool
	last      time.Time
	runs      int64
	// run replaces defaultFreeOSMemory in tests; it is the monitor's own,
	// so a run scheduled by one test never calls another test's function.
	run func()
}

// defaultFreeOSMemory is what a run does. The first collection moves
// sync.Pool contents (pgproto3 keeps message buffers in pools) to the
// pools' victim caches, the second, in FreeOSMemory, drops them, and
// FreeOSMemory then returns the free pages.
func defaultFreeOSMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// maybeFreeOS schedules a run when n bytes released reach the threshold,
// or when the heap holds at least twice the threshold of free pages not yet
// returned: a statement may have read far more than it reserved (values
// stream out of storage row by row, unreserved), and its garbage, once
// collected, stays in RSS until the runtime's background scavenger gets
// to it, which it does slowly while the heap is under its limit.
func (m *Monitor) maybeFreeOS(n int64) {
	if m.FreeOSThreshold <= 0 || (n < m.FreeOSThreshold && !m.heapHoldsFree()) {
		return
	}
	f := &m.freer
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.scheduled {
		return
	}
	f.scheduled = true
	delay := max(0, m.FreeOSInterval-time.Since(f.last))
	time.AfterFunc(delay, func() {
		// Unmark first: a large release during the run schedules the
		// next one, so one always follows the last release.
		f.mu.Lock()
		f.scheduled = false
		f.last = time.Now()
		run := f.run
		f.mu.Unlock()
		if run == nil {
			run = defaultFreeOSMemory
		}
		run()
		f.mu.Lock()
		f.runs++
		f.mu.Unlock()
	})
}

// heapProbeInterval spaces the reads of the heap's free pages: statements
// end far more often than memory needs returning.
const heapProbeInterval = 100 * time.Millisecond

// heapHoldsFree reports whether the heap holds at least twice
// FreeOSThreshold of free pages not returned to the operating system,
// reading the runtime's metrics at most once per heapProbeInterval.
func (m *Monitor) heapHoldsFree() bool {
	now := time.Now().UnixNano()
	last := m.lastProbe.Load()
	if now-last < int64(heapProbeInterval) || !m.lastProbe.CompareAndSwap(last, now) {
		return false
	}
	return heapFree() >= 2*m.FreeOSThreshold
}

var heapFreeSample = []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
var heapFreeMu sync.Mutex

// heapFree returns the bytes of free heap pages the runtime has not
// returned to the operating system.
func heapFree() int64 {
	heapFreeMu.Lock()
	defer heapFreeMu.Unlock()
	metrics.Read(heapFreeSample)
	if heapFreeSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(heapFreeSample[0].Value.Uint64())
}

// FreeOSRuns returns how many times the monitor returned memory to the
// operating system.
func (m *Monitor) FreeOSRuns() int64 {
	m.freer.mu.Lock()
	defer m.freer.mu.Unlock()
	return m.freer.runs
}
