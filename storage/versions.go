package storage

import (
	"fmt"
	"io"
	"math"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Versions (issue 16, design §11).
//
// Every key Pebble holds is an engine key (storage/enginekey): the user key
// callers of this package use, a 0x00 sentinel, and a suffix. Keys of the
// table area (0x02: rows and index entries) are versioned: a commit writes
// each of them as a new version at the commit's hybrid-logical-clock
// timestamp, and a delete as a tombstone version, so that a read at a
// timestamp sees exactly the commits at or below it, on every shard and
// index alike. Keys of the system area (catalog, shard maps, counters) stay
// bare: one value, overwritten in place, read as of the latest commit.
//
// The values of versions follow storage/mvcc's layout, so that its Scanner
// and resolution code read the same store:
//
//	committed value:  0x01 | row value
//	tombstone:        0x02
//
// A Batch holds its versioned writes as bare keys with the same tagged
// values (the batch's own writes, which its reads show on top of the
// committed versions: a bare key sorts before every version of its user
// key). Commit takes the commit timestamp and rewrites them as versions.

const (
	tagValue     byte = 0x01
	tagTombstone byte = 0x02
)

// MaxTimestamp reads the latest committed version of every key. It is one
// wall nanosecond below the intents' timestamps (intents.go), so a read of
// the newest state skips every intent like any version above its
// timestamp; no clock comes near it.
var MaxTimestamp = hlc.Timestamp{WallTime: math.MaxInt64 - 1, Logical: math.MaxInt32}

// isVersioned reports whether the user key is stored as versions.
func isVersioned(userKey []byte) bool { return len(userKey) > 0 && userKey[0] == TableDataPrefix }

// bareKey returns the engine key of a bare user key (also the bound of a
// span: a bare key sorts before every version of its user key).
func bareKey(userKey []byte) []byte {
	return enginekey.AppendBareKey(make([]byte, 0, len(userKey)+1), userKey)
}

// engineBounds turns a span of user keys into Pebble iterator bounds over
// every version of every key in it. An empty Start is no lower bound.
func engineBounds(span Span) (lower, upper []byte) {
	if len(span.Start) > 0 {
		lower = bareKey(span.Start)
	}
	if span.End != nil {
		upper = bareKey(span.End)
	}
	return lower, upper
}

// decodeVersioned returns the row value of a versioned entry's tagged value;
// deleted is true for a tombstone.
func decodeVersioned(key, v []byte) (value []byte, deleted bool, err error) {
	if len(v) > 0 {
		switch v[0] {
		case tagValue:
			return v[1:], false, nil
		case tagTombstone:
			if len(v) == 1 {
				return nil, true, nil
			}
		case tagIntent, tagIntentDel:
			// Only a reader that sees its own intents gets here
			// (ownIntents.sees decided before).
			value, deleted, _, err := decodeIntentValue(v)
			return value, deleted, err
		default:
			return nil, false, fmt.Errorf("%w: version of %s has value kind 0x%02x, which this engine does not read",
				ErrCorruptEncoding, enginekey.FormatKeyFunc(key), v[0])
		}
	}
	return nil, false, fmt.Errorf("%w: bad version value of %s", ErrCorruptEncoding, enginekey.FormatKeyFunc(key))
}

// Clock returns the engine's hybrid logical clock: the server's one clock,
// whose high-water mark is kept in the data directory.
func (e *Engine) Clock() *hlc.Clock { return e.clock }

// View is the committed state of the engine as of a timestamp: the newest
// version at or below it of every versioned key, and the latest value of
// every bare (system) key. Two views at one timestamp show the same rows
// however far apart in time their reads run, which is what makes one
// statement's reads of several shards consistent. A View is safe for
// concurrent use; it holds no resources.
type View struct {
	e  *Engine
	ts hlc.Timestamp
	// hist marks a historical read (AS OF SYSTEM TIME): it also refuses
	// tables whose definition changed after ts (schematime.go).
	hist bool
	// tableCheck, when set, vets every table id read (CheckingTables).
	tableCheck func(tableID uint64) error
}

var _ Reader = (*View)(nil)

// At returns the view of the committed state at ts (from ReadTimestamp).
func (e *Engine) At(ts hlc.Timestamp) *View { return &View{e: e, ts: ts} }

// Timestamp returns the view's read timestamp.
func (v *View) Timestamp() hlc.Timestamp { return v.ts }

// Get returns a copy of the value at key as of the view's timestamp.
func (v *View) Get(key []byte) ([]byte, bool, error) {
	if err := v.e.checkGCKey(v.ts, key); err != nil {
		return nil, false, err
	}
	if v.hist {
		if err := v.e.checkSchema(v.ts, key); err != nil {
			return nil, false, err
		}
	}
	if err := checkTable(v.tableCheck, key); err != nil {
		return nil, false, err
	}
	return getPoint(PointReader{r: v.e.db, ts: v.ts, pool: v.e.points, db: v.e.db}, key)
}

// NewIter returns an iterator over span as of the view's timestamp.
func (v *View) NewIter(span Span) (*Iterator, error) {
	if err := v.e.checkGC(v.ts, span); err != nil {
		return nil, err
	}
	if v.hist {
		if err := v.e.checkSchema(v.ts, span.Start); err != nil {
			return nil, err
		}
	}
	if err := checkTable(v.tableCheck, span.Start); err != nil {
		return nil, err
	}
	return newIterator(v.e.db, v.ts, span)
}

// NewPointReader returns a PointReader as of the view's timestamp.
func (v *View) NewPointReader() (*PointReader, error) {
	return &PointReader{r: v.e.db, ts: v.ts, gc: v.e, hist: v.hist, tableCheck: v.tableCheck, pool: v.e.points, db: v.e.db}, nil
}

// Historical returns the view as a historical read (AS OF SYSTEM TIME):
// a read of a table whose definition changed after the view's timestamp
// fails with a SchemaChangedError, since rows are decoded with today's.
func (v *View) Historical() *View {
	return &View{e: v.e, ts: v.ts, hist: true, tableCheck: v.tableCheck}
}

// rewriteVersioned copies the writes of src into dst, with every bare
// versioned write (a tagged value) turned into a version at ts. Other
// operations are copied as they are, in order, so a DeleteRange followed by
// a write in the same batch still leaves the write.
func rewriteVersioned(dst *pebble.Batch, src *pebble.Batch, ts hlc.Timestamp) error {
	r := src.Reader()
	var kbuf []byte
	for {
		kind, k, v, ok, err := r.Next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		switch kind {
		case pebble.InternalKeyKindSet:
			if uk := k[:len(k)-1]; isVersioned(uk) && len(k) > 0 && k[len(k)-1] == 0 {
				kbuf = enginekey.AppendVersionKey(kbuf[:0], uk, ts)
				err = dst.Set(kbuf, v, nil)
			} else {
				err = dst.Set(k, v, nil)
			}
		case pebble.InternalKeyKindDelete:
			err = dst.Delete(k, nil)
		case pebble.InternalKeyKindSingleDelete:
			err = dst.SingleDelete(k, nil)
		case pebble.InternalKeyKindRangeDelete:
			err = dst.DeleteRange(k, v, nil)
		case pebble.InternalKeyKindMerge:
			err = dst.Merge(k, v, nil)
		case pebble.InternalKeyKindLogData:
		default:
			err = fmt.Errorf("storage: batch holds a %s write, which commit cannot version", kind)
		}
		if err != nil {
			return err
		}
	}
}

// vfsHighWater keeps the clock's high-water mark in a file of the data
// directory on the engine's filesystem (hlc.FileStore's format and atomic
// replacement, through vfs so that in-memory engines have one too).
type vfsHighWater struct {
	fs   FS
	dir  string
	name string
}

const highWaterFile = "HLC_HIGH_WATER"

func (s vfsHighWater) Load() (int64, error) {
	f, err := s.fs.Open(s.fs.PathJoin(s.dir, s.name))
	if err != nil {
		if oserror.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	var w int64
	if _, err := fmt.Sscanf(string(b), "pivotdb-hlc-high-water v1 %d\n", &w); err != nil || w < 0 || w == math.MaxInt64 {
		return 0, fmt.Errorf("storage: %s is not a high-water file (%q)", s.name, b)
	}
	return w, nil
}

func (s vfsHighWater) Store(wallTime int64) error {
	tmp := s.fs.PathJoin(s.dir, s.name+".tmp")
	f, err := s.fs.Create(tmp, "pivotdb-hlc")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "pivotdb-hlc-high-water v1 %d\n", wallTime); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := s.fs.Rename(tmp, s.fs.PathJoin(s.dir, s.name)); err != nil {
		return err
	}
	d, err := s.fs.OpenDir(s.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
