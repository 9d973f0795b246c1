package storage

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"sync"

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
// check inside Commit, after the commit took its timestamp; the commits
// registered after it have larger timestamps, which the check ignores, and
// those registered before it (exactly those with smaller timestamps) are
// either visible, or still in flight: the check is handed the keys those
// write (InFlight), taken under the registry's lock before it opens its
// iterators, so each commit below is seen in one place or the other. A
// commit in flight whose keys are unknown is waited for instead. Commits
// record their keys only while some transaction may refresh (Refreshing),
// so READ COMMITTED workloads pay nothing; a commit that registered before
// any did is waited for. Waiting cannot deadlock: a commit only waits for
// commits registered before it, which never wait for it. Not waiting
// matters: waiting for the commits below queues each SERIALIZABLE commit's
// fsync behind theirs instead of sharing one group commit
// (BenchmarkCommitConcurrent in sql/txn, 8 writers with fsync on a shared
// disk: about 0.4-0.7 ms per commit, as REPEATABLE READ's 0.25-0.7 ms;
// 0.9-3.8 ms when waiting).

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

// SetCommitCheck makes Commit run check with the commit timestamp and the
// commits below it still in flight, before the batch lands (see the
// comment above): a check of the store (CheckRefresh, whose iterators open
// after the check begins) and of inflight together covers every commit
// below the commit timestamp. An error from check fails the commit, which
// then writes nothing. A batch with a check takes a commit timestamp even
// if it holds no versioned write, so that the check has one.
func (b *Batch) SetCommitCheck(check func(commitTS hlc.Timestamp, inflight InFlight) error) {
	b.commitCheck = check
}

// Refreshing tells the engine that a transaction that may refresh its
// reads at commit (SERIALIZABLE) is open, before it takes its read
// timestamp; call done when it ends. Meanwhile commits record the keys
// they write for the refreshes.
func (e *Engine) Refreshing() (done func()) {
	e.commits.refreshers.Add(1)
	var once sync.Once
	return func() { once.Do(func() { e.commits.refreshers.Add(-1) }) }
}

// inflightKeys are the user keys of the versioned writes of a commit in
// flight, sorted.
type inflightKeys struct{ keys [][]byte }

// firstIn returns the first key in span, nil if none.
func (k *inflightKeys) firstIn(span Span) []byte {
	i := sort.Search(len(k.keys), func(i int) bool { return bytes.Compare(k.keys[i], span.Start) >= 0 })
	if i < len(k.keys) && (span.End == nil || bytes.Compare(k.keys[i], span.End) < 0) {
		return k.keys[i]
	}
	return nil
}

// collectKeys returns the keys of src's versioned writes, or nil when it
// holds a range deletion (whose keys a list cannot give).
func collectKeys(src *pebble.Batch) (*inflightKeys, error) {
	out := &inflightKeys{}
	r := src.Reader()
	for {
		kind, k, _, ok, err := r.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			if len(k) > 0 && k[len(k)-1] == 0 && isVersioned(k[:len(k)-1]) {
				out.keys = append(out.keys, bytes.Clone(k[:len(k)-1]))
			}
		case pebble.InternalKeyKindRangeDelete:
			return nil, nil
		}
	}
	slices.SortFunc(out.keys, bytes.Compare)
	return out, nil
}

// InFlight is the commits below a commit's timestamp that were still in
// flight when its check began (SetCommitCheck): the store may not show
// their writes yet.
type InFlight struct{ commits []*inflightKeys }

// Conflict returns a key in span that one of them writes, nil if none.
func (f InFlight) Conflict(span Span) []byte {
	for _, c := range f.commits {
		if k := c.firstIn(span); k != nil {
			return k
		}
	}
	return nil
}

// inFlightBelow waits for the commits registered before id whose keys are
// unknown, and returns those of the others still in flight.
func (t *commitTracker) inFlightBelow(id uint64) InFlight {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		var f InFlight
		unknown := false
		for other, keys := range t.open {
			switch {
			case other >= id:
			case keys == nil:
				unknown = true
			default:
				f.commits = append(f.commits, keys)
			}
		}
		if !unknown {
			return f
		}
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
			// Not a committed value or tombstone at or below to: an
			// intent of storage/mvcc's own layout. This engine's intents
			// (intents.go) are above every commit timestamp and never
			// get here; a committing transaction's intents are resolved
			// while its commit is in flight with unknown keys, which the
			// refresh waits for.
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
