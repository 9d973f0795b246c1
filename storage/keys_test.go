package storage

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte{0x01}, []byte{0x02}},
		{[]byte{0x01, 0xFF}, []byte{0x02}},
		{[]byte{0x01, 0xFE, 0xFF, 0xFF}, []byte{0x01, 0xFF}},
		{[]byte{0xFF, 0xFF}, nil},
		{nil, nil},
	} {
		in := bytes.Clone(tc.in)
		got := PrefixEnd(in)
		if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("PrefixEnd(%x) = %x, want %x", tc.in, got, tc.want)
		}
		if !bytes.Equal(in, tc.in) {
			t.Errorf("PrefixEnd modified its argument")
		}
	}
}

// TestKeyLayout checks the picture in keys.go: the system area comes before
// every table, tables follow one another in id order, and a table's span
// holds exactly its own rows.
//
//	/System/...  <  /Table/0/...  <  /Table/1/...  <  ...  <  /Table/MaxUint64/...
func TestKeyLayout(t *testing.T) {
	ids := []uint64{0, 1, 255, 256, 1 << 40, math.MaxUint64}
	sys := SystemSpan()
	for i, id := range ids {
		span := TableSpan(id)
		row := AppendString(AppendInt64(TablePrefix(id), -1), "x")
		if !span.Contains(row) || !span.Contains(TablePrefix(id)) || !TablesSpan().Contains(row) {
			t.Errorf("table %d: span %s does not hold row %s", id, span, FormatKey(row))
		}
		if sys.Overlaps(span) || bytes.Compare(sys.End, span.Start) > 0 {
			t.Errorf("table %d overlaps the system area", id)
		}
		if i > 0 {
			prev := TableSpan(ids[i-1])
			if prev.Overlaps(span) || bytes.Compare(prev.End, span.Start) > 0 {
				t.Errorf("tables %d and %d: %s and %s are out of order", ids[i-1], id, prev, span)
			}
		}
		gotID, rest, err := DecodeTablePrefix(row)
		if err != nil || gotID != id || !bytes.Equal(rest, row[tablePrefixLen:]) {
			t.Errorf("DecodeTablePrefix(%s) = %d, %x, %v", FormatKey(row), gotID, rest, err)
		}
	}
	if _, _, err := DecodeTablePrefix([]byte{SystemPrefix, 1}); !errors.Is(err, ErrCorruptEncoding) {
		t.Errorf("DecodeTablePrefix of a system key: %v", err)
	}

	for _, tc := range []struct {
		key  []byte
		want string
	}{
		{nil, "/Min"},
		{[]byte{SystemPrefix, 0xAB}, "/System/ab"},
		{AppendNull(TablePrefix(42)), "/Table/42/00"},
		{[]byte{0x02, 0x00}, "0x0200"},
		{[]byte{0x07}, "0x07"},
	} {
		if got := FormatKey(tc.key); got != tc.want {
			t.Errorf("FormatKey(%x) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

func TestSpan(t *testing.T) {
	s := func(start, end string) Span {
		sp := Span{Start: []byte(start)}
		if end != "∞" {
			sp.End = []byte(end)
		}
		return sp
	}
	for _, tc := range []struct {
		a, b      Span
		intersect Span
		overlaps  bool
	}{
		{s("b", "d"), s("c", "e"), s("c", "d"), true},
		{s("b", "d"), s("d", "e"), s("d", "d"), false},
		{s("b", "∞"), s("a", "c"), s("b", "c"), true},
		{s("b", "∞"), s("c", "∞"), s("c", "∞"), true},
		{s("", "∞"), s("x", "y"), s("x", "y"), true},
		{s("b", "b"), s("a", "z"), s("b", "b"), false},
	} {
		for _, pair := range [][2]Span{{tc.a, tc.b}, {tc.b, tc.a}} {
			if got := pair[0].Intersect(pair[1]); !got.Equal(tc.intersect) {
				t.Errorf("%s ∩ %s = %s, want %s", pair[0], pair[1], got, tc.intersect)
			}
			if got := pair[0].Overlaps(pair[1]); got != tc.overlaps {
				t.Errorf("%s overlaps %s = %v", pair[0], pair[1], got)
			}
		}
	}
	sp := s("b", "d")
	for key, want := range map[string]bool{"a": false, "b": true, "c\xff": true, "d": false} {
		if got := sp.Contains([]byte(key)); got != want {
			t.Errorf("%s contains %q = %v", sp, key, got)
		}
	}
	if !s("b", "∞").Contains([]byte("\xff\xff")) || s("b", "∞").Empty() || !s("c", "b").Empty() {
		t.Error("unbounded or inverted span misbehaves")
	}
	if got, want := TableSpan(7).String(), "[/Table/7/ .. /Table/8/)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
