package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Account is one user's share of a Monitor: a statement, a protocol
// message, a portal. It is safe for concurrent use (the scan workers of a
// statement and its consumer may both grow it).
type Account struct {
	mon    *Monitor
	parent *Account // nil for a root account
	name   string
	limit  int64 // 0: no limit of its own

	mu   sync.Mutex
	used int64
	// reserved is what a root account took from the monitor: at least
	// used, rounded up to Monitor.ReserveChunk.
	reserved int64
	closed   bool
}

// Child opens an account whose reservations also count in a (and its
// ancestors and monitor), with a limit of its own (0: none). A nil a gives
// a nil child.
func (a *Account) Child(name string, limit int64) *Account {
	if a == nil {
		return nil
	}
	return &Account{mon: a.mon, parent: a, name: name, limit: limit}
}

// Used returns the bytes this account (with its children) holds.
func (a *Account) Used() int64 {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used
}

// Grow reserves n more bytes for what (a short phrase for the error:
// "parsing", "an IN list"). Over any limit it reserves nothing and returns
// 53200.
func (a *Account) Grow(n int64, what string) error {
	if a == nil || n <= 0 {
		return nil
	}
	return a.grow(n, n, what)
}

// grow reserves n in a and its ancestors; req is the original request for
// the error. Locks are taken from the account towards the root, never
// back.
func (a *Account) grow(n, req int64, what string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return sqlerr.New(sqlerr.InternalError, "memory: account %q used after Close", a.name)
	}
	if a.limit > 0 && a.used+n > a.limit {
		return outOfMemory(req, what, fmt.Sprintf("the %s holds %d bytes of its %d-byte budget", a.name, a.used, a.limit),
			"Narrow the statement, or raise the server's --max-query-memory.")
	}
	if a.parent != nil {
		if err := a.parent.grow(n, req, what); err != nil {
			return err
		}
	} else if need := a.used + n - a.reserved; need > 0 {
		// A root account takes at least a chunk from the monitor, so
		// that row-by-row growth does not meet on the monitor's lock.
		take := max(need, a.mon.ReserveChunk)
		ok, used := a.mon.reserve(take)
		if !ok && take > need {
			take = need
			ok, used = a.mon.reserve(take)
		}
		if !ok {
			return outOfMemory(req, what, fmt.Sprintf("the server holds %d bytes of its %d-byte budget (%s)", used, a.mon.limit, a.mon.name),
				"Retry when fewer large statements run at once, or raise the server's --max-memory.")
		}
		a.reserved += take
	}
	a.used += n
	return nil
}

// Shrink gives back n bytes reserved earlier. A root account keeps up to
// two chunks of what it took from the monitor for its next Grow.
func (a *Account) Shrink(n int64) {
	if a == nil || n <= 0 {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	n = min(n, a.used)
	a.used -= n
	if a.parent != nil {
		a.mu.Unlock()
		a.parent.Shrink(n)
		return
	}
	var give int64
	if chunk := a.mon.ReserveChunk; a.reserved-a.used > 2*chunk {
		give = a.reserved - a.used - chunk
		a.reserved -= give
	}
	a.mu.Unlock()
	if give > 0 {
		a.mon.release(give)
		a.mon.maybeFreeOS(give)
	}
}

// Close gives back everything the account holds. Closing twice is a
// no-op; growing a closed account fails.
func (a *Account) Close() {
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	n, reserved := a.used, a.reserved
	a.used, a.reserved, a.closed = 0, 0, true
	a.mu.Unlock()
	if a.parent != nil {
		a.parent.Shrink(n)
		return
	}
	a.mon.release(reserved)
	a.mon.maybeFreeOS(reserved)
}

func outOfMemory(req int64, what, state, hint string) error {
	return &sqlerr.Error{Code: sqlerr.OutOfMemory, Message: "out of memory",
		Detail: fmt.Sprintf("Failed on request of size %d bytes for %s: %s.", req, what, state), Hint: hint}
}

type accountKey struct{}

// WithAccount returns ctx carrying a, the account of the statement that
// runs under ctx.
func WithAccount(ctx context.Context, a *Account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// FromContext returns the account ctx carries, or nil (no budget).
func FromContext(ctx context.Context) *Account {
	if ctx == nil {
		return nil
	}
	a, _ := ctx.Value(accountKey{}).(*Account)
	return a
}
