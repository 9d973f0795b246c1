package types

import (
	"testing"
	"unsafe"
)

// TestValueSize keeps Value at six words: every row in the executor is a
// slice of them, and memory accounting counts their size.
func TestValueSize(t *testing.T) {
	if n := unsafe.Sizeof(Value{}); n > 48 {
		t.Errorf("types.Value is %d bytes, want at most 48", n)
	}
}
