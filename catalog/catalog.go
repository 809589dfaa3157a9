package catalog

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/internal/safeopen"
)

// Options configure a Catalog.
type Options struct {
	// Root is the data root. It must exist and be a readable directory;
	// relative paths are taken from the working directory and symlinks are
	// resolved. Required.
	Root string
	// Formats are the file formats to discover, asked in order; the first
	// whose Match claims a file opens it. Required (CSV is csv.NewFormat()
	// of catalog/csv).
	Formats []Format
	// Logger receives scan warnings (skipped files) and a summary per scan.
	// Nil means slog.Default().
	Logger *slog.Logger
	// Workers bounds how many files are opened in parallel during a scan.
	// Zero or negative means runtime.GOMAXPROCS(0).
	Workers int
	// Background makes New return once the root is validated, with the
	// first scan running in the background (so a server can answer at
	// once): Datasets and Diagnostics show the files opened so far
	// (published every scanPublishEvery), ScanStatus reports the scan,
	// Refresh returns at once while it runs, and LookupContext waits for
	// an id not known yet until the scan has opened it or ended. Close
	// stops the scan.
	Background bool
	// Remotes list datasets that are not files (tables of remote engines,
	// ids remote/<name>/...): listed with every scan (reused for
	// remoteRelist), looked up before the files, hiding a file dataset of
	// the same id. See remote.go.
	Remotes []Remote
}

// Catalog is the set of datasets found under a data root. It never writes
// into the root. All methods are safe for concurrent use.
type Catalog struct {
	root    string
	formats []Format
	log     *slog.Logger
	workers int

	scanMu sync.Mutex // serializes scans (Refresh)
	mu     sync.RWMutex
	snap   *snapshot     // immutable; replaced as a whole under mu
	pub    chan struct{} // closed (and replaced) when the first scan publishes a snapshot; under mu

	first   chan struct{}      // closed when the first scan has ended
	stop    context.CancelFunc // cancels a background first scan
	pending atomic.Int64       // files of the running scan not opened yet
	walking atomic.Bool        // the running scan is still listing files

	remotes remotes // Options.Remotes and their datasets
}

// fileEntry is one candidate file and what its Format made of it.
type fileEntry struct {
	info     FileInfo
	format   Format
	fmtIdx   int // index of format in Catalog.formats (Formats may be uncomparable)
	datasets []*Dataset
	err      error // non-nil: the file was skipped
}

// unchanged reports whether e describes the same file version as f with
// the same ID base (so its datasets can be reused as they are).
func (e *fileEntry) unchanged(f FileInfo, fmtIdx int) bool {
	return e.fmtIdx == fmtIdx && e.info.BaseID == f.BaseID && sameVersion(e.info, f) && e.info.Read.key() == f.Read.key()
}

// snapshot is an immutable view of the catalog.
type snapshot struct {
	files     map[string]*fileEntry // by FileInfo.RelPath
	walkDiags []Diagnostic          // problems met while walking (not opening)
	byID      map[string]*Dataset
	fileOf    map[string]*fileEntry // by dataset ID
	sorted    []*Dataset
	diags     []Diagnostic
	cards     *cardIndex // sidecars (schema cards) found by the walk
	memo      cardMemo   // carded dataset copies, reused by the next snapshot
}

// newSnapshot indexes files. When two datasets share an ID, the one from
// the file that sorts first by path wins and the other is reported.
func newSnapshot(files map[string]*fileEntry, walkDiags []Diagnostic, cards *cardIndex, prevMemo cardMemo) *snapshot {
	s := &snapshot{
		cards:     cards,
		memo:      cardMemo{},
		files:     files,
		walkDiags: walkDiags,
		byID:      make(map[string]*Dataset),
		fileOf:    make(map[string]*fileEntry),
		diags:     append([]Diagnostic(nil), walkDiags...),
	}
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	usedCards, cardDiags := map[string]bool{}, map[Diagnostic]bool{}
	for _, rel := range rels {
		e := files[rel]
		if e.err != nil {
			s.diags = append(s.diags, Diagnostic{Path: rel, Level: "error", Reason: reason(e.err)})
			cards.chain(rel, usedCards) // its cards match it (they may be why it failed)
			continue
		}
		for _, ds := range e.datasets {
			ds = cards.applyCards(ds, prevMemo, s.memo, usedCards, cardDiags)
			if other, dup := s.byID[ds.ID]; dup {
				s.diags = append(s.diags, Diagnostic{Path: rel, Level: "warning",
					Reason: "dataset id " + quote(ds.ID) + " is already used by " + other.Path + "; this one is skipped"})
				continue
			}
			s.byID[ds.ID] = ds
			s.fileOf[ds.ID] = e
			s.sorted = append(s.sorted, ds)
		}
	}
	sort.Slice(s.sorted, func(i, j int) bool { return s.sorted[i].ID < s.sorted[j].ID })
	s.diags = append(s.diags, cards.diagnostics(usedCards, cardDiags)...)
	sort.SliceStable(s.diags, func(i, j int) bool { return s.diags[i].Path < s.diags[j].Path })
	return s
}

func quote(s string) string { return "\"" + s + "\"" }

// reason is the one-sentence diagnostic for an open error.
func reason(err error) string {
	var qe *qerr.Error
	if errors.As(err, &qe) {
		return qe.Message
	}
	return err.Error()
}

// New validates opts.Root and performs the first scan. An invalid root
// (missing, unreadable, not a directory) is a *qerr.Error with code
// invalid_argument. Files that cannot be read do not fail New; they are
// listed by Diagnostics. New fails only when ctx ends during the scan.
func New(ctx context.Context, opts Options) (*Catalog, error) {
	root, err := validateRoot(opts.Root)
	if err != nil {
		return nil, err
	}
	c := &Catalog{
		root:    root,
		formats: append([]Format(nil), opts.Formats...),
		log:     opts.Logger,
		workers: opts.Workers,
	}
	c.remotes.list = append([]Remote(nil), opts.Remotes...)
	if len(c.formats) == 0 {
		return nil, qerr.Invalid(qerr.CodeInvalidArgument, "Options.Formats is empty: name the formats to discover (e.g. csv.NewFormat() of catalog/csv)")
	}
	for i, f := range c.formats {
		if f == nil {
			return nil, qerr.Invalid(qerr.CodeInvalidArgument, "Options.Formats[%d] is nil", i)
		}
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.workers <= 0 {
		c.workers = runtime.GOMAXPROCS(0)
	}
	c.snap = newSnapshot(map[string]*fileEntry{}, nil, nil, nil)
	c.pub = make(chan struct{})
	c.first = make(chan struct{})
	if opts.Background {
		ctx, c.stop = context.WithCancel(context.WithoutCancel(ctx))
		c.walking.Store(true)
		go func() {
			defer close(c.first)
			if err := c.refresh(ctx, true); err != nil && ctx.Err() == nil {
				c.log.Error("catalog: first scan failed", "root", c.root, "err", err)
			}
		}()
		return c, nil
	}
	defer close(c.first)
	if err := c.Refresh(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// ScanStatus describes the first scan of a background catalog.
type ScanStatus struct {
	// Scanning is true until the first scan has ended.
	Scanning bool
	// Listing is true while it is still walking the root (PendingFiles
	// is not known yet).
	Listing bool
	// PendingFiles is how many files it has not opened yet.
	PendingFiles int
}

// ScanStatus reports whether the first scan is still running.
func (c *Catalog) ScanStatus() ScanStatus {
	select {
	case <-c.first:
		return ScanStatus{}
	default:
	}
	return ScanStatus{Scanning: true, Listing: c.walking.Load(), PendingFiles: int(c.pending.Load())}
}

// WaitScanned waits until the first scan has ended, or ctx ends.
func (c *Catalog) WaitScanned(ctx context.Context) error {
	select {
	case <-c.first:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops a background first scan and waits for it to end, and
// closes the remotes that are io.Closers (their datasets fail from then
// on). The catalog's files stay usable. Idempotent.
func (c *Catalog) Close() {
	if c.stop != nil {
		c.stop()
	}
	<-c.first
	c.remotes.closeOnce.Do(c.remotes.close)
}

func (c *Catalog) scanning() bool {
	select {
	case <-c.first:
		return false
	default:
		return true
	}
}

// validateRoot returns the absolute, symlink-resolved root.
func validateRoot(root string) (string, error) {
	if root == "" {
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "no data root given").
			WithHint("pass the folder that holds the data files")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "invalid data root %q", root).Wrap(err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", qerr.Invalid(qerr.CodeInvalidArgument, "data root %q does not exist", root).
				WithHint("pass an existing folder").Wrap(err)
		}
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "data root %q cannot be accessed", root).Wrap(err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "data root %q cannot be accessed", root).Wrap(err)
	}
	if !st.IsDir() {
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "data root %q is not a directory", root).
			WithHint("pass the folder that holds the data files, not a file")
	}
	d, err := os.Open(real)
	if err == nil {
		_, err = d.Readdirnames(1)
		d.Close()
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "data root %q cannot be read", root).Wrap(err)
	}
	return real, nil
}

// Root returns the absolute, symlink-resolved data root.
func (c *Catalog) Root() string { return c.root }

func (c *Catalog) snapshot() *snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap
}

// Refresh re-scans the root. Files whose resolved path, size and
// modification time are unchanged keep their datasets (the same *Dataset
// values, not re-parsed); changed and new files are opened; deleted files
// are dropped. If the root itself has become unusable, Refresh returns an
// invalid_argument *qerr.Error and keeps the previous snapshot; if ctx ends,
// it returns ctx.Err() and keeps the previous snapshot.
//
// While the first scan of a background catalog runs, Refresh returns nil
// at once (that scan is the refresh).
func (c *Catalog) Refresh(ctx context.Context) error {
	if c.scanning() && c.stop != nil {
		return nil
	}
	return c.refresh(ctx, false)
}

// refresh is Refresh; partial publishes a snapshot of the files opened so
// far every scanPublishEvery (the first scan of a background catalog).
func (c *Catalog) refresh(ctx context.Context, partial bool) error {
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	if _, err := validateRoot(c.root); err != nil {
		return err
	}
	start := time.Now()
	listed := make(chan struct{}) // the remotes are listed beside the walk
	go func() { defer close(listed); c.remotes.refresh(ctx, false) }()
	defer func() { <-listed }()
	prev := c.snapshot()
	cands, sidecars, walkDiags, err := c.walk(ctx, prev.walkDiags)
	c.walking.Store(false)
	if err != nil {
		return err
	}
	cards := c.loadCards(sidecars, prev.cards)
	files := make(map[string]*fileEntry, len(cands))
	var todo []*fileEntry
	reused := 0
	for _, cand := range cands {
		cand.info.Read = cards.readSpec(cand.info.RelPath)
		if old, ok := prev.files[cand.info.RelPath]; ok && old.unchanged(cand.info, cand.fmtIdx) {
			files[cand.info.RelPath] = old
			reused++
			continue
		}
		e := &fileEntry{info: cand.info, format: c.formats[cand.fmtIdx], fmtIdx: cand.fmtIdx}
		files[cand.info.RelPath] = e
		todo = append(todo, e)
	}
	c.pending.Store(int64(len(todo)))
	var opened func(*fileEntry)
	stopPublishing := func() {}
	if partial {
		p := &publisher{c: c, files: make(map[string]*fileEntry, len(files)), walkDiags: walkDiags, cards: cards}
		for rel, e := range files {
			if prev.files[rel] == e { // reused, already open
				p.files[rel] = e
			}
		}
		stopPublishing = p.start()
		opened = p.add
	}
	err = c.openAll(ctx, todo, opened)
	stopPublishing() // before the final snapshot, which must not be overwritten
	c.pending.Store(0)
	if err != nil {
		return err
	}
	snap := newSnapshot(files, walkDiags, cards, prev.memo)
	c.publish(snap)
	level := slog.LevelDebug
	if len(todo) > 0 || reused != len(prev.files) {
		level = slog.LevelInfo // something changed
	}
	c.log.Log(ctx, level, "catalog scan done", "root", c.root, "datasets", len(snap.sorted),
		"files", len(files), "opened", len(todo), "reused", reused,
		"diagnostics", len(snap.diags), "duration", time.Since(start))
	return nil
}

// publish makes snap the current snapshot and wakes LookupContext waiters.
func (c *Catalog) publish(snap *snapshot) {
	c.mu.Lock()
	c.snap = snap
	close(c.pub)
	c.pub = make(chan struct{})
	c.mu.Unlock()
}

// scanPublishEvery is how often a background first scan publishes the
// files it has opened so far.
var scanPublishEvery = 250 * time.Millisecond

// publisher collects the files a background first scan has opened and
// publishes them as snapshots.
type publisher struct {
	c         *Catalog
	walkDiags []Diagnostic
	cards     *cardIndex

	mu    sync.Mutex
	files map[string]*fileEntry // opened so far
	dirty bool
}

func (p *publisher) add(e *fileEntry) {
	p.mu.Lock()
	p.files[e.info.RelPath] = e
	p.dirty = true
	p.mu.Unlock()
}

// start publishes every scanPublishEvery until the returned stop is called.
func (p *publisher) start() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tk := time.NewTicker(scanPublishEvery)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
			}
			p.mu.Lock()
			if !p.dirty {
				p.mu.Unlock()
				continue
			}
			files := make(map[string]*fileEntry, len(p.files))
			for k, v := range p.files {
				files[k] = v
			}
			p.dirty = false
			p.mu.Unlock()
			p.c.publish(newSnapshot(files, p.walkDiags, p.cards, nil))
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// Datasets returns the datasets of the current snapshot sorted by ID.
// The slice is the caller's; the *Dataset values are shared and must not be
// modified.
func (c *Catalog) Datasets() []*Dataset {
	return c.remotes.merge(c.snapshot().sorted)
}

// Diagnostics returns the problems met by the last scan (files skipped and
// why), sorted by path. Lookup updates them when it re-opens a changed file.
func (c *Catalog) Diagnostics() []Diagnostic {
	out := append([]Diagnostic(nil), c.snapshot().diags...)
	if rd := c.remotes.diagnostics(); len(rd) > 0 {
		out = append(out, rd...)
		sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	}
	return out
}

// Lookup returns the dataset with the given ID. It re-checks the dataset's
// file first (restat); if it is another file now (resolved path, identity,
// size or modification time changed), it re-opens it so a changed file is
// never served stale. An unknown ID (or one whose file vanished or no
// longer holds it) is a not-found *qerr.Error with code dataset_not_found
// and the closest IDs in Diagnostics["suggestions"]. A file that has become
// a symbolic link (or is reached through one) since the scan is refused: a
// *qerr.Error with code path_outside_root, also listed in Diagnostics until
// the next scan.
//
// Lookup does not wait for a running background scan (LookupContext does).
func (c *Catalog) Lookup(id string) (*Dataset, error) {
	return c.lookupNow(id)
}

// LookupContext is Lookup that, while the first scan of a background
// catalog runs, waits for an id not known yet until the scan has opened
// it or ended. When ctx ends first, the not-found error says the catalog
// is still being scanned (With "scanning": true).
func (c *Catalog) LookupContext(ctx context.Context, id string) (*Dataset, error) {
	for {
		c.mu.RLock()
		_, ok := c.snap.byID[id]
		pub := c.pub
		c.mu.RUnlock()
		if ok || c.remotes.lookup(id) != nil || !c.scanning() {
			break
		}
		select {
		case <-pub:
		case <-c.first:
		case <-ctx.Done():
			st := c.ScanStatus()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// The request's own deadline (the query timeout) fired
				// first: that is what the caller is told, with the scan
				// as the reason.
				e := qerr.As(ctx.Err())
				return nil, e.With("scanning", true).With("pending_files", st.PendingFiles).
					WithHint("%s; the catalog was still being scanned (%d files to go) when the deadline passed: retry in a moment", e.Hint, st.PendingFiles)
			}
			return nil, c.notFound(c.snapshot(), id).With("scanning", true).
				WithHint("the catalog is still being scanned (%d files to go); retry in a moment or call get_catalog", st.PendingFiles)
		}
	}
	return c.lookupNow(id)
}

func (c *Catalog) lookupNow(id string) (*Dataset, error) {
	if ds := c.remotes.lookup(id); ds != nil {
		return ds, nil
	}
	snap := c.snapshot()
	ds, ok := snap.byID[id]
	if !ok {
		// The file of id may have failed to open after a change (a rewrite
		// caught half-written): if it changed again since, open it again.
		if e := snap.failedFileOf(id); e != nil {
			if info, err := c.restat(e.info); err == nil && !sameVersion(info, e.info) {
				snap, _ = c.reopen(e, info, nil)
				if ds, ok := snap.byID[id]; ok {
					return ds, nil
				}
			}
		}
		return nil, c.notFound(snap, id)
	}
	e := snap.fileOf[id]
	info, err := c.restat(e.info)
	if err == nil && sameVersion(info, e.info) {
		return ds, nil
	}
	snap, ne := c.reopen(e, info, err)
	if ds, ok := snap.byID[id]; ok {
		return ds, nil
	}
	if ne != nil && errors.Is(ne.err, qerr.ErrPermission) {
		return nil, ne.err
	}
	nf := c.notFound(snap, id)
	switch {
	case ne == nil:
		nf.Message = "the file of dataset " + quote(id) + " was removed"
	case ne.err != nil:
		nf.Message = "the file of dataset " + quote(id) + " changed and can no longer be read: " + reason(ne.err)
		nf.Cause = ne.err
	}
	return nil, nf
}

// failedFileOf is the entry of a file that failed to open and would hold
// dataset id (its id is the file's base id or path, or lies under it).
func (s *snapshot) failedFileOf(id string) *fileEntry {
	for rel, e := range s.files {
		if e.err != nil && (id == rel || id == e.info.BaseID || strings.HasPrefix(id, e.info.BaseID+"/")) {
			return e
		}
	}
	return nil
}

// reopen re-opens the file of entry e, which restat found changed (info),
// vanished or refused (err), outside any lock, and publishes the result
// unless someone else already replaced the entry. It returns the snapshot
// after that and the new entry (nil: the file was removed).
func (c *Catalog) reopen(e *fileEntry, info FileInfo, err error) (*snapshot, *fileEntry) {
	var ne *fileEntry
	switch {
	case err == nil:
		ne = &fileEntry{info: info, format: e.format, fmtIdx: e.fmtIdx}
		c.openOne(context.Background(), ne)
	case errors.Is(err, fs.ErrNotExist):
		// Removed: the entry goes.
	default:
		var qe *qerr.Error
		if !errors.As(err, &qe) {
			err = qerr.Unsupported(qerr.CodeUnsupportedFormat, "cannot read %s: %v", e.info.RelPath, unwrapPathErr(err)).Wrap(err)
		}
		c.log.Warn("catalog: refusing file", "path", e.info.RelPath, "reason", reason(err))
		ne = &fileEntry{info: e.info, format: e.format, fmtIdx: e.fmtIdx, err: err}
	}
	c.mu.Lock()
	if cur := c.snap.files[e.info.RelPath]; cur == e {
		files := make(map[string]*fileEntry, len(c.snap.files))
		for k, v := range c.snap.files {
			files[k] = v
		}
		if ne == nil {
			delete(files, e.info.RelPath)
		} else {
			files[e.info.RelPath] = ne
		}
		c.snap = newSnapshot(files, c.snap.walkDiags, c.snap.cards, c.snap.memo)
	}
	snap := c.snap
	c.mu.Unlock()
	return snap, ne
}

// restat re-checks a file of a snapshot: its path relative to the root
// (through the symlinks inside the root the scan followed) must still
// resolve inside the root, and the resolved file is stat'ed through
// FileInfo's confined open. It returns f with the current resolved path,
// size, modification time and identity; a file that vanished or is no
// longer a regular file wraps fs.ErrNotExist, one that now leads out of the
// root is a path_outside_root *qerr.Error.
func (c *Catalog) restat(f FileInfo) (FileInfo, error) {
	real, err := filepath.EvalSymlinks(filepath.Join(c.root, filepath.FromSlash(f.RelPath)))
	if err != nil {
		return f, err
	}
	if !within(c.root, real) {
		return f, confineErr(f.RelPath, &fs.PathError{Op: "open", Path: f.RelPath, Err: safeopen.ErrOutside})
	}
	g := f
	g.AbsPath, g.Root, g.FileID = real, c.root, safeopen.Identity{}
	fh, err := g.Open()
	if err != nil {
		if errors.Is(err, safeopen.ErrNotRegular) {
			err = &fs.PathError{Op: "open", Path: f.RelPath, Err: fs.ErrNotExist}
		}
		return f, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return f, err
	}
	g.Size, g.ModTime, g.FileID = st.Size(), st.ModTime(), safeopen.IdentityOf(st)
	return g, nil
}

func (c *Catalog) notFound(snap *snapshot, id string) *qerr.Error {
	ids := make([]string, len(snap.sorted))
	for i, ds := range snap.sorted {
		ids[i] = ds.ID
	}
	if rs := c.remotes.set.Load(); rs != nil {
		for _, ds := range rs.sorted {
			ids = append(ids, ds.ID)
		}
	}
	return qerr.NotFound(qerr.CodeDatasetNotFound, "no dataset %q", id).
		With("suggestions", qerr.Suggest(id, ids, 5)).
		WithHint("call get_catalog to list the available dataset ids")
}
