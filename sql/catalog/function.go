package catalog

import (
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/types"
)

// Function is a CREATE FUNCTION ... LANGUAGE sql: its signature and its
// body as text (a SELECT), which the binder parses again at each call and
// inlines into the calling expression. Functions of one name may be
// overloaded by their argument types.
type Function struct {
	ID         uint64        `json:"id"`
	DatabaseID uint64        `json:"database_id"`
	Name       string        `json:"name"`
	Args       []FunctionArg `json:"args,omitempty"`
	Returns    types.Type    `json:"returns"`
	// SetOf marks a set-returning function (RETURNS SETOF, RETURNS
	// TABLE), called in FROM: Columns are its result columns (one, named
	// after the function, for SETOF a scalar type), Returns the first's
	// type. Its body is a query.
	SetOf   bool          `json:"setof,omitempty"`
	Columns []FunctionArg `json:"columns,omitempty"`
	// RowType is the table of RETURNS SETOF table (its columns copied
	// into Columns when the function was created).
	RowType    string `json:"row_type,omitempty"`
	Volatility string `json:"volatility"` // "i", "s" or "v"
	Strict     bool   `json:"strict,omitempty"`
	Body       string `json:"body"`
	// Dialect is the sql_dialect the body is written in ("" is yql).
	Dialect string `json:"dialect,omitempty"`
	Owned
}

// FunctionArg is one argument; Name is "" when not named.
type FunctionArg struct {
	Name string     `json:"name,omitempty"`
	Type types.Type `json:"type"`
}

var functionPrefix = sysKey("func/")

// Functions lists the functions of a database named name (all of them
// for ""), ordered by name and id.
func (s *Snapshot) Functions(dbID uint64, name string) []*Function {
	var out []*Function
	for _, f := range s.functions[dbID] {
		if name == "" || strings.EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func (s *Snapshot) addFunction(f *Function) {
	if s.functions == nil {
		s.functions = map[uint64]map[uint64]*Function{}
	}
	if s.functions[f.DatabaseID] == nil {
		s.functions[f.DatabaseID] = map[uint64]*Function{}
	}
	s.functions[f.DatabaseID][f.ID] = f
}

// PutFunction adds or replaces a function.
func (ch *Change) PutFunction(f *Function) {
	ch.snap.addFunction(f)
	ch.put(idKey(functionPrefix, f.ID), f)
}

// DropFunction removes a function.
func (ch *Change) DropFunction(f *Function) {
	delete(ch.snap.functions[f.DatabaseID], f.ID)
	ch.del(idKey(functionPrefix, f.ID))
}
