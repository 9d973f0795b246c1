//go:build !linux

package storage

// threadCPU falls back to the process's CPU time where the thread's is not
// read (see threadcpu_linux_test.go).
func threadCPU() int64 { return benchCPU() }
