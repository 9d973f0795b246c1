// Package rowenc turns table rows into Pebble keys and values and back.
//
// A row lives at
//
//	<table prefix> <key column 1> ... <key column n>
//
// where each key column uses storage's order-preserving encoding (NULL sorts
// first), so byte order equals SQL order and a key prefix is a key range.
//
// The value holds the non-key columns, each as
//
//	uvarint(column id) · wire tag · payload
//
// NULL columns are left out, except those with a Missing value (added by
// ALTER TABLE ADD COLUMN ... DEFAULT): they store an explicit NULL (wire
// tag 4), because a row without an entry for such a column is one written
// before the column existed, and reads the column's Missing value. The wire tag makes every payload self-delimiting
// (varint, fixed 8 bytes, or length-prefixed bytes), so a reader can skip a
// column it does not know — one dropped or added after the row was written —
// without a schema.
//
// An array column is one wireBytes payload (array.go): its dimensions,
// then each element as a wire tag and payload like a column's (an
// explicit NULL tag for a NULL element), decoded with the element type
// from the schema. Arrays have no key encoding in tables (they cannot be
// in a primary key or index); AppendKeyValue still orders them, for the
// executor's sort and partition keys.
//
// Decoding is on every scan's path, once per row read (a correlated
// EXISTS over 10k × 10k rows decodes 20,000 rows a statement), so it
// passes types by pointer and decodes text and bytes entries, the most
// common payloads, straight into the row; BenchmarkDecodeRow measures a
// row of tests/bench's kv table. Each decoded string is still one
// allocation: rows outlive the decoder's input (Pebble's buffers), and an
// arena shared by many rows would let one kept row pin the strings of all
// the others.
//
// ColumnText and DecodeColumn (column.go) read one non-key column of a
// stored value, Missing defaults included, without decoding the others:
// ColumnText gives a text column's bytes aliasing the value, for readers
// that copy what they keep (a hash semi join's build side, sql/exec).
//
// WireEncoder (wire.go) reads the same layout to append a row's
// PostgreSQL wire form without decoding it into typed values: what the
// server sends for plain projections of stored columns. Init reuses the
// encoder's memory and Release drops its references, so that the server
// keeps one encoder per prepared statement and sets it up per execution
// without allocating.
package rowenc
