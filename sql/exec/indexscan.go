package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// An index scan reads a secondary index's entries in the ranges inferred
// for it, shard by shard of the index, and fetches each entry's row by
// primary key. Entries are read in chunks and the iterator is closed
// before the rows are fetched, so that a transaction's write batch (which
// allows one reader at a time) serves both. On committed data both reads
// go through one storage snapshot, so an entry and its row are seen at the
// same moment: a row never appears twice or not at all because a writer
// moved it within the ranges meanwhile. Every fetched row is checked again
// against TTL expiry and the scan's whole condition: an entry only says
// where to look.

// indexChunk is how many entries are read before their rows are fetched.
const indexChunk = 256

type indexScan struct {
	c      *Context
	n      *planner.Scan
	reader storage.Reader
	snap   *storage.Snapshot // owned; nil when reading a transaction's batch
	parts  []shardPart
	expiry *ttl.Expiry
	// next is where the current part continues (nil: start of the part).
	next  []byte
	keys  [][]byte // entries of the current chunk still to fetch
	row   expr.Row
	reads int64
}

func newIndexScan(c *Context, n *planner.Scan) (Iter, error) {
	limit := c.RangeLimit
	if limit <= 0 {
		limit = planner.DefaultRangeExpansionLimit
	}
	res := n.IndexRanges.Evaluate(c.Eval.Params, limit)
	spans := res.Ranges.ToSpans(n.IndexEntries)
	s := &indexScan{c: c, n: n, reader: c.Reader, expiry: ttl.At(n.Table, c.ReadTime()),
		row: make(expr.Row, len(n.Table.Columns))}
	s.parts = scanPartsOf(c, n.IndexEntries.ID, spans)
	if eng, ok := c.Reader.(*storage.Engine); ok && len(s.parts) > 0 {
		s.snap = eng.NewSnapshot()
		s.reader = s.snap
	}
	return s, nil
}

// fill reads the next chunk of entry keys; false at the end of the scan.
func (s *indexScan) fill() (bool, error) {
	for len(s.parts) > 0 {
		part := s.parts[0]
		span := part.span
		if s.next != nil {
			span.Start = s.next
		}
		it, err := s.reader.NewIter(span)
		if err != nil {
			return false, err
		}
		for ok := it.First(); ok && len(s.keys) < indexChunk; ok = it.Next() {
			s.keys = append(s.keys, append([]byte(nil), it.Key()...))
		}
		more := it.Valid()
		err = it.Error()
		it.Close()
		if err != nil {
			return false, err
		}
		s.c.addReads(s.n.Table.ID, true, part.shard, int64(len(s.keys)))
		if more {
			// The smallest key after the last one read.
			s.next = append(append([]byte(nil), s.keys[len(s.keys)-1]...), 0)
		} else {
			s.parts, s.next = s.parts[1:], nil
		}
		if len(s.keys) > 0 {
			return true, s.c.Ctx.Err()
		}
	}
	return false, nil
}

func (s *indexScan) Next() (expr.Row, error) {
	for {
		if len(s.keys) == 0 {
			ok, err := s.fill()
			if err != nil || !ok {
				return nil, err
			}
		}
		entry := s.keys[0]
		s.keys = s.keys[1:]
		for i := range s.row {
			s.row[i] = types.NullValue
		}
		if err := rowenc.DecodeKey(s.n.IndexEntries, entry, s.row); err != nil {
			return nil, err
		}
		key := rowenc.EncodeKey(s.n.Table, s.row)
		val, ok, err := s.reader.Get(key)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // deleted after the entry was read (batch views only)
		}
		if err := rowenc.DecodeValue(s.n.Table, val, s.row); err != nil {
			return nil, err
		}
		ok, err = visible(s.c, s.expiry, s.n.Filter, s.row)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		return s.row, nil
	}
}

func (s *indexScan) Close() {
	if s.snap != nil {
		s.snap.Close()
		s.snap = nil
	}
	s.parts, s.keys = nil, nil
}
