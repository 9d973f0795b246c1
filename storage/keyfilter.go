package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/pivotdb/pivotdb/storage/enginekey"
)

// Per-table key bloom filters (KEY_BLOOM_FILTER, design §9).
//
// Pebble's filter policies are configured per LSM level, not per key range,
// so one policy (keyFilterPolicy) is installed on every level and decides
// per key what goes into the filter of each sstable it writes:
//
//   - The writer takes the set of tables with the setting on when Pebble
//     starts the sstable (a flush or a compaction output) and adds only the
//     keys of those tables to a bloom filter; keys of other tables and system
//     keys are left out. The filter block records which tables it covers.
//   - A lookup (SeekPrefixGE, see PointReader) asks the filter about its key:
//     a key of a table the block does not cover gets "may contain", so
//     Pebble reads the data block as if there were no filter; a key of a
//     covered table is answered by the bloom filter.
//
// Because the covered-table list travels with each sstable, whether a filter
// answers never depends on the current setting, only on what the sstable was
// written with: turning the setting on or off cannot produce a false negative.
// Data written after an ALTER follows the new setting at its flush; older
// sstables keep what they have until a compaction rewrites them.
//
// The filter is over the whole key (Pebble's default Comparer.Split keeps the
// whole key as the prefix), which is what a lookup by full primary key asks.
//
// Filter block layout (all integers big-endian):
//
//	[bloom bits as Pebble's bloom.FilterPolicy writes them]
//	[table id uint64, covered key count uint64] × n, ascending by id
//	[n uint32] [bloom length uint32] [version byte = 1]
//
// A block shorter than the footer (no table covered) covers nothing.

// KeyFilterBitsPerKey is the size of the key bloom filters: about 1% false
// positives (Pebble's and RocksDB's usual setting).
const KeyFilterBitsPerKey = 10

const (
	keyFilterPolicyName = "pivotdb.table_key_bloom.v1"
	keyFilterVersion    = 1
	keyFilterFooterLen  = 4 + 4 + 1
	keyFilterEntryLen   = 8 + 8
	// keyFilterCollectorName names the sstable property that records the
	// covered key counts per table, for KeyFilterBytes.
	keyFilterCollectorName = "pivotdb.table_key_bloom.counts"
)

// innerBloom is the bloom filter format the per-table filter wraps.
var innerBloom = bloom.FilterPolicy(KeyFilterBitsPerKey)

// keyFilterTables is the set of table ids whose keys get a bloom filter. It
// is replaced as a whole (copy on write), so writers read it without locks.
type keyFilterTables struct {
	mu  sync.Mutex // Serialises writers of set.
	set atomic.Pointer[map[uint64]struct{}]
}

// covers reports whether keys of tableID currently get a filter.
func (k *keyFilterTables) covers(tableID uint64) bool {
	m := k.set.Load()
	if m == nil {
		return false
	}
	_, ok := (*m)[tableID]
	return ok
}

// coversKey reports whether key is a row key of a table with a filter.
func (k *keyFilterTables) coversKey(key []byte) bool {
	if k == nil || len(key) < tablePrefixLen || key[0] != TableDataPrefix {
		return false
	}
	return k.covers(binary.BigEndian.Uint64(key[1:tablePrefixLen]))
}

func (k *keyFilterTables) setTable(tableID uint64, on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	old := k.set.Load()
	next := make(map[uint64]struct{})
	if old != nil {
		for id := range *old {
			next[id] = struct{}{}
		}
	}
	if on {
		next[tableID] = struct{}{}
	} else {
		delete(next, tableID)
	}
	k.set.Store(&next)
}

// snapshot returns the current set (never nil).
func (k *keyFilterTables) snapshot() map[uint64]struct{} {
	if m := k.set.Load(); m != nil {
		return *m
	}
	return nil
}

// SetKeyFilter turns the key bloom filter of a table on or off for the
// sstables written from now on. The sql layer calls it for every table when it
// loads the catalog and on CREATE, ALTER and DROP TABLE. The setting lives in
// the catalog; the engine only keeps the current set in memory.
func (e *Engine) SetKeyFilter(tableID uint64, on bool) {
	e.filters.setTable(tableID, on)
}

// SetKeyFilterTables replaces the whole set of tables with a key bloom
// filter (the sql layer's way to resynchronise with its catalog).
func (e *Engine) SetKeyFilterTables(tableIDs []uint64) {
	next := make(map[uint64]struct{}, len(tableIDs))
	for _, id := range tableIDs {
		next[id] = struct{}{}
	}
	e.filters.mu.Lock()
	defer e.filters.mu.Unlock()
	e.filters.set.Store(&next)
}

// KeyFilterEnabled reports whether SetKeyFilter turned the table's filter on.
func (e *Engine) KeyFilterEnabled(tableID uint64) bool {
	return e.filters.covers(tableID)
}

// NewKeyFilterPolicy returns the per-table key filter policy described above
// for a fixed set of tables, for a Pebble store that Open does not open: the
// versioned store of storage/mvcc, whose tests check that the filters work on
// user keys once a Comparer splits off the version suffix. Engine builds its
// own policy over the set that SetKeyFilter changes.
func NewKeyFilterPolicy(tableIDs ...uint64) pebble.FilterPolicy {
	t := &keyFilterTables{}
	for _, id := range tableIDs {
		t.setTable(id, true)
	}
	return keyFilterPolicy{tables: t}
}

// keyFilterPolicy is the pebble.FilterPolicy described above.
type keyFilterPolicy struct {
	tables *keyFilterTables
}

var _ pebble.FilterPolicy = keyFilterPolicy{}

func (p keyFilterPolicy) Name() string { return keyFilterPolicyName }

// MayContain answers for one key (the whole key, see the package comment).
// Anything it cannot vouch for gets true: a false positive costs a block
// read, a false negative loses a row.
func (p keyFilterPolicy) MayContain(ftype pebble.FilterType, f, key []byte) bool {
	bloomBits, entries, ok := parseKeyFilter(f)
	if !ok || len(key) < tablePrefixLen || key[0] != TableDataPrefix {
		return true
	}
	id := binary.BigEndian.Uint64(key[1:tablePrefixLen])
	n := len(entries) / keyFilterEntryLen
	i := sort.Search(n, func(i int) bool {
		return binary.BigEndian.Uint64(entries[i*keyFilterEntryLen:]) >= id
	})
	if i == n || binary.BigEndian.Uint64(entries[i*keyFilterEntryLen:]) != id {
		return true
	}
	return innerBloom.MayContain(ftype, bloomBits, key)
}

// parseKeyFilter splits a filter block into its bloom bits and its table
// entries; ok is false for a block that covers nothing or is not in the
// format (which MayContain treats as "may contain").
func parseKeyFilter(f []byte) (bloomBits, entries []byte, ok bool) {
	if len(f) < keyFilterFooterLen || f[len(f)-1] != keyFilterVersion {
		return nil, nil, false
	}
	foot := f[len(f)-keyFilterFooterLen:]
	n := int(binary.BigEndian.Uint32(foot[0:4]))
	bloomLen := int(binary.BigEndian.Uint32(foot[4:8]))
	if n == 0 || bloomLen+n*keyFilterEntryLen+keyFilterFooterLen != len(f) {
		return nil, nil, false
	}
	return f[:bloomLen], f[bloomLen : bloomLen+n*keyFilterEntryLen], true
}

func (p keyFilterPolicy) NewWriter(ftype pebble.FilterType) pebble.FilterWriter {
	return &keyFilterWriter{inner: innerBloom.NewWriter(ftype), counter: keyCounter{tables: p.tables.snapshot()}}
}

// keyCounter decides, key by key, whether a key goes into the filter of the
// sstable being written, and counts the keys per covered table. The filter
// writer and the property collector of one sstable each have one, built from
// the table set of the moment Pebble starts the sstable.
type keyCounter struct {
	tables map[uint64]struct{}
	// entries holds (table id, count) for the covered tables seen so far, in
	// key order (sstables are written in key order, so ids ascend).
	ids    []uint64
	counts []uint64
	// last is the prefix (user key) of the previous key and lastCovered
	// the answer for it: the versions of a row share a prefix, and a row
	// counts once however many versions it has.
	last        []byte
	lastCovered bool
}

// add counts key if its table is covered and reports whether it is.
func (c *keyCounter) add(key []byte) bool {
	if len(c.tables) == 0 || len(key) < tablePrefixLen || key[0] != TableDataPrefix {
		return false
	}
	prefix := key[:enginekey.Split(key)]
	if c.last != nil && bytes.Equal(prefix, c.last) {
		return c.lastCovered
	}
	c.last = append(c.last[:0], prefix...)
	c.lastCovered = c.addNew(key)
	return c.lastCovered
}

// addNew counts the first key of a row.
func (c *keyCounter) addNew(key []byte) bool {
	id := binary.BigEndian.Uint64(key[1:tablePrefixLen])
	if n := len(c.ids); n > 0 && c.ids[n-1] == id {
		c.counts[n-1]++
		return true
	}
	if _, ok := c.tables[id]; !ok {
		return false
	}
	c.ids = append(c.ids, id)
	c.counts = append(c.counts, 1)
	return true
}

// appendEntries appends the (id, count) entries and resets the counter.
func (c *keyCounter) appendEntries(buf []byte) []byte {
	for i, id := range c.ids {
		buf = binary.BigEndian.AppendUint64(buf, id)
		buf = binary.BigEndian.AppendUint64(buf, c.counts[i])
	}
	c.ids, c.counts = c.ids[:0], c.counts[:0]
	c.last, c.lastCovered = c.last[:0], false
	return buf
}

type keyFilterWriter struct {
	inner   pebble.FilterWriter
	counter keyCounter
}

func (w *keyFilterWriter) AddKey(key []byte) {
	if w.counter.add(key) {
		w.inner.AddKey(key)
	}
}

func (w *keyFilterWriter) Finish(buf []byte) []byte {
	n := len(w.counter.ids)
	if n == 0 {
		return buf // covers nothing: an empty block
	}
	start := len(buf)
	buf = w.inner.Finish(buf)
	bloomLen := len(buf) - start
	buf = w.counter.appendEntries(buf)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	buf = binary.BigEndian.AppendUint32(buf, uint32(bloomLen))
	return append(buf, keyFilterVersion)
}

// keyFilterCollector records the covered key counts of an sstable in its
// properties, so that KeyFilterBytes can attribute the sstable's filter
// block to tables. It only counts; it adds nothing to data or index blocks.
type keyFilterCollector struct {
	counter keyCounter
}

func newKeyFilterCollector(tables *keyFilterTables) func() pebble.BlockPropertyCollector {
	return func() pebble.BlockPropertyCollector {
		return &keyFilterCollector{counter: keyCounter{tables: tables.snapshot()}}
	}
}

func (c *keyFilterCollector) Name() string { return keyFilterCollectorName }

func (c *keyFilterCollector) AddPointKey(key sstable.InternalKey, _ []byte) error {
	c.counter.add(key.UserKey)
	return nil
}

func (c *keyFilterCollector) AddRangeKeys(sstable.Span) error { return nil }

func (c *keyFilterCollector) AddCollectedWithSuffixReplacement(_, _, _ []byte) error { return nil }

func (c *keyFilterCollector) SupportsSuffixReplacement() bool { return false }

func (c *keyFilterCollector) FinishDataBlock(buf []byte) ([]byte, error) { return buf, nil }

func (c *keyFilterCollector) AddPrevDataBlockToIndexBlock() {}

func (c *keyFilterCollector) FinishIndexBlock(buf []byte) ([]byte, error) { return buf, nil }

func (c *keyFilterCollector) FinishTable(buf []byte) ([]byte, error) {
	return c.counter.appendEntries(buf), nil
}

// KeyFilterBytes returns, per table id, the bytes of key bloom filter blocks
// in the live sstables: each sstable's filter block is shared out among the
// tables it covers in proportion to their keys. Only tables with filter bytes
// appear. Data still in the memtables has no filter yet.
//
// The attribution is exact unless SetKeyFilter switched a table in the
// instant between Pebble starting an sstable's filter writer and its property
// collector; then that sstable's share is misattributed until it is compacted.
// The filters themselves never depend on it.
func (e *Engine) KeyFilterBytes() (map[uint64]uint64, error) {
	levels, err := e.db.SSTables(pebble.WithProperties())
	if err != nil {
		return nil, err
	}
	out := map[uint64]uint64{}
	seen := map[uint64]bool{} // backing files already counted (virtual sstables share one)
	for _, level := range levels {
		for _, t := range level {
			if t.Properties == nil || t.Properties.FilterSize == 0 || seen[uint64(t.BackingSSTNum)] {
				continue
			}
			seen[uint64(t.BackingSSTNum)] = true
			prop, ok := t.Properties.UserProperties[keyFilterCollectorName]
			if !ok || len(prop) < 1 {
				continue
			}
			entries := prop[1:] // the first byte is Pebble's collector short id
			var total uint64
			for i := 0; i+keyFilterEntryLen <= len(entries); i += keyFilterEntryLen {
				total += binary.BigEndian.Uint64([]byte(entries[i+8 : i+16]))
			}
			if total == 0 {
				continue
			}
			for i := 0; i+keyFilterEntryLen <= len(entries); i += keyFilterEntryLen {
				id := binary.BigEndian.Uint64([]byte(entries[i : i+8]))
				n := binary.BigEndian.Uint64([]byte(entries[i+8 : i+16]))
				out[id] += t.Properties.FilterSize * n / total
			}
		}
	}
	return out, nil
}

// CompactTable rewrites every sstable holding rows of the table, down to the
// bottom level, so that older data follows the table's current key filter
// setting (a filter written, or dropped).
//
// Pebble's Compact leaves a range alone when its data already sits only in
// the bottom level, which is where a loaded table ends up. So CompactTable
// first writes two point tombstones at keys that can never hold a row — the
// bare prefix of the table and that of the next table id — whose flushed
// sstable spans the whole table; compacting it down merges it with every
// sstable of the table on each level, the bottom one included, and the
// tombstones themselves vanish there. Readers never see a difference.
func (e *Engine) CompactTable(ctx context.Context, tableID uint64) error {
	span := TableSpan(tableID)
	if span.End == nil { // the largest possible id: up to the end of the table area
		span.End = TablesSpan().End
	}
	b := e.db.NewBatch()
	defer b.Close()
	start, end := bareKey(span.Start), bareKey(span.End)
	if err := b.Delete(start, nil); err != nil {
		return err
	}
	if err := b.Delete(end, nil); err != nil {
		return err
	}
	if err := e.commitPebble(b, e.writeOpts); err != nil {
		return fmt.Errorf("storage: compact table %d: %w", tableID, err)
	}
	if err := e.db.Compact(ctx, start, append(end, 0), true /* parallelize */); err != nil {
		return fmt.Errorf("storage: compact table %d: %w", tableID, err)
	}
	return nil
}
