package server

import (
	"context"
	"testing"
)

// BenchmarkStatementContext: what each statement and each Bind pays for
// its cancellable context. "derive" is what they did before (a new child of
// the connection's context and its cancel, which register with and
// unregister from the parent); "reuse" is statementContext with the spare
// context of the statement before it.
func BenchmarkStatementContext(b *testing.B) {
	c := &conn{}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	defer c.cancel(nil)
	b.Run("derive", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			ctx, cancel := context.WithCancelCause(c.ctx)
			c.setRunning(cancel)
			_ = ctx
			c.setRunning(nil)
			cancel(nil)
		}
	})
	b.Run("reuse", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, done := c.statementContext()
			done()
		}
	})
}
