package server

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql"
	"github.com/pivotdb/pivotdb/sql/types"
)

// The messages the connection encodes itself are byte for byte what
// pgproto3 would send.
func TestDirectEncodingMatchesPgproto3(t *testing.T) {
	want := func(msg pgproto3.BackendMessage) []byte {
		b, err := msg.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tag := range []string{"SELECT 1", "INSERT 0 1000", ""} {
		c := &conn{}
		c.sendCommandComplete(tag)
		if w := want(&pgproto3.CommandComplete{CommandTag: []byte(tag)}); !bytes.Equal(c.wbuf, w) {
			t.Errorf("CommandComplete %q: % x, want % x", tag, c.wbuf, w)
		}
	}

	cols := []sql.ResultColumn{
		{Name: "k", Type: types.Type{Family: types.Int64}, TableOID: 7, ColumnNumber: 1},
		{Name: "v", Type: types.Type{Family: types.Utf8, Width: 10}, TableOID: 7, ColumnNumber: 2},
	}
	var cache describeCache
	describe := func(cols []sql.ResultColumn, formats []int16) {
		t.Helper()
		c := &conn{}
		c.describeColumns(&cache, cols, formats)
		if w := want(rowDescription(cols, formats)); !bytes.Equal(c.wbuf, w) {
			t.Fatalf("RowDescription of %v in %v: % x, want % x", cols, formats, c.wbuf, w)
		}
	}
	describe(cols, nil)
	describe(cols, nil) // from the cache
	describe(cols, []int16{formatBinary, formatText})
	describe(cols, []int16{formatText, formatBinary})
	describe(cols, []int16{formatText, formatBinary})
	// The statement bound again after a schema change: a new slice.
	renamed := []sql.ResultColumn{cols[0], cols[1]}
	renamed[1].Name = "w"
	describe(renamed, []int16{formatText, formatBinary})
	describe(cols[:1], []int16{formatText})
	c := &conn{}
	c.describeColumns(&cache, nil, nil)
	if w := want(&pgproto3.NoData{}); !bytes.Equal(c.wbuf, w) {
		t.Fatalf("NoData: % x", c.wbuf)
	}
}

// BenchmarkDescribe: a Describe of a two-column portal, as libpq sends
// with every prepared execution. "build" is what each Describe cost
// before (the message built and encoded); "cached" is describeColumns.
func BenchmarkDescribe(b *testing.B) {
	cols := []sql.ResultColumn{
		{Name: "k", Type: types.Type{Family: types.Int64}, TableOID: 7, ColumnNumber: 1},
		{Name: "v", Type: types.Type{Family: types.Utf8}, TableOID: 7, ColumnNumber: 2},
	}
	formats := []int16{formatText, formatText}
	c := &conn{}
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			c.wbuf = c.wbuf[:0]
			c.send(rowDescription(cols, formats))
		}
	})
	b.Run("cached", func(b *testing.B) {
		var cache describeCache
		b.ReportAllocs()
		for range b.N {
			c.wbuf = c.wbuf[:0]
			c.describeColumns(&cache, cols, formats)
		}
	})
}

// BenchmarkCommandComplete: "message" is c.send of pgproto3's
// CommandComplete, as before; "direct" is sendCommandComplete.
func BenchmarkCommandComplete(b *testing.B) {
	c := &conn{}
	tag := "SELECT 1"
	b.Run("message", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			c.wbuf = c.wbuf[:0]
			c.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			c.wbuf = c.wbuf[:0]
			c.sendCommandComplete(tag)
		}
	})
}
