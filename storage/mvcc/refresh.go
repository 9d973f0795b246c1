package mvcc

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// CheckRefresh is the storage half of a read refresh (CockroachDB's way to
// keep SERIALIZABLE when a transaction must commit above the timestamp it
// read at): it reports whether the reads txn made over span at from would
// have returned the same at to. They would unless a version was committed
// in (from, to] — WriteConflictError naming it — or another transaction
// holds an intent at or below to, whose fate decides — LockConflictError.
// The transaction's own intents are ignored: it wrote them.
func CheckRefresh(r Reader, span storage.Span, txn *TxnMeta, from, to hlc.Timestamp) error {
	if err := checkTimestamp(to); err != nil {
		return err
	}
	if to.Less(from) {
		return fmt.Errorf("mvcc: refresh from %s back to %s", from, to)
	}
	lower, upper, err := engineSpan(span)
	if err != nil {
		return err
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; {
		uk, ts, ok2 := decodeVersion(it.Key())
		if !ok2 {
			it.Close()
			return fmt.Errorf("%w: %s is not a version", ErrCorruptKey, FormatKey(it.Key()))
		}
		raw, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		v, err := decodeVersionValue(raw)
		if err != nil {
			it.Close()
			return err
		}
		switch {
		case v.isIntent():
			if v.txn.ID != idOf(txn) && ts.LessEq(to) {
				it.Close()
				return intentConflict(uk, &versionAt{v: v})
			}
		case from.Less(ts) && ts.LessEq(to):
			it.Close()
			return &WriteConflictError{Key: bytes.Clone(uk), Existing: ts, ReadTimestamp: from}
		}
		if ts.LessEq(from) {
			// This version and every older one were there at from already.
			ok = it.NextPrefix()
		} else {
			ok = it.Next()
		}
	}
	return firstErr(it.Error(), it.Close())
}
