// Package colcache keeps parsed columns of datasets in memory so repeated
// queries skip the file. Columns are cached one by one (only those a query
// read), keyed by the data file's identity (path, dataset id, size,
// modification time) and the column name, as the Arrow arrays the source
// produced (shared zero-copy with every reader, Retain/Release). Entries
// are evicted least-recently-used first to stay under one global byte
// budget.
//
// Plain string columns whose values repeat are kept dictionary-encoded,
// one dictionary shared by all their arrays (dictshare.go).
//
// Cache.Wrap turns a dataset's Source into one that serves a Scan from
// memory when every requested column is cached, and otherwise reads the
// file through the original Source, tees the batches and caches each
// column when the read completes. A data file that changed on disk (size or
// modification time differ from the dataset's) is never served from the
// cache: the Scan goes to the underlying source and the stale entries are
// dropped.
//
// Source.ColumnStats reports what the cache already knows of a column
// (its dictionaries' values and longest value, the range of its computed
// zone maps) for the planner's result bounds (stats.go); it never reads or
// computes anything new.
package colcache

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/zonemap"
)

// Options configure a Cache.
type Options struct {
	// Budget is the most bytes of Arrow memory the cache holds; <= 0
	// disables the cache (Wrap returns sources unchanged).
	Budget int64
	// Alloc allocates the batches of reads that fill the cache (they are
	// kept, so they are not charged to the query's allocator); nil means C
	// malloc (outside the Go heap, see defaultAlloc).
	Alloc memory.Allocator
}

// Stats are the cache's counters.
type Stats struct {
	Budget    int64 `json:"budget_bytes"`
	Used      int64 `json:"used_bytes"`
	Columns   int   `json:"columns"`
	Hits      int64 `json:"hits"`
	Misses    int64 `json:"misses"`
	Evictions int64 `json:"evictions"`
	Stale     int64 `json:"stale"`
	// Filling is the bytes reads filling the cache hold (counted in the
	// budget beside Used).
	Filling int64 `json:"filling_bytes"`
	// ZoneChecked counts the zones (blocks of up to zoneRows rows of a
	// cached chunk) scans served from memory checked against zone
	// filters; ZoneSkipped those they skipped.
	ZoneChecked int64 `json:"zone_checked_batches"`
	ZoneSkipped int64 `json:"zone_skipped_batches"`
}

// Cache is a byte-bounded LRU of parsed columns. Safe for concurrent use.
type Cache struct {
	budget int64
	alloc  memory.Allocator

	// filteredOnce holds the Parquet files (fileKey) a filtered scan has
	// read straight from the file: the next filtered query of one fills
	// the cache instead (Source.HandlesFilter).
	filteredOnce sync.Map

	mu    sync.Mutex
	used  int64
	lru   *list.List // of *column; front = most recently used
	files map[fileKey]*fileEntry
	stats Stats
	// Reads filling the cache in flight (teeReader): the files they read
	// (one at a time per file: other reads of it go through uncached,
	// with the caller's allocator) and the bytes they hold, which count
	// against the budget like cached columns, so that the cache's
	// allocator never holds more than the budget.
	teeFiles map[fileKey]bool
	teeing   int64

	zoneChecked, zoneSkipped atomic.Int64
}

// fileKey identifies one version of one dataset.
type fileKey struct {
	path    string
	dataset string
	size    int64
	mtime   int64 // UnixNano
}

func keyOf(path, dataset string, size int64, mtime time.Time) fileKey {
	return fileKey{path: path, dataset: dataset, size: size, mtime: mtime.UnixNano()}
}

// fileEntry holds the cached columns of one dataset version.
type fileEntry struct {
	key  fileKey
	rows int64
	cols map[string]*column
}

// column is one cached column: its arrays in row order.
type column struct {
	file   *fileEntry
	name   string
	dtype  arrow.DataType
	chunks []arrow.Array
	bytes  int64
	elem   *list.Element
	// zones are the chunks' zone maps (per chunk, one per block of
	// zoneRows rows), computed once on first use (zonesOf).
	zoneOnce sync.Once
	zones    [][]zonemap.Zone
	// zoned is set once zones are computed (ColumnStats reads them only
	// then: it never computes them).
	zoned atomic.Bool
}

// New returns a cache with the given options.
func New(opts Options) *Cache {
	c := &Cache{budget: max(opts.Budget, 0), alloc: opts.Alloc, lru: list.New(), files: map[fileKey]*fileEntry{}, teeFiles: map[fileKey]bool{}}
	if c.alloc == nil {
		c.alloc = defaultAlloc
	}
	if r, ok := c.alloc.(interface{ setRetain(int64) }); ok {
		r.setRetain(c.budget) // emptied slabs keep their pages only within the budget
	}
	c.stats.Budget = c.budget
	return c
}

// Enabled reports whether the cache keeps anything.
func (c *Cache) Enabled() bool { return c != nil && c.budget > 0 }

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Used = c.used
	s.Filling = c.teeing
	s.Columns = c.lru.Len()
	s.ZoneChecked, s.ZoneSkipped = c.zoneChecked.Load(), c.zoneSkipped.Load()
	return s
}

// Purge drops every entry.
func (c *Cache) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Front(); e != nil; {
		next := e.Next()
		c.removeLocked(e.Value.(*column))
		e = next
	}
}

// lookup returns the cached arrays of cols (each Retained; the caller
// releases them) and marks them used, or ok=false if any is missing.
func (c *Cache) lookup(k fileKey, cols []string) (chunks [][]arrow.Array, rows int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.files[k]
	if f == nil {
		c.stats.Misses++
		return nil, 0, false
	}
	found := make([]*column, len(cols))
	for i, name := range cols {
		if found[i] = f.cols[name]; found[i] == nil {
			c.stats.Misses++
			return nil, 0, false
		}
	}
	chunks = make([][]arrow.Array, len(cols))
	for i, col := range found {
		c.lru.MoveToFront(col.elem)
		chunks[i] = make([]arrow.Array, len(col.chunks))
		for j, a := range col.chunks {
			a.Retain()
			chunks[i][j] = a
		}
	}
	c.stats.Hits++
	return chunks, f.rows, true
}

// cachedCols reports which columns of cols are cached for k.
func (c *Cache) cachedCols(k fileKey, cols []string) []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]bool, len(cols))
	if f := c.files[k]; f != nil {
		for i, name := range cols {
			out[i] = f.cols[name] != nil
		}
	}
	return out
}

// has reports whether every column of cols is cached for k.
func (c *Cache) has(k fileKey, cols []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.files[k]
	if f == nil {
		return false
	}
	for _, name := range cols {
		if f.cols[name] == nil {
			return false
		}
	}
	return true
}

// insert caches columns (arrays in row order, rows in total) for k. It
// takes over one reference of every array: arrays it does not keep (a
// column already cached, or no room) are released. It evicts least
// recently used columns of any dataset (never ones being inserted now) to
// make room; columns that cannot fit are dropped. Plain string columns
// whose values repeat are first re-encoded with one shared dictionary
// (dictshare.go).
func (c *Cache) insert(k fileKey, rows int64, names []string, types []arrow.DataType, chunks [][]arrow.Array) {
	shareDicts(c.alloc, rows, types, chunks) // (dictshare.go)
	sizes := make([]int64, len(names))
	for i := range names {
		sizes[i] = arraysSize(chunks[i])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropOtherVersionsLocked(k)
	f := c.files[k]
	if f == nil {
		f = &fileEntry{key: k, rows: rows, cols: map[string]*column{}}
		c.files[k] = f
	}
	for i, name := range names {
		if f.cols[name] != nil || f.rows != rows || sizes[i] > c.budget {
			releaseAll(chunks[i])
			continue
		}
		if !c.makeRoomLocked(sizes[i], f) {
			releaseAll(chunks[i])
			continue
		}
		col := &column{file: f, name: name, dtype: types[i], chunks: chunks[i], bytes: sizes[i]}
		col.elem = c.lru.PushFront(col)
		f.cols[name] = col
		c.used += col.bytes
	}
	if len(f.cols) == 0 {
		delete(c.files, k)
	}
}

// makeRoomLocked evicts LRU columns until n more bytes fit beside the
// cached columns and the reads filling the cache (holdTee). Columns of
// protect are never evicted; it returns false when n cannot fit.
func (c *Cache) makeRoomLocked(n int64, protect *fileEntry) bool {
	if c.teeing+n > c.budget {
		return false
	}
	for e := c.lru.Back(); e != nil && c.used+c.teeing+n > c.budget; {
		prev := e.Prev()
		if col := e.Value.(*column); col.file != protect {
			c.removeLocked(col)
			c.stats.Evictions++
		}
		e = prev
	}
	return c.used+c.teeing+n <= c.budget
}

// startTee reports whether a read of k expected to hold est bytes may
// fill the cache (teeReader): not while another read of k does, nor when
// est does not fit beside the reads filling it now. A true return must be
// followed by one endTee.
func (c *Cache) startTee(k fileKey, est int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.teeFiles[k] || c.teeing+est > c.budget {
		return false
	}
	c.teeFiles[k] = true
	return true
}

// holdTee records that the read filling the cache for k holds delta more
// bytes, evicting least recently used columns of other files to keep
// everything under the budget; false when they cannot fit (the read then
// gives up caching and drops what it holds).
func (c *Cache) holdTee(k fileKey, delta int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if delta > 0 && !c.makeRoomLocked(delta, c.files[k]) {
		return false
	}
	c.teeing += delta
	return true
}

// endTee ends the read filling the cache for k, which held held bytes
// (holdTee): they no longer count (insert counts what it keeps).
func (c *Cache) endTee(k fileKey, held int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.teeFiles, k)
	c.teeing -= held
}

// removeLocked drops one column.
func (c *Cache) removeLocked(col *column) {
	c.lru.Remove(col.elem)
	c.used -= col.bytes
	releaseAll(col.chunks)
	col.chunks = nil
	delete(col.file.cols, col.name)
	if len(col.file.cols) == 0 && c.files[col.file.key] == col.file {
		delete(c.files, col.file.key)
	}
}

// dropOtherVersionsLocked removes entries of the same dataset and path
// with another size or modification time.
func (c *Cache) dropOtherVersionsLocked(k fileKey) {
	for fk, f := range c.files {
		if fk != k && fk.path == k.path && fk.dataset == k.dataset {
			for _, col := range f.cols {
				c.removeLocked(col)
			}
			c.stats.Stale++
		}
	}
}

// invalidate drops every version of a dataset (its file changed).
func (c *Cache) invalidate(path, dataset string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropOtherVersionsLocked(fileKey{path: path, dataset: dataset, size: -1})
}

func releaseAll(as []arrow.Array) {
	for _, a := range as {
		a.Release()
	}
}

// arraysSize is the bytes of the buffers behind arrays, each buffer
// counted once (slices of one chunk share buffers).
func arraysSize(as []arrow.Array) int64 {
	seen := map[*memory.Buffer]bool{}
	var n int64
	for _, a := range as {
		n += bufferBytes(seen, a)
	}
	return n
}

// bufferBytes is the bytes of the buffers behind a not in seen, which it
// adds to seen.
func bufferBytes(seen map[*memory.Buffer]bool, a arrow.Array) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil && !seen[b] {
				seen[b] = true
				n += int64(b.Cap())
			}
		}
		for _, ch := range d.Children() {
			walk(ch)
		}
		if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil {
			walk(dict)
		}
	}
	walk(a.Data())
	return n
}
