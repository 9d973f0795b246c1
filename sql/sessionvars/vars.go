package sessionvars

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txnmode"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Vars holds one session's settings. It is used by one goroutine at a
// time, like its session.
type Vars struct {
	values  map[string]string
	changed map[string]bool
	// defaults overrides the table's defaults for this session (the
	// server's --statement-timeout and --idle-in-transaction-timeout):
	// they are the initial values and what RESET returns to.
	defaults map[string]string
	// inTxn is set while a transaction block is open (txn.go).
	inTxn bool
	// timeouts holds the four timeout settings parsed, kept current by
	// every write of values (store): the server reads them around every
	// statement and message, and a look-up by name plus ParseInt each
	// time cost more than the rest of those reads.
	timeouts timeouts
	// txnModes caches TxnMode's answer outside a block ([0]) and inside
	// one ([1]); every write of values (store) clears it. Every
	// statement asks, and computing it takes seven map look-ups (1.7% of
	// a point SELECT's server CPU at 16 clients).
	txnModes   [2]txnmode.Mode
	txnModesOK [2]bool
}

// timeouts are the parsed timeout settings (0: none).
type timeouts struct {
	statement, lock, idleSession, idleInTxn time.Duration
}

// New returns settings at their defaults, with defaults overriding the
// table's.
func New(defaults map[string]string) *Vars {
	v := &Vars{values: map[string]string{}, changed: map[string]bool{}, defaults: defaults}
	for name := range specs {
		v.store(name, v.def(name))
	}
	return v
}

// store sets a value; every write of values goes through it.
func (v *Vars) store(name, value string) {
	v.values[name] = value
	v.txnModesOK = [2]bool{}
	var d *time.Duration
	switch name {
	case "statement_timeout":
		d = &v.timeouts.statement
	case "lock_timeout":
		d = &v.timeouts.lock
	case "idle_session_timeout":
		d = &v.timeouts.idleSession
	case "idle_in_transaction_session_timeout":
		d = &v.timeouts.idleInTxn
	default:
		return
	}
	ms, _ := strconv.ParseInt(value, 10, 64)
	*d = time.Duration(ms) * time.Millisecond
}

// def is the default of a known setting.
func (v *Vars) def(name string) string {
	if d, ok := v.defaults[name]; ok {
		return d
	}
	return specs[name].def
}

// Unknown is the error for a setting that does not exist.
func Unknown(name string) error {
	return sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
}

// settable returns the description of a setting SET and RESET may change
// (name lower case).
func settable(name string) (*spec, error) {
	d, ok := specs[name]
	if !ok {
		return nil, Unknown(name)
	}
	if d.readOnly {
		return nil, sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed", name)
	}
	return d, nil
}

// Get returns a setting's value (SHOW, current_setting).
func (v *Vars) Get(name string) (string, error) {
	lower := strings.ToLower(name)
	if val, ok := v.txnValue(lower); ok {
		return val, nil
	}
	val, ok := v.values[lower]
	if !ok {
		return "", Unknown(name)
	}
	return val, nil
}

// Set validates and sets a setting (SET, startup parameters).
func (v *Vars) Set(name, value string) error {
	name = strings.ToLower(name)
	d, err := settable(name)
	if err != nil {
		return err
	}
	if name == "datestyle" {
		// A DateStyle of one part keeps the other part as it is.
		cur, _ := v.Get(name)
		norm, err := MergeDateStyle(cur, value)
		if err != nil {
			return err
		}
		v.put(name, norm)
		return nil
	}
	if d.normalize != nil {
		norm, err := d.normalize(value)
		if err != nil {
			return err
		}
		value = norm
	}
	v.put(name, value)
	return nil
}

// put stores a value, remembering a change of a reportable setting.
func (v *Vars) put(name, value string) {
	if v.values[name] != value && specs[name].report {
		v.changed[name] = true
	}
	v.store(name, value)
}

// Reset returns a setting to its default (RESET name, SET name TO DEFAULT).
func (v *Vars) Reset(name string) error {
	name = strings.ToLower(name)
	if _, err := settable(name); err != nil {
		return err
	}
	v.put(name, v.def(name))
	return nil
}

// ResetAll returns every settable setting to its default (RESET ALL,
// DISCARD ALL).
func (v *Vars) ResetAll() {
	for name, d := range specs {
		if !d.readOnly && !TxnSetting(name) {
			_ = v.Reset(name)
		}
	}
}

// Init sets a read-only setting whose value the server decides
// (session_authorization), without reporting it as a change.
func (v *Vars) Init(name, value string) { v.store(name, value) }

// Param is one setting as ParameterStatus reports it.
type Param struct{ Name, Value string }

// Reported lists every reportable setting for the ParameterStatus
// messages after startup, sorted by name, and forgets earlier changes.
func (v *Vars) Reported() []Param {
	var out []Param
	for name, d := range specs {
		if d.report {
			out = append(out, Param{Name: DisplayName(name), Value: v.values[name]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	v.changed = map[string]bool{}
	return out
}

// TakeChanged returns (and forgets) the reportable settings that changed
// since the last call, sorted by name.
func (v *Vars) TakeChanged() []Param {
	if len(v.changed) == 0 {
		return nil
	}
	var out []Param
	for name := range v.changed {
		out = append(out, Param{Name: DisplayName(name), Value: v.values[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	v.changed = map[string]bool{}
	return out
}

// StatementTimeout returns the statement_timeout setting (0 = none).
func (v *Vars) StatementTimeout() time.Duration { return v.timeouts.statement }

// IdleInTransactionTimeout returns the idle_in_transaction_session_timeout
// setting (0 = none).
func (v *Vars) IdleInTransactionTimeout() time.Duration { return v.timeouts.idleInTxn }

// FollowerReadMaxStaleness returns the follower_read_max_staleness
// setting (0: a follower read never falls back to an older closed
// timestamp).
func (v *Vars) FollowerReadMaxStaleness() time.Duration {
	ms, _ := strconv.ParseInt(v.values["follower_read_max_staleness"], 10, 64)
	return time.Duration(ms) * time.Millisecond
}

// RangeExpansionLimit returns the range_expansion_limit setting.
func (v *Vars) RangeExpansionLimit() int {
	n, _ := strconv.Atoi(v.values["range_expansion_limit"])
	return n
}

// PostgreSQLDialect reports whether sql_dialect is postgresql.
func (v *Vars) PostgreSQLDialect() bool { return v.values["sql_dialect"] == DialectPostgreSQL }

// Zone returns the TimeZone setting's location (timestamptz input,
// output and casts).
func (v *Vars) Zone() *time.Location {
	loc, err := types.LoadZone(v.values["timezone"])
	if err != nil {
		return time.UTC
	}
	return loc
}

// ZoneName is the TimeZone setting as types.LoadZone reads it.
func (v *Vars) ZoneName() string { return v.values["timezone"] }

// Dialect returns the sql_dialect setting (yql or postgresql).
func (v *Vars) Dialect() string { return v.values["sql_dialect"] }

// SetDefault sets a setting and makes the value this session's default,
// the one RESET returns to: what a session starts with from ALTER
// DATABASE/ROLE ... SET and from its startup packet, as in PostgreSQL.
func (v *Vars) SetDefault(name, value string) error {
	if err := NotADefault(name); err != nil {
		return err
	}
	if err := v.Set(name, value); err != nil {
		return err
	}
	name = strings.ToLower(name)
	d := make(map[string]string, len(v.defaults)+1)
	for k, x := range v.defaults {
		d[k] = x
	}
	d[name] = v.values[name]
	v.defaults = d
	return nil
}

// Validate checks a value for a settable setting as SET would, and
// returns its normalised form (ALTER DATABASE/ROLE ... SET store it).
func Validate(name, value string) (string, error) {
	d, err := settable(strings.ToLower(name))
	if err != nil {
		return "", err
	}
	if d.normalize != nil {
		return d.normalize(value)
	}
	return value, nil
}
