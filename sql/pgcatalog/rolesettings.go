package pgcatalog

import (
	"sort"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sessionvars"
)

// settingsArray is a setconfig / rolconfig value: {name=value,...},
// sorted by name, elements quoted as array text needs.
func settingsArray(settings map[string]string) any {
	if len(settings) == 0 {
		return nil
	}
	names := make([]string, 0, len(settings))
	for n := range settings {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		s := sessionvars.DisplayName(n) + "=" + settings[n]
		if s == "" || strings.ContainsAny(s, `"\,{} `) {
			s = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		parts[i] = s
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// roleConfig is pg_roles.rolconfig: the role's ALTER ROLE ... SET
// settings for every database.
func (v *View) roleConfig(role string) any {
	if r, ok := v.Snapshot.RoleSetting(0, role); ok {
		return settingsArray(r.Settings)
	}
	return nil
}
