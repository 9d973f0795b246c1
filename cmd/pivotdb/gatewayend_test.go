package main

import (
	"bufio"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

func startupMsg() []byte {
	b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
		Parameters: map[string]string{"user": "u"}}).Encode(nil)
	return b
}

func request(code uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), code)
}

// serverMessages is what a serving node answers a startup with, then a
// query's result.
func serverMessages(t *testing.T) []byte {
	var out []byte
	for _, m := range []pgproto3.BackendMessage{
		&pgproto3.AuthenticationOk{}, &pgproto3.ParameterStatus{Name: "a", Value: "b"},
		&pgproto3.ReadyForQuery{TxStatus: 'I'},
		&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("x")}}},
		&pgproto3.DataRow{Values: [][]byte{make([]byte, 70000)}},
		&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")}, &pgproto3.ReadyForQuery{TxStatus: 'I'},
	} {
		var err error
		if out, err = m.Encode(out); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestFrameTracker feeds a serving node's answers in random pieces: at the
// end of each whole message the tracker is at a boundary, inside one it is
// not; a TLS answer or GSS encryption makes the stream opaque.
func TestFrameTracker(t *testing.T) {
	msgs := serverMessages(t)
	var ends []int // offsets where a message ends
	for off := 0; off < len(msgs); {
		off += 1 + int(binary.BigEndian.Uint32(msgs[off+1:]))
		ends = append(ends, off)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		first  []byte
		prefix []byte
	}{
		{startupMsg(), nil},
		{request(sslRequestCode), []byte("N")},
	} {
		for round := 0; round < 50; round++ {
			f := newFrameTracker(tc.first)
			stream := append(append([]byte(nil), tc.prefix...), msgs...)
			if f.atBoundary() == (len(tc.prefix) > 0) {
				t.Fatalf("before any answer: boundary %v", f.atBoundary())
			}
			for off := 0; off < len(stream); {
				n := 1 + r.IntN(20)
				if r.IntN(4) == 0 {
					n = 1 + r.IntN(80000)
				}
				n = min(n, len(stream)-off)
				f.advance(stream[off : off+n])
				off += n
				at := off - len(tc.prefix)
				want := at == 0 // just after the answer to an SSLRequest
				for _, e := range ends {
					want = want || e == at
				}
				if f.atBoundary() != want {
					t.Fatalf("first %x, after %d bytes: boundary %v, want %v", tc.first, at, f.atBoundary(), want)
				}
			}
		}
	}
	f := newFrameTracker(request(sslRequestCode))
	f.advance([]byte("S\x16\x03\x01"))
	if f.atBoundary() {
		t.Fatal("a TLS stream has boundaries")
	}
	f = newFrameTracker(request(gssEncRequestCode))
	if f.advance([]byte("N")); f.atBoundary() {
		t.Fatal("a GSS negotiation is followed")
	}
	f = newFrameTracker(startupMsg())
	if f.advance([]byte{'E', 0, 0, 0, 2}); f.atBoundary() {
		t.Fatal("a length below 4 is taken for a message")
	}
}

// pipeConns returns a forwarded connection over pipes: the client's end and
// the serving node's end.
func pipeConns(first []byte) (*forwardedConn, net.Conn, net.Conn) {
	client, gwClient := net.Pipe()
	gwServer, server := net.Pipe()
	f := &forwardedConn{client: &bufConn{Conn: gwClient, br: bufio.NewReader(gwClient)},
		server: &bufConn{Conn: gwServer, br: bufio.NewReader(gwServer)}, node: 1, epoch: 3, frames: newFrameTracker(first)}
	return f, client, server
}

// TestForwardedConnEnd: a connection ended between the serving node's
// messages gets FATAL 57P01 and is closed; one ended in the middle of a
// message is closed without a word (the client reports a broken
// connection), never with an error spliced into a message.
func TestForwardedConnEnd(t *testing.T) {
	msgs := serverMessages(t)
	for _, cut := range []int{len(msgs), len(msgs) - 3} {
		f, client, server := pipeConns(startupMsg())
		done := make(chan struct{})
		go func() { f.run(); close(done) }()
		go server.Write(msgs[:cut])
		got := make([]byte, cut)
		client.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(client, got); err != nil {
			t.Fatal(err)
		}
		go f.end(2)
		rest, err := io.ReadAll(client)
		if err != nil {
			t.Fatal(err)
		}
		<-done
		if cut < len(msgs) {
			if len(rest) != 0 {
				t.Fatalf("mid-message: %d more bytes sent", len(rest))
			}
			continue
		}
		fe := pgproto3.NewFrontend(bufioReader(rest), io.Discard)
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		e, ok := m.(*pgproto3.ErrorResponse)
		if !ok || e.Code != "57P01" || e.Severity != "FATAL" {
			t.Fatalf("got %#v, want FATAL 57P01", m)
		}
		if want := "terminating connection: node 1, which served this connection, stopped answering, and node 2 serves SQL now"; e.Message != want {
			t.Fatalf("message %q", e.Message)
		}
	}
}

func bufioReader(b []byte) io.Reader { return &sliceReader{b} }

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// The gateway ends only the connections that went to another node under
// an earlier epoch.
func TestForwardingsSuperseded(t *testing.T) {
	var s forwardings
	a := &forwardedConn{node: 1, epoch: 3}
	b := &forwardedConn{node: 2, epoch: 4}
	s.add(a)
	s.add(b)
	if got := s.superseded(1, 3); len(got) != 0 {
		t.Fatalf("same epoch: %d ended", len(got))
	}
	if got := s.superseded(2, 4); len(got) != 1 || got[0] != a {
		t.Fatalf("node 2 at epoch 4: %v", got)
	}
	if got := s.superseded(1, 5); len(got) != 1 || got[0] != b {
		t.Fatalf("node 1 again at epoch 5: %v", got)
	}
	s.remove(a)
	if got := s.superseded(3, 6); len(got) != 1 || got[0] != b {
		t.Fatalf("after removing a: %v", got)
	}
}

// A serving node's silence counts from when it was last live, or from when
// the gateway first watched it (a node just watched gets the whole bound);
// a node no longer watched starts over.
func TestSilence(t *testing.T) {
	live := map[uint64]bool{1: true}
	s := silence{live: func(n uint64) bool { return live[n] }}
	t0 := time.Unix(1000, 0)
	if d := s.silentFor(1, t0); d != 0 {
		t.Fatalf("live node: silent %s", d)
	}
	live[1] = false
	if d := s.silentFor(1, t0.Add(3*time.Second)); d != 3*time.Second {
		t.Fatalf("silent %s, want 3s", d)
	}
	if d := s.silentFor(2, t0.Add(3*time.Second)); d != 0 {
		t.Fatalf("a node first watched: silent %s", d)
	}
	if d := s.silentFor(2, t0.Add(9*time.Second)); d != 6*time.Second {
		t.Fatalf("silent %s, want 6s", d)
	}
	s.keepOnly([]uint64{2})
	if d := s.silentFor(1, t0.Add(20*time.Second)); d != 0 {
		t.Fatalf("a node watched again: silent %s", d)
	}
	live[1] = true
	if d := s.silentFor(1, t0.Add(30*time.Second)); d != 0 {
		t.Fatalf("live again: silent %s", d)
	}
}

// endSilent ends a forwarded connection between messages with FATAL 08006
// naming the silent node.
func TestForwardedConnEndSilent(t *testing.T) {
	msgs := serverMessages(t)
	f, client, server := pipeConns(startupMsg())
	done := make(chan struct{})
	go func() { f.run(); close(done) }()
	go server.Write(msgs)
	client.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(client, make([]byte, len(msgs))); err != nil {
		t.Fatal(err)
	}
	go f.endSilent(10400 * time.Millisecond)
	rest, err := io.ReadAll(client)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	m, err := pgproto3.NewFrontend(bufioReader(rest), io.Discard).Receive()
	if err != nil {
		t.Fatal(err)
	}
	e, ok := m.(*pgproto3.ErrorResponse)
	if !ok || e.Code != "08006" || e.Severity != "FATAL" {
		t.Fatalf("got %#v, want FATAL 08006", m)
	}
	if want := "terminating connection: node 1, which serves this connection, stopped answering, and no other node can take over"; e.Message != want {
		t.Fatalf("message %q", e.Message)
	}
	if !strings.Contains(e.Detail, "liveness pings for 10s") {
		t.Fatalf("detail %q", e.Detail)
	}
}
