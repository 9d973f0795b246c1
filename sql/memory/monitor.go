package memory

import (
	"sync"
	"sync/atomic"
	"time"
)

// Monitor is a server-wide pool of bytes that root accounts reserve from.
// It is safe for concurrent use.
type Monitor struct {
	name  string
	limit int64 // 0: unlimited

	mu   sync.Mutex
	used int64
	peak int64

	// ReserveChunk is the least a root account takes from the monitor at
	// a time (it keeps the rest for its next Grow), so that statements
	// growing row by row rarely meet on the monitor's lock. 0: exact.
	ReserveChunk int64
	// FreeOSThreshold and FreeOSInterval tune returning memory to the
	// operating system (release.go); set them before the monitor is used.
	FreeOSThreshold int64
	FreeOSInterval  time.Duration
	freer           freer
	lastProbe       atomic.Int64 // unix nanoseconds of the last heapFree read
}

// Defaults of Monitor.FreeOSThreshold and FreeOSInterval.
const (
	DefaultReserveChunk    = 64 << 10
	DefaultFreeOSThreshold = 32 << 20
	DefaultFreeOSInterval  = time.Second
)

// NewMonitor returns a pool of limit bytes (0: unlimited, which still
// counts). name appears in error details ("--max-memory").
func NewMonitor(name string, limit int64) *Monitor {
	return &Monitor{name: name, limit: limit, ReserveChunk: DefaultReserveChunk,
		FreeOSThreshold: DefaultFreeOSThreshold, FreeOSInterval: DefaultFreeOSInterval}
}

// Limit returns the monitor's limit in bytes (0: unlimited).
func (m *Monitor) Limit() int64 { return m.limit }

// Used returns the bytes reserved now (by root accounts, in chunks).
func (m *Monitor) Used() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// Peak returns the most bytes ever reserved at once.
func (m *Monitor) Peak() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// reserve takes n bytes from the pool, or reports how much was in use when
// that would exceed the limit.
func (m *Monitor) reserve(n int64) (ok bool, used int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.limit > 0 && m.used+n > m.limit {
		return false, m.used
	}
	m.used += n
	m.peak = max(m.peak, m.used)
	return true, m.used
}

func (m *Monitor) release(n int64) {
	m.mu.Lock()
	m.used -= n
	if m.used < 0 {
		m.mu.Unlock()
		panic("memory: monitor released more than it reserved")
	}
	m.mu.Unlock()
}

// NewAccount opens a root account of this pool with its own limit (0: only
// the pool's limit applies).
func (m *Monitor) NewAccount(name string, limit int64) *Account {
	return &Account{mon: m, name: name, limit: limit}
}
