package storagetest

import (
	"flag"
	"math/rand/v2"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized tests (0: time-based)")

// NewRand returns the randomness of one randomized test and arranges for
// its seed to be printed if the test fails, so that the failure can be
// replayed with -seed. pkg is the package's path as go test takes it
// ("./storage/"), for the replay command.
func NewRand(t testing.TB, pkg string) *rand.Rand {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay with: go test -run '^%s$' -seed %d %s", t.Name(), seed, pkg)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}
