package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// acceptBytes runs acceptProxy over one end of a loopback TCP pair whose
// other end wrote in.
func acceptBytes(t *testing.T, in []byte, key []byte) (*bufConn, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			return
		}
		c.Write(in)
		time.Sleep(200 * time.Millisecond)
		c.Close()
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return acceptProxy(c, 5*time.Second, func() ([]byte, bool) { return key, key != nil })
}

// TestProxyHeader: a signed header names the client and leaves the bytes
// after it; a connection without one passes unchanged; a header signed
// with another key, or when the key is unknown, is refused.
func TestProxyHeader(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	startup := []byte{0, 0, 0, 8, 4, 210, 22, 47} // SSLRequest
	for _, v6 := range []bool{false, true} {
		src := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 40001}
		dst := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5441}
		if v6 {
			src.IP = net.ParseIP("2001:db8::5")
		}
		c, err := acceptBytes(t, append(appendProxyHeader(nil, src, dst, key), startup...), key)
		if err != nil {
			t.Fatal(err)
		}
		got := c.RemoteAddr().(*net.TCPAddr)
		if !got.IP.Equal(src.IP) || got.Port != src.Port {
			t.Fatalf("remote %s, want %s", got, src)
		}
		rest := make([]byte, len(startup))
		if _, err := io.ReadFull(c, rest); err != nil || !bytes.Equal(rest, startup) {
			t.Fatalf("after the header: %v %v", rest, err)
		}
	}
	c, err := acceptBytes(t, startup, key)
	if err != nil {
		t.Fatal(err)
	}
	if first, ok, err := readFirstMessage(c, time.Second); err != nil || !ok || !bytes.Equal(first, startup) {
		t.Fatalf("first message %v %v %v", first, ok, err)
	}
	if _, ok := c.RemoteAddr().(*net.TCPAddr); !ok || c.remote != nil {
		t.Fatal("a connection without a header got another address")
	}
	src := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 1}
	forged := appendProxyHeader(nil, src, src, bytes.Repeat([]byte{8}, 32))
	if _, err := acceptBytes(t, forged, key); !errors.Is(err, errProxyHeader) {
		t.Fatalf("forged header: %v", err)
	}
	if _, err := acceptBytes(t, appendProxyHeader(nil, src, src, key), nil); !errors.Is(err, errProxyHeader) {
		t.Fatalf("header with no key known: %v", err)
	}
	bad := appendProxyHeader(nil, src, src, key)
	bad[12] = 0x20 // LOCAL, not PROXY
	if _, err := acceptBytes(t, bad, key); !errors.Is(err, errProxyHeader) {
		t.Fatalf("LOCAL header: %v", err)
	}
}
