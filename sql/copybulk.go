package sql

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"unsafe"

	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txn"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// The bulk path of COPY FROM (a COPY outside a transaction block, into a
// table without TTL or a foreign key to itself): memory stays bounded
// whatever the size of the COPY, and the rows are not written one by one
// through the transaction's indexed batch and lock table.
//
//  1. Each row is completed and checked as INSERT does (rowWriter's
//     coerce, computed columns, defaults, sequences, NOT NULL, CHECK,
//     foreign keys against the committed parents, whose keys are locked),
//     and becomes its key-value pairs: the row, and an entry per secondary
//     index, with rowenc.EncodeKey: the one function that makes keys on
//     both paths.
//  2. The pairs collect in a memory buffer (bulkRunBytes); a full buffer
//     is sorted and written to a run file in a scratch directory under the
//     data directory (storage.BulkDir).
//  3. At CopyDone the table's key span is locked (txn.Txn.LockSpan: the
//     writers of the table finish first, new ones wait), and the runs are
//     merged in key order: equal keys are a duplicate primary key, equal
//     value prefixes of a unique index a duplicate value (23505, with the
//     line of the later row); each key is looked up in the committed data
//     (a row with that key, an entry with that unique value: 23505).
//  4. Under the commit gate and the schema check (txn.Txn.CommitWith), the
//     runs are merged again into sstables (storage.IngestVersioned: the
//     keys become versions at one commit timestamp, written with the
//     engine's writer options) and ingested in one atomic Pebble
//     ingestion; reads that start during this pass wait for it, as for
//     any commit in flight. The same merge routes the pairs to their
//     shards (partition.SortedWrites: one statistics delta per shard),
//     committed after the ingestion, with the table's splits and merges
//     held off from just before it (if one landed during the merge, a
//     third merge routes the pairs again).
//     A small COPY (one buffer, bulkBatchBytes at most) commits its pairs
//     in a batch instead, statistics included.
//
// A COPY inside a block, or into a table with TTL or a self-referencing
// foreign key, writes through the transaction (copy.go).
//
// Variables, so that tests can make runs small.
var (
	bulkRunBytes   = 64 << 20 // a run's pairs held in memory before it is spilled
	bulkBatchBytes = 8 << 20  // at most this much is committed in a batch instead of ingested
	bulkSSTBytes   = uint64(256 << 20)
)

// bulkUsable reports whether a COPY into t may take the bulk path.
func bulkUsable(t *catalog.Table) bool {
	if t.Settings.TTL != nil {
		return false // expired rows count as absent: the txn path handles them
	}
	for _, fk := range t.ForeignKeys {
		if fk.RefTable == t.ID {
			return false // rows of the same COPY may be each other's parents
		}
	}
	return true
}

// bulkLoad collects and loads the pairs of one COPY.
type bulkLoad struct {
	e       *Engine
	table   *catalog.Table
	entries []*catalog.Table // IndexTable of each index
	rel     string

	// Records of the current run: idx (0: the row, i+1: index i), the
	// length of the unique-value prefix of the key (0: none), the line,
	// the key, the value; recs index them for sorting. They are kept in
	// chunks that are never copied to grow (one slice doubling to a run
	// of 64 MiB would copy and zero about twice that), and are reused by
	// the next run after a spill: cur is the chunk being filled, used the
	// bytes of records in the run.
	chunks [][]byte
	cur    int
	used   int
	recs   []bulkRec
	dir    *storage.BulkDir
	runs   []string
	pairs  int64

	keyBuf, valBuf []byte
	vals           []types.Value

	// acct holds the reservation of the buffers (reserved bytes) in the
	// statement's memory account.
	acct     *memory.Account
	reserved int64
}

type bulkRec struct {
	chunk, off     int32 // the record starts at chunks[chunk][off]
	keyOff, keyLen int32 // its key, in the same chunk
}

// The sizes of the record chunks: the first is small (most COPYs are),
// each next one twice the last, up to bulkChunkMax (or one record).
const (
	bulkChunkMin = 64 << 10
	bulkChunkMax = 4 << 20
)

func newBulkLoad(ctx context.Context, e *Engine, t *catalog.Table, rel string) *bulkLoad {
	b := &bulkLoad{e: e, table: t, rel: rel, acct: memory.FromContext(ctx).Child("COPY", 0)}
	for i := range t.Indexes {
		b.entries = append(b.entries, t.IndexTable(&t.Indexes[i]))
	}
	return b
}

// addRow adds the pairs of a complete, checked row.
func (b *bulkLoad) addRow(row []types.Value, line int64) error {
	b.keyBuf = appendKey(b.keyBuf[:0], b.table, row)
	b.valBuf = rowenc.EncodeValue(b.valBuf[:0], b.table, row)
	if err := b.add(0, 0, line, b.keyBuf, b.valBuf); err != nil {
		return err
	}
	for i, et := range b.entries {
		b.keyBuf = appendKey(b.keyBuf[:0], et, row)
		prefix := 0
		if ix := &b.table.Indexes[i]; ix.Unique {
			prefix = b.uniquePrefix(ix, et, row)
		}
		if err := b.add(i+1, prefix, line, b.keyBuf, nil); err != nil {
			return err
		}
	}
	return nil
}

// appendKey is rowenc.EncodeKey into buf (the load's key buffer, reused
// for every key: add copies it).
func appendKey(buf []byte, t *catalog.Table, row []types.Value) []byte {
	buf = storage.AppendTablePrefix(buf, t.ID)
	for _, k := range t.PrimaryKey {
		buf = rowenc.AppendKeyValue(buf, row[k])
	}
	return buf
}

// uniquePrefix is the length of the unique index entry's value part (0
// when a value is NULL: NULLs never conflict).
func (b *bulkLoad) uniquePrefix(ix *catalog.Index, et *catalog.Table, row []types.Value) int {
	b.vals = b.vals[:0]
	for _, c := range ix.Columns {
		if row[c].IsNull() {
			return 0
		}
		b.vals = append(b.vals, row[c])
	}
	return len(rowenc.EncodeKeyPrefix(et, b.vals))
}

// bulkRecSize is the memory of one bulkRec.
const bulkRecSize = int64(unsafe.Sizeof(bulkRec{}))

// room makes room for a record of n bytes, reserving the buffers' growth
// in the statement's memory account first: when the budget refuses, the
// run is spilled early instead (53200 only when even an empty buffer
// cannot take the record).
func (b *bulkLoad) room(n int) error {
	for attempt := 0; ; attempt++ {
		chunkOK, recsOK := b.fits(n), len(b.recs) < cap(b.recs)
		if chunkOK && recsOK {
			return nil
		}
		var need int64
		newChunk, newRecs := 0, cap(b.recs)
		if !chunkOK {
			newChunk = bulkChunkMin
			if k := len(b.chunks); k > 0 {
				newChunk = min(2*cap(b.chunks[k-1]), bulkChunkMax)
			}
			newChunk = max(newChunk, n)
			need += int64(newChunk)
		}
		if !recsOK {
			newRecs = max(2*cap(b.recs), 1024)
			need += int64(newRecs-cap(b.recs)) * bulkRecSize
		}
		err := b.acct.Grow(need, "COPY's sort buffer")
		if err == nil {
			b.reserved += need
			if newChunk > 0 {
				b.chunks = append(b.chunks, make([]byte, 0, newChunk))
				b.cur = len(b.chunks) - 1
			}
			b.recs = slices.Grow(b.recs, newRecs-len(b.recs))
			return nil
		}
		if len(b.recs) == 0 || attempt > 0 {
			return err
		}
		if err := b.spill(); err != nil {
			return err
		}
	}
}

// fits reports whether a record of n bytes fits in the chunk being
// filled, or else in a later one (kept from an earlier run), which then
// becomes the one being filled.
func (b *bulkLoad) fits(n int) bool {
	for ; b.cur < len(b.chunks); b.cur++ {
		if c := b.chunks[b.cur]; cap(c)-len(c) >= n {
			return true
		}
	}
	return false
}

func (b *bulkLoad) add(idx, prefix int, line int64, key, value []byte) error {
	if err := b.room(1 + 4*binary.MaxVarintLen64 + len(key) + len(value)); err != nil {
		return err
	}
	c := b.chunks[b.cur]
	off := len(c)
	c = append(c, byte(idx))
	c = binary.AppendUvarint(c, uint64(prefix))
	c = binary.AppendUvarint(c, uint64(line))
	c = binary.AppendUvarint(c, uint64(len(key)))
	keyOff := len(c)
	c = append(c, key...)
	c = binary.AppendUvarint(c, uint64(len(value)))
	c = append(c, value...)
	b.chunks[b.cur] = c
	b.used += len(c) - off
	b.recs = append(b.recs, bulkRec{chunk: int32(b.cur), off: int32(off), keyOff: int32(keyOff), keyLen: int32(len(key))})
	b.pairs++
	if b.used >= bulkRunBytes {
		return b.spill()
	}
	return nil
}

func (b *bulkLoad) key(r bulkRec) []byte { return b.chunks[r.chunk][r.keyOff : r.keyOff+r.keyLen] }

// record is the bytes of r's record.
func (b *bulkLoad) record(r bulkRec) []byte {
	c := b.chunks[r.chunk]
	return c[r.off:recordEnd(c, int(r.off))]
}

// sortRun sorts the current run by key, then line.
func (b *bulkLoad) sortRun() {
	slices.SortFunc(b.recs, func(x, y bulkRec) int {
		if c := bytes.Compare(b.key(x), b.key(y)); c != 0 {
			return c
		}
		if x.chunk != y.chunk { // the earlier line first
			return int(x.chunk - y.chunk)
		}
		return int(x.off - y.off)
	})
}

// spill sorts the current run and writes it to a file.
func (b *bulkLoad) spill() error {
	if len(b.recs) == 0 {
		return nil
	}
	if b.dir == nil {
		d, err := b.e.storage.NewBulkDir()
		if err != nil {
			return err
		}
		b.dir = d
	}
	b.sortRun()
	f, path, err := b.dir.Create(".run")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, r := range b.recs {
		if _, err := w.Write(b.record(r)); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	b.runs = append(b.runs, path)
	for i := range b.chunks {
		b.chunks[i] = b.chunks[i][:0]
	}
	b.cur, b.used, b.recs = 0, 0, b.recs[:0]
	return nil
}

// recordEnd is the end of the record at off.
func recordEnd(a []byte, off int) int {
	p := off + 1
	for k := 0; k < 3; k++ {
		v, n := binary.Uvarint(a[p:])
		p += n
		if k == 2 {
			p += int(v)
		}
	}
	v, n := binary.Uvarint(a[p:])
	return p + n + int(v)
}

// close drops the scratch files.
func (b *bulkLoad) close() {
	if b.dir != nil {
		b.dir.Close()
		b.dir = nil
	}
	b.chunks, b.recs = nil, nil
	b.acct.Close()
	b.reserved = 0
}

// pair is one record of the merge.
type pair struct {
	idx        int
	prefix     int
	line       int64
	key, value []byte
}

// pairSource yields pairs in key order.
type pairSource interface {
	next() (pair, bool, error)
}

// memSource reads the sorted in-memory run.
type memSource struct {
	b *bulkLoad
	i int
}

func (m *memSource) next() (pair, bool, error) {
	if m.i >= len(m.b.recs) {
		return pair{}, false, nil
	}
	r := m.b.recs[m.i]
	m.i++
	p, _ := decodeRecord(m.b.chunks[r.chunk][r.off:]) // decodeRecord finds the end itself
	return p, true, nil
}

func decodeRecord(a []byte) (pair, int) {
	p := pair{idx: int(a[0])}
	i := 1
	v, n := binary.Uvarint(a[i:])
	p.prefix, i = int(v), i+n
	v, n = binary.Uvarint(a[i:])
	p.line, i = int64(v), i+n
	v, n = binary.Uvarint(a[i:])
	i += n
	p.key, i = a[i:i+int(v)], i+int(v)
	v, n = binary.Uvarint(a[i:])
	i += n
	p.value, i = a[i:i+int(v)], i+int(v)
	return p, i
}

// fileSource reads a run file. A pair's key and value stay valid until
// the next call but one: the merge returns a source's head while that
// source has already read its next pair, so the two alternate between
// two buffers instead of being allocated per pair.
type fileSource struct {
	r    *bufio.Reader
	bufs [2][]byte
	k    int // the buffer the next pair goes into
}

// maxRecordHeader is the most bytes a record's header (index byte and
// three uvarints) takes.
const maxRecordHeader = 1 + 3*binary.MaxVarintLen64

func (f *fileSource) next() (pair, bool, error) {
	// The header is decoded in place from the reader's buffer (near the
	// end of the file Peek returns what is left, with io.EOF).
	h, err := f.r.Peek(maxRecordHeader)
	if len(h) == 0 {
		if err == io.EOF {
			return pair{}, false, nil
		}
		return pair{}, false, err
	}
	p := pair{idx: int(h[0])}
	n := 1
	var hdr [3]uint64
	for k := range hdr {
		v, m := binary.Uvarint(h[n:])
		if m <= 0 {
			return pair{}, false, fmt.Errorf("COPY run file: bad record header: %w", io.ErrUnexpectedEOF)
		}
		hdr[k], n = v, n+m
	}
	if _, err := f.r.Discard(n); err != nil {
		return pair{}, false, err
	}
	p.prefix, p.line = int(hdr[0]), int64(hdr[1])
	buf := f.bufs[f.k][:0]
	buf = slices.Grow(buf, int(hdr[2]))[:hdr[2]]
	if _, err := io.ReadFull(f.r, buf); err != nil {
		return pair{}, false, err
	}
	vlen, err := binary.ReadUvarint(f.r)
	if err != nil {
		return pair{}, false, err
	}
	buf = slices.Grow(buf, int(vlen))[:len(buf)+int(vlen)]
	if _, err := io.ReadFull(f.r, buf[hdr[2]:]); err != nil {
		return pair{}, false, err
	}
	p.key = buf[:hdr[2]:hdr[2]]
	if vlen > 0 {
		p.value = buf[hdr[2]:]
	}
	f.bufs[f.k] = buf
	f.k ^= 1
	return p, true, nil
}

// merger merges sources by key, then line.
type merger struct {
	srcs  []pairSource
	heads []pair
	h     []int // indexes of srcs with a head, as a heap
	files []io.Closer
}

func (m *merger) Len() int { return len(m.h) }
func (m *merger) Less(i, j int) bool {
	a, b := m.heads[m.h[i]], m.heads[m.h[j]]
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c < 0
	}
	return a.line < b.line
}
func (m *merger) Swap(i, j int) { m.h[i], m.h[j] = m.h[j], m.h[i] }
func (m *merger) Push(x any)    { m.h = append(m.h, x.(int)) }
func (m *merger) Pop() any {
	x := m.h[len(m.h)-1]
	m.h = m.h[:len(m.h)-1]
	return x
}

// openMerge merges the run files and the in-memory run.
func (b *bulkLoad) openMerge() (*merger, error) {
	m := &merger{}
	for _, path := range b.runs {
		f, err := b.dir.Open(path)
		if err != nil {
			m.close()
			return nil, err
		}
		m.files = append(m.files, f)
		m.srcs = append(m.srcs, &fileSource{r: bufio.NewReaderSize(f, 256<<10)})
	}
	if len(b.recs) > 0 {
		m.srcs = append(m.srcs, &memSource{b: b})
	}
	m.heads = make([]pair, len(m.srcs))
	for i, s := range m.srcs {
		p, ok, err := s.next()
		if err != nil {
			m.close()
			return nil, err
		}
		if ok {
			m.heads[i] = p
			m.h = append(m.h, i)
		}
	}
	heap.Init(m)
	return m, nil
}

func (m *merger) next() (pair, bool, error) {
	if len(m.h) == 0 {
		return pair{}, false, nil
	}
	i := m.h[0]
	p := m.heads[i]
	q, ok, err := m.srcs[i].next()
	if err != nil {
		return pair{}, false, err
	}
	if ok {
		m.heads[i] = q
		if len(m.h) > 1 { // one source (a load that never spilled): no heap work
			heap.Fix(m, 0)
		}
	} else {
		heap.Pop(m)
	}
	return p, true, nil
}

func (m *merger) close() {
	for _, f := range m.files {
		f.Close()
	}
}

// finish checks the pairs and loads them, committing with t (the COPY's
// transaction: its key locks on foreign-key parents, its schema check).
// It returns the number of rows loaded.
func (b *bulkLoad) finish(ctx context.Context, t *txn.Txn) error {
	span := storage.TableSpan(b.table.ID)
	if _, err := t.LockSpan(ctx, span.Start, span.End); err != nil {
		return err
	}
	small := len(b.runs) == 0 && b.used <= bulkBatchBytes
	if !small && b.dir == nil {
		d, err := b.e.storage.NewBulkDir()
		if err != nil {
			return err
		}
		b.dir = d
	}
	// The last run stays in memory (at most bulkRunBytes): both merges
	// read it there.
	b.sortRun()
	m, err := b.openMerge()
	if err != nil {
		return err
	}
	defer m.close()
	seen := &committedKeys{e: b.e}
	defer seen.close()

	var prev pair
	var prevKey []byte
	havePrev := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, ok, err := m.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if havePrev && bytes.Equal(prevKey, p.key) {
			if p.idx == 0 {
				return b.duplicateRow(p)
			}
			continue // the entry of a duplicate row: reported with the row
		}
		if p.prefix > 0 && havePrev && prev.idx == p.idx && prev.prefix == p.prefix && bytes.Equal(prevKey[:p.prefix], p.key[:p.prefix]) {
			return b.duplicateValue(p)
		}
		if err := b.checkCommitted(seen, p); err != nil {
			return err
		}
		if small {
			if err := t.PutRow(b.tableID(p.idx), p.key, p.value, false, 0); err != nil {
				return err
			}
		}
		prev, havePrev = p, true
		prevKey = append(prevKey[:0], p.key...)
	}
	m.close()
	seen.close()
	if small {
		return t.CommitWith(func() error { return nil })
	}
	// Checked: merge again into the sstables, under the commit's timestamp
	// (reads that start meanwhile wait for it, so this pass only writes).
	// The same pass routes the pairs to their shards for the statistics
	// (one delta per shard, partition.SortedWrites); from just before the
	// ingestion to the statistics' commit the table's splits and merges
	// wait, so that none sees the rows without their counts.
	return t.CommitWith(func() error {
		// A rewrite of the table that runs now (ALTER COLUMN TYPE)
		// observes commits key by key; this one it must read in full.
		b.e.bulkWrote(b.table.ID)
		ids := []uint64{b.table.ID}
		for _, et := range b.entries {
			ids = append(ids, et.ID)
		}
		stats, err := b.e.shards.BeginSorted(ids)
		if err != nil {
			return err
		}
		defer stats.Close()
		err = b.e.storage.IngestVersioned(ctx, b.dir, bulkSSTBytes, func(w *storage.SSTWriter) error {
			if err := b.mergePairs(func(p pair) error {
				if err := w.Set(p.key, p.value); err != nil {
					return err
				}
				return stats.Put(b.tableID(p.idx), p.key, len(p.value))
			}); err != nil {
				return err
			}
			if bulkBeforeStatsLock != nil {
				bulkBeforeStatsLock()
			}
			reroute, err := stats.Lock()
			if err != nil || !reroute {
				return err
			}
			// A split or merge landed since BeginSorted: route the pairs
			// again through the shards as they are now.
			return b.mergePairs(func(p pair) error {
				return stats.Put(b.tableID(p.idx), p.key, len(p.value))
			})
		})
		if err != nil {
			return err
		}
		batch := b.e.storage.NewBatch()
		defer batch.Close()
		return stats.Commit(batch)
	})
}

// bulkBeforeStatsLock, when set (tests), runs after the ingestion's
// sstables are written and the statistics routed, before their locks.
var bulkBeforeStatsLock func()

// mergePairs merges the runs and passes each pair to fn, in key order.
func (b *bulkLoad) mergePairs(fn func(pair) error) error {
	m, err := b.openMerge()
	if err != nil {
		return err
	}
	defer m.close()
	var last []byte
	for {
		p, ok, err := m.next()
		if err != nil || !ok {
			return err
		}
		if last != nil && bytes.Equal(last, p.key) {
			continue // cannot happen after the checks; kept strict for Pebble
		}
		if err := fn(p); err != nil {
			return err
		}
		last = append(last[:0], p.key...)
	}
}

func (b *bulkLoad) tableID(idx int) uint64 {
	if idx == 0 {
		return b.table.ID
	}
	return b.entries[idx-1].ID
}

// checkCommitted fails with 23505 when the committed data has the pair's
// row key, or, for a unique index entry, another entry with its value.
func (b *bulkLoad) checkCommitted(seen *committedKeys, p pair) error {
	switch {
	case p.idx == 0:
		k, err := seen.atOrAfter(b.tableID(0), p.key)
		if err != nil {
			return err
		}
		if k != nil && bytes.Equal(k, p.key) {
			return b.duplicateRow(p)
		}
	case p.prefix > 0:
		prefix := p.key[:p.prefix]
		k, err := seen.atOrAfter(b.tableID(p.idx), prefix)
		if err != nil {
			return err
		}
		if k != nil && bytes.HasPrefix(k, prefix) {
			return b.duplicateValue(p)
		}
	}
	return nil
}

// committedKeys answers "the first committed key at or after k" for keys
// asked in ascending order per table, with one iterator per table that
// only moves forward: a seek happens only once the merge passes the key
// found last, so loading into an empty table (or an empty part of one)
// costs no lookups at all.
type committedKeys struct {
	e     *Engine
	iters map[uint64]*committedIter
}

type committedIter struct {
	it   *storage.Iterator
	key  []byte // the key found last (nil: none at or after the last seek)
	done bool   // nothing at or after the last seek
}

func (c *committedKeys) atOrAfter(tableID uint64, k []byte) ([]byte, error) {
	if c.iters == nil {
		c.iters = map[uint64]*committedIter{}
	}
	ci, ok := c.iters[tableID]
	if !ok {
		it, err := c.e.storage.NewIter(storage.TableSpan(tableID))
		if err != nil {
			return nil, err
		}
		ci = &committedIter{it: it}
		c.iters[tableID] = ci
		if !it.SeekGE(k) {
			ci.done = true
			return nil, it.Error()
		}
		ci.key = append(ci.key[:0], it.Key()...)
	}
	if ci.done {
		return nil, nil
	}
	if bytes.Compare(ci.key, k) < 0 {
		if !ci.it.SeekGE(k) {
			ci.done = true
			return nil, ci.it.Error()
		}
		ci.key = append(ci.key[:0], ci.it.Key()...)
	}
	return ci.key, nil
}

func (c *committedKeys) close() {
	for _, ci := range c.iters {
		ci.it.Close()
	}
	c.iters = nil
}

func (b *bulkLoad) where(line int64) string { return fmt.Sprintf("COPY %s, line %d", b.rel, line) }

// duplicateRow is the 23505 of a primary key met twice.
func (b *bulkLoad) duplicateRow(p pair) error {
	row := make([]types.Value, len(b.table.Columns))
	if b.table.HiddenKeyColumn() >= 0 {
		return &sqlerr.Error{Code: sqlerr.SerializationFailure, Where: b.where(p.line),
			Message: "could not serialize access: a generated row key collided; retry the COPY"}
	}
	if err := rowenc.DecodeKey(b.table, p.key, row); err != nil {
		return err
	}
	var vals []string
	for _, k := range b.table.PrimaryKey {
		vals = append(vals, row[k].Text())
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation, Where: b.where(p.line),
		Message: fmt.Sprintf("duplicate key value violates unique constraint %q", b.table.Name+"_pkey"),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.",
			strings.Join(b.table.KeyColumnNames(), ", "), strings.Join(vals, ", "))}
}

// duplicateValue is the 23505 of a unique index value met twice.
func (b *bulkLoad) duplicateValue(p pair) error {
	ix := &b.table.Indexes[p.idx-1]
	row := make([]types.Value, len(b.table.Columns))
	if err := rowenc.DecodeKey(b.entries[p.idx-1], p.key, row); err != nil {
		return err
	}
	names := make([]string, len(ix.Columns))
	texts := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		names[i] = b.table.Columns[c].Name
		texts[i] = row[c].Text()
	}
	return &sqlerr.Error{Code: sqlerr.UniqueViolation, Where: b.where(p.line),
		Message: fmt.Sprintf("duplicate key value violates unique constraint %q", ix.Name),
		Detail: fmt.Sprintf("Key (%s)=(%s) already exists.",
			strings.Join(names, ", "), strings.Join(texts, ", "))}
}

// bulkRow completes and checks a row as rowWriter.write does for a new
// row, and adds its pairs to the load.
func (c *copyFrom) bulkRow(row []types.Value) error {
	w := c.w
	if h := w.table.HiddenKeyColumn(); h >= 0 {
		row[h] = types.NewUint64(rand.Uint64())
	}
	for i, col := range w.table.Columns {
		// rowWriter.coerce, without the calls for the values that need
		// no cast (nearly all of a load's).
		if !castFree(row[i], col.Type) {
			v, err := expr.CastInZone(w.eval, row[i], col.Type)
			if err != nil {
				return err
			}
			row[i] = v
		}
	}
	if err := w.compute(row, true); err != nil {
		return err
	}
	if err := w.compute(row, false); err != nil {
		return err
	}
	if err := w.checkNotNullAndChecks(row); err != nil {
		return err
	}
	if w.fk != nil {
		if err := w.fk.checkParents(w.fkt, nil, row); err != nil {
			return err
		}
	}
	return c.bulk.addRow(row, c.dec.Line())
}
