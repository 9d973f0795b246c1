package storage

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// Schema times (issue 16, item 6): the fallback for times the catalog's
// history does not reach.
//
// AS OF SYSTEM TIME binds against the catalog of its time, which the
// catalog's history on disk gives for any time since the history started
// and above its GC threshold (sql/catalog/history.go). Before that — on a
// data directory written before the history existed, for a time before
// its first open with it — a historical read decodes rows with today's
// table definition, which is only right if the definition did not change
// since its timestamp, so every schema change records, per table or index id it
// creates or changes, the clock's time taken before its batch commits, in
// the same batch: the bare key 0x03 0x10 <table prefix> holding a kind byte
// (created / changed) and a 12-byte timestamp. A historical view
// (View.Historical) refuses to read a table's span at a timestamp below its
// schema time (SchemaChangedError); ordinary reads never check it.
//
// The records are loaded at Open and kept in memory; the SQL layer notes a
// change in memory once its batch committed (NoteSchemaChange).

// schemaTimePrefix starts every schema time key: the shard-local area
// (0x03) with a kind storage/mvcc does not use.
var schemaTimePrefix = []byte{0x03, LocalSchemaTime}

// SchemaChange kinds.
const (
	SchemaCreated byte = 1 // the table or index id was created (or a rewrite made it)
	SchemaAltered byte = 2 // the definition of the table changed
)

// SchemaChangedError reports a historical read of a table at a timestamp
// before its creation or the last change of its definition.
type SchemaChangedError struct {
	TableID       uint64
	Kind          byte
	ReadTimestamp hlc.Timestamp
	Changed       hlc.Timestamp
}

func (e *SchemaChangedError) Error() string {
	what := "changed"
	if e.Kind == SchemaCreated {
		what = "created"
	}
	return fmt.Sprintf("storage: read of table %d at %s, before it was %s at %s", e.TableID, e.ReadTimestamp, what, e.Changed)
}

type schemaTime struct {
	kind byte
	ts   hlc.Timestamp
}

// schemaTimes is the engine's schema times in memory.
type schemaTimes struct {
	mu      sync.Mutex
	byTable map[uint64]schemaTime
	maxWall atomic.Int64
}

func (s *schemaTimes) load(db *pebble.DB) error {
	s.byTable = map[uint64]schemaTime{}
	lower, upper := engineBounds(PrefixSpan(schemaTimePrefix))
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		uk, ok := enginekey.UserKeyOf(it.Key())
		if !ok {
			return fmt.Errorf("%w: engine key %x in the schema time area", ErrCorruptEncoding, it.Key())
		}
		id, _, err := DecodeTablePrefix(uk[len(schemaTimePrefix):])
		v := it.Value()
		if err != nil || len(v) != 13 {
			return fmt.Errorf("%w: schema time %s", ErrCorruptEncoding, FormatKey(uk))
		}
		ts, err := decodeGCThreshold(uk, v[1:])
		if err != nil {
			return err
		}
		s.noteLocked(id, schemaTime{kind: v[0], ts: ts})
	}
	return it.Error()
}

func (s *schemaTimes) noteLocked(id uint64, st schemaTime) {
	if old, ok := s.byTable[id]; ok && st.ts.Less(old.ts) {
		return
	}
	s.byTable[id] = st
	if st.ts.WallTime > s.maxWall.Load() {
		s.maxWall.Store(st.ts.WallTime)
	}
}

// SchemaChange is one table or index id a schema change creates or alters.
type SchemaChange struct {
	TableID uint64
	Kind    byte // SchemaCreated or SchemaAltered
}

// RecordSchemaChanges writes, into the schema change's batch, the schema
// time of each id: the clock's time now, which it returns. Call
// NoteSchemaChanges with it once the batch committed.
func (e *Engine) RecordSchemaChanges(b *Batch, changes []SchemaChange) (hlc.Timestamp, error) {
	ts, err := e.clock.Now()
	if err != nil || len(changes) == 0 {
		return ts, err
	}
	for _, c := range changes {
		key := append(append([]byte(nil), schemaTimePrefix...), TablePrefix(c.TableID)...)
		v := append([]byte{c.Kind}, encodeGCThreshold(ts)...)
		if err := b.Set(key, v); err != nil {
			return ts, err
		}
	}
	return ts, nil
}

// NoteSchemaChanges makes committed schema times (RecordSchemaChanges)
// effective for historical reads.
func (e *Engine) NoteSchemaChanges(changes []SchemaChange, ts hlc.Timestamp) {
	s := e.schema
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range changes {
		s.noteLocked(c.TableID, schemaTime{kind: c.Kind, ts: ts})
	}
}

// checkSchema returns a SchemaChangedError when span (of one table) is
// read at ts below the table's schema time.
func (e *Engine) checkSchema(ts hlc.Timestamp, key []byte) error {
	s := e.schema
	if ts.WallTime > s.maxWall.Load() || !isVersioned(key) {
		return nil
	}
	id, _, err := DecodeTablePrefix(key)
	if err != nil {
		return nil // a span starting at the table area's start: no table
	}
	s.mu.Lock()
	st, ok := s.byTable[id]
	s.mu.Unlock()
	if ok && ts.Less(st.ts) {
		return &SchemaChangedError{TableID: id, Kind: st.kind, ReadTimestamp: ts, Changed: st.ts}
	}
	return nil
}

// CheckingTables returns the view with fn vetting the id of every table
// (or index) it reads before the read: a read AS OF SYSTEM TIME bound
// against the catalog of its time refuses a table dropped since, whose
// rows the drop removed (sql/session_asof.go).
func (v *View) CheckingTables(fn func(tableID uint64) error) *View {
	return &View{e: v.e, ts: v.ts, hist: v.hist, tableCheck: fn}
}

// checkTable runs a view's table check on the table key (or span start)
// key; keys outside the versioned table area pass.
func checkTable(fn func(uint64) error, key []byte) error {
	if fn == nil || !isVersioned(key) {
		return nil
	}
	id, _, err := DecodeTablePrefix(key)
	if err != nil {
		return nil // a span starting at the table area's start: no table
	}
	return fn(id)
}
