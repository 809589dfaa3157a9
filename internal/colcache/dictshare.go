package colcache

import (
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
)

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
