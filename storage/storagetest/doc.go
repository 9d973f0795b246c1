// Package storagetest holds what the tests of the storage layers (storage,
// storage/mvcc, partition) share and cannot share through _test.go files:
// the -seed flag with the seeded randomness of randomized tests, and a
// Pebble logger that keeps tests' output readable.
//
// It is imported by tests only, and imports nothing of PivotDB, so every
// storage layer's tests can use it without an import cycle. A test binary
// that imports it gets the -seed flag from it and must not define its own.
package storagetest
