package enginekey

import "github.com/cockroachdb/pebble/v2"

// BlockSize is the sstable data block size a versioned store is written
// with. Older versions sit beside the newest in the same blocks (their
// values in value blocks), so a scan crosses more blocks than on an
// unversioned store; larger blocks make each crossing rarer. CockroachDB
// uses 32 KB for the same reason. BenchmarkScan1000 measures the effect.
const BlockSize = 32 << 10

// ConfigureOptions sets what a Pebble store of versioned keys needs on o,
// before o.EnsureDefaults and pebble.Open: the Comparer, columnar sstable
// blocks (whose NextPrefix skips a key's older versions with a bitmap
// instead of decoding each; Pebble writes row blocks unless asked), and
// BlockSize on every level. Filter policies and the rest are the caller's.
func ConfigureOptions(o *pebble.Options) {
	o.Comparer = Comparer
	o.Experimental.EnableColumnarBlocks = func() bool { return true }
	for i := range o.Levels {
		o.Levels[i].BlockSize = BlockSize
	}
}
