package server

import (
	"context"
	"time"
)

// A client that goes away while its statement runs cancels the statement
// (PostgreSQL's client_connection_check_interval): nothing reads the
// socket while the connection's goroutine runs a statement, so a watcher
// looks at the sockets of busy connections every ClientCheckInterval
// without consuming what they hold (clientGone peeks), and cancels the
// connection's context of one whose peer has closed.

// DefaultClientCheckInterval is Config.ClientCheckInterval's default.
const DefaultClientCheckInterval = time.Second

func (s *Server) watchClients(ctx context.Context) {
	t := time.NewTicker(s.cfg.ClientCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, c := range s.snapshot() {
			c.mu.Lock()
			busy := c.running != nil
			c.mu.Unlock()
			if busy && clientGone(c.raw) {
				c.log.Info("server: client closed the connection while a statement ran; cancelling it")
				c.cancel(errClientGone)
			}
		}
	}
}
