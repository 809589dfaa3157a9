package csv

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/quarrydb/quarry/catalog/infer"
)

// This file turns the field spans of one tokenized chunk into Arrow arrays,
// one column at a time, writing straight into allocator-owned buffers.
// Every kind parses exactly like the reference reader (arrow-go's CSV
// reader: strconv.ParseInt/ParseFloat, time.Parse("2006-01-02"); and
// convertColumn for bool and timestamps): fast paths handle the common
// shapes and fall back to strconv / parseTimestamp for everything else.

// colSpans addresses one recorded column in a tokenized chunk.
type colSpans struct {
	b    []byte
	sp   []uint32 // start, end of the field in each row
	rows int
}

// spansOf returns the column of slot s of a tokenized chunk b.
func (t *csvTokenizer) spansOf(b []byte, s int) colSpans {
	return colSpans{b: b, sp: t.cols[s][:2*t.rows], rows: t.rows}
}

func (c colSpans) at(r int, scratch *[]byte) []byte {
	st, en := c.sp[2*r], c.sp[2*r+1]
	if st&spanQuoted == 0 {
		return c.b[st:en]
	}
	return quotedField(c.b, st, en, scratch)
}

// quotedField is field for a quoted field (kept out of line so at inlines).
//
//go:noinline
func quotedField(b []byte, start, end uint32, scratch *[]byte) []byte {
	return field(b, start, end, scratch)
}

// validity builds a validity bitmap lazily (only once a null is seen).
type validity struct {
	buf   *memory.Buffer
	bits  []byte
	nulls int
}

func (v *validity) setNull(mem memory.Allocator, i, n int) {
	if v.buf == nil {
		v.buf = newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
		v.bits = v.buf.Bytes()
		for j := range v.bits {
			v.bits[j] = 0xFF
		}
	}
	bitutil.ClearBit(v.bits, i)
	v.nulls++
}

func (v *validity) release() {
	if v.buf != nil {
		v.buf.Release()
		v.buf = nil
	}
}

func newBuffer(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(n)
	return b
}

// makeArray wraps buffers into an array and drops the local references.
func makeArray(dt arrow.DataType, n int, v *validity, bufs ...*memory.Buffer) arrow.Array {
	all := append([]*memory.Buffer{v.buf}, bufs...)
	d := array.NewData(dt, n, all, nil, v.nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	for _, b := range all {
		if b != nil {
			b.Release()
		}
	}
	return a
}

// cellError reports a cell that does not parse as its column's type.
type cellError struct {
	val  string
	want string
}

func (e *cellError) Error() string {
	v := e.val
	if len(v) > 64 {
		v = v[:64] + "…"
	}
	return fmt.Sprintf("value %q is not a valid %s", v, e.want)
}

// colBuilder accumulates one column of a chunk, a batch of tokenized rows
// at a time, into allocator-owned buffers sized for an upper bound of the
// chunk's rows (its newline count + 1).
type colBuilder interface {
	// add parses the rows of c after the rows added so far; a cell that
	// does not parse is a *cellError (or errInvalidUTF8).
	add(c colSpans, scratch *[]byte) error
	// finish returns the array of every row added; the builder is done.
	finish() arrow.Array
	// release frees a builder that will not finish.
	release()
}

// newBuilder returns the builder of kind k for up to ub rows. validate
// (inference) makes builders accept only the cells whose kind joins k to k
// (a *cellError otherwise) and string builders check UTF-8; with dict, a
// string builder tries dictionary encoding, looking values up in dict.
func newBuilder(mem memory.Allocator, k infer.Kind, ub int, validate bool, dict *workerDict) colBuilder {
	check := infer.KindNull
	if validate {
		check = k
	}
	switch k {
	case infer.KindInt, infer.KindIntWide:
		return &int64Builder{fixed: newFixed(mem, ub, 8), check: check}
	case infer.KindFloat:
		return &float64Builder{fixed: newFixed(mem, ub, 8), check: validate}
	case infer.KindBool:
		return &boolBuilder{fixed: newFixedBits(mem, ub)}
	}
	switch dt := k.ArrowType(); dt.ID() {
	case arrow.DATE32:
		return &date32Builder{fixed: newFixed(mem, ub, 4), kind: k}
	case arrow.TIMESTAMP:
		return &tsBuilder{fixed: newFixed(mem, ub, 8), dt: dt, kind: k}
	}
	var b colBuilder
	if dict != nil {
		b = newDictBuilder(mem, ub, dict)
	} else {
		b = newStringBuilder(mem, ub, validate)
	}
	if validate && k != infer.KindString {
		b = &textBuilder{colBuilder: b, kind: k}
	}
	return b
}

// textBuilder is a string builder for a textual kind other than string
// (numeric text, ambiguous dates): it refuses cells that would change the
// kind.
type textBuilder struct {
	colBuilder
	kind infer.Kind
}

func (b *textBuilder) add(c colSpans, scratch *[]byte) error {
	for r := range c.rows {
		if f := c.at(r, scratch); len(f) > 0 && !(b.kind == infer.KindNumText && looksDecimal(f)) && widenBytes(b.kind, f) != b.kind {
			return &cellError{string(f), "value of the column's kind"}
		}
	}
	return b.colBuilder.add(c, scratch)
}

// fixed is the state shared by the fixed-width builders.
type fixed struct {
	mem memory.Allocator
	ub  int // capacity in rows
	vb  *memory.Buffer
	n   int
	v   validity
}

func newFixed(mem memory.Allocator, ub, width int) fixed {
	return fixed{mem: mem, ub: ub, vb: newBuffer(mem, max(ub, 1)*width)}
}

func newFixedBits(mem memory.Allocator, ub int) fixed {
	return fixed{mem: mem, ub: ub, vb: newBuffer(mem, int(bitutil.BytesForBits(int64(max(ub, 1)))))}
}

// reserve makes room for k more rows (the bound is exact unless the chunk
// changed under us, so this rarely copies).
func (f *fixed) reserve(k, width int) {
	if f.n+k <= f.ub {
		return
	}
	ub := max(2*f.ub, f.n+k)
	if width == 0 {
		f.vb.Resize(int(bitutil.BytesForBits(int64(ub))))
	} else {
		f.vb.Resize(ub * width)
	}
	if f.v.buf != nil {
		f.v.buf.Resize(int(bitutil.BytesForBits(int64(ub))))
		f.v.bits = f.v.buf.Bytes()
		for i := f.ub; i < ub; i++ {
			bitutil.SetBit(f.v.bits, i)
		}
	}
	f.ub = ub
}

func (f *fixed) null() { f.v.setNull(f.mem, f.n, f.ub) }

func (f *fixed) release() {
	f.v.release()
	if f.vb != nil {
		f.vb.Release()
		f.vb = nil
	}
}

func (f *fixed) array(dt arrow.DataType) arrow.Array {
	a := makeArray(dt, f.n, &f.v, f.vb)
	f.vb = nil
	return a
}

type int64Builder struct {
	fixed
	check infer.Kind // kindInt or kindIntWide: refuse cells of other kinds
}

func (b *int64Builder) add(c colSpans, scratch *[]byte) error {
	b.reserve(c.rows, 8)
	vals := arrow.Int64Traits.CastFromBytes(b.vb.Bytes())
	for r := range c.rows {
		st, en := c.sp[2*r], c.sp[2*r+1]
		var f []byte
		if st&spanQuoted == 0 {
			f = c.b[st:en]
		} else {
			f = quotedField(c.b, st, en, scratch)
		}
		if len(f) == 0 {
			b.null()
		} else {
			x, ok := parseInt64Bytes(f)
			if !ok || b.check != infer.KindNull && (len(f) > 15 || f[0] == '+' || f[0] == '0' && len(f) > 1 || f[0] == '-' && f[1] == '0') &&
				widenBytes(b.check, f) != b.check {
				return &cellError{string(f), "int64"}
			}
			vals[b.n] = x
		}
		b.n++
	}
	return nil
}

func (b *int64Builder) finish() arrow.Array { return b.array(arrow.PrimitiveTypes.Int64) }

type float64Builder struct {
	fixed
	check bool // refuse cells that are not kindFloat cells
}

func (b *float64Builder) add(c colSpans, scratch *[]byte) error {
	b.reserve(c.rows, 8)
	vals := arrow.Float64Traits.CastFromBytes(b.vb.Bytes())
	for r := range c.rows {
		st, en := c.sp[2*r], c.sp[2*r+1]
		var f []byte
		if st&spanQuoted == 0 {
			f = c.b[st:en]
		} else {
			f = quotedField(c.b, st, en, scratch)
		}
		if len(f) == 0 {
			b.null()
		} else {
			x, fast, ok := parseFloatCell(f)
			if !ok || b.check && !(fast && cleanLead(f)) && widenBytes(infer.KindFloat, f) != infer.KindFloat {
				return &cellError{string(f), "float64"}
			}
			vals[b.n] = x
		}
		b.n++
	}
	return nil
}

// parseFloatCell parses a float column's non-empty cell; fast reports a
// plain decimal of at most 15 digits (which prints back as written).
func parseFloatCell(f []byte) (x float64, fast, ok bool) {
	if x, fast = parseDecimalFast(f); fast {
		return x, true, true
	}
	x, ok = parseFloat64Bytes(f)
	return x, false, ok
}

// parseFloatValue is the value of a float column's non-empty cell.
func parseFloatValue(f []byte) (float64, bool) {
	x, _, ok := parseFloatCell(f)
	return x, ok
}

func (b *float64Builder) finish() arrow.Array { return b.array(arrow.PrimitiveTypes.Float64) }

type boolBuilder struct{ fixed }

func (b *boolBuilder) add(c colSpans, scratch *[]byte) error {
	b.reserve(c.rows, 0)
	bits := b.vb.Bytes()
	for r := range c.rows {
		f := c.at(r, scratch)
		if len(f) == 0 {
			b.null()
		} else {
			x, ok := infer.ParseBool(unsafeString(f))
			if !ok {
				return &cellError{string(f), "bool"}
			}
			if x {
				bitutil.SetBit(bits, b.n)
			}
		}
		b.n++
	}
	return nil
}

func (b *boolBuilder) finish() arrow.Array { return b.array(arrow.FixedWidthTypes.Boolean) }

type date32Builder struct {
	fixed
	kind infer.Kind
}

func (b *date32Builder) add(c colSpans, scratch *[]byte) error {
	b.reserve(c.rows, 4)
	vals := arrow.Date32Traits.CastFromBytes(b.vb.Bytes())
	for r := range c.rows {
		f := c.at(r, scratch)
		if len(f) == 0 {
			b.null()
		} else {
			var d int32
			var ok bool
			if b.kind == infer.KindDate {
				d, ok = infer.ParseDateBytes(f)
			} else {
				d, ok = infer.ParseDateKind(b.kind, unsafeString(f))
			}
			if !ok {
				return &cellError{string(f), "date32"}
			}
			vals[b.n] = arrow.Date32(d)
		}
		b.n++
	}
	return nil
}

func (b *date32Builder) finish() arrow.Array { return b.array(arrow.FixedWidthTypes.Date32) }

type tsBuilder struct {
	fixed
	dt   arrow.DataType
	kind infer.Kind
}

func (b *tsBuilder) add(c colSpans, scratch *[]byte) error {
	b.reserve(c.rows, 8)
	vals := arrow.TimestampTraits.CastFromBytes(b.vb.Bytes())
	for r := range c.rows {
		st, en := c.sp[2*r], c.sp[2*r+1]
		var f []byte
		if st&spanQuoted == 0 {
			f = c.b[st:en]
		} else {
			f = quotedField(c.b, st, en, scratch)
		}
		if len(f) == 0 {
			b.null()
		} else {
			ms, ok := parseTSCell(b.kind, f)
			if !ok {
				return &cellError{string(f), b.dt.String() + " timestamp"}
			}
			vals[b.n] = arrow.Timestamp(ms)
		}
		b.n++
	}
	return nil
}

func (b *tsBuilder) finish() arrow.Array { return b.array(b.dt) }

// parseTSCell parses a cell of timestamp kind k into milliseconds; ok is
// false for cells of other kinds.
func parseTSCell(k infer.Kind, f []byte) (int64, bool) {
	switch k {
	case infer.KindTSNaive, infer.KindTSZoned:
		ms, ok := parseNaiveTSFast(f)
		zoned := false
		if !ok {
			ms, zoned, ok = infer.ParseTimestamp(unsafeString(f))
		}
		return ms, ok && zoned == (k == infer.KindTSZoned)
	}
	return infer.ParseTSKind(k, unsafeString(f))
}

// errInvalidUTF8 fails a cell that is not UTF-8 text (the reference reader
// then reports the line).
var errInvalidUTF8 = errors.New("invalid UTF-8")

// stringBuilder builds a plain string column: offsets in an Arrow buffer,
// the bytes in a Go slice copied into one at finish (their total is not
// known in advance).
type stringBuilder struct {
	mem      memory.Allocator
	ub       int
	ob       *memory.Buffer
	offs     []int32
	data     []byte
	n        int
	v        validity
	validate bool
}

func newStringBuilder(mem memory.Allocator, ub int, validate bool) *stringBuilder {
	b := &stringBuilder{mem: mem, ub: ub, ob: newBuffer(mem, (max(ub, 1)+1)*4), validate: validate}
	b.offs = arrow.Int32Traits.CastFromBytes(b.ob.Bytes())
	if p, ok := stringData.Get().(*[]byte); ok {
		b.data = (*p)[:0]
	}
	return b
}

// stringData recycles the Go-side byte buffers of stringBuilders (their
// bytes are copied into an Arrow buffer at finish).
var stringData sync.Pool

func (b *stringBuilder) recycle() {
	if cap(b.data) > 0 && cap(b.data) <= 64<<20 {
		d := b.data[:0]
		stringData.Put(&d)
	}
	b.data = nil
}

func (b *stringBuilder) reserve(k int) {
	if b.n+k <= b.ub {
		return
	}
	ub := max(2*b.ub, b.n+k)
	b.ob.Resize((ub + 1) * 4)
	b.offs = arrow.Int32Traits.CastFromBytes(b.ob.Bytes())
	if b.v.buf != nil {
		b.v.buf.Resize(int(bitutil.BytesForBits(int64(ub))))
		b.v.bits = b.v.buf.Bytes()
		for i := b.ub; i < ub; i++ {
			bitutil.SetBit(b.v.bits, i)
		}
	}
	b.ub = ub
}

func (b *stringBuilder) add(c colSpans, scratch *[]byte) error {
	b.reserve(c.rows)
	start := len(b.data)
	midRune := false // some cell starts with a UTF-8 continuation byte
	for r := range c.rows {
		st, en := c.sp[2*r], c.sp[2*r+1]
		var f []byte
		if st&spanQuoted == 0 {
			f = c.b[st:en]
		} else {
			f = quotedField(c.b, st, en, scratch)
		}
		if len(f) > 0 && f[0]&0xC0 == 0x80 {
			midRune = true
		}
		b.addCell(f)
	}
	// The cells are valid UTF-8 when their concatenation is and none
	// starts inside a character (so none can end inside one either).
	if b.validate && (midRune || !utf8.Valid(b.data[start:])) {
		return errInvalidUTF8
	}
	return nil
}

func (b *stringBuilder) addCell(f []byte) {
	if len(f) == 0 {
		b.v.setNull(b.mem, b.n, b.ub)
	} else {
		b.data = append(b.data, f...)
	}
	b.n++
	b.offs[b.n] = int32(len(b.data))
}

func (b *stringBuilder) finish() arrow.Array {
	db := newBuffer(b.mem, len(b.data))
	copy(db.Bytes(), b.data)
	b.recycle()
	a := makeArray(arrow.BinaryTypes.String, b.n, &b.v, b.ob, db)
	b.ob = nil
	return a
}

func (b *stringBuilder) release() {
	b.recycle()
	b.v.release()
	if b.ob != nil {
		b.ob.Release()
		b.ob = nil
	}
}

// dictStringType is the type of kept low-cardinality string columns: int16
// indices (signed, as Arrow recommends) take half the memory of int32 ones
// and address the dictMaxValues entries a chunk's dictionary may hold.
var dictStringType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}

// dictBuilder builds a string column dictionary-encoded (int16 codes, the
// chunk's distinct values in first-seen order; every value must be valid
// UTF-8) while it has few distinct values, and turns into a plain
// stringBuilder when it has too many. The values are looked up in the
// worker's dictionary of the column (workerDict), which outlives the
// chunk, and numbered per chunk.
type dictBuilder struct {
	fixed
	wd    *workerDict
	gen   uint64         // this chunk's stamp in wd.local
	order []int32        // the chunk's values (worker codes) in first-seen order
	plain *stringBuilder // non-nil: gave up on the dictionary
}

// Dictionary limits: at most a quarter of the chunk's rows distinct (and
// never more than dictMaxValues), and at most half of the first dictProbe
// rows.
const (
	dictProbe     = 4096
	dictMaxValues = math.MaxInt16 + 1 // every code fits the int16 index
)

// dictLimit is the most distinct values a chunk of ub rows may hold
// dictionary-encoded.
func dictLimit(ub int) int { return min(max(ub/4, 64), dictMaxValues) }

func newDictBuilder(mem memory.Allocator, ub int, wd *workerDict) *dictBuilder {
	wd.start()
	return &dictBuilder{fixed: newFixed(mem, ub, 2), wd: wd, gen: wd.gen, order: wd.order[:0]}
}

func (b *dictBuilder) add(c colSpans, scratch *[]byte) error {
	if b.plain != nil {
		return b.plain.add(c, scratch)
	}
	b.reserve(c.rows, 2)
	codes := arrow.Int16Traits.CastFromBytes(b.vb.Bytes())
	limit := dictLimit(b.ub)
	wd, gen := b.wd, b.gen
	for r := range c.rows {
		st, en := c.sp[2*r], c.sp[2*r+1]
		var f []byte
		if st&spanQuoted == 0 {
			f = c.b[st:en]
		} else {
			f = quotedField(c.b, st, en, scratch)
		}
		if len(f) == 0 {
			b.null()
			b.n++
			continue
		}
		n0 := wd.d.len()
		g := wd.d.code(f)
		if wd.d.len() > n0 {
			if !utf8.Valid(f) {
				return errInvalidUTF8
			}
			wd.local = append(wd.local, 0)
		}
		e := wd.local[g]
		if e>>32 == gen {
			codes[b.n] = int16(uint16(e))
			b.n++
			continue
		}
		code := len(b.order)
		wd.local[g] = gen<<32 | uint64(code)
		b.order = append(b.order, g)
		codes[b.n] = int16(code)
		b.n++
		if n := len(b.order); n > limit || (b.n >= dictProbe && n > b.n/2) {
			b.toPlain()
			rest := colSpans{b: c.b, sp: c.sp[2*(r+1):], rows: c.rows - r - 1}
			return b.plain.add(rest, scratch)
		}
	}
	return nil
}

// value returns the bytes of chunk code c.
func (b *dictBuilder) value(c int32) []byte {
	d := &b.wd.d
	g := b.order[c]
	return d.vals[d.offs[g]:d.offs[g+1]]
}

// toPlain replays the codes so far into a plain string builder.
func (b *dictBuilder) toPlain() {
	p := newStringBuilder(b.mem, b.ub, true)
	codes := arrow.Int16Traits.CastFromBytes(b.vb.Bytes())
	for i := range b.n {
		if b.v.buf != nil && !bitutil.BitIsSet(b.v.bits, i) {
			p.addCell(nil)
			continue
		}
		// As uint16: the row that made the dictionary overflow holds code
		// dictMaxValues, which wraps to negative as int16.
		p.addCell(b.value(int32(uint16(codes[i]))))
	}
	b.fixed.release()
	b.done()
	b.plain = p
}

// done hands the order slice back to the worker's dictionary.
func (b *dictBuilder) done() {
	if b.wd != nil {
		b.wd.order = b.order[:0]
		b.wd, b.order = nil, nil
	}
}

func (b *dictBuilder) finish() arrow.Array {
	if b.plain != nil {
		return b.plain.finish()
	}
	size := 0
	for c := range b.order {
		size += len(b.value(int32(c)))
	}
	ob := newBuffer(b.mem, (len(b.order)+1)*4)
	offs := arrow.Int32Traits.CastFromBytes(ob.Bytes())
	db := newBuffer(b.mem, size)
	data := db.Bytes()
	at := 0
	offs[0] = 0
	for c := range b.order {
		at += copy(data[at:], b.value(int32(c)))
		offs[c+1] = int32(at)
	}
	n := len(b.order)
	b.done()
	dict := makeArray(arrow.BinaryTypes.String, n, &validity{}, ob, db)
	defer dict.Release()
	idx := b.array(arrow.PrimitiveTypes.Int16)
	defer idx.Release()
	return array.NewDictionaryArray(dictStringType, idx, dict)
}

func (b *dictBuilder) release() {
	if b.plain != nil {
		b.plain.release()
	}
	b.done()
	b.fixed.release()
}

// strDict assigns codes to distinct byte strings: open addressing with
// linear probing; each slot holds the value's length and its first bytes
// packed into two words (all of it for values of up to 16 bytes, which
// then compare without touching the value bytes).
type strDict struct {
	slots []dictSlot
	mask  uint64
	offs  []int32 // value i is vals[offs[i]:offs[i+1]]
	vals  []byte
}

type dictSlot struct {
	w0, w1 uint64
	n      int32 // value length + 1; 0 = empty
	code   int32
}

func (d *strDict) init(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	d.slots = make([]dictSlot, size)
	d.mask = uint64(size - 1)
	d.offs = append(d.offs[:0], 0)
	d.vals = d.vals[:0]
}

func (d *strDict) len() int { return len(d.offs) - 1 }

// keyWords packs f into two words that, with len(f), identify f exactly
// when len(f) <= 16 (and its first 16 bytes otherwise): its first 16 bytes,
// zero-padded, little-endian. With 16 readable bytes from f's start (the
// usual case: f views a chunk buffer) they are two masked loads.
func keyWords(f []byte) (w0, w1 uint64) {
	n := len(f)
	if cap(f) < 16 {
		var pad [16]byte
		copy(pad[:], f)
		f = pad[:n:16]
	}
	f = f[:16]
	w0, w1 = load64(f, 0), load64(f, 8)
	return w0 & (^uint64(0) >> (64 - 8*min(n, 8))), w1 & (^uint64(0) >> (64 - 8*min(max(n-8, 0), 8)))
}

func slotHash(w0, w1 uint64, n int) uint64 {
	h := (w0*0x9E3779B97F4A7C15 ^ w1*0xC2B2AE3D27D4EB4F ^ uint64(n)) * 0x165667B19E3779F9
	return h ^ h>>29
}

// code returns the code of f, adding it if new.
func (d *strDict) code(f []byte) int32 {
	w0, w1 := keyWords(f)
	n := int32(len(f)) + 1
	i := slotHash(w0, w1, len(f)) & d.mask
	for {
		s := &d.slots[i]
		if s.n == 0 {
			break
		}
		if s.n == n && s.w0 == w0 && s.w1 == w1 && (n <= 17 || string(d.vals[d.offs[s.code]+16:d.offs[s.code+1]]) == string(f[16:])) {
			return s.code
		}
		i = (i + 1) & d.mask
	}
	code := int32(d.len())
	d.vals = append(d.vals, f...)
	d.offs = append(d.offs, int32(len(d.vals)))
	d.slots[i] = dictSlot{w0: w0, w1: w1, n: n, code: code}
	if uint64(d.len())*2 > d.mask {
		d.grow()
	}
	return code
}

func (d *strDict) grow() {
	old := d.slots
	d.slots = make([]dictSlot, 2*len(old))
	d.mask = uint64(len(d.slots) - 1)
	for _, s := range old {
		if s.n == 0 {
			continue
		}
		i := slotHash(s.w0, s.w1, int(s.n-1)) & d.mask
		for d.slots[i].n != 0 {
			i = (i + 1) & d.mask
		}
		d.slots[i] = s
	}
}

// ---------------------------------------------------------------- values

// parseInt64Bytes parses like strconv.ParseInt(s, 10, 64)
// (infer.ParseInt64Bytes).
func parseInt64Bytes(s []byte) (int64, bool) { return infer.ParseInt64Bytes(s) }

// parse8Digits is infer.Parse8Digits.
func parse8Digits(x uint64) (uint64, bool) { return infer.Parse8Digits(x) }

// parseDecimalFast is infer.ParseDecimalFast.
func parseDecimalFast(s []byte) (float64, bool) { return infer.ParseDecimalFast(s) }

// parseDecimalWord is infer.ParseDecimalWord.
func parseDecimalWord(s []byte) (float64, bool) { return infer.ParseDecimalWord(s) }

// parseNaiveTSFast is infer.ParseNaiveTSFast.
func parseNaiveTSFast(s []byte) (int64, bool) { return infer.ParseNaiveTSFast(s) }

// isIntBytes is isInt on bytes.
func isIntBytes(s []byte) bool {
	if n := len(s); n > 0 && n <= 18 {
		_, ok := parseInt64Bytes(s)
		return ok
	}
	return infer.IsInt(unsafeString(s))
}

// parseFloat64Bytes parses the cells isFloat accepts, like
// strconv.ParseFloat(s, 64); others (including hexadecimal floats and out
// of range values) are failures.
func parseFloat64Bytes(s []byte) (float64, bool) {
	if f, ok := parseDecimalFast(s); ok {
		return f, true
	}
	if !infer.IsFloat(unsafeString(s)) {
		return 0, false
	}
	f, err := strconv.ParseFloat(unsafeString(s), 64)
	return f, err == nil
}

// isFloatBytes is isFloat on bytes.
func isFloatBytes(s []byte) bool {
	if _, ok := parseDecimalFast(s); ok {
		return true
	}
	return infer.IsFloat(unsafeString(s))
}

// widenBytes is widen for a non-empty cell given as bytes, with a fast
// path for the common integer shape.
func widenBytes(cur infer.Kind, s []byte) infer.Kind {
	if cur == infer.KindString {
		return infer.KindString
	}
	if validInt(s) {
		return infer.JoinKinds(cur, infer.KindInt)
	}
	return infer.JoinKinds(cur, infer.Classify(unsafeString(s)))
}

// mergeKinds combines the kinds inferred for two parts of a column: the
// result is the kind widen would reach over both parts in sequence.
func mergeKinds(a, b infer.Kind) infer.Kind { return infer.JoinKinds(a, b) }
