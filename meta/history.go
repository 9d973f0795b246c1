package meta

import (
	"bytes"
	"fmt"

	"github.com/pivotdb/pivotdb/storage"
	"github.com/pivotdb/pivotdb/storage/hlc"
)

// The catalog's history (issue 16, item 1): besides its bare record (the
// newest version, which Load reads), every catalog record is written as a
// versioned key of the table area under the reserved table id 0
// (CatalogHistoryTableID), in the same batch. Versioned keys get the
// batch's commit timestamp, are replicated with it on a cluster and are
// collected by GC like rows, so History(ts) reads the catalog's records as
// they were at any ts inside the retention window — after a restart too.
//
//	<CatalogHistory> <catalog record key>  the record, a version per change
//	                                       (a delete is a tombstone)
//
// The catalog's id counter ("cat/seq") has no history: only the newest
// catalog allocates ids.

// CatalogHistoryTableID is the table id whose key space holds the catalog's
// history; catalog object ids start at 1, so no table or index has it.
const CatalogHistoryTableID uint64 = 0

// CatalogHistory is the prefix of every history key.
var CatalogHistory = storage.TablePrefix(CatalogHistoryTableID)

// CatalogHistorySpan is the span of the catalog's history, which GC
// collects with the longest retention window of any table (sql/gc.go).
func CatalogHistorySpan() storage.Span { return storage.TableSpan(CatalogHistoryTableID) }

// historyKey returns the history key of catalog record key.
func historyKey(key []byte) []byte {
	return append(append(make([]byte, 0, len(CatalogHistory)+len(key)), CatalogHistory...), key...)
}

func checkCatalog(key []byte) error {
	if !bytes.HasPrefix(key, Catalog) {
		return fmt.Errorf("meta: %s is not a catalog key, which has no history", storage.FormatKey(key))
	}
	return nil
}

// SetVersioned writes a catalog record and its version in the history.
func (b *Batch) SetVersioned(key, value []byte) error {
	if err := checkCatalog(key); err != nil {
		return err
	}
	if err := b.b.Set(key, value); err != nil {
		return err
	}
	return b.b.Set(historyKey(key), value)
}

// DeleteVersioned removes a catalog record and writes a tombstone version
// of it in the history.
func (b *Batch) DeleteVersioned(key []byte) error {
	if err := checkCatalog(key); err != nil {
		return err
	}
	if err := b.b.Delete(key); err != nil {
		return err
	}
	return b.b.Delete(historyKey(key))
}

// OnCommitted is storage.Batch.OnCommitted of a batch started by NewBatch:
// fn gets the commit timestamp of its versioned writes.
func (b *Batch) OnCommitted(fn func(ts hlc.Timestamp)) { b.b.OnCommitted(fn) }

// History is the catalog's records as of a timestamp (Store.History). It
// reads only catalog keys: the rest of the metadata has no history.
type History struct {
	v *storage.View
}

// History returns the catalog's records as they were at ts, once every
// commit at or below ts has landed. Reads below the history's GC threshold
// fail with storage.BelowGCThresholdError.
func (s *Store) History(ts hlc.Timestamp) (*History, error) {
	if err := s.eng.WaitCommitted(ts); err != nil {
		return nil, err
	}
	return &History{v: s.eng.At(ts)}, nil
}

// HistoryThreshold returns the GC threshold of the catalog's history:
// History fails below it.
func (s *Store) HistoryThreshold() hlc.Timestamp {
	return s.eng.GCThresholdOf(CatalogHistorySpan())
}

// Get implements Reader.
func (h *History) Get(key []byte) ([]byte, bool, error) {
	if err := checkCatalog(key); err != nil {
		return nil, false, err
	}
	return h.v.Get(historyKey(key))
}

// Scan implements Reader: keys are handed to fn as catalog keys.
func (h *History) Scan(span storage.Span, fn func(key, value []byte) error) error {
	if err := checkCatalog(span.Start); err != nil {
		return err
	}
	if span.End == nil || !bytes.HasPrefix(span.End, Catalog) && !bytes.Equal(span.End, storage.PrefixEnd(Catalog)) {
		return fmt.Errorf("meta: span [%s, %s) is not inside the catalog", storage.FormatKey(span.Start), storage.FormatKey(span.End))
	}
	hs := storage.Span{Start: historyKey(span.Start), End: historyKey(span.End)}
	return storage.Scan(h.v, hs, func(k, v []byte) error {
		return fn(k[len(CatalogHistory):], v)
	})
}
