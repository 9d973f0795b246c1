// Package enginekey is the byte layout of the keys in PivotDB's Pebble store
// and the Pebble Comparer that orders them (issue 16, design §11). It is a
// leaf: storage (which opens the store with it) and storage/mvcc (which
// reads and writes versions, intents and lock records) both import it, and
// it imports only storage/hlc and Pebble.
//
// An engine key is a user key (what storage/keys.go lays out: 0x01 system
// keys, 0x02 <table id> <primary key> rows), a 0x00 sentinel and a suffix
// whose last byte is its own length (0 for a bare key):
//
//	bare key:       user key | 0x00
//	versioned key:  user key | 0x00 | wall (8, BE) | logical (4, BE) | 0x0D
//	lock record:    0x03 0x01 | user key | 0x00 | strength (1) | txn id (16) | 0x12
//
// Comparer orders by prefix (user key | 0x00) bytewise, which is user-key
// order, then by suffix: the bare key first, then versions newest first.
// Split returns the prefix, so Pebble's SeekPrefixGE and bloom filters work
// on user keys. storage/mvcc/doc.go has the full picture and the values.
package enginekey
