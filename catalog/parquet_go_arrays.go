package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// The Arrow arrays of the parquet-go read path (parquet_go.go): each
// pqgoOut fills the buffers of one column of one batch directly from
// parquet-go's decoded page values, placing them by the definition levels
// and allocating the validity bitmap only when a null comes.

// pqValues is parquet-go's typed page values.
type pqValues = encoding.Values

// validity is a lazily allocated validity bitmap of n rows.
type validity struct {
	buf   *memory.Buffer
	bits  []byte
	nulls int
}

// set marks rows [at, at+len(def)) by def (nil: all valid).
func (v *validity) set(mem memory.Allocator, n, at int, def []byte, nv int) {
	if v.buf == nil {
		if nv == len(def) || def == nil {
			return
		}
		v.buf = memory.NewResizableBuffer(mem)
		v.buf.Resize((n + 7) / 8)
		v.bits = v.buf.Bytes()
		clear(v.bits)
		bitutil.SetBitsTo(v.bits, 0, int64(at), true)
	}
	if def == nil || nv == len(def) {
		bitutil.SetBitsTo(v.bits, int64(at), int64(nv), true)
		return
	}
	setDefBits(v.bits, at, def)
	v.nulls += len(def) - nv
}

// setDefBits sets the bits at+i of bits where def[i] is 1 (the levels of a
// column of maximum definition level 1 are 0 or 1), eight at a time once
// at+i is byte-aligned.
func setDefBits(bits []byte, at int, def []byte) {
	i := 0
	for ; i < len(def) && (at+i)%8 != 0; i++ {
		if def[i] == 1 {
			bitutil.SetBit(bits, at+i)
		}
	}
	for ; i+8 <= len(def); i += 8 {
		x := binary.LittleEndian.Uint64(def[i:]) & 0x0101010101010101
		bits[(at+i)/8] = byte((x * 0x0102040810204080) >> 56) // level k to bit k
	}
	for ; i < len(def); i++ {
		if def[i] == 1 {
			bitutil.SetBit(bits, at+i)
		}
	}
}

// fixedOut builds a fixed-width array of D from page values of S.
type fixedOut[S, D any] struct {
	mem   memory.Allocator
	dt    arrow.DataType
	n, at int
	buf   *memory.Buffer
	vals  []D
	valid validity
	get   func(*pqValues) []S
	conv  func(S) D // nil: S is D
}

func fixedDecoder[S, D any](dt arrow.DataType, get func(*pqValues) []S, conv func(S) D) func(memory.Allocator, int, arrow.Array) pqgoOut {
	return func(mem memory.Allocator, n int, _ arrow.Array) pqgoOut {
		var zero D
		buf := memory.NewResizableBuffer(mem)
		buf.Resize(n * int(unsafe.Sizeof(zero)))
		var vals []D
		if n > 0 {
			vals = unsafe.Slice((*D)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), n)
		}
		return &fixedOut[S, D]{mem: mem, dt: dt, n: n, buf: buf, vals: vals, get: get, conv: conv}
	}
}

func (o *fixedOut[S, D]) add(p parquet.Page, vpos, nv int, def []byte) error {
	k := nv
	if def != nil {
		k = len(def)
	}
	if nv == k {
		def = nil
	}
	dst := o.vals[o.at : o.at+k]
	var src []S
	var codes []int32
	pd := p.Data()
	if d := p.Dictionary(); d != nil {
		dd := d.Page().Data()
		src = o.get(&dd)
		codes = pd.Int32()[vpos : vpos+nv]
	} else {
		src = o.get(&pd)[vpos : vpos+nv]
	}
	var inRange bool
	if same, ok := any(dst).([]S); ok { // S is D
		inRange = scatter(same, src, codes, def, func(s S) S { return s })
	} else {
		inRange = scatter(dst, src, codes, def, o.conv)
	}
	if !inRange {
		return checkCodes(codes, len(src))
	}
	o.valid.set(o.mem, o.n, o.at, def, nv)
	o.at += k
	return nil
}

// checkCodes fails when a dictionary code is not below n.
func checkCodes(codes []int32, n int) error {
	for _, c := range codes {
		if uint32(c) >= uint32(n) {
			return codeRangeError(c, n)
		}
	}
	return nil
}

// gatherCodes sets dst[i] to src[codes[i]], checking each code on the way (the
// check and the copy in one pass); false at the first code not below
// len(src), with dst written up to there.
func gatherCodes[T any](dst, src []T, codes []int32) bool {
	dst = dst[:len(codes)]
	for i, c := range codes {
		j := int(c)
		if j < 0 || j >= len(src) {
			return false
		}
		dst[i] = src[j]
	}
	return true
}

// codeRangeError is a dictionary code c not below the dictionary's n
// values.
func codeRangeError(c int32, n int) error {
	return fmt.Errorf("dictionary index %d out of range (%d values)", c, n)
}

// scatter places src's values (through codes when set) into dst by def
// (nil: no nulls; null slots get D's zero), converting with conv; false
// (dst partly written) when a code is not below len(src). The common
// dictionary case (no nulls, no conversion) checks each code in its copy
// loop (gatherCodes), the others in a pass before.
func scatter[S, D any](dst []D, src []S, codes []int32, def []byte, conv func(S) D) bool {
	var zero D
	if same, ok := any(src).([]D); ok && def == nil && codes != nil {
		return gatherCodes(dst, same, codes)
	}
	if codes != nil && checkCodes(codes, len(src)) != nil {
		return false
	}
	switch {
	case def == nil && codes == nil:
		if same, ok := any(src).([]D); ok {
			copy(dst, same)
			return true
		}
		for i := range dst {
			dst[i] = conv(src[i])
		}
	case def == nil:
		for i, c := range codes {
			dst[i] = conv(src[c])
		}
	default:
		if same, ok := any(src).([]D); ok {
			scatterSame(dst, same, codes, def)
			return true
		}
		j := 0
		for i, d := range def {
			if d != 1 {
				dst[i] = zero
				continue
			}
			if codes != nil {
				dst[i] = conv(src[codes[j]])
			} else {
				dst[i] = conv(src[j])
			}
			j++
		}
	}
	return true
}

// scatterSame is scatter's null-placing loop without a conversion.
func scatterSame[T any](dst, src []T, codes []int32, def []byte) {
	var zero T
	j := 0
	if codes != nil {
		for i, d := range def {
			if d != 1 {
				dst[i] = zero
				continue
			}
			dst[i] = src[codes[j]]
			j++
		}
		return
	}
	for i, d := range def {
		if d != 1 {
			dst[i] = zero
			continue
		}
		dst[i] = src[j]
		j++
	}
}

func (o *fixedOut[S, D]) finish() arrow.Array {
	return newArray(o.dt, o.n, o.valid.nulls, o.release, o.valid.buf, o.buf)
}

func (o *fixedOut[S, D]) release() { releaseBuffers(&o.valid.buf, &o.buf) }

// newArray is an array of type dt over bufs (which it retains); release
// then drops the builder's references.
func newArray(dt arrow.DataType, n, nulls int, release func(), bufs ...*memory.Buffer) arrow.Array {
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer data.Release()
	release()
	return array.MakeFromData(data)
}

// releaseBuffers releases and clears the buffers that are set.
func releaseBuffers(bufs ...**memory.Buffer) {
	for _, b := range bufs {
		if *b != nil {
			(*b).Release()
			*b = nil
		}
	}
}

// boolOut builds a boolean array from bit-packed page values.
type boolOut struct {
	mem   memory.Allocator
	n, at int
	buf   *memory.Buffer
	bits  []byte
	valid validity
}

func newBoolOut(mem memory.Allocator, n int) *boolOut {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize((n + 7) / 8)
	clear(buf.Bytes())
	return &boolOut{mem: mem, n: n, buf: buf, bits: buf.Bytes()}
}

func (o *boolOut) add(p parquet.Page, vpos, nv int, def []byte) error {
	pd := p.Data()
	src := pd.Boolean()
	if (vpos+nv+7)/8 > len(src) {
		return errors.New("boolean page holds fewer values than its levels say")
	}
	k := nv
	if def != nil {
		k = len(def)
	}
	j := vpos
	for i := range k {
		if def != nil && def[i] != 1 {
			continue
		}
		if bitutil.BitIsSet(src, j) {
			bitutil.SetBit(o.bits, o.at+i)
		}
		j++
	}
	o.valid.set(o.mem, o.n, o.at, def, nv)
	o.at += k
	return nil
}

func (o *boolOut) finish() arrow.Array {
	return newArray(arrow.FixedWidthTypes.Boolean, o.n, o.valid.nulls, o.release, o.valid.buf, o.buf)
}

func (o *boolOut) release() { releaseBuffers(&o.valid.buf, &o.buf) }

// bytesOut builds a string or binary array from byte array values, plain
// or gathered through the page's dictionary.
type bytesOut struct {
	mem   memory.Allocator
	dt    arrow.DataType
	n, at int
	offs  *memory.Buffer
	off   []int32
	data  *memory.Buffer
	size  int // bytes used in data
	valid validity
}

func newBytesOut(mem memory.Allocator, dt arrow.DataType, n int) *bytesOut {
	offs := memory.NewResizableBuffer(mem)
	offs.Resize((n + 1) * 4)
	off := arrow.GetData[int32](offs.Bytes())[:n+1]
	off[0] = 0
	data := memory.NewResizableBuffer(mem)
	return &bytesOut{mem: mem, dt: dt, n: n, offs: offs, off: off, data: data}
}

// reserve makes room for need more bytes, the values of rows more rows:
// when the buffer must grow it grows to the bytes per row so far times the
// batch's rows (and an eighth), so a batch of strings is copied about once
// instead of once per doubling.
func (o *bytesOut) reserve(need, rows int) error {
	const maxBytes = 1<<31 - 1
	if o.size+need > maxBytes {
		return errors.New("a batch of strings over 2 GiB")
	}
	if o.size+need <= o.data.Len() {
		return nil
	}
	n := max(o.size+need, 2*o.data.Len(), 1024)
	if done := o.at + rows; done > 0 && done < o.n {
		est := int64(o.size+need) * int64(o.n) / int64(done)
		n = max(n, int(min(est+est/8, maxBytes)))
	}
	o.data.Resize(n)
	return nil
}

// pageBytes returns the byte array values of page p from value vpos on
// (nv of them): the values and offsets (one more than there are values),
// and for a dictionary-encoded page the codes into them.
func pageBytes(p parquet.Page, vpos, nv int) (v []byte, voff []uint32, codes []int32) {
	if d := p.Dictionary(); d != nil {
		dd := d.Page().Data()
		v, voff = dd.ByteArray()
		pd := p.Data()
		return v, voff, pd.Int32()[vpos : vpos+nv]
	}
	pd := p.Data()
	v, voff = pd.ByteArray()
	return v, voff[vpos : vpos+nv+1], nil
}

// byteValue is value j of pageBytes' result.
func byteValue(v []byte, voff []uint32, codes []int32, j int) []byte {
	if codes != nil {
		c := codes[j]
		return v[voff[c]:voff[c+1]]
	}
	return v[voff[j]:voff[j+1]]
}

func (o *bytesOut) add(p parquet.Page, vpos, nv int, def []byte) error {
	k := nv
	if def != nil {
		k = len(def)
	}
	v, voff, codes := pageBytes(p, vpos, nv)
	val := func(j int) []byte { return byteValue(v, voff, codes, j) } // value j (of the nv)
	if err := checkCodes(codes, len(voff)-1); err != nil {
		return err
	}
	var need int
	if codes != nil {
		for _, c := range codes {
			need += int(voff[c+1]) - int(voff[c])
		}
	} else {
		need = int(voff[nv]) - int(voff[0]) // plain values lie together
	}
	if err := o.reserve(need, k); err != nil {
		return err
	}
	buf := o.data.Bytes()
	off := o.off[o.at+1 : o.at+k+1]
	if codes == nil && (def == nil || nv == len(def)) {
		// contiguous values: one copy, offsets rebased
		lo, hi := int(voff[0]), int(voff[nv])
		copy(buf[o.size:], v[lo:hi])
		base := int32(o.size) - int32(lo)
		for i := range off {
			off[i] = int32(voff[i+1]) + base
		}
		o.size += hi - lo
	} else {
		j := 0
		for i := range k {
			if def == nil || def[i] == 1 {
				s := val(j)
				j++
				copy(buf[o.size:], s)
				o.size += len(s)
			}
			off[i] = int32(o.size)
		}
	}
	o.valid.set(o.mem, o.n, o.at, def, nv)
	o.at += k
	return nil
}

func (o *bytesOut) finish() arrow.Array {
	o.data.ResizeNoShrink(o.size)
	return newArray(o.dt, o.n, o.valid.nulls, o.release, o.valid.buf, o.offs, o.data)
}

func (o *bytesOut) release() { releaseBuffers(&o.valid.buf, &o.offs, &o.data) }

// bytesSelOut builds a string or binary array of the rows keep marks
// (keep has an entry per row of the batch; the array o.n, its true
// entries): the values of the other rows are never copied.
type bytesSelOut struct {
	*bytesOut
	keep []bool
	in   int // rows of the batch consumed
}

func (o *bytesSelOut) add(p parquet.Page, vpos, nv int, def []byte) error {
	k := nv
	if def != nil {
		k = len(def)
	}
	keep := o.keep[o.in : o.in+k]
	o.in += k
	v, voff, codes := pageBytes(p, vpos, nv)
	if err := checkCodes(codes, len(voff)-1); err != nil {
		return err
	}
	val := func(j int) []byte { return byteValue(v, voff, codes, j) }
	need, rows := 0, 0
	for i, j := 0, 0; i < k; i++ {
		valid := def == nil || def[i] == 1
		if keep[i] {
			rows++
			if valid {
				need += len(val(j))
			}
		}
		if valid {
			j++
		}
	}
	if rows == 0 {
		return nil
	}
	if o.at+rows > o.n {
		return errors.New("more rows kept than counted")
	}
	if err := o.reserve(need, rows); err != nil {
		return err
	}
	buf := o.data.Bytes()
	for i, j := 0, 0; i < k; i++ {
		valid := def == nil || def[i] == 1
		if keep[i] {
			if valid {
				s := val(j)
				copy(buf[o.size:], s)
				o.size += len(s)
				if o.valid.bits != nil {
					bitutil.SetBit(o.valid.bits, o.at)
				}
			} else {
				o.nullAt(o.at)
			}
			o.at++
			o.off[o.at] = int32(o.size)
		}
		if valid {
			j++
		}
	}
	return nil
}

// nullAt marks row at null (allocating the bitmap, earlier rows valid).
func (o *bytesSelOut) nullAt(at int) {
	if o.valid.buf == nil {
		o.valid.buf = memory.NewResizableBuffer(o.mem)
		o.valid.buf.Resize((o.n + 7) / 8)
		o.valid.bits = o.valid.buf.Bytes()
		clear(o.valid.bits)
		bitutil.SetBitsTo(o.valid.bits, 0, int64(at), true)
	}
	o.valid.nulls++
}

// dictOut builds a dictionary array (int32 codes into the row group's
// dictionary) from dictionary-encoded pages.
type dictOut struct {
	codes *fixedOut[int32, int32]
	dict  arrow.Array
}

func newDictOut(mem memory.Allocator, n int, dict arrow.Array) *dictOut {
	return &dictOut{codes: fixedDecoder[int32, int32](arrow.PrimitiveTypes.Int32, nil, nil)(mem, n, nil).(*fixedOut[int32, int32]), dict: dict}
}

func (o *dictOut) add(p parquet.Page, vpos, nv int, def []byte) error {
	if p.Dictionary() == nil {
		return errors.New("a data page of a dictionary column is not dictionary-encoded")
	}
	pd := p.Data()
	codes := pd.Int32()[vpos : vpos+nv]
	if err := checkCodes(codes, o.dict.Len()); err != nil {
		return err
	}
	o.codes.get = func(*pqValues) []int32 { return codes }
	return o.codes.add(plainPage{p}, 0, nv, def)
}

// plainPage hides a page's dictionary (dictOut copies the codes).
type plainPage struct{ parquet.Page }

func (plainPage) Dictionary() parquet.Dictionary { return nil }

func (o *dictOut) finish() arrow.Array {
	idx := o.codes.finish()
	defer idx.Release()
	return array.NewDictionaryArray(parquetDictType, idx, o.dict)
}

func (o *dictOut) release() { o.codes.release() }
