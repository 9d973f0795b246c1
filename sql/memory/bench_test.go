package memory

import "testing"

// BenchmarkStatementAccount is the memory budget's cost per statement:
// open an account, reserve a parse estimate and some rows, close it.
func BenchmarkStatementAccount(b *testing.B) {
	m := NewMonitor("--max-memory", 1<<30)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a := m.NewAccount("statement", 1<<28)
			_ = a.Grow(ParseEstimate("SELECT v FROM t WHERE k = 1"), "parsing")
			for i := 0; i < 16; i++ {
				_ = a.Grow(100, "rows")
			}
			a.Close()
		}
	})
}
