package artifacts

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/shared"
)

// Defaults applied by Open for zero Options fields.
const (
	// DefaultTTL is the artifact lifetime when Options.TTL is 0.
	DefaultTTL = time.Hour
	// DefaultQuota is the on-disk byte bound when Options.Quota is 0.
	DefaultQuota int64 = 2 << 30
	// DefaultSweepInterval is the sweeper period when Options.SweepInterval is 0.
	DefaultSweepInterval = time.Minute
	// StaleTempAge is how long a temp file must go unmodified before Open or
	// the sweeper deletes it as left over by a crash, on systems without
	// file locks (flock). Temp files of this Store's own open Writers are
	// never deleted.
	StaleTempAge = 10 * time.Minute
	// OrphanTempAge: on systems with file locks, a Writer holds an
	// exclusive lock on its temp file for its whole life (the kernel
	// releases it when the process dies, even by SIGKILL), so Open and the
	// sweeper delete any temp file that nobody holds locked and that is at
	// least this old (the grace covers the instant between a writer
	// creating its file and locking it). Locked temp files, those of live
	// writers in any process, are never deleted.
	OrphanTempAge = 2 * time.Second
)

const (
	// URIPrefix starts every artifact URI: URIPrefix + "<id>.<ext>".
	URIPrefix  = "quarry://artifacts/"
	tempPrefix = ".tmp-"
	idPrefix   = "a_"
	idLen      = len(idPrefix) + 26
)

// Options configures a Store. The zero value is usable.
type Options struct {
	// Dir is the store directory. "" means
	// filepath.Join(os.UserCacheDir(), "quarry", "artifacts"), falling back
	// to filepath.Join(os.TempDir(), "quarry", "artifacts") when there is no
	// cache directory or it lies inside DataRoot.
	Dir string
	// TTL is how long an artifact lives after Commit; 0 means DefaultTTL.
	TTL time.Duration
	// Quota bounds the bytes of committed artifacts on disk; 0 means
	// DefaultQuota. A Commit that would exceed it evicts the oldest
	// artifacts first; an artifact larger than the quota on its own is
	// refused.
	Quota int64
	// DataRoot, if non-empty, is the directory Quarry serves data from. Dir
	// must not be inside it (after resolving symlinks): Quarry never writes
	// into the data root.
	DataRoot string
	// Now is the clock (for tests); nil means time.Now. Artifact ages are
	// measured against it and file modification times.
	Now func() time.Time
	// SweepInterval is the period of the background sweeper; 0 means
	// DefaultSweepInterval.
	SweepInterval time.Duration
	// Shared, when set, shares artifact owners with the other replicas
	// that use the same Dir (see shared.go). nil: this process only.
	Shared shared.KV
	// Remote, when set, keeps the artifacts in an object store shared by
	// the replicas (see remote.go); Dir is then this replica's staging
	// area and cache. nil: the directory only.
	Remote Remote
	// Logger logs what cannot be shared; nil means slog.Default().
	Logger *slog.Logger
}

// Artifact describes one committed artifact.
type Artifact struct {
	// ID is the unguessable artifact id ("a_...").
	ID string
	// Ext is the format extension: parquet, csv, arrow or json, or png
	// or svg for charts.
	Ext string
	// URI is the resource URI, URIPrefix + ID + "." + Ext.
	URI string
	// Path is the absolute file path (for servers that expose file paths);
	// "" for an artifact held only by the Remote (GetLocal copies it here).
	Path string
	// MIME is MIMEFor(Ext).
	MIME string
	// Size is the file size in bytes.
	Size int64
	// Created is when the artifact was committed (its file's mtime).
	Created time.Time
}

// Store is an artifact store. It is safe for concurrent use.
type Store struct {
	dir      string
	ttl      time.Duration
	quota    int64
	now      func() time.Time
	interval time.Duration

	shared shared.KV
	log    *slog.Logger
	remote *remoteState // nil: no object store

	mu    sync.Mutex
	arts  map[string]*record // by id
	used  int64
	seq   uint64
	temps map[string]bool // base names of this Store's open Writers' temp files

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type record struct {
	a     Artifact
	seq   uint64 // commit order, breaks Created ties
	owner string // the principal the artifact was created for (see Create)
	// adopted: found in the directory at Open, owner unknown (""); with
	// Options.Shared the owner is looked up on first Get.
	adopted bool
}

// MIMEFor returns the media type of an artifact extension, or
// "application/octet-stream" for an unknown one.
func MIMEFor(ext string) string {
	switch ext {
	case "parquet":
		return "application/vnd.apache.parquet"
	case "csv":
		return "text/csv"
	case "arrow":
		return "application/vnd.apache.arrow.file"
	case "json":
		return "application/json"
	case "png":
		return "image/png"
	case "svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

func validExt(ext string) bool {
	switch ext {
	case "parquet", "csv", "arrow", "json", "png", "svg":
		return true
	}
	return false
}

func validID(id string) bool {
	if len(id) != idLen || !strings.HasPrefix(id, idPrefix) {
		return false
	}
	for i := len(idPrefix); i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// parseName splits a file name "<id>.<ext>" and validates both parts.
func parseName(name string) (id, ext string, ok bool) {
	id, ext, ok = strings.Cut(name, ".")
	if !ok || !validID(id) || !validExt(ext) {
		return "", "", false
	}
	return id, ext, true
}

// parseURI validates an artifact URI and returns its id and extension. Only
// the exact form URIPrefix + "<id>.<ext>" is accepted, so the result can
// never name a path outside the store directory.
func parseURI(uri string) (id, ext string, err error) {
	name, ok := strings.CutPrefix(uri, URIPrefix)
	if ok {
		id, ext, ok = parseName(name)
	}
	if !ok {
		return "", "", qerr.Invalid(qerr.CodeInvalidArgument, "%q is not an artifact URI", clip(uri)).
			WithHint("artifact URIs look like %sa_<id>.<ext> (ext one of parquet, csv, arrow, json, png, svg); pass the URI exactly as returned", URIPrefix)
	}
	return id, ext, nil
}

func newID() string { return idPrefix + strings.ToLower(rand.Text()) }

func clip(s string) string {
	const n = 96
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Open opens (creating if needed, mode 0700) the store directory, deletes
// stale temp files and expired artifacts, adopts the unexpired artifacts
// found there, and starts the sweeper. Close stops it.
func Open(opts Options) (*Store, error) {
	s := &Store{
		ttl:      cmp.Or(max(opts.TTL, 0), DefaultTTL),
		quota:    cmp.Or(max(opts.Quota, 0), DefaultQuota),
		now:      opts.Now,
		interval: cmp.Or(max(opts.SweepInterval, 0), DefaultSweepInterval),
		arts:     map[string]*record{},
		temps:    map[string]bool{},
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		shared:   opts.Shared,
		log:      cmp.Or(opts.Logger, slog.Default()),
	}
	if s.now == nil {
		s.now = time.Now
	}
	dir, err := chooseDir(opts.Dir, opts.DataRoot)
	if err != nil {
		return nil, err
	}
	s.dir = dir
	if opts.Remote != nil {
		if err := s.openRemote(opts.Remote); err != nil {
			return nil, err
		}
	}

	s.mu.Lock()
	err = s.scanLocked(true)
	s.evictLocked(0)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	go s.sweeper()
	return s, nil
}

// chooseDir picks, creates and resolves the store directory, refusing any
// directory inside dataRoot.
func chooseDir(dir, dataRoot string) (string, error) {
	var candidates []string
	if dir != "" {
		candidates = []string{dir}
	} else {
		if c, err := os.UserCacheDir(); err == nil {
			candidates = append(candidates, filepath.Join(c, "quarry", "artifacts"))
		}
		candidates = append(candidates, filepath.Join(os.TempDir(), "quarry", "artifacts"))
	}
	var root string
	if dataRoot != "" {
		var err error
		if root, err = resolve(dataRoot); err != nil {
			return "", qerr.Internal(err, "cannot resolve the data root %q", dataRoot)
		}
	}
	var refused error
	for _, c := range candidates {
		if root != "" {
			r, err := resolve(c)
			if err != nil {
				return "", qerr.Internal(err, "cannot resolve the artifact directory %q", c)
			}
			if within(root, r) {
				refused = insideRoot(c, dataRoot)
				continue
			}
		}
		if err := os.MkdirAll(c, 0o700); err != nil {
			return "", qerr.Internal(err, "cannot create the artifact directory %q", c)
		}
		real, err := filepath.EvalSymlinks(c)
		if err == nil {
			real, err = filepath.Abs(real)
		}
		if err != nil {
			return "", qerr.Internal(err, "cannot resolve the artifact directory %q", c)
		}
		if root != "" && within(root, real) { // a symlink changed under us
			return "", insideRoot(c, dataRoot)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return "", qerr.Internal(err, "cannot use the artifact directory %q", c)
		}
		if !fi.IsDir() {
			return "", qerr.Internal(fmt.Errorf("%s is not a directory", real), "cannot use the artifact directory %q", c)
		}
		return real, nil
	}
	return "", refused
}

func insideRoot(dir, root string) error {
	return qerr.New(qerr.ErrPermission, qerr.CodeInvalidArgument,
		"the artifact directory %q is inside the data root %q", dir, root).
		WithHint("choose an artifact directory outside the data root: Quarry never writes into the data root")
}

// resolve returns the absolute, symlink-free form of p. For a path that
// does not exist yet, the longest existing prefix is resolved and the rest
// appended. Prefixes are taken component by component without lexical
// cleaning, so ".." after a symlink is applied to the symlink's target, as
// the kernel (and os.MkdirAll) would.
func resolve(p string) (string, error) {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = wd + string(filepath.Separator) + p // not Join: keep ".." for EvalSymlinks
	}
	sep := string(filepath.Separator)
	comps := strings.Split(p, sep)
	for k := len(comps); k > 0; k-- {
		head := strings.Join(comps[:k], sep)
		if head == "" {
			head = sep
		}
		r, err := filepath.EvalSymlinks(head)
		if err == nil {
			return filepath.Join(r, strings.Join(comps[k:], sep)), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
	}
	return filepath.Clean(p), nil
}

// within reports whether path is root or inside it (both resolved).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// scanLocked reconciles the store with its directory: it deletes stale
// temp files (not this Store's) and expired artifacts, forgets artifacts
// whose file is gone and, when adopt is set, records unexpired artifacts it
// does not know. s.mu must be held.
func (s *Store) scanLocked(adopt bool) error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return qerr.Internal(err, "cannot read the artifact directory %q", s.dir)
	}
	now := s.now()
	seen := make(map[string]bool, len(entries))
	var found []*record
	orphans, markers := s.orphanHolds(entries, now)
	for _, de := range entries {
		name := de.Name()
		if strings.HasPrefix(name, tempPrefix) {
			if s.temps[name] {
				continue
			}
			fi, err := de.Info()
			if err != nil || !fi.Mode().IsRegular() && !fi.IsDir() {
				continue
			}
			p, age := filepath.Join(s.dir, name), now.Sub(fi.ModTime())
			if locksSupported && age >= OrphanTempAge && !tempInUse(p) || age >= StaleTempAge && !locksSupported {
				_ = os.RemoveAll(p) // a TempDir (MkdirTemp) with its contents
			}
			continue
		}
		id, ext, ok := parseName(name)
		if !ok || !de.Type().IsRegular() {
			continue // not ours: leave it alone
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		if s.expired(fi.ModTime(), now) || orphans[id] {
			_ = os.Remove(filepath.Join(s.dir, name))
			continue
		}
		seen[id] = true
		if adopt && s.arts[id] == nil {
			found = append(found, &record{a: s.artifact(id, ext, fi.Size(), fi.ModTime()), adopted: true})
		}
	}
	for _, p := range markers { // after their artifacts
		_ = os.Remove(p)
	}
	for id, r := range s.arts {
		if !seen[id] {
			s.forgetLocked(r)
		}
	}
	slices.SortFunc(found, func(a, b *record) int {
		return cmp.Or(a.a.Created.Compare(b.a.Created), cmp.Compare(a.a.ID, b.a.ID))
	})
	for _, r := range found {
		s.seq++
		r.seq = s.seq
		s.arts[r.a.ID] = r
		s.used += r.a.Size
	}
	return nil
}

func (s *Store) expired(created, now time.Time) bool { return now.Sub(created) >= s.ttl }

func (s *Store) artifact(id, ext string, size int64, created time.Time) Artifact {
	name := id + "." + ext
	return Artifact{
		ID: id, Ext: ext, URI: URIPrefix + name, Path: filepath.Join(s.dir, name),
		MIME: MIMEFor(ext), Size: size, Created: created,
	}
}

func (s *Store) forgetLocked(r *record) {
	delete(s.arts, r.a.ID)
	s.used -= r.a.Size
}

func (s *Store) removeLocked(r *record) {
	s.forgetLocked(r)
	_ = os.Remove(r.a.Path)
}

// sortedLocked returns the records oldest first.
func (s *Store) sortedLocked() []*record {
	rs := make([]*record, 0, len(s.arts))
	for _, r := range s.arts {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b *record) int {
		return cmp.Or(a.a.Created.Compare(b.a.Created), cmp.Compare(a.seq, b.seq))
	})
	return rs
}

// evictLocked deletes expired artifacts, then the oldest ones until incoming
// more bytes fit in the quota. s.mu must be held.
func (s *Store) evictLocked(incoming int64) {
	now := s.now()
	for _, r := range s.sortedLocked() {
		if s.expired(r.a.Created, now) || s.used+incoming > s.quota {
			s.removeLocked(r)
		}
	}
}

func (s *Store) sweeper() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sweep()
			s.sweepRemoteLogged()
		}
	}
}

func (s *Store) sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked(0)
	_ = s.scanLocked(false)
}

// Dir returns the store directory (absolute, symlinks resolved).
func (s *Store) Dir() string { return s.dir }

// Close stops the sweeper. The Store stays usable, without background
// expiry. Close is idempotent and always returns nil.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
	})
	return nil
}

// Create starts a new artifact with extension ext (parquet, csv, arrow or
// json) for owner: the principal the result is for (the HTTP bearer-token
// principal; "" for stdio and for HTTP without authentication). Only that
// principal can Get or ReadAll it. Write to the returned Writer, then
// Commit it, or Abort it.
func (s *Store) Create(ext, owner string) (*Writer, error) {
	if !validExt(ext) {
		return nil, qerr.Unsupported(qerr.CodeUnsupportedFormat, "artifact format %q is not supported", clip(ext)).
			WithHint("use one of: parquet, csv, arrow, json")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return nil, ioError(err, "cannot create an artifact file")
	}
	if err := lockTemp(f); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, qerr.Internal(err, "cannot lock the artifact file")
	}
	s.temps[filepath.Base(f.Name())] = true
	return &Writer{s: s, f: f, ext: ext, owner: owner}, nil
}

// Get returns the artifact a URI names, if principal owns it (see
// Create). A malformed URI is a qerr.ErrInvalidArgument error
// (qerr.CodeInvalidArgument); an unknown, expired or deleted artifact, and
// one of another principal (the same error: no existence oracle), a
// qerr.ErrExpired error (qerr.CodeResourceNotFound). Artifacts adopted
// from the directory at Open (left by an earlier run) have no known owner
// and belong to principal "".
func (s *Store) Get(uri, principal string) (Artifact, error) {
	id, ext, err := parseURI(uri)
	if err != nil {
		return Artifact{}, err
	}
	if a, ok, err := s.getRemote(id, ext, uri, principal); ok {
		return a, err
	}
	s.adoptShared(id, ext)
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.arts[id]
	if r == nil || r.a.Ext != ext || r.owner != principal {
		return Artifact{}, gone(uri)
	}
	if s.expired(r.a.Created, s.now()) {
		s.removeLocked(r)
		return Artifact{}, gone(uri)
	}
	if _, err := os.Stat(r.a.Path); err != nil { // deleted behind our back
		s.forgetLocked(r)
		return Artifact{}, gone(uri)
	}
	return r.a, nil
}

// Delete removes the artifact uri names and its file. An unknown or
// already deleted artifact is not an error; a malformed URI is (as for Get).
// A reader that opened the file before keeps reading it (on systems where
// open files can be unlinked).
func (s *Store) Delete(uri string) error {
	id, ext, err := parseURI(uri)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if r := s.arts[id]; r != nil {
		s.removeLocked(r)
	}
	s.mu.Unlock()
	s.deleteRemote(id, ext)
	return nil
}

func gone(uri string) error {
	return qerr.New(qerr.ErrExpired, qerr.CodeResourceNotFound, "artifact %s does not exist or has expired", clip(uri)).
		WithHint("artifacts are deleted after a while; re-run the query to produce a new one")
}

// ReadAll returns the content of the artifact uri names, if principal owns
// it, refusing one larger than limit bytes with a qerr.ErrLimitExceeded
// error (qerr.CodeOversizeResult). A negative limit means no limit. Other
// errors are as for Get.
func (s *Store) ReadAll(uri, principal string, limit int64) ([]byte, Artifact, error) {
	a, err := s.Get(uri, principal)
	if err != nil {
		return nil, Artifact{}, err
	}
	if limit >= 0 && a.Size > limit {
		return nil, Artifact{}, oversize(a.Size, limit)
	}
	f, err := s.Reader(a)
	if err != nil {
		return nil, Artifact{}, err
	}
	defer f.Close()
	var rd io.Reader = f
	if limit >= 0 {
		rd = io.LimitReader(f, limit+1)
	}
	buf := bytes.NewBuffer(make([]byte, 0, a.Size+1))
	if _, err := buf.ReadFrom(rd); err != nil {
		return nil, Artifact{}, readError(err, uri)
	}
	b := buf.Bytes()
	if limit >= 0 && int64(len(b)) > limit {
		return nil, Artifact{}, oversize(int64(len(b)), limit)
	}
	return b, a, nil
}

func oversize(size, limit int64) error {
	return qerr.Limit(qerr.CodeOversizeResult, "the artifact is %d bytes, more than the %d bytes that can be returned inline", size, limit).
		WithHint("narrow the query, or use file_path when the server exposes file paths").
		With("size_bytes", size).With("limit_bytes", limit)
}

// List returns the unexpired artifacts of every owner, oldest first (for
// operators and tests; never served to a client).
func (s *Store) List() []Artifact {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []Artifact
	for _, r := range s.sortedLocked() {
		if !s.expired(r.a.Created, now) {
			out = append(out, r.a)
		}
	}
	return out
}

// Writer writes one artifact into a temp file in the store directory. It is
// not safe for concurrent use. Exactly one of Commit or Abort must end it
// (Abort after Commit is a no-op, so `defer w.Abort()` is the idiom).
type Writer struct {
	s     *Store
	f     *os.File
	ext   string
	owner string
	done  bool
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, qerr.Internal(os.ErrClosed, "write to a finished artifact writer")
	}
	n, err := w.f.Write(p)
	if err != nil {
		err = ioError(err, "cannot write the artifact file")
	}
	return n, err
}

// Commit makes the artifact visible: it fsyncs the temp file, evicts the
// oldest artifacts if needed to stay within the quota, and renames the file
// to "<id>.<ext>" atomically. An artifact larger than the whole quota is
// refused with a qerr.ErrLimitExceeded error (qerr.CodeResourceExhausted).
// On any error the temp file is removed.
func (w *Writer) Commit() (Artifact, error) { return w.commit(nil) }

// commit is Commit; hold, if not nil, is called with the artifact's id
// before the file is renamed into place (CommitHeld).
func (w *Writer) commit(hold func(id string) error) (Artifact, error) {
	if w.done {
		return Artifact{}, qerr.Internal(os.ErrClosed, "commit of a finished artifact writer")
	}
	w.done = true
	s, tmp := w.s, w.f.Name()
	fail := func(err error) (Artifact, error) {
		_ = w.f.Close()
		_ = os.Remove(tmp)
		s.mu.Lock()
		delete(s.temps, filepath.Base(tmp))
		s.mu.Unlock()
		return Artifact{}, err
	}
	if err := w.f.Sync(); err != nil {
		return fail(ioError(err, "cannot write the artifact file"))
	}
	fi, err := w.f.Stat()
	if err != nil {
		return fail(ioError(err, "cannot write the artifact file"))
	}
	if err := w.f.Close(); err != nil {
		return fail(ioError(err, "cannot write the artifact file"))
	}
	size := fi.Size()
	if size > s.quota {
		return fail(qerr.Limit(qerr.CodeResourceExhausted,
			"the result is %d bytes, more than the artifact store quota of %d bytes", size, s.quota).
			WithHint("narrow the query (filters, fewer columns, a limit) or raise the server's artifact quota").
			With("size_bytes", size).With("quota_bytes", s.quota))
	}

	a, err := s.commitLocked(tmp, w.ext, w.owner, size, hold)
	if err == nil {
		err = s.upload(a, w.owner)
	}
	if err != nil {
		return Artifact{}, err
	}
	s.publish(a, w.owner)
	return a, nil
}

// commitLocked is Commit's locked part: evict for size bytes, rename tmp
// into place as a new artifact of owner (after hold, if not nil).
func (s *Store) commitLocked(tmp, ext, owner string, size int64, hold func(id string) error) (Artifact, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.temps, filepath.Base(tmp))
	s.evictLocked(size)
	id := newID()
	created := s.now()
	a := s.artifact(id, ext, size, created)
	// Set the mtime before the rename so a restart sees the right age.
	if err := os.Chtimes(tmp, created, created); err != nil {
		_ = os.Remove(tmp)
		return Artifact{}, ioError(err, "cannot commit the artifact file")
	}
	if hold != nil {
		if err := hold(id); err != nil {
			_ = os.Remove(tmp)
			return Artifact{}, err
		}
	}
	if err := os.Rename(tmp, a.Path); err != nil {
		_ = os.Remove(tmp)
		return Artifact{}, ioError(err, "cannot commit the artifact file")
	}
	syncDir(s.dir)
	s.seq++
	s.arts[id] = &record{a: a, seq: s.seq, owner: owner}
	s.used += size
	return a, nil
}

// Abort discards the artifact and removes its temp file. It is a no-op
// after Commit or a previous Abort.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	_ = w.f.Close()
	_ = os.Remove(w.f.Name())
	w.s.mu.Lock()
	delete(w.s.temps, filepath.Base(w.f.Name()))
	w.s.mu.Unlock()
}

// syncDir makes a rename durable; best effort (not supported everywhere).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
