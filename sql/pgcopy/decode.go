package pgcopy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// BinarySignature starts a binary COPY stream.
var BinarySignature = []byte("PGCOPY\n\377\r\n\x00")

// Decoder splits the bytes of COPY FROM into rows. Write adds input as it
// arrives (CopyData messages cut it anywhere), Next returns each complete
// row, Close says no more input comes. Memory: the unconsumed input plus
// one row.
type Decoder struct {
	o     *Options
	names []string
	buf   []byte
	off   int
	eof   bool
	// done: the end marker (\. or the binary trailer) was read; later
	// input is ignored (text, CSV) or an error (binary).
	done bool
	// line is the current row's number; header: the header line is
	// still to be read.
	line   int64
	header bool
	eol    eolKind
	// binaryHeader: the binary signature and header were read.
	binaryHeader bool

	fields  [][]byte
	scratch []byte
	// plain: the line nextLine returned last has no backslash (text
	// format) or quote (CSV), so splitText and splitCSV need not
	// unescape it.
	plain   bool
	lineBuf []byte // the current line's text (text, CSV), for CONTEXT
}

type eolKind uint8

const (
	eolUnknown eolKind = iota
	eolNL
	eolCRNL
	eolCR
)

// NewDecoder decodes rows of len(names) fields; names are the COPY's
// columns (for errors and HEADER MATCH).
func NewDecoder(o *Options, names []string) *Decoder {
	return &Decoder{o: o, names: names, header: o.Header && o.Format != Binary}
}

// Write adds input. The Decoder keeps p's bytes only until Next consumes
// them, in a buffer of its own.
func (d *Decoder) Write(p []byte) {
	if d.done && d.o.Format != Binary {
		return
	}
	if d.off > 0 && d.off >= len(d.buf)/2 {
		n := copy(d.buf, d.buf[d.off:])
		d.buf = d.buf[:n]
		d.off = 0
	}
	d.buf = append(d.buf, p...)
}

// Close marks the end of input: the last line may lack its newline.
func (d *Decoder) Close() { d.eof = true }

// Line is the number of the row Next returned last (or failed on).
func (d *Decoder) Line() int64 { return d.line }

// LineText is the text of that row as it came (text and CSV formats; nil
// for binary).
func (d *Decoder) LineText() []byte { return d.lineBuf }

// Buffered is the bytes of input held and not yet decoded.
func (d *Decoder) Buffered() int { return len(d.buf) - d.off }

// Next returns the next row's fields, nil for NULL, valid until the next
// call of Next or Write; ok is false when no complete row is buffered (more input is
// needed, or, after Close, the data ended).
func (d *Decoder) Next() (fields [][]byte, ok bool, err error) {
	for {
		if d.o.Format == Binary {
			return d.nextBinary()
		}
		if d.done {
			return nil, false, nil
		}
		line, ok, err := d.nextLine()
		if err != nil || !ok {
			return nil, false, err
		}
		d.line++
		d.lineBuf = line
		if len(line) == 2 && line[0] == '\\' && line[1] == '.' {
			d.done = true
			return nil, false, nil
		}
		if d.o.Format == CSV {
			err = d.splitCSV(line)
		} else {
			err = d.splitText(line)
		}
		if err != nil {
			return nil, false, err
		}
		if d.header {
			d.header = false
			if err := d.matchHeader(); err != nil {
				return nil, false, err
			}
			continue
		}
		if len(d.fields) > len(d.names) {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "extra data after last expected column")
		}
		if len(d.fields) < len(d.names) {
			if len(d.names) == 0 {
				return d.fields, true, nil
			}
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "missing data for column \"%s\"", d.names[len(d.fields)])
		}
		return d.fields, true, nil
	}
}

// matchHeader checks HEADER MATCH: the header's fields are the columns'
// names, in order.
func (d *Decoder) matchHeader() error {
	if !d.o.HeaderMatch {
		return nil
	}
	if len(d.fields) != len(d.names) {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "wrong number of fields in header line: got %d, expected %d", len(d.fields), len(d.names))
	}
	for i, f := range d.fields {
		if f == nil {
			return sqlerr.New(sqlerr.BadCopyFileFormat, "column name mismatch in header line field %d: got null value (\"%s\"), expected \"%s\"", i+1, d.o.Null, d.names[i])
		}
		if string(f) != d.names[i] {
			return sqlerr.New(sqlerr.BadCopyFileFormat, "column name mismatch in header line field %d: got \"%s\", expected \"%s\"", i+1, f, d.names[i])
		}
	}
	return nil
}

// nextLine returns the next line without its end, once it is complete
// (or, after Close, the unterminated last line). A backslash (text) or a
// quoted field (CSV) hides the line ends inside it.
func (d *Decoder) nextLine() ([]byte, bool, error) {
	b := d.buf[d.off:]
	csv := d.o.Format == CSV
	d.plain = false
	if d.eol != eolCR && d.eol != eolCRNL {
		// The usual line: up to a \n, with no backslash (text) or quote
		// (CSV) and no \r before it, found with a few bytes.IndexByte
		// instead of a loop over every byte. Anything else takes the loop
		// below.
		special := byte('\\')
		if csv {
			special = d.o.Quote
		}
		if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
			line := b[:nl]
			if bytes.IndexByte(line, special) < 0 && bytes.IndexByte(line, '\r') < 0 {
				d.eol = eolNL
				d.off += nl + 1
				d.plain = true
				return line, true, nil
			}
		}
	}
	inQuote := false
	q, esc := d.o.Quote, d.o.Escape
	for i := 0; i < len(b); i++ {
		c := b[i]
		if csv {
			if inQuote {
				if c == esc && esc != q && i+1 < len(b) && (b[i+1] == q || b[i+1] == esc) {
					i++
				} else if c == q {
					inQuote = false
				}
				continue
			}
			if c == q {
				inQuote = true
				continue
			}
		} else if c == '\\' {
			if i+1 >= len(b) {
				break // the escaped byte is still to come
			}
			i++
			continue
		}
		if c != '\n' && c != '\r' {
			continue
		}
		// A line end: it must be the data's kind of line end.
		if c == '\r' && i+1 >= len(b) && !d.eof && d.eol != eolCR {
			return nil, false, nil // \r\n may be cut between messages
		}
		kind := eolNL
		if c == '\r' {
			kind = eolCR
			if i+1 < len(b) && b[i+1] == '\n' {
				kind = eolCRNL
			}
		}
		if d.eol == eolUnknown {
			d.eol = kind
		}
		if kind != d.eol {
			return nil, false, d.strayLineEnd(kind)
		}
		line := b[:i]
		n := i + 1
		if kind == eolCRNL {
			n++
		}
		d.off += n
		return line, true, nil
	}
	if !d.eof {
		return nil, false, nil
	}
	if csv && inQuote {
		d.line++
		d.lineBuf = b
		return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "unterminated CSV quoted field")
	}
	if len(b) == 0 {
		return nil, false, nil
	}
	d.off += len(b)
	return b, true, nil
}

// strayLineEnd is PostgreSQL's error for a line end of another kind than
// the data's first one, which can only be a character of the data.
func (d *Decoder) strayLineEnd(kind eolKind) error {
	d.line++
	d.lineBuf = nil
	cr := kind == eolCR || kind == eolCRNL && d.eol == eolNL
	if d.o.Format == CSV {
		if cr {
			return &sqlerr.Error{Code: sqlerr.BadCopyFileFormat, Message: "unquoted carriage return found in data",
				Hint: "Use quoted CSV field to represent carriage return."}
		}
		return &sqlerr.Error{Code: sqlerr.BadCopyFileFormat, Message: "unquoted newline found in data",
			Hint: "Use quoted CSV field to represent newline."}
	}
	if cr {
		return &sqlerr.Error{Code: sqlerr.BadCopyFileFormat, Message: "literal carriage return found in data",
			Hint: `Use "\r" to represent carriage return.`}
	}
	return &sqlerr.Error{Code: sqlerr.BadCopyFileFormat, Message: "literal newline found in data",
		Hint: `Use "\n" to represent newline.`}
}

// splitText splits a text-format line at its delimiters and undoes the
// backslash escapes; a field spelled as the NULL string is NULL.
func (d *Decoder) splitText(line []byte) error {
	d.fields = d.fields[:0]
	d.scratch = d.scratch[:0]
	delim := d.o.Delimiter
	if d.plain && delim < utf8.RuneSelf && utf8.Valid(line) {
		// No escapes, and the line is UTF-8 as a whole, so each field cut
		// at the (ASCII) delimiter is too: the fields are slices of the
		// line. An invalid line takes the loop, which names the field's
		// bad bytes.
		for {
			i := bytes.IndexByte(line, delim)
			raw := line
			if i >= 0 {
				raw = line[:i]
			}
			if string(raw) == d.o.Null {
				d.fields = append(d.fields, nil)
			} else {
				d.fields = append(d.fields, raw[:len(raw):len(raw)])
			}
			if i < 0 {
				return nil
			}
			line = line[i+1:]
		}
	}
	start := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) {
			if line[i] == '\\' {
				i++
				continue
			}
			if line[i] != delim {
				continue
			}
		}
		raw := line[start:min(i, len(line))]
		start = i + 1
		if string(raw) == d.o.Null {
			d.fields = append(d.fields, nil)
			continue
		}
		f, err := d.unescape(raw)
		if err != nil {
			return err
		}
		d.fields = append(d.fields, f)
	}
	return nil
}

// unescape undoes text format's escapes into the scratch buffer.
func (d *Decoder) unescape(raw []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		if !utf8.Valid(raw) {
			return nil, badUTF8(raw)
		}
		return raw[:len(raw):len(raw)], nil
	}
	start := len(d.scratch)
	out := d.scratch
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			out = append(out, c)
			continue
		}
		i++
		c = raw[i]
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, '\v')
		case 'x':
			if i+1 < len(raw) && isHex(raw[i+1]) {
				v := hexVal(raw[i+1])
				i++
				if i+1 < len(raw) && isHex(raw[i+1]) {
					v = v<<4 | hexVal(raw[i+1])
					i++
				}
				out = append(out, v)
			} else {
				out = append(out, 'x')
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := c - '0'
			for k := 0; k < 2 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7'; k++ {
				v = v<<3 | (raw[i+1] - '0')
				i++
			}
			out = append(out, v)
		default:
			out = append(out, c)
		}
	}
	d.scratch = out
	f := out[start:len(out):len(out)]
	if !utf8.Valid(f) {
		return nil, badUTF8(f)
	}
	return f, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// badUTF8 is PostgreSQL's error for bytes that are not UTF-8, naming the
// first bad sequence.
func badUTF8(b []byte) error {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			seq := b[:min(len(b), 2)]
			hex := ""
			for k, c := range seq {
				if k > 0 {
					hex += " "
				}
				hex += fmt.Sprintf("0x%02x", c)
			}
			return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", hex)
		}
		b = b[n:]
	}
	return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
}

// splitCSV splits a CSV line into fields: quoted parts keep delimiters and
// line ends, the escape character escapes the quote (and itself) inside
// them; an unquoted field spelled as the NULL string is NULL, unless
// FORCE_NOT_NULL; with FORCE_NULL a quoted one is too.
func (d *Decoder) splitCSV(line []byte) error {
	d.fields = d.fields[:0]
	d.scratch = d.scratch[:0]
	q, esc, delim := d.o.Quote, d.o.Escape, d.o.Delimiter
	if d.plain && delim < utf8.RuneSelf && utf8.Valid(line) {
		// No quotes: each field is the bytes between delimiters, a slice
		// of the line (UTF-8 as a whole, so each field is too).
		for col := 0; ; col++ {
			i := bytes.IndexByte(line, delim)
			raw := line
			if i >= 0 {
				raw = line[:i]
			}
			if d.csvNull(col, raw, raw, false) {
				d.fields = append(d.fields, nil)
			} else {
				d.fields = append(d.fields, raw[:len(raw):len(raw)])
			}
			if i < 0 {
				return nil
			}
			line = line[i+1:]
		}
	}
	i := 0
	for col := 0; ; col++ {
		start := len(d.scratch)
		rawStart := i
		sawQuote := false
		inQuote := false
		for ; i < len(line); i++ {
			c := line[i]
			if inQuote {
				if c == esc && i+1 < len(line) && line[i+1] == q || c == esc && esc != q && i+1 < len(line) && line[i+1] == esc {
					d.scratch = append(d.scratch, line[i+1])
					i++
					continue
				}
				if c == q {
					inQuote = false
					continue
				}
				if esc == q {
					// The bytes up to the next quote are data: copied at
					// once (with another escape character, byte by byte).
					n := bytes.IndexByte(line[i:], q)
					if n < 0 {
						n = len(line) - i
					}
					d.scratch = append(d.scratch, line[i:i+n]...)
					i += n - 1
					continue
				}
				d.scratch = append(d.scratch, c)
				continue
			}
			if c == delim {
				break
			}
			if c == q {
				inQuote, sawQuote = true, true
				continue
			}
			d.scratch = append(d.scratch, c)
		}
		raw := line[rawStart:i]
		f := d.scratch[start:len(d.scratch):len(d.scratch)]
		if f == nil {
			f = emptyField // never nil: nil is NULL
		}
		if d.csvNull(col, raw, f, sawQuote) {
			d.fields = append(d.fields, nil)
		} else {
			if !utf8.Valid(f) {
				return badUTF8(f)
			}
			d.fields = append(d.fields, f)
		}
		if i >= len(line) {
			return nil
		}
		i++ // the delimiter
	}
}

// csvNull reports whether CSV field col is NULL: unquoted and spelled as
// the NULL string, unless FORCE_NOT_NULL; with FORCE_NULL also quoted.
// raw is the field as it came, f its value.
func (d *Decoder) csvNull(col int, raw, f []byte, sawQuote bool) bool {
	isNull := !sawQuote && string(raw) == d.o.Null
	if col < len(d.o.ForceNotNull) && d.o.ForceNotNull[col] {
		isNull = false
	}
	if col < len(d.o.ForceNull) && d.o.ForceNull[col] && string(f) == d.o.Null {
		isNull = true
	}
	return isNull
}

// nextBinary reads the binary format: the signature and header once, then
// each tuple (a 16-bit field count, then each field's 32-bit length, -1 for
// NULL, and bytes) once it is whole; a count of -1 ends the data.
func (d *Decoder) nextBinary() ([][]byte, bool, error) {
	b := d.buf[d.off:]
	if d.done {
		if len(b) > 0 {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "received copy data after EOF marker")
		}
		return nil, false, nil
	}
	short := func() ([][]byte, bool, error) {
		if d.eof {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "unexpected EOF in COPY data")
		}
		return nil, false, nil
	}
	if !d.binaryHeader {
		if len(b) < len(BinarySignature) {
			if !bytes.HasPrefix(BinarySignature, b) || d.eof {
				return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "COPY file signature not recognized")
			}
			return nil, false, nil
		}
		if !bytes.Equal(b[:len(BinarySignature)], BinarySignature) {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "COPY file signature not recognized")
		}
		h := b[len(BinarySignature):]
		if len(h) < 4 {
			if d.eof {
				return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (missing flags)")
			}
			return nil, false, nil
		}
		flags := binary.BigEndian.Uint32(h)
		if flags&(1<<16) != 0 {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (WITH OIDS)")
		}
		if flags&^(1<<16)>>16 != 0 {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (unrecognized critical flags)")
		}
		if len(h) < 8 {
			if d.eof {
				return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (missing length)")
			}
			return nil, false, nil
		}
		ext := int64(binary.BigEndian.Uint32(h[4:]))
		if ext > 1<<30 {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (wrong length)")
		}
		if int64(len(h)-8) < ext {
			if d.eof {
				return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "invalid COPY file header (wrong length)")
			}
			return nil, false, nil
		}
		d.off += len(BinarySignature) + 8 + int(ext)
		d.binaryHeader = true
		b = d.buf[d.off:]
	}
	if len(b) == 0 && d.eof {
		// PostgreSQL accepts binary data that ends without the trailer
		// only at a tuple boundary.
		return nil, false, nil
	}
	if len(b) < 2 {
		return short()
	}
	count := int16(binary.BigEndian.Uint16(b))
	d.line++
	if count == -1 {
		d.done = true
		d.off += 2
		if d.off < len(d.buf) {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "received copy data after EOF marker")
		}
		return nil, false, nil
	}
	if int(count) != len(d.names) {
		return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "row field count is %d, expected %d", count, len(d.names))
	}
	// The whole tuple must be buffered before any field is returned.
	p := 2
	d.fields = d.fields[:0]
	for k := 0; k < int(count); k++ {
		if len(b) < p+4 {
			return d.shortTuple()
		}
		n := int32(binary.BigEndian.Uint32(b[p:]))
		p += 4
		if n == -1 {
			d.fields = append(d.fields, nil)
			continue
		}
		if n < -1 {
			return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "invalid field size")
		}
		if len(b) < p+int(n) {
			return d.shortTuple()
		}
		d.fields = append(d.fields, b[p:p+int(n):p+int(n)])
		p += int(n)
	}
	d.off += p
	return d.fields, true, nil
}

// shortTuple: the tuple being read is not all buffered. It is read again
// from its start when more input comes; at the end of input it is cut.
func (d *Decoder) shortTuple() ([][]byte, bool, error) {
	if d.eof {
		return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "unexpected EOF in COPY data")
	}
	d.line--
	return nil, false, nil
}

var emptyField = []byte{}
