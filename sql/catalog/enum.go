package catalog

import (
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// EnumType is a CREATE TYPE ... AS ENUM. Types have a namespace of their
// own per database (PostgreSQL's pg_type). Every column of the type holds
// a copy of the definition in its types.Type (Type.Enum), so that rows
// decode without a catalog lookup; ALTER TYPE rewrites those copies in the
// same schema change (PutEnumType's callers do, see package sql).
type EnumType struct {
	DatabaseID uint64 `json:"database_id"`
	// Def carries the id, the name and the labels in sort order.
	Def types.EnumDef `json:"def"`
	Owned
}

var enumPrefix = sysKey("enum/")

// Name is the type's name.
func (e *EnumType) Name() string { return e.Def.Name }

// EnumType returns the named enum type of a database.
func (s *Snapshot) EnumType(dbID uint64, name string) (*EnumType, bool) {
	e, ok := s.enums[dbID][strings.ToLower(name)]
	return e, ok
}

// EnumTypes lists the enum types of a database ordered by name.
func (s *Snapshot) EnumTypes(dbID uint64) []*EnumType {
	out := make([]*EnumType, 0, len(s.enums[dbID]))
	for _, e := range s.enums[dbID] {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Def.Name < out[j].Def.Name })
	return out
}

// EnumUsers lists the tables of a database with a column of enum id, and
// the columns' positions.
func (s *Snapshot) EnumUsers(dbID, id uint64) map[*Table][]int {
	out := map[*Table][]int{}
	for _, t := range s.Tables(dbID) {
		for i, c := range t.Columns {
			if c.Type.Enum != nil && c.Type.Enum.ID == id {
				out[t] = append(out[t], i)
			}
		}
	}
	return out
}

func (s *Snapshot) addEnum(e *EnumType) {
	if s.enums == nil {
		s.enums = map[uint64]map[string]*EnumType{}
	}
	if s.enums[e.DatabaseID] == nil {
		s.enums[e.DatabaseID] = map[string]*EnumType{}
	}
	s.enums[e.DatabaseID][strings.ToLower(e.Def.Name)] = e
}

// PutEnumType adds or replaces an enum type (its name may have changed).
func (ch *Change) PutEnumType(e *EnumType) {
	for k, old := range ch.snap.enums[e.DatabaseID] {
		if old.Def.ID == e.Def.ID {
			delete(ch.snap.enums[e.DatabaseID], k)
		}
	}
	ch.snap.addEnum(e)
	ch.put(idKey(enumPrefix, e.Def.ID), e)
}

// DropEnumType removes an enum type.
func (ch *Change) DropEnumType(e *EnumType) {
	delete(ch.snap.enums[e.DatabaseID], strings.ToLower(e.Def.Name))
	ch.del(idKey(enumPrefix, e.Def.ID))
}
