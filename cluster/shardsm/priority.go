package shardsm

import "runtime"

// snapshotNice is the scheduling niceness (Linux's nice, 0 to 19) of the
// threads that do a snapshot's own work: reading the shard and framing
// the stream on the sender, parsing it and building the staging sstable
// on the receiver. The group's writes and everything else on the node
// run at 0. On a machine whose cores are busy (the nodes of a small
// cluster share them, and a move's snapshot would take their CPU), a
// thread at 10 gets about a tenth of the share of one at 0 (the kernel's
// weights: 110 against 1024), so the writes keep their CPU and the
// snapshot uses what they leave; on idle cores it runs at full speed, up
// to the snapshot rate. Dragonboat's own transport work (sending and
// receiving the chunks, writing them to its file) is not in these
// threads and runs at 0.
const snapshotNice = 10

// atSnapshotPriority runs f on a thread of its own at snapshotNice and
// returns f's error. The thread is locked to f's goroutine and never
// unlocked, so the Go runtime ends it with the goroutine: no other
// goroutine ever runs at the lowered priority (raising it back needs a
// privilege a node may not have). Where the priority cannot be changed
// (not Linux, or refused), f runs as it would anyway.
func atSnapshotPriority(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		lowerThreadPriority(snapshotNice)
		done <- f()
	}()
	return <-done
}
