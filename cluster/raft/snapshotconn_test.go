package raft

import (
	"context"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4/config"
	pb "github.com/lni/dragonboat/v4/raftpb"
)

// A stream's last chunk is sent only when the receiver has handled it:
// dragonboat tells the leader's Raft that the snapshot arrived as soon as
// SendChunk returns for the last chunk, and the receiver queues the
// snapshot for its own Raft only at the end of handling that chunk (after
// fsyncing the file). Here the receiver's handler holds the last chunk
// until the test releases it: SendChunk must still be waiting then, and
// return once the handler did; Close then sends no second poison.
func TestSnapshotLastChunkWaitsForReceiver(t *testing.T) {
	inHandler := make(chan struct{})
	release := make(chan struct{})
	handled := make(chan pb.Chunk, 4)
	recv := transportFactory{}.Create(config.NodeHostConfig{RaftAddress: "127.0.0.1:0"},
		func(pb.MessageBatch) {},
		func(c pb.Chunk) bool {
			if c.IsLastChunk() {
				close(inHandler)
				<-release
			}
			handled <- c
			return true
		})
	if err := recv.Start(); err != nil {
		t.Fatal(err)
	}
	defer recv.Close()
	released := false
	defer func() {
		if !released { // a failure: the receiver's Close waits for its handler
			close(release)
		}
	}()
	addr := recv.(*tcpTransport).ln.Addr().String()
	send := transportFactory{}.Create(config.NodeHostConfig{}, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := send.GetSnapshotConnection(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(id, count uint64) pb.Chunk {
		return pb.Chunk{ShardID: 2, ReplicaID: 4, From: 1, ChunkId: id, ChunkCount: count, Data: []byte("data")}
	}
	if err := conn.SendChunk(chunk(0, pb.LastChunkCount-5)); err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() { sent <- conn.SendChunk(chunk(1, pb.LastChunkCount)) }()
	select {
	case <-inHandler:
	case <-time.After(20 * time.Second):
		t.Fatal("the receiver did not get the last chunk")
	}
	// The handler holds the chunk: SendChunk cannot have returned. (A
	// transport that returns on writing would almost always have done so
	// by now; a fixed one never does before the release.)
	select {
	case err := <-sent:
		t.Fatalf("SendChunk of the last chunk returned (%v) while the receiver was still handling it", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	released = true
	select {
	case err := <-sent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("SendChunk of the last chunk did not return after the receiver handled it")
	}
	if n := len(handled); n != 2 {
		t.Fatalf("the receiver handled %d chunks, want 2", n)
	}
	closed := make(chan struct{})
	go func() { conn.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(poisonAckLimit / 2):
		t.Fatal("Close waited for a second acknowledgement")
	}
}
