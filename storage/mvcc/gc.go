package mvcc

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// GCThresholdKey returns the engine key holding the GC threshold of the
// shard whose span starts at spanStart (0x03 0x03 <span start>, a bare key).
// The shard keeps it in its own key space (issue 16, item 7), so it travels
// with the shard's data.
func GCThresholdKey(spanStart []byte) []byte {
	k := append([]byte{LocalPrefix, localGCState}, spanStart...)
	return AppendBareKey(k, nil)
}

// ReadGCThreshold returns the shard's GC threshold (zero if GC never ran).
func ReadGCThreshold(r Reader, spanStart []byte) (hlc.Timestamp, error) {
	v, ok, err := getRaw(r, GCThresholdKey(spanStart))
	if err != nil || !ok {
		return hlc.Timestamp{}, err
	}
	if len(v) != 12 {
		return hlc.Timestamp{}, fmt.Errorf("%w: GC threshold of %d bytes", ErrCorruptValue, len(v))
	}
	return decodeTimestamp(v), nil
}

// WriteGCThreshold sets the shard's GC threshold, as GC does; a split
// writes the parent's threshold for the new shard in the split's batch.
func WriteGCThreshold(w Writer, spanStart []byte, ts hlc.Timestamp) error {
	return w.Set(GCThresholdKey(spanStart), appendTimestamp(nil, ts), nil)
}

// GC removes the versions in span that no read at or above threshold can
// see, and records threshold as the shard's GC threshold (at span.Start) in
// the same batch. For each key it keeps every version above the threshold
// and the newest committed version at or below it — the one a read at the
// threshold sees — unless that is a tombstone, which then goes too (a read
// finds nothing either way). Older versions go. Intents are never removed:
// they belong to a live transaction and resolution settles them.
//
// The threshold must not be above any open snapshot's timestamp or the
// retention window; the caller (the shard's GC runner) picks it. A threshold
// lower than the recorded one is refused: reads between the two may
// already have lost versions.
func GC(rw ReadWriter, span storage.Span, threshold hlc.Timestamp) (ms Stats, err error) {
	if err := checkTimestamp(threshold); err != nil {
		return ms, err
	}
	old, err := ReadGCThreshold(rw, span.Start)
	if err != nil {
		return ms, err
	}
	if threshold.Less(old) {
		return ms, fmt.Errorf("mvcc: GC threshold %s below the recorded %s", threshold, old)
	}
	lower, upper, err := engineSpan(span)
	if err != nil {
		return ms, err
	}
	it, err := rw.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return ms, err
	}
	var del [][]byte
	var cur []byte
	kept := false
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		uk, ts, versioned, err := DecodeKey(k)
		if err != nil || !versioned {
			it.Close()
			return Stats{}, firstErr(err, fmt.Errorf("%w: bare key %s in a data span", ErrCorruptKey, FormatKey(k)))
		}
		if cur == nil || !bytes.Equal(uk, cur) {
			cur, kept = append(cur[:0:0], uk...), false
		}
		if threshold.Less(ts) {
			continue // above the threshold: readers may see it
		}
		raw, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return Stats{}, err
		}
		if len(raw) == 0 {
			it.Close()
			return Stats{}, fmt.Errorf("%w: empty version value at %s", ErrCorruptValue, FormatKey(k))
		}
		kind := valueKind(raw[0])
		if kind == kindIntent || kind == kindIntentDelete {
			continue
		}
		if !kept {
			kept = true
			if kind != kindTombstone {
				continue // the version a read at the threshold sees
			}
		}
		// A version under the kept one, or a kept tombstone: garbage, and
		// counted as old (a tombstone is old even when it is the newest).
		del = append(del, bytes.Clone(k))
		ms.OldBytes -= int64(len(k) + len(raw))
		ms.OldCount--
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return Stats{}, err
	}
	for _, k := range del {
		if err := rw.Delete(k, nil); err != nil {
			return Stats{}, err
		}
	}
	return ms, WriteGCThreshold(rw, span.Start, threshold)
}
