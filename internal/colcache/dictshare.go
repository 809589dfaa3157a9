package colcache

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Shared dictionaries. A plain string column whose values repeat (at most
// one distinct value per shareRatio rows and shareMaxValues in all, over at
// least shareMinRows rows)
// is kept dictionary-encoded with one dictionary for all its chunks:
// dictionary<int32, utf8>, every chunk's indices pointing into the same
// dictionary array. The parse chunks' own int16 dictionaries (catalog/csv)
// cover the columns with few values per chunk; a column like H2O's id3
// (100k distinct among 10M rows, ~55k per parse chunk) arrives plain. The
// engine resolves a dictionary entry once per query while consecutive
// batches share the dictionary (group keys, predicates, join keys), so each
// distinct value is hashed once instead of once per row; the column also
// takes less memory (4 bytes a row and the dictionary, instead of 4 bytes
// of offset and the bytes of the value).

const (
	// shareMinRows is the fewest rows a column needs to be encoded (small
	// columns gain nothing measurable).
	shareMinRows = 1 << 16
	// shareRatio: at most rows/shareRatio distinct values.
	shareRatio = 8
	// shareMaxValues bounds a dictionary (every result batch holding rows
	// of the column holds it: a result handle counts its bytes).
	shareMaxValues = 1 << 20
	// shareWindow is the rows over which the growth of the distinct count
	// is measured (distinctGrowth).
	shareWindow = 1 << 16
)

// shareDictRows counts the rows shareDict hashed (tests read it: a column
// that cannot meet the ratio is given up after a few windows).
var shareDictRows atomic.Int64

// sharedDictType is the type of columns kept with a shared dictionary.
var sharedDictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// shareDict returns chunks (a plain string column of rows rows, in row
// order) encoded with one shared dictionary, allocated with mem, or
// ok=false (nothing allocated) when the column is not plain utf8, too short
// or has too many distinct values. The caller still owns chunks.
func shareDict(mem memory.Allocator, chunks []arrow.Array, rows int64) (out []arrow.Array, ok bool) {
	if rows < shareMinRows || len(chunks) == 0 {
		return nil, false
	}
	for _, a := range chunks {
		if a.DataType().ID() != arrow.STRING {
			return nil, false
		}
	}
	limit := int(min(rows/shareRatio, shareMaxValues))
	grow := distinctGrowth{limit: limit, rows: rows}
	var hashed int64
	defer func() { shareDictRows.Add(hashed) }()
	index := make(map[string]int32, 1024)
	var uniq []string // views into chunks (alive until the caller releases them)
	bufs := make([]*memory.Buffer, 0, len(chunks))
	defer func() {
		for _, b := range bufs {
			b.Release()
		}
	}()
	for _, a := range chunks {
		s := a.(*array.String)
		d := a.Data()
		off := d.Offset()
		ib := memory.NewResizableBuffer(mem)
		bufs = append(bufs, ib)
		ib.Resize((off + s.Len()) * 4)
		codes := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(ib.Bytes()))), off+s.Len())[off:]
		for i := range s.Len() {
			if hashed%shareWindow == 0 && hashed > 0 && grow.hopeless(len(uniq), hashed) {
				return nil, false
			}
			hashed++
			if s.IsNull(i) {
				codes[i] = 0
				continue
			}
			v := s.Value(i)
			c, seen := index[v]
			if !seen {
				if len(uniq) >= limit {
					return nil, false
				}
				c = int32(len(uniq))
				index[v] = c
				uniq = append(uniq, v)
			}
			codes[i] = c
		}
	}
	dict := buildDictValues(mem, uniq)
	defer dict.Release()
	out = make([]arrow.Array, len(chunks))
	for i, a := range chunks {
		d := a.Data()
		nd := array.NewDataWithDictionary(sharedDictType, d.Len(), []*memory.Buffer{d.Buffers()[0], bufs[i]}, d.NullN(), d.Offset(), dict.Data().(*array.Data))
		out[i] = array.MakeFromData(nd)
		nd.Release()
	}
	return out, true
}

// distinctGrowth decides early that a column cannot meet the ratio: that
// its distinct values, counted so far over whole windows of shareWindow
// rows, will pass limit before its rows rows end. Were the rows drawn in
// random order from any distribution, the expected number of new values
// per window would be a sum of geometric sequences (one per value, with
// ratio (1-p)^shareWindow), which is log-convex: each window's ratio to
// the one before is at least the last one's. Continuing the last ratio r
// geometrically over the windows left therefore underestimates the values
// still to come, and a column given up on that estimate (with a margin of
// limit/8 for the noise of the counts) would not have met the ratio. A
// column of runs (sorted) grows linearly, which the estimate continues as
// it is (r = 1). What is decided is only the encoding: a column given up
// wrongly (one whose later rows repeat its earlier ones more than random
// order would) stays plain. For a column like the benchmark's free-text
// notes (5M rows, about half of them new values throughout) this stops
// after 3 windows instead of hashing 1.3M rows into the map.
type distinctGrowth struct {
	limit   int
	rows    int64
	last    int // distinct values at the end of the last window
	newPrev int // new values in the window before the last
}

// hopeless is called at the end of each window with the distinct values
// and rows seen so far.
func (g *distinctGrowth) hopeless(distinct int, seen int64) bool {
	newLast := distinct - g.last
	newPrev := g.newPrev
	g.last, g.newPrev = distinct, newLast
	if seen < 2*shareWindow || newPrev == 0 || newLast == 0 {
		return false
	}
	r := min(float64(newLast)/float64(newPrev), 1)
	left := float64(g.rows-seen) / shareWindow // windows still to come
	var more float64
	if r >= 1 {
		more = float64(newLast) * left
	} else {
		more = float64(newLast) * r * (1 - math.Pow(r, left)) / (1 - r)
	}
	return float64(distinct)+more > float64(g.limit)+float64(g.limit)/8
}

// buildDictValues is the string array of vals, allocated with mem.
func buildDictValues(mem memory.Allocator, vals []string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	b.Reserve(len(vals))
	b.ReserveData(n)
	for _, v := range vals {
		b.Append(v)
	}
	return b.NewArray()
}

// shareDicts replaces the columns of chunks that shareDict encodes (their
// old arrays released, types updated).
func shareDicts(mem memory.Allocator, rows int64, types []arrow.DataType, chunks [][]arrow.Array) {
	for i, cs := range chunks {
		if enc, ok := shareDict(mem, cs, rows); ok {
			releaseAll(cs)
			chunks[i], types[i] = enc, sharedDictType
		}
	}
}
