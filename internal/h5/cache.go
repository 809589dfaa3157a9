package h5

import (
	"container/list"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/quarrydb/quarry/internal/safeopen"
)

// ErrCacheClosed is returned by Acquire after Close.
var ErrCacheClosed = errors.New("h5: file cache closed")

// FileCache keeps up to a fixed number of HDF5 files open (read-only),
// least recently used first out. An entry is dropped when the file at its
// path is another file (identity: device and inode) or its modification
// time or size changed; a dropped or evicted file is closed as soon as no
// reader holds it (reference counted). Safe for concurrent use.
type FileCache struct {
	mu     sync.Mutex
	max    int
	lru    *list.List // of *cacheEntry, front = most recent
	byPath map[string]*list.Element
	closed bool
	opens  int64
}

type cacheEntry struct {
	path    string
	id      ID
	ident   safeopen.Identity
	mtime   time.Time
	size    int64
	refs    int
	dropped bool
}

// File is a reference to an open file from a FileCache. Release it exactly
// once when done; the ID is valid until then.
type File struct {
	c *FileCache
	e *cacheEntry
	o sync.Once
}

// NewFileCache returns a cache holding at most max open files (min 1).
func NewFileCache(max int) *FileCache {
	if max < 1 {
		max = 1
	}
	return &FileCache{max: max, lru: list.New(), byPath: map[string]*list.Element{}}
}

// Acquire returns the open file for path. fh is path as opened by the
// caller (confined to the data root and checked: internal/safeopen); it
// stays the caller's. The cache identifies the file version by fh's
// identity, size and modification time: a cached handle is reused only for
// exactly that version (so every Acquire re-verifies what a cached handle
// reads), and on a miss libhdf5 opens the very file fh refers to (OpenFD),
// never path, so a path swapped since the caller's check cannot redirect
// the read.
func (c *FileCache) Acquire(path string, fh *os.File) (*File, error) {
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Msg: path + " is not a regular file"}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrCacheClosed
	}
	if f := c.lookupLocked(path, st); f != nil {
		c.mu.Unlock()
		return f, nil
	}
	c.mu.Unlock()

	id, err := OpenFD(fh)
	if err != nil {
		return nil, err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = Close(id)
		return nil, ErrCacheClosed
	}
	// Another goroutine may have opened the same version meanwhile.
	if f := c.lookupLocked(path, st); f != nil {
		_ = Close(id)
		return f, nil
	}
	c.opens++
	e := &cacheEntry{path: path, id: id, ident: safeopen.IdentityOf(st), mtime: st.ModTime(), size: st.Size(), refs: 1}
	c.byPath[path] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		c.dropLocked(c.lru.Back())
	}
	return &File{c: c, e: e}, nil
}

func (c *FileCache) lookupLocked(path string, st os.FileInfo) *File {
	el, ok := c.byPath[path]
	if !ok {
		return nil
	}
	e := el.Value.(*cacheEntry)
	if e.ident != safeopen.IdentityOf(st) || !e.mtime.Equal(st.ModTime()) || e.size != st.Size() {
		c.dropLocked(el)
		return nil
	}
	e.refs++
	c.lru.MoveToFront(el)
	return &File{c: c, e: e}
}

// dropLocked removes el from the cache and closes its file if unused.
func (c *FileCache) dropLocked(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.byPath, e.path)
	e.dropped = true
	if e.refs == 0 {
		_ = Close(e.id)
		e.id = Invalid
	}
}

// ID is the HDF5 file identifier.
func (f *File) ID() ID { return f.e.id }

// Path is the file's path as given to Acquire.
func (f *File) Path() string { return f.e.path }

// Release returns the reference. Further calls are no-ops.
func (f *File) Release() {
	f.o.Do(func() {
		c := f.c
		c.mu.Lock()
		defer c.mu.Unlock()
		f.e.refs--
		if f.e.refs == 0 && f.e.dropped {
			_ = Close(f.e.id)
			f.e.id = Invalid
		}
	})
}

// Len is the number of cached files.
func (c *FileCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Opens counts the files opened so far (for tests).
func (c *FileCache) Opens() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens
}

// Invalidate drops path from the cache (closed once unused).
func (c *FileCache) Invalidate(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byPath[path]; ok {
		c.dropLocked(el)
	}
}

// Close drops every entry; files still in use close on their last Release.
// Acquire fails afterwards.
func (c *FileCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for c.lru.Len() > 0 {
		c.dropLocked(c.lru.Back())
	}
	return nil
}
