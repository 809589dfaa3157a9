//go:build unix

package safeopen

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// tree builds a root with a data file, a subdirectory, symlinks inside and
// out of it, a FIFO, and a secret file outside the root.
func tree(t *testing.T) (root, secret string) {
	t.Helper()
	base := t.TempDir()
	base, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	secret = filepath.Join(base, "secret.csv")
	must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "a.csv"), []byte("inside"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "sub", "b.csv"), []byte("inside b"), 0o644))
	must(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(root, "out.csv")))
	must(t, os.Symlink("a.csv", filepath.Join(root, "in.csv")))
	must(t, os.Symlink(base, filepath.Join(root, "updir")))
	must(t, os.Symlink("sub", filepath.Join(root, "subln")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo.csv"), 0o644))
	return root, secret
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	root, secret := tree(t)
	st, err := os.Stat(filepath.Join(root, "a.csv"))
	must(t, err)
	aID := IdentityOf(st)
	if aID.IsZero() {
		t.Fatal("no identity on a Unix system")
	}
	tests := []struct {
		name string
		abs  string
		want Identity
		err  error // nil: opens and reads want content
		data string
	}{
		{"plain", filepath.Join(root, "a.csv"), Identity{}, nil, "inside"},
		{"subdir", filepath.Join(root, "sub", "b.csv"), Identity{}, nil, "inside b"},
		{"identity matches", filepath.Join(root, "a.csv"), aID, nil, "inside"},
		{"identity differs", filepath.Join(root, "sub", "b.csv"), aID, ErrReplaced, ""},
		{"symlink out", filepath.Join(root, "out.csv"), Identity{}, ErrOutside, ""},
		{"symlink in (never followed)", filepath.Join(root, "in.csv"), Identity{}, ErrOutside, ""},
		{"symlinked dir up", filepath.Join(root, "updir", "secret.csv"), Identity{}, ErrOutside, ""},
		{"symlinked dir in", filepath.Join(root, "subln", "b.csv"), Identity{}, ErrOutside, ""},
		{"dotdot", filepath.Join(root, "..", "secret.csv"), Identity{}, ErrOutside, ""},
		{"absolute elsewhere", secret, Identity{}, ErrOutside, ""},
		{"directory", filepath.Join(root, "sub"), Identity{}, ErrNotRegular, ""},
		{"root itself", root, Identity{}, ErrNotRegular, ""},
		{"fifo does not block", filepath.Join(root, "fifo.csv"), Identity{}, ErrNotRegular, ""},
		{"missing", filepath.Join(root, "nope.csv"), Identity{}, fs.ErrNotExist, ""},
		{"missing dir", filepath.Join(root, "nope", "x.csv"), Identity{}, fs.ErrNotExist, ""},
	}
	for _, mode := range []string{"openat2", "walk"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "walk" {
				forceWalk(t)
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					f, err := Open(root, tc.abs, tc.want)
					if tc.err != nil {
						if f != nil {
							f.Close()
						}
						if !errors.Is(err, tc.err) {
							t.Fatalf("err %v, want %v", err, tc.err)
						}
						var pe *fs.PathError
						if !errors.As(err, &pe) || filepath.IsAbs(pe.Path) {
							t.Fatalf("error %#v must be a *fs.PathError with a relative path", err)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					b, err := io.ReadAll(f)
					must(t, err)
					if string(b) != tc.data {
						t.Fatalf("read %q, want %q", b, tc.data)
					}
					fi, err := Stat(root, tc.abs, tc.want)
					must(t, err)
					if fi.Size() != int64(len(tc.data)) {
						t.Fatalf("Stat size %d", fi.Size())
					}
				})
			}
		})
	}
}

// TestOpenSwapped: the attack itself — a file checked once, then replaced
// by a symlink (or a symlink renamed over it) — is refused with either
// lookup.
func TestOpenSwapped(t *testing.T) {
	for _, mode := range []string{"openat2", "walk"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "walk" {
				forceWalk(t)
			}
			root, secret := tree(t)
			p := filepath.Join(root, "a.csv")
			st, err := Stat(root, p, Identity{})
			must(t, err)
			id := IdentityOf(st)

			must(t, os.Remove(p))
			must(t, os.Symlink(secret, p))
			if _, err := Open(root, p, id); !errors.Is(err, ErrOutside) {
				t.Fatalf("replaced by a symlink: %v", err)
			}
			if _, err := Open(root, p, Identity{}); !errors.Is(err, ErrOutside) {
				t.Fatalf("replaced by a symlink, no identity: %v", err)
			}

			must(t, os.Remove(p))
			must(t, os.WriteFile(p, []byte("inside"), 0o644))
			tmp := filepath.Join(root, "tmp-link")
			must(t, os.Symlink(secret, tmp))
			must(t, os.Rename(tmp, p))
			if _, err := Open(root, p, id); !errors.Is(err, ErrOutside) {
				t.Fatalf("symlink renamed over: %v", err)
			}

			// A directory above the file swapped for a symlink to outside.
			sub := filepath.Join(root, "sub")
			must(t, os.Rename(sub, filepath.Join(root, "sub-old")))
			must(t, os.Symlink(filepath.Dir(secret), sub))
			if _, err := Open(root, filepath.Join(sub, "secret.csv"), Identity{}); !errors.Is(err, ErrOutside) {
				t.Fatalf("directory swapped: %v", err)
			}

			// A regular file renamed over it (written while the old one
			// still exists, so a new inode) is ErrReplaced, not ErrOutside.
			must(t, os.Remove(p))
			must(t, os.WriteFile(p, []byte("inside"), 0o644))
			st, err = Stat(root, p, Identity{})
			must(t, err)
			id = IdentityOf(st)
			must(t, os.WriteFile(tmp, []byte("new"), 0o644))
			must(t, os.Rename(tmp, p))
			if _, err := Open(root, p, id); !errors.Is(err, ErrReplaced) {
				t.Fatalf("rewritten file: %v", err)
			}
		})
	}
}
