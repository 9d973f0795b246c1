package activity

import (
	"context"
	"sort"
	"sync"
	"time"
)

// States a backend reports in pg_stat_activity.state, as PostgreSQL names
// them.
const (
	StateActive            = "active"
	StateIdle              = "idle"
	StateIdleInTransaction = "idle in transaction"
	StateIdleInFailedTx    = "idle in transaction (aborted)"
)

// Registry holds the live backends by process ID. The zero value is not
// usable; use NewRegistry. A nil *Registry holds nothing.
type Registry struct {
	mu    sync.Mutex
	byPID map[uint32]*Backend
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byPID: make(map[uint32]*Backend)} }

// Info is what a backend is fixed with at its start.
type Info struct {
	PID            uint32
	Database, User string
	// ApplicationName is the name at startup; SetApplicationName follows
	// SET application_name.
	ApplicationName string
	ClientAddr      string // host of the client, "" for a Unix socket or pipe
	ClientPort      int
	// Cancel cancels the running statement, if any (pg_cancel_backend);
	// Terminate ends the connection (pg_terminate_backend). Both are called
	// from other sessions' goroutines.
	Cancel, Terminate func()
}

// Backend is one live session.
type Backend struct {
	Info
	reg   *Registry
	start time.Time

	mu          sync.Mutex
	state       string
	query       string
	xactStart   time.Time
	queryStart  time.Time
	stateChange time.Time
	waitType    string
	wait        string
	appName     string
}

// Snapshot is a copy of a backend's fields at one moment.
type Snapshot struct {
	Info
	BackendStart, XactStart, QueryStart, StateChange time.Time
	State, Query, WaitEventType, WaitEvent           string
}

// Register adds a backend, idle from now on. Unregister removes it.
func (r *Registry) Register(info Info) *Backend {
	now := time.Now()
	b := &Backend{Info: info, reg: r, start: now, state: StateIdle, stateChange: now, appName: info.ApplicationName}
	if r == nil {
		return b
	}
	r.mu.Lock()
	r.byPID[info.PID] = b
	r.mu.Unlock()
	return b
}

// Unregister removes b (its connection ended).
func (r *Registry) Unregister(b *Backend) {
	if r == nil || b == nil {
		return
	}
	r.mu.Lock()
	if r.byPID[b.PID] == b {
		delete(r.byPID, b.PID)
	}
	r.mu.Unlock()
}

// Lookup finds the live backend with pid.
func (r *Registry) Lookup(pid uint32) (*Backend, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.byPID[pid]
	return b, ok
}

// List returns a snapshot of every live backend, by PID.
func (r *Registry) List() []Snapshot {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	bs := make([]*Backend, 0, len(r.byPID))
	for _, b := range r.byPID {
		bs = append(bs, b)
	}
	r.mu.Unlock()
	out := make([]Snapshot, len(bs))
	for i, b := range bs {
		out[i] = b.Snapshot()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// Registry is the registry b is in (nil for a backend made without one).
func (b *Backend) Registry() *Registry {
	if b == nil {
		return nil
	}
	return b.reg
}

// Snapshot copies b's fields.
func (b *Backend) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	info := b.Info
	info.ApplicationName = b.appName
	return Snapshot{Info: info, BackendStart: b.start, XactStart: b.xactStart, QueryStart: b.queryStart,
		StateChange: b.stateChange, State: b.state, Query: b.query, WaitEventType: b.waitType, WaitEvent: b.wait}
}

// SetApplicationName records a new application_name of the session.
func (b *Backend) SetApplicationName(name string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.appName = name
	b.mu.Unlock()
}

// StartQuery marks b active running query; inTx tells whether a
// transaction (implicit or a block) was already open, which keeps its
// xact_start.
func (b *Backend) StartQuery(query string, inTx bool) {
	if b == nil {
		return
	}
	now := time.Now()
	b.mu.Lock()
	b.query = query
	b.queryStart = now
	if !inTx || b.xactStart.IsZero() {
		b.xactStart = now
	}
	if b.state != StateActive {
		b.state = StateActive
		b.stateChange = now
	}
	b.mu.Unlock()
}

// Idle marks b waiting for its client; txStatus is the ReadyForQuery
// status ('I' outside a block, 'T' in one, 'E' in a failed one).
func (b *Backend) Idle(txStatus byte) {
	if b == nil {
		return
	}
	state := StateIdle
	switch txStatus {
	case 'T':
		state = StateIdleInTransaction
	case 'E':
		state = StateIdleInFailedTx
	}
	now := time.Now()
	b.mu.Lock()
	if state == StateIdle {
		b.xactStart = time.Time{}
	}
	if b.state != state {
		b.state = state
		b.stateChange = now
	}
	b.waitType, b.wait = "", ""
	b.mu.Unlock()
}

// Wait marks b as waiting on an event (pg_stat_activity.wait_event_type
// and wait_event, e.g. "Lock", "transactionid") until the returned func is
// called.
func (b *Backend) Wait(eventType, event string) (done func()) {
	if b == nil {
		return func() {}
	}
	b.mu.Lock()
	b.waitType, b.wait = eventType, event
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.waitType, b.wait = "", ""
		b.mu.Unlock()
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying b.
func NewContext(ctx context.Context, b *Backend) context.Context {
	return context.WithValue(ctx, ctxKey{}, b)
}

// FromContext returns the backend ctx carries, or nil (whose methods do
// nothing).
func FromContext(ctx context.Context) *Backend {
	if ctx == nil {
		return nil
	}
	b, _ := ctx.Value(ctxKey{}).(*Backend)
	return b
}
