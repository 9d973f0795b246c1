package txn

import (
	"context"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// lockTimeoutKey carries lock_timeout in a statement's context.
type lockTimeoutKey struct{}

// WithLockTimeout makes every lock wait under ctx give up after d with
// 55P03, as PostgreSQL's lock_timeout does. Each wait gets the full d; the
// statement's own deadline (statement_timeout) still applies.
func WithLockTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, lockTimeoutKey{}, d)
}

func lockTimeout(ctx context.Context) time.Duration {
	d, _ := ctx.Value(lockTimeoutKey{}).(time.Duration)
	return d
}

func errLockTimeout() error {
	return sqlerr.New(sqlerr.LockNotAvailable, "canceling statement due to lock timeout")
}
