package raft

import "testing"

// The log store is never "busy" (dragonboat then pauses every proposal of
// its groups) just because one memtable is being flushed while the next
// fills: busy is when the arenas of its memtables reach 95% of
// KVWriteBufferSize × KVMaxWriteBufferNumber (dragonboat's pebble
// kv_pebble.go), so two full memtables must stay below that (config.go's
// logStoreConfig says what two memtables did). And its memtables stay
// within the 32 MiB the store was sized for.
func TestLogStoreFlushIsNotBusy(t *testing.T) {
	c := logStoreConfig(defaultLogStoreMemTableBytes)
	busyAt := c.KVWriteBufferSize * c.KVMaxWriteBufferNumber * 19 / 20
	if flushing := 2 * c.KVWriteBufferSize; flushing >= busyAt {
		t.Fatalf("a memtable being flushed and the next one (%d bytes) make the log store busy (at %d bytes)", flushing, busyAt)
	}
	if got := c.MemorySizeMB(); got > 32 {
		t.Fatalf("the log store's memtables may take %d MiB, want at most 32", got)
	}
}
