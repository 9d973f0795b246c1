package mvcc

import (
	"bytes"
	"slices"
	"sort"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/enginekey"
)

// VersionStatsDelta returns how writing ms changes the versions' part of
// ComputeStatsOfSpans(r, spans) (everything but the lock records), reading
// r once, before the writes. A replica applying a replicated write keeps
// its shard's counter this way (cluster/shardsm): recounting the touched
// row keys before and again after the write cost four iterator seeks per
// commit on every replica. It is StatsDeltaReader's Delta on a reader used
// once; see there for how the versions are read.
//
// spans must be sorted and disjoint. Only point writes (Set, Delete,
// SingleDelete) are laid over: ok is false when ms holds a range deletion,
// or a merge into a version key within spans, and the caller recounts after
// writing instead. Writes outside spans and of keys without a version (lock
// records, transaction records, counters) count nothing, as in
// ComputeStatsOfSpans.
func VersionStatsDelta(r Reader, spans []storage.Span, ms []storage.Mutation) (delta Stats, ok bool, err error) {
	d := NewStatsDeltaReader(r)
	delta, ok, err = d.Delta(spans, ms)
	return delta, ok, firstErr(err, d.Close())
}

// A StatsDeltaReader computes VersionStatsDelta for several writes over one
// Pebble iterator of r, opened at its first Delta and kept until Close: it
// reads r as it was then. A replica applying a run of Writes that touch
// different keys into one uncommitted batch (cluster/shardsm's applyrun.go)
// uses one per run, so the run opens one iterator instead of one per Write.
//
// A version's share of the stats depends on its key's version list only
// through whether it is the newest (live bytes or old bytes), so a write
// changes the shares of the versions it replaces or deletes, of the key's
// newest version before, and of its newest version after; every other
// version counts the same before and after. Delta therefore reads each
// written row key with one prefix seek (SeekPrefixGE: the key's bloom
// filters are consulted, and a new key is often found absent without
// reading a table) and walks its versions, newest first, only until it is
// past the written ones and has met the newest version after the writes:
// for a new version above the others, as every commit writes, that is the
// one version below it. The key's older history is not read.
type StatsDeltaReader struct {
	r      Reader
	it     *pebble.Iterator
	writes []versionWrite // scratch, reused between calls
	prefix []byte
}

// versionWrite is one point write of a version within the spans.
type versionWrite struct {
	key, uk, value []byte
	del            bool
}

// NewStatsDeltaReader returns a StatsDeltaReader over r; Close it.
func NewStatsDeltaReader(r Reader) *StatsDeltaReader { return &StatsDeltaReader{r: r} }

// NewStatsDeltaReaderOn returns a StatsDeltaReader reading through it, an
// iterator without bounds the caller may have read other keys with first
// (they see one state of the store); Close closes it.
func NewStatsDeltaReaderOn(it *pebble.Iterator) *StatsDeltaReader { return &StatsDeltaReader{it: it} }

// Close closes the iterator, if one was opened.
func (d *StatsDeltaReader) Close() error {
	if d.it == nil {
		return nil
	}
	it := d.it
	d.it = nil
	return it.Close()
}

// Delta is VersionStatsDelta(r, spans, ms), r as it was at d's first
// Delta.
func (d *StatsDeltaReader) Delta(spans []storage.Span, ms []storage.Mutation) (delta Stats, ok bool, err error) {
	writes := d.writes[:0]
	defer func() { d.writes = writes[:0] }()
	for _, m := range ms {
		if m.Kind == storage.MutationDeleteRange {
			return delta, false, nil
		}
		uk, _, versioned, err := DecodeKey(m.Key)
		if err != nil || !versioned {
			// Not a version: ComputeStatsOfSpans skips it (a malformed key
			// is left to the recount, which reports it if it counts).
			if err != nil {
				return delta, false, nil
			}
			continue
		}
		i := sort.Search(len(spans), func(i int) bool { return spans[i].End == nil || bytes.Compare(uk, spans[i].End) < 0 })
		if i == len(spans) || bytes.Compare(uk, spans[i].Start) < 0 {
			continue
		}
		w := versionWrite{key: m.Key, uk: uk}
		switch m.Kind {
		case storage.MutationSet:
			w.value = m.Value
		case storage.MutationDelete, storage.MutationSingleDelete:
			w.del = true
		default: // a merge into a version: only Pebble knows the result
			return delta, false, nil
		}
		writes = append(writes, w)
	}
	if len(writes) == 0 {
		return delta, true, nil
	}
	// In engine key order, which keeps each row key's versions together,
	// newest first; of several writes of one key the last wins, as in a
	// batch (the sort is stable).
	slices.SortStableFunc(writes, func(a, b versionWrite) int { return enginekey.Compare(a.key, b.key) })
	kept := writes[:0]
	for _, w := range writes {
		if n := len(kept); n > 0 && enginekey.Compare(kept[n-1].key, w.key) == 0 {
			kept[n-1] = w
			continue
		}
		kept = append(kept, w)
	}
	writes = kept
	if d.it == nil {
		if d.it, err = d.r.NewIter(nil); err != nil {
			return delta, false, err
		}
	}
	for i := 0; i < len(writes); {
		j := i + 1
		for j < len(writes) && bytes.Equal(writes[j].uk, writes[i].uk) {
			j++
		}
		kd, err := d.keyDelta(writes[i:j])
		if err != nil {
			return delta, false, err
		}
		delta.Add(kd)
		i = j
	}
	return delta, true, nil
}

// keyDelta returns the change the writes ws, all of one row key and in
// engine key order, make to that key's versions' stats.
func (d *StatsDeltaReader) keyDelta(ws []versionWrite) (Stats, error) {
	var before, after Stats
	// newestBefore: the next existing version met is the key's newest
	// before the writes; newestAfter: nothing of the key after the writes
	// was met yet, so the next one met is its newest then.
	newestBefore, newestAfter := true, true
	write := func(w versionWrite) error {
		if w.del {
			return nil
		}
		s, err := versionStats(w.key, w.value, newestAfter)
		after.Add(s)
		newestAfter = false
		return err
	}
	it := d.it
	d.prefix = AppendBareKey(d.prefix[:0], ws[0].uk)
	wi := 0
	for valid := it.SeekPrefixGE(d.prefix); valid; valid = it.Next() {
		k := it.Key()
		if _, _, versioned, err := DecodeKey(k); err != nil {
			return Stats{}, err
		} else if !versioned {
			continue
		}
		for wi < len(ws) && enginekey.Compare(ws[wi].key, k) < 0 {
			if err := write(ws[wi]); err != nil {
				return Stats{}, err
			}
			wi++
		}
		wasNewest := newestBefore
		newestBefore = false
		switch {
		case wi < len(ws) && enginekey.Compare(ws[wi].key, k) == 0:
			// Replaced or deleted by a write: counted before only.
			raw, err := it.ValueAndErr()
			if err != nil {
				return Stats{}, err
			}
			s, err := versionStats(k, raw, wasNewest)
			if err != nil {
				return Stats{}, err
			}
			before.Add(s)
			if err := write(ws[wi]); err != nil {
				return Stats{}, err
			}
			wi++
		case wasNewest || newestAfter:
			// Kept, but newest before or after, not both alike.
			raw, err := it.ValueAndErr()
			if err != nil {
				return Stats{}, err
			}
			b, err := versionStats(k, raw, wasNewest)
			if err != nil {
				return Stats{}, err
			}
			a, err := versionStats(k, raw, newestAfter)
			if err != nil {
				return Stats{}, err
			}
			before.Add(b)
			after.Add(a)
			newestAfter = false
		}
		// Every version further down is kept and older before and after:
		// it counts the same.
		if wi == len(ws) && !newestAfter {
			break
		}
	}
	if err := it.Error(); err != nil {
		return Stats{}, err
	}
	for ; wi < len(ws); wi++ {
		if err := write(ws[wi]); err != nil {
			return Stats{}, err
		}
	}
	after.Sub(before)
	return after, nil
}

// versionStats is what a version (its engine key and stored value) counts
// in ComputeStats, as its key's newest version or as an older one.
func versionStats(key, raw []byte, newest bool) (Stats, error) {
	v, err := decodeVersionValue(raw)
	if err != nil {
		return Stats{}, err
	}
	return newestStats(int64(len(key)+len(raw)), &v, newest), nil
}
