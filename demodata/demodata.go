package demodata

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"
)

//go:embed files
var embedded embed.FS

// completeMarker is written last into an extracted copy. It is a hidden
// file, so catalogs skip it.
const completeMarker = ".quarry-demo-complete"

// Files returns the bundled demo tree (paths like "weather/daily.csv").
func Files() fs.FS {
	sub, err := fs.Sub(embedded, "files")
	if err != nil {
		panic(err) // "files" is embedded at build time
	}
	return sub
}

var (
	hashOnce sync.Once
	hashVal  string
	hashErr  error
)

// Hash returns a short hex digest of the bundled tree (paths and contents).
// Extract uses it as the name of the extracted directory.
func Hash() (string, error) {
	hashOnce.Do(func() {
		files, err := list()
		if err != nil {
			hashErr = err
			return
		}
		h := sha256.New()
		for _, p := range files {
			b, err := fs.ReadFile(Files(), p)
			if err != nil {
				hashErr = err
				return
			}
			fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
			h.Write(b)
		}
		hashVal = hex.EncodeToString(h.Sum(nil))[:16]
	})
	return hashVal, hashErr
}

// list returns the bundled regular files, sorted.
func list() ([]string, error) {
	var out []string
	err := fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// DefaultDir is where demo data is extracted by default:
// os.UserCacheDir()/quarry/demo, or os.TempDir()/quarry/demo when there is
// no user cache directory.
func DefaultDir() string {
	base, err := os.UserCacheDir()
	if err != nil || base == "" {
		base = os.TempDir()
	}
	return filepath.Join(base, "quarry", "demo")
}

// Extract writes the bundled demo tree into dir/<content hash>/ and returns
// that path. It is idempotent and safe to run concurrently (also from
// several processes): files are written into a temporary sibling directory
// that is renamed into place only when complete, and an existing complete
// copy is reused as it is. dir is created if needed.
func Extract(dir string) (string, error) {
	h, err := Hash()
	if err != nil {
		return "", fmt.Errorf("demodata: reading bundled files: %w", err)
	}
	files, err := list()
	if err != nil {
		return "", fmt.Errorf("demodata: reading bundled files: %w", err)
	}
	if dir == "" {
		dir = DefaultDir()
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", fmt.Errorf("demodata: %w", err)
	}
	target := filepath.Join(dir, h)
	if complete(target, files) {
		return target, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("demodata: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".tmp-"+h+"-")
	if err != nil {
		return "", fmt.Errorf("demodata: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	if err := writeTree(tmp, files); err != nil {
		return "", fmt.Errorf("demodata: extracting: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("demodata: %w", err)
	}
	if err := os.Rename(tmp, target); err != nil {
		if complete(target, files) {
			return target, nil // another extractor won the race
		}
		// A broken copy (e.g. files deleted by hand): move it aside, retry.
		if _, statErr := os.Stat(target); statErr == nil {
			trash, terr := os.MkdirTemp(dir, ".old-"+h+"-")
			if terr != nil {
				return "", fmt.Errorf("demodata: %w", terr)
			}
			defer os.RemoveAll(trash)
			if err := os.Rename(target, filepath.Join(trash, "x")); err != nil && !complete(target, files) {
				return "", fmt.Errorf("demodata: replacing incomplete %s: %w", target, err)
			}
			if err := os.Rename(tmp, target); err != nil && !complete(target, files) {
				return "", fmt.Errorf("demodata: %w", err)
			}
			return target, nil
		}
		return "", fmt.Errorf("demodata: %w", err)
	}
	return target, nil
}

// complete reports whether target holds every bundled file with the right
// size plus the completion marker.
func complete(target string, files []string) bool {
	if _, err := os.Stat(filepath.Join(target, completeMarker)); err != nil {
		return false
	}
	for _, p := range files {
		fi, err := fs.Stat(Files(), p)
		if err != nil {
			return false
		}
		st, err := os.Stat(filepath.Join(target, filepath.FromSlash(p)))
		if err != nil || !st.Mode().IsRegular() || st.Size() != fi.Size() {
			return false
		}
	}
	return true
}

func writeTree(root string, files []string) error {
	for _, p := range files {
		dst := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := copyFile(dst, p); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(root, completeMarker), []byte("ok\n"), 0o644)
}

func copyFile(dst, p string) (err error) {
	src, err := Files().Open(path.Clean(p))
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err = io.Copy(f, src); err != nil {
		return err
	}
	return nil
}
