package exec

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
)

// EXPLAIN ANALYZE: an Analysis rides on the statement's context.Context
// (WithAnalysis), so every executor Context the statement builds — its
// query, an INSERT's source, an UPDATE's scan, subqueries, the inner side
// of a lateral join — reports into it without each caller passing it on.
// Build wraps each iterator of an analysed statement in an analyzedIter,
// which counts the rows the node returns and, with timing on, the time
// spent starting it and in its Next (inputs included, as PostgreSQL's
// "actual time"). A statement that is not analysed pays one nil check per
// Build and nothing per row: no wrapper is made.
//
// Rows read from storage are counted where a scan closes a shard's part
// (Context.addReads), which already updated the shard's read counter: the
// scan's node gets them per shard.

// Analysis collects what EXPLAIN ANALYZE shows for each plan node. It is
// safe for concurrent use: a subquery may run in a parallel scan's workers.
type Analysis struct {
	timing bool
	mu     sync.Mutex
	nodes  map[planner.Node]*NodeStats
}

// NewAnalysis starts collecting; timing measures each node's time (TIMING).
func NewAnalysis(timing bool) *Analysis {
	return &Analysis{timing: timing, nodes: map[planner.Node]*NodeStats{}}
}

type analysisKey struct{}

// WithAnalysis returns ctx carrying a, so that the statement run under it
// is measured.
func WithAnalysis(ctx context.Context, a *Analysis) context.Context {
	return context.WithValue(ctx, analysisKey{}, a)
}

func analysisFrom(ctx context.Context) *Analysis {
	if ctx == nil {
		return nil
	}
	a, _ := ctx.Value(analysisKey{}).(*Analysis)
	return a
}

// Stats returns what was measured of n; nil when n never started.
func (a *Analysis) Stats(n planner.Node) *NodeStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nodes[n]
}

func (a *Analysis) stats(n planner.Node) *NodeStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.nodes[n]
	if st == nil {
		st = &NodeStats{}
		a.nodes[n] = st
	}
	return st
}

// NodeStats are one plan node's measures over all its runs.
type NodeStats struct {
	loops, rows, nanos atomic.Int64

	mu sync.Mutex
	// reads are the rows (keys) read from storage per shard: a table's
	// rows for a scan, the index's entries for an index scan.
	reads map[partition.ShardID]int64
}

// Loops is how many times the node was started.
func (s *NodeStats) Loops() int64 { return s.loops.Load() }

// Rows is how many rows the node returned over all loops.
func (s *NodeStats) Rows() int64 { return s.rows.Load() }

// Time is the time spent starting the node and in its Next, inputs
// included (zero without timing).
func (s *NodeStats) Time() time.Duration { return time.Duration(s.nanos.Load()) }

// ShardReads is one shard's count of rows read from storage.
type ShardReads struct {
	Shard partition.ShardID
	Rows  int64
}

// Reads returns the rows read from storage per shard, by shard id.
func (s *NodeStats) Reads() []ShardReads {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ShardReads, 0, len(s.reads))
	for id, n := range s.reads {
		out = append(out, ShardReads{Shard: id, Rows: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Shard < out[j].Shard })
	return out
}

func (s *NodeStats) addReads(id partition.ShardID, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reads == nil {
		s.reads = map[partition.ShardID]int64{}
	}
	s.reads[id] += n
}

// buildAnalyzed is Build for an analysed statement: the node's iterator,
// counted and timed.
func (a *Analysis) buildAnalyzed(c *Context, n planner.Node) (Iter, error) {
	st := a.stats(n)
	st.loops.Add(1)
	var start time.Time
	if a.timing {
		start = time.Now()
	}
	if _, ok := n.(*planner.Scan); ok {
		// The scan's shard parts report their reads to the node.
		sc := *c
		sc.reads = st
		c = &sc
	}
	in, err := build(c, n)
	if a.timing {
		st.nanos.Add(int64(time.Since(start)))
	}
	if err != nil {
		return nil, err
	}
	return &analyzedIter{in: in, st: st, timing: a.timing}, nil
}

// analyzedIter counts the rows of the iterator it wraps and, with timing,
// the time spent in its Next.
type analyzedIter struct {
	in     Iter
	st     *NodeStats
	timing bool
}

func (it *analyzedIter) Next() (expr.Row, error) {
	if !it.timing {
		r, err := it.in.Next()
		if r != nil {
			it.st.rows.Add(1)
		}
		return r, err
	}
	start := time.Now()
	r, err := it.in.Next()
	it.st.nanos.Add(int64(time.Since(start)))
	if r != nil {
		it.st.rows.Add(1)
	}
	return r, err
}

func (it *analyzedIter) Close() { it.in.Close() }

// addReads counts n rows (keys) read from storage in shard sh of the table
// (or index) tableID: into the shard's read counter (sys.partitions'
// reads), the table's counters (pg_stat_user_tables' seq_tup_read or, for
// point lookups and index scans, idx_tup_fetch; /metrics) and, under
// EXPLAIN ANALYZE, the scan's node.
func (c *Context) addReads(tableID uint64, index bool, sh partition.Shard, n int64) {
	if n == 0 {
		return
	}
	sh.AddReads(n)
	if c.Scans != nil {
		c.Scans.CountRowsRead(tableID, index, n)
	}
	if c.reads != nil {
		c.reads.addReads(sh.ID, n)
	}
}
