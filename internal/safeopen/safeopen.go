package safeopen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

var (
	// ErrOutside: the path leaves the root, or a component of it (the file
	// itself or a directory above it) is a symbolic link.
	ErrOutside = errors.New("the path leaves the data root or goes through a symbolic link")
	// ErrReplaced: the file opened is not the one expected (another device
	// or inode than Identity says): it was replaced since it was seen.
	ErrReplaced = errors.New("the file was replaced since it was cataloged")
	// ErrNotRegular: the path names a directory, FIFO, device or socket.
	ErrNotRegular = errors.New("not a regular file")
)

// Identity names a file independently of its path: device and inode on
// Unix. The zero Identity means "unknown" and matches any file.
type Identity struct {
	Dev, Ino uint64
}

// IsZero reports whether id is unknown.
func (id Identity) IsZero() bool { return id == Identity{} }

// IdentityOf returns the identity of the file fi describes (from os.Stat,
// os.Lstat or File.Stat); zero where the platform has none.
func IdentityOf(fi fs.FileInfo) Identity {
	if fi == nil {
		return Identity{}
	}
	return identityOf(fi)
}

// Open opens the regular file abs for reading. root and abs are absolute
// and cleaned; abs must lie inside root and, below root, contain no
// symbolic link (it is the resolved path the catalog recorded). A path that
// leaves root or meets a symlink is an error wrapping ErrOutside; a
// directory, FIFO or device one wrapping ErrNotRegular; when want is not
// zero, a file of another identity one wrapping ErrReplaced. A missing file
// wraps fs.ErrNotExist. Errors are *fs.PathError whose Path is abs relative
// to root (never the absolute path).
func Open(root, abs string, want Identity) (*os.File, error) {
	rel, err := relative(root, abs)
	if err != nil {
		return nil, err
	}
	f, err := openBeneath(root, rel)
	if err != nil {
		return nil, pathErr(rel, err)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
	case !st.Mode().IsRegular():
		err = ErrNotRegular
	case !want.IsZero() && IdentityOf(st) != want:
		err = ErrReplaced
	default:
		if err = ready(f); err == nil {
			return f, nil
		}
	}
	f.Close()
	return nil, pathErr(rel, err)
}

// Stat is Open, then File.Stat, then Close: the confined equivalent of
// os.Stat for a data file.
func Stat(root, abs string, want Identity) (fs.FileInfo, error) {
	f, err := Open(root, abs, want)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// relative returns abs relative to root, slash separated, or ErrOutside.
func relative(root, abs string) (string, error) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || !filepath.IsAbs(root) || !filepath.IsAbs(abs) || !filepath.IsLocal(rel) {
		return "", pathErr(filepath.Base(abs), ErrOutside)
	}
	return filepath.ToSlash(rel), nil
}

func pathErr(rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: "open", Path: rel, Err: err}
}
