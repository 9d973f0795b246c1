package parser

import (
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// createDatabaseOptions reads PostgreSQL's CREATE DATABASE name [WITH]
// option [=] value ... (pg_dumpall writes WITH TEMPLATE = template0
// ENCODING = 'UTF8' LOCALE_PROVIDER = libc LOCALE = 'C'). The options that
// name what every PivotDB database is — a copy of the template, UTF8, the
// C collation of libc, the default tablespace — are accepted; any other
// value, and the other options, are 0A000. It returns the statement
// without its options for TiDB's grammar; ok is false for a CREATE
// DATABASE without PostgreSQL's options.
func (s *stmtToks) createDatabaseOptions() (text string, ok bool, err error) {
	if !s.isWord(0, "create") || !s.isWord(1, "database") || s.n() < 4 || !s.isKind(2, tkIdent) && !s.isQuotedName(2) {
		return "", false, nil
	}
	i := 3
	if s.isWord(i, "with") {
		i++
	}
	if !s.isKind(i, tkIdent) || !pgDatabaseOptions[strings.ToLower(s.text(i))] {
		return "", false, nil
	}
	for i < s.n() {
		if !s.isKind(i, tkIdent) {
			return "", true, s.errAtTok(i)
		}
		name := strings.ToLower(s.text(i))
		if !pgDatabaseOptions[name] {
			return "", true, s.errAtTok(i)
		}
		i++
		if s.isOp(i, "=") {
			i++
		}
		if i >= s.n() {
			return "", true, s.errAtTok(i)
		}
		value := s.text(i)
		if s.isKind(i, tkString) {
			value = s.strs[s.toks[i].aux]
		}
		v := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(value))
		fits := false
		switch name {
		case "template":
			fits = v == "template0" || v == "template1"
		case "encoding":
			fits = v == "utf8" || v == "unicode"
		case "locale", "lc_collate", "lc_ctype":
			fits = v == "c" || v == "posix" || v == "c.utf8"
		case "locale_provider":
			fits = v == "libc"
		case "tablespace":
			fits = v == "pgdefault"
		}
		switch {
		case !fits && !checkedDatabaseOptions[name]:
			return "", true, errAt(sqlerr.FeatureNotSupported, s.start(i-1), "CREATE DATABASE option %s is not supported yet", strings.ToUpper(name))
		case !fits:
			return "", true, errAt(sqlerr.FeatureNotSupported, s.start(i-1),
				"CREATE DATABASE with %s %s is not supported yet: every PivotDB database is UTF8 with the C collation", strings.ToUpper(name), value)
		}
		i++
	}
	name := s.text(2)
	if s.isQuotedName(2) {
		name = "`" + strings.ReplaceAll(name, "`", "``") + "`"
	}
	return "CREATE DATABASE " + name, true, nil
}

// pgDatabaseOptions are the CREATE DATABASE options PostgreSQL 15 has
// (the others than those checked above are refused).
var pgDatabaseOptions = map[string]bool{
	"owner": true, "template": true, "encoding": true, "strategy": true, "locale": true, "lc_collate": true,
	"lc_ctype": true, "icu_locale": true, "locale_provider": true, "collation_version": true, "tablespace": true,
	"allow_connections": true, "connection": true, "is_template": true, "oid": true,
}

// checkedDatabaseOptions are the options whose PivotDB value is accepted.
var checkedDatabaseOptions = map[string]bool{"template": true, "encoding": true, "locale": true, "lc_collate": true,
	"lc_ctype": true, "locale_provider": true, "tablespace": true}
