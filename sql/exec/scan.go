package exec

import (
	"bytes"
	"context"
	"github.com/pivotdb/pivotdb/panics"
	"runtime"
	"sync"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// A scan reads its key span shard by shard: the span is cut at the shard
// boundaries of the table's shard map (taken once per statement; it stays
// valid if the table is resharded meanwhile, because shards only change
// metadata). When the reader allows concurrent iterators (committed data,
// not a transaction's write batch) and more than one shard is involved,
// workers read, decode and filter shards in parallel while the consumer
// returns their rows in shard order — which is key order.

// scanBatchRows is how many rows a worker hands over at a time.
const scanBatchRows = 256

// shardPart is one shard's piece of a scan.
type shardPart struct {
	span  storage.Span
	shard partition.Shard
}

// scanParts cuts the spans (sorted, disjoint) at shard boundaries; only
// shards that intersect a span are read.
func scanParts(c *Context, n *planner.Scan, spans []storage.Span) []shardPart {
	return scanPartsOf(c, n.Table.ID, spans)
}

// scanPartsOf is scanParts for the table (or index) with the given id.
func scanPartsOf(c *Context, tableID uint64, spans []storage.Span) []shardPart {
	var sm *partition.ShardMap
	if c.Shards != nil {
		sm = c.Shards.Map(tableID)
	}
	// Most spans lie in one shard (an IN-list's points: one part each).
	parts := make([]shardPart, 0, len(spans))
	last := -1 // the shard of the previous span, if it lay in one
	for _, span := range spans {
		if sm == nil {
			parts = append(parts, shardPart{span: span})
			continue
		}
		// Spans come in key order, so a span often lies in the shard of
		// the one before: two key comparisons instead of OverlappingRange's
		// two binary searches over the pivots.
		if last >= 0 && !span.Empty() && spanWithin(span, sm.Shard(last).Span) {
			sh := sm.Shard(last)
			c.Shards.SampleKey(sh, span.Start)
			parts = append(parts, shardPart{span: span, shard: sh})
			continue
		}
		lo, hi := sm.OverlappingRange(span)
		last = -1
		if hi == lo+1 {
			last = lo
		}
		for k := lo; k < hi; k++ {
			sh := sm.Shard(k)
			part := shardPart{span: span.Intersect(sh.Span), shard: sh}
			// Feeds split by load: the first key read in the shard (a point
			// lookup's key). Two atomic loads unless the shard is hot.
			c.Shards.SampleKey(sh, part.span.Start)
			parts = append(parts, part)
		}
	}
	return parts
}

// spanWithin reports whether every key of span lies in shard (a shard's
// span, whose End is nil when unbounded).
func spanWithin(span, shard storage.Span) bool {
	if bytes.Compare(span.Start, shard.Start) < 0 {
		return false
	}
	return shard.End == nil || span.End != nil && bytes.Compare(span.End, shard.End) <= 0
}

// rowReader reads, decodes and filters the rows of one span. Rows expired
// under the table's TTL (package ttl) are skipped before the filter: every
// reader of a table (SELECT, joins, the targets of UPDATE and DELETE, point
// lookups) comes through here, so none of them sees a row the TTL runner
// has not deleted yet.
type rowReader struct {
	c      *Context
	n      *planner.Scan
	filter expr.Expr
	expiry *ttl.Expiry // nil: the table has no TTL
	shard  partition.Shard
	it     *storage.Iterator
	row    expr.Row
	count  int // rows visited, counted into the shard's reads on close
	// pending: nextRaw returned the row the iterator is on, which the
	// next call steps past (wiresource.go).
	pending bool
}

func newRowReader(c *Context, n *planner.Scan, filter expr.Expr, expiry *ttl.Expiry, part shardPart) (*rowReader, error) {
	it, err := c.Reader.NewIter(part.span)
	if err != nil {
		return nil, err
	}
	it.First()
	return &rowReader{c: c, n: n, filter: filter, expiry: expiry, shard: part.shard, it: it, row: make(expr.Row, len(n.Table.Columns))}, nil
}

// next returns the next matching row (valid until the next call), or nil.
func (r *rowReader) next() (expr.Row, error) {
	if r.pending {
		r.pending = false
		r.it.Next()
	}
	for ; r.it.Valid(); r.it.Next() {
		r.count++
		if r.count%256 == 0 {
			if err := r.c.Ctx.Err(); err != nil {
				return nil, err
			}
		}
		if err := decodeRow(r.n.Table, r.it.Key(), r.it.Value(), r.row); err != nil {
			return nil, err
		}
		ok, err := visible(r.c, r.expiry, r.filter, r.row)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		r.it.Next()
		return r.row, nil
	}
	return nil, r.it.Error()
}

// decodeRow decodes a table row stored under key with value val into row.
func decodeRow(t *catalog.Table, key, val []byte, row expr.Row) error {
	for i := range row {
		row[i] = types.NullValue
	}
	if err := rowenc.DecodeKey(t, key, row); err != nil {
		return err
	}
	return rowenc.DecodeValue(t, val, row)
}

// visible reports whether a decoded row is one the statement may see: not
// expired under the table's TTL (nil expiry: no TTL) and passing the read's
// remaining filter. Every table read — range scans, point reads, index
// fetches — decides here, so none of them returns an expired row.
func visible(c *Context, expiry *ttl.Expiry, filter expr.Expr, row expr.Row) (bool, error) {
	if expiry != nil && expiry.Expired(row) {
		return false, nil
	}
	if filter == nil {
		return true, nil
	}
	return isTrue(c, filter, row)
}

func (r *rowReader) close() {
	if r.it != nil {
		r.it.Close()
		r.it = nil
		r.c.addReads(r.n.Table.ID, false, r.shard, int64(r.count))
	}
}

// serialScan reads the parts one after another.
type serialScan struct {
	c      *Context
	n      *planner.Scan
	filter expr.Expr
	expiry *ttl.Expiry
	parts  []shardPart
	cur    *rowReader
}

func (s *serialScan) Next() (expr.Row, error) {
	for {
		if s.cur == nil {
			if len(s.parts) == 0 {
				return nil, nil
			}
			p := s.parts[0]
			s.parts = s.parts[1:]
			r, err := newRowReader(s.c, s.n, s.filter, s.expiry, p)
			if err != nil {
				return nil, err
			}
			s.cur = r
		}
		row, err := s.cur.next()
		if err != nil || row != nil {
			return row, err
		}
		s.cur.close()
		s.cur = nil
	}
}

func (s *serialScan) Close() {
	if s.cur != nil {
		s.cur.close()
		s.cur = nil
	}
	s.parts = nil
}

// parallelScan reads parts with a bounded number of workers; the consumer
// takes parts in order. Each part has its own channel of row batches.
type parallelScan struct {
	ctx    context.Context
	cancel context.CancelFunc
	outs   []chan scanBatch
	pos    int
	batch  []expr.Row
	wg     sync.WaitGroup
}

type scanBatch struct {
	rows []expr.Row
	err  error
}

func newParallelScan(c *Context, n *planner.Scan, filter expr.Expr, expiry *ttl.Expiry, parts []shardPart) *parallelScan {
	ctx, cancel := context.WithCancel(c.Ctx)
	p := &parallelScan{ctx: ctx, cancel: cancel, outs: make([]chan scanBatch, len(parts))}
	for i := range parts {
		p.outs[i] = make(chan scanBatch, 4)
	}
	// A semaphore bounds the workers reading at once; parts start in order
	// so the part the consumer needs next is always among them.
	workers := max(2, runtime.GOMAXPROCS(0))
	sem := make(chan struct{}, workers)
	wc := *c
	wc.Ctx = ctx
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		// The dispatcher only hands out parts; a panic here is a bug in
		// this loop, and the consumer would wait on parts never started:
		// close them all with the error first.
		next := 0
		var err error
		defer func() {
			if err != nil {
				for _, out := range p.outs[next:] {
					select {
					case out <- scanBatch{err: err}:
					default:
					}
					close(out)
				}
			}
		}()
		defer panics.Recover("exec: parallel scan dispatcher", &err)
		for i, part := range parts {
			next = i
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				for _, out := range p.outs[i:] {
					close(out)
				}
				return
			}
			p.wg.Add(1)
			next = i + 1
			go func(part shardPart, out chan scanBatch) {
				defer p.wg.Done()
				defer func() { <-sem }()
				defer close(out)
				// A panic while reading a part fails the statement with
				// XX000 (the consumer gets it as the part's error); the
				// part's iterator is closed by readPart's defer.
				var err error
				func() {
					defer panics.Recover("exec: parallel scan worker", &err)
					panics.Inject("exec.scanworker")
					readPart(&wc, n, filter, expiry, part, out)
				}()
				if err != nil {
					select {
					case out <- scanBatch{err: err}:
					case <-ctx.Done():
					}
				}
			}(part, p.outs[i])
		}
	}()
	return p
}

func readPart(c *Context, n *planner.Scan, filter expr.Expr, expiry *ttl.Expiry, part shardPart, out chan scanBatch) {
	send := func(b scanBatch) bool {
		select {
		case out <- b:
			return true
		case <-c.Ctx.Done():
			return false
		}
	}
	r, err := newRowReader(c, n, filter, expiry, part)
	if err != nil {
		send(scanBatch{err: err})
		return
	}
	defer r.close()
	buf := make([]expr.Row, 0, scanBatchRows)
	for {
		row, err := r.next()
		if err != nil {
			send(scanBatch{err: err})
			return
		}
		if row == nil {
			break
		}
		buf = append(buf, append(expr.Row(nil), row...))
		if len(buf) == scanBatchRows {
			if !send(scanBatch{rows: buf}) {
				return
			}
			buf = make([]expr.Row, 0, scanBatchRows)
		}
	}
	if len(buf) > 0 {
		send(scanBatch{rows: buf})
	}
}

func (p *parallelScan) Next() (expr.Row, error) {
	for len(p.batch) == 0 {
		if p.pos >= len(p.outs) {
			return nil, nil
		}
		b, ok := <-p.outs[p.pos]
		if !ok {
			p.pos++
			continue
		}
		if b.err != nil {
			return nil, b.err
		}
		p.batch = b.rows
	}
	row := p.batch[0]
	p.batch = p.batch[1:]
	return row, nil
}

func (p *parallelScan) Close() {
	p.cancel()
	// Drain so blocked workers exit, then wait for them: no iterator may
	// outlive the statement.
	for _, out := range p.outs[p.pos:] {
		for range out {
		}
	}
	p.wg.Wait()
}
