package history

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// OpKind is the kind of a micro-operation.
type OpKind uint8

const (
	// Append appends Value to the list of Key.
	Append OpKind = iota + 1
	// Read reads the list of Key (List).
	Read
)

// Op is one micro-operation of a transaction.
type Op struct {
	Kind  OpKind
	Key   int
	Value int   // Append
	List  []int // Read: the list as read (nil before the read completed)
}

// Status is a transaction's outcome as the client saw it.
type Status uint8

const (
	// StatusOK: the transaction committed.
	StatusOK Status = iota + 1
	// StatusFail: the transaction surely did not commit (an error before
	// COMMIT, a rollback, a serialization failure).
	StatusFail
	// StatusInfo: unknown (the connection broke during COMMIT).
	StatusInfo
)

// Txn is one transaction of a history. Invoke and Complete are times on
// one monotonic clock (nanoseconds); Complete is ignored unless Status is
// StatusOK or StatusFail.
type Txn struct {
	ID       int
	Process  int
	Ops      []Op
	Status   Status
	Invoke   int64
	Complete int64
}

func (t *Txn) String() string {
	var parts []string
	for _, op := range t.Ops {
		if op.Kind == Append {
			parts = append(parts, fmt.Sprintf("append(%d,%d)", op.Key, op.Value))
		} else {
			parts = append(parts, fmt.Sprintf("read(%d)=%v", op.Key, op.List))
		}
	}
	return fmt.Sprintf("T%d[p%d %s %s]", t.ID, t.Process, t.Status, strings.Join(parts, " "))
}

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusFail:
		return "fail"
	case StatusInfo:
		return "info"
	}
	return "?"
}

// Level is the isolation a history is checked against.
type Level uint8

const (
	ReadCommitted Level = iota + 1
	// RepeatableRead is PostgreSQL's: snapshot isolation.
	RepeatableRead
	Serializable
	// StrictSerializable is Serializable plus real-time order.
	StrictSerializable
)

// Forbids reports whether level l rules out anomaly kind k.
func (l Level) Forbids(k string) bool {
	switch k {
	case "G0", "G1a", "G1b", "G1c", "internal", "duplicate-elements", "garbage-read", "incompatible-order":
		return true
	case "G-single":
		return l >= RepeatableRead
	case "G2-item":
		return l >= Serializable
	case "G0-realtime", "G1c-realtime", "G-single-realtime", "G2-item-realtime":
		return l == StrictSerializable
	}
	return false
}

// Anomaly is one violation found in a history.
type Anomaly struct {
	Kind string
	// Txns are the transactions involved: a cycle in order, or the reader
	// and the writer.
	Txns []int
	// Explanation says what was seen, in terms of keys and values.
	Explanation string
}

// Result is the outcome of a check.
type Result struct {
	Level     Level
	Anomalies []Anomaly
}

// Valid reports whether the history has no anomaly its level forbids.
func (r *Result) Valid() bool {
	for _, a := range r.Anomalies {
		if r.Level.Forbids(a.Kind) {
			return false
		}
	}
	return true
}

// Kinds lists the kinds of anomalies found, sorted, each once.
func (r *Result) Kinds() []string {
	var out []string
	for _, a := range r.Anomalies {
		if !slices.Contains(out, a.Kind) {
			out = append(out, a.Kind)
		}
	}
	sort.Strings(out)
	return out
}

func (r *Result) String() string {
	var b strings.Builder
	for _, a := range r.Anomalies {
		forbidden := ""
		if r.Level.Forbids(a.Kind) {
			forbidden = " (forbidden)"
		}
		fmt.Fprintf(&b, "%s%s: %s\n", a.Kind, forbidden, a.Explanation)
	}
	return b.String()
}

// Edge kinds of the dependency graph, as bits.
const (
	ww = 1 << iota
	wr
	rw
	rt
)

func edgeName(m int) string {
	var parts []string
	for bit, name := range map[int]string{ww: "ww", wr: "wr", rw: "rw", rt: "rt"} {
		if m&bit != 0 {
			parts = append(parts, name)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "+")
}

// graph is the dependency graph: edges[a][b] is the mask of edge kinds
// from a to b, why[a][b] a description of one of them.
type graph struct {
	edges map[int]map[int]int
	why   map[int]map[int]string
}

func (g *graph) add(a, b, kind int, why string) {
	if a == b {
		return
	}
	if g.edges[a] == nil {
		g.edges[a] = map[int]int{}
		g.why[a] = map[int]string{}
	}
	if g.edges[a][b]&kind == 0 && kind != rt {
		g.why[a][b] = why
	}
	g.edges[a][b] |= kind
}

// CheckListAppend checks a list-append history at level l.
func CheckListAppend(h []Txn, l Level) *Result {
	c := &checker{h: h, byID: map[int]*Txn{}, writer: map[[2]int]*Txn{}, res: &Result{Level: l}}
	c.run()
	return c.res
}

type checker struct {
	h    []Txn
	byID map[int]*Txn
	// writer maps (key, value) to the transaction that appended it.
	writer map[[2]int]*Txn
	// order is each key's version order: the longest list read.
	order map[int][]int
	// committed are the transactions in the graph: the ones that
	// committed, and the unknown ones whose appends were read.
	committed map[int]bool
	g         graph
	res       *Result
}

func (c *checker) report(kind string, txns []int, format string, args ...any) {
	c.res.Anomalies = append(c.res.Anomalies, Anomaly{Kind: kind, Txns: txns, Explanation: fmt.Sprintf(format, args...)})
}

func (c *checker) run() {
	for i := range c.h {
		t := &c.h[i]
		c.byID[t.ID] = t
		for _, op := range t.Ops {
			if op.Kind == Append {
				c.writer[[2]int{op.Key, op.Value}] = t
			}
		}
	}
	c.committed = map[int]bool{}
	for i := range c.h {
		if c.h[i].Status == StatusOK {
			c.committed[c.h[i].ID] = true
		}
	}
	c.readChecks()
	c.versionOrders()
	c.internal()
	c.g = graph{edges: map[int]map[int]int{}, why: map[int]map[int]string{}}
	c.dependencies()
	c.realtime()
	c.cycles()
}

// reads calls fn for every read of a committed transaction.
func (c *checker) reads(fn func(t *Txn, op Op)) {
	for i := range c.h {
		t := &c.h[i]
		if t.Status != StatusOK {
			continue
		}
		for _, op := range t.Ops {
			if op.Kind == Read && op.List != nil {
				fn(t, op)
			}
		}
	}
}

// readChecks finds corrupt reads and reads of aborted or intermediate
// states (G1a, G1b), and marks unknown transactions whose appends were
// seen as committed.
func (c *checker) readChecks() {
	c.reads(func(t *Txn, op Op) {
		seen := map[int]bool{}
		for _, v := range op.List {
			if seen[v] {
				c.report("duplicate-elements", []int{t.ID}, "T%d read key %d = %v: %d twice", t.ID, op.Key, op.List, v)
			}
			seen[v] = true
			w, ok := c.writer[[2]int{op.Key, v}]
			switch {
			case !ok:
				c.report("garbage-read", []int{t.ID}, "T%d read key %d = %v: nobody appended %d", t.ID, op.Key, op.List, v)
			case w.Status == StatusFail:
				c.report("G1a", []int{t.ID, w.ID}, "T%d read key %d = %v: %d was appended by T%d, which aborted", t.ID, op.Key, op.List, v, w.ID)
			case w.Status == StatusInfo:
				c.committed[w.ID] = true
			}
		}
		if n := len(op.List); n > 0 {
			last := op.List[n-1]
			if w, ok := c.writer[[2]int{op.Key, last}]; ok && w.ID != t.ID {
				// w's appends to the key must all be visible or none.
				var mine []int
				for _, o := range w.Ops {
					if o.Kind == Append && o.Key == op.Key {
						mine = append(mine, o.Value)
					}
				}
				if len(mine) > 1 && mine[len(mine)-1] != last {
					c.report("G1b", []int{t.ID, w.ID}, "T%d read key %d = %v, which ends at %d, an intermediate append of T%d (its appends: %v)",
						t.ID, op.Key, op.List, last, w.ID, mine)
				}
			}
		}
	})
}

// versionOrders derives each key's version order from its longest read
// and checks every read is a prefix of it.
func (c *checker) versionOrders() {
	c.order = map[int][]int{}
	c.reads(func(t *Txn, op Op) {
		if len(op.List) > len(c.order[op.Key]) {
			c.order[op.Key] = op.List
		}
	})
	c.reads(func(t *Txn, op Op) {
		long := c.order[op.Key]
		if !slices.Equal(long[:len(op.List)], op.List) {
			c.report("incompatible-order", []int{t.ID}, "T%d read key %d = %v, which is not a prefix of %v", t.ID, op.Key, op.List, long)
		}
	})
}

// internal checks that a transaction's reads see its own earlier appends,
// in order, at the end of the list.
func (c *checker) internal() {
	for i := range c.h {
		t := &c.h[i]
		if t.Status != StatusOK {
			continue
		}
		own := map[int][]int{}
		for _, op := range t.Ops {
			switch op.Kind {
			case Append:
				own[op.Key] = append(own[op.Key], op.Value)
			case Read:
				mine := own[op.Key]
				if op.List == nil || len(mine) == 0 {
					continue
				}
				if len(op.List) < len(mine) || !slices.Equal(op.List[len(op.List)-len(mine):], mine) {
					c.report("internal", []int{t.ID}, "T%d read key %d = %v after appending %v", t.ID, op.Key, op.List, mine)
				}
			}
		}
	}
}

// dependencies adds the ww, wr and rw edges between committed
// transactions.
func (c *checker) dependencies() {
	writerOf := func(k, v int) (*Txn, bool) {
		w, ok := c.writer[[2]int{k, v}]
		if !ok || !c.committed[w.ID] {
			return nil, false
		}
		return w, true
	}
	for k, order := range c.order {
		for i := 1; i < len(order); i++ {
			a, okA := writerOf(k, order[i-1])
			b, okB := writerOf(k, order[i])
			if okA && okB {
				c.g.add(a.ID, b.ID, ww, fmt.Sprintf("T%d appended %d after T%d's %d to key %d", b.ID, order[i], a.ID, order[i-1], k))
			}
		}
	}
	c.reads(func(t *Txn, op Op) {
		order := c.order[op.Key]
		n := len(op.List)
		if n > 0 {
			if w, ok := writerOf(op.Key, op.List[n-1]); ok {
				c.g.add(w.ID, t.ID, wr, fmt.Sprintf("T%d read key %d = %v, ending at T%d's append", t.ID, op.Key, op.List, w.ID))
			}
		}
		if n < len(order) {
			if w, ok := writerOf(op.Key, order[n]); ok {
				c.g.add(t.ID, w.ID, rw, fmt.Sprintf("T%d read key %d = %v, without the %d T%d appended next", t.ID, op.Key, op.List, order[n], w.ID))
			}
		}
	})
}

// realtime adds an rt edge from every committed transaction to each one
// invoked after it completed. Only the latest-completing predecessors are
// linked (their own rt edges give the rest by transitivity).
func (c *checker) realtime() {
	var done []*Txn
	for i := range c.h {
		t := &c.h[i]
		if c.committed[t.ID] && t.Status == StatusOK {
			done = append(done, t)
		}
	}
	sort.Slice(done, func(i, j int) bool { return done[i].Complete < done[j].Complete })
	for _, b := range c.h {
		if !c.committed[b.ID] {
			continue
		}
		// The predecessors of b are the transactions that completed
		// before b was invoked; link those not already followed by
		// another predecessor (their frontier).
		k := sort.Search(len(done), func(i int) bool { return done[i].Complete >= b.Invoke })
		frontier := int64(-1 << 63)
		for i := k - 1; i >= 0; i-- {
			a := done[i]
			if a.Complete < frontier {
				break
			}
			c.g.add(a.ID, b.ID, rt, "")
			frontier = max(frontier, a.Invoke)
		}
	}
}

// cycles finds the cycle anomalies the level forbids, weakest kind first,
// and each kind with real-time edges only when it is not there without
// them. Searches are confined to strongly connected components, so a
// clean history of thousands of transactions checks in milliseconds.
func (c *checker) cycles() {
	l := c.res.Level
	for _, withRT := range []bool{false, true} {
		extra, suffix := 0, ""
		if withRT {
			if l != StrictSerializable {
				return
			}
			extra, suffix = rt, "-realtime"
		}
		if cyc := c.findCycle(ww|extra, 0); cyc != nil && (!withRT || c.findCycle(ww, 0) == nil) {
			c.reportCycle("G0"+suffix, cyc)
		}
		if cyc := c.findCycle(ww|wr|extra, wr); cyc != nil && (!withRT || c.findCycle(ww|wr, wr) == nil) {
			c.reportCycle("G1c"+suffix, cyc)
		}
		if l < RepeatableRead {
			continue
		}
		single := c.singleRW(ww | wr | extra)
		if single != nil && (!withRT || c.singleRW(ww|wr) == nil) {
			c.reportCycle("G-single"+suffix, single)
		}
		if single == nil && l >= Serializable {
			if cyc := c.findCycle(ww|wr|rw|extra, rw); cyc != nil && (!withRT || c.findCycle(ww|wr|rw, rw) == nil) {
				c.reportCycle("G2-item"+suffix, cyc)
			}
		}
	}
}

func (c *checker) reportCycle(kind string, cyc []int) {
	var b strings.Builder
	for i, a := range cyc {
		next := cyc[(i+1)%len(cyc)]
		m := c.g.edges[a][next]
		fmt.Fprintf(&b, "T%d -%s-> ", a, edgeName(m))
		if w := c.g.why[a][next]; w != "" {
			fmt.Fprintf(&b, "(%s) ", w)
		}
	}
	fmt.Fprintf(&b, "T%d", cyc[0])
	c.report(kind, cyc, "%s", b.String())
}

// sccs labels each node of the graph over edges of the kinds in mask with
// its strongly connected component (Tarjan's algorithm, iterative).
func (c *checker) sccs(mask int) map[int]int {
	index, low, comp := map[int]int{}, map[int]int{}, map[int]int{}
	onStack := map[int]bool{}
	var stack []int
	next, ncomp := 0, 0
	type frame struct {
		node int
		succ []int
		i    int
	}
	for _, root := range sortedKeys(c.g.edges) {
		if _, seen := index[root]; seen {
			continue
		}
		work := []*frame{{node: root, succ: sortedKeys(c.g.edges[root])}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			f := work[len(work)-1]
			if f.i < len(f.succ) {
				w := f.succ[f.i]
				f.i++
				if c.g.edges[f.node][w]&mask == 0 {
					continue
				}
				if _, seen := index[w]; !seen {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, &frame{node: w, succ: sortedKeys(c.g.edges[w])})
				} else if onStack[w] {
					low[f.node] = min(low[f.node], index[w])
				}
				continue
			}
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1].node
				low[p] = min(low[p], low[f.node])
			}
			if low[f.node] == index[f.node] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == f.node {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp
}

// path finds a shortest path from a to b over edges with a kind in mask,
// through nodes of component cid of comp (BFS); it returns the nodes from
// a up to, not including, b.
func (c *checker) path(a, b, mask int, comp map[int]int, cid int) []int {
	prev := map[int]int{a: a}
	queue := []int{a}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range sortedKeys(c.g.edges[x]) {
			if c.g.edges[x][y]&mask == 0 || comp[y] != cid {
				continue
			}
			if _, ok := prev[y]; ok {
				continue
			}
			prev[y] = x
			if y == b {
				var out []int
				for n := x; ; n = prev[n] {
					out = append(out, n)
					if n == a {
						break
					}
				}
				slices.Reverse(out)
				return out
			}
			queue = append(queue, y)
		}
	}
	return nil
}

// findCycle returns a cycle over edges of the kinds in mask (nodes in
// order), nil when there is none; with need set, the cycle includes an edge
// of that kind.
func (c *checker) findCycle(mask, need int) []int {
	comp := c.sccs(mask)
	for _, a := range sortedKeys(c.g.edges) {
		for _, b := range sortedKeys(c.g.edges[a]) {
			m := c.g.edges[a][b]
			if m&mask == 0 || (need != 0 && m&need == 0) || comp[a] != comp[b] {
				continue
			}
			if p := c.path(b, a, mask, comp, comp[a]); p != nil {
				return append([]int{a}, p...)
			}
		}
	}
	return nil
}

// singleRW finds a cycle of exactly one rw edge and otherwise edges of
// the kinds in mask (G-single).
func (c *checker) singleRW(mask int) []int {
	comp := c.sccs(mask | rw)
	for _, a := range sortedKeys(c.g.edges) {
		for _, b := range sortedKeys(c.g.edges[a]) {
			if c.g.edges[a][b]&rw == 0 || comp[a] != comp[b] {
				continue
			}
			if p := c.path(b, a, mask, comp, comp[a]); p != nil {
				return append([]int{a}, p...)
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}
