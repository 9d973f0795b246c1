package mvcc

import (
	"bytes"

	"github.com/pivotdb/pivotdb/storage"
)

// RollbackToSeq undoes, on userKey, what transaction id did in epoch after
// sequence number seq: ROLLBACK TO SAVEPOINT, whose savepoint is the
// transaction's Seq when it was taken. Its intent goes back to its newest
// write at or before seq (from the intent's history), or is deleted if
// there is none — the version under it is the newest again — and its lock
// records taken after seq are released. Nothing else changes: the intent
// keeps its timestamp, and other transactions' data is not touched.
//
// The undo is eager, so that reads and resolution never need to know which
// sequence numbers were rolled back: the layer above calls it (or
// RollbackSpanToSeq) for every key it wrote or locked since the savepoint,
// before the transaction goes on.
func RollbackToSeq(rw ReadWriter, userKey []byte, id TxnID, epoch uint32, seq int32) (Stats, error) {
	var ms Stats
	it, err := newPointIter(rw)
	if err != nil {
		return ms, err
	}
	defer it.Close()
	// Lock records taken after the savepoint.
	prefix := AppendBareKey(lockPrefix(userKey), nil)
	var del [][]byte
	for ok := it.SeekPrefixGE(prefix); ok; ok = it.Next() {
		k := it.Key()
		if !bytes.HasPrefix(k, prefix) || split(k) != len(prefix) {
			break
		}
		_, _, owner, err := decodeLockKey(k)
		if err != nil {
			return Stats{}, err
		}
		if owner != id {
			continue
		}
		meta, _, err := decodeTxnMeta(it.Value())
		if err != nil {
			return Stats{}, err
		}
		if meta.Epoch == epoch && meta.Seq > seq {
			del = append(del, bytes.Clone(k))
			ms.LockBytes -= int64(len(k) + len(it.Value()))
			ms.LockCount--
		}
	}
	if err := it.Error(); err != nil {
		return Stats{}, err
	}
	for _, k := range del {
		if err := rw.Delete(k, nil); err != nil {
			return Stats{}, err
		}
	}

	vs, err := readNewest(it, userKey)
	if err != nil {
		return Stats{}, err
	}
	in := &vs.newest
	if !in.found || !in.v.isIntent() || in.v.txn.ID != id || in.v.txn.Epoch != epoch || in.v.txn.Seq <= seq {
		return ms, nil
	}
	ms.Sub(newestStats(in.size(), &in.v, true))
	k := AppendVersionKey(nil, userKey, in.ts)
	// The newest write at or before the savepoint becomes the intent's own.
	keep := -1
	for i, h := range in.v.history {
		if h.seq <= seq {
			keep = i
		}
	}
	if keep < 0 {
		if err := rw.Delete(k, nil); err != nil {
			return Stats{}, err
		}
		if b := &vs.below; b.found {
			ms.Sub(newestStats(b.size(), &b.v, false))
			ms.Add(newestStats(b.size(), &b.v, true))
		}
		return ms, nil
	}
	h := in.v.history[keep]
	meta := in.v.txn
	meta.Seq = h.seq
	v := appendIntent(nil, &meta, in.v.strength, in.v.history[:keep], h.value, h.isDelete)
	if err := rw.Set(k, v, nil); err != nil {
		return Stats{}, err
	}
	nv := version{kind: kindIntent}
	if h.isDelete {
		nv.kind = kindIntentDelete
	}
	ms.Add(newestStats(int64(len(k)+len(v)), &nv, true))
	return ms, nil
}

// RollbackSpanToSeq is RollbackToSeq for every key of span holding an
// intent or a lock record of id.
func RollbackSpanToSeq(rw ReadWriter, span storage.Span, id TxnID, epoch uint32, seq int32) (Stats, error) {
	keys, err := keysToResolve(rw, span, id)
	if err != nil {
		return Stats{}, err
	}
	var ms Stats
	for _, k := range keys {
		d, err := RollbackToSeq(rw, k, id, epoch, seq)
		if err != nil {
			return Stats{}, err
		}
		ms.Add(d)
	}
	return ms, nil
}
