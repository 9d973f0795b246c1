package raft

import (
	"bytes"
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4/config"
	pb "github.com/lni/dragonboat/v4/raftpb"
)

// chunkSink is a receiving transport whose chunk handler checks each
// chunk's data against what the sender put in it and keeps the stream's
// first chunk, as dragonboat's handler does (its snapshot's metadata).
type chunkSink struct {
	t       testing.TB
	recv    *tcpTransport
	data    [][]byte // chunk i carries data[i%len(data)]
	first   pb.Chunk
	handled chan uint64 // the chunk ids handled
}

func newChunkSink(t testing.TB, distinct int) *chunkSink {
	s := &chunkSink{t: t, handled: make(chan uint64, 64)}
	for id := range distinct {
		s.data = append(s.data, chunkData(uint64(id)))
	}
	s.recv = transportFactory{}.Create(config.NodeHostConfig{RaftAddress: "127.0.0.1:0"},
		func(pb.MessageBatch) {},
		func(c pb.Chunk) bool {
			if !bytes.Equal(c.Data, s.data[c.ChunkId%uint64(len(s.data))]) {
				s.t.Errorf("chunk %d: its data is not what was sent", c.ChunkId)
			}
			if c.ChunkId == 0 {
				s.first = c
			}
			s.handled <- c.ChunkId
			return true
		}).(*tcpTransport)
	if err := s.recv.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

// chunkData is the data of chunk id of a test stream: a full chunk
// (snapshotChunkData bytes), different for each id.
func chunkData(id uint64) []byte {
	return bytes.Repeat([]byte{byte(id), byte(id >> 8), 0x5a, 0xa5}, snapshotChunkData/4)
}

// stream sends a stream of n full chunks on a new snapshot connection and
// waits for the receiver to handle each.
func (s *chunkSink) stream(n uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	send := transportFactory{}.Create(config.NodeHostConfig{}, nil, nil)
	conn, err := send.GetSnapshotConnection(ctx, s.recv.ln.Addr().String())
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close()
	for id := range n {
		count := n
		if id == n-1 {
			count = pb.LastChunkCount
		}
		c := pb.Chunk{ShardID: 2, ReplicaID: 4, From: 1, Index: 100, Term: 3, ChunkId: id, ChunkCount: count,
			Membership: pb.Membership{Addresses: map[uint64]string{1: "127.0.0.1:1", 2: "127.0.0.1:2", 3: "127.0.0.1:3"}},
			Filepath:   "/data/cluster/snapshot-part-1/shard-2-replica-4/snapshot-0000000000000064/snapshot-0000000000000064.gbsnap",
			FileSize:   n * snapshotChunkData, Data: s.data[id%uint64(len(s.data))]}
		if err := conn.SendChunk(c); err != nil {
			s.t.Fatal(err)
		}
	}
	for range n {
		select {
		case <-s.handled:
		case <-ctx.Done():
			s.t.Fatal("the receiver did not handle every chunk")
		}
	}
}

// A stream's chunks arrive whole and unchanged, and the first chunk the
// handler kept still holds its own data after the later chunks came
// through the receiver's reused buffer; a chunk's frame fits the buffer a
// connection keeps.
func TestSnapshotChunkStreamReusesBuffers(t *testing.T) {
	s := newChunkSink(t, 5)
	defer s.recv.Close()
	s.stream(5)
	if !bytes.Equal(s.first.Data, chunkData(0)) {
		t.Fatal("the first chunk's data changed after the later chunks arrived")
	}
	c := pb.Chunk{ChunkId: 1, Data: s.data[1], Membership: pb.Membership{Addresses: map[uint64]string{}}}
	for id := range uint64(9) {
		c.Membership.Addresses[id] = fmt.Sprintf("node-%d.a-long-domain-name.example.com:26257", id)
	}
	c.Filepath = string(bytes.Repeat([]byte("d/"), 2048))
	if size := frameSize + c.Size(); size > keptBufferSize {
		t.Fatalf("a chunk frame of %d bytes (nine members, a 4 KB path) is over the kept buffer's %d", size, keptBufferSize)
	}
}

// BenchmarkSnapshotChunkStream streams 2 MiB snapshot chunks from one
// transport to another in this process over loopback TCP (a snapshot of
// 64 MiB is 32 of them), the receiver's handler checking each. B/op and
// allocs/op are what both sides allocate per chunk; cpu-ns/op is the
// process's CPU time (user and system) per chunk, which a loaded machine
// disturbs less than ns/op.
//
//	go test ./cluster/raft -run '^$' -bench SnapshotChunkStream -benchtime 64x
func BenchmarkSnapshotChunkStream(b *testing.B) {
	s := newChunkSink(b, 16)
	defer s.recv.Close()
	b.SetBytes(snapshotChunkData)
	b.ReportAllocs()
	cpu0 := processCPUTime(b)
	b.ResetTimer()
	s.stream(uint64(b.N))
	b.StopTimer()
	b.ReportMetric(float64(processCPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPUTime is the CPU time (user and system) this process used.
func processCPUTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
