package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/meta"
)

// View is a named query. Tables and views share one namespace per
// database.
type View struct {
	ID         uint64 `json:"id"`
	DatabaseID uint64 `json:"database_id"`
	Name       string `json:"name"`
	// Definition is the CREATE VIEW statement as written; the SQL layer
	// parses it again each time the view is used, so the view sees the
	// tables as they are then.
	Definition string `json:"definition"`
	// Dialect is the sql_dialect the definition was written in ("" is
	// yql): it is parsed in that dialect whatever the reader's.
	Dialect string `json:"dialect,omitempty"`
	// Owner and ACL: see Owned. The tables a view reads are read with its
	// owner's privileges.
	Owned
}

var viewPrefix = sysKey("view/")

// View returns the named view of a database.
func (s *Snapshot) View(dbID uint64, name string) (*View, bool) {
	v, ok := s.views[dbID][strings.ToLower(name)]
	return v, ok
}

// Views lists the views of a database ordered by name.
func (s *Snapshot) Views(dbID uint64) []*View {
	out := make([]*View, 0, len(s.views[dbID]))
	for _, v := range s.views[dbID] {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Snapshot) addView(v *View) {
	if s.views == nil {
		s.views = map[uint64]map[string]*View{}
	}
	if s.views[v.DatabaseID] == nil {
		s.views[v.DatabaseID] = map[string]*View{}
	}
	s.views[v.DatabaseID][strings.ToLower(v.Name)] = v
}

func (s *Snapshot) cloneViews(c *Snapshot) {
	for db, m := range s.views {
		cm := make(map[string]*View, len(m))
		for k, v := range m {
			cm[k] = v
		}
		if c.views == nil {
			c.views = map[uint64]map[string]*View{}
		}
		c.views[db] = cm
	}
}

func loadViews(store meta.Reader, snap *Snapshot) error {
	return scanRecords(store, viewPrefix, func(b []byte) error {
		var v View
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("catalog: corrupt view record: %w", err)
		}
		snap.addView(&v)
		return nil
	})
}

// PutView adds or replaces a view.
func (ch *Change) PutView(v *View) {
	ch.snap.addView(v)
	ch.put(idKey(viewPrefix, v.ID), v)
}

// DropView removes a view.
func (ch *Change) DropView(v *View) {
	delete(ch.snap.views[v.DatabaseID], strings.ToLower(v.Name))
	ch.del(idKey(viewPrefix, v.ID))
}
