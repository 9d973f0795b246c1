package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// SQLSTATEs the protocol layer raises that sqlerr does not name.
const (
	codeDuplicateCursor    = "42P03"
	codeInvalidCursorName  = "34000"
	codeObjectNotInPrereqs = "55000"
)

// statement is a prepared statement created by Parse.
type statement struct {
	prep *sql.Prepared
	// paramOIDs are the types the client declared in Parse; it may be
	// shorter than prep.ParamTypes, and 0 means "infer".
	paramOIDs []uint32
	// wire is the wire encoder's memory of the statement's last finished
	// execution, for the next one (sql.WireOf); nil while a portal uses
	// it or before the first. Reusing it saves the encoder's set-up
	// allocations on every execution of a prepared point SELECT.
	wire *sql.WireRows
	// desc is the last RowDescription sent for the statement, encoded
	// (see describeColumns).
	desc describeCache
}

// paramOID is the type of parameter i on the wire: what ParameterDescription
// reports and what a binary value is decoded as. A declared type wins, as in
// PostgreSQL, because the client encodes with the type it declared.
func (s *statement) paramOID(i int) uint32 {
	if i < len(s.paramOIDs) {
		if oid := s.paramOIDs[i]; oid != 0 && oid != types.OIDUnknown {
			return oid
		}
	}
	return s.prep.ParamTypes[i].OID()
}

// portal is a statement bound to parameters by Bind. Its Result stays open
// between Execute messages when a row limit suspends it.
type portal struct {
	prep    *sql.Prepared // kept even if the statement is closed, as in PostgreSQL
	st      *statement    // the statement bound; its wire memory is lent to the portal
	params  []types.Value
	formats []int16 // result format per column
	// ctx lives as long as the portal, because the engine may tie the
	// Result to the context it was executed with; CancelRequest cancels it
	// while an Execute on this portal runs. It is base (from
	// conn.takeContext, given back when the portal closes) with the
	// portal's memory account.
	ctx    context.Context
	base   context.Context
	cancel context.CancelCauseFunc
	// acct is the portal's memory account (its Bind message's, which it
	// took over): parameters, execution, rows sent. Closed with it.
	acct *memory.Account

	res       sql.Result // nil before the first Execute and after the last
	send      rowSender  // queues res's rows; set with res
	suspended bool       // a row limit stopped an Execute early
	done      bool       // ran to completion; tag holds its command tag
	failed    bool       // an Execute failed; the portal cannot run again
	tag       string
}

// close closes the portal's Result and account; its context goes back to
// c only after the Result is closed, so nothing of this portal runs under
// it when the next statement takes it.
func (p *portal) close(c *conn) {
	p.closeResult()
	c.giveBackContext(p.base, p.cancel)
	p.acct.Close()
}

// closeResult closes the portal's Result, if open, and gives the wire
// memory its rows used back to the statement.
func (p *portal) closeResult() {
	if p.res == nil {
		return
	}
	p.res.Close()
	p.res = nil
	if w := p.send.finish(); w != nil && p.st.wire == nil {
		p.st.wire = w
	}
}

// release drops what a portal that cannot run again holds: its parameter
// values and its memory reservations. A finished portal stays until it is
// closed or replaced (a client may Execute it again and get no rows), and
// clients leave the unnamed one behind after every statement; it must not
// keep a large value and its share of --max-memory while the connection
// idles.
func (p *portal) release() {
	p.params = nil
	p.acct.Close()
}

func (c *conn) closePortal(name string) {
	if p, ok := c.portals[name]; ok {
		delete(c.portals, name)
		c.dropPortal(name, p)
	}
}

func (c *conn) closeAllPortals() {
	for name, p := range c.portals {
		delete(c.portals, name)
		c.dropPortal(name, p)
	}
}

// dropPortal closes p, removed from c.portals. The unnamed portal's memory
// is kept for the next Bind (newPortal): clients bind it for every
// statement. Portals are dropped only between messages (Bind, Close,
// Query, ReadyForQuery, the connection's end), never while an Execute
// runs one, so clearing p here cannot pull it from under a running
// statement.
func (c *conn) dropPortal(name string, p *portal) {
	p.close(c)
	if name == "" {
		*p = portal{}
		c.sparePortal = p
	}
}

// newPortal returns a zero portal, the last unnamed one's memory when
// there is one.
func (c *conn) newPortal() *portal {
	if p := c.sparePortal; p != nil {
		c.sparePortal = nil
		return p
	}
	return new(portal)
}

// extendedError reports an error in the extended protocol and discards
// messages until the next Sync.
func (c *conn) extendedError(ctx context.Context, err error) error {
	c.skipToSync = true
	return c.commandError(ctx, err)
}

func (c *conn) handleParse(m *pgproto3.Parse) error {
	if m.Name == "" {
		// The unnamed statement goes even when the new one fails to parse.
		delete(c.stmts, "")
	} else if _, ok := c.stmts[m.Name]; ok {
		return c.extendedError(nil, sqlerr.New(sqlerr.DuplicatePreparedStatement, "prepared statement \"%s\" already exists", m.Name))
	}
	ctx, done := c.statementContext()
	acct := c.statementAccount()
	ctx = memory.WithAccount(ctx, acct)
	if err := acct.Grow(memory.ParseEstimate(m.Query), "parsing"); err != nil {
		err = c.extendedError(ctx, err)
		done()
		return err
	}
	prep, err := c.sess.Prepare(ctx, m.Query, m.ParameterOIDs)
	if err != nil {
		err = c.extendedError(ctx, err)
		done()
		return err
	}
	done()
	// Parse's fields belong to pgproto3's reused message; keep a copy.
	c.stmts[m.Name] = &statement{prep: prep, paramOIDs: slices.Clone(m.ParameterOIDs)}
	c.send(&pgproto3.ParseComplete{})
	c.sendSessionEvents()
	return nil
}

func (c *conn) handleBind(m *pgproto3.Bind) error {
	st, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return c.extendedError(nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", m.PreparedStatement))
	}
	if m.DestinationPortal == "" {
		c.closePortal("")
	} else if _, ok := c.portals[m.DestinationPortal]; ok {
		return c.extendedError(nil, sqlerr.New(codeDuplicateCursor, "portal \"%s\" already exists", m.DestinationPortal))
	}
	acct := c.statementAccount()
	// The decoded values are about as large as the message.
	if err := acct.Grow(int64(bindSize(m)), "parameter values"); err != nil {
		return c.extendedError(nil, err)
	}
	params, err := bindParams(st, m)
	if err != nil {
		return c.extendedError(nil, err)
	}
	formats, err := resultFormats(m.ResultFormatCodes, len(st.prep.Columns))
	if err != nil {
		return c.extendedError(nil, err)
	}
	base, cancel := c.takeContext()
	c.msgAcct = nil // the portal owns it now
	p := c.newPortal()
	*p = portal{prep: st.prep, st: st, params: params, formats: formats,
		ctx: memory.WithAccount(base, acct), base: base, cancel: cancel, acct: acct}
	c.portals[m.DestinationPortal] = p
	c.send(&pgproto3.BindComplete{})
	return nil
}

// bindSize is the bytes of a Bind message's parameter values.
func bindSize(m *pgproto3.Bind) int {
	n := 0
	for _, p := range m.Parameters {
		n += len(p)
	}
	return n
}

// bindParams checks a Bind message's parameters against the statement and
// decodes them into values of the statement's parameter types.
func bindParams(st *statement, m *pgproto3.Bind) ([]types.Value, error) {
	n := len(st.prep.ParamTypes)
	if len(m.Parameters) != n {
		return nil, &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: fmt.Sprintf(
			"bind message supplies %d parameters, but prepared statement \"%s\" requires %d", len(m.Parameters), m.PreparedStatement, n)}
	}
	codes := m.ParameterFormatCodes
	if len(codes) > 1 && len(codes) != n {
		return nil, &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: fmt.Sprintf(
			"bind message has %d parameter formats but %d parameters", len(codes), n)}
	}
	format := func(i int) int16 {
		switch len(codes) {
		case 1:
			return codes[0]
		case n:
			return codes[i]
		}
		return formatText
	}
	// The text parameters' bytes are copied into one string, which their
	// values share, instead of one allocation each (a 1,000-row INSERT
	// binds a thousand strings). The message's buffer is reused for the
	// next message, so each value must own its bytes either way.
	var textLen int
	for i, b := range m.Parameters {
		if b != nil && paramIsText(st.prep.ParamTypes[i], format(i)) {
			textLen += len(b)
		}
	}
	var text string
	if textLen > 0 {
		var sb strings.Builder
		sb.Grow(textLen)
		for i, b := range m.Parameters {
			if b != nil && paramIsText(st.prep.ParamTypes[i], format(i)) {
				sb.Write(b)
			}
		}
		text = sb.String()
	}
	params := make([]types.Value, n)
	for i, b := range m.Parameters {
		f := format(i)
		if f != formatText && f != formatBinary {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
		if b == nil {
			continue // NULL; the zero Value
		}
		var v types.Value
		var err error
		if t := st.prep.ParamTypes[i]; paramIsText(t, f) {
			v, err = decodeTextParam(t, text[:len(b)])
			text = text[len(b):]
		} else {
			v, err = decodeParam(t, st.paramOID(i), f, b, i+1)
		}
		if err != nil {
			return nil, err
		}
		params[i] = v
	}
	return params, nil
}

func (c *conn) handleDescribe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		st, ok := c.stmts[m.Name]
		if !ok {
			return c.extendedError(nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", m.Name))
		}
		oids := make([]uint32, len(st.prep.ParamTypes))
		for i := range oids {
			oids[i] = st.paramOID(i)
		}
		c.send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		c.describeColumns(&st.desc, st.prep.Columns, nil)
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			return c.extendedError(nil, sqlerr.New(codeInvalidCursorName, "portal \"%s\" does not exist", m.Name))
		}
		c.describeColumns(&p.st.desc, p.prep.Columns, p.formats)
	default:
		return c.extendedError(nil, sqlerr.New(sqlerr.ProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType))
	}
	return nil
}

// describeColumns sends the RowDescription of cols in formats (NoData when
// cols is nil). libpq's prepared execution (pgbench -M prepared) sends a
// Describe of the portal with every Bind, and building the message costs
// an allocation per column and per message, so the encoded message is kept
// in cache (the statement's) and sent again while the columns and formats
// are the same.
func (c *conn) describeColumns(cache *describeCache, cols []sql.ResultColumn, formats []int16) {
	if cols == nil {
		c.send(&pgproto3.NoData{})
		return
	}
	if !cache.holds(cols, formats) {
		msg, err := rowDescription(cols, formats).Encode(nil)
		if err != nil {
			c.send(rowDescription(cols, formats)) // flush reports the error
			return
		}
		*cache = describeCache{cols: cols, formats: slices.Clone(formats), msg: msg}
	}
	if c.encodeErr == nil {
		c.wbuf = append(c.wbuf, cache.msg...)
	}
}

// describeCache is an encoded RowDescription and what it was made from.
// The columns are compared by identity: the engine replaces a prepared
// statement's column slice when it binds it again, never changes one in
// place.
type describeCache struct {
	cols    []sql.ResultColumn
	formats []int16
	msg     []byte
}

func (d *describeCache) holds(cols []sql.ResultColumn, formats []int16) bool {
	sameCols := len(cols) == len(d.cols) && (len(cols) == 0 || &cols[0] == &d.cols[0])
	return d.msg != nil && sameCols && (formats == nil) == (d.formats == nil) && slices.Equal(formats, d.formats)
}

func (c *conn) handleExecute(m *pgproto3.Execute) error {
	p, ok := c.portals[m.Portal]
	if !ok {
		return c.extendedError(nil, sqlerr.New(codeInvalidCursorName, "portal \"%s\" does not exist", m.Portal))
	}
	switch {
	case p.prep.Empty:
		c.send(&pgproto3.EmptyQueryResponse{})
		return nil
	case p.failed:
		return c.extendedError(nil, sqlerr.New(codeObjectNotInPrereqs, "portal \"%s\" cannot be run", m.Portal))
	case p.done:
		// Running a finished portal again fetches nothing more.
		c.sendCommandComplete(tagWithRows(p.tag, 0))
		return nil
	}

	c.setRunning(p.cancel)
	c.resultAcct = p.acct
	end := c.startStatement(p.prep.SQL)
	err := c.executePortal(p, int(m.MaxRows))
	end(p.tag, err)
	c.resultAcct = nil
	c.setRunning(nil)
	if err != nil {
		p.failed = true
		p.closeResult()
		p.release()
		return c.extendedError(p.ctx, err)
	}
	c.sendSessionEvents()
	return nil
}

// executePortal runs p, or resumes it, sending at most maxRows rows (0: no
// limit). It ends with CommandComplete, or PortalSuspended when the limit
// stopped it.
func (c *conn) executePortal(p *portal, maxRows int) error {
	if p.res == nil {
		res, err := c.sess.Execute(p.ctx, p.prep, p.params)
		if err != nil {
			return err
		}
		p.res = res
		// The statement's wire memory is lent to this portal until its
		// result closes; another portal of the statement open meanwhile
		// gets its own.
		p.send.start(res, p.prep.Columns, p.formats, p.st.wire)
		p.st.wire = nil
	}
	if cs := sql.CopyOf(p.res); cs != nil {
		tag, err := c.runCopy(cs, p.res)
		if err != nil {
			return err
		}
		p.tag = tag
		p.closeResult()
		p.done = true
		p.release()
		c.sendCommandComplete(tag)
		return nil
	}
	for n := 0; ; n++ {
		if maxRows > 0 && n == maxRows {
			p.suspended = true
			c.send(&pgproto3.PortalSuspended{})
			return nil
		}
		more, err := p.send.next(p.ctx, c)
		if err != nil {
			return err
		}
		if !more {
			p.tag = p.res.Tag()
			p.closeResult()
			p.done = true
			p.release()
			tag := p.tag
			if p.suspended {
				// PostgreSQL counts the rows of this Execute only.
				tag = tagWithRows(tag, n)
			}
			c.sendCommandComplete(tag)
			return nil
		}
	}
}

// tagWithRows replaces the row count of a SELECT tag.
func tagWithRows(tag string, n int) string {
	if strings.HasPrefix(tag, "SELECT ") {
		return "SELECT " + strconv.Itoa(n)
	}
	return tag
}

func (c *conn) handleClose(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		// Portals made from the statement live on; closing a name that
		// does not exist is not an error.
		delete(c.stmts, m.Name)
	case 'P':
		c.closePortal(m.Name)
	default:
		return c.extendedError(nil, sqlerr.New(sqlerr.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType))
	}
	c.send(&pgproto3.CloseComplete{})
	return nil
}
