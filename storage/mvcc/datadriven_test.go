package mvcc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// TestDataDriven runs the files in testdata/mvcc. User keys are written as
// plain strings; timestamps as "wall" or "wall,logical" (nanoseconds).
//
//	txn name=T ts=TS [epoch=N] [seq=N] [anchor=K]   define or update a transaction
//	put k=K ts=TS v=V                          committed value
//	del k=K ts=TS                              committed tombstone
//	intent k=K txn=T read=TS [v=V | del] [strength=NoKeyUpdate]
//	lock k=K txn=T read=TS strength=S
//	resolve k=K txn=T status=committed|aborted [ts=TS]
//	resolve-span [start=K] [end=K] txn=T status=... [ts=TS]
//	get k=K ts=TS [txn=T] [uncertainty=TS]
//	scan [start=K] [end=K] ts=TS [txn=T] [uncertainty=TS] [reverse]
//	rollback-to [k=K | start=K end=K] txn=T seq=N   ROLLBACK TO SAVEPOINT
//	gc [start=K] [end=K] threshold=TS
//	refresh [start=K] [end=K] txn=T from=TS to=TS   read refresh check
//	record txn=T status=... / record-get txn=T   transaction records
//	dump                                        every engine key and value
//
// Every mutating command commits one batch and checks that the Stats
// deltas it returned add up to what ComputeStats finds; "stats" prints them.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/mvcc", func(t *testing.T, path string) {
		db := openTestDB(t)
		h := &ddHarness{t: t, db: db, txns: map[string]*TxnMeta{}}
		datadriven.RunTest(t, path, h.run)
	})
}

type ddHarness struct {
	t     *testing.T
	db    *pebble.DB
	txns  map[string]*TxnMeta
	stats Stats
}

func parseTS(t *testing.T, s string) hlc.Timestamp {
	wall, logical, _ := strings.Cut(s, ",")
	w, err := strconv.ParseInt(wall, 10, 64)
	if err != nil {
		t.Fatalf("bad timestamp %q", s)
	}
	var l int64
	if logical != "" {
		if l, err = strconv.ParseInt(logical, 10, 32); err != nil {
			t.Fatalf("bad timestamp %q", s)
		}
	}
	return hlc.Timestamp{WallTime: w, Logical: int32(l)}
}

func fmtTS(ts hlc.Timestamp) string {
	if ts.Logical == 0 {
		return strconv.FormatInt(ts.WallTime, 10)
	}
	return fmt.Sprintf("%d,%d", ts.WallTime, ts.Logical)
}

func (h *ddHarness) arg(td *datadriven.TestData, key string) (string, bool) {
	for _, a := range td.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return a.Vals[0], true
		}
	}
	return "", false
}

func (h *ddHarness) must(td *datadriven.TestData, key string) string {
	v, ok := h.arg(td, key)
	if !ok {
		td.Fatalf(h.t, "missing argument %s", key)
	}
	return v
}

func (h *ddHarness) txn(td *datadriven.TestData) *TxnMeta {
	name, ok := h.arg(td, "txn")
	if !ok {
		return nil
	}
	txn := h.txns[name]
	if txn == nil {
		td.Fatalf(h.t, "unknown transaction %s", name)
	}
	return txn
}

func (h *ddHarness) txnName(id TxnID) string {
	for n, txn := range h.txns {
		if txn.ID == id {
			return n
		}
	}
	return id.String()
}

func (h *ddHarness) span(td *datadriven.TestData) storage.Span {
	s := storage.Span{Start: []byte("a"), End: []byte("zz")}
	if v, ok := h.arg(td, "start"); ok {
		s.Start = []byte(v)
	}
	if v, ok := h.arg(td, "end"); ok {
		s.End = []byte(v)
	}
	return s
}

func (h *ddHarness) resolution(td *datadriven.TestData) Resolution {
	txn := h.txn(td)
	res := Resolution{ID: txn.ID, Epoch: txn.Epoch}
	switch h.must(td, "status") {
	case "committed":
		res.Status = Committed
		res.CommitTimestamp = txn.WriteTimestamp
		if v, ok := h.arg(td, "ts"); ok {
			res.CommitTimestamp = parseTS(h.t, v)
		}
	case "aborted":
		res.Status = Aborted
	default:
		res.Status = TxnStatus(0)
	}
	return res
}

// fmtErr renders the package's errors with transaction names.
func (h *ddHarness) fmtErr(err error) string {
	var lc *LockConflictError
	var wc *WriteConflictError
	var gc *BelowGCThresholdError
	var ru *ReadWithinUncertaintyError
	switch {
	case errors.As(err, &ru):
		return fmt.Sprintf("uncertain: %q at %s, read at %s, limit %s", ru.Key, fmtTS(ru.Existing), fmtTS(ru.ReadTimestamp), fmtTS(ru.Limit))
	case errors.As(err, &lc):
		what := "lock " + lc.Strength.String()
		if lc.Intent {
			what = "intent"
		}
		return fmt.Sprintf("conflict: %s of %s on %q", what, h.txnName(lc.Txn.ID), lc.Key)
	case errors.As(err, &wc):
		return fmt.Sprintf("write conflict on %q: committed at %s, read at %s", wc.Key, fmtTS(wc.Existing), fmtTS(wc.ReadTimestamp))
	case errors.As(err, &gc):
		return fmt.Sprintf("below GC threshold: read at %s, threshold %s", fmtTS(gc.ReadTimestamp), fmtTS(gc.Threshold))
	}
	return "error: " + err.Error()
}

// write runs one mutating operation in a batch, commits it, and checks the
// Stats bookkeeping.
func (h *ddHarness) write(op func(b *pebble.Batch) (Stats, error)) string {
	b := h.db.NewIndexedBatch()
	defer b.Close()
	d, err := op(b)
	if err != nil {
		return h.fmtErr(err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		h.t.Fatal(err)
	}
	h.stats.Add(d)
	h.checkStats()
	return "ok"
}

func (h *ddHarness) checkStats() {
	got, err := ComputeStats(h.db, storage.Span{Start: []byte("a"), End: []byte("zz")})
	if err != nil {
		h.t.Fatal(err)
	}
	if got != h.stats {
		h.t.Fatalf("stats drifted: deltas add up to %+v, scan finds %+v", h.stats, got)
	}
}

func (h *ddHarness) run(t *testing.T, td *datadriven.TestData) string {
	h.t = t
	switch td.Cmd {
	case "txn":
		name := h.must(td, "name")
		txn := h.txns[name]
		if txn == nil {
			txn = &TxnMeta{ID: TxnID{byte(len(h.txns) + 1)}}
			h.txns[name] = txn
		}
		txn.WriteTimestamp = parseTS(t, h.must(td, "ts"))
		if v, ok := h.arg(td, "epoch"); ok {
			e, _ := strconv.Atoi(v)
			txn.Epoch = uint32(e)
		}
		if v, ok := h.arg(td, "anchor"); ok {
			txn.Anchor = []byte(v)
		}
		if v, ok := h.arg(td, "seq"); ok {
			n, _ := strconv.Atoi(v)
			txn.Seq = int32(n)
		}
		return ""
	case "put":
		return h.write(func(b *pebble.Batch) (Stats, error) {
			return PutCommitted(b, []byte(h.must(td, "k")), parseTS(t, h.must(td, "ts")), []byte(h.must(td, "v")))
		})
	case "del":
		return h.write(func(b *pebble.Batch) (Stats, error) {
			return DeleteCommitted(b, []byte(h.must(td, "k")), parseTS(t, h.must(td, "ts")))
		})
	case "intent":
		_, isDel := h.arg(td, "del")
		v, _ := h.arg(td, "v")
		strength := Update
		if s, ok := h.arg(td, "strength"); ok && s == "NoKeyUpdate" {
			strength = NoKeyUpdate
		}
		return h.write(func(b *pebble.Batch) (Stats, error) {
			return WriteIntent(b, []byte(h.must(td, "k")), h.txn(td), parseTS(t, h.must(td, "read")), []byte(v), isDel, strength)
		})
	case "lock":
		var st Strength
		for s := KeyShare; s <= Update; s++ {
			if s.String() == h.must(td, "strength") {
				st = s
			}
		}
		return h.write(func(b *pebble.Batch) (Stats, error) {
			return AcquireLock(b, []byte(h.must(td, "k")), h.txn(td), parseTS(t, h.must(td, "read")), st)
		})
	case "resolve":
		return h.write(func(b *pebble.Batch) (Stats, error) {
			return ResolveIntent(b, []byte(h.must(td, "k")), h.resolution(td))
		})
	case "resolve-span":
		n := 0
		out := h.write(func(b *pebble.Batch) (Stats, error) {
			ms, k, err := ResolveSpan(b, h.span(td), h.resolution(td))
			n = k
			return ms, err
		})
		if out == "ok" {
			return fmt.Sprintf("resolved %d keys", n)
		}
		return out
	case "rollback-to":
		txn := h.txn(td)
		seq, _ := strconv.Atoi(h.must(td, "seq"))
		if k, ok := h.arg(td, "k"); ok {
			return h.write(func(b *pebble.Batch) (Stats, error) {
				return RollbackToSeq(b, []byte(k), txn.ID, txn.Epoch, int32(seq))
			})
		}
		return h.write(func(b *pebble.Batch) (Stats, error) {
			return RollbackSpanToSeq(b, h.span(td), txn.ID, txn.Epoch, int32(seq))
		})
	case "gc":
		return h.write(func(b *pebble.Batch) (Stats, error) {
			return GC(b, h.span(td), parseTS(t, h.must(td, "threshold")))
		})
	case "get":
		k := h.must(td, "k")
		opts := ReadOptions{Txn: h.txn(td)}
		if v, ok := h.arg(td, "uncertainty"); ok {
			opts.UncertaintyLimit = parseTS(t, v)
		}
		var err error
		if opts.GCThreshold, err = ReadGCThreshold(h.db, []byte("a")); err != nil {
			t.Fatal(err)
		}
		v, ts, found, err := Get(h.db, []byte(k), parseTS(t, h.must(td, "ts")), opts)
		switch {
		case err != nil:
			return h.fmtErr(err)
		case !found:
			return fmt.Sprintf("%s: not found", k)
		}
		return fmt.Sprintf("%s@%s = %s", k, fmtTS(ts), v)
	case "scan":
		opts := ReadOptions{Txn: h.txn(td)}
		if v, ok := h.arg(td, "uncertainty"); ok {
			opts.UncertaintyLimit = parseTS(t, v)
		}
		span := h.span(td)
		var err error
		if opts.GCThreshold, err = ReadGCThreshold(h.db, span.Start); err != nil {
			t.Fatal(err)
		}
		newScanner := NewScanner
		if _, ok := h.arg(td, "reverse"); ok {
			newScanner = NewReverseScanner
		}
		s, err := newScanner(h.db, span, parseTS(t, h.must(td, "ts")), opts)
		if err != nil {
			return h.fmtErr(err)
		}
		var out strings.Builder
		for s.Next() {
			fmt.Fprintf(&out, "%s@%s = %s\n", s.Key(), fmtTS(s.Timestamp()), s.Value())
		}
		if err := s.Close(); err != nil {
			out.WriteString(h.fmtErr(err) + "\n")
		}
		if out.Len() == 0 {
			return "(empty)"
		}
		return out.String()
	case "refresh":
		err := CheckRefresh(h.db, h.span(td), h.txn(td), parseTS(t, h.must(td, "from")), parseTS(t, h.must(td, "to")))
		if err != nil {
			return h.fmtErr(err)
		}
		return "ok"
	case "record":
		txn := h.txn(td)
		rec := TxnRecord{Status: h.resolution(td).Status, Epoch: txn.Epoch, WriteTimestamp: txn.WriteTimestamp,
			LockSpans: []storage.Span{{Start: []byte("a"), End: []byte("zz")}}}
		if s := h.must(td, "status"); s == "pending" {
			rec.Status = Pending
		}
		b := h.db.NewBatch()
		defer b.Close()
		if err := PutTxnRecord(b, txn.Anchor, txn.ID, &rec); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
		return "ok"
	case "record-get":
		txn := h.txn(td)
		rec, found, err := GetTxnRecord(h.db, txn.Anchor, txn.ID)
		if err != nil {
			return h.fmtErr(err)
		}
		if !found {
			return "no record"
		}
		return fmt.Sprintf("%s ts=%s epoch=%d spans=%v", rec.Status, fmtTS(rec.WriteTimestamp), rec.Epoch, rec.LockSpans)
	case "stats":
		h.checkStats()
		s := h.stats
		return fmt.Sprintf("live: %d keys, %d bytes\nold: %d versions, %d bytes\nintents: %d, %d bytes\nlocks: %d, %d bytes",
			s.LiveCount, s.LiveBytes, s.OldCount, s.OldBytes, s.IntentCount, s.IntentBytes, s.LockCount, s.LockBytes)
	case "dump":
		return h.dump()
	}
	td.Fatalf(t, "unknown command %s", td.Cmd)
	return ""
}

// dump prints every key of the store in engine order with its value
// decoded.
func (h *ddHarness) dump() string {
	it, err := h.db.NewIter(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	defer it.Close()
	var lines []string
	for ok := it.First(); ok; ok = it.Next() {
		k, raw := it.Key(), it.Value()
		if uk, ts, ok := decodeVersion(k); ok {
			v, err := decodeVersionValue(raw)
			if err != nil {
				h.t.Fatal(err)
			}
			var what string
			switch v.kind {
			case kindValue:
				what = "value " + string(v.value)
			case kindTombstone:
				what = "tombstone"
			case kindIntent:
				what = fmt.Sprintf("intent of %s epoch=%d seq=%d %s: %s", h.txnName(v.txn.ID), v.txn.Epoch, v.txn.Seq, v.strength, v.value)
			case kindIntentDelete:
				what = fmt.Sprintf("intent of %s epoch=%d seq=%d %s: delete", h.txnName(v.txn.ID), v.txn.Epoch, v.txn.Seq, v.strength)
			}
			for _, hw := range v.history {
				if hw.isDelete {
					what += fmt.Sprintf(" | seq %d: delete", hw.seq)
				} else {
					what += fmt.Sprintf(" | seq %d: %s", hw.seq, hw.value)
				}
			}
			lines = append(lines, fmt.Sprintf("%s@%s -> %s", uk, fmtTS(ts), what))
			continue
		}
		if uk, st, id, err := decodeLockKey(k); err == nil {
			lines = append(lines, fmt.Sprintf("lock %s on %s by %s", st, uk, h.txnName(id)))
			continue
		}
		switch {
		case len(k) > 2 && k[0] == LocalPrefix && k[1] == localGCState:
			ts := decodeTimestamp(raw)
			lines = append(lines, fmt.Sprintf("gc threshold of %s: %s", k[2:len(k)-1], fmtTS(ts)))
		case len(k) > 2 && k[0] == LocalPrefix && k[1] == localTxnRecord:
			var id TxnID
			copy(id[:], k[len(k)-1-TxnIDLen:])
			lines = append(lines, fmt.Sprintf("txn record of %s (anchor %s)", h.txnName(id), k[2:len(k)-1-TxnIDLen]))
		default:
			lines = append(lines, FormatKey(k))
		}
	}
	if err := it.Error(); err != nil {
		h.t.Fatal(err)
	}
	if len(lines) == 0 {
		return "(empty)"
	}
	return strings.Join(lines, "\n")
}
