package storage

import "github.com/pivotdb/pivotdb/storage/enginekey"

// How a forward Iterator passes versions above its read timestamp (issue
// 23): a scan at an older timestamp (AS OF SYSTEM TIME, a long
// transaction's snapshot while others write) meets, on each row written
// since, the newer versions before the one it reads. Versions of a key
// sort newest first, so the one to read is the first at or below the read
// timestamp: after newerSteps Nexts over newer versions the iterator seeks
// straight to (key, read timestamp) instead of stepping over the rest.
// A seek costs several Nexts, so this is the ski-rental rule: step over as
// many newer versions as a seek costs, then seek, which bounds the worst
// case (just past newerSteps) at about twice stepping and makes long runs
// of newer versions cheap. BenchmarkEngineScanNewer, cpu-ns/op per 1,000-
// row scan, seek against Next, one sitting on the shared (noisy) machine:
//
//	                   newerSteps=8           newerSteps=2
//	compacted, 10      1.73M against 1.14M    1.11-1.15M against 1.10-1.18M
//	compacted, 50      2.54M against 4.48M    1.43M against 5.10M
//	memtable, 10       2.94M against 1.61M    1.92-1.99M against 1.09-1.10M
//	memtable, 50       3.20M against 6.30M    2.83M against 7.78M
//
// (10 or 50 newer versions a row). A seek there cost about as much as 6-8
// Nexts; 8 keeps rows with up to 8 newer versions exactly as fast as
// before.
//
// A reader with its own transaction's intents (intents.go) steps, because
// an intent of its own above the read timestamp is visible to it and a
// seek would pass it.
//
// A variable only so that the benchmark can compare with stepping alone.
var newerSteps = 8

// skipNewer moves Pebble from a version of uk above the read timestamp
// towards the first version at or below it; newer counts the newer
// versions passed so far in this settle.
func (i *Iterator) skipNewer(uk []byte, newer *int) bool {
	*newer++
	if i.own != nil || *newer <= newerSteps || i.ts.IsEmpty() {
		return i.it.Next()
	}
	*newer = 0
	i.seekBuf = enginekey.AppendVersionKey(i.seekBuf[:0], uk, i.ts)
	return i.it.SeekGE(i.seekBuf)
}
