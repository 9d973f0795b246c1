package hlc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HighWaterStore persists the clock's high-water mark: a wall time (ns) that
// every timestamp handed out so far is below.
type HighWaterStore interface {
	// Load returns the stored mark, or 0 if none was ever stored.
	Load() (int64, error)
	// Store durably replaces the mark: once it returns, a crash of the
	// process or the machine cannot bring back an older value.
	Store(wallTime int64) error
}

// fileHeader starts the high-water file; the version lets a later format be
// told apart instead of misread.
const fileHeader = "pivotdb-hlc-high-water v1 "

// FileStore keeps the high-water mark in one small file, replaced atomically
// (write a temporary file, fsync it, rename it over the old one, fsync the
// directory), so a crash leaves either the old or the new mark, never a torn
// one.
type FileStore struct {
	Path string
}

var _ HighWaterStore = FileStore{}

// Load reads the mark; a missing file is 0 (a new data directory). A file in
// another format is an error: guessing could make the clock go backwards.
func (s FileStore) Load() (int64, error) {
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	text, ok := strings.CutPrefix(string(b), fileHeader)
	text, nl := strings.CutSuffix(text, "\n")
	w, err := strconv.ParseInt(text, 10, 64)
	if !ok || !nl || err != nil || w < 0 {
		return 0, fmt.Errorf("hlc: %s is not a high-water file (%q)", s.Path, b)
	}
	return w, nil
}

// Store replaces the mark durably.
func (s FileStore) Store(wallTime int64) error {
	dir := filepath.Dir(s.Path)
	tmp, err := os.CreateTemp(dir, filepath.Base(s.Path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := fmt.Fprintf(tmp, "%s%d\n", fileHeader, wallTime); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
