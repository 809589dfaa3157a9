package dictstr

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ErrUnsupported: the array is not a dictionary of strings with integer
// indices, or the requested output type is not string or large_string.
// Callers with a general path (compute.Take) fall back to it.
var ErrUnsupported = errors.New("dictstr: not a string dictionary this decoder handles")

// ErrCorrupt: a valid row's code is outside the dictionary.
var ErrCorrupt = errors.New("dictstr: dictionary code out of range")

// ErrTooLarge: the decoded text does not fit the 32-bit offsets of a
// string array (more than 2 GiB); decode to large_string instead.
var ErrTooLarge = errors.New("dictstr: decoded strings exceed 2 GiB; use large_string")

// Decode decodes d, a dictionary of string or large_string values with
// signed or unsigned integer indices, into a plain array of type to
// (arrow.BinaryTypes.String or LargeString). A row is null when its index
// is null or its dictionary value is null. Buffers come from mem; a budget
// allocator's panic propagates to the caller.
func Decode(mem memory.Allocator, d *array.Dictionary, to arrow.DataType) (arrow.Array, error) {
	if to.ID() != arrow.STRING && to.ID() != arrow.LARGE_STRING {
		return nil, fmt.Errorf("%w: output type %s", ErrUnsupported, to)
	}
	switch v := d.Dictionary().(type) {
	case *array.String:
		return byIndex(mem, d, strs[int32]{arr: v, offs: v.ValueOffsets(), bytes: v.ValueBytes()}, to)
	case *array.LargeString:
		return byIndex(mem, d, strs[int64]{arr: v, offs: v.ValueOffsets(), bytes: v.ValueBytes()}, to)
	}
	return nil, fmt.Errorf("%w: dictionary of %s", ErrUnsupported, d.Dictionary().DataType())
}

// strs is a dictionary's values: value i is bytes[offs[i]-offs[0]:offs[i+1]-offs[0]]
// (ValueBytes starts at the first value).
type strs[O int32 | int64] struct {
	arr   arrow.Array
	offs  []O
	bytes []byte
}

func byIndex[O int32 | int64](mem memory.Allocator, d *array.Dictionary, src strs[O], to arrow.DataType) (arrow.Array, error) {
	switch idx := d.Indices().(type) {
	case *array.Int8:
		return decode(mem, d, src, idx.Int8Values(), to)
	case *array.Int16:
		return decode(mem, d, src, idx.Int16Values(), to)
	case *array.Int32:
		return decode(mem, d, src, idx.Int32Values(), to)
	case *array.Int64:
		return decode(mem, d, src, idx.Int64Values(), to)
	case *array.Uint8:
		return decode(mem, d, src, idx.Uint8Values(), to)
	case *array.Uint16:
		return decode(mem, d, src, idx.Uint16Values(), to)
	case *array.Uint32:
		return decode(mem, d, src, idx.Uint32Values(), to)
	case *array.Uint64:
		return decode(mem, d, src, idx.Uint64Values(), to)
	}
	return nil, fmt.Errorf("%w: index type %s", ErrUnsupported, d.Indices().DataType())
}

type code interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

func decode[C code, O int32 | int64](mem memory.Allocator, d *array.Dictionary, src strs[O], codes []C, to arrow.DataType) (arrow.Array, error) {
	n, size := len(codes), uint64(src.arr.Len())
	dictNulls, rowNulls := src.arr.NullN() > 0, d.NullN() > 0
	// Pass 1: validate codes, count nulls and sum the lengths.
	nulls, total := 0, int64(0)
	offs := src.offs
	for i, c := range codes {
		if rowNulls && d.IsNull(i) {
			nulls++
			continue
		}
		if c < 0 || uint64(c) >= size {
			return nil, fmt.Errorf("%w: row %d has code %d of %d values", ErrCorrupt, i, c, size)
		}
		if dictNulls && src.arr.IsNull(int(c)) {
			nulls++
			continue
		}
		total += int64(offs[c+1] - offs[c])
	}
	large := to.ID() == arrow.LARGE_STRING
	if !large && total > math.MaxInt32 {
		return nil, ErrTooLarge
	}
	var bitmap *memory.Buffer
	if nulls > 0 {
		bitmap = memory.NewResizableBuffer(mem)
		defer bitmap.Release()
		bitmap.Resize(int(bitutil.BytesForBits(int64(n))))
		bits := bitmap.Bytes()
		clear(bits)
		for i, c := range codes {
			if d.IsValid(i) && !(dictNulls && src.arr.IsNull(int(c))) {
				bitutil.SetBit(bits, i)
			}
		}
	}
	// Pass 2: offsets and bytes.
	width := arrow.Int32SizeBytes
	if large {
		width = arrow.Int64SizeBytes
	}
	offsets := memory.NewResizableBuffer(mem)
	defer offsets.Release()
	offsets.Resize((n + 1) * width)
	data := memory.NewResizableBuffer(mem)
	defer data.Release()
	data.Resize(int(total))
	buf := data.Bytes()
	var o32 []int32
	var o64 []int64
	if large {
		o64 = arrow.Int64Traits.CastFromBytes(offsets.Bytes())
	} else {
		o32 = arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	}
	pos := int64(0)
	vals, base := src.bytes, offs[0]
	for i, c := range codes {
		if large {
			o64[i] = pos
		} else {
			o32[i] = int32(pos)
		}
		if nulls > 0 && !bitutil.BitIsSet(bitmap.Bytes(), i) {
			continue
		}
		pos += int64(copy(buf[pos:], vals[offs[c]-base:offs[c+1]-base]))
	}
	if large {
		o64[n] = pos
	} else {
		o32[n] = int32(pos)
	}
	ad := array.NewData(to, n, []*memory.Buffer{bitmap, offsets, data}, nil, nulls, 0)
	defer ad.Release()
	return array.MakeFromData(ad), nil
}
