package server

import (
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/types"
)

// How the connection reserves memory for what it handles (see
// sql/memory): every Query, Parse and Bind message has an account in
// Config.Memory limited by Config.MaxStatementMemory. The gate opens it
// when the message is large; statementAccount opens it otherwise. A Query's
// account covers its message, the estimate of parsing it, the trees its
// statements build, the rows they hold and the large rows sent back, and
// is closed after the Query; a Bind's account lives with its portal (its
// parameter values and everything its Execute messages do); a Parse's
// account covers parsing and binding and is closed after it.

// statementAccount returns the account of the message being handled,
// opening one when the gate did not.
func (c *conn) statementAccount() *memory.Account {
	if c.msgAcct == nil {
		c.msgAcct = c.srv.cfg.Memory.NewAccount("statement", c.srv.cfg.MaxStatementMemory)
	}
	return c.msgAcct
}

// refuseMessage answers a message the gate dropped because the memory
// budget could not hold it: a Query gets the 53200 and ReadyForQuery, a
// Parse or Bind the 53200, after which the rest of the pipeline up to Sync
// is skipped as after any extended-protocol error.
func (c *conn) refuseMessage(msg pgproto3.FrontendMessage) error {
	err := c.msgRefused
	if _, ok := msg.(*pgproto3.Query); ok {
		if err := c.commandError(nil, err); err != nil {
			return err
		}
		return c.readyForQuery()
	}
	return c.extendedError(nil, err)
}

// bigRow is the estimated encoded size from which a result row is
// reserved before it is encoded; it is above flushThreshold, so such a row
// is flushed, and its reservation given back, within sendRow.
const bigRow = 256 << 10

// rowEstimate is what encoding row takes at most: its text or binary form
// (bytes in hex are twice their length) in the scratch buffer, and the
// DataRow's copy in pgproto3's send buffer.
func rowEstimate(row []types.Value) int64 {
	var n int64
	for _, v := range row {
		n += 16 + 2*int64(v.PayloadSize())
	}
	return 2 * n
}

// forgetMessage drops what a handled message refers to. pgproto3 decodes
// every message into one struct per type that it reuses, so the text of a
// connection's last Query or Parse (a copy: a 1,000,000-item IN list is
// 7 MB) and its last Bind's parameter values would otherwise stay
// reachable, outside any budget, for as long as the connection idles.
func forgetMessage(msg pgproto3.FrontendMessage) {
	switch m := msg.(type) {
	case *pgproto3.Query:
		m.String = ""
	case *pgproto3.Parse:
		m.Query = ""
	case *pgproto3.Bind:
		m.Parameters = nil
	}
}
