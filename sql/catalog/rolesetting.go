package catalog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/pivotdb/pivotdb/meta"
)

// RoleSetting is one row of PostgreSQL's pg_db_role_setting: the settings
// that ALTER DATABASE d SET (Role ""), ALTER ROLE r SET (DatabaseID 0) and
// ALTER ROLE r IN DATABASE d SET give sessions at connection start.
type RoleSetting struct {
	DatabaseID uint64 `json:"database_id"`
	Role       string `json:"role"`
	// Settings maps a lower-case setting name to its value.
	Settings map[string]string `json:"settings"`
}

var roleSettingPrefix = sysKey("dbrolesetting/")

type roleSettingID struct {
	db   uint64
	role string
}

func roleSettingKey(db uint64, role string) []byte {
	k := binary.BigEndian.AppendUint64(append([]byte(nil), roleSettingPrefix...), db)
	return append(k, role...)
}

// RoleSetting returns the settings stored for a database and role (db 0:
// every database; role "": every role).
func (s *Snapshot) RoleSetting(db uint64, role string) (*RoleSetting, bool) {
	r, ok := s.roleSettings[roleSettingID{db, role}]
	return r, ok
}

// SessionSettings are the settings a session of role in database db
// starts with, by PostgreSQL's precedence: role in database over role over
// database.
func (s *Snapshot) SessionSettings(db uint64, role string) map[string]string {
	out := map[string]string{}
	for _, id := range []roleSettingID{{db, ""}, {0, role}, {db, role}} {
		if r, ok := s.roleSettings[id]; ok {
			for k, v := range r.Settings {
				out[k] = v
			}
		}
	}
	return out
}

// RoleSettings lists every stored record, by database id then role.
func (s *Snapshot) RoleSettings() []*RoleSetting {
	out := make([]*RoleSetting, 0, len(s.roleSettings))
	for _, r := range s.roleSettings {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DatabaseID != out[j].DatabaseID {
			return out[i].DatabaseID < out[j].DatabaseID
		}
		return out[i].Role < out[j].Role
	})
	return out
}

func (s *Snapshot) cloneRoleSettings(c *Snapshot) {
	c.roleSettings = make(map[roleSettingID]*RoleSetting, len(s.roleSettings))
	for k, v := range s.roleSettings {
		c.roleSettings[k] = v
	}
}

func loadRoleSettings(store meta.Reader, snap *Snapshot) error {
	snap.roleSettings = map[roleSettingID]*RoleSetting{}
	return scanRecords(store, roleSettingPrefix, func(b []byte) error {
		var r RoleSetting
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("catalog: corrupt database/role setting record: %w", err)
		}
		snap.roleSettings[roleSettingID{r.DatabaseID, r.Role}] = &r
		return nil
	})
}

// PutRoleSetting stores the settings of a database and role; with no
// settings left the record goes.
func (ch *Change) PutRoleSetting(r *RoleSetting) {
	id := roleSettingID{r.DatabaseID, r.Role}
	if ch.snap.roleSettings == nil {
		ch.snap.roleSettings = map[roleSettingID]*RoleSetting{}
	}
	if len(r.Settings) == 0 {
		delete(ch.snap.roleSettings, id)
		ch.del(roleSettingKey(r.DatabaseID, r.Role))
		return
	}
	ch.snap.roleSettings[id] = r
	ch.put(roleSettingKey(r.DatabaseID, r.Role), r)
}

// DropRoleSettings removes every record of a dropped database (role ""
// matches any) or of a dropped role (db 0 matches any).
func (ch *Change) DropRoleSettings(db uint64, role string) {
	for id, r := range ch.snap.roleSettings {
		if (db == 0 || id.db == db) && (role == "" || id.role == role) {
			ch.PutRoleSetting(&RoleSetting{DatabaseID: r.DatabaseID, Role: r.Role})
		}
	}
}
