package planner

import (
	"bytes"
	"sort"

	"github.com/pivotdb/pivotdb/storage"
)

// Shard pruning (design §6: only shards that intersect a range are read).
//
// A table's shards are given by their start keys (encoded, table prefix
// included), strictly ascending: shard k holds [starts[k], starts[k+1]) and
// the last one everything from its start on. Spans are the encoded ranges
// of a read (Ranges.ToSpans): sorted, disjoint, half-open.
//
//	shards   |  0      |  1         |  2      |  3 ...
//	         s0        s1           s2        s3
//	spans         [====)     [=)        [=========)
//	read     0           1          2 and 3

// Prune returns the indexes, ascending, of the shards that intersect some
// span. Keys before shardStarts[0] belong to no shard.
func Prune(spans []storage.Span, shardStarts [][]byte) []int {
	var out []int
	for _, sh := range ShardSpans(spans, shardStarts) {
		out = append(out, sh.Shard)
	}
	return out
}

// ShardRead is the part of a read that falls into one shard: the spans
// cut to the shard's bounds, for reading shards in parallel.
type ShardRead struct {
	Shard int
	Spans []storage.Span
}

// ShardSpans splits spans (sorted, disjoint) by the shards they intersect;
// shards come in key order, so concatenating their reads keeps key order.
func ShardSpans(spans []storage.Span, shardStarts [][]byte) []ShardRead {
	var out []ShardRead
	n := len(shardStarts)
	for _, sp := range spans {
		if sp.Empty() || n == 0 {
			continue
		}
		// The shard holding sp.Start: the last one starting at or before it.
		k := sort.Search(n, func(i int) bool { return bytes.Compare(shardStarts[i], sp.Start) > 0 }) - 1
		if k < 0 {
			k = 0
		}
		for ; k < n; k++ {
			shard := storage.Span{Start: shardStarts[k]}
			if k+1 < n {
				shard.End = shardStarts[k+1]
			}
			part := sp.Intersect(shard)
			if part.Empty() {
				if sp.End != nil && bytes.Compare(shardStarts[k], sp.End) >= 0 {
					break
				}
				continue
			}
			if m := len(out); m > 0 && out[m-1].Shard == k {
				out[m-1].Spans = append(out[m-1].Spans, part)
			} else {
				out = append(out, ShardRead{Shard: k, Spans: []storage.Span{part}})
			}
			if part.End == nil || (sp.End != nil && bytes.Equal(part.End, sp.End)) {
				break
			}
		}
	}
	return out
}
