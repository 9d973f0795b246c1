//go:build !linux

package storage

import "errors"

// fallocate is Linux's; elsewhere the ballast is written with zeros.
func fallocate(fd uintptr, size int64) error {
	return errors.New("storage: fallocate not available")
}
