package catalog

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/safeopen"
)

// candidate is a file some Format claims.
type candidate struct {
	info   FileInfo
	fmtIdx int // index into Catalog.formats
}

// walk lists candidate files under the root (sorted by relative path, with
// BaseIDs assigned) and the problems met on the way. It follows symlinks
// that stay inside the root, visits every real directory at most once (so
// symlink cycles terminate), skips hidden names and never opens a file.
// Schema card sidecars (IsCardFile) are returned separately, never as
// candidates.
func (c *Catalog) walk(ctx context.Context, prev []Diagnostic) ([]candidate, []FileInfo, []Diagnostic, error) {
	w := &walker{c: c, visited: map[string]string{c.root: "."}, known: make(map[Diagnostic]bool, len(prev))}
	for _, d := range prev {
		w.known[d] = true
	}
	if err := w.dir(ctx, c.root, c.root, ""); err != nil {
		return nil, nil, nil, err
	}
	assignBaseIDs(w.cands)
	return w.cands, w.sidecars, w.diags, nil
}

type walker struct {
	c        *Catalog
	visited  map[string]string // real directory path -> relative path it was scanned as
	cands    []candidate
	sidecars []FileInfo // schema card files
	diags    []Diagnostic
	known    map[Diagnostic]bool // reported by the previous scan: not logged again
}

func (w *walker) diag(rel, level, format string, args ...any) {
	d := Diagnostic{Path: rel, Level: level, Reason: fmt.Sprintf(format, args...)}
	w.diags = append(w.diags, d)
	if !w.known[d] {
		w.c.log.Warn("catalog: skipping path", "path", rel, "reason", d.Reason)
	}
}

// dir scans one directory. logical is the path through any symlinks (used
// for reading), real its resolved path, rel its path relative to the root
// ("" for the root).
func (w *walker) dir(ctx context.Context, logical, real, rel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(logical)
	if err != nil && len(entries) == 0 {
		w.diag(relOrDot(rel), "warning", "cannot read directory: %v", unwrapPathErr(err))
		return nil
	}
	for _, ent := range entries {
		name := ent.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		childLogical := filepath.Join(logical, name)
		childReal := filepath.Join(real, name)
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		if !utf8.ValidString(name) {
			// Its id would reach clients with U+FFFD in place of the bad
			// bytes and never be found again: skip it, saying so.
			w.diag(escapeInvalidUTF8(childRel), "warning", "the name is not valid UTF-8 and could not be addressed; skipped (rename it)")
			continue
		}
		var st fs.FileInfo
		if ent.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(childLogical)
			if err != nil {
				w.diag(childRel, "warning", "broken symlink: %v", unwrapPathErr(err))
				continue
			}
			if !within(w.c.root, target) {
				w.diag(childRel, "warning", "symlink points outside the data root; skipped")
				continue
			}
			childReal = target
		}
		st, err = os.Stat(childLogical)
		if err != nil {
			w.diag(childRel, "warning", "cannot stat: %v", unwrapPathErr(err))
			continue
		}
		switch {
		case st.IsDir():
			if prev, seen := w.visited[childReal]; seen {
				w.diag(childRel, "warning", "directory already scanned as %s (symlink loop or alias); skipped", prev)
				continue
			}
			w.visited[childReal] = relOrDot(childRel)
			if err := w.dir(ctx, childLogical, childReal, childRel); err != nil {
				return err
			}
		case IsCardFile(name):
			if st.Mode().IsRegular() {
				w.sidecars = append(w.sidecars, FileInfo{AbsPath: childReal, RelPath: childRel, Size: st.Size(), ModTime: st.ModTime(),
					Root: w.c.root, FileID: safeopen.IdentityOf(st)})
			}
		default:
			fi := w.c.match(name)
			if fi < 0 {
				continue
			}
			if !st.Mode().IsRegular() {
				w.diag(childRel, "warning", "not a regular file; skipped")
				continue
			}
			w.cands = append(w.cands, candidate{
				info: FileInfo{
					AbsPath: childReal,
					RelPath: childRel,
					Size:    st.Size(),
					ModTime: st.ModTime(),
					Root:    w.c.root,
					FileID:  safeopen.IdentityOf(st),
				},
				fmtIdx: fi,
			})
		}
	}
	return nil
}

// escapeInvalidUTF8 shows s with each byte that is not part of valid UTF-8
// as \xNN (for diagnostics, which are JSON strings).
func escapeInvalidUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&b, "\\x%02x", s[i])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

func relOrDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// unwrapPathErr drops the absolute path from *fs.PathError so diagnostics
// only show root-relative paths.
func unwrapPathErr(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// match returns the index of the first Format that claims the file name, or -1.
func (c *Catalog) match(name string) int {
	for i, f := range c.formats {
		if f.Match(name) {
			return i
		}
	}
	return -1
}

// within reports whether p (absolute, cleaned) is root or inside it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// compressionExts are outer extensions stripped together with the inner one.
var compressionExts = []string{".gz", ".bz2", ".xz", ".zst", ".zstd", ".lz4"}

// splitExt splits a file name into stem and extension, treating a
// compression suffix plus the extension before it as one (".csv.gz").
func splitExt(name string) (stem, ext string) {
	e1 := path.Ext(name)
	if e1 == "" || e1 == name {
		return name, ""
	}
	stem = name[:len(name)-len(e1)]
	for _, c := range compressionExts {
		if strings.EqualFold(e1, c) {
			if e2 := path.Ext(stem); e2 != "" && e2 != stem {
				return stem[:len(stem)-len(e2)], e2 + e1
			}
			break
		}
	}
	return stem, e1
}

// baseID is rel without its extension.
func baseID(rel string) string {
	dir, name := path.Split(rel)
	stem, _ := splitExt(name)
	return dir + stem
}

// assignBaseIDs sets BaseID on every candidate: the path without extension,
// or the full path when several candidates would share that base.
func assignBaseIDs(cands []candidate) {
	count := make(map[string]int, len(cands))
	for i := range cands {
		b := baseID(cands[i].info.RelPath)
		cands[i].info.BaseID = b
		count[b]++
	}
	for i := range cands {
		if count[cands[i].info.BaseID] > 1 {
			cands[i].info.BaseID = cands[i].info.RelPath
		}
	}
}

// openAll opens entries with a bounded worker pool; opened (if not nil)
// gets each entry once it is open.
func (c *Catalog) openAll(ctx context.Context, todo []*fileEntry, opened func(*fileEntry)) error {
	if len(todo) == 0 {
		return ctx.Err()
	}
	jobs := make(chan *fileEntry)
	var wg sync.WaitGroup
	for range min(c.workers, len(todo)) {
		wg.Go(func() {
			for e := range jobs {
				c.openOne(ctx, e)
				c.pending.Add(-1)
				if opened != nil && ctx.Err() == nil {
					opened(e)
				}
			}
		})
	}
feed:
	for _, e := range todo {
		select {
		case jobs <- e:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return ctx.Err()
}

// openOne runs the entry's Format.Open, turning errors and panics into a
// skipped file.
func (c *Catalog) openOne(ctx context.Context, e *fileEntry) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("catalog: format panicked", "path", e.info.RelPath, "panic", p, "stack", string(debug.Stack()))
			e.datasets = nil
			e.err = qerr.Internal(fmt.Errorf("panic: %v", p), "internal error while reading the file")
		}
	}()
	ds, err := c.openVersion(ctx, e)
	if err == nil && len(ds) == 0 {
		err = qerr.Unsupported(qerr.CodeUnsupportedFormat, "the file holds no tables").Wrap(ErrNoTables)
	}
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("catalog: skipping file", "path", e.info.RelPath, "kind", e.format.Kind(), "reason", reason(err))
		}
		e.err = err
		return
	}
	for _, d := range ds {
		if d == nil || d.Source == nil {
			e.err = qerr.Internal(fmt.Errorf("format %s returned a dataset without a source", e.format.Kind()), "internal error while reading the file")
			return
		}
	}
	e.datasets = ds
}
