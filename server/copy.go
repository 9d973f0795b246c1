package server

import (
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// The COPY sub-protocol (PostgreSQL's protocol-flow "COPY Operations"),
// in the simple and the extended protocol alike:
//
//   - COPY FROM STDIN: CopyInResponse, then the client's CopyData messages
//     until CopyDone (the rows commit with the statement) or CopyFail (the
//     COPY fails with 57014 and the client's message). Flush and Sync are
//     ignored meanwhile, as PostgreSQL does; any other message is a
//     protocol violation (08P01) that ends the COPY, not the connection.
//     After an error the client's remaining CopyData, CopyDone and CopyFail
//     are dropped by dispatch.
//   - COPY TO STDOUT: CopyOutResponse, a CopyData per row, CopyDone.
//
// Both end with CommandComplete "COPY n" (sent by the caller).

// runCopy runs the copy phase of a COPY statement and returns its tag.
func (c *conn) runCopy(cs *sql.CopyStream, res sql.Result) (string, error) {
	format := formatText
	if cs.Binary() {
		format = formatBinary
	}
	codes := make([]uint16, cs.Columns())
	for i := range codes {
		codes[i] = uint16(format)
	}
	if !cs.In() {
		c.send(&pgproto3.CopyOutResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
		for {
			data, err := cs.Read()
			if err != nil {
				return "", err
			}
			if data == nil {
				break
			}
			c.send(&pgproto3.CopyData{Data: data})
			if len(c.wbuf) >= flushThreshold {
				if err := c.flush(); err != nil {
					return "", err
				}
			}
		}
		c.send(&pgproto3.CopyDone{})
		return res.Tag(), nil
	}

	c.send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
	if err := c.flush(); err != nil {
		return "", err
	}
	for {
		msg, err := c.be.Receive()
		if err != nil {
			cs.Fail("connection lost")
			c.receiveFailed(err)
			return "", connError{err}
		}
		acct, refused := c.gate.takeMessage()
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if refused == nil {
				err = cs.Write(m.Data)
			} else {
				err = refused
				cs.Fail(refused.Error())
			}
		case *pgproto3.CopyDone:
			err = cs.Done()
			acct.Close()
			if err != nil {
				return "", err
			}
			return res.Tag(), nil
		case *pgproto3.CopyFail:
			err = cs.Fail(m.Message)
		case *pgproto3.Flush, *pgproto3.Sync:
		case *pgproto3.Terminate:
			cs.Fail("the client terminated the connection")
			acct.Close()
			return "", connError{io.EOF}
		default:
			cs.Fail("unexpected message")
			err = &sqlerr.Error{Code: sqlerr.ProtocolViolation,
				Message: fmt.Sprintf("unexpected message type 0x%02X during COPY from stdin", messageType(msg))}
		}
		forgetMessage(msg)
		acct.Close()
		if err != nil {
			return "", err
		}
	}
}

// messageType is the type byte of a frontend message, for errors.
func messageType(msg pgproto3.FrontendMessage) byte {
	b, err := msg.Encode(nil)
	if err != nil || len(b) == 0 {
		return 0
	}
	return b[0]
}
