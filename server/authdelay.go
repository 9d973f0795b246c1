package server

import (
	"context"
	"net"
	"sync"
	"time"
)

// Failed logins are slowed down per client address, as PostgreSQL's
// auth_delay module does, but growing: the n-th failure in a row from one
// address waits Config.AuthFailureDelay × 2^(n-1), at most
// Config.AuthFailureMaxDelay, before the client hears FATAL 28P01. A
// successful login from the address resets its count, and so does a quiet
// spell of authThrottleForget. Without it one client could try hundreds of
// passwords a second.
//
// The delay runs on the failing connection's goroutine before it answers, so
// a client cannot tell a slow failure from a slow server by the socket, and
// parallel connections from one address all see the grown delay (they share
// the count); Config.MaxConnections bounds how many wait at once.

// Defaults of the throttle (--auth-failure-delay, --auth-failure-max-delay).
const (
	DefaultAuthFailureDelay    = 100 * time.Millisecond
	DefaultAuthFailureMaxDelay = 10 * time.Second
)

// authThrottleForget is how long an address must stay without failures for
// its count to be forgotten.
const authThrottleForget = 10 * time.Minute

// authThrottleMaxAddrs bounds the addresses remembered; beyond it the
// oldest quiet ones are dropped first, so a spray of addresses cannot grow
// the map without bound.
const authThrottleMaxAddrs = 100_000

type authThrottle struct {
	base, max time.Duration
	now       func() time.Time

	mu    sync.Mutex
	addrs map[string]*authFailures
}

type authFailures struct {
	n    int
	last time.Time
}

func newAuthThrottle(base, max time.Duration) *authThrottle {
	return &authThrottle{base: base, max: max, now: time.Now, addrs: make(map[string]*authFailures)}
}

// failed records a failed login from addr and returns how long to wait
// before answering it.
func (a *authThrottle) failed(addr string) time.Duration {
	if a.base <= 0 {
		return 0
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.addrs[addr]
	if f == nil || now.Sub(f.last) > authThrottleForget {
		if len(a.addrs) >= authThrottleMaxAddrs {
			a.pruneLocked(now)
		}
		f = &authFailures{}
		a.addrs[addr] = f
	}
	f.n++
	f.last = now
	d := a.base
	for i := 1; i < f.n && d < a.max; i++ {
		d *= 2
	}
	return min(d, max(a.max, a.base))
}

// succeeded forgets addr's failures.
func (a *authThrottle) succeeded(addr string) {
	a.mu.Lock()
	delete(a.addrs, addr)
	a.mu.Unlock()
}

// pruneLocked drops forgotten addresses, and if that is not enough, half
// of the map (Go's map order is random, so which half is arbitrary).
func (a *authThrottle) pruneLocked(now time.Time) {
	for k, f := range a.addrs {
		if now.Sub(f.last) > authThrottleForget {
			delete(a.addrs, k)
		}
	}
	for k := range a.addrs {
		if len(a.addrs) < authThrottleMaxAddrs/2 {
			break
		}
		delete(a.addrs, k)
	}
}

// clientHost is the address a connection's failures are counted under: the
// remote IP without the port.
func clientHost(addr net.Addr) string {
	if addr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}

// sleepCtx waits d or until ctx is done (shutdown).
func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
