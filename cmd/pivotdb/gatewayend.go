package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Forwarded connections whose serving node stops answering (issue 17). A
// forwarding node passes a connection on byte for byte, so a serving node
// that stops (SIGSTOP, a hung machine) after it answered would hold the
// client until it continues or dies. Once the serving role has moved to
// another node (a later serving epoch names another node: the stopped
// node's replica lost the shard group's leadership, and the new leader's
// node claimed), the old node can commit nothing more (its writes are
// fenced by the epoch), so the gateway ends its forwarded connections
// itself: with FATAL 57P01 when what the serving node sent so far ends on a
// message boundary (the client is between messages, so the error is read
// as the server's), else by closing the connection, which the client
// reports as a broken connection (08006). The client connects again, to
// any node, and reaches the new serving node.
//
// A serving node that stops while the other nodes have no quorum without
// it (one of three is down already) keeps the role: no takeover ends its
// connections. The gateway then ends them itself once that node has not
// answered its pings (cluster/placement's liveness) for silentServingEnd
// past the live window: FATAL 08006 (connection failure) at a boundary.
//
// The serving node's side of a forwarded connection is therefore read
// through a frameTracker (the client's side still goes to the serving node
// by splice): one pass over each chunk's message headers.

// endPollInterval is how often the gateway checks who serves.
const endPollInterval = 200 * time.Millisecond

// frameTracker follows the message boundaries of what a serving node sends
// a client: PostgreSQL's messages, a type byte and a 4-byte length, after
// the one-byte answer to an SSLRequest. A connection that switches to TLS
// (or asked for GSS encryption first) is opaque: no boundary is known.
type frameTracker struct {
	opaque bool    // encrypted or not understood: boundaries unknown
	single bool    // the next byte is the one-byte answer to an SSLRequest
	hdr    [5]byte // the current message's header, hdrN bytes of it so far
	hdrN   int
	body   int // bytes of the current message's body still to come
}

const (
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104
)

// newFrameTracker returns the tracker of the answers to a connection whose
// first message (the client's) is first.
func newFrameTracker(first []byte) frameTracker {
	if len(first) == 8 {
		switch binary.BigEndian.Uint32(first[4:]) {
		case sslRequestCode:
			return frameTracker{single: true}
		case gssEncRequestCode:
			// A 'N' may be followed by an SSLRequest's answer: not
			// worth following.
			return frameTracker{opaque: true}
		}
	}
	return frameTracker{}
}

// advance follows p, the next bytes the serving node sent.
func (f *frameTracker) advance(p []byte) {
	for len(p) > 0 && !f.opaque {
		switch {
		case f.single:
			// 'N': plaintext goes on; 'S' starts TLS.
			f.single = false
			f.opaque = p[0] != 'N'
			p = p[1:]
		case f.body > 0:
			n := min(f.body, len(p))
			f.body -= n
			p = p[n:]
		default:
			n := copy(f.hdr[f.hdrN:], p)
			f.hdrN += n
			p = p[n:]
			if f.hdrN == len(f.hdr) {
				l := int64(binary.BigEndian.Uint32(f.hdr[1:]))
				if l < 4 {
					f.opaque = true
					return
				}
				f.body, f.hdrN = int(l-4), 0
			}
		}
	}
}

// atBoundary reports whether the bytes so far end on a message boundary.
func (f *frameTracker) atBoundary() bool {
	return !f.opaque && !f.single && f.hdrN == 0 && f.body == 0
}

// forwardedConn is a client connection forwarded to a serving node.
type forwardedConn struct {
	client *bufConn
	server *bufConn
	node   uint64 // the serving node it went to
	epoch  uint64 // the serving epoch it went under

	mu     sync.Mutex // held while bytes of the serving node are written to the client
	frames frameTracker
	ended  bool
}

// run proxies the connection until either side ends or end is called.
func (f *forwardedConn) run() {
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		// The client's side: what the gateway buffered, then splice.
		if p := f.client.pending(); len(p) > 0 {
			if _, err := f.server.Conn.Write(p); err != nil {
				return
			}
		}
		io.Copy(f.server.Conn, f.client.Conn)
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := f.server.Read(buf)
			if n > 0 {
				f.mu.Lock()
				if f.ended {
					f.mu.Unlock()
					return
				}
				_, werr := f.client.Conn.Write(buf[:n])
				f.frames.advance(buf[:n])
				f.mu.Unlock()
				if werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	<-done
	f.close()
	<-done
}

func (f *forwardedConn) close() {
	f.client.Close()
	f.server.Close()
}

// end ends the connection because node serves now: with FATAL 57P01 when
// the client is between the serving node's messages, else by closing it.
func (f *forwardedConn) end(node uint64) {
	f.endWith(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "57P01",
		Message: fmt.Sprintf("terminating connection: node %d, which served this connection, stopped answering, and node %d serves SQL now", f.node, node),
		Detail:  "A transaction in progress did not commit, unless its COMMIT was under way when the node stopped: then its outcome is unknown.",
		Hint:    "Connect again (through any node) and retry."})
}

// endSilent ends the connection because its serving node has not answered
// this node for silent and no other node took over (without it the cluster
// has no quorum, so it keeps the role): with FATAL 08006 when the client is
// between messages, else by closing it.
func (f *forwardedConn) endSilent(silent time.Duration) {
	f.endWith(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "08006",
		Message: fmt.Sprintf("terminating connection: node %d, which serves this connection, stopped answering, and no other node can take over", f.node),
		Detail: fmt.Sprintf("It has missed this node's liveness pings for %s past the liveness window. Without it the cluster has no quorum, "+
			"so it keeps serving SQL. A transaction in progress did not commit, unless its COMMIT was under way when the node stopped: "+
			"then its outcome is unknown.", silent.Round(time.Second)),
		Hint: "Connect again (through any node) once a quorum of the nodes is up."})
}

// endWith ends the connection with e when the client is between the
// serving node's messages, else by closing it.
func (f *forwardedConn) endWith(e *pgproto3.ErrorResponse) {
	// A client that does not read may hold the copy in Write: give it a
	// moment, then the copy fails and lets go of mu.
	f.client.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	f.mu.Lock()
	if f.ended {
		f.mu.Unlock()
		return
	}
	f.ended = true
	if f.frames.atBoundary() {
		msg, err := e.Encode(nil)
		if err == nil {
			f.client.Conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
			f.client.Conn.Write(msg)
		}
	}
	f.mu.Unlock()
	f.close()
}

// forwardings is the gateway's set of forwarded connections, which
// watchServing ends once their serving node lost the role.
type forwardings struct {
	mu    sync.Mutex
	conns map[*forwardedConn]struct{}
}

func (s *forwardings) add(f *forwardedConn) {
	s.mu.Lock()
	if s.conns == nil {
		s.conns = map[*forwardedConn]struct{}{}
	}
	s.conns[f] = struct{}{}
	s.mu.Unlock()
}

func (s *forwardings) remove(f *forwardedConn) {
	s.mu.Lock()
	delete(s.conns, f)
	s.mu.Unlock()
}

// superseded returns the connections that went to another node than node
// under an epoch before epoch.
func (s *forwardings) superseded(node, epoch uint64) []*forwardedConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*forwardedConn
	for f := range s.conns {
		if f.epoch < epoch && f.node != node {
			out = append(out, f)
		}
	}
	return out
}

// nodes returns the serving nodes the connections went to.
func (s *forwardings) nodes() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []uint64
	for f := range s.conns {
		if !slices.Contains(out, f.node) {
			out = append(out, f.node)
		}
	}
	return out
}

// to returns the connections that went to node.
func (s *forwardings) to(node uint64) []*forwardedConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*forwardedConn
	for f := range s.conns {
		if f.node == node {
			out = append(out, f)
		}
	}
	return out
}

// silentServingEnd is how long a serving node may be silent — not live by
// this node's pings (cluster/placement's Live: no answer within its live
// window, at least 5 s), and no other node took over — before this node
// ends the connections it forwarded to it. A serving node that stops while
// the others have no quorum without it keeps the role: nothing else would
// end them until it continues or dies.
const silentServingEnd = 5 * time.Second

// silence tells how long each serving node has not been live, as the
// gateway's watch saw it.
type silence struct {
	live  func(node uint64) bool
	since map[uint64]time.Time // node -> when it was last seen live (or first watched)
}

// silentFor returns how long node has not been live, as of now.
func (s *silence) silentFor(node uint64, now time.Time) time.Duration {
	if s.since == nil {
		s.since = map[uint64]time.Time{}
	}
	t, ok := s.since[node]
	if !ok || s.live(node) {
		// First watched (give it the whole bound), or live now.
		s.since[node] = now
		return 0
	}
	return now.Sub(t)
}

// keepOnly forgets the nodes not in nodes: a node watched again (a new
// connection went to it, which it answered) starts with the whole bound.
func (s *silence) keepOnly(nodes []uint64) {
	for n := range s.since {
		if !slices.Contains(nodes, n) {
			delete(s.since, n)
		}
	}
}

// watchServing ends the forwarded connections whose serving node another
// took over from, and those whose serving node has been silent for
// silentServingEnd, until the gateway stops.
func (g *gateway) watchServing() {
	t := time.NewTicker(endPollInterval)
	defer t.Stop()
	quiet := silence{live: g.cl.Placement.Live}
	for !g.stopped.Load() {
		<-t.C
		node, epoch, ok := g.cl.ServingNow()
		if !ok || node == 0 {
			continue
		}
		for _, f := range g.fwd.superseded(node, epoch) {
			g.log.Info("gateway: ending a forwarded connection: its serving node lost the role",
				"client", f.client.RemoteAddr().String(), "node", f.node, "epoch", f.epoch, "serving_node", node, "serving_epoch", epoch)
			go f.end(node)
		}
		now := time.Now()
		nodes := g.fwd.nodes()
		quiet.keepOnly(nodes)
		for _, n := range nodes {
			silent := quiet.silentFor(n, now)
			if silent < silentServingEnd {
				continue
			}
			for _, f := range g.fwd.to(n) {
				g.log.Warn("gateway: ending a forwarded connection: its serving node does not answer and keeps the role",
					"client", f.client.RemoteAddr().String(), "node", f.node, "epoch", f.epoch, "silent", silent.Round(time.Millisecond))
				go f.endSilent(silent)
			}
		}
	}
}
