package mvcc

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// The oracle: per key, its versions newest first, and the lock records.
type oVersion struct {
	ts       hlc.Timestamp
	kind     valueKind
	txn      TxnID
	epoch    uint32
	seq      int32
	strength Strength
	value    string
	history  []oWrite // intents: earlier writes of the epoch, oldest first
}

type oWrite struct {
	seq   int32
	del   bool
	value string
}

type oLock struct {
	txn      TxnID
	epoch    uint32
	seq      int32
	strength Strength
}

type oracle struct {
	versions map[string][]oVersion
	locks    map[string][]oLock
	gc       hlc.Timestamp
}

type errClass int

const (
	errNone errClass = iota
	errLock
	errWrite
	errGC
	errUncertain
)

func classify(err error) errClass {
	var lc *LockConflictError
	var wc *WriteConflictError
	var gc *BelowGCThresholdError
	var ru *ReadWithinUncertaintyError
	switch {
	case err == nil:
		return errNone
	case errors.As(err, &ru):
		return errUncertain
	case errors.As(err, &lc):
		return errLock
	case errors.As(err, &wc):
		return errWrite
	case errors.As(err, &gc):
		return errGC
	}
	return -1
}

func (o *oracle) lockConflict(key string, txn *TxnMeta, strength Strength) bool {
	for _, l := range o.locks[key] {
		if (txn == nil || l.txn != txn.ID) && l.strength.Conflicts(strength) {
			return true
		}
	}
	return false
}

// write mirrors writeVersion.
func (o *oracle) write(key string, txn *TxnMeta, ts, readTS hlc.Timestamp, value string, del bool, strength Strength) errClass {
	if o.lockConflict(key, txn, strength) {
		return errLock
	}
	vs := o.versions[key]
	rest := vs
	var history []oWrite
	if len(vs) > 0 && (vs[0].kind == kindIntent || vs[0].kind == kindIntentDelete) {
		if txn == nil || vs[0].txn != txn.ID {
			return errLock
		}
		rest = vs[1:]
		if own := vs[0]; own.epoch == txn.Epoch {
			history = slices.Clone(own.history)
			if own.seq != txn.Seq {
				history = append(history, oWrite{own.seq, own.kind == kindIntentDelete, own.value})
			}
		}
	}
	if len(rest) > 0 && (readTS.Less(rest[0].ts) || !rest[0].ts.Less(ts)) {
		return errWrite
	}
	nv := oVersion{ts: ts, value: value, strength: strength}
	switch {
	case txn != nil:
		nv.kind, nv.txn, nv.epoch, nv.seq, nv.history = kindIntent, txn.ID, txn.Epoch, txn.Seq, history
		if del {
			nv.kind, nv.value = kindIntentDelete, ""
		}
	case del:
		nv.kind, nv.value = kindTombstone, ""
	default:
		nv.kind = kindValue
	}
	o.versions[key] = append([]oVersion{nv}, rest...)
	return errNone
}

// lock mirrors AcquireLock.
func (o *oracle) lock(key string, txn *TxnMeta, readTS hlc.Timestamp, strength Strength) errClass {
	if o.lockConflict(key, txn, strength) {
		return errLock
	}
	vs := o.versions[key]
	rest := vs
	if len(vs) > 0 && (vs[0].kind == kindIntent || vs[0].kind == kindIntentDelete) {
		if vs[0].txn != txn.ID {
			if vs[0].strength.Conflicts(strength) {
				return errLock
			}
		} else if vs[0].epoch == txn.Epoch && vs[0].strength >= strength {
			return errNone
		}
		rest = vs[1:]
	}
	if len(rest) > 0 && readTS.Less(rest[0].ts) {
		return errWrite
	}
	held := Strength(0)
	for _, l := range o.locks[key] {
		if l.txn == txn.ID {
			held = max(held, l.strength)
		}
	}
	if held < strength {
		o.locks[key] = append(o.locks[key], oLock{txn: txn.ID, epoch: txn.Epoch, seq: txn.Seq, strength: strength})
	}
	return errNone
}

// rollback mirrors RollbackSpanToSeq over everything.
func (o *oracle) rollback(id TxnID, epoch uint32, seq int32) {
	for key, ls := range o.locks {
		o.locks[key] = slices.DeleteFunc(ls, func(l oLock) bool { return l.txn == id && l.epoch == epoch && l.seq > seq })
	}
	for key, vs := range o.versions {
		if len(vs) == 0 || (vs[0].kind != kindIntent && vs[0].kind != kindIntentDelete) ||
			vs[0].txn != id || vs[0].epoch != epoch || vs[0].seq <= seq {
			continue
		}
		keep := -1
		for i, h := range vs[0].history {
			if h.seq <= seq {
				keep = i
			}
		}
		if keep < 0 {
			o.versions[key] = vs[1:]
			continue
		}
		h := vs[0].history[keep]
		nv := vs[0]
		nv.seq, nv.value, nv.history = h.seq, h.value, slices.Clone(vs[0].history[:keep])
		nv.kind = kindIntent
		if h.del {
			nv.kind = kindIntentDelete
		}
		vs[0] = nv
	}
}

// resolve mirrors ResolveSpan over everything.
func (o *oracle) resolve(res Resolution) {
	for key, vs := range o.versions {
		if len(vs) > 0 && (vs[0].kind == kindIntent || vs[0].kind == kindIntentDelete) && vs[0].txn == res.ID {
			if res.Status == Committed && vs[0].epoch == res.Epoch {
				nv := oVersion{ts: res.CommitTimestamp, kind: kindValue, value: vs[0].value}
				if vs[0].kind == kindIntentDelete {
					nv.kind = kindTombstone
				}
				vs[0] = nv
			} else {
				vs = vs[1:]
			}
			o.versions[key] = vs
		}
	}
	for key, ls := range o.locks {
		o.locks[key] = slices.DeleteFunc(ls, func(l oLock) bool { return l.txn == res.ID })
	}
}

// gcAt mirrors GC.
func (o *oracle) gcAt(threshold hlc.Timestamp) {
	o.gc = threshold
	for key, vs := range o.versions {
		var out []oVersion
		kept := false
		for _, v := range vs {
			if threshold.Less(v.ts) || v.kind == kindIntent || v.kind == kindIntentDelete {
				out = append(out, v)
				continue
			}
			if !kept {
				kept = true
				if v.kind == kindValue {
					out = append(out, v)
				}
			}
		}
		o.versions[key] = out
	}
}

type oRow struct {
	key, value string
	ts         hlc.Timestamp
}

// visible mirrors Scanner.visible for one key: the row, whether there is
// one, or the class of error the read must stop with.
func (o *oracle) visible(key string, readTS, limit hlc.Timestamp, txn *TxnMeta) (oRow, bool, errClass) {
	limit = readTS.Forward(limit)
	for _, v := range o.versions[key] {
		switch v.kind {
		case kindValue, kindTombstone:
			if v.ts.LessEq(readTS) {
				if v.kind == kindTombstone {
					return oRow{}, false, errNone
				}
				return oRow{key, v.value, v.ts}, true, errNone
			}
			if v.ts.LessEq(limit) {
				return oRow{}, false, errUncertain
			}
		default:
			switch {
			case txn != nil && v.txn == txn.ID && v.epoch == txn.Epoch:
				w := oWrite{v.seq, v.kind == kindIntentDelete, v.value}
				found := v.seq <= txn.Seq
				for i := len(v.history) - 1; i >= 0 && !found; i-- {
					if v.history[i].seq <= txn.Seq {
						w, found = v.history[i], true
					}
				}
				if !found {
					continue // none of its writes visible at this sequence number
				}
				if w.del {
					return oRow{}, false, errNone
				}
				return oRow{key, w.value, v.ts}, true, errNone
			case txn != nil && v.txn == txn.ID:
			case v.ts.LessEq(limit):
				return oRow{}, false, errLock
			}
		}
	}
	return oRow{}, false, errNone
}

// TestRandomizedAgainstOracle runs random puts, deletes, intents, locks,
// resolutions, GC, flushes and reads at random timestamps against the
// oracle above, comparing every result, and checks after every write that
// the Stats deltas add up to ComputeStats.
func TestRandomizedAgainstOracle(t *testing.T) {
	r := newRand(t)
	db := openTestDB(t)
	o := &oracle{versions: map[string][]oVersion{}, locks: map[string][]oLock{}}
	var stats Stats
	span := storage.Span{Start: []byte("k"), End: []byte("l")}
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%02d", i)
		if i%4 == 3 {
			keys[i] = keys[i-1] + "\x00" // a user key extending another
		}
	}
	sort.Strings(keys)
	clock := int64(100)
	now := func() hlc.Timestamp {
		clock += r.Int64N(3) + 1
		return hlc.Timestamp{WallTime: clock / 2, Logical: int32(clock % 2)}
	}
	randTS := func() hlc.Timestamp { // anywhere in the history so far
		c := 2 + r.Int64N(clock+1) // never the zero timestamp
		return hlc.Timestamp{WallTime: c / 2, Logical: int32(c % 2)}
	}
	type liveTxn struct {
		meta   TxnMeta
		readTS hlc.Timestamp
	}
	var txns []*liveTxn
	pickTxn := func() *liveTxn {
		if len(txns) == 0 || (len(txns) < 4 && r.IntN(3) == 0) {
			ts := now()
			lt := &liveTxn{meta: TxnMeta{ID: NewTxnID(), WriteTimestamp: ts, Anchor: []byte(keys[r.IntN(len(keys))])}, readTS: ts}
			txns = append(txns, lt)
			return lt
		}
		return txns[r.IntN(len(txns))]
	}
	batch := func(op func(b *pebble.Batch) (Stats, error)) error {
		b := db.NewIndexedBatch()
		defer b.Close()
		d, err := op(b)
		if err != nil {
			return err
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		stats.Add(d)
		got, err := ComputeStats(db, span)
		if err != nil {
			t.Fatal(err)
		}
		if got != stats {
			t.Fatalf("stats drifted: deltas add up to %+v, scan finds %+v", stats, got)
		}
		return nil
	}
	check := func(what string, got error, want errClass) {
		t.Helper()
		if c := classify(got); c != want {
			t.Fatalf("%s: error %v (class %d), oracle expects class %d", what, got, c, want)
		}
	}
	const steps = 3000
	for step := range steps {
		key := keys[r.IntN(len(keys))]
		switch op := r.IntN(100); {
		case op < 15: // committed put or delete, usually now, sometimes in the past
			ts := now()
			if r.IntN(5) == 0 {
				ts = randTS()
			}
			del := r.IntN(4) == 0
			val := fmt.Sprintf("v%d", step)
			want := o.write(key, nil, ts, ts.Prev(), val, del, Update)
			err := batch(func(b *pebble.Batch) (Stats, error) {
				if del {
					return DeleteCommitted(b, []byte(key), ts)
				}
				return PutCommitted(b, []byte(key), ts, []byte(val))
			})
			check(fmt.Sprintf("step %d: put %s@%s del=%v", step, key, ts, del), err, want)
		case op < 40: // intent
			lt := pickTxn()
			lt.meta.Seq += r.Int32N(2) // sometimes a second write of one statement
			del := r.IntN(5) == 0
			val := fmt.Sprintf("t%d", step)
			strength := []Strength{Update, NoKeyUpdate}[r.IntN(2)]
			want := o.write(key, &lt.meta, lt.meta.WriteTimestamp, lt.readTS, val, del, strength)
			err := batch(func(b *pebble.Batch) (Stats, error) {
				return WriteIntent(b, []byte(key), &lt.meta, lt.readTS, []byte(val), del, strength)
			})
			check(fmt.Sprintf("step %d: intent %s by %s", step, key, lt.meta.ID), err, want)
		case op < 50: // locking read
			lt := pickTxn()
			lt.meta.Seq += r.Int32N(2)
			st := Strength(r.IntN(4) + 1)
			want := o.lock(key, &lt.meta, lt.readTS, st)
			err := batch(func(b *pebble.Batch) (Stats, error) {
				return AcquireLock(b, []byte(key), &lt.meta, lt.readTS, st)
			})
			check(fmt.Sprintf("step %d: lock %s %v by %s", step, key, st, lt.meta.ID), err, want)
		case op < 52: // ROLLBACK TO SAVEPOINT
			if len(txns) == 0 {
				continue
			}
			lt := txns[r.IntN(len(txns))]
			sp := r.Int32N(lt.meta.Seq + 1)
			o.rollback(lt.meta.ID, lt.meta.Epoch, sp)
			err := batch(func(b *pebble.Batch) (Stats, error) {
				return RollbackSpanToSeq(b, span, lt.meta.ID, lt.meta.Epoch, sp)
			})
			check(fmt.Sprintf("step %d: rollback %s to %d", step, lt.meta.ID, sp), err, errNone)
			lt.meta.Seq++ // later writes come after the savepoint's
		case op < 55: // push or restart a transaction
			if len(txns) > 0 {
				lt := txns[r.IntN(len(txns))]
				lt.meta.WriteTimestamp = now()
				if r.IntN(2) == 0 {
					lt.meta.Epoch++
					lt.readTS = lt.meta.WriteTimestamp
				}
			}
		case op < 65: // finish a transaction
			if len(txns) == 0 {
				continue
			}
			i := r.IntN(len(txns))
			lt := txns[i]
			txns = slices.Delete(txns, i, i+1)
			res := Resolution{ID: lt.meta.ID, Epoch: lt.meta.Epoch, Status: Aborted}
			if r.IntN(3) > 0 {
				res.Status, res.CommitTimestamp = Committed, now()
			}
			o.resolve(res)
			// Resolve in two halves to exercise span bounds.
			mid := []byte(keys[r.IntN(len(keys))])
			for _, s := range []storage.Span{{Start: span.Start, End: mid}, {Start: mid, End: span.End}} {
				err := batch(func(b *pebble.Batch) (Stats, error) {
					ms, _, err := ResolveSpan(b, s, res)
					return ms, err
				})
				check(fmt.Sprintf("step %d: resolve %s", step, lt.meta.ID), err, errNone)
			}
		case op < 68: // GC
			th := o.gc.Forward(randTS())
			o.gcAt(th)
			err := batch(func(b *pebble.Batch) (Stats, error) { return GC(b, span, th) })
			check(fmt.Sprintf("step %d: gc at %s", step, th), err, errNone)
		case op < 70:
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
		case op < 73: // read refresh over a random sub-span
			from := randTS()
			to := from.Forward(randTS())
			var txn *TxnMeta
			if len(txns) > 0 && r.IntN(2) == 0 {
				txn = &txns[r.IntN(len(txns))].meta
			}
			a, b := keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]
			if a > b {
				a, b = b, a
			}
			sub := storage.Span{Start: []byte(a), End: []byte(b)}
			want := errNone
		refresh:
			for _, k := range keys {
				if !sub.Contains([]byte(k)) {
					continue
				}
				for _, v := range o.versions[k] {
					intent := v.kind == kindIntent || v.kind == kindIntentDelete
					if intent && (txn == nil || v.txn != txn.ID) && v.ts.LessEq(to) {
						want = errLock
						break refresh
					}
					if !intent && from.Less(v.ts) && v.ts.LessEq(to) {
						want = errWrite
						break refresh
					}
				}
			}
			err := CheckRefresh(db, sub, txn, from, to)
			check(fmt.Sprintf("step %d: refresh %s from %s to %s", step, sub, from, to), err, want)
		case op < 85: // point read
			readTS := randTS()
			var txn *TxnMeta
			if len(txns) > 0 && r.IntN(2) == 0 {
				m := txns[r.IntN(len(txns))].meta
				m.Seq -= r.Int32N(3) // sometimes a statement's read before its writes
				txn = &m
			}
			th, err := ReadGCThreshold(db, span.Start)
			if err != nil {
				t.Fatal(err)
			}
			var limit hlc.Timestamp
			if r.IntN(3) == 0 {
				limit = hlc.Timestamp{WallTime: readTS.WallTime + r.Int64N(4)}
			}
			opts := ReadOptions{Txn: txn, GCThreshold: th, UncertaintyLimit: limit}
			// One key through Get, or several through one PointReader (in
			// random order: a reader need not go in key order).
			lookups := []string{key}
			var pr *PointReader
			if r.IntN(3) == 0 {
				for range r.IntN(4) {
					lookups = append(lookups, keys[r.IntN(len(keys))])
				}
				pr, err = NewPointReader(db, readTS, opts)
				if readTS.Less(o.gc) {
					check(fmt.Sprintf("step %d: point reader at %s", step, readTS), err, errGC)
					continue
				}
				check(fmt.Sprintf("step %d: point reader at %s", step, readTS), err, errNone)
			}
			for _, k := range lookups {
				var got []byte
				var gotTS hlc.Timestamp
				var found bool
				if pr != nil {
					got, gotTS, found, err = pr.Get([]byte(k))
				} else {
					got, gotTS, found, err = Get(db, []byte(k), readTS, opts)
				}
				what := fmt.Sprintf("step %d: get %s at %s", step, k, readTS)
				if readTS.Less(o.gc) {
					check(what, err, errGC)
					continue
				}
				row, ok, wantErr := o.visible(k, readTS, limit, txn)
				check(what, err, wantErr)
				if wantErr != errNone {
					continue
				}
				if found != ok || (ok && (string(got) != row.value || gotTS != row.ts)) {
					t.Fatalf("%s: got %q@%s found=%v, oracle %q@%s found=%v", what, got, gotTS, found, row.value, row.ts, ok)
				}
			}
			if pr != nil {
				if err := pr.Close(); err != nil {
					t.Fatal(err)
				}
			}
		default: // scan of a random sub-span
			readTS := randTS()
			var txn *TxnMeta
			if len(txns) > 0 && r.IntN(2) == 0 {
				m := txns[r.IntN(len(txns))].meta
				m.Seq -= r.Int32N(3)
				txn = &m
			}
			a, b := keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]
			if a > b {
				a, b = b, a
			}
			sub := storage.Span{Start: []byte(a), End: []byte(b)}
			if r.IntN(3) == 0 {
				sub = span
			}
			reverse := r.IntN(3) == 0
			what := fmt.Sprintf("step %d: scan %s at %s reverse=%v", step, sub, readTS, reverse)
			var limit hlc.Timestamp
			if r.IntN(3) == 0 {
				limit = hlc.Timestamp{WallTime: readTS.WallTime + r.Int64N(4)}
			}
			newScanner := NewScanner
			if reverse {
				newScanner = NewReverseScanner
			}
			s, err := newScanner(db, sub, readTS, ReadOptions{Txn: txn, GCThreshold: o.gc, UncertaintyLimit: limit})
			if readTS.Less(o.gc) {
				check(what, err, errGC)
				continue
			}
			check(what, err, errNone)
			var got []oRow
			for s.Next() {
				got = append(got, oRow{string(s.Key()), string(s.Value()), s.Timestamp()})
			}
			err = s.Close()
			var want []oRow
			wantErr := errNone
			order := slices.Clone(keys)
			if reverse {
				slices.Reverse(order)
			}
			for _, k := range order {
				if !sub.Contains([]byte(k)) {
					continue
				}
				row, ok, e := o.visible(k, readTS, limit, txn)
				if e != errNone {
					wantErr = e
					break
				}
				if ok {
					want = append(want, row)
				}
			}
			check(what, err, wantErr)
			if !slices.Equal(got, want) {
				t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
			}
		}
	}
	// Every key's versions in the store are exactly the oracle's.
	for _, k := range keys {
		var got []hlc.Timestamp
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		prefix := AppendBareKey(nil, []byte(k))
		for ok := it.SeekPrefixGE(prefix); ok; ok = it.Next() {
			uk, ts, _, err := DecodeKey(it.Key())
			if err != nil || !bytes.Equal(uk, []byte(k)) {
				break
			}
			got = append(got, ts)
		}
		it.Close()
		var want []hlc.Timestamp
		for _, v := range o.versions[k] {
			want = append(want, v.ts)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("versions of %q: store %v, oracle %v", k, got, want)
		}
	}
}
