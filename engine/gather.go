package engine

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/quarrydb/quarry/internal/qerr"
)

// gatherBatch copies the rows refs (in that order) out of one chunk into a
// new batch with the given schema (see gatherer.gather; with a single
// chunk every row fits one batch).
func gatherBatch(hard, soft memory.Allocator, schema *arrow.Schema, chunk arrow.RecordBatch, refs []rowRef) (arrow.RecordBatch, error) {
	b, err := newGatherer(schema, []arrow.RecordBatch{chunk}).gather(hard, soft, refs)
	if err == nil && int(b.NumRows()) != len(refs) {
		b.Release()
		return nil, qerr.Internal(nil, "gather: %d of %d rows of one chunk fit a batch", b.NumRows(), len(refs))
	}
	return b, err
}

// gatherer copies rows out of a fixed set of chunks. Everything that only
// depends on the chunks (typed value slices, bitmaps, offsets) is prepared
// once, so gathering a batch costs O(rows), not O(chunks).
type gatherer struct {
	schema *arrow.Schema
	cols   []gatherCol
}

type gatherCol struct {
	dt     arrow.DataType
	arrs   []arrow.Array
	valid  []validity
	nulls  bool
	fixed  any       // [][]uintN for fixed-width types (N = byte width)
	bits   []bitsrc  // boolean values
	offs   any       // [][]int32 or [][]int64 for string/binary types
	data   [][]byte  // string/binary data buffers
	codes  []dictIdx // dictionary-encoded strings: indices
	dicts  []strSrc  // dictionary-encoded strings: dictionary values
	shared bool      // dictionary-encoded strings: every chunk has the same dictionary
}

type bitsrc struct {
	bits []byte
	off  int
}

// newGatherer prepares chunks (which must stay alive while it is used).
func newGatherer(schema *arrow.Schema, chunks []arrow.RecordBatch) *gatherer {
	g := &gatherer{schema: schema, cols: make([]gatherCol, schema.NumFields())}
	for c := range g.cols {
		gc := &g.cols[c]
		gc.dt = schema.Field(c).Type
		gc.arrs = make([]arrow.Array, len(chunks))
		gc.valid = make([]validity, len(chunks))
		for i, ch := range chunks {
			a := ch.Column(c)
			gc.arrs[i] = a
			gc.valid[i] = validityOf(a)
			gc.nulls = gc.nulls || gc.valid[i].bits != nil
		}
		if isDictStr(gc.dt) {
			gc.codes = make([]dictIdx, len(chunks))
			gc.dicts = make([]strSrc, len(chunks))
			gc.shared = len(gc.arrs) > 0
			for i, a := range gc.arrs {
				if a.Len() > 0 {
					gc.codes[i] = dictIndices(a, nil)
					gc.dicts[i] = strSrcOf(dictValues(a))
				}
				gc.shared = gc.shared && sameDictData(gc.arrs[0], a)
			}
			continue
		}
		switch gc.dt.ID() {
		case arrow.BOOL:
			gc.bits = make([]bitsrc, len(chunks))
			for i, a := range gc.arrs {
				if b := a.Data().Buffers()[1]; b != nil && a.Len() > 0 {
					gc.bits[i] = bitsrc{b.Bytes(), a.Data().Offset()}
				}
			}
			continue
		case arrow.STRING, arrow.BINARY:
			gc.offs = varOffsets[int32](gc.arrs)
			gc.data = varData(gc.arrs)
			continue
		case arrow.LARGE_STRING, arrow.LARGE_BINARY:
			gc.offs = varOffsets[int64](gc.arrs)
			gc.data = varData(gc.arrs)
			continue
		}
		switch fixedWidth(gc.dt) {
		case 1:
			gc.fixed = fixedValues[uint8](gc.arrs)
		case 2:
			gc.fixed = fixedValues[uint16](gc.arrs)
		case 4:
			gc.fixed = fixedValues[uint32](gc.arrs)
		case 8:
			gc.fixed = fixedValues[uint64](gc.arrs)
		}
	}
	return g
}

func fixedValues[T arrow.FixedWidthType](arrs []arrow.Array) [][]T {
	out := make([][]T, len(arrs))
	for i, a := range arrs {
		out[i] = values[T](a)
	}
	return out
}

func varOffsets[O int32 | int64](arrs []arrow.Array) [][]O {
	out := make([][]O, len(arrs))
	for i, a := range arrs {
		if a.Len() > 0 {
			out[i] = arrow.GetOffsets[O](a.Data(), 1)
		}
	}
	return out
}

func varData(arrs []arrow.Array) [][]byte {
	out := make([][]byte, len(arrs))
	for i, a := range arrs {
		if b := a.Data().Buffers()[2]; b != nil {
			out[i] = b.Bytes()
		}
	}
	return out
}

// gather copies the rows refs (in that order) into one new batch. The
// batch holds a prefix of refs, at least one row when refs is not empty:
// all of them unless a dictionary-encoded column whose chunks have
// different dictionaries (re-encoded into a new one of the schema's type)
// needs more distinct values than its index type addresses; the batch then
// ends before the first row that has no code left, and the caller gathers
// the rest into further batches. hard allocates the result: a budget
// overrun is returned as the budget error, with everything built so far
// released. soft is used for the types copied by Arrow's own Concatenate.
func (g *gatherer) gather(hard, soft memory.Allocator, refs []rowRef) (out arrow.RecordBatch, err error) {
	cols, n, err := g.gatherCols(hard, soft, refs, nil)
	if err != nil {
		return nil, err
	}
	out = array.NewRecordBatch(g.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return out, nil
}

// gatherCols is gather of the columns c with need[c] (every column when
// need is nil; the others are nil): the arrays, which the caller
// releases, and the rows they hold.
func (g *gatherer) gatherCols(hard, soft memory.Allocator, refs []rowRef, need []bool) (cols []arrow.Array, n int, err error) {
	defer catchBudget(&err)
	encs := make([]*dictEncoding, len(g.cols))
	for c := range g.cols {
		if gc := &g.cols[c]; gc.codes != nil && !gc.shared && (need == nil || need[c]) {
			encs[c] = encodeGathered(gc, refs)
			refs = refs[:encs[c].rows]
		}
	}
	cols = make([]arrow.Array, len(g.cols))
	done := false
	defer func() { // on an error or a budget panic
		if done {
			return
		}
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
		cols = nil
	}()
	for c := range g.cols {
		switch {
		case need != nil && !need[c]:
		case encs[c] != nil:
			cols[c], err = encs[c].build(hard, &g.cols[c], refs)
		default:
			cols[c], err = g.cols[c].gather(hard, soft, refs)
		}
		if err != nil {
			return nil, 0, err
		}
	}
	done = true
	return cols, len(refs), nil
}

func (gc *gatherCol) gather(hard, soft memory.Allocator, refs []rowRef) (arrow.Array, error) {
	if gc.codes != nil { // one shared dictionary (gatherer.gather re-encodes the others)
		return gatherShared(hard, gc, refs), nil
	}
	switch f := gc.fixed.(type) {
	case [][]uint8:
		return gatherFixed(hard, gc, f, refs), nil
	case [][]uint16:
		return gatherFixed(hard, gc, f, refs), nil
	case [][]uint32:
		return gatherFixed(hard, gc, f, refs), nil
	case [][]uint64:
		return gatherFixed(hard, gc, f, refs), nil
	}
	switch o := gc.offs.(type) {
	case [][]int32:
		return gatherVar(hard, gc, o, refs)
	case [][]int64:
		return gatherVar(hard, gc, o, refs)
	}
	if gc.bits != nil {
		return gatherBool(hard, gc, refs), nil
	}
	return gatherSlices(soft, gc.arrs, refs)
}

// gatherValidity builds the validity bitmap of the gathered rows, or nil
// (and 0 nulls) when none of the sources has nulls.
func (gc *gatherCol) gatherValidity(mem memory.Allocator, refs []rowRef) (*memory.Buffer, int) {
	if !gc.nulls {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	ok := false
	defer func() {
		if !ok {
			buf.Release()
		}
	}()
	buf.Resize(int(bitutil.BytesForBits(int64(len(refs)))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	for i, r := range refs {
		if gc.valid[r.b].ok(int(r.r)) {
			bitutil.SetBit(bits, i)
		} else {
			nulls++
		}
	}
	ok = true
	return buf, nulls
}

func makeArray(dt arrow.DataType, n int, bufs []*memory.Buffer, nulls int) arrow.Array {
	d := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func releaseBufs(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

func gatherFixed[T ~uint8 | ~uint16 | ~uint32 | ~uint64](mem memory.Allocator, gc *gatherCol, vss [][]T, refs []rowRef) arrow.Array {
	var valid, data *memory.Buffer
	defer func() { releaseBufs(valid, data) }()
	var nulls int
	valid, nulls = gc.gatherValidity(mem, refs)
	data = memory.NewResizableBuffer(mem)
	var zero T
	data.Resize(len(refs) * int(unsafe.Sizeof(zero)))
	out := arrow.GetData[T](data.Bytes())[:len(refs)]
	if len(vss) == 1 {
		vs := vss[0]
		for i, r := range refs {
			out[i] = vs[r.r]
		}
	} else {
		for i, r := range refs {
			out[i] = vss[r.b][r.r]
		}
	}
	return makeArray(gc.dt, len(refs), []*memory.Buffer{valid, data}, nulls)
}

func gatherBool(mem memory.Allocator, gc *gatherCol, refs []rowRef) arrow.Array {
	var valid, data *memory.Buffer
	defer func() { releaseBufs(valid, data) }()
	var nulls int
	valid, nulls = gc.gatherValidity(mem, refs)
	data = memory.NewResizableBuffer(mem)
	data.Resize(int(bitutil.BytesForBits(int64(len(refs)))))
	bits := data.Bytes()
	clear(bits)
	for i, r := range refs {
		if src := gc.bits[r.b]; src.bits != nil && bitutil.BitIsSet(src.bits, src.off+int(r.r)) {
			bitutil.SetBit(bits, i)
		}
	}
	return makeArray(gc.dt, len(refs), []*memory.Buffer{valid, data}, nulls)
}

func gatherVar[O int32 | int64](mem memory.Allocator, gc *gatherCol, offss [][]O, refs []rowRef) (arrow.Array, error) {
	total := 0
	for _, r := range refs {
		o := offss[r.b]
		total += int(o[r.r+1] - o[r.r])
	}
	var zero O
	if unsafe.Sizeof(zero) == 4 && total > math.MaxInt32 {
		return nil, qerr.Limit(qerr.CodeResourceExhausted,
			"a result batch holds more than 2 GiB of %s data", gc.dt).
			WithHint("select fewer rows or columns per request")
	}
	var valid, offs, data *memory.Buffer
	defer func() { releaseBufs(valid, offs, data) }()
	var nulls int
	valid, nulls = gc.gatherValidity(mem, refs)
	offs = memory.NewResizableBuffer(mem)
	offs.Resize((len(refs) + 1) * int(unsafe.Sizeof(zero)))
	os := arrow.GetData[O](offs.Bytes())[:len(refs)+1]
	data = memory.NewResizableBuffer(mem)
	data.Resize(total)
	bs := data.Bytes()
	pos := 0
	os[0] = 0
	for i, r := range refs {
		o := offss[r.b]
		pos += copy(bs[pos:], gc.data[r.b][o[r.r]:o[r.r+1]])
		os[i+1] = O(pos)
	}
	return makeArray(gc.dt, len(refs), []*memory.Buffer{valid, offs, data}, nulls), nil
}

// gatherSlices copies rows of types without a dedicated kernel by
// concatenating runs of consecutive rows with Arrow's Concatenate.
func gatherSlices(mem memory.Allocator, srcs []arrow.Array, refs []rowRef) (arrow.Array, error) {
	if len(refs) == 0 {
		return array.MakeArrayOfNull(mem, srcs[0].DataType(), 0), nil
	}
	var parts []arrow.Array
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := 0; i < len(refs); {
		j := i + 1
		for j < len(refs) && refs[j].b == refs[i].b && refs[j].r == refs[j-1].r+1 {
			j++
		}
		parts = append(parts, array.NewSlice(srcs[refs[i].b], int64(refs[i].r), int64(refs[i].r)+int64(j-i)))
		i = j
	}
	out, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, qerr.Internal(err, "copying %s rows: %v", srcs[0].DataType(), err)
	}
	return out, nil
}

// buildFixed builds an array of type dt from typed values; valid == nil means no nulls.
func buildFixed[T arrow.FixedWidthType](mem memory.Allocator, dt arrow.DataType, vals []T, valid []bool) arrow.Array {
	var vb, data *memory.Buffer
	defer func() { releaseBufs(vb, data) }()
	n := len(vals)
	var nulls int
	vb, nulls = buildValidity(mem, valid)
	data = memory.NewResizableBuffer(mem)
	var zero T
	data.Resize(n * int(unsafe.Sizeof(zero)))
	copy(arrow.GetData[T](data.Bytes()), vals)
	return makeArray(dt, n, []*memory.Buffer{vb, data}, nulls)
}

// buildValidity returns the bitmap for valid, or nil when every slot is valid.
func buildValidity(mem memory.Allocator, valid []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, ok := range valid {
		if !ok {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	ok := false
	defer func() {
		if !ok {
			buf.Release()
		}
	}()
	buf.Resize(int(bitutil.BytesForBits(int64(len(valid)))))
	bits := buf.Bytes()
	clear(bits)
	for i, v := range valid {
		if v {
			bitutil.SetBit(bits, i)
		}
	}
	ok = true
	return buf, nulls
}

// buildBools builds a boolean array.
func buildBools(mem memory.Allocator, vals []bool, valid []bool) arrow.Array {
	var vb, data *memory.Buffer
	defer func() { releaseBufs(vb, data) }()
	var nulls int
	vb, nulls = buildValidity(mem, valid)
	data = memory.NewResizableBuffer(mem)
	data.Resize(int(bitutil.BytesForBits(int64(len(vals)))))
	bits := data.Bytes()
	clear(bits)
	for i, v := range vals {
		if v {
			bitutil.SetBit(bits, i)
		}
	}
	return makeArray(arrow.FixedWidthTypes.Boolean, len(vals), []*memory.Buffer{vb, data}, nulls)
}

// buildStrings builds a string or large_string array (dt) from Go strings.
func buildStrings(mem memory.Allocator, dt arrow.DataType, vals []string, valid []bool) arrow.Array {
	if dt.ID() == arrow.LARGE_STRING {
		return buildVar[int64](mem, dt, vals, valid)
	}
	return buildVar[int32](mem, dt, vals, valid)
}

func buildVar[O int32 | int64](mem memory.Allocator, dt arrow.DataType, vals []string, valid []bool) arrow.Array {
	var vb, offs, data *memory.Buffer
	defer func() { releaseBufs(vb, offs, data) }()
	var nulls int
	vb, nulls = buildValidity(mem, valid)
	total := 0
	for _, s := range vals {
		total += len(s)
	}
	var zero O
	offs = memory.NewResizableBuffer(mem)
	offs.Resize((len(vals) + 1) * int(unsafe.Sizeof(zero)))
	os := arrow.GetData[O](offs.Bytes())[:len(vals)+1]
	data = memory.NewResizableBuffer(mem)
	data.Resize(total)
	bs := data.Bytes()
	pos := 0
	os[0] = 0
	for i, s := range vals {
		pos += copy(bs[pos:], s)
		os[i+1] = O(pos)
	}
	return makeArray(dt, len(vals), []*memory.Buffer{vb, offs, data}, nulls)
}
