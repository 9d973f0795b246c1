//go:build unix

package rowenc

import "syscall"

// processCPU returns the CPU time the process has used (user and system),
// in nanoseconds (as storage/mvcc's benchmarks measure it): on a machine
// shared with other jobs the wall time includes waiting for a CPU, the CPU
// time much less so.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
