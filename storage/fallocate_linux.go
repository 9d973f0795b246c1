package storage

import "syscall"

// fallocate allocates size bytes for the file (mode 0: the size grows too,
// so the ballast's size shows in ls).
func fallocate(fd uintptr, size int64) error {
	return syscall.Fallocate(int(fd), 0, 0, size)
}
