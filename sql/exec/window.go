package exec

import (
	"bytes"
	"slices"
	"sort"

	"github.com/pivotdb/pivotdb/planner"
	"github.com/pivotdb/pivotdb/sql/expr"
	"github.com/pivotdb/pivotdb/sql/rowenc"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// Window functions (planner.Window).
//
// The iterator reads its whole input (counted against MemLimit), appending
// to each row copy the values it needs later: the PARTITION BY values, the
// ORDER BY values, every function's arguments and, for RANGE frames with
// an offset, each row's frame-end values. It sorts the rows by partition
// and order (stable, so peers keep their input order), then works one
// partition at a time: it finds the peer groups, computes every function
// for every row of the partition, and streams the partition's rows out
// before looking at the next one.
//
// Frames are index intervals [s, e] of the sorted partition. An aggregate
// whose frame starts at UNBOUNDED PRECEDING runs incrementally (the frame
// end never moves back as the row advances), so a running sum is O(n);
// other frames are recomputed per row, except that a row whose frame equals
// the previous row's (peers under RANGE) reuses its value.

type windowIter struct {
	c  *Context
	n  *planner.Window
	in Iter

	nIn      int        // input columns
	partOff  int        // first PARTITION BY value in a stored row
	orderOff int        // first ORDER BY value
	argOff   []int      // per function: its first argument
	valOff   []int      // per function: RANGE start and end values (-1: none)
	offsets  [][2]int64 // per function: ROWS/GROUPS start and end offsets

	rows []expr.Row
	keys []sortEntry // keys[i] is rows[i]'s
	done bool

	// The partition being emitted: rows[ps:pe], results[f][i-ps].
	ps, pe  int
	pos     int
	results [][]types.Value
	out     expr.Row

	// Peer groups of the partition: group[i-ps] is row i's group number,
	// groupStart[g] and groupEnd[g] (exclusive) its rows.
	group                []int
	groupStart, groupEnd []int
}

func newWindow(c *Context, n *planner.Window) (Iter, error) {
	in, err := Build(c, n.Input)
	if err != nil {
		return nil, err
	}
	return newWindowOver(c, n, in)
}

// newWindowOver evaluates n over the rows of in (which it closes).
func newWindowOver(c *Context, n *planner.Window, in Iter) (Iter, error) {
	var err error
	w := &windowIter{c: c, n: n, in: in}
	w.nIn = len(n.Input.Columns())
	w.partOff = w.nIn
	w.orderOff = w.partOff + len(n.PartitionBy)
	next := w.orderOff + len(n.OrderBy)
	for _, f := range n.Funcs {
		w.argOff = append(w.argOff, next)
		next += len(f.Args)
		if f.Frame.Mode == planner.FrameRange && (f.Frame.Start.Value != nil || f.Frame.End.Value != nil) {
			w.valOff = append(w.valOff, next)
			next += 2
		} else {
			w.valOff = append(w.valOff, -1)
		}
		var offs [2]int64
		for k, b := range []planner.FrameBound{f.Frame.Start, f.Frame.End} {
			if b.Offset == nil || f.Frame.Mode == planner.FrameRange {
				continue
			}
			if offs[k], err = frameOffset(c, b.Offset, f.Frame.Mode); err != nil {
				in.Close()
				return nil, err
			}
		}
		w.offsets = append(w.offsets, offs)
	}
	w.out = make(expr.Row, w.nIn+len(n.Funcs))
	return w, nil
}

// frameOffset evaluates a ROWS or GROUPS offset: a non-negative integer.
func frameOffset(c *Context, e expr.Expr, mode planner.FrameMode) (int64, error) {
	v, err := e.Eval(c.Eval, nil)
	if err != nil {
		return 0, err
	}
	if v.IsNull() {
		return 0, sqlerr.New(sqlerr.NullValueNotAllowed, "frame starting offset must not be null")
	}
	iv, err := types.Cast(v, types.TypeInt64)
	if err != nil {
		return 0, err
	}
	if iv.Int() < 0 {
		return 0, sqlerr.New(sqlerr.InvalidPrecedingOrFollowingSize, "frame starting offset must not be negative")
	}
	return iv.Int(), nil
}

// load reads and sorts the input.
func (w *windowIter) load() error {
	n := w.n
	var extra []expr.Expr
	extra = append(extra, n.PartitionBy...)
	for _, o := range n.OrderBy {
		extra = append(extra, o.Expr)
	}
	for _, f := range n.Funcs {
		extra = append(extra, f.Args...)
		if f.Frame.Mode == planner.FrameRange && (f.Frame.Start.Value != nil || f.Frame.End.Value != nil) {
			extra = append(extra, f.Frame.Start.Value, f.Frame.End.Value)
		}
	}
	// The function results will take the place of the extra values.
	resultMem := int64(len(n.Funcs)) * valueOverhead
	nPart, nOrder := len(n.PartitionBy), len(n.OrderBy)
	var arena []byte
	var slab []types.Value
	var offs []int // row k's key is arena[offs[2k]:offs[2k+2]], its partition part up to offs[2k+1]
	for k := 0; ; k++ {
		if k%256 == 255 {
			if err := w.c.Ctx.Err(); err != nil {
				return err
			}
		}
		r, err := w.in.Next()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		// Rows are cut from slabs of rowsPerSlab, one allocation for many.
		width := w.nIn + len(extra)
		if len(slab) < width {
			slab = make([]types.Value, width*rowsPerSlab)
		}
		row := expr.Row(slab[:width:width])
		slab = slab[width:]
		copy(row, r)
		for i, e := range extra {
			if e == nil {
				continue
			}
			if row[w.nIn+i], err = e.Eval(w.c.Eval, r); err != nil {
				return err
			}
		}
		start := len(arena)
		for k := 0; k < nPart; k++ {
			arena = appendOrderKey(arena, row[w.partOff+k], false, n.PartitionNullsFirst)
		}
		mid := len(arena)
		for k, o := range n.OrderBy {
			arena = appendOrderKey(arena, row[w.orderOff+k], o.Desc, o.NullsFirst)
		}
		offs = append(offs, start, mid)
		if err := w.c.grow(rowMemory(row) + resultMem + int64(len(arena)-start) + 40); err != nil {
			return err
		}
		w.rows = append(w.rows, row)
	}
	offs = append(offs, len(arena))
	ents := make([]sortEntry, len(w.rows))
	for k := range ents {
		ents[k] = sortEntry{key: arena[offs[2*k]:offs[2*k+2]:offs[2*k+2]], part: int32(offs[2*k+1] - offs[2*k]), idx: int32(k)}
	}
	if nPart+nOrder > 0 {
		// pdqsort on the encoded keys, ties broken by input position: a
		// stable order, peers kept as they came.
		slices.SortFunc(ents, func(a, b sortEntry) int {
			if c := bytes.Compare(a.key, b.key); c != 0 {
				return c
			}
			return int(a.idx - b.idx)
		})
		sorted := make([]expr.Row, len(w.rows))
		for i, e := range ents {
			sorted[i] = w.rows[e.idx]
		}
		w.rows = sorted
	}
	w.keys = ents
	return nil
}

// rowsPerSlab is how many stored rows share one allocation.
const rowsPerSlab = 256

// sortEntry is a row's PARTITION BY and ORDER BY values in their
// order-preserving key encoding (sql/rowenc; DESC parts complemented), so
// that sorting and finding partitions and peers compare bytes. part is
// the length of the PARTITION BY part.
type sortEntry struct {
	key  []byte
	part int32
	idx  int32
}

// appendSortKey appends v's key encoding. The encoding orders values as
// types.Compare does (NULL first) and is equal exactly for equal values,
// except that it tells -0.0 from 0.0, which are peers: zero is encoded as
// one value.
func appendSortKey(buf []byte, v types.Value) []byte {
	if v.Family().IsFloat() && v.Float() == 0 {
		return storage.AppendFloat64(buf, 0)
	}
	return rowenc.AppendKeyValue(buf, v)
}

// Key bytes that put a NULL before or after every value of a key part.
const (
	keyNullLow  = 0x00
	keyValue    = 0x01
	keyNullHigh = 0x02
)

// appendOrderKey appends v's key for one PARTITION BY or ORDER BY part: a
// byte that places NULL before or after every value, as nullsFirst says,
// whatever the direction, then (values only) v's sort key, complemented
// when desc: the encoding is prefix-free, so complementing its bytes
// reverses the order.
func appendOrderKey(buf []byte, v types.Value, desc, nullsFirst bool) []byte {
	if v.IsNull() {
		if nullsFirst {
			return append(buf, keyNullLow)
		}
		return append(buf, keyNullHigh)
	}
	buf = append(buf, keyValue)
	from := len(buf)
	buf = appendSortKey(buf, v)
	if desc {
		for b := from; b < len(buf); b++ {
			buf[b] = ^buf[b]
		}
	}
	return buf
}

func (w *windowIter) Next() (expr.Row, error) {
	if !w.done {
		w.done = true
		if err := w.load(); err != nil {
			return nil, err
		}
		w.ps, w.pe, w.pos = 0, 0, 0
	}
	if w.pos >= w.pe {
		if w.pe >= len(w.rows) {
			w.rows, w.keys = nil, nil
			return nil, nil
		}
		if err := w.partition(w.pe); err != nil {
			return nil, err
		}
	}
	i := w.pos
	w.pos++
	copy(w.out, w.rows[i][:w.nIn])
	for f := range w.n.Funcs {
		w.out[w.nIn+f] = w.results[f][i-w.ps]
	}
	// The partition's earlier rows are not looked at again.
	w.rows[i] = nil
	return w.out, nil
}

func (w *windowIter) Close() { w.in.Close() }

// samePartition reports whether rows i and j are in one partition.
func (w *windowIter) samePartition(i, j int) bool {
	a, b := w.keys[i], w.keys[j]
	return bytes.Equal(a.key[:a.part], b.key[:b.part])
}

// peers reports whether rows i and j have the same ORDER BY values.
func (w *windowIter) peers(i, j int) bool {
	a, b := w.keys[i], w.keys[j]
	return bytes.Equal(a.key[a.part:], b.key[b.part:])
}

// partition computes the functions for the partition starting at ps.
func (w *windowIter) partition(ps int) error {
	pe := ps + 1
	for pe < len(w.rows) && w.samePartition(ps, pe) {
		pe++
	}
	w.ps, w.pe, w.pos = ps, pe, ps
	w.group = w.group[:0]
	w.groupStart, w.groupEnd = w.groupStart[:0], w.groupEnd[:0]
	for i := ps; i < pe; i++ {
		if i == ps || !w.peers(i-1, i) {
			if i > ps {
				w.groupEnd = append(w.groupEnd, i)
			}
			w.groupStart = append(w.groupStart, i)
		}
		w.group = append(w.group, len(w.groupStart)-1)
	}
	w.groupEnd = append(w.groupEnd, pe)
	if w.results == nil {
		w.results = make([][]types.Value, len(w.n.Funcs))
	}
	for f, fn := range w.n.Funcs {
		res := w.results[f][:0]
		var err error
		if res, err = w.compute(f, fn, res); err != nil {
			return err
		}
		w.results[f] = res
	}
	return w.c.Ctx.Err()
}

// frame returns the frame [s, e] of row i for function f (empty when
// s > e).
func (w *windowIter) frame(f int, fr planner.Frame, i int) (s, e int) {
	ps, pe := w.ps, w.pe
	g := w.group[i-ps]
	last := len(w.groupStart) - 1
	offs := w.offsets[f]
	switch fr.Start.Kind {
	case planner.UnboundedPreceding:
		s = ps
	case planner.CurrentRow:
		s = i
		if fr.Mode != planner.FrameRows {
			s = w.groupStart[g]
		}
	case planner.UnboundedFollowing:
		s = pe
	case planner.OffsetPreceding, planner.OffsetFollowing:
		off := signedOffset(fr.Start.Kind, offs[0])
		switch fr.Mode {
		case planner.FrameRows:
			s = clampIndex(int64(i)+off, ps-1, pe)
		case planner.FrameGroups:
			gs := clampIndex(int64(g)+off, -1, last+1)
			switch {
			case gs < 0:
				s = ps
			case gs > last:
				s = pe
			default:
				s = w.groupStart[gs]
			}
		default:
			s = w.rangeStart(f, i)
		}
	}
	switch fr.End.Kind {
	case planner.UnboundedFollowing:
		e = pe - 1
	case planner.CurrentRow:
		e = i
		if fr.Mode != planner.FrameRows {
			e = w.groupEnd[g] - 1
		}
	case planner.UnboundedPreceding:
		e = ps - 1
	case planner.OffsetPreceding, planner.OffsetFollowing:
		off := signedOffset(fr.End.Kind, offs[1])
		switch fr.Mode {
		case planner.FrameRows:
			e = clampIndex(int64(i)+off, ps-1, pe)
		case planner.FrameGroups:
			ge := clampIndex(int64(g)+off, -1, last+1)
			switch {
			case ge < 0:
				e = ps - 1
			case ge > last:
				e = pe - 1
			default:
				e = w.groupEnd[ge] - 1
			}
		default:
			e = w.rangeEnd(f, i)
		}
	}
	if s < ps {
		s = ps
	}
	if e >= pe {
		e = pe - 1
	}
	return s, e
}

// signedOffset is an offset frame bound's offset as a signed step from
// the current row or group: back for PRECEDING, forward for FOLLOWING.
func signedOffset(k planner.BoundKind, off int64) int64 {
	if k == planner.OffsetPreceding {
		return -off
	}
	return off
}

func clampIndex(v int64, lo, hi int) int {
	if v < int64(lo) {
		return lo
	}
	if v > int64(hi) {
		return hi
	}
	return int(v)
}

// orderCmp compares ORDER BY value a with b in the window's direction.
func (w *windowIter) orderCmp(a, b types.Value) int {
	c := types.Compare(a, b)
	if w.n.OrderBy[0].Desc {
		return -c
	}
	return c
}

// rangeStart is the first row of the partition whose ORDER BY value is at
// or after row i's frame-start value. A row whose ORDER BY value is NULL
// has its peers as the frame, as in PostgreSQL.
func (w *windowIter) rangeStart(f, i int) int {
	key := w.rows[i][w.orderOff]
	bound := w.rows[i][w.valOff[f]]
	if key.IsNull() || bound.IsNull() {
		return w.groupStart[w.group[i-w.ps]]
	}
	// NULLs sort before or after all values (NULLS FIRST/LAST), whatever
	// the direction; they are in no value range.
	nullsFirst := w.n.OrderBy[0].NullsFirst
	return w.ps + sort.Search(w.pe-w.ps, func(j int) bool {
		v := w.rows[w.ps+j][w.orderOff]
		if v.IsNull() {
			return !nullsFirst
		}
		return w.orderCmp(v, bound) >= 0
	})
}

// rangeEnd is the last row whose ORDER BY value is at or before row i's
// frame-end value.
func (w *windowIter) rangeEnd(f, i int) int {
	key := w.rows[i][w.orderOff]
	bound := w.rows[i][w.valOff[f]+1]
	if key.IsNull() || bound.IsNull() {
		return w.groupEnd[w.group[i-w.ps]] - 1
	}
	// Rows with NULL ORDER BY values sort before or after all others
	// (NULLS FIRST/LAST); they are in no value range.
	lo, hi := w.ps, w.pe
	for lo < hi && w.rows[lo][w.orderOff].IsNull() {
		lo++
	}
	for hi > lo && w.rows[hi-1][w.orderOff].IsNull() {
		hi--
	}
	return lo + sort.Search(hi-lo, func(j int) bool {
		return w.orderCmp(w.rows[lo+j][w.orderOff], bound) > 0
	}) - 1
}

// arg returns function f's k-th argument for row i.
func (w *windowIter) arg(f, k, i int) types.Value { return w.rows[i][w.argOff[f]+k] }

// compute appends function f's value for every row of the partition.
func (w *windowIter) compute(f int, fn *planner.WindowFunc, res []types.Value) ([]types.Value, error) {
	ps, pe := w.ps, w.pe
	n := pe - ps
	switch fn.Name {
	case "row_number":
		for i := ps; i < pe; i++ {
			res = append(res, types.NewInt64(int64(i-ps+1)))
		}
		return res, nil
	case "rank":
		for i := ps; i < pe; i++ {
			res = append(res, types.NewInt64(int64(w.groupStart[w.group[i-ps]]-ps+1)))
		}
		return res, nil
	case "dense_rank":
		for i := ps; i < pe; i++ {
			res = append(res, types.NewInt64(int64(w.group[i-ps]+1)))
		}
		return res, nil
	case "percent_rank":
		for i := ps; i < pe; i++ {
			v := 0.0
			if n > 1 {
				v = float64(w.groupStart[w.group[i-ps]]-ps) / float64(n-1)
			}
			res = append(res, types.NewDouble(v))
		}
		return res, nil
	case "cume_dist":
		for i := ps; i < pe; i++ {
			res = append(res, types.NewDouble(float64(w.groupEnd[w.group[i-ps]]-ps)/float64(n)))
		}
		return res, nil
	case "ntile":
		return w.ntile(f, res)
	case "lag", "lead":
		return w.lagLead(f, fn, res)
	case "first_value", "last_value", "nth_value":
		return w.valueAt(f, fn, res)
	}
	if fn.Agg == nil {
		return nil, sqlerr.New(sqlerr.InternalError, "exec: unknown window function %s", fn.Name)
	}
	return w.aggregate(f, fn, res)
}

// ntile takes its bucket count from the partition's first row (PostgreSQL
// evaluates it once per partition).
func (w *windowIter) ntile(f int, res []types.Value) ([]types.Value, error) {
	ps, pe := w.ps, w.pe
	v := w.arg(f, 0, ps)
	if v.IsNull() {
		for i := ps; i < pe; i++ {
			res = append(res, types.NullValue)
		}
		return res, nil
	}
	iv, err := types.Cast(v, types.TypeInt64)
	if err != nil {
		return nil, err
	}
	k := iv.Int()
	if k <= 0 {
		return nil, sqlerr.New(sqlerr.InvalidArgumentForNtile, "argument of ntile must be greater than zero")
	}
	n := int64(pe - ps)
	// The first n%k buckets hold one row more than the others.
	size, big := n/k, n%k
	for j := int64(0); j < n; j++ {
		var b int64
		if j < big*(size+1) {
			b = j / (size + 1)
		} else {
			b = big + (j-big*(size+1))/max(size, 1)
		}
		res = append(res, types.NewInt64(b+1))
	}
	return res, nil
}

func (w *windowIter) lagLead(f int, fn *planner.WindowFunc, res []types.Value) ([]types.Value, error) {
	ps, pe := w.ps, w.pe
	for i := ps; i < pe; i++ {
		off := int64(1)
		if len(fn.Args) > 1 {
			v := w.arg(f, 1, i)
			if v.IsNull() {
				res = append(res, types.NullValue)
				continue
			}
			iv, err := types.Cast(v, types.TypeInt64)
			if err != nil {
				return nil, err
			}
			off = iv.Int()
		}
		if fn.Name == "lag" {
			off = -off
		}
		j := int64(i) + off
		switch {
		case j >= int64(ps) && j < int64(pe):
			res = append(res, w.arg(f, 0, int(j)))
		case len(fn.Args) > 2:
			res = append(res, w.arg(f, 2, i))
		default:
			res = append(res, types.NullValue)
		}
	}
	return res, nil
}

func (w *windowIter) valueAt(f int, fn *planner.WindowFunc, res []types.Value) ([]types.Value, error) {
	for i := w.ps; i < w.pe; i++ {
		s, e := w.frame(f, fn.Frame, i)
		j := -1
		switch fn.Name {
		case "first_value":
			j = s
		case "last_value":
			j = e
		default:
			v := w.arg(f, 1, i)
			if v.IsNull() {
				break
			}
			iv, err := types.Cast(v, types.TypeInt64)
			if err != nil {
				return nil, err
			}
			if iv.Int() <= 0 {
				return nil, sqlerr.New(sqlerr.InvalidArgumentForNthValue, "argument of nth_value must be greater than zero")
			}
			if iv.Int() <= int64(e-s+1) {
				j = s + int(iv.Int()) - 1
			}
		}
		if s > e || j < 0 {
			res = append(res, types.NullValue)
			continue
		}
		res = append(res, w.arg(f, 0, j))
	}
	return res, nil
}

// aggregate evaluates an aggregate over each row's frame.
func (w *windowIter) aggregate(f int, fn *planner.WindowFunc, res []types.Value) ([]types.Value, error) {
	spec := fn.Agg
	input := func(j int) types.Value {
		if spec.Arg == nil {
			return types.Value{}
		}
		return w.arg(f, 0, j)
	}
	add := func(acc expr.AggFunc, j int) error {
		if spec.Filter != nil {
			// FILTER's condition is the last argument.
			if c := w.arg(f, len(fn.Args)-1, j); c.IsNull() || !c.Bool() {
				return nil
			}
		}
		return acc.Add(input(j))
	}
	running := fn.Frame.Start.Kind == planner.UnboundedPreceding
	var acc expr.AggFunc
	added := w.ps // running: rows [ps, added) are in acc
	prevS, prevE := -1, -2
	var prev types.Value
	for i := w.ps; i < w.pe; i++ {
		s, e := w.frame(f, fn.Frame, i)
		if i > w.ps && s == prevS && e == prevE {
			res = append(res, prev)
			continue
		}
		if running {
			if acc == nil {
				acc = spec.New()
			}
			for ; added <= e; added++ {
				if err := add(acc, added); err != nil {
					return nil, err
				}
			}
		} else {
			acc = spec.New()
			for j := s; j <= e; j++ {
				if err := add(acc, j); err != nil {
					return nil, err
				}
			}
		}
		v, err := acc.Result()
		if err != nil {
			return nil, err
		}
		res = append(res, v)
		prevS, prevE, prev = s, e, v
	}
	return res, nil
}
