package raft

import (
	gvfs "github.com/lni/vfs"
)

// noSyncFS is the file system of a host started with HostConfig.NoSync
// (`pivotdb serve --unsafe-no-sync --join`): the operating system's, with
// every fsync left out. Dragonboat's log store always writes with Pebble's
// Sync option (its kv_pebble.go), and Pebble syncs a WAL through the file's
// descriptor when the file has one; the files here do not show theirs
// (noSyncFile hides Fd), so Pebble calls their Sync, which does nothing.
// Snapshot files and the host's own records are not synced either. What
// the operating system has not written out is lost when the machine (not
// the process) stops: the Raft log may then forget entries and votes that
// it acknowledged, which Raft's safety depends on.
//
// Dragonboat's log store accepts no file system but the operating
// system's, its in-memory one and its error-injecting wrapper
// (gvfs.ErrorFS), so noSyncFS goes in that wrapper with an injector that
// injects nothing (noSyncHostFS). Dragonboat takes that wrapper for a test:
// its step workers then end on a panic carrying an error (a failed log
// write) instead of crashing the process, which stops the node's Raft
// groups; the serving node's read lease then lapses and another node
// serves. In a mode that may lose acknowledged writes anyway, that is the
// price of the speed.
type noSyncFS struct {
	gvfs.FS
}

// noSyncFile is a file whose Sync does nothing.
type noSyncFile struct {
	gvfs.File
}

func (noSyncFile) Sync() error { return nil }

func wrapNoSync(f gvfs.File, err error) (gvfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (fs noSyncFS) Create(name string) (gvfs.File, error) { return wrapNoSync(fs.FS.Create(name)) }

func (fs noSyncFS) Open(name string, opts ...gvfs.OpenOption) (gvfs.File, error) {
	return wrapNoSync(fs.FS.Open(name, opts...))
}

func (fs noSyncFS) OpenDir(name string) (gvfs.File, error) { return wrapNoSync(fs.FS.OpenDir(name)) }

func (fs noSyncFS) OpenForAppend(name string) (gvfs.File, error) {
	return wrapNoSync(fs.FS.OpenForAppend(name))
}

func (fs noSyncFS) ReuseForWrite(oldname, newname string) (gvfs.File, error) {
	return wrapNoSync(fs.FS.ReuseForWrite(oldname, newname))
}

// noSyncHostFS is the file system a NoSync host gives dragonboat.
func noSyncHostFS() gvfs.FS { return gvfs.Wrap(noSyncFS{gvfs.Default}, injectNothing{}) }

// injectNothing is a gvfs.Injector that never fails an operation.
type injectNothing struct{}

func (injectNothing) MaybeError(gvfs.Op) error { return nil }
