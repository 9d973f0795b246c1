package kvsm

import (
	"encoding/binary"

	"github.com/pivotdb/pivotdb/cluster/raft"
)

// Every group's state lives in one span of the node's Pebble store. The area
// byte 0x03 is one the storage engine's key map (storage/keys.go) leaves
// reserved, so the two can share a store:
//
//	03 | group id (8 bytes BE) | 00 | "applied"   the applied index (8 bytes BE)
//	03 | group id (8 bytes BE) | 01 | user key    a value written by a command
//
// A group's span is [03|g, 03|g+1): everything of the group and nothing
// else, so a snapshot is one scan of it and a recovery replaces it whole. The
// applied index sits inside the span on purpose: the write that replaces the
// span replaces the index with it, and a batch that applies commands writes
// the index beside their effects.
const (
	groupArea   byte = 0x03
	localMarker byte = 0x00
	dataMarker  byte = 0x01
)

const groupPrefixLen = 1 + 8

// groupPrefix returns 03|g.
func groupPrefix(g raft.GroupID) []byte {
	b := make([]byte, groupPrefixLen, groupPrefixLen+16)
	b[0] = groupArea
	binary.BigEndian.PutUint64(b[1:], uint64(g))
	return b
}

// groupSpan returns the half-open span [start, end) holding group g.
func groupSpan(g raft.GroupID) (start, end []byte) {
	start = groupPrefix(g)
	if g == raft.GroupID(^uint64(0)) {
		return start, []byte{groupArea + 1}
	}
	return start, groupPrefix(g + 1)
}

// appliedKey returns the key of g's applied index.
func appliedKey(g raft.GroupID) []byte {
	return append(append(groupPrefix(g), localMarker), "applied"...)
}

// dataKey returns the store key of user key k in g.
func dataKey(g raft.GroupID, k []byte) []byte {
	return append(append(groupPrefix(g), dataMarker), k...)
}

// dataSpan returns the store span of user keys [start, end) in g; a nil end
// means the end of the group's data.
func dataSpan(g raft.GroupID, start, end []byte) (lo, hi []byte) {
	lo = dataKey(g, start)
	if end == nil {
		hi = append(groupPrefix(g), dataMarker+1)
	} else {
		hi = dataKey(g, end)
	}
	return lo, hi
}
