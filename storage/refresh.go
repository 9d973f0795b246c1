package storage

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Read refresh (SERIALIZABLE, sql/txn): a transaction reads at its read
// timestamp and commits at a later commit timestamp; it is serializable at
// the commit timestamp only if none of what it read changed in between. So
// its commit checks, for every span it read, that no version was committed
// in (read ts, commit ts] — storage/mvcc's CheckRefresh over this engine's
// store — and that check must be atomic with respect to the commits below
// the commit timestamp: a commit taking a smaller timestamp and landing
// after the check would have been missed. Batch.SetCommitCheck runs the
// check inside Commit, after the commit took its timestamp and after every
// commit registered before it (exactly those with smaller timestamps) is
// visible; the commits registered after it have larger timestamps, which
// the check ignores. Waiting cannot deadlock: a commit only waits for
// commits registered before it, which never wait for it.

// RefreshConflictError is the failure of a read refresh: Key has a version
// committed at Timestamp, after the read timestamp From and at or below
// the commit timestamp, so a read of Key at From may have seen something
// else than a read at the commit timestamp would.
type RefreshConflictError struct {
	Key       []byte
	Timestamp hlc.Timestamp
	From      hlc.Timestamp
}

func (e *RefreshConflictError) Error() string {
	return fmt.Sprintf("storage: read refresh failed: %s has a version at %s, after the read timestamp %s",
		FormatKey(e.Key), e.Timestamp, e.From)
}

// SetCommitCheck makes Commit run check with the commit timestamp once
// every commit below that timestamp is visible and before the batch lands
// (see the comment above); an error from check fails the commit, which
// then writes nothing. A batch with a check takes a commit timestamp even
// if it holds no versioned write, so that the check has one.
func (b *Batch) SetCommitCheck(check func(commitTS hlc.Timestamp) error) { b.commitCheck = check }

// waitBelow waits until every commit registered before id is visible (or
// failed).
func (t *commitTracker) waitBelow(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.anyBelow(id) {
		t.cond.Wait()
	}
}

// committedVersion reports whether the iterator's version is a committed
// value or tombstone (versions.go's tags).
func committedVersion(it *pebble.Iterator) bool {
	v, err := it.ValueAndErr()
	if err != nil || len(v) == 0 {
		return false
	}
	return v[0] == tagValue || (v[0] == tagTombstone && len(v) == 1)
}

// CheckRefresh reports whether reads of span at from would return the same
// at to: nil unless a versioned key in span has a version in (from, to],
// then a *RefreshConflictError naming the first such key. Only table keys
// (versioned) are checked; the system area has no history to check. Call
// it from a commit check (SetCommitCheck), where every commit at or below
// to is visible; elsewhere commits in flight may be missed.
func (e *Engine) CheckRefresh(span Span, from, to hlc.Timestamp) error {
	if to.Less(from) {
		return fmt.Errorf("storage: refresh from %s back to %s", from, to)
	}
	span = span.Intersect(Span{Start: []byte{TableDataPrefix}, End: []byte{TableDataPrefix + 1}})
	if span.Empty() {
		return nil
	}
	lower, upper := engineBounds(span)
	it, err := e.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; {
		uk, ts, versioned := enginekey.DecodeVersion(it.Key())
		if versioned && ts.LessEq(to) && !committedVersion(it) {
			// Not a committed value or tombstone: a provisional version
			// (storage/mvcc's intent) whose fate decides what a read at
			// to sees, whatever its timestamp. This engine writes none
			// yet; when it does, its own transaction's must be told
			// apart (mvcc.CheckRefresh does).
			return &RefreshConflictError{Key: bytes.Clone(uk), Timestamp: ts, From: from}
		}
		switch {
		case !versioned:
			// A bare key in the table area is nobody's committed data.
			ok = it.Next()
		case ts.LessEq(from):
			// This version and every older one were there at from.
			ok = it.NextPrefix()
		case ts.LessEq(to):
			return &RefreshConflictError{Key: bytes.Clone(uk), Timestamp: ts, From: from}
		default:
			// Above to: committed after the commit, so ordered after it.
			ok = it.Next()
		}
	}
	return it.Error()
}
