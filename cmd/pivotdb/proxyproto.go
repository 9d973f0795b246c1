package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// The client's address over the internal hop (issue 17). A node that
// forwards a SQL connection first sends the serving node a PROXY protocol
// version 2 header (HAProxy's binary format) with the client's address and
// port and the address it connected to, plus a TLV of PivotDB's own
// (type 0xE0, the first custom type) holding an HMAC-SHA256 of everything
// before it under the cluster's SQL forwarding key (cluster/shardrepl's
// ForwardKey, which only the members know). The serving node's gateway
// strips the header and hands its server a connection whose RemoteAddr is
// the client's, so pg_stat_activity.client_addr, the authentication
// throttle and the logs name the real client. A header that is malformed
// or not signed with the key ends the connection: a client cannot claim
// another address. A PostgreSQL client's first bytes are a message length
// (0x00 first), never the header's 0x0D, so the two cannot be confused.

var proxySignature = []byte{0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A}

const (
	proxyVersionCmd = 0x21 // version 2, PROXY
	proxyTCP4       = 0x11
	proxyTCP6       = 0x21
	proxyTLVSig     = 0xE0
	proxyMaxLen     = 512
)

// appendProxyHeader appends the signed header for a connection from src
// to dst.
func appendProxyHeader(b []byte, src, dst *net.TCPAddr, key []byte) []byte {
	start := len(b)
	b = append(b, proxySignature...)
	b = append(b, proxyVersionCmd)
	s4, d4 := src.IP.To4(), dst.IP.To4()
	var addrs []byte
	if s4 != nil && d4 != nil {
		b = append(b, proxyTCP4)
		addrs = append(append(addrs, s4...), d4...)
	} else {
		b = append(b, proxyTCP6)
		addrs = append(append(addrs, src.IP.To16()...), dst.IP.To16()...)
	}
	addrs = binary.BigEndian.AppendUint16(addrs, uint16(src.Port))
	addrs = binary.BigEndian.AppendUint16(addrs, uint16(dst.Port))
	b = binary.BigEndian.AppendUint16(b, uint16(len(addrs)+3+sha256.Size))
	b = append(b, addrs...)
	mac := hmac.New(sha256.New, key)
	mac.Write(b[start:])
	b = append(b, proxyTLVSig)
	b = binary.BigEndian.AppendUint16(b, sha256.Size)
	return mac.Sum(b)
}

// bufConn is a connection read through a buffer (what the gateway peeked
// or replays stays in it), with the client's address when a PROXY header
// named it.
type bufConn struct {
	net.Conn
	pre    []byte // read again before br (a message the gateway read)
	br     *bufio.Reader
	remote net.Addr
}

func (c *bufConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.br.Read(p)
}

// pending takes what is buffered (pre and br's buffer); the connection's
// later bytes are the raw Conn's.
func (c *bufConn) pending() []byte {
	out := append([]byte(nil), c.pre...)
	c.pre = nil
	if n := c.br.Buffered(); n > 0 {
		b, _ := c.br.Peek(n)
		out = append(out, b...)
		c.br.Discard(n)
	}
	return out
}

// SyscallConn gives the socket under the buffer, so that the server can
// peek whether the client went away while a statement runs
// (server/clientcheck_linux.go: TestDisconnectedClientCancelsStatement,
// which failed once serve's one node went through the gateway). What the
// buffer holds is not lost by a peek at the socket.
func (c *bufConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("the connection has no socket")
}

func (c *bufConn) RemoteAddr() net.Addr {
	if c.remote != nil {
		return c.remote
	}
	return c.Conn.RemoteAddr()
}

// errProxyHeader is a PROXY header the gateway refuses.
var errProxyHeader = errors.New("invalid PROXY protocol header")

// acceptProxy reads nc's PROXY header, if it starts with one, within
// timeout: key returns the forwarding key to check its signature with.
// It returns the connection to go on with (its reads go through the
// buffer; its RemoteAddr is the header's source).
func acceptProxy(nc net.Conn, timeout time.Duration, key func() ([]byte, bool)) (*bufConn, error) {
	br := bufio.NewReaderSize(nc, 1024)
	c := &bufConn{Conn: nc, br: br}
	nc.SetReadDeadline(time.Now().Add(timeout))
	defer nc.SetReadDeadline(time.Time{})
	first, err := br.Peek(1)
	if err != nil {
		return nil, err
	}
	if first[0] != proxySignature[0] {
		return c, nil
	}
	hdr, err := br.Peek(16)
	if err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr[14:]))
	if !bytes.Equal(hdr[:12], proxySignature) || hdr[12] != proxyVersionCmd || n > proxyMaxLen {
		return nil, errProxyHeader
	}
	full, err := br.Peek(16 + n)
	if err != nil {
		return nil, err
	}
	alen := 12
	if hdr[13] == proxyTCP6 {
		alen = 36
	} else if hdr[13] != proxyTCP4 {
		return nil, errProxyHeader
	}
	if n != alen+3+sha256.Size {
		return nil, errProxyHeader
	}
	signed, tlv := full[:16+alen], full[16+alen:]
	if tlv[0] != proxyTLVSig || int(binary.BigEndian.Uint16(tlv[1:])) != sha256.Size {
		return nil, errProxyHeader
	}
	k, ok := key()
	if !ok {
		return nil, fmt.Errorf("%w: this node does not know the cluster's forwarding key yet", errProxyHeader)
	}
	mac := hmac.New(sha256.New, k)
	mac.Write(signed)
	if !hmac.Equal(mac.Sum(nil), tlv[3:]) {
		return nil, fmt.Errorf("%w: bad signature", errProxyHeader)
	}
	a := signed[16:]
	ipLen := (alen - 4) / 2
	c.remote = &net.TCPAddr{IP: net.IP(bytes.Clone(a[:ipLen])), Port: int(binary.BigEndian.Uint16(a[2*ipLen:]))}
	if _, err := br.Discard(16 + n); err != nil {
		return nil, err
	}
	return c, nil
}

// PostgreSQL's startup-phase request codes and its limit on a startup
// packet's length (MAX_STARTUP_PACKET_LENGTH).
const (
	cancelRequestCode  = 80877102
	maxStartupPacket   = 10000
	startupMessageMinL = 8
)

// readFirstMessage reads the client's first message (SSLRequest,
// GSSENCRequest, CancelRequest or StartupMessage) within timeout. ok is
// false when its length is not a startup message's: the bytes read are
// returned and the rest passes through unread.
func readFirstMessage(c net.Conn, timeout time.Duration) (msg []byte, ok bool, err error) {
	c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	var l [4]byte
	if _, err := io.ReadFull(c, l[:]); err != nil {
		return nil, false, err
	}
	n := int(binary.BigEndian.Uint32(l[:]))
	if n < startupMessageMinL || n > maxStartupPacket {
		return l[:], false, nil
	}
	msg = make([]byte, n)
	copy(msg, l[:])
	if _, err := io.ReadFull(c, msg[4:]); err != nil {
		return nil, false, err
	}
	return msg, true, nil
}

// isCancelRequest reports whether msg is a CancelRequest, which the server
// never answers.
func isCancelRequest(msg []byte) bool {
	return len(msg) == 16 && binary.BigEndian.Uint32(msg[4:]) == cancelRequestCode
}
