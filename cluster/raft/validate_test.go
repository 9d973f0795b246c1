package raft

import (
	"testing"

	"github.com/lni/goutils/stringutil"
)

// TestTransportValidateMatchesDragonboat: remembering valid addresses
// changes no answer, the second time either.
func TestTransportValidateMatchesDragonboat(t *testing.T) {
	var f transportFactory
	for _, addr := range []string{"127.0.0.1:7001", "node-1.example:26257", "localhost:1",
		"127.0.0.1", ":7001", "127.0.0.1:0", "127.0.0.1:65536", "a:b:c", "256.1.1.1:80", "", "host_name:80"} {
		want := stringutil.IsValidAddress(addr)
		for try := 0; try < 2; try++ {
			if got := f.Validate(addr); got != want {
				t.Errorf("Validate(%q) try %d = %v, want %v", addr, try, got, want)
			}
		}
		if _, cached := validAddrs.m.Load(addr); cached && !want {
			t.Errorf("invalid address %q was remembered", addr)
		}
	}
}

// BenchmarkTransportValidate is the check dragonboat makes of the sender's
// address for every message a host receives.
func BenchmarkTransportValidate(b *testing.B) {
	var f transportFactory
	b.Run("remembered", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if !f.Validate("127.0.0.1:41234") {
				b.Fatal("refused")
			}
		}
	})
	b.Run("regexp", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if !stringutil.IsValidAddress("127.0.0.1:41234") {
				b.Fatal("refused")
			}
		}
	})
}
