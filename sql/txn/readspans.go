package txn

import (
	"bytes"
	"errors"
	"slices"
	"sync"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// SERIALIZABLE by timestamp ordering with read refresh (CockroachDB's
// design, which extends to shards on several nodes; design §11).
//
// A SERIALIZABLE transaction reads every statement at its read timestamp
// (the snapshot of its first statement, as REPEATABLE READ) and records the
// key spans it reads: a point read as the one key, a scan as its whole
// span, whatever reader it goes through (Reader, LatestReader, Get,
// NewReadView: table scans, index scans, the existence and foreign-key
// checks of writes). Its writes keep REPEATABLE READ's first-updater-wins
// (Get: 40001 on a version newer than the snapshot). Its commit takes a
// commit timestamp above the read timestamp, so the reads must still hold
// there: the commit check (storage.Batch.SetCommitCheck) verifies that no
// version was committed in (read ts, commit ts] in any recorded span, once
// every commit below the commit timestamp is visible and before the
// transaction's own batch lands — atomic with respect to every commit that
// could order before it. Otherwise the commit fails with 40001 and writes
// nothing. The serial order is the commit timestamps' order: each
// read-write transaction's reads are valid at its commit timestamp, its
// writes appear there, and a read-only transaction (nothing to commit)
// is placed at its read timestamp, whose snapshot already contains
// exactly the commits below it — so the read-only anomaly cannot happen
// either, and READ ONLY DEFERRABLE needs nothing more than that snapshot.
//
// Recorded spans are kept sorted and coalesced; past maxReadSpanBytes they
// are condensed (CockroachDB's condensing): first into one span per table
// or index, then into one span over all of them. A coarser span can only
// fail more refreshes, never miss a conflict.

// maxReadSpanBytes bounds the memory of a transaction's read spans (key
// bytes plus slice headers) before they are condensed.
const maxReadSpanBytes = 1 << 20

// spanOverhead is what a span costs beyond its key bytes: two slice
// headers.
const spanOverhead = 48

// tableArea is the versioned part of the key space: only reads of it have
// a history a refresh can check (catalog reads are versioned by issue 16's
// catalog work, not here).
var tableArea = storage.Span{Start: []byte{storage.TableDataPrefix}, End: []byte{storage.TableDataPrefix + 1}}

// readSpans records the spans a transaction read. It is safe for
// concurrent use (a statement's scans may run in parallel).
type readSpans struct {
	mu sync.Mutex
	// spans[:merged] are sorted and disjoint; later ones are appended as
	// read and merged in by coalesce.
	spans     []storage.Span
	merged    int
	bytes     int
	limit     int
	condensed bool
}

func spanBytes(s storage.Span) int { return len(s.Start) + len(s.End) + spanOverhead }

// addKey records a point read of key.
func (r *readSpans) addKey(key []byte) {
	r.add(storage.Span{Start: key, End: keyNext(key)}, true)
}

// addSpan records a scan of span.
func (r *readSpans) addSpan(span storage.Span) { r.add(span, false) }

// keyNext is the smallest key after key: [key, keyNext(key)) holds key only.
func keyNext(key []byte) []byte {
	return append(key[:len(key):len(key)], 0)
}

func (r *readSpans) add(span storage.Span, fresh bool) {
	span = span.Intersect(tableArea)
	if span.Empty() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.spans); n > 0 {
		// Repeated reads of one key or span (a lookup per row of a
		// join) cost nothing.
		last := r.spans[n-1]
		if bytes.Compare(last.Start, span.Start) <= 0 && bytes.Compare(span.End, last.End) <= 0 {
			return
		}
	}
	s := storage.Span{Start: bytes.Clone(span.Start), End: span.End}
	if !fresh {
		s.End = bytes.Clone(span.End)
	}
	r.spans = append(r.spans, s)
	r.bytes += spanBytes(s)
	if len(r.spans)-r.merged > max(r.merged, 64) {
		r.coalesce()
	}
	limit := r.limit
	if limit == 0 {
		limit = maxReadSpanBytes
	}
	if r.bytes > limit {
		r.condense(limit)
	}
}

// coalesce sorts the spans and merges the overlapping and adjacent ones.
func (r *readSpans) coalesce() {
	if r.merged == len(r.spans) {
		return
	}
	slices.SortFunc(r.spans, func(a, b storage.Span) int { return bytes.Compare(a.Start, b.Start) })
	out := r.spans[:0]
	r.bytes = 0
	for _, s := range r.spans {
		if n := len(out); n > 0 && bytes.Compare(s.Start, out[n-1].End) <= 0 {
			if bytes.Compare(s.End, out[n-1].End) > 0 {
				r.bytes += len(s.End) - len(out[n-1].End)
				out[n-1].End = s.End
			}
			continue
		}
		out = append(out, s)
		r.bytes += spanBytes(s)
	}
	clear(r.spans[len(out):])
	r.spans = out
	r.merged = len(out)
}

// condense widens the spans until they take at most limit bytes: first
// each run of spans of one table or index (the same 9-byte prefix, 0x02
// <id>) becomes one span, then, if that is not enough, all of them one.
func (r *readSpans) condense(limit int) {
	r.coalesce()
	if r.bytes <= limit {
		return
	}
	r.condensed = true
	const prefixLen = 9
	prefix := func(k []byte) []byte { return k[:min(len(k), prefixLen)] }
	out := r.spans[:0]
	r.bytes = 0
	for _, s := range r.spans {
		if n := len(out); n > 0 && bytes.Equal(prefix(out[n-1].Start), prefix(s.Start)) {
			r.bytes += len(s.End) - len(out[n-1].End)
			out[n-1].End = s.End
			continue
		}
		out = append(out, s)
		r.bytes += spanBytes(s)
	}
	clear(r.spans[len(out):])
	r.spans = out
	if r.bytes > limit {
		one := storage.Span{Start: r.spans[0].Start, End: r.spans[len(r.spans)-1].End}
		clear(r.spans)
		r.spans = append(r.spans[:0], one)
		r.bytes = spanBytes(one)
	}
	r.merged = len(r.spans)
}

// list returns the recorded spans, sorted and disjoint.
func (r *readSpans) list() []storage.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.coalesce()
	return slices.Clone(r.spans)
}

// empty reports whether nothing was recorded.
func (r *readSpans) empty() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans) == 0
}

// refresh checks that no recorded span has a version committed in
// (from, to]; the 40001 of a failed refresh otherwise.
func (r *readSpans) refresh(e *storage.Engine, from, to hlc.Timestamp, inflight storage.InFlight) error {
	for _, s := range r.list() {
		if k := inflight.Conflict(s); k != nil {
			return refreshFailed(&storage.RefreshConflictError{Key: k, From: from})
		}
		if err := e.CheckRefresh(s, from, to); err != nil {
			var rc *storage.RefreshConflictError
			if errors.As(err, &rc) {
				return refreshFailed(rc)
			}
			return err
		}
	}
	return nil
}

// refreshFailed is PostgreSQL's error for a SERIALIZABLE transaction that
// cannot commit, with what was overwritten in the detail.
func refreshFailed(rc *storage.RefreshConflictError) error {
	return &sqlerr.Error{Code: sqlerr.SerializationFailure,
		Message: "could not serialize access due to read/write dependencies among transactions",
		Detail: "Reason code: read refresh failed: " + storage.FormatKey(rc.Key) +
			" was written by a transaction that committed after this one's snapshot.",
		Hint: "The transaction might succeed if retried."}
}

// recordingReader is a Reader that records what is read through it.
type recordingReader struct {
	r   storage.Reader
	rec *readSpans
}

func (r recordingReader) Get(key []byte) ([]byte, bool, error) {
	r.rec.addKey(key)
	return r.r.Get(key)
}

func (r recordingReader) NewIter(span storage.Span) (*storage.Iterator, error) {
	r.rec.addSpan(span)
	return r.r.NewIter(span)
}

func (r recordingReader) NewPointReader() (*storage.PointReader, error) {
	pr, err := r.r.NewPointReader()
	if err == nil {
		pr.ObserveGets(r.rec.addKey)
	}
	return pr, err
}

// setRefreshing tells the engine whether the transaction may refresh its
// reads (storage.Engine.Refreshing), as its level says.
func (t *Txn) setRefreshing() {
	switch {
	case t.isolation == Serializable && t.refreshDone == nil:
		t.refreshDone = t.m.eng.Refreshing()
	case t.isolation != Serializable && t.refreshDone != nil:
		t.refreshDone()
		t.refreshDone = nil
	}
}

// recording wraps r so that a SERIALIZABLE transaction records its reads;
// other levels read r as it is.
func (t *Txn) recording(r storage.Reader) storage.Reader {
	if t.isolation != Serializable {
		return r
	}
	return recordingReader{r: r, rec: &t.reads}
}

// NewReadView returns a view of the transaction as of now, which its later
// writes do not change (storage.Engine.NewBatchCopy), recording reads like
// Reader. A statement that writes while it evaluates subqueries reads them
// through one. Call done when the statement ends.
func (t *Txn) NewReadView() (view storage.Reader, done func(), err error) {
	b, err := t.m.eng.NewBatchCopy(t.batch)
	if err != nil {
		return nil, nil, err
	}
	return t.recording(b), func() { b.Close() }, nil
}

// CleanView returns, while the transaction has written nothing, a view of
// its snapshot that is safe for concurrent use (a query's parallel scans),
// recording reads as Reader does; ok is false once it has written (its
// view is then the write batch, Reader). Without writes the two show the
// same.
func (t *Txn) CleanView() (view storage.Reader, ok bool) {
	if !t.batch.Empty() {
		return nil, false
	}
	return t.recording(t.m.eng.At(t.batch.ReadTimestamp())), true
}

// ReadSpans returns the spans the transaction recorded as read (tests,
// debugging), sorted and disjoint.
func (t *Txn) ReadSpans() []storage.Span { return t.reads.list() }

// commitCheck installs the read refresh on the batch of a SERIALIZABLE
// transaction about to commit. A transaction with nothing to commit needs
// none: it is placed at its read timestamp.
func (t *Txn) commitCheck() {
	if t.isolation != Serializable || t.reads.empty() {
		return
	}
	from := t.batch.ReadTimestamp()
	t.batch.SetCommitCheck(func(to hlc.Timestamp, inflight storage.InFlight) error {
		return t.reads.refresh(t.m.eng, from, to, inflight)
	})
}
