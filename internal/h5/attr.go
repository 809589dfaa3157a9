package h5

/*
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Caps on the JSON one attribute turns into (see ReadAttribute). An
// attribute that exceeds any of them is returned as a Truncated value.
const (
	// MaxAttrElements caps the elements decoded from one attribute (for
	// array-typed elements, the numbers inside them): larger attributes
	// keep their first elements in row-major order.
	MaxAttrElements = 4096
	// MaxAttrStringChars caps one string value, in characters (Unicode
	// code points); longer strings keep their first MaxAttrStringChars.
	MaxAttrStringChars = 4096
	// MaxAttrBytes caps the raw bytes of one opaque value (its base64 text
	// is 4/3 as long).
	MaxAttrBytes = 3072
	// MaxAttrTextChars caps the text of one attribute: the characters of
	// all its strings plus the base64 of its opaque values. Elements after
	// the budget is spent are dropped.
	MaxAttrTextChars = 65536
	// MaxAttrReadBytes bounds the in-memory size of an attribute that is
	// read at all (catalog discovery reads every table's attributes): HDF5
	// reads attributes whole, so a larger one is reported as a Truncated
	// value without elements.
	MaxAttrReadBytes = 8 << 20
)

// Truncated is the JSON form of an attribute value cut to the caps: it
// keeps the attribute's full shape and element count and the part that
// fits. ReadAttribute returns it (as a value, not a pointer) whenever an
// attribute is incomplete; every other result is the whole attribute.
type Truncated struct {
	// Truncated is always true: the value is incomplete.
	Truncated bool `json:"truncated"`
	// DType is the element type in Type.String notation.
	DType string `json:"dtype"`
	// Shape is the attribute's full shape ([] for a scalar).
	Shape []int64 `json:"shape"`
	// ElementCount is the attribute's full number of elements.
	ElementCount int64 `json:"element_count"`
	// Value is the cut value of a scalar attribute: a string cut to
	// MaxAttrStringChars characters, Bytes cut to MaxAttrBytes, or a
	// compound or array element holding such values.
	Value any `json:"value,omitempty"`
	// Values are the first elements of a non-scalar attribute, flattened
	// in row-major order (absent when none fits, or when the attribute is
	// larger than MaxAttrReadBytes and was not read).
	Values []any `json:"values,omitempty"`
	// Length is the full length in characters of a scalar string
	// attribute that was cut.
	Length int64 `json:"length,omitempty"`
}

// Bytes is the JSON form of one opaque value (HDF5's raw bytes type, e.g.
// numpy.void from h5py): its bytes in standard padded base64. Strings
// stay text (invalid UTF-8 replaced by U+FFFD) and uint8 arrays stay
// numbers: only the opaque class marks data as bytes.
type Bytes struct {
	// Base64 holds the bytes (the first MaxAttrBytes when Truncated).
	Base64 string `json:"base64"`
	// SizeBytes is the value's full size.
	SizeBytes int `json:"size_bytes"`
	// Tag is the opaque type's tag, when it has one.
	Tag string `json:"tag,omitempty"`
	// Truncated is set when Base64 holds only the first bytes.
	Truncated bool `json:"truncated,omitempty"`
}

// AttrText returns the text of a string attribute value as ReadAttribute
// returns it: a string, or the kept part of a cut scalar string (a
// Truncated value). ok is false for other values.
func AttrText(v any) (s string, ok bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case Truncated:
		s, ok = x.Value.(string)
		return s, ok
	}
	return "", false
}

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
// and non-scalar dataspaces as nested []any, opaque values as Bytes
// (base64). An attribute beyond the caps (MaxAttrElements,
// MaxAttrStringChars, MaxAttrBytes, MaxAttrTextChars, MaxAttrReadBytes)
// becomes a Truncated value holding its full shape and the part that fits.
// Types without a JSON form (references, vlen sequences, bitfields, time)
// become a descriptive string in angle brackets; a null dataspace is nil.
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
	if !decodable(t, 0) {
		return fmt.Sprintf("<%s>", t), nil
	}
	n := sp.NumElements()
	keep := n
	d := &valueDecoder{capped: true, text: MaxAttrTextChars}
	if per := max(t.NumElements(), 1); mulSat(n, per) > MaxAttrElements {
		keep, d.cut = MaxAttrElements/per, true
	}
	cut := func(vals []any, value any, length int64) any {
		tr := Truncated{Truncated: true, DType: t.String(), Shape: sp.Dims, ElementCount: n, Value: value, Values: vals, Length: length}
		if sp.Class == SpaceScalar {
			tr.Shape = []int64{}
		}
		return tr
	}
	mt, size, err := MemType(t)
	if err != nil {
		return fmt.Sprintf("<%s>", t), nil
	}
	defer Close(mt)
	if keep == 0 && n > 0 || mulSat(n, int64(size)) > MaxAttrReadBytes {
		return cut(nil, nil, 0), nil // not one element fits, or too large to read
	}
	vals := make([]any, 0, min(keep, MaxAttrElements))
	var length int64 // full length in characters of a scalar string attribute
	if t.Class == ClassString && t.VarString {
		vs, err := ReadVarStrings(a, true, mt, Hyperslab{}, int(n))
		if err != nil {
			return nil, err
		}
		defer vs.Free()
		ps := unsafe.Slice(vs.p, vs.n)
		for _, p := range ps[:keep] {
			if d.spent() {
				d.cut = true
				break
			}
			raw := cBytes(p)
			if sp.Class == SpaceScalar {
				length = int64(utf8.RuneCount(raw))
			}
			vals = append(vals, d.text1(raw))
		}
	} else {
		buf, err := ReadRaw(a, true, mt, size, Hyperslab{}, int(n))
		if err != nil {
			return nil, err
		}
		if t.HasVarData() && len(buf) > 0 {
			defer Reclaim(mt, int(n), unsafe.Pointer(&buf[0]))
		}
		for i := range keep {
			if d.spent() {
				d.cut = true
				break
			}
			b := buf[int(i)*size : int(i+1)*size]
			if sp.Class == SpaceScalar && t.Class == ClassString {
				length = int64(utf8.RuneCount(trimFixedBytes(b[:max(t.Size, 1)], t.Pad)))
			}
			vals = append(vals, d.decode(t, b))
		}
	}
	if sp.Class == SpaceScalar {
		if d.cut {
			return cut(nil, vals[0], length), nil
		}
		return vals[0], nil
	}
	if d.cut {
		return cut(vals, nil, 0), nil
	}
	return reshape(vals, sp.Dims), nil
}

// cBytes views the NUL-terminated C string p (nil for NULL) without
// copying it.
func cBytes(p *C.char) []byte {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(C.strlen(p)))
}

func decodable(t *Type, depth int) bool {
	if depth > maxTypeDepth {
		return false
	}
	switch t.Class {
	case ClassInteger, ClassFloat, ClassString, ClassEnum, ClassOpaque:
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
// value (see ReadAttribute), without the attribute caps.
func DecodeValue(t *Type, b []byte) any {
	return (&valueDecoder{}).decode(t, b)
}

// valueDecoder decodes elements of MemType(t); when capped it cuts strings
// to MaxAttrStringChars and opaque values to MaxAttrBytes, spends the text
// budget and records whether anything was cut.
type valueDecoder struct {
	capped bool
	text   int  // characters left of the attribute's text budget
	cut    bool // something was cut or dropped
}

// spent reports that the text budget is used up (never when uncapped).
func (d *valueDecoder) spent() bool { return d.capped && d.text <= 0 }

// text1 turns raw string bytes into a valid UTF-8 string, cut to the caps.
func (d *valueDecoder) text1(raw []byte) string {
	if !d.capped {
		return cleanString(string(raw))
	}
	limit := min(MaxAttrStringChars, max(d.text, 0))
	end, chars := 0, 0
	for end < len(raw) && chars < limit {
		_, w := utf8.DecodeRune(raw[end:])
		end += w
		chars++
	}
	if end < len(raw) {
		d.cut = true
	}
	d.text -= chars
	return cleanString(string(raw[:end]))
}

// bytes1 is an opaque value as Bytes, cut to the caps.
func (d *valueDecoder) bytes1(t *Type, b []byte) Bytes {
	out := Bytes{SizeBytes: len(b), Tag: t.Tag}
	if d.capped {
		keep := min(len(b), MaxAttrBytes, max(d.text, 0)/4*3)
		if keep < len(b) {
			b, out.Truncated, d.cut = b[:keep], true, true
		}
	}
	out.Base64 = base64.StdEncoding.EncodeToString(b)
	d.text -= len(out.Base64)
	return out
}

func (d *valueDecoder) decode(t *Type, b []byte) any {
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
			return d.text1(cBytes(*(**C.char)(unsafe.Pointer(&b[0]))))
		}
		return d.text1(trimFixedBytes(b[:max(t.Size, 1)], t.Pad))
	case ClassOpaque:
		return d.bytes1(t, b[:t.Size])
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
			out[m.Name] = d.decode(m.Type, b[off:off+sz])
			off += sz
		}
		return out
	case ClassArray:
		n := int(t.NumElements())
		sz := MemSize(t.Base)
		vals := make([]any, n)
		for i := range vals {
			vals[i] = d.decode(t.Base, b[i*sz:(i+1)*sz])
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

// trimFixedBytes trims a fixed-length string per its padding: NULLTERM
// at the first NUL, NULLPAD of trailing NULs, SPACEPAD of trailing spaces
// and NULs.
func trimFixedBytes(b []byte, pad StrPad) []byte {
	switch pad {
	case StrNullTerm:
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return b[:i]
		}
		return b
	case StrSpacePad:
		return bytes.TrimRight(b, " \x00")
	}
	return bytes.TrimRight(b, "\x00")
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
