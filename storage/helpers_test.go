package storage

import (
	"math/rand/v2"
	"testing"

	"github.com/pivotdb/pivotdb/storage/storagetest"
)

// newRand returns the randomness of one randomized test; its seed is
// printed if the test fails, for replaying it with -seed.
func newRand(t testing.TB) *rand.Rand { return storagetest.NewRand(t, "./storage/") }

// quietLogger keeps Pebble's informational lines out of the tests' output.
type quietLogger = storagetest.QuietLogger
