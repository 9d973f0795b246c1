package pgcopy

import (
	"encoding/binary"
	"strings"

	"github.com/pivotdb/pivotdb/sql/pgbinary"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
)

// Encoder writes rows in COPY TO's format. Each row is one CopyData
// message, as PostgreSQL sends them; the binary format's header goes with
// Start and its trailer with End.
type Encoder struct {
	o    *Options
	oids []uint32
}

// NewEncoder writes rows of columns of the given types. The binary format
// needs a binary form of each type.
func NewEncoder(o *Options, cols []types.Type) (*Encoder, error) {
	e := &Encoder{o: o, oids: make([]uint32, len(cols))}
	for i, t := range cols {
		e.oids[i] = t.OID()
		if o.Format == Binary && !pgbinary.Has(e.oids[i]) {
			return nil, sqlerr.NotSupported("COPY BINARY of a %s column", t.String())
		}
	}
	return e, nil
}

// Start appends what precedes the rows: the binary header, or the header
// line of names.
func (e *Encoder) Start(buf []byte, names []string) []byte {
	if e.o.Format == Binary {
		buf = append(buf, BinarySignature...)
		return append(buf, 0, 0, 0, 0, 0, 0, 0, 0) // flags, header extension length
	}
	if !e.o.Header {
		return buf
	}
	for i, n := range names {
		if i > 0 {
			buf = append(buf, e.o.Delimiter)
		}
		if e.o.Format == CSV {
			buf = e.appendCSV(buf, n, false)
		} else {
			buf = e.appendText(buf, n)
		}
	}
	return append(buf, '\n')
}

// End appends what follows the rows: the binary trailer.
func (e *Encoder) End(buf []byte) []byte {
	if e.o.Format == Binary {
		return append(buf, 0xff, 0xff)
	}
	return buf
}

// AppendRow appends one row.
func (e *Encoder) AppendRow(buf []byte, row []types.Value) ([]byte, error) {
	if e.o.Format == Binary {
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
		for i, v := range row {
			if v.IsNull() {
				buf = binary.BigEndian.AppendUint32(buf, 0xffffffff)
				continue
			}
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			var err error
			if buf, err = pgbinary.Append(buf, e.oids[i], v); err != nil {
				return buf, err
			}
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		}
		return buf, nil
	}
	for i, v := range row {
		if i > 0 {
			buf = append(buf, e.o.Delimiter)
		}
		if v.IsNull() {
			buf = append(buf, e.o.Null...)
			continue
		}
		if e.o.Format == CSV {
			force := i < len(e.o.ForceQuote) && e.o.ForceQuote[i]
			buf = e.appendCSV(buf, v.Text(), force)
		} else {
			buf = e.appendText(buf, v.Text())
		}
	}
	return append(buf, '\n'), nil
}

// appendText escapes a value for the text format: backslash, the
// delimiter and the control characters that have a short escape.
func (e *Encoder) appendText(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		// Control characters first, as PostgreSQL's CopyAttributeOutText:
		// a tab delimiter is written \t, not backslash-tab.
		switch {
		case c < 0x20:
			switch c {
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			case '\v':
				buf = append(buf, '\\', 'v')
			default:
				if c == e.o.Delimiter {
					buf = append(buf, '\\')
				}
				buf = append(buf, c)
			}
		case c == '\\' || c == e.o.Delimiter:
			buf = append(buf, '\\', c)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// appendCSV quotes a value when it must be (it holds the delimiter, the
// quote, a line end, is the NULL string, or is \. which would read as the
// end marker) or FORCE_QUOTE asks; inside quotes the quote and escape
// characters are escaped.
func (e *Encoder) appendCSV(buf []byte, s string, force bool) []byte {
	q, esc := e.o.Quote, e.o.Escape
	quote := force || s == e.o.Null || s == `\.` ||
		strings.IndexByte(s, e.o.Delimiter) >= 0 || strings.IndexByte(s, q) >= 0 ||
		strings.ContainsAny(s, "\r\n")
	if !quote {
		return append(buf, s...)
	}
	buf = append(buf, q)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == q || c == esc {
			buf = append(buf, esc)
		}
		buf = append(buf, c)
	}
	return append(buf, q)
}
