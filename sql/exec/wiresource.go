package exec

import (
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
)

// WireSource hands out the stored key and value of each row of a plain
// projection of stored columns (`SELECT k, v FROM t WHERE ...`, read by a
// primary-key scan or by point lookups), so that the server can encode
// the rows' wire form straight from their stored bytes (rowenc.WireEncoder)
// instead of decoding them into typed values first (issue 23). The scan
// still applies the statement's filter and the table's TTL; only rows it
// returns are handed out.
//
// A WireSource and the Iter it came from advance the same scan: a consumer
// uses one or the other.
type WireSource struct {
	Table *catalog.Table
	// Cols is, per output column, the table column it shows.
	Cols []int
	raw  rawRows
}

// rawRows is a scan that can return its rows' stored encodings.
type rawRows interface {
	// nextRaw returns the next row the statement sees, as its key and
	// value (valid until the next call), or a nil key at the end.
	nextRaw() (key, val []byte, err error)
}

// Next returns the next row's stored key and value, valid until the next
// call; a nil key at the end.
func (w *WireSource) Next() (key, val []byte, err error) { return w.raw.nextRaw() }

// Reset points w at the rows of it and reports whether it is a plain
// projection of stored columns over a scan that reads in one goroutine (a
// parallel scan copies rows between goroutines, and an index scan fetches
// rows through its entries); false leaves w unusable until the next
// Reset. w's Cols reuse their memory, so a WireSource kept across
// executions of a prepared statement costs no allocation per execution.
func (w *WireSource) Reset(it Iter) bool {
	w.Table, w.raw = nil, nil
	p, ok := it.(*projectIter)
	if !ok {
		return false
	}
	var raw rawRows
	var t *catalog.Table
	switch s := p.in.(type) {
	case *serialScan:
		raw, t = s, s.n.Table
	case *pointScan:
		raw, t = s, s.n.Table
	default:
		return false
	}
	w.Cols = w.Cols[:0]
	for _, e := range p.exprs {
		ref, ok := e.(*expr.ColumnRef)
		if !ok || ref.Index < 0 || ref.Index >= len(t.Columns) || ref.Typ.Family != t.Columns[ref.Index].Type.Family {
			return false
		}
		w.Cols = append(w.Cols, ref.Index)
	}
	w.Table, w.raw = t, raw
	return true
}

// Release drops w's references to the scan and its table (they would
// otherwise live as long as w is kept for reuse); w's memory stays.
func (w *WireSource) Release() { w.Table, w.raw = nil, nil }

func (s *serialScan) nextRaw() (key, val []byte, err error) {
	for {
		if s.cur == nil {
			if len(s.parts) == 0 {
				return nil, nil, nil
			}
			p := s.parts[0]
			s.parts = s.parts[1:]
			r, err := newRowReader(s.c, s.n, s.filter, s.expiry, p)
			if err != nil {
				return nil, nil, err
			}
			s.cur = r
		}
		key, val, err := s.cur.nextRaw()
		if err != nil || key != nil {
			return key, val, err
		}
		s.cur.close()
		s.cur = nil
	}
}

// nextRaw is next returning the row's stored key and value. A row is only
// decoded when the filter or the TTL needs its values.
func (r *rowReader) nextRaw() (key, val []byte, err error) {
	if r.pending {
		r.pending = false
		r.it.Next()
	}
	needRow := r.filter != nil || r.expiry != nil
	for ; r.it.Valid(); r.it.Next() {
		r.count++
		if r.count%256 == 0 {
			if err := r.c.Ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		key, val = r.it.Key(), r.it.Value()
		if needRow {
			if err := decodeRow(r.n.Table, key, val, r.row); err != nil {
				return nil, nil, err
			}
			ok, err := visible(r.c, r.expiry, r.filter, r.row)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				continue
			}
		}
		// The key and value stay valid until the iterator moves, which the
		// next call does first: the iterator is left on this row.
		r.pending = true
		return key, val, nil
	}
	return nil, nil, r.it.Error()
}

func (s *pointScan) nextRaw() (key, val []byte, err error) {
	for len(s.parts) > 0 {
		part := s.parts[0]
		s.parts = s.parts[1:]
		s.seen++
		if s.seen%256 == 0 {
			if err := s.c.Ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		key := part.span.Start
		val, ok, err := s.pr.GetNoCopy(key)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		s.c.addReads(s.n.Table.ID, true, part.shard, 1)
		if s.filter != nil || s.expiry != nil {
			if err := decodeRow(s.n.Table, key, val, s.decodedRow()); err != nil {
				return nil, nil, err
			}
			ok, err = visible(s.c, s.expiry, s.filter, s.row)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				continue
			}
		}
		return key, val, nil
	}
	return nil, nil, nil
}
