package catalog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/safeopen"
)

// ResolvePath confines a user-supplied path to the data root. p is relative
// to the root (either separator style is cleaned; "" and "." mean the root)
// or absolute inside it. Symlinks are resolved; p need not exist, in which
// case its longest existing prefix is resolved and the rest appended.
//
// It returns the resolved absolute path and the path relative to the root,
// slash separated ("." for the root itself). Anything that lands outside
// the root — "..", an absolute path elsewhere, a symlink whose target is
// outside — is a *qerr.Error of category ErrPermission with code
// path_outside_root.
func (c *Catalog) ResolvePath(p string) (abs, rel string, err error) {
	if strings.ContainsRune(p, 0) {
		return "", "", qerr.Invalid(qerr.CodeInvalidArgument, "path contains a NUL byte")
	}
	var cand string
	if filepath.IsAbs(p) {
		cand = filepath.Clean(p)
	} else {
		clean := filepath.Clean(filepath.FromSlash(p))
		if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return "", "", outsideRoot(p)
		}
		cand = filepath.Join(c.root, clean)
	}
	resolved, err := resolveExisting(cand)
	if err != nil {
		return "", "", qerr.Internal(err, "cannot resolve path %q", p)
	}
	if !within(c.root, resolved) {
		return "", "", outsideRoot(p)
	}
	r, err := filepath.Rel(c.root, resolved)
	if err != nil {
		return "", "", outsideRoot(p)
	}
	return resolved, filepath.ToSlash(r), nil
}

func outsideRoot(p string) *qerr.Error {
	return qerr.New(qerr.ErrPermission, qerr.CodePathOutsideRoot, "path %q is outside the data root", p).
		WithHint("use a path relative to the data root, without \"..\"")
}

// confineErr turns a refused confined open of the data file rel
// (internal/safeopen) into a *qerr.Error; other errors are returned as
// they are.
func confineErr(rel string, err error) error {
	switch {
	case errors.Is(err, safeopen.ErrOutside):
		return qerr.New(qerr.ErrPermission, qerr.CodePathOutsideRoot,
			"%s is now reached through a symbolic link that was not there when the catalog was scanned (the file or a folder above it was replaced); it is not read", rel).
			WithHint("only files inside the data root are read: the file must be restored as a regular file").
			With("path", rel).Wrap(err)
	case errors.Is(err, safeopen.ErrReplaced):
		return qerr.NotFound(qerr.CodeDatasetNotFound, "%s was replaced since the catalog read it", rel).
			WithHint("call the tool again: the catalog re-reads the new file").
			With("path", rel).Wrap(err)
	}
	return err
}

// resolveExisting evaluates symlinks in the longest existing prefix of p
// (absolute, cleaned) and appends the non-existing rest.
func resolveExisting(p string) (string, error) {
	var rest []string
	cur := p
	for range 256 {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err // a symlink loop, a permission problem, ...
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// cur is a dangling symlink: follow its target lexically so
			// an escaping target is still caught.
			target, rerr := os.Readlink(cur)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			cur = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
	return "", errors.New("too many levels of symbolic links")
}
