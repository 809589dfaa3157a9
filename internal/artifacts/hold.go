package artifacts

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Held artifacts.
//
// A result handle's spill file is a committed artifact that nobody outside
// the process knows of until it is handed out as a file result (or shared
// with other replicas). While it is held, a marker file ".hold-<id>" sits
// next to it, locked by the holding process like a Writer's temp file
// (flock, dropped by the kernel when the process dies, even by SIGKILL).
// Open and the sweeper of any Store over the directory delete an artifact
// whose marker nobody holds locked (and is at least OrphanTempAge old),
// with the marker: the artifact of a process that died holding it, which
// nothing can reach any more. Without file locks (not unix) markers are
// never taken for orphans and held artifacts of a crashed process live
// until the TTL, as any artifact.

const holdPrefix = ".hold-"

// Hold keeps a committed artifact private to this process; see
// Writer.CommitHeld.
type Hold struct {
	path string
	f    *os.File
	once sync.Once
}

// CommitHeld commits the artifact like Commit and holds it: should this
// process die before Release, the next Open or sweep of a Store over the
// directory deletes it. Release the hold once the artifact is handed out
// (it then lives until its TTL like any other), or after deleting it.
func (w *Writer) CommitHeld() (Artifact, *Hold, error) {
	var h *Hold
	a, err := w.commit(func(id string) error {
		var err error
		h, err = w.s.hold(id)
		return err
	})
	if err != nil {
		h.Release() // made before a failed rename
		return Artifact{}, nil, err
	}
	return a, h, nil
}

// hold creates and locks artifact id's marker. s.mu is held (commitLocked,
// before the artifact's rename: the artifact is never visible unmarked).
func (s *Store) hold(id string) (*Hold, error) {
	p := filepath.Join(s.dir, holdPrefix+id)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, ioError(err, "cannot create an artifact file")
	}
	if err := lockTemp(f); err != nil {
		_ = f.Close()
		_ = os.Remove(p)
		return nil, qerr.Internal(err, "cannot lock the artifact file")
	}
	return &Hold{path: p, f: f}, nil
}

// Release ends the hold: the marker is removed. The artifact, if not
// deleted, stays like any other. Release is idempotent; nil is a no-op.
func (h *Hold) Release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		_ = os.Remove(h.path)
		_ = h.f.Close()
	})
}

// orphanHolds returns the ids of the held artifacts among entries (the
// store directory's) whose holder died, and their markers' paths: no
// process holds the marker locked and it is at least OrphanTempAge old.
func (s *Store) orphanHolds(entries []os.DirEntry, now time.Time) (ids map[string]bool, markers []string) {
	if !locksSupported {
		return nil, nil
	}
	for _, de := range entries {
		id, ok := strings.CutPrefix(de.Name(), holdPrefix)
		if !ok || !de.Type().IsRegular() {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(s.dir, de.Name())
		if now.Sub(fi.ModTime()) < OrphanTempAge || tempInUse(p) {
			continue
		}
		if ids == nil {
			ids = map[string]bool{}
		}
		ids[id] = true
		markers = append(markers, p)
	}
	return ids, markers
}
