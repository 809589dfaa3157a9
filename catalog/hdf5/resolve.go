//go:build cgo && !nohdf5

package hdf5

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

// maxLinkHops bounds soft/external link chains (HDF5's own default is 16).
const maxLinkHops = 16

// resolved is an object located by resolve. The caller releases file.
type resolved struct {
	file    *h5.File
	absFile string
	// path is the object's hard-link path in file ("/" for the root group),
	// or, when link is set, the path of the (unfollowed) link itself.
	path string
	// link is set when the final component is a soft or external link that
	// was not followed.
	link *h5.Link
	// followed is true when the path went through at least one link.
	followed bool
	obj      h5.ObjInfo
}

func (r *resolved) release() {
	if r != nil && r.file != nil {
		r.file.Release()
		r.file = nil
	}
}

// resolve locates internalPath in absFile. Intermediate soft links are
// followed inside the file; external links are followed only to files
// inside the allowed root (see Format). With followFinal false a final soft
// or external link is returned undescended.
func (f *Format) resolve(absFile, internalPath string, followFinal bool) (*resolved, error) {
	file, err := f.acquire(f.fileAt(absFile))
	if err != nil {
		return nil, err
	}
	res := &resolved{file: file, absFile: absFile}
	ok := false
	defer func() {
		if !ok {
			res.release()
		}
	}()
	comps := splitInternal(internalPath)
	cur := ""
	hops := 0
	var via string // the last link followed, for dangling-link messages
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		p := cur + "/" + c
		l, exists, err := h5.GetLink(res.file.ID(), p)
		if err != nil {
			// Usually a path component that is a dataset, not a group.
			parent := cur
			if parent == "" {
				parent = "/"
			}
			if oi, e2 := h5.GetObjInfo(res.file.ID(), parent); e2 == nil && oi.Type != h5.ObjGroup {
				return nil, f.missing(res, via, p, "%s is a %s, not a group", parent, oi.Type)
			}
			return nil, qerr.Internal(err, "looking up %s: %v", p, err)
		}
		if !exists {
			return nil, f.missing(res, via, p, "")
		}
		last := len(comps) == 0
		switch l.Type {
		case h5.LinkHard:
			cur = p
			continue
		case h5.LinkSoft, h5.LinkExternal:
			if last && !followFinal {
				res.path, res.link = p, &l
				ok = true
				return res, nil
			}
		default:
			return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "%s is a user-defined link (type %d), which Quarry cannot follow", p, int(l.Type))
		}
		hops++
		if hops > maxLinkHops {
			return nil, qerr.Invalid(qerr.CodeDanglingLink, "too many levels of links resolving %s (a link cycle?)", internalPath)
		}
		via = p
		res.followed = true
		target := splitInternal(l.Target)
		if l.Type == h5.LinkSoft {
			if strings.HasPrefix(l.Target, "/") {
				cur = ""
			}
			comps = append(target, comps...)
			continue
		}
		// External link: switch files.
		abs, err := f.externalTarget(absFile, res.absFile, l.TargetFile)
		if err != nil {
			return nil, err
		}
		nf, err := f.acquire(f.fileAt(abs))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, qerr.NotFound(qerr.CodeDanglingLink, "external link %s points to %s:%s, but that file does not exist", p, l.TargetFile, l.Target)
			}
			return nil, err
		}
		res.file.Release()
		res.file, res.absFile = nf, abs
		cur = ""
		comps = append(target, comps...)
	}
	if cur == "" {
		cur = "/"
	}
	oi, err := h5.GetObjInfo(res.file.ID(), cur)
	if err != nil {
		return nil, qerr.Internal(err, "reading object info of %s: %v", cur, err)
	}
	res.path, res.obj = cur, oi
	ok = true
	return res, nil
}

// missing builds the error for a path component that does not exist:
// dangling_link when a link was followed to get there, else not found.
func (f *Format) missing(res *resolved, via, p, detail string, args ...any) error {
	if via != "" {
		return qerr.NotFound(qerr.CodeDanglingLink, "the link %s is dangling: %s does not exist in %s", via, p, filepath.Base(res.absFile)).
			WithHint("links are shown (not followed) by browsing them; the target must be created for the link to resolve")
	}
	if detail != "" {
		return qerr.NotFound(qerr.CodeResourceNotFound, "no object %s: "+detail, append([]any{p}, args...)...)
	}
	return qerr.NotFound(qerr.CodeResourceNotFound, "no object %s in %s", p, filepath.Base(res.absFile)).
		WithHint("browse the parent group (path=%s) to list its members", parentPath(p))
}

func parentPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// externalTarget resolves an external link's file name relative to the
// directory of the file holding the link and checks it is allowed: inside
// the configured root, or (without one) inside the directory tree of the
// file the request addressed.
func (f *Format) externalTarget(requested, from, target string) (string, error) {
	if target == "" {
		return "", qerr.NotFound(qerr.CodeDanglingLink, "external link with an empty file name")
	}
	abs := target
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(filepath.Dir(from), filepath.FromSlash(target))
	}
	abs = filepath.Clean(abs)
	root := f.root
	if root == "" {
		root = filepath.Dir(requested)
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if !within(root, abs) {
				return "", outsideRoot(target)
			}
			return "", qerr.NotFound(qerr.CodeDanglingLink, "external link target file %s does not exist", target)
		}
		return "", qerr.Internal(err, "resolving external link target %s", target)
	}
	if !within(root, real) {
		return "", outsideRoot(target)
	}
	if st, err := os.Stat(real); err == nil && st.IsDir() {
		return "", qerr.NotFound(qerr.CodeDanglingLink, "external link target %s is a directory", target)
	}
	return real, nil
}

func outsideRoot(target string) error {
	return qerr.New(qerr.ErrPermission, qerr.CodePathOutsideRoot, "the external link points to %s, outside the data root", target).
		WithHint("only files inside the data root can be read")
}

// within reports whether path is root or inside it (both cleaned, absolute).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}
