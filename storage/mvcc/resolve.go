package mvcc

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Resolution says what became of a transaction, for ResolveIntent and
// ResolveSpan: Committed at CommitTimestamp, or Aborted. Epoch is the
// transaction's final epoch; intents of older epochs are aborted even when
// it committed (they were written by an attempt that restarted).
type Resolution struct {
	ID              TxnID
	Epoch           uint32
	Status          TxnStatus
	CommitTimestamp hlc.Timestamp
}

func (res *Resolution) check() error {
	switch res.Status {
	case Committed:
		return checkTimestamp(res.CommitTimestamp)
	case Aborted:
		return nil
	}
	return fmt.Errorf("mvcc: resolve to status %v: only COMMITTED or ABORTED resolve intents", res.Status)
}

// ResolveIntent settles the intent of res.ID on userKey, if there is one,
// and releases the transaction's lock records on the key:
//
//   - committed: the intent becomes a committed value or tombstone at the
//     commit timestamp (moved up if the transaction was pushed past its
//     provisional timestamp);
//   - aborted, or written in an older epoch: the intent is deleted and the
//     version under it is the newest again.
//
// An intent of another transaction, or none, is left alone: resolution is
// idempotent, so a retried or duplicated resolution is harmless.
func ResolveIntent(rw ReadWriter, userKey []byte, res Resolution) (Stats, error) {
	if err := res.check(); err != nil {
		return Stats{}, err
	}
	it, err := newPointIter(rw)
	if err != nil {
		return Stats{}, err
	}
	defer it.Close()
	// The iterator does not see the batch's writes made after it was
	// created; the lock records and the versions it reads are disjoint
	// from what releaseLocks deletes, so that is harmless.
	ms, err := releaseLocks(it, rw, userKey, res.ID)
	if err != nil {
		return Stats{}, err
	}
	vs, err := readNewest(it, userKey)
	if err != nil {
		return Stats{}, err
	}
	in := &vs.newest
	if !in.found || !in.v.isIntent() || in.v.txn.ID != res.ID {
		return ms, nil
	}
	ms.Sub(newestStats(in.size(), &in.v, true))
	oldKey := AppendVersionKey(nil, userKey, in.ts)
	if res.Status == Committed && in.v.txn.Epoch == res.Epoch {
		if res.CommitTimestamp.Less(in.ts) {
			return Stats{}, fmt.Errorf("mvcc: commit of %s at %s, before its intent on %s at %s",
				res.ID, res.CommitTimestamp, storage.FormatKey(userKey), in.ts)
		}
		var v []byte
		nv := version{kind: kindValue}
		if in.v.isDelete() {
			v, nv.kind = appendTombstone(nil), kindTombstone
		} else {
			v = appendCommitted(nil, in.v.value)
		}
		k := AppendVersionKey(nil, userKey, res.CommitTimestamp)
		if res.CommitTimestamp != in.ts {
			if err := rw.Delete(oldKey, nil); err != nil {
				return Stats{}, err
			}
		}
		if err := rw.Set(k, v, nil); err != nil {
			return Stats{}, err
		}
		ms.Add(newestStats(int64(len(k)+len(v)), &nv, true))
		return ms, nil
	}
	if err := rw.Delete(oldKey, nil); err != nil {
		return Stats{}, err
	}
	if b := &vs.below; b.found {
		// The version under the intent is the newest again.
		ms.Sub(newestStats(b.size(), &b.v, false))
		ms.Add(newestStats(b.size(), &b.v, true))
	}
	return ms, nil
}

// ResolveSpan resolves every intent and lock record of res.ID among the
// keys of span (a span from the transaction record's LockSpans) and returns
// how many keys it changed.
//
// Intents are found by visiting the newest version of every key in the
// span (an intent is always its key's newest version), so the cost is one
// step per key in the span, not per intent; transactions record point
// spans for the keys they wrote individually, and ranged spans only for
// statements that wrote ranges.
func ResolveSpan(rw ReadWriter, span storage.Span, res Resolution) (ms Stats, n int, err error) {
	if err := res.check(); err != nil {
		return Stats{}, 0, err
	}
	keys, err := keysToResolve(rw, span, res.ID)
	if err != nil {
		return Stats{}, 0, err
	}
	for _, k := range keys {
		d, err := ResolveIntent(rw, k, res)
		if err != nil {
			return Stats{}, 0, err
		}
		if d != (Stats{}) {
			n++
		}
		ms.Add(d)
	}
	return ms, n, nil
}

// keysToResolve lists the user keys in span holding an intent or a lock
// record of id.
func keysToResolve(r Reader, span storage.Span, id TxnID) ([][]byte, error) {
	var keys [][]byte
	lower, upper, err := engineSpan(span)
	if err != nil {
		return nil, err
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok; ok = it.NextPrefix() {
		uk, _, versioned, err := DecodeKey(it.Key())
		if err != nil || !versioned {
			it.Close()
			return nil, firstErr(err, fmt.Errorf("%w: bare key %s in a data span", ErrCorruptKey, FormatKey(it.Key())))
		}
		raw, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return nil, err
		}
		if len(raw) > 1+1+TxnIDLen && (valueKind(raw[0]) == kindIntent || valueKind(raw[0]) == kindIntentDelete) &&
			bytes.Equal(raw[2:2+TxnIDLen], id[:]) {
			keys = append(keys, bytes.Clone(uk))
		}
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	if lower, upper, err = engineSpan(LockTableSpan(span)); err != nil {
		return nil, err
	}
	it, err = r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		uk, _, owner, err := decodeLockKey(it.Key())
		if err != nil {
			it.Close()
			return nil, err
		}
		if owner == id && (len(keys) == 0 || !bytes.Equal(keys[len(keys)-1], uk)) {
			keys = append(keys, bytes.Clone(uk))
		}
	}
	return keys, firstErr(it.Error(), it.Close())
}
