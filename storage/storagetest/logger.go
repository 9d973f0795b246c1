package storagetest

import (
	"fmt"
	"os"
)

// QuietLogger is a Pebble logger that drops Pebble's informational lines,
// which would otherwise fill the output of every test that opens an
// engine, and keeps its errors.
type QuietLogger struct{}

func (QuietLogger) Infof(string, ...any) {}
func (QuietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (QuietLogger) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
