package sql

import (
	"testing"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestTransactionModes runs scripts of statements through one session and
// checks each statement's outcome: "ok", the first value of its first row,
// or "CODE: message" of its error.
func TestTransactionModes(t *testing.T) {
	e := testEngine(t)
	setup := testSession(t, e)
	query(t, setup, "CREATE TABLE acct (id Int64, bal Int64, PRIMARY KEY (id))")
	query(t, setup, "INSERT INTO acct VALUES (1, 10)")
	query(t, setup, "CREATE SEQUENCE seq")
	type step struct{ sql, want string }
	scripts := map[string][]step{
		"defaults": {
			{"SHOW transaction_isolation", "read committed"},
			{"SHOW transaction_read_only", "off"},
			{"SHOW transaction_deferrable", "off"},
			{"SELECT current_setting('default_transaction_isolation')", "read committed"},
		},
		"begin read only": {
			{"BEGIN READ ONLY", "ok"},
			{"SHOW transaction_read_only", "on"},
			{"SELECT bal FROM acct WHERE id = 1", "10"},
			{"INSERT INTO acct VALUES (2, 0)", "25006: cannot execute INSERT in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"BEGIN TRANSACTION READ ONLY", "ok"},
			{"UPDATE acct SET bal = 0", "25006: cannot execute UPDATE in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"START TRANSACTION READ ONLY", "ok"},
			{"DELETE FROM acct", "25006: cannot execute DELETE in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"BEGIN READ ONLY", "ok"},
			{"UPSERT INTO acct (id, bal) VALUES (1, 1)", "25006: cannot execute UPSERT in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"BEGIN READ ONLY", "ok"},
			{"CREATE TABLE x (k Int64, PRIMARY KEY (k))", "25006: cannot execute CREATE TABLE in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"BEGIN READ ONLY", "ok"},
			{"SELECT nextval('seq')", "25006: cannot execute nextval() in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"BEGIN READ ONLY", "ok"},
			{"SELECT * FROM acct FOR UPDATE", "25006: cannot execute SELECT FOR UPDATE in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"BEGIN READ ONLY", "ok"},
			{"EXPLAIN ANALYZE UPDATE acct SET bal = 0", "25006: cannot execute UPDATE in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"BEGIN READ ONLY", "ok"},
			{"TRUNCATE acct", "25006: cannot execute TRUNCATE TABLE in a read-only transaction"},
			{"ROLLBACK", "ok"},
			{"SHOW transaction_read_only", "off"},
			{"SELECT bal FROM acct WHERE id = 1", "10"},
		},
		"read only temp tables": {
			{"CREATE TEMP TABLE scratch (k Int64, PRIMARY KEY (k))", "ok"},
			{"BEGIN READ ONLY", "ok"},
			{"INSERT INTO scratch VALUES (1)", "ok"},
			{"SELECT count(*) FROM scratch", "1"},
			{"COMMIT", "ok"},
		},
		"default read only": {
			{"SET default_transaction_read_only = on", "ok"},
			{"SHOW transaction_read_only", "on"},
			{"INSERT INTO acct VALUES (3, 0)", "25006: cannot execute INSERT in a read-only transaction"},
			{"BEGIN READ WRITE", "ok"},
			{"SHOW transaction_read_only", "off"},
			{"ROLLBACK", "ok"},
			{"SET default_transaction_read_only = 'maybe'", "22023: parameter requires a Boolean value: \"maybe\""},
			{"RESET default_transaction_read_only", "ok"},
		},
		"set transaction": {
			{"SET TRANSACTION READ ONLY", "ok"}, // a WARNING outside a block
			{"SHOW transaction_read_only", "off"},
			{"BEGIN", "ok"},
			{"SET TRANSACTION READ ONLY", "ok"},
			{"SHOW transaction_read_only", "on"},
			{"SET TRANSACTION READ WRITE", "ok"},
			{"SELECT 1", "1"},
			{"SET TRANSACTION READ ONLY", "ok"},
			{"SET TRANSACTION READ WRITE", "25001: transaction read-write mode must be set before any query"},
			{"ROLLBACK", "ok"},
			{"BEGIN", "ok"},
			{"SELECT 1", "1"},
			{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "ok"},
			{"SET TRANSACTION DEFERRABLE", "25001: SET TRANSACTION [NOT] DEFERRABLE must be called before any query"},
			{"ROLLBACK", "ok"},
			{"BEGIN ISOLATION LEVEL READ UNCOMMITTED, DEFERRABLE", "ok"},
			{"SHOW transaction_isolation", "read committed"},
			{"SHOW transaction_deferrable", "on"},
			{"SET transaction_deferrable = off", "ok"},
			{"SHOW transaction_deferrable", "off"},
			{"COMMIT", "ok"},
			{"SHOW transaction_deferrable", "off"},
		},
		"serializable": {
			{"BEGIN ISOLATION LEVEL SERIALIZABLE", "ok"},
			{"SHOW transaction_isolation", "serializable"},
			{"ROLLBACK", "ok"},
			{"START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE", "ok"},
			{"SHOW transaction_isolation", "serializable"},
			{"SHOW transaction_deferrable", "on"},
			{"ROLLBACK", "ok"},
			{"SHOW transaction_isolation", "read committed"},
			{"SET default_transaction_isolation = 'serializable'", "ok"},
			{"SHOW transaction_isolation", "serializable"},
			{"SHOW default_transaction_isolation", "serializable"},
			{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED", "ok"},
			{"SHOW default_transaction_isolation", "read committed"},
			{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE", "ok"},
			{"SHOW default_transaction_isolation", "serializable"},
			{"SET default_transaction_isolation = 'read committed'", "ok"},
			{"BEGIN", "ok"},
			{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "ok"},
			{"SHOW transaction_isolation", "serializable"},
			{"SELECT 1", "1"},
			{"SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "25001: SET TRANSACTION ISOLATION LEVEL must be called before any query"},
			{"ROLLBACK", "ok"},
		},
		"bad names": {
			{"SET default_transaction_isolation = 'snapshot'", `22023: invalid value for parameter "default_transaction_isolation": "snapshot"`},
			{"SET transaction_isolation = 'chaos'", `22023: invalid value for parameter "transaction_isolation": "chaos"`},
			{"RESET transaction_isolation", `55P02: parameter "transaction_isolation" cannot be reset`},
			{"ALTER ROLE pivotdb SET transaction_read_only = on", `55P02: parameter "transaction_read_only" cannot be set as a session default`},
			{"SET default_transaction_isolation = 'READ UNCOMMITTED'", "ok"},
			{"SHOW default_transaction_isolation", "read committed"},
		},
		"session characteristics": {
			{"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY, DEFERRABLE", "ok"},
			{"SHOW default_transaction_read_only", "on"},
			{"SHOW default_transaction_deferrable", "on"},
			{"BEGIN", "ok"},
			{"SHOW transaction_read_only", "on"},
			{"ROLLBACK", "ok"},
			{"SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE, NOT DEFERRABLE", "ok"},
			{"INSERT INTO acct VALUES (4, 0)", "ok"},
		},
		"and chain": {
			{"COMMIT AND CHAIN", "25P01: COMMIT AND CHAIN can only be used in transaction blocks"},
			{"BEGIN READ ONLY", "ok"},
			{"SELECT 1", "1"},
			{"COMMIT AND CHAIN", "ok"},
			{"SHOW transaction_read_only", "on"},
			{"SET TRANSACTION READ WRITE", "ok"}, // no query yet in the new transaction
			{"INSERT INTO acct VALUES (5, 5)", "ok"},
			{"ROLLBACK AND CHAIN", "ok"},
			{"SELECT count(*) FROM acct WHERE id = 5", "0"},
			{"SHOW transaction_read_only", "off"},
			{"SELECT x", `42703: column "x" does not exist`},
			{"COMMIT AND CHAIN", "ok"},
			{"SELECT 2", "2"},
			{"COMMIT", "ok"},
		},
		"not run yet": {
			{"SHOW transaction_read_only", "off"},
			{"SELECT * FROM acct AS OF SYSTEM TIME '10s'", "22023: AS OF SYSTEM TIME: interval value '10s' too large, AS OF interval must be <= -1µs"},
		},
	}
	if err := setup.SetStartupParameter("transaction_isolation", "read committed"); sqlerr.As(err).Code != sqlerr.CantChangeRuntimeParam {
		t.Fatalf("transaction_isolation as a startup parameter: %v", err)
	}
	for name, steps := range scripts {
		t.Run(name, func(t *testing.T) {
			s := testSession(t, e)
			for _, st := range steps {
				rows, err := tryQuery(s, st.sql)
				got := "ok"
				switch {
				case err != nil:
					e := sqlerr.As(err)
					got = e.Code + ": " + e.Message
				case len(rows) > 0 && len(rows[0]) > 0:
					got = rows[0][0].Text()
				}
				if got != st.want {
					t.Fatalf("%s:\n got %s\nwant %s", st.sql, got, st.want)
				}
			}
			if s.TxStatus() != 'I' {
				t.Fatalf("script left a transaction open")
			}
		})
	}
}
