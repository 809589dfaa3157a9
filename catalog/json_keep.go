package catalog

import (
	"bytes"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/catalog/infer"
)

// Keeping the columns of a newline-delimited JSON file parsed while it is
// opened (JSONOptions.Keeper), so that a cold query reads the file once.
//
// Each chunk of the opening pass is tokenized once: as inference folds a
// record's fields into the chunk's columns, it also keeps where each
// field's text is (a jsonCell: an offset into the chunk, or into a side
// buffer for the texts the tokenizer unescaped or re-encoded, which live
// only until the next record) and its record number. Once the chunk's
// records are read, each column's kind over the chunk is known, and the
// column is built in that kind from its cells, with the builders and
// parsers a scan uses (jsonCells), on the chunk's worker.
//
// The file's kinds are only known after the last chunk. A chunk built in
// a kind the file's column does not end up with is converted when that
// gives exactly what a scan would build, and the whole column is left to
// the file (not kept) otherwise:
//
//   - a chunk without a value in the column: nulls of the final type;
//   - a chunk of the final kind (or int64 in both): as built;
//   - a chunk built as text (its cells as written, which is what a scan
//     parses): converted to the final kind (textToKind), a no-op for text;
//   - KindInt to float64: exact (KindInt values are integers float64
//     holds exactly, and float64(v) is what ParseFloat gives their text);
//   - canonical integers (KindInt, KindIntWide) to text: printed back,
//     which gives their text as written;
//   - anything else (a float, date, timestamp or bool chunk of a column
//     that ends up text or of another date layout): not kept.
//
// A column with a type override is not kept.

// jsonKeepChunkBytes is the chunk size of an opening pass that keeps the
// columns: each chunk becomes one array of every column (the cache's
// batches), so it is bigger than jsonInferChunkBytes.
const jsonKeepChunkBytes = 4 << 20

// jsonCell is a kept cell of a chunk's column: its record number in the
// chunk (from 1), JSON kind (never jNull) and where its text is: n bytes
// at off in the chunk, or in the side buffer when side is set; a bool's
// value is n (1: true).
type jsonCell struct {
	off, n uint32
	row    int32
	kind   jsonKind
	side   bool
}

// text is the cell's text, in the chunk data or the side buffer side.
func (c jsonCell) text(data, side []byte) string {
	switch {
	case c.kind == jBool && c.n == 1:
		return "true"
	case c.kind == jBool:
		return "false"
	case c.side:
		return arenaString(side[c.off : c.off+c.n])
	}
	return arenaString(data[c.off : c.off+c.n])
}

// jsonKeepScratch is a worker's memory for keeping chunks: cell lists and
// the side buffer, reused from chunk to chunk.
type jsonKeepScratch struct {
	cells [][]jsonCell
	side  []byte
}

// keepChunk makes in, the inference of the chunk recs reads, keep its
// columns (allocating them from mem) with the worker's scratch ks.
func (in *jsonInference) keepChunk(mem memory.Allocator, ks *jsonKeepScratch, recs *jsonRecords) {
	in.keep, in.ks, in.side = mem, ks, ks.side[:0]
	in.lines = bytes.Count(recs.buf[:recs.end], newline) + 1
	if len(recs.buf) > math.MaxUint32 { // offsets do not fit: keep nothing (buildKept)
		in.ks = nil
	}
}

// keepCell keeps the value f of column c in the record recs holds. Of two
// values of one key in a record the last is kept, as a scan keeps it.
func (in *jsonInference) keepCell(c *jsonColumn, recs *jsonRecords, f *jsonField) {
	if c.cells == nil {
		if k := len(in.ks.cells); k > 0 {
			c.cells = in.ks.cells[k-1]
			in.ks.cells = in.ks.cells[:k-1]
		} else if recs.n == 1 { // likely a key of every record: a cell per line
			c.cells = make([]jsonCell, 0, in.lines)
		}
	}
	row := recs.n
	if n := len(c.cells); n > 0 && int64(c.cells[n-1].row) == row {
		c.cells = c.cells[:n-1]
	}
	if f.kind == jNull {
		return
	}
	cell := jsonCell{row: int32(row), kind: f.kind}
	if f.kind == jBool {
		if f.text == "true" {
			cell.n = 1
		}
		c.cells = append(c.cells, cell)
		return
	}
	n := len(f.text)
	if off, ok := offsetIn(recs.buf[:recs.end], f.text); ok {
		cell.off = uint32(off)
	} else {
		if len(in.side)+n > math.MaxUint32 {
			c.noKeep = true
			return
		}
		cell.off, cell.side = uint32(len(in.side)), true
		in.side = append(in.side, f.text...)
	}
	cell.n = uint32(n)
	c.cells = append(c.cells, cell)
}

var newline = []byte{'\n'}

// offsetIn is the offset of s in b, or false when s is not a view of b.
func offsetIn(b []byte, s string) (int, bool) {
	if len(s) == 0 || len(s) > len(b) {
		return 0, len(s) == 0
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p < base || p-base > uintptr(len(b)-len(s)) {
		return 0, false
	}
	return int(p - base), true
}

// buildKept builds every column of the chunk recs read, in its kind over
// the chunk, from the cells kept, and gives the scratch back.
func (in *jsonInference) buildKept(recs *jsonRecords) {
	if in.ks == nil {
		for _, c := range in.cols {
			c.noKeep = true
		}
		return
	}
	data := recs.buf[:recs.end]
	for _, c := range in.cols {
		if !c.noKeep {
			c.build(in.keep, in.rows, data, in.side)
		}
		if c.cells != nil {
			in.ks.cells = append(in.ks.cells, c.cells[:0])
			c.cells = nil
		}
	}
	in.ks.side = in.side[:0]
	in.side = nil
}

// build builds the column (rows records) from its kept cells: c.kept
// (nil when the column has no value in the chunk), or c.noKeep.
func (c *jsonColumn) build(mem memory.Allocator, rows int64, data, side []byte) {
	cells := c.cells
	if c.card != nil {
		c.noKeep = true
		return
	}
	if len(cells) == 0 {
		return
	}
	k, _ := c.kind()
	b := jsonCellsOf(mem, k, false)
	defer b.release()
	b.b.Reserve(int(rows))
	if b.str != nil {
		n := 0
		for _, cell := range cells {
			n += int(cell.n)
		}
		b.str.ReserveData(n)
	}
	next := int32(1)
	for _, cell := range cells {
		if gap := cell.row - next; gap > 0 {
			b.b.AppendNulls(int(gap))
		}
		b.appendValue(cell.kind, cell.text(data, side))
		next = cell.row + 1
	}
	if gap := rows + 1 - int64(next); gap > 0 {
		b.b.AppendNulls(int(gap))
	}
	a, err := b.finish()
	if err == nil && !b.direct {
		var conv arrow.Array
		conv, err = textToKind(mem, a.(*array.String), k)
		a.Release()
		a = conv
	}
	if err != nil { // cannot happen: the cells are of kind k
		if a != nil {
			a.Release()
		}
		c.noKeep = true
		return
	}
	c.kept, c.keptKind = a, k
}

// jsonKeptChunk is the columns built over one chunk, by column of the
// file (the merged inference's numbering); a column without an array has
// no value in the chunk (or was first met later).
type jsonKeptChunk struct {
	rows  int64
	cols  []arrow.Array
	kinds []infer.Kind
}

func (ch *jsonKeptChunk) release() {
	for _, a := range ch.cols {
		if a != nil {
			a.Release()
		}
	}
	ch.cols = nil
}

// take moves column c of a chunk (a chunk inference's) to column j of ch.
func (ch *jsonKeptChunk) take(j int, c *jsonColumn) {
	for len(ch.cols) <= j {
		ch.cols = append(ch.cols, nil)
		ch.kinds = append(ch.kinds, infer.KindNull)
	}
	ch.cols[j], ch.kinds[j] = c.kept, c.keptKind
	c.kept = nil
}

// as is column j of the chunk in kind final, or false when the
// conversion would not give what a scan builds (see above).
func (ch *jsonKeptChunk) as(mem memory.Allocator, j int, final infer.Kind) (arrow.Array, bool) {
	var a arrow.Array
	var k infer.Kind
	if j < len(ch.cols) {
		a, k = ch.cols[j], ch.kinds[j]
	}
	isInt := func(k infer.Kind) bool { return k == infer.KindInt || k == infer.KindIntWide }
	switch {
	case a == nil:
		return array.MakeArrayOfNull(mem, final.ArrowType(), int(ch.rows)), true
	case k == final || isInt(k) && isInt(final):
		a.Retain()
		return a, true
	case k.Textual():
		c, err := textToKind(mem, a.(*array.String), final)
		return c, err == nil
	case k == infer.KindInt && final == infer.KindFloat:
		return infer.IntsToFloats(mem, a.(*array.Int64)), true
	case isInt(k) && final.Textual():
		return intsAsText(mem, a.(*array.Int64)), true
	}
	return nil, false
}

// intsAsText is an array of canonical integers as their texts.
func intsAsText(mem memory.Allocator, a *array.Int64) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.Reserve(a.Len())
	var buf [24]byte
	for i := range a.Len() {
		if a.IsNull(i) {
			b.AppendNull()
		} else {
			b.BinaryBuilder.Append(strconv.AppendInt(buf[:0], a.Value(i), 10))
		}
	}
	return b.NewArray()
}

// keptColumns are the file's columns in their final kinds from the kept
// chunks (nil for a column that is not kept); it allocates with in.keep.
func (in *jsonInference) keptColumns(kinds []infer.Kind, types []*cardType) [][]arrow.Array {
	out := make([][]arrow.Array, len(kinds))
	for j, final := range kinds {
		if in.cols[j].noKeep || types != nil && types[j] != nil {
			continue
		}
		col := make([]arrow.Array, 0, len(in.chunks))
		for _, ch := range in.chunks {
			if ch.rows == 0 {
				continue
			}
			a, ok := ch.as(in.keep, j, final)
			if !ok {
				releaseAll(col)
				col = nil
				break
			}
			col = append(col, a)
		}
		out[j] = col
	}
	return out
}
