package types

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// Uuid values hold their 16 bytes in the string field. They order as
// PostgreSQL's uuid does, byte by byte, which is also the order of their
// key encoding; the text form is 8-4-4-4-12 lower-case hex digits.

// NewUuid returns a Uuid value of 16 bytes.
func NewUuid(b [16]byte) Value { return Value{fam: Uuid, s: string(b[:])} }

// UuidFromBytes returns a Uuid value from its 16 bytes (false for another
// length: stored data or a client's binary parameter is bad).
func UuidFromBytes(b []byte) (Value, bool) {
	if len(b) != 16 {
		return Value{}, false
	}
	return Value{fam: Uuid, s: string(b)}, true
}

// RandomUuid returns a version 4 (random) UUID, as gen_random_uuid().
func RandomUuid() Value {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("types: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return NewUuid(b)
}

// formatUuid renders 16 bytes as 8-4-4-4-12 hex digits.
func formatUuid(s string) string {
	h := hex.EncodeToString([]byte(s))
	if len(h) != 32 {
		return h
	}
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// parseUuid reads PostgreSQL's uuid input forms: 32 hex digits, optionally
// in braces, with a hyphen after any group of four digits
// ("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}").
func parseUuid(s string) (Value, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") {
		if !strings.HasSuffix(t, "}") {
			return Value{}, invalidInput("uuid", s)
		}
		t = t[1 : len(t)-1]
	}
	var digits []byte
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '-' {
			// A hyphen may follow a group of four digits, not start or
			// end the value, nor follow another hyphen.
			if len(digits) == 0 || len(digits)%4 != 0 || i == len(t)-1 || t[i-1] == '-' {
				return Value{}, invalidInput("uuid", s)
			}
			continue
		}
		digits = append(digits, c)
	}
	if len(digits) != 32 {
		return Value{}, invalidInput("uuid", s)
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], digits); err != nil {
		return Value{}, invalidInput("uuid", s)
	}
	return NewUuid(b), nil
}

// quoteUuid is Value.String for a Uuid.
func quoteUuid(s string) string { return "uuid" + strconv.Quote(formatUuid(s)) }
