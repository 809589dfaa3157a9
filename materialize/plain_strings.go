package materialize

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// plainStrings decodes a dictionary of strings with signed integer
// indices (the engine's dictionary columns) into a plain string array:
// one pass checks the codes and sums the lengths, one copies the values.
// ok is false for anything else — other types, an empty dictionary or nulls in it, a
// code out of range, more than 2 GiB of text — which compute.Take decodes
// (or refuses).
func plainStrings(mem memory.Allocator, d *array.Dictionary) (out arrow.Array, ok bool) {
	dict, isStr := d.Dictionary().(*array.String)
	if !isStr || dict.NullN() > 0 || dict.Len() == 0 {
		return nil, false
	}
	switch idx := d.Indices().(type) {
	case *array.Int8:
		return decodeStrings(mem, d, dict, idx.Int8Values())
	case *array.Int16:
		return decodeStrings(mem, d, dict, idx.Int16Values())
	case *array.Int32:
		return decodeStrings(mem, d, dict, idx.Int32Values())
	case *array.Int64:
		return decodeStrings(mem, d, dict, idx.Int64Values())
	}
	return nil, false
}

func decodeStrings[T int8 | int16 | int32 | int64](mem memory.Allocator, d *array.Dictionary, dict *array.String, codes []T) (arrow.Array, bool) {
	n, size := len(codes), T(dict.Len())
	nulls := d.NullN()
	voffs, vbytes := dict.ValueOffsets(), dict.ValueBytes()
	base := voffs[0] // ValueBytes starts at the first value
	total := 0
	for i, c := range codes {
		if nulls > 0 && d.IsNull(i) {
			continue
		}
		if c < 0 || c >= size {
			return nil, false
		}
		total += int(voffs[c+1] - voffs[c])
	}
	if total > math.MaxInt32 {
		return nil, false
	}
	offsets := memory.NewResizableBuffer(mem)
	defer offsets.Release()
	offsets.Resize((n + 1) * arrow.Int32SizeBytes)
	offs := arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	data := memory.NewResizableBuffer(mem)
	defer data.Release()
	data.Resize(total)
	buf := data.Bytes()
	pos := 0
	for i, c := range codes {
		offs[i] = int32(pos)
		if nulls == 0 || d.IsValid(i) {
			pos += copy(buf[pos:], vbytes[voffs[c]-base:voffs[c+1]-base])
		}
	}
	offs[n] = int32(pos)
	var bitmap *memory.Buffer
	if nulls > 0 {
		bitmap = memory.NewResizableBuffer(mem)
		defer bitmap.Release()
		bitmap.Resize(int(bitutil.BytesForBits(int64(n))))
		bitutil.CopyBitmap(d.NullBitmapBytes(), d.Data().Offset(), n, bitmap.Bytes(), 0)
	}
	ad := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{bitmap, offsets, data}, nil, nulls, 0)
	defer ad.Release()
	return array.MakeFromData(ad), true
}
