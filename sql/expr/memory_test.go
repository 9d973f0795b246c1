package expr

import (
	"strconv"
	"strings"
	"testing"

	"github.com/pivotdb/pivotdb/sql/memory"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// TestBuilderReservesMemory checks that IN lists (also of rows) and long
// constants are reserved in Builder.Mem as they are built, and that a
// statement over its budget gets 53200 instead of a tree.
func TestBuilderReservesMemory(t *testing.T) {
	items := make([]string, 1000)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	pairs := make([]string, 500)
	for i := range pairs {
		pairs[i] = "(" + strconv.Itoa(i) + ", 1)"
	}
	long := "'" + strings.Repeat("x", 100<<10) + "'"
	p := newParser()
	for _, tc := range []struct {
		sql  string
		want int64 // bytes reserved
	}{
		{"i IN (" + strings.Join(items, ",") + ")", 1000 * memory.InItemBytes},
		{"(i, i32) IN (" + strings.Join(pairs, ",") + ")", 1000 * memory.InItemBytes},
		{"s = " + long, memory.ConstBytesPerByte * (100 << 10)},
		{"s = 'short'", 0},
	} {
		n, err := parseExpr(p, tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		mon := memory.NewMonitor("--max-memory", 0)
		mon.ReserveChunk = 0
		b := newTestBuilder()
		b.Mem = mon.NewAccount("statement", 0)
		if _, err := b.Build(n); err != nil {
			t.Fatalf("%.40s: %v", tc.sql, err)
		}
		if got := b.Mem.Used(); got != tc.want {
			t.Errorf("%.40s: reserved %d, want %d", tc.sql, got, tc.want)
		}
		if tc.want == 0 {
			continue
		}
		b = newTestBuilder()
		b.Mem = mon.NewAccount("statement", tc.want-1)
		if _, err := b.Build(n); sqlerr.Code(err) != sqlerr.OutOfMemory {
			t.Errorf("%.40s over its budget: %v, want 53200", tc.sql, err)
		}
	}
}
