package artifacts

import (
	"os"
	"path/filepath"
)

// TempDir is a private scratch directory in a store directory (a join's
// spill partitions): named like a Writer's temp file (".tmp-*") and locked
// the same way while it lives, so that the directory of a process killed
// mid-spill is deleted, with everything in it, by the next Open or sweep of
// a Store over that directory.
type TempDir struct {
	// Path is the directory's absolute path.
	Path string
	lock *os.File
}

// MkdirTemp creates a TempDir in parent (a store directory) whose name
// starts with ".tmp-" + pattern (os.MkdirTemp's pattern).
func MkdirTemp(parent, pattern string) (*TempDir, error) {
	dir, err := os.MkdirTemp(parent, tempPrefix+pattern)
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	f, err := os.Open(dir)
	if err == nil {
		err = lockTemp(f)
	}
	if err != nil {
		if f != nil {
			_ = f.Close()
		}
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &TempDir{Path: dir, lock: f}, nil
}

// Remove deletes the directory and everything in it, and drops its lock.
func (d *TempDir) Remove() error {
	err := os.RemoveAll(d.Path)
	_ = d.lock.Close()
	return err
}
