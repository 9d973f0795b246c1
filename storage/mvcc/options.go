package mvcc

import (
	"github.com/cockroachdb/pebble/v2"
	"github.com/pivotdb/pivotdb/storage/enginekey"
)

// BlockSize is the sstable data block size of a versioned store
// (enginekey.BlockSize).
const BlockSize = enginekey.BlockSize

// ConfigureOptions sets what a Pebble store of versioned keys needs on o
// (enginekey.ConfigureOptions).
func ConfigureOptions(o *pebble.Options) { enginekey.ConfigureOptions(o) }
