package raft

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4/config"
	"github.com/lni/dragonboat/v4/raftio"
	pb "github.com/lni/dragonboat/v4/raftpb"
	"github.com/lni/goutils/stringutil"
)

// The Raft transport: dragonboat's own TCP transport (go-tcp-transport),
// the same wire format, written with fewer system calls. Profiles of three
// nodes under single-row UPSERTs (tests/bench --cluster-profile) showed
// dragonboat's transport as a fifth of the serving node's CPU, more than
// its step and apply workers together: it writes every message batch in
// three write calls (magic number, header, payload), each a TCP segment of
// its own on which the receiver may wake, and reads one in three or more
// read calls, each under a fresh deadline. Here a batch is one write (the
// frame assembled in one buffer) and the receiver reads through a
// buffered reader, so a batch usually costs one read.
//
// The frame is dragonboat's, byte for byte, so a node running this
// transport and one running dragonboat's exchange messages and snapshots
// (a rolling upgrade): the magic number 0xAE 0x7D; an 18-byte header
// (method: 100 a message batch, 200 a snapshot chunk; payload size; the
// header's CRC32 computed with its own field zero; the payload's CRC32,
// zero and unchecked under TLS); the payload, a marshalled
// raftpb.MessageBatch or raftpb.Chunk. A snapshot connection ends with a
// "poison" (two zero bytes where the magic number would be), which the
// receiver acknowledges with the same two bytes.
//
// Everything above the wire (queues, batching of messages per target,
// snapshot streaming, the deployment id check, reconnects) stays
// dragonboat's: its transport layer drives this one through
// raftio.ITransport.

const (
	transportName     = "pivotdb-tcp-transport"
	frameHeaderSize   = 18
	frameSize         = 2 + frameHeaderSize // magic number and header
	methodBatch       = uint16(100)
	methodChunk       = uint16(200)
	dialTimeout       = 5 * time.Second
	tlsHandshakeLimit = 10 * time.Second
	keepAlivePeriod   = 10 * time.Second
	// headerReadLimit bounds reading a frame's header once its magic
	// number arrived; payloadReadLimit each payloadPiece of its payload
	// (dragonboat's 2 s and 5 s per 2 MiB).
	headerReadLimit  = 2 * time.Second
	payloadReadLimit = 5 * time.Second
	payloadPiece     = 2 << 20
	writeLimit       = 5 * time.Second
	poisonAckLimit   = 10 * time.Second
	// lastChunkAckLimit bounds the wait for the receiver to handle a
	// stream's last chunk (snapshotConn.SendChunk): it writes the chunk
	// and fsyncs the whole received file, which on a busy disk takes
	// seconds for a big snapshot.
	lastChunkAckLimit = time.Minute
	// readBufferSize is each connection's read buffer: a frame of a small
	// batch arrives whole in one read.
	readBufferSize = 64 << 10
	// bufferStep is the least size of a kept send or payload buffer.
	bufferStep = 64 << 10
	// keptBufferSize: a connection keeps a send or payload buffer, grown
	// as frames need, up to this size between frames (dragonboat's
	// allocates 2 MiB on each side at the start); a bigger frame gets one
	// of its own. A snapshot chunk's frame fits: its data (snapshotChunkData)
	// and its header fields (ids, membership, file path: well under
	// chunkFrameSlack), so a stream's chunks reuse one buffer on each side
	// instead of allocating 2 MiB for each (BenchmarkSnapshotChunkStream).
	keptBufferSize = snapshotChunkData + chunkFrameSlack
	// snapshotChunkData is the data a snapshot chunk carries (dragonboat's
	// settings.SnapshotChunkSize, in a package of its own that cannot be
	// imported; TestChunkFrameFitsKeptBuffer checks it).
	snapshotChunkData = 2 << 20
	chunkFrameSlack   = 64 << 10
	// maxPayloadSize refuses a corrupt header's size before allocating
	// it: dragonboat's largest frame is a 2 MiB snapshot chunk or a batch
	// under its send queue bound (HostConfig's 64 MiB).
	maxPayloadSize = 1 << 30
)

var (
	frameMagic  = [2]byte{0xAE, 0x7D}
	framePoison = [2]byte{0, 0}
	errBadFrame = errors.New("raft transport: invalid frame")
)

// transportFactory makes the Raft transport of a host (ExpertConfig's
// TransportFactory).
type transportFactory struct {
	snapSend *snapshotSendHook // snapshotsend.go; nil: none
	local    *localDelivery    // given the receive path (campaign.go); nil: none
}

func (f transportFactory) Create(nhc config.NodeHostConfig, batches raftio.MessageHandler, chunks raftio.ChunkHandler) raftio.ITransport {
	f.local.set(batches)
	return &tcpTransport{nhc: nhc, batches: batches, chunks: chunks, encrypted: nhc.MutualTLS,
		conns: map[net.Conn]struct{}{}, stop: make(chan struct{}), snapSend: f.snapSend}
}

// Validate accepts the addresses dragonboat's TCP transport accepts
// (host:port, the host a name or an IPv4 address). Dragonboat calls it for
// every message a host receives (its registry records the sender's
// address each time), and stringutil's check runs two regular expressions:
// 2% of a three-node cluster's CPU under single-row UPSERTs. A cluster has
// few addresses, so the ones found valid are remembered.
func (transportFactory) Validate(addr string) bool {
	if _, ok := validAddrs.m.Load(addr); ok {
		return true
	}
	if !stringutil.IsValidAddress(addr) {
		return false
	}
	// Bounded: a peer that sent ever new addresses could otherwise grow
	// the set; past the bound the check simply runs every time.
	if validAddrs.n.Load() < maxValidAddrs {
		if _, loaded := validAddrs.m.LoadOrStore(addr, struct{}{}); !loaded {
			validAddrs.n.Add(1)
		}
	}
	return true
}

// maxValidAddrs bounds validAddrs: far more than a cluster's nodes.
const maxValidAddrs = 1024

// validAddrs holds the addresses Validate found valid.
var validAddrs struct {
	m sync.Map // string → struct{}
	n atomic.Int64
}

// tcpTransport is a raftio.ITransport over TCP (TLS when the host's
// MutualTLS is set).
type tcpTransport struct {
	nhc       config.NodeHostConfig
	batches   raftio.MessageHandler
	chunks    raftio.ChunkHandler
	encrypted bool
	snapSend  *snapshotSendHook // told of each stream's first chunk

	mu      sync.Mutex
	ln      net.Listener
	conns   map[net.Conn]struct{} // accepted, still served
	closed  bool
	stop    chan struct{}
	serving sync.WaitGroup
}

var _ raftio.ITransport = (*tcpTransport)(nil)

func (t *tcpTransport) Name() string { return transportName }

func (t *tcpTransport) Start() error {
	tlsConfig, err := t.nhc.GetServerTLSConfig()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", t.nhc.GetListenAddress())
	if err != nil {
		return err
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	t.mu.Lock()
	t.ln = ln
	t.mu.Unlock()
	t.serving.Add(1)
	go t.accept(ln)
	return nil
}

func (t *tcpTransport) accept(ln net.Listener) {
	defer t.serving.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			select {
			case <-t.stop:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			conn.Close()
			return
		}
		t.conns[conn] = struct{}{}
		t.serving.Add(1)
		t.mu.Unlock()
		go func() {
			defer t.serving.Done()
			t.serve(conn)
			conn.Close()
			t.mu.Lock()
			delete(t.conns, conn)
			t.mu.Unlock()
		}()
	}
}

// Close stops listening, ends the connections it serves and waits for
// their goroutines.
func (t *tcpTransport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	close(t.stop)
	if t.ln != nil {
		t.ln.Close()
	}
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.serving.Wait()
	return nil
}

// serve reads frames from conn until it ends, a frame is bad, or a
// snapshot connection sends its poison.
func (t *tcpTransport) serve(conn net.Conn) {
	if tc, ok := conn.(*tls.Conn); ok {
		// A peer that connects and never completes the handshake does
		// not hold this goroutine.
		if err := tc.SetDeadline(time.Now().Add(tlsHandshakeLimit)); err != nil {
			return
		}
		if err := tc.Handshake(); err != nil {
			return
		}
		if err := tc.SetWriteDeadline(time.Time{}); err != nil {
			return
		}
	}
	r := bufio.NewReaderSize(conn, readBufferSize)
	var kept []byte      // the payload buffer kept between frames
	var chunkData []byte // the data buffer kept between a stream's chunks
	for {
		// Idle connections wait for the next frame without a deadline:
		// Close ends them.
		if err := conn.SetReadDeadline(time.Time{}); err != nil {
			return
		}
		magic, err := r.Peek(len(frameMagic))
		if err != nil {
			return
		}
		switch {
		case [2]byte(magic) == framePoison:
			conn.SetWriteDeadline(time.Now().Add(writeLimit))
			conn.Write(framePoison[:])
			return
		case [2]byte(magic) != frameMagic:
			return
		}
		r.Discard(len(frameMagic))
		method, payload, err := readFrame(conn, r, &kept, t.encrypted)
		if err != nil {
			return
		}
		if method == methodBatch {
			var batch pb.MessageBatch
			if err := batch.Unmarshal(payload); err != nil {
				return
			}
			// A replica's answer may end a log hold (logkeeper.go).
			t.snapSend.receivedBatch(&batch)
			t.batches(batch)
			continue
		}
		// Unmarshal copies the chunk's data into chunkData's space. The
		// chunk handler writes the data out before it returns, but keeps
		// the stream's first chunk (its snapshot's metadata): that one's
		// data gets a buffer of its own.
		chunk := pb.Chunk{Data: chunkData[:0]}
		if err := chunk.Unmarshal(payload); err != nil {
			return
		}
		if cap(chunk.Data) <= keptBufferSize {
			chunkData = chunk.Data[:0]
		}
		if chunk.ChunkId == 0 {
			chunk.Data = bytes.Clone(chunk.Data)
		}
		if chunkReceivedHook != nil {
			chunkReceivedHook(&chunk)
		}
		if !t.chunks(chunk) {
			return
		}
	}
}

// readFrame reads a frame's header and payload (its magic number read).
// The payload is read into *kept when it fits (growing it up to
// keptBufferSize), else into a buffer of its own; it is valid until the
// next call. Unmarshalling copies what it keeps (dragonboat reuses its
// buffer the same way).
func readFrame(conn net.Conn, r *bufio.Reader, kept *[]byte, encrypted bool) (uint16, []byte, error) {
	if err := conn.SetReadDeadline(time.Now().Add(headerReadLimit)); err != nil {
		return 0, nil, err
	}
	var hdr [frameHeaderSize]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	method, size, payloadCRC, ok := decodeFrameHeader(hdr)
	if !ok || size == 0 || size > maxPayloadSize {
		return 0, nil, errBadFrame
	}
	var payload []byte
	switch {
	case size <= uint64(cap(*kept)):
		payload = (*kept)[:size]
	case size <= keptBufferSize:
		*kept = make([]byte, grownSize(cap(*kept), int(size)))
		payload = (*kept)[:size]
	default:
		payload = make([]byte, size)
	}
	for read := 0; read < len(payload); {
		piece := min(len(payload)-read, payloadPiece)
		if err := conn.SetReadDeadline(time.Now().Add(payloadReadLimit)); err != nil {
			return 0, nil, err
		}
		if _, err := io.ReadFull(r, payload[read:read+piece]); err != nil {
			return 0, nil, err
		}
		read += piece
	}
	if !encrypted && crc32.ChecksumIEEE(payload) != payloadCRC {
		return 0, nil, errBadFrame
	}
	return method, payload, nil
}

// grownSize is the new size of a kept buffer of size have that must hold
// need bytes (need <= keptBufferSize): at least bufferStep, doubling, so
// that frames of slowly growing sizes do not each allocate one.
func grownSize(have, need int) int {
	return min(max(need, 2*have, bufferStep), keptBufferSize)
}

// encodeFrameHeader writes the magic number and the header of a frame of
// payload into out[:frameSize].
func encodeFrameHeader(out []byte, method uint16, payload []byte, encrypted bool) {
	copy(out, frameMagic[:])
	h := out[2:frameSize]
	binary.BigEndian.PutUint16(h, method)
	binary.BigEndian.PutUint64(h[2:], uint64(len(payload)))
	binary.BigEndian.PutUint32(h[10:], 0)
	var payloadCRC uint32
	if !encrypted {
		payloadCRC = crc32.ChecksumIEEE(payload)
	}
	binary.BigEndian.PutUint32(h[14:], payloadCRC)
	binary.BigEndian.PutUint32(h[10:], crc32.ChecksumIEEE(h))
}

// decodeFrameHeader checks a header's CRC and method.
func decodeFrameHeader(h [frameHeaderSize]byte) (method uint16, size uint64, payloadCRC uint32, ok bool) {
	headerCRC := binary.BigEndian.Uint32(h[10:])
	binary.BigEndian.PutUint32(h[10:], 0)
	if crc32.ChecksumIEEE(h[:]) != headerCRC {
		return 0, 0, 0, false
	}
	method = binary.BigEndian.Uint16(h[:])
	if method != methodBatch && method != methodChunk {
		return 0, 0, 0, false
	}
	return method, binary.BigEndian.Uint64(h[2:]), binary.BigEndian.Uint32(h[14:]), true
}

// dial connects to target as dragonboat's TCP transport does: no linger,
// keep-alives every 10 s, TLS when configured.
func (t *tcpTransport) dial(ctx context.Context, target string) (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout, KeepAlive: keepAlivePeriod}
	conn, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		if err := tc.SetLinger(0); err != nil {
			conn.Close()
			return nil, err
		}
	}
	tlsConfig, err := t.nhc.GetClientTLSConfig(target)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if tlsConfig != nil {
		tc := tls.Client(conn, tlsConfig)
		if err := tc.SetDeadline(time.Now().Add(tlsHandshakeLimit)); err != nil {
			conn.Close()
			return nil, err
		}
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return nil, fmt.Errorf("raft transport: TLS handshake with %s: %w", target, err)
		}
		if err := tc.SetDeadline(time.Time{}); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	return conn, nil
}

func (t *tcpTransport) GetConnection(ctx context.Context, target string) (raftio.IConnection, error) {
	conn, err := t.dial(ctx, target)
	if err != nil {
		return nil, err
	}
	return &frameConn{conn: conn, encrypted: t.encrypted}, nil
}

func (t *tcpTransport) GetSnapshotConnection(ctx context.Context, target string) (raftio.ISnapshotConnection, error) {
	conn, err := t.dial(ctx, target)
	if err != nil {
		return nil, err
	}
	return &snapshotConn{frameConn: frameConn{conn: conn, encrypted: t.encrypted}, snapSend: t.snapSend}, nil
}

// frameConn sends frames on one connection, each in one write. dragonboat
// uses a connection from one goroutine at a time.
type frameConn struct {
	conn      net.Conn
	encrypted bool
	buf       []byte // kept between frames up to keptBufferSize
}

var _ raftio.IConnection = (*frameConn)(nil)

func (c *frameConn) Close() { c.conn.Close() }

func (c *frameConn) SendMessageBatch(batch pb.MessageBatch) error {
	return c.send(methodBatch, batch.SizeUpperLimit(), func(b []byte) []byte { return pb.MustMarshalTo(&batch, b) })
}

// send marshals a payload of at most size bytes after the frame's header
// and writes the frame.
func (c *frameConn) send(method uint16, size int, marshal func([]byte) []byte) error {
	need := frameSize + size
	buf := c.buf
	if cap(buf) < need {
		if need <= keptBufferSize {
			c.buf = make([]byte, grownSize(cap(buf), need))
			buf = c.buf
		} else {
			buf = make([]byte, need)
		}
	}
	buf = buf[:need]
	payload := marshal(buf[frameSize:])
	encodeFrameHeader(buf, method, payload, c.encrypted)
	if err := c.conn.SetWriteDeadline(time.Now().Add(writeLimit + time.Duration(len(payload)/payloadPiece)*writeLimit)); err != nil {
		return err
	}
	_, err := c.conn.Write(buf[:frameSize+len(payload)])
	return err
}

// snapshotConn sends a snapshot's chunks, and the poison that ends the
// stream after its last chunk (or when closed early).
type snapshotConn struct {
	frameConn
	snapSend *snapshotSendHook
	ended    bool // the poison was sent
	// group and to name the stream once its first chunk was sent;
	// lastSent: its last chunk was.
	group    GroupID
	to       ReplicaID
	lastSent bool
}

var _ raftio.ISnapshotConnection = (*snapshotConn)(nil)

// SendChunk sends a chunk; the stream's last chunk returns only once the
// receiver handled it (or lastChunkAckLimit passed). dragonboat reports
// a stream as delivered to the leader's Raft as soon as the last
// SendChunk returns, and the leader then sends the new replica the
// entries after the snapshot. The receiver handles the last chunk by
// fsyncing the received file and only then queues the snapshot for its
// Raft; entries that arrive before it are refused (the replica's log is
// empty), the leader goes back to index 1, finds it compacted and streams
// the whole snapshot again (BenchmarkClusterReplicaMove on a loaded
// machine: 130 MB streamed for a 65 MB shard in one run of nine, the new
// replica refusing the second stream as older than its log). The
// receiver reads the poison only after its chunk handler returned for the
// last chunk, so its acknowledgement says that the snapshot is queued
// (TestSnapshotLastChunkWaitsForReceiver).
func (c *snapshotConn) SendChunk(chunk pb.Chunk) error {
	c.group, c.to = GroupID(chunk.ShardID), ReplicaID(chunk.ReplicaID)
	c.snapSend.sending(&chunk)
	if err := c.send(methodChunk, chunk.Size(), func(b []byte) []byte { return pb.MustMarshalTo(&chunk, b) }); err != nil {
		c.snapSend.streamFailed(c.group, c.to)
		return err
	}
	if chunk.IsLastChunk() {
		c.lastSent = true
		// A receiver that refused the chunk closes the connection
		// without an acknowledgement: the stream was sent all the same,
		// as with dragonboat's transport, and what the receiver did with
		// it is its Raft's business.
		c.end(lastChunkAckLimit)
	}
	return nil
}

// end sends the poison and waits up to limit for the receiver's
// acknowledgement.
func (c *snapshotConn) end(limit time.Duration) {
	if c.ended {
		return
	}
	c.ended = true
	if err := c.conn.SetWriteDeadline(time.Now().Add(writeLimit)); err != nil {
		return
	}
	if _, err := c.conn.Write(framePoison[:]); err != nil {
		return
	}
	if err := c.conn.SetReadDeadline(time.Now().Add(limit)); err != nil {
		return
	}
	var ack [2]byte
	io.ReadFull(c.conn, ack[:])
}

// Close ends the stream (the poison, unless the last chunk sent it) and
// the connection, waiting up to poisonAckLimit for the receiver's
// acknowledgement so that it has handled every chunk before the
// connection goes.
func (c *snapshotConn) Close() {
	defer c.conn.Close()
	if c.group != 0 && !c.lastSent {
		// Closed early: the stream is lost.
		c.snapSend.streamFailed(c.group, c.to)
	}
	c.end(poisonAckLimit)
}

// chunkReceivedHook, when set, is called with every snapshot chunk a
// transport receives before its host handles it (tests only, set while no
// host runs: export_test.go).
var chunkReceivedHook func(*pb.Chunk)

// useDragonboatTransport makes new hosts use dragonboat's own TCP
// transport instead (the benchmark's and the wire-compatibility test's
// comparison; export_test.go).
var useDragonboatTransport bool
