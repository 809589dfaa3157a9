package artifacts

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
)

// Artifacts in an object store (Options.Remote).
//
// With a Remote, the object store is where artifacts live for every
// replica; the store directory is this replica's staging area and cache.
// A Writer still fills a local temp file; Commit renames it into the
// directory and uploads it as the object "<id>.<ext>" with its owner and
// creation time in the object's metadata. The upload is atomic (an object
// is visible whole or not at all); if it fails, Commit fails and the local
// file is deleted, so no replica ever sees a partial or unshared artifact.
//
// Get of an artifact this Store does not hold (written by another replica,
// or found in the directory at Open with no known owner) reads the
// object's metadata: the owner binding travels with the object. Such an
// artifact has no local Path; Open and ReadRange read it with ranged GETs
// (whole blocks cached briefly), and GetLocal copies it into the directory
// first, for the readers that need a file (read_result, export).
//
// Expiry: every replica's sweeper lists the objects and deletes those
// older than the TTL (by their upload time). Quota: the objects under the
// prefix, all replicas together, are kept under Options.Quota: a Commit
// that would exceed it (by the last listing plus this replica's uploads
// since) lists the objects again and deletes the oldest first; the sweeper
// does the same every SweepInterval. The local directory is a cache kept
// under the same quota: evicting a local copy leaves the object in place.

// RemoteOpTimeout bounds each object-store call but an upload: a stalled
// store fails the request that needs it rather than hanging it.
const RemoteOpTimeout = 10 * time.Second

// Upload bounds: an upload may take RemoteOpTimeout plus one second per
// uploadRate bytes.
const uploadRate = 4 << 20

// remoteBlock is the size of the blocks ranged reads fetch and cache.
const remoteBlock = 1 << 20

// remoteBlocks is how many blocks one open remote artifact caches.
const remoteBlocks = 4

// Remote is an object store holding artifacts as objects named
// "<id>.<ext>" (see package s3store). Implementations are safe for
// concurrent use; a missing object is reported as fs.ErrNotExist (wrapped).
type Remote interface {
	// Put uploads size bytes of r as object name with info's owner and
	// creation time, atomically: on any error no object is visible.
	Put(ctx context.Context, name string, r io.Reader, size int64, info ObjectInfo) error
	// Stat returns the object's size, creation time and owner.
	Stat(ctx context.Context, name string) (ObjectInfo, error)
	// ReadAt reads len(p) bytes of the object from off, as io.ReaderAt.
	ReadAt(ctx context.Context, name string, p []byte, off int64) (int, error)
	// Delete removes the object; a missing one is not an error.
	Delete(ctx context.Context, name string) error
	// List calls fn for every object (Owner not filled), in any order.
	List(ctx context.Context, fn func(ObjectInfo) error) error
	// Check reports whether the store can be reached and written.
	Check(ctx context.Context) error
	// Location names the store in messages and logs (s3://bucket/prefix).
	Location() string
}

// ObjectInfo describes one object of a Remote.
type ObjectInfo struct {
	// Name is the object name relative to the store's prefix, "<id>.<ext>".
	Name string
	// Size is the object's size in bytes.
	Size int64
	// Created is when the artifact was committed (from the object's
	// metadata; List gives the upload time instead).
	Created time.Time
	// Owner is the principal the artifact belongs to (Stat only).
	Owner string
}

// File is an open artifact: a local file or a remote object read in
// ranges. *os.File implements it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
}

// remoteState is a Store's view of its Remote.
type remoteState struct {
	r Remote

	mu    sync.Mutex
	used  int64 // bytes under the prefix: the last listing plus uploads since
	known bool  // used comes from a listing
}

// openRemote checks that r can be reached before the Store is used.
func (s *Store) openRemote(r Remote) error {
	ctx, cancel := context.WithTimeout(context.Background(), RemoteOpTimeout)
	defer cancel()
	if err := r.Check(ctx); err != nil {
		return remoteError(r, err, "cannot use the artifact store")
	}
	s.remote = &remoteState{r: r}
	return nil
}

// remoteError is a failed object-store call (doing what): a missing
// object is the artifact's absence (resource_not_found); anything else
// means the store cannot be reached or used now: resource_exhausted with
// reason store_unreachable and the hint to get results inline.
func remoteError(r Remote, err error, what string) *qerr.Error {
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return qe
	}
	return qerr.Limit(qerr.CodeResourceExhausted, "%s: the artifact store %s cannot be reached or used", what, r.Location()).
		WithHint(storageHint).With("reason", "store_unreachable").With("store", r.Location()).Wrap(err)
}

func remoteCtx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// upload makes the committed local artifact a the object a's name, for
// owner; on failure the local artifact is deleted and the error returned.
func (s *Store) upload(a Artifact, owner string) error {
	rs := s.remote
	if rs == nil {
		return nil
	}
	fail := func(err error) error {
		s.mu.Lock()
		if r := s.arts[a.ID]; r != nil {
			s.removeLocked(r)
		}
		s.mu.Unlock()
		return err
	}
	if err := s.reserveRemote(a.Size); err != nil {
		return fail(err)
	}
	f, err := os.Open(a.Path)
	if err != nil {
		return fail(qerr.Internal(err, "cannot read the artifact file"))
	}
	defer f.Close()
	ctx, cancel := remoteCtx(RemoteOpTimeout + time.Duration(a.Size/uploadRate)*time.Second)
	defer cancel()
	name := a.ID + "." + a.Ext
	if err := rs.r.Put(ctx, name, f, a.Size, ObjectInfo{Name: name, Size: a.Size, Created: a.Created, Owner: owner}); err != nil {
		return fail(remoteError(rs.r, err, "cannot store the artifact"))
	}
	rs.mu.Lock()
	rs.used += a.Size
	rs.mu.Unlock()
	return nil
}

// reserveRemote makes room for size more bytes under the prefix, listing
// the objects (and deleting the oldest) when the known usage says they
// would not fit.
func (s *Store) reserveRemote(size int64) error {
	rs := s.remote
	rs.mu.Lock()
	fits := rs.known && rs.used+size <= s.quota
	rs.mu.Unlock()
	if fits {
		return nil
	}
	return s.sweepRemote(size)
}

// sweepRemote lists the objects, deletes the expired ones, then the
// oldest until incoming more bytes fit in the quota, and records the
// usage. Objects whose names are not artifact names are left alone.
func (s *Store) sweepRemote(incoming int64) error {
	rs := s.remote
	if rs == nil {
		return nil
	}
	ctx, cancel := remoteCtx(6 * RemoteOpTimeout)
	defer cancel()
	var objs []ObjectInfo
	err := rs.r.List(ctx, func(o ObjectInfo) error {
		if _, _, ok := parseName(o.Name); ok {
			objs = append(objs, o)
		}
		return nil
	})
	if err != nil {
		return remoteError(rs.r, err, "cannot list the artifact store")
	}
	slices.SortFunc(objs, func(a, b ObjectInfo) int { return a.Created.Compare(b.Created) })
	now := s.now()
	var used int64
	for _, o := range objs {
		used += o.Size
	}
	for _, o := range objs {
		if !s.expired(o.Created, now) && used+incoming <= s.quota {
			break
		}
		if err := rs.r.Delete(ctx, o.Name); err != nil {
			return remoteError(rs.r, err, "cannot delete from the artifact store")
		}
		used -= o.Size
	}
	rs.mu.Lock()
	rs.used, rs.known = used, true
	rs.mu.Unlock()
	return nil
}

// readError is a failed read of artifact uri: a *qerr.Error (a remote
// artifact gone or its store unreachable) as it is, anything else internal.
func readError(err error, uri string) *qerr.Error {
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return qe
	}
	return qerr.Internal(err, "cannot read artifact %s", uri)
}

// sweepRemoteLogged is the sweeper's remote pass.
func (s *Store) sweepRemoteLogged() {
	if err := s.sweepRemote(0); err != nil {
		s.log.Warn("artifact store sweep failed", "err", err)
	}
}

// getRemote is Get's part for artifacts in the Remote: ok is false when
// Get should answer from the local records (no Remote, or an artifact this
// Store knows with its owner). Otherwise it answers from the object's
// metadata, resolving the owner of a local copy adopted at Open.
func (s *Store) getRemote(id, ext, uri, principal string) (Artifact, bool, error) {
	rs := s.remote
	if rs == nil {
		return Artifact{}, false, nil
	}
	s.mu.Lock()
	r := s.arts[id]
	local := r != nil && !r.adopted
	s.mu.Unlock()
	if local {
		return Artifact{}, false, nil
	}
	ctx, cancel := remoteCtx(RemoteOpTimeout)
	defer cancel()
	o, err := rs.r.Stat(ctx, id+"."+ext)
	if errors.Is(err, fs.ErrNotExist) {
		if r != nil { // a copy left by an earlier run of an artifact gone from the store
			s.mu.Lock()
			if cur := s.arts[id]; cur == r {
				s.removeLocked(r)
			}
			s.mu.Unlock()
		}
		return Artifact{}, true, gone(uri)
	}
	if err != nil {
		return Artifact{}, true, remoteError(rs.r, err, "cannot read artifact "+clip(uri))
	}
	if o.Owner != principal || s.expired(o.Created, s.now()) {
		return Artifact{}, true, gone(uri)
	}
	if r != nil {
		s.mu.Lock()
		if cur := s.arts[id]; cur == r && r.adopted {
			r.owner, r.adopted = o.Owner, false
		}
		s.mu.Unlock()
		return Artifact{}, false, nil
	}
	a := s.artifact(id, ext, o.Size, o.Created)
	a.Path = "" // not on this replica's disk
	return a, true, nil
}

// deleteRemote deletes the object of artifact id.ext (best effort: the
// sweeper deletes it when it expires).
func (s *Store) deleteRemote(id, ext string) {
	rs := s.remote
	if rs == nil {
		return
	}
	ctx, cancel := remoteCtx(RemoteOpTimeout)
	defer cancel()
	if err := rs.r.Delete(ctx, id+"."+ext); err != nil {
		s.log.Warn("artifact not deleted from the artifact store", "artifact", id+"."+ext, "store", rs.r.Location(), "err", err)
	}
}

// RemoteLocation names the object store (s3://bucket/prefix), "" without.
func (s *Store) RemoteLocation() string {
	if s.remote == nil {
		return ""
	}
	return s.remote.r.Location()
}

// remoteWritable is Writable's check of the Remote.
func (s *Store) remoteWritable() error {
	if s.remote == nil {
		return nil
	}
	ctx, cancel := remoteCtx(RemoteOpTimeout)
	defer cancel()
	if err := s.remote.r.Check(ctx); err != nil {
		return remoteError(s.remote.r, err, "cannot use the artifact store")
	}
	return nil
}

// Reader opens artifact a (as Get returned it) for reading: its local
// file, or its object read in ranges when it has no local Path.
func (s *Store) Reader(a Artifact) (File, error) {
	if a.Path != "" || s.remote == nil {
		f, err := os.Open(a.Path)
		if errors.Is(err, fs.ErrNotExist) { // evicted since Get
			return nil, gone(a.URI)
		}
		if err != nil {
			return nil, qerr.Internal(err, "cannot read artifact %s", a.URI)
		}
		return f, nil
	}
	br := &blockReader{s: s, a: a, cache: true}
	return &remoteFile{SectionReader: io.NewSectionReader(br, 0, a.Size)}, nil
}

// GetLocal is Get for readers that need a file on this replica's disk: an
// artifact held only by the Remote is copied into the store directory
// first (then kept, and served locally, like one written here).
func (s *Store) GetLocal(uri, principal string) (Artifact, error) {
	a, err := s.Get(uri, principal)
	if err != nil || a.Path != "" {
		return a, err
	}
	return s.fetch(a, principal)
}

// fetch copies the remote artifact a of owner into the store directory.
func (s *Store) fetch(a Artifact, owner string) (Artifact, error) {
	f, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return Artifact{}, ioError(err, "cannot create an artifact file")
	}
	tmp := f.Name()
	s.mu.Lock()
	s.temps[filepath.Base(tmp)] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.temps, filepath.Base(tmp))
		s.mu.Unlock()
		_ = os.Remove(tmp) // gone already when renamed
	}()
	if err := lockTemp(f); err != nil {
		_ = f.Close()
		return Artifact{}, qerr.Internal(err, "cannot lock the artifact file")
	}
	src := io.NewSectionReader(&blockReader{s: s, a: a}, 0, a.Size)
	// Hide f's ReadFrom: it would copy in 32 KiB reads, one GET each.
	_, err = io.CopyBuffer(struct{ io.Writer }{f}, src, make([]byte, 4*remoteBlock))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var qe *qerr.Error
		if errors.As(err, &qe) {
			return Artifact{}, qe
		}
		return Artifact{}, ioError(err, "cannot copy the artifact to the local directory")
	}
	if err := os.Chtimes(tmp, a.Created, a.Created); err != nil {
		return Artifact{}, ioError(err, "cannot copy the artifact to the local directory")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.arts[a.ID]; r != nil && !r.adopted { // fetched meanwhile
		return r.a, nil
	}
	s.evictLocked(a.Size)
	local := s.artifact(a.ID, a.Ext, a.Size, a.Created)
	if err := os.Rename(tmp, local.Path); err != nil {
		return Artifact{}, ioError(err, "cannot copy the artifact to the local directory")
	}
	if r := s.arts[a.ID]; r != nil {
		s.forgetLocked(r)
	}
	s.seq++
	s.arts[a.ID] = &record{a: local, seq: s.seq, owner: owner}
	s.used += a.Size
	return local, nil
}

// remoteFile is an open remote artifact.
type remoteFile struct{ *io.SectionReader }

func (*remoteFile) Close() error { return nil }

// blockReader reads an object of the Remote as an io.ReaderAt. With
// cache, reads smaller than a block fetch whole aligned blocks and keep
// the last remoteBlocks of them (Parquet readers make many small reads
// close together); larger reads go straight to the store.
type blockReader struct {
	s     *Store
	a     Artifact
	cache bool

	mu     sync.Mutex
	blocks []cachedBlock // most recently used last
}

type cachedBlock struct {
	off int64
	b   []byte
}

func (br *blockReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("artifacts: negative offset")
	}
	if off >= br.a.Size {
		return 0, io.EOF
	}
	if !br.cache || len(p) >= remoteBlock {
		return br.fetch(p, off)
	}
	n := 0
	for n < len(p) && off+int64(n) < br.a.Size {
		pos := off + int64(n)
		b, err := br.block(pos / remoteBlock * remoteBlock)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], b[pos%remoteBlock:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// block returns the block at off (a multiple of remoteBlock).
func (br *blockReader) block(off int64) ([]byte, error) {
	br.mu.Lock()
	defer br.mu.Unlock()
	for i, c := range br.blocks {
		if c.off == off {
			br.blocks = append(slices.Delete(br.blocks, i, i+1), c)
			return c.b, nil
		}
	}
	b := make([]byte, min(remoteBlock, br.a.Size-off))
	if _, err := br.fetch(b, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(br.blocks) == remoteBlocks {
		br.blocks = slices.Delete(br.blocks, 0, 1)
	}
	br.blocks = append(br.blocks, cachedBlock{off, b})
	return b, nil
}

// fetch reads p from off with one ranged GET.
func (br *blockReader) fetch(p []byte, off int64) (int, error) {
	want := min(int64(len(p)), br.a.Size-off)
	ctx, cancel := remoteCtx(RemoteOpTimeout + time.Duration(want/uploadRate)*time.Second)
	defer cancel()
	rs := br.s.remote
	n, err := rs.r.ReadAt(ctx, br.a.ID+"."+br.a.Ext, p[:want], off)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return n, gone(br.a.URI)
	case err != nil && !errors.Is(err, io.EOF):
		return n, remoteError(rs.r, err, "cannot read artifact "+br.a.URI)
	case int64(n) < int64(len(p)):
		return n, io.EOF
	}
	return n, nil
}
