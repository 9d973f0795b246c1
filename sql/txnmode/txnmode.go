package txnmode

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Isolation is a transaction isolation level. The zero value is READ
// COMMITTED, PostgreSQL's default.
type Isolation uint8

// The isolation levels PostgreSQL names. READ UNCOMMITTED has no value of
// its own: PostgreSQL runs it as READ COMMITTED, and so does PivotDB.
const (
	ReadCommitted Isolation = iota
	RepeatableRead
	Serializable
)

// String is the level as PostgreSQL shows it in transaction_isolation.
func (l Isolation) String() string {
	switch l {
	case ReadCommitted:
		return "read committed"
	case RepeatableRead:
		return "repeatable read"
	case Serializable:
		return "serializable"
	}
	return fmt.Sprintf("Isolation(%d)", uint8(l))
}

// ParseIsolation reads an isolation level as a setting value spells it
// (any case, any spacing). READ UNCOMMITTED becomes ReadCommitted; ok is
// false for anything else that is not a level.
func ParseIsolation(v string) (l Isolation, ok bool) {
	// The session's setting holds the canonical spelling and is read by
	// every statement (sessionvars.TxnMode): match it before normalizing,
	// which allocates.
	switch v {
	case "read committed":
		return ReadCommitted, true
	case "repeatable read":
		return RepeatableRead, true
	case "serializable":
		return Serializable, true
	}
	switch strings.ToLower(strings.Join(strings.Fields(v), " ")) {
	case "read committed", "read uncommitted":
		return ReadCommitted, true
	case "repeatable read":
		return RepeatableRead, true
	case "serializable":
		return Serializable, true
	}
	return 0, false
}

// InvalidIsolation is PostgreSQL's error for a value of parameter that is
// not an isolation level (22023, with the levels in the hint).
func InvalidIsolation(parameter, value string) error {
	return &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
		Message: fmt.Sprintf("invalid value for parameter %q: %q", parameter, value),
		Hint:    "Available values: serializable, repeatable read, read committed, read uncommitted."}
}

// Implemented reports, as an error, whether transactions can run at level
// l: every level PostgreSQL names runs (sql/txn: SERIALIZABLE by read
// refresh). Everything that refuses a level (BEGIN, SET TRANSACTION, the
// settings) asks this.
func Implemented(l Isolation) error {
	if l == ReadCommitted || l == RepeatableRead || l == Serializable {
		return nil
	}
	return sqlerr.NotSupported("transaction isolation level %s", strings.ToUpper(l.String()))
}

// Mode is a transaction's characteristics: what the transaction core needs
// to know when it starts a transaction, and what the session enforces.
type Mode struct {
	Isolation Isolation
	// ReadOnly refuses every write, DDL and sequence change with 25006.
	ReadOnly bool
	// Deferrable matters only to SERIALIZABLE READ ONLY transactions (in
	// PostgreSQL they wait for a snapshot that cannot see an anomaly);
	// elsewhere it has no effect, as in PostgreSQL.
	Deferrable bool
}

// String spells m as BEGIN would take it.
func (m Mode) String() string {
	access := "READ WRITE"
	if m.ReadOnly {
		access = "READ ONLY"
	}
	def := "NOT DEFERRABLE"
	if m.Deferrable {
		def = "DEFERRABLE"
	}
	return fmt.Sprintf("ISOLATION LEVEL %s, %s, %s", strings.ToUpper(m.Isolation.String()), access, def)
}
