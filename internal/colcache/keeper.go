package colcache

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog"
)

// The cache is a catalog.ColumnKeeper: with csv.NewFormatWith or
// catalog.NewJSONFormatWith, the pass that type-checks a CSV or
// newline-delimited JSON file when the catalog opens it also parses every
// column into the cache (while the budget has room), so the first query
// does not read the file again. Low-cardinality CSV string columns arrive
// dictionary-encoded.
var _ catalog.ColumnKeeper = (*Cache)(nil)

// Reserve implements catalog.ColumnKeeper: it accepts a file whose
// estimated columns fit in the free budget (counting the entries of an
// older version of the same file as free).
func (c *Cache) Reserve(f catalog.FileInfo, est int64) (memory.Allocator, bool) {
	if !c.Enabled() {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	free := c.budget - c.used
	for fk, fe := range c.files {
		if fk.path == f.AbsPath {
			for _, col := range fe.cols {
				free += col.bytes
			}
		}
	}
	return c.alloc, est <= free
}

// Keep implements catalog.ColumnKeeper.
func (c *Cache) Keep(ds *catalog.Dataset, cols [][]arrow.Array) {
	var names []string
	var types []arrow.DataType
	var chunks [][]arrow.Array
	for i, col := range cols {
		if col == nil {
			continue
		}
		f := ds.Schema.Field(i)
		t := f.Type
		if len(col) > 0 {
			t = col[0].DataType()
		}
		names, types, chunks = append(names, f.Name), append(types, t), append(chunks, col)
	}
	if len(names) == 0 || !c.Enabled() {
		for _, col := range chunks {
			releaseAll(col)
		}
		return
	}
	c.insert(keyOf(ds.AbsPath, ds.ID, ds.SizeBytes, ds.ModTime), ds.RowCount, names, types, chunks)
}
