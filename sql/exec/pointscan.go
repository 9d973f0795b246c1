package exec

import (
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/ttl"
	"github.com/pivotdb/pivotdb/storage"
)

// pointScan reads a scan whose spans are all single full primary keys
// (`k = 1`, `k IN (...)`, with computed key columns fixed too): each part's
// span starts at the one key it can hold. The keys are looked up one after
// another, in key order, through one storage.PointReader — no iterator per
// key and no goroutine per shard, which for a few keys cost more than the
// reads — and, for a table with KEY_BLOOM_FILTER, through the bloom filters,
// which answer most lookups of absent keys without reading a data block.
//
// Like rowReader it hides rows expired under the table's TTL and applies the
// residual filter, and it counts the rows it finds into their shard's reads.
type pointScan struct {
	c      *Context
	n      *planner.Scan
	filter expr.Expr
	expiry *ttl.Expiry
	parts  []shardPart
	pr     *storage.PointReader
	row    expr.Row
	seen   int
}

func newPointScan(c *Context, n *planner.Scan, filter expr.Expr, expiry *ttl.Expiry, parts []shardPart) (*pointScan, error) {
	pr, err := c.Reader.NewPointReader()
	if err != nil {
		return nil, err
	}
	// The row is made when a row is first decoded (decodedRow): rows sent
	// straight to the wire (WireSource) need none unless a filter or the
	// TTL reads them, and a point SELECT saves the allocation.
	return &pointScan{c: c, n: n, filter: filter, expiry: expiry, parts: parts, pr: pr}, nil
}

// decodedRow returns the scan's row buffer, made on first use.
func (s *pointScan) decodedRow() expr.Row {
	if s.row == nil {
		s.row = make(expr.Row, len(s.n.Table.Columns))
	}
	return s.row
}

func (s *pointScan) Next() (expr.Row, error) {
	for len(s.parts) > 0 {
		part := s.parts[0]
		s.parts = s.parts[1:]
		s.seen++
		if s.seen%256 == 0 {
			if err := s.c.Ctx.Err(); err != nil {
				return nil, err
			}
		}
		key := part.span.Start
		// decodeRow copies what it keeps, so the value need not be a copy.
		val, ok, err := s.pr.GetNoCopy(key)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		s.c.addReads(s.n.Table.ID, true, part.shard, 1)
		if err := decodeRow(s.n.Table, key, val, s.decodedRow()); err != nil {
			return nil, err
		}
		ok, err = visible(s.c, s.expiry, s.filter, s.row)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		return s.row, nil
	}
	return nil, nil
}

func (s *pointScan) Close() {
	if s.pr != nil {
		s.pr.Close()
		s.pr = nil
	}
	s.parts = nil
}
