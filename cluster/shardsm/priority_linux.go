package shardsm

import "syscall"

// lowerThreadPriority sets the calling thread's niceness (Linux applies
// setpriority with a thread id to that thread alone); best effort: a
// refusal leaves the thread as it was.
func lowerThreadPriority(nice int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice)
}

// threadNice is the calling thread's niceness (for the tests).
func threadNice() (int, error) {
	// The raw system call answers 20 - nice (glibc's getpriority undoes
	// that); syscall.Getpriority returns the raw value.
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	return 20 - p, err
}
