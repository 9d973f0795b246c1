//go:build linux

package storage

import (
	"syscall"
	"unsafe"
)

// clockThreadCPUTimeID is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTimeID = 3

// threadCPU returns the CPU time of the calling OS thread in nanoseconds,
// for a benchmark locked to its thread (runtime.LockOSThread): unlike the
// process's CPU time it leaves out Pebble's background goroutines and the
// other goroutines of the test binary, so two scans timed one after the
// other on a loaded machine are charged only their own work.
func threadCPU() int64 {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return benchCPU()
	}
	return ts.Nano()
}
