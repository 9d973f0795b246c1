package catalog

import (
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Sequence describes a sequence: its options, as CREATE or ALTER SEQUENCE
// set them. Tables, views, indexes and sequences share one namespace per
// database. Where the sequence stands (the values handed out) is not part
// of the descriptor: it changes on every nextval, outside any schema
// change, and lives in the metadata store's sequence namespace (package
// sql, sequences.go).
type Sequence struct {
	ID         uint64 `json:"id"`
	DatabaseID uint64 `json:"database_id"`
	Name       string `json:"name"`
	// Type is the sequence's data type (AS): Int16, Int32 or Int64; it
	// bounds MinValue and MaxValue.
	Type      types.Type `json:"type"`
	Increment int64      `json:"increment"`
	MinValue  int64      `json:"min_value"`
	MaxValue  int64      `json:"max_value"`
	Start     int64      `json:"start"`
	// Cache is how many values one reservation takes: the metadata store
	// records the end of a reserved range before any value of it is
	// handed out, so a crash loses at most the rest of a range (a gap)
	// and never hands out a value twice.
	Cache int64 `json:"cache"`
	Cycle bool  `json:"cycle,omitempty"`
	// OwnerTable and OwnerColumn name the column that owns the sequence
	// (OWNED BY, serial and identity columns): dropping the table drops
	// the sequence. OwnerTable is 0 for a free sequence.
	OwnerTable  uint64 `json:"owner_table,omitempty"`
	OwnerColumn string `json:"owner_column,omitempty"`
	// Identity is set for the sequence of an identity column.
	Identity bool `json:"identity,omitempty"`
	// Owner: the role that created the sequence (for a serial or identity
	// column, the table's owner). Only the owner alters or drops it; see
	// the sql package's sequence functions for who may take values.
	Owned
}

var sequencePrefix = sysKey("seqdesc/")

// Sequence returns the named sequence of a database.
func (s *Snapshot) Sequence(dbID uint64, name string) (*Sequence, bool) {
	q, ok := s.sequences[dbID][strings.ToLower(name)]
	return q, ok
}

// SequenceByID returns the sequence with the given id.
func (s *Snapshot) SequenceByID(id uint64) (*Sequence, bool) {
	for _, m := range s.sequences {
		for _, q := range m {
			if q.ID == id {
				return q, true
			}
		}
	}
	return nil, false
}

// Sequences lists the sequences of a database ordered by name.
func (s *Snapshot) Sequences(dbID uint64) []*Sequence {
	out := make([]*Sequence, 0, len(s.sequences[dbID]))
	for _, q := range s.sequences[dbID] {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// OwnedSequences lists the sequences owned by columns of table id.
func (s *Snapshot) OwnedSequences(dbID, tableID uint64) []*Sequence {
	var out []*Sequence
	for _, q := range s.Sequences(dbID) {
		if q.OwnerTable == tableID {
			out = append(out, q)
		}
	}
	return out
}

func (s *Snapshot) addSequence(q *Sequence) {
	if s.sequences == nil {
		s.sequences = map[uint64]map[string]*Sequence{}
	}
	if s.sequences[q.DatabaseID] == nil {
		s.sequences[q.DatabaseID] = map[string]*Sequence{}
	}
	s.sequences[q.DatabaseID][strings.ToLower(q.Name)] = q
}

// PutSequence adds or replaces a sequence.
func (ch *Change) PutSequence(q *Sequence) {
	if old, ok := ch.snap.SequenceByID(q.ID); ok && !strings.EqualFold(old.Name, q.Name) {
		delete(ch.snap.sequences[old.DatabaseID], strings.ToLower(old.Name))
	}
	ch.snap.addSequence(q)
	ch.put(idKey(sequencePrefix, q.ID), q)
}

// DropSequence removes a sequence.
func (ch *Change) DropSequence(q *Sequence) {
	delete(ch.snap.sequences[q.DatabaseID], strings.ToLower(q.Name))
	ch.del(idKey(sequencePrefix, q.ID))
}
