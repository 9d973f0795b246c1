package sql

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// sessionVar describes one run-time setting (SET / SHOW / RESET).
type sessionVar struct {
	def string
	// report marks parameters PostgreSQL reports with ParameterStatus.
	report bool
	// readOnly settings can be shown but not set.
	readOnly bool
	// normalize validates a new value and returns its canonical form.
	normalize func(string) (string, error)
}

// DefaultRangeExpansionLimit bounds the key ranges the planner may enumerate
// for one table read (design.md §6).
const DefaultRangeExpansionLimit = 200000

// serverVersion is what clients see as server_version; clients compare the
// major version, and PivotDB answers as PostgreSQL 15 does.
const serverVersion = "15.0 (PivotDB)"

var sessionVarDefs = map[string]*sessionVar{
	"application_name":                    {def: "", report: true},
	"client_encoding":                     {def: "UTF8", report: true, normalize: normalizeEncoding},
	"datestyle":                           {def: "ISO, MDY", report: true, normalize: normalizeDateStyle},
	"timezone":                            {def: "UTC", report: true, normalize: normalizeTimeZone},
	"intervalstyle":                       {def: "postgres", report: true, normalize: oneOf("postgres")},
	"extra_float_digits":                  {def: "1", normalize: normalizeExtraFloatDigits},
	"search_path":                         {def: `"$user", public`},
	"statement_timeout":                   {def: "0", normalize: normalizeDuration},
	"idle_in_transaction_session_timeout": {def: "0", normalize: normalizeDuration},
	"range_expansion_limit":               {def: strconv.Itoa(DefaultRangeExpansionLimit), normalize: normalizeNonNegativeInt},
	"server_version":                      {def: serverVersion, report: true, readOnly: true},
	"server_version_num":                  {def: "150000", readOnly: true},
	"server_encoding":                     {def: "UTF8", report: true, readOnly: true},
	"integer_datetimes":                   {def: "on", report: true, readOnly: true},
	"standard_conforming_strings":         {def: "on", report: true, normalize: oneOf("on")},
	"is_superuser":                        {def: "on", report: true, readOnly: true},
	"default_transaction_read_only":       {def: "off", report: true, normalize: oneOf("off")},
	"in_hot_standby":                      {def: "off", report: true, readOnly: true},
	"transaction_isolation":               {def: "read committed", readOnly: true},
	"default_transaction_isolation":       {def: "read committed", normalize: normalizeIsolation},
	"max_identifier_length":               {def: "63", readOnly: true},
	"lc_collate":                          {def: "C", readOnly: true},
	"lc_ctype":                            {def: "C", readOnly: true},
	"bytea_output":                        {def: "hex", normalize: oneOf("hex")},
	"session_authorization":               {def: "", report: true, readOnly: true},
	// password_encryption is what psql's \password reads to hash a new
	// password client-side; PivotDB stores only SCRAM-SHA-256 verifiers.
	"password_encryption": {def: "scram-sha-256", normalize: oneOf("scram-sha-256")},
}

// sessionVars holds a session's settings.
type sessionVars struct {
	values  map[string]string
	changed map[string]bool
	// defaults overrides sessionVarDefs' defaults for this session (the
	// server's --statement-timeout and --idle-in-transaction-timeout):
	// they are the initial values and what RESET returns to.
	defaults map[string]string
}

func newSessionVars(defaults map[string]string) *sessionVars {
	v := &sessionVars{values: map[string]string{}, changed: map[string]bool{}, defaults: defaults}
	for name := range sessionVarDefs {
		v.values[name] = v.def(name)
	}
	return v
}

// def is the default of a known setting.
func (v *sessionVars) def(name string) string {
	if d, ok := v.defaults[name]; ok {
		return d
	}
	return sessionVarDefs[name].def
}

func unknownVar(name string) error {
	return sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
}

func (v *sessionVars) get(name string) (string, error) {
	val, ok := v.values[strings.ToLower(name)]
	if !ok {
		return "", unknownVar(name)
	}
	return val, nil
}

func (v *sessionVars) set(name, value string) error {
	name = strings.ToLower(name)
	d, ok := sessionVarDefs[name]
	if !ok {
		return unknownVar(name)
	}
	if d.readOnly {
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed", name)
	}
	if d.normalize != nil {
		norm, err := d.normalize(value)
		if err != nil {
			return err
		}
		value = norm
	}
	if v.values[name] != value && d.report {
		v.changed[name] = true
	}
	v.values[name] = value
	return nil
}

func (v *sessionVars) reset(name string) error {
	name = strings.ToLower(name)
	d, ok := sessionVarDefs[name]
	if !ok {
		return unknownVar(name)
	}
	if d.readOnly {
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed", name)
	}
	def := v.def(name)
	if v.values[name] != def && d.report {
		v.changed[name] = true
	}
	v.values[name] = def
	return nil
}

func (v *sessionVars) resetAll() {
	for name, d := range sessionVarDefs {
		if !d.readOnly {
			_ = v.reset(name)
		}
	}
}

// statementTimeout returns the statement_timeout setting (0 = none).
func (v *sessionVars) statementTimeout() time.Duration {
	ms, _ := strconv.ParseInt(v.values["statement_timeout"], 10, 64)
	return time.Duration(ms) * time.Millisecond
}

// idleInTransactionTimeout returns the idle_in_transaction_session_timeout
// setting (0 = none).
func (v *sessionVars) idleInTransactionTimeout() time.Duration {
	ms, _ := strconv.ParseInt(v.values["idle_in_transaction_session_timeout"], 10, 64)
	return time.Duration(ms) * time.Millisecond
}

// rangeExpansionLimit returns the range_expansion_limit setting.
func (v *sessionVars) rangeExpansionLimit() int {
	n, _ := strconv.Atoi(v.values["range_expansion_limit"])
	return n
}

// reportName maps a lower-case setting to the spelling PostgreSQL reports.
var reportName = map[string]string{
	"datestyle": "DateStyle", "timezone": "TimeZone", "intervalstyle": "IntervalStyle",
}

func displayName(name string) string {
	if n, ok := reportName[name]; ok {
		return n
	}
	return name
}

// InitialParameters are the ParameterStatus messages sent after startup.
func (s *Session) InitialParameters() []ParameterStatus {
	s.vars.values["session_authorization"] = s.user
	var out []ParameterStatus
	for name, d := range sessionVarDefs {
		if d.report {
			out = append(out, ParameterStatus{Name: displayName(name), Value: s.vars.values[name]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	s.vars.changed = map[string]bool{}
	return out
}

// TakeParameterChanges returns (and forgets) the reportable parameters that
// changed since the last call, for ParameterStatus messages.
func (s *Session) TakeParameterChanges() []ParameterStatus {
	if len(s.vars.changed) == 0 {
		return nil
	}
	var out []ParameterStatus
	for name := range s.vars.changed {
		out = append(out, ParameterStatus{Name: displayName(name), Value: s.vars.values[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	s.vars.changed = map[string]bool{}
	return out
}

// SetStartupParameter applies a parameter sent in the startup message
// (application_name, client_encoding, DateStyle, options...). Unknown ones
// are refused like SET would refuse them.
func (s *Session) SetStartupParameter(name, value string) error {
	err := s.vars.set(name, value)
	// The client set it, so it does not need reporting back as a change,
	// but the initial ParameterStatus round reports the value anyway.
	return err
}

func oneOf(allowed ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, a := range allowed {
			if strings.EqualFold(strings.TrimSpace(v), a) {
				return a, nil
			}
		}
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value %q: only %s is supported", v, strings.Join(allowed, ", "))
	}
}

func normalizeEncoding(v string) (string, error) {
	switch strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), "-", "")) {
	case "UTF8", "UNICODE":
		return "UTF8", nil
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "client encoding %q is not supported yet: PivotDB speaks UTF8", v)
}

func normalizeDateStyle(v string) (string, error) {
	style, order := "ISO", "MDY"
	for _, part := range strings.Split(v, ",") {
		switch p := strings.ToUpper(strings.TrimSpace(part)); p {
		case "ISO":
			style = "ISO"
		case "MDY", "DMY", "YMD":
			order = p
		case "US", "NONEURO", "NONEUROPEAN":
			order = "MDY"
		default:
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "DateStyle %q is not supported yet: dates are printed in ISO style", strings.TrimSpace(part))
		}
	}
	return style + ", " + order, nil
}

func normalizeTimeZone(v string) (string, error) {
	tz := strings.TrimSpace(v)
	switch strings.ToUpper(tz) {
	case "UTC", "GMT", "Z", "ZULU", "ETC/UTC", "UCT", "+00", "+00:00", "0":
		return "UTC", nil
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported,
		"time zone %q is not supported yet: PivotDB timestamps have no time zone and the session time zone is UTC", tz)
}

func normalizeExtraFloatDigits(v string) (string, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < -15 || n > 3 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"extra_float_digits\": %q", v)
	}
	if n < 1 {
		// Shortest round-trip output is what n >= 1 means in PostgreSQL
		// 12+; rounding to fewer digits is not implemented.
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "extra_float_digits below 1 is not supported yet")
	}
	return strconv.Itoa(n), nil
}

func normalizeIsolation(v string) (string, error) {
	switch strings.ToLower(strings.Join(strings.Fields(v), " ")) {
	case "read committed", "read uncommitted":
		return "read committed", nil
	}
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "transaction isolation level %q is not supported yet", v)
}

// normalizeDuration parses a time setting: a number of milliseconds or a
// number with a unit ("5s", "100ms", "1min").
func normalizeDuration(v string) (string, error) {
	s := strings.TrimSpace(strings.ToLower(v))
	bad := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for a time setting: %q", v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || n < 0 {
		return "", bad
	}
	unit := strings.TrimSpace(s[i:])
	mul := map[string]float64{"": 1, "ms": 1, "s": 1000, "sec": 1000, "min": 60000, "h": 3600000, "d": 86400000}
	m, ok := mul[unit]
	if !ok {
		return "", bad
	}
	return strconv.FormatInt(int64(n*m), 10), nil
}

func normalizeNonNegativeInt(v string) (string, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n < 0 {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value %q: a non-negative integer is expected", v)
	}
	return strconv.FormatInt(n, 10), nil
}
