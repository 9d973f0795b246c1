package storage

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed for the randomized tests (0: time-based)")

// newRand returns the randomness of one randomized test and arranges for its
// seed to be printed if the test fails, so that the failure can be replayed
// with -seed.
func newRand(t testing.TB) *rand.Rand {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay with: go test -run '^%s$' -seed %d ./storage/", t.Name(), seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// quietLogger drops Pebble's informational log lines, which would otherwise
// fill the output of every test that opens an engine, and keeps its errors.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
