package txnmode

import "testing"

func TestParseIsolation(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Isolation
		ok   bool
	}{
		{"read committed", ReadCommitted, true},
		{"READ  Committed", ReadCommitted, true},
		{" read uncommitted ", ReadCommitted, true},
		{"repeatable read", RepeatableRead, true},
		{"Repeatable\tRead", RepeatableRead, true},
		{"serializable", Serializable, true},
		{"SERIALIZABLE", Serializable, true},
		{"snapshot", 0, false},
		{"", 0, false},
	} {
		got, ok := ParseIsolation(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseIsolation(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// BenchmarkParseIsolation reads the canonical spelling, as every statement
// does through sessionvars.TxnMode: no allocation.
func BenchmarkParseIsolation(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ParseIsolation("read committed"); !ok {
			b.Fatal("not a level")
		}
	}
}
