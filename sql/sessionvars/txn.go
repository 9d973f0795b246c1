package sessionvars

import (
	"fmt"
	"strings"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/txnmode"
)

// A transaction's characteristics are three settings, as in PostgreSQL:
// transaction_isolation, transaction_read_only and transaction_deferrable.
// Outside a transaction block every statement is a transaction of its
// own that starts with the default_transaction_* values, so that is what
// the transaction_* settings read there; BeginTxn copies the defaults in
// when a block starts (BEGIN's modes and SET TRANSACTION then change
// them), EndTxn lets them follow the defaults again.

// txnSettings maps each transaction setting to its default.
var txnSettings = map[string]string{
	"transaction_isolation":  "default_transaction_isolation",
	"transaction_read_only":  "default_transaction_read_only",
	"transaction_deferrable": "default_transaction_deferrable",
}

// TxnSetting reports whether name (lower case) is one of the open
// transaction's characteristics, which the session sets itself (SET
// TRANSACTION's rules apply to them).
func TxnSetting(name string) bool { _, ok := txnSettings[name]; return ok }

// NotADefault refuses a transaction setting where a default is being set
// (the startup packet, ALTER DATABASE/ROLE ... SET): every transaction
// starts from default_transaction_*, so the value would be ignored.
func NotADefault(name string) error {
	name = strings.ToLower(name)
	if def, ok := txnSettings[name]; ok {
		return &sqlerr.Error{Code: sqlerr.CantChangeRuntimeParam,
			Message: fmt.Sprintf("parameter %q cannot be set as a session default", name),
			Hint:    fmt.Sprintf("Set %s instead.", def)}
	}
	return nil
}

// BeginTxn starts a transaction block: its characteristics start as the
// defaults.
func (v *Vars) BeginTxn() {
	v.inTxn = true
	for name, def := range txnSettings {
		v.store(name, v.values[def])
	}
}

// EndTxn ends a transaction block.
func (v *Vars) EndTxn() { v.inTxn = false }

// InTxn reports whether a transaction block is open (BeginTxn).
func (v *Vars) InTxn() bool { return v.inTxn }

// txnValue is what a transaction setting reads outside a block.
func (v *Vars) txnValue(name string) (string, bool) {
	def, ok := txnSettings[name]
	if name == "transaction_read_only" && v.values["stale_read_only"] == "on" {
		return "on", true // TxnMode's rule
	}
	if !ok || v.inTxn {
		return "", false
	}
	return v.values[def], true
}

// TxnMode is the characteristics of the current transaction: the open
// block's, or outside one those a statement's own transaction gets.
//
// Every statement reads it, so it reads the values directly, as Get
// would resolve the names (a block's own settings, else the defaults),
// without Get's case folding and look-ups (2.3% of a point SELECT's CPU).
func (v *Vars) TxnMode() txnmode.Mode {
	i := 0
	if v.inTxn {
		i = 1
	}
	if !v.txnModesOK[i] {
		v.txnModes[i], v.txnModesOK[i] = v.txnMode(), true
	}
	return v.txnModes[i]
}

// txnMode computes TxnMode from the values.
func (v *Vars) txnMode() txnmode.Mode {
	iso, ro, def := "transaction_isolation", "transaction_read_only", "transaction_deferrable"
	if !v.inTxn {
		iso, ro, def = txnSettings[iso], txnSettings[ro], txnSettings[def]
	}
	l, _ := txnmode.ParseIsolation(v.values[iso])
	// The stale read-only mode makes every transaction read-only
	// (sql/follower.go).
	readOnly := v.values[ro] == "on" || v.values["stale_read_only"] == "on"
	return txnmode.Mode{Isolation: l, ReadOnly: readOnly, Deferrable: v.values[def] == "on"}
}
