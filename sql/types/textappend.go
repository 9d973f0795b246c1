package types

import "strconv"

const hexDigits = "0123456789abcdef"

// AppendText appends v's text form (Text) to buf. The server encodes
// result rows with it straight into its output buffer: the common
// families (booleans, integers, strings, bytes) append without building a
// string first, the others append what Text returns.
func (v Value) AppendText(buf []byte) []byte {
	switch v.fam {
	case Bool:
		if v.i != 0 {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case Int8, Int16, Int32, Int64:
		return strconv.AppendInt(buf, v.i, 10)
	case Uint8, Uint16, Uint32, Uint64:
		return strconv.AppendUint(buf, uint64(v.i), 10)
	case Utf8, Json, Unknown, Enum:
		return append(buf, v.s...)
	case String:
		buf = append(buf, '\\', 'x')
		for i := 0; i < len(v.s); i++ {
			buf = append(buf, hexDigits[v.s[i]>>4], hexDigits[v.s[i]&0x0f])
		}
		return buf
	}
	return append(buf, v.Text()...)
}
