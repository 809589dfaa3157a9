package h5

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// MaxAttrElements caps the elements decoded from one attribute; larger
// attributes are summarized as a string.
const MaxAttrElements = 4096

// AttributeNames lists up to max attribute names of obj (in name order)
// and returns the total count.
func AttributeNames(obj ID, max int) ([]string, int64, error) {
	var m C.qh5_members
	var e C.qh5_err
	lock()
	r := C.qh5_attr_names(C.hid_t(obj), C.size_t(max), &m, &e)
	unlock()
	defer C.qh5_members_free(&m)
	if r < 0 {
		return nil, 0, errOf(&e)
	}
	n := int(m.n)
	out := make([]string, 0, n)
	if n == 0 {
		return out, int64(m.total), nil
	}
	names := unsafe.Slice((*byte)(unsafe.Pointer(m.names)), int(m.names_len))
	pos := 0
	for i := 0; i < n; i++ {
		end := pos
		for names[end] != 0 {
			end++
		}
		out = append(out, string(names[pos:end]))
		pos = end + 1
	}
	return out, int64(m.total), nil
}

// OpenAttribute opens the attribute name of obj.
func OpenAttribute(obj ID, name string) (ID, error) {
	cn := cstr(name)
	defer free(cn)
	var e C.qh5_err
	lock()
	a := C.qh5_aopen(C.hid_t(obj), cn, &e)
	unlock()
	if a < 0 {
		return Invalid, errOf(&e)
	}
	return ID(a), nil
}

// AttributeSpace returns an attribute's dataspace.
func AttributeSpace(attr ID) (Space, error) {
	var e C.qh5_err
	var cls, rank C.int
	var dims [MaxRank]C.hsize_t
	lock()
	r := C.qh5_attr_space(C.hid_t(attr), &cls, &rank, &dims[0], &e)
	unlock()
	if r < 0 {
		return Space{}, errOf(&e)
	}
	s := Space{Class: SpaceClass(cls)}
	if s.Class == SpaceSimple {
		s.Dims = make([]int64, int(rank))
		for i := range s.Dims {
			s.Dims[i] = hsizeToInt(dims[i])
		}
	}
	return s, nil
}

// AttributeType describes an attribute's element type.
func AttributeType(attr ID) (*Type, error) {
	var e C.qh5_err
	lock()
	t := C.qh5_attr_type(C.hid_t(attr), &e)
	unlock()
	if t < 0 {
		return nil, errOf(&e)
	}
	defer closeHid(t)
	return DescribeType(ID(t))
}

// ReadAttributes decodes up to max attributes of obj into JSON-safe values
// (see ReadAttribute). Attributes that fail to decode are reported as a
// string starting with "<unreadable".
func ReadAttributes(obj ID, max int) (map[string]any, error) {
	names, _, err := AttributeNames(obj, max)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(names))
	for _, n := range names {
		v, err := ReadAttribute(obj, n)
		if err != nil {
			v = "<unreadable attribute: " + err.Error() + ">"
		}
		out[n] = v
	}
	return out, nil
}

// ReadAttribute decodes attribute name of obj into a JSON-safe Go value:
// scalars as bool, int64, uint64 (unsigned 64-bit), float64 or string
// (NaN and infinities as "NaN", "Infinity", "-Infinity"), enums as their
// member name (h5py booleans as bool), compounds as map[string]any, arrays
// and non-scalar dataspaces as nested []any. Types without a JSON form
// (opaque, references, vlen sequences, ...) and attributes larger than
// MaxAttrElements become a descriptive string in angle brackets.
func ReadAttribute(obj ID, name string) (any, error) {
	a, err := OpenAttribute(obj, name)
	if err != nil {
		return nil, err
	}
	defer Close(a)
	sp, err := AttributeSpace(a)
	if err != nil {
		return nil, err
	}
	t, err := AttributeType(a)
	if err != nil {
		return nil, err
	}
	if sp.Class == SpaceNull {
		return nil, nil
	}
	n := sp.NumElements()
	if n > MaxAttrElements || n*t.NumElements() > MaxAttrElements {
		return fmt.Sprintf("<%s attribute of shape %v omitted: too large>", t, sp.Dims), nil
	}
	if !decodable(t, 0) {
		return fmt.Sprintf("<%s>", t), nil
	}
	mt, size, err := MemType(t)
	if err != nil {
		return fmt.Sprintf("<%s>", t), nil
	}
	defer Close(mt)
	vals := make([]any, n)
	if t.Class == ClassString && t.VarString {
		vs, err := ReadVarStrings(a, true, mt, Hyperslab{}, int(n))
		if err != nil {
			return nil, err
		}
		for i, s := range vs.Strings() {
			vals[i] = cleanString(s)
		}
		vs.Free()
	} else {
		buf, err := ReadRaw(a, true, mt, size, Hyperslab{}, int(n))
		if err != nil {
			return nil, err
		}
		if t.HasVarData() {
			defer Reclaim(mt, int(n), unsafe.Pointer(&buf[0]))
		}
		for i := range vals {
			vals[i] = DecodeValue(t, buf[i*size:(i+1)*size])
		}
	}
	if sp.Class == SpaceScalar {
		return vals[0], nil
	}
	return reshape(vals, sp.Dims), nil
}

func decodable(t *Type, depth int) bool {
	if depth > maxTypeDepth {
		return false
	}
	switch t.Class {
	case ClassInteger, ClassFloat, ClassString, ClassEnum:
		return true
	case ClassCompound:
		for _, m := range t.Members {
			if !decodable(m.Type, depth+1) {
				return false
			}
		}
		return true
	case ClassArray:
		return decodable(t.Base, depth+1)
	}
	return false
}

// MemSize is the size in bytes of one element of MemType(t).
func MemSize(t *Type) int {
	switch t.Class {
	case ClassInteger:
		return intMemSize(t.Size)
	case ClassFloat:
		if t.Size <= 4 {
			return 4
		}
		return 8
	case ClassString:
		if t.VarString {
			return int(unsafe.Sizeof(uintptr(0)))
		}
		return max(t.Size, 1)
	case ClassEnum:
		if t.Base != nil {
			return intMemSize(t.Base.Size)
		}
	case ClassCompound:
		n := 0
		for _, m := range t.Members {
			n += MemSize(m.Type)
		}
		return max(n, 1)
	case ClassArray:
		return MemSize(t.Base) * int(t.NumElements())
	}
	return t.Size
}

// DecodeValue decodes one element of MemType(t) from b into a JSON-safe Go
// value (see ReadAttribute).
func DecodeValue(t *Type, b []byte) any {
	switch t.Class {
	case ClassInteger:
		return decodeInt(b, intMemSize(t.Size), t.Signed)
	case ClassFloat:
		var f float64
		if t.Size <= 4 {
			f = float64(math.Float32frombits(binary.NativeEndian.Uint32(b)))
		} else {
			f = math.Float64frombits(binary.NativeEndian.Uint64(b))
		}
		return JSONFloat(f)
	case ClassString:
		if t.VarString {
			p := *(**C.char)(unsafe.Pointer(&b[0]))
			if p == nil {
				return ""
			}
			return cleanString(C.GoString(p))
		}
		return cleanString(trimFixed(b[:max(t.Size, 1)], t.Pad))
	case ClassEnum:
		v := decodeInt(b, intMemSize(t.Base.Size), t.Base.Signed)
		var iv int64
		switch x := v.(type) {
		case int64:
			iv = x
		case uint64:
			iv = int64(x)
		}
		if t.IsBool() {
			return iv != 0
		}
		for _, m := range t.Enum {
			if m.Value == iv {
				return m.Name
			}
		}
		return iv
	case ClassCompound:
		out := make(map[string]any, len(t.Members))
		off := 0
		for _, m := range t.Members {
			sz := MemSize(m.Type)
			out[m.Name] = DecodeValue(m.Type, b[off:off+sz])
			off += sz
		}
		return out
	case ClassArray:
		n := int(t.NumElements())
		sz := MemSize(t.Base)
		vals := make([]any, n)
		for i := range vals {
			vals[i] = DecodeValue(t.Base, b[i*sz:(i+1)*sz])
		}
		return reshape(vals, t.Dims)
	}
	return fmt.Sprintf("<%s>", t)
}

func decodeInt(b []byte, size int, signed bool) any {
	switch size {
	case 1:
		if signed {
			return int64(int8(b[0]))
		}
		return int64(b[0])
	case 2:
		v := binary.NativeEndian.Uint16(b)
		if signed {
			return int64(int16(v))
		}
		return int64(v)
	case 4:
		v := binary.NativeEndian.Uint32(b)
		if signed {
			return int64(int32(v))
		}
		return int64(v)
	}
	v := binary.NativeEndian.Uint64(b)
	if signed {
		return int64(v)
	}
	if v <= math.MaxInt64 {
		return int64(v)
	}
	return v
}

// JSONFloat returns f, or "NaN", "Infinity" or "-Infinity" for values JSON
// cannot represent.
func JSONFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

func trimFixed(b []byte, pad StrPad) string {
	switch pad {
	case StrNullTerm:
		for i, c := range b {
			if c == 0 {
				return string(b[:i])
			}
		}
		return string(b)
	case StrSpacePad:
		return strings.TrimRight(string(b), " \x00")
	}
	return strings.TrimRight(string(b), "\x00")
}

func cleanString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func reshape(vals []any, dims []int64) any {
	if len(dims) <= 1 {
		return vals
	}
	inner := int64(1)
	for _, d := range dims[1:] {
		inner *= d
	}
	out := make([]any, dims[0])
	for i := range out {
		out[i] = reshape(vals[int64(i)*inner:int64(i+1)*inner], dims[1:])
	}
	return out
}
