package server

import (
	"net"
	"syscall"
)

// clientGone tells whether the peer of nc has closed its end: a peek that
// does not wait reads end of file (or the connection was reset). Data the
// client sent ahead (a pipeline) leaves the socket alive. It uses Control,
// not Read, so that it never waits for the descriptor's read lock, which
// the connection's goroutine holds while it waits for a message.
func clientGone(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	var buf [1]byte
	rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil && n == 0:
			gone = true
		case err == syscall.ECONNRESET || err == syscall.EPIPE:
			gone = true
		}
	})
	return gone
}
