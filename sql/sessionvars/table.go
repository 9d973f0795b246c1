package sessionvars

import (
	"sort"
	"strconv"
	"time"

	"github.com/pivotdb/pivotdb/planner"
)

// spec describes one run-time setting.
type spec struct {
	def string
	// report marks parameters PostgreSQL reports with ParameterStatus.
	report bool
	// readOnly settings can be shown but not set.
	readOnly bool
	// normalize validates a new value and returns its canonical form.
	normalize func(string) (string, error)
}

// DefaultFollowerReadMaxStaleness is follower_read_max_staleness's
// built-in default (sql/follower.go; serve --follower-read-max-staleness
// replaces it): it outlasts a takeover (an election timeout, the new
// serving node's read-lease wait and its first closed timestamp) with room
// to spare on a loaded machine.
const DefaultFollowerReadMaxStaleness = 15 * time.Second

// ServerVersion is what clients see as server_version; clients compare the
// major version, and PivotDB answers as PostgreSQL 15 does.
const ServerVersion = "15.0 (PivotDB)"

var specs = map[string]*spec{
	"application_name":                    {def: "", report: true},
	"client_encoding":                     {def: "UTF8", report: true, normalize: normalizeEncoding},
	"datestyle":                           {def: "ISO, MDY", report: true, normalize: normalizeDateStyle},
	"timezone":                            {def: "UTC", report: true, normalize: normalizeTimeZone},
	"intervalstyle":                       {def: "postgres", report: true, normalize: normalizeIntervalStyle},
	"extra_float_digits":                  {def: "1", normalize: normalizeExtraFloatDigits},
	"search_path":                         {def: `"$user", public`},
	"statement_timeout":                   {def: "0", normalize: normalizeDuration},
	"idle_in_transaction_session_timeout": {def: "0", normalize: normalizeDuration},
	"range_expansion_limit":               {def: strconv.Itoa(planner.DefaultRangeExpansionLimit), normalize: normalizeNonNegativeInt},
	"server_version":                      {def: ServerVersion, report: true, readOnly: true},
	"server_version_num":                  {def: "150000", readOnly: true},
	"server_encoding":                     {def: "UTF8", report: true, readOnly: true},
	"integer_datetimes":                   {def: "on", report: true, readOnly: true},
	"standard_conforming_strings":         {def: "on", report: true, normalize: oneOf("on")},
	"is_superuser":                        {def: "on", report: true, readOnly: true},
	"default_transaction_read_only":       {def: "off", report: true, normalize: normalizeBool},
	// stale_read_only: YDB's stale read-only mode (sql/follower.go):
	// read-only, every read at follower_read_timestamp(); a connection to
	// a node that does not serve asking for it is served there.
	"stale_read_only": {def: "off", report: true, normalize: normalizeBool},
	// follower_read_max_staleness: how old the closed timestamp a
	// follower-read statement without AS OF SYSTEM TIME falls back to may
	// be when follower_read_timestamp() is not closed yet (no node serves);
	// past it, 55000. 0: no fallback. In milliseconds, as statement_timeout.
	"follower_read_max_staleness":    {def: strconv.FormatInt(DefaultFollowerReadMaxStaleness.Milliseconds(), 10), normalize: normalizeDuration},
	"default_transaction_deferrable": {def: "off", normalize: normalizeBool},
	"in_hot_standby":                 {def: "off", report: true, readOnly: true},
	// The transaction_* settings are the open transaction's
	// characteristics (txn.go): outside a transaction block they read as
	// the default_transaction_* ones.
	"transaction_isolation":         {def: "read committed", normalize: isolationOf("transaction_isolation")},
	"transaction_read_only":         {def: "off", normalize: normalizeBool},
	"transaction_deferrable":        {def: "off", normalize: normalizeBool},
	"default_transaction_isolation": {def: "read committed", normalize: isolationOf("default_transaction_isolation")},
	"max_identifier_length":         {def: "63", readOnly: true},
	// max_index_keys: the most columns an index, primary key or foreign
	// key may have (bind.MaxIndexKeys, enforced with 54011).
	"max_index_keys":        {def: "32", readOnly: true},
	"lc_collate":            {def: "C", readOnly: true},
	"lc_ctype":              {def: "C", readOnly: true},
	"bytea_output":          {def: "hex", normalize: oneOf("hex")},
	"session_authorization": {def: "", report: true, readOnly: true},
	// password_encryption is what psql's \password reads to hash a new
	// password client-side; PivotDB stores only SCRAM-SHA-256 verifiers.
	"password_encryption": {def: "scram-sha-256", normalize: oneOf("scram-sha-256")},
	// sql_dialect switches the three rules where YQL and PostgreSQL
	// disagree: "..." (string / identifier), division by zero (NULL /
	// 22012) and where NULLs sort by default (first / last ascending).
	"sql_dialect": {def: DialectYQL, normalize: normalizeDialect},
}

// Names lists every known setting, lower case, sorted.
func Names() []string {
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Known reports whether name (lower case) is a setting.
func Known(name string) bool { return specs[name] != nil }

// ReadOnly reports whether a known setting can only be shown.
func ReadOnly(name string) bool { return specs[name].readOnly }

// Default is a known setting's built-in default (pg_settings.boot_val).
func Default(name string) string { return specs[name].def }

// reportName maps a lower-case setting to the spelling PostgreSQL reports.
var reportName = map[string]string{
	"datestyle": "DateStyle", "timezone": "TimeZone", "intervalstyle": "IntervalStyle",
}

// DisplayName is the spelling PostgreSQL shows for a setting (DateStyle).
func DisplayName(name string) string {
	if n, ok := reportName[name]; ok {
		return n
	}
	return name
}
