//go:build !linux

package shardsm

import "errors"

// lowerThreadPriority does nothing here: per-thread priorities are
// Linux's.
func lowerThreadPriority(int) {}

func threadNice() (int, error) { return 0, errors.New("thread priorities are Linux's") }
