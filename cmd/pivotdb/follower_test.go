package main

import (
	"encoding/binary"
	"testing"
)

func startupPacket(params ...string) []byte {
	b := []byte{0, 0, 0, 0}
	b = binary.BigEndian.AppendUint32(b, 3<<16)
	for _, p := range params {
		b = append(append(b, p...), 0)
	}
	b = append(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

// TestWantsFollowerRead: the gateway serves a connection locally only when
// its startup packet asks for the stale read-only mode, directly or in
// options, with any spelling of "on" PostgreSQL accepts.
func TestWantsFollowerRead(t *testing.T) {
	for _, c := range []struct {
		msg  []byte
		want bool
	}{
		{startupPacket("user", "u", "database", "d"), false},
		{startupPacket("user", "u", "stale_read_only", "on"), true},
		{startupPacket("user", "u", "STALE_READ_ONLY", "true"), true},
		{startupPacket("user", "u", "stale_read_only", "off"), false},
		{startupPacket("user", "u", "stale_read_only", "maybe"), false},
		{startupPacket("user", "u", "options", "-c stale_read_only=on"), true},
		{startupPacket("user", "u", "options", "-c statement_timeout=5 --stale_read_only=yes"), true},
		{startupPacket("user", "u", "options", "-c stale_read_only=off"), false},
		{startupPacket("user", "u", "application_name", "stale_read_only", "x", "on"), false},
		// An SSLRequest: the parameters come later, encrypted.
		{[]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}, false},
		{[]byte{0, 0, 0}, false},
	} {
		if got := wantsFollowerRead(c.msg); got != c.want {
			t.Errorf("%q: %v, want %v", c.msg, got, c.want)
		}
	}
}
