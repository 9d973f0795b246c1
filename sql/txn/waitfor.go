package txn

import "context"

// WaitFor makes owner wait until released is closed, recorded in the
// wait-for graph as waiting for holder on key, so that deadlock detection
// sees the wait: a wait for something other than a lock of this package
// (an autocommit write waiting for the block that changes its table's
// schema, sql/txnddl.go) that the holder may in turn wait for through a
// lock owner holds. Errors as for a lock: 40P01 when holder already waits
// for owner, 55P03 past the context's lock_timeout, the context's error.
func (m *Manager) WaitFor(ctx context.Context, owner, holder uint64, pid uint32, key []byte, released chan struct{}) error {
	return m.locks.wait(ctx, LockInfo{Key: string(key), Txn: owner, PID: pid, Holder: holder}, released)
}
