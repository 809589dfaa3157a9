package h5

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// Class is an HDF5 datatype class.
type Class int

// Datatype classes (H5T_class_t).
const (
	ClassInteger   Class = C.H5T_INTEGER
	ClassFloat     Class = C.H5T_FLOAT
	ClassTime      Class = C.H5T_TIME
	ClassString    Class = C.H5T_STRING
	ClassBitfield  Class = C.H5T_BITFIELD
	ClassOpaque    Class = C.H5T_OPAQUE
	ClassCompound  Class = C.H5T_COMPOUND
	ClassReference Class = C.H5T_REFERENCE
	ClassEnum      Class = C.H5T_ENUM
	ClassVlen      Class = C.H5T_VLEN
	ClassArray     Class = C.H5T_ARRAY
)

// String names the class.
func (c Class) String() string {
	switch c {
	case ClassInteger:
		return "integer"
	case ClassFloat:
		return "float"
	case ClassTime:
		return "time"
	case ClassString:
		return "string"
	case ClassBitfield:
		return "bitfield"
	case ClassOpaque:
		return "opaque"
	case ClassCompound:
		return "compound"
	case ClassReference:
		return "reference"
	case ClassEnum:
		return "enum"
	case ClassVlen:
		return "vlen"
	case ClassArray:
		return "array"
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// ByteOrder of an atomic type.
type ByteOrder int

// Byte orders (H5T_order_t); OrderNone for types without one.
const (
	OrderNone ByteOrder = -1
	OrderLE   ByteOrder = C.H5T_ORDER_LE
	OrderBE   ByteOrder = C.H5T_ORDER_BE
)

// CharSet of a string type.
type CharSet int

// Character sets.
const (
	CharSetASCII CharSet = C.H5T_CSET_ASCII
	CharSetUTF8  CharSet = C.H5T_CSET_UTF8
)

// StrPad is the padding of a fixed-length string type.
type StrPad int

// String paddings (H5T_str_t).
const (
	StrNullTerm StrPad = C.H5T_STR_NULLTERM
	StrNullPad  StrPad = C.H5T_STR_NULLPAD
	StrSpacePad StrPad = C.H5T_STR_SPACEPAD
)

// CompoundMember is one field of a compound type.
type CompoundMember struct {
	Name   string // member name
	Offset int    // byte offset in the file record
	Type   *Type  // member type
}

// EnumMember is one name/value pair of an enumeration.
type EnumMember struct {
	Name  string // member name
	Value int64  // integer value
}

// Type is a Go description of an HDF5 datatype, detached from any
// identifier (safe to keep after the file is closed).
type Type struct {
	// Class is the datatype class.
	Class Class
	// Size in bytes of one element in the file.
	Size int
	// Order for integer, float, bitfield and time types (and enums, from their base).
	Order ByteOrder
	// Signed for integers (and enums, from their base).
	Signed bool
	// VarString, CharSet and Pad for strings.
	VarString bool    // variable-length string
	CharSet   CharSet // string character set
	Pad       StrPad  // fixed-length string padding
	// Members of a compound.
	Members []CompoundMember
	// Enum members.
	Enum []EnumMember
	// Base is the base type of an enum, array or vlen.
	Base *Type
	// Dims of an array type.
	Dims []int64
	// Tag of an opaque type.
	Tag string
	// RegionRef is true for dataset region references (else object references).
	RegionRef bool
}

// maxTypeDepth bounds recursion on (hostile) nested types.
const maxTypeDepth = 32

// DescribeType builds the Go description of datatype t.
func DescribeType(t ID) (*Type, error) {
	return describe(C.hid_t(t), 0)
}

func describe(t C.hid_t, depth int) (*Type, error) {
	if depth > maxTypeDepth {
		return nil, &Error{Msg: "datatype nested too deeply"}
	}
	var ti C.qh5_typeinfo
	var e C.qh5_err
	lock()
	r := C.qh5_type_info(t, &ti, &e)
	unlock()
	if r < 0 {
		return nil, errOf(&e)
	}
	out := &Type{Class: Class(ti.cls), Size: int(ti.size), Order: OrderNone}
	switch out.Class {
	case ClassInteger, ClassFloat, ClassBitfield, ClassTime:
		out.Order = ByteOrder(ti.order)
		out.Signed = ti.sign == C.H5T_SGN_2
	case ClassString:
		out.VarString = ti.is_vstr != 0
		out.CharSet = CharSet(ti.cset)
		out.Pad = StrPad(ti.strpad)
	case ClassCompound:
		for i := 0; i < int(ti.nmembers); i++ {
			lock()
			cn := C.qh5_member_name(t, C.int(i))
			off := C.qh5_member_offset(t, C.int(i))
			mt := C.qh5_member_type(t, C.int(i))
			unlock()
			name := C.GoString(cn)
			lock()
			C.qh5_free(unsafe.Pointer(cn))
			unlock()
			if mt < 0 {
				return nil, &Error{Msg: fmt.Sprintf("cannot read type of compound member %q", name)}
			}
			sub, err := describe(mt, depth+1)
			closeHid(mt)
			if err != nil {
				return nil, err
			}
			out.Members = append(out.Members, CompoundMember{Name: name, Offset: int(off), Type: sub})
		}
	case ClassEnum:
		if err := withSuper(t, depth, out); err != nil {
			return nil, err
		}
		out.Order = out.Base.Order
		out.Signed = out.Base.Signed
		for i := 0; i < int(ti.nmembers); i++ {
			var v C.longlong
			lock()
			cn := C.qh5_member_name(t, C.int(i))
			C.qh5_enum_member(t, C.int(i), &v)
			unlock()
			name := C.GoString(cn)
			lock()
			C.qh5_free(unsafe.Pointer(cn))
			unlock()
			out.Enum = append(out.Enum, EnumMember{Name: name, Value: int64(v)})
		}
	case ClassArray:
		if err := withSuper(t, depth, out); err != nil {
			return nil, err
		}
		for i := 0; i < int(ti.ndims); i++ {
			out.Dims = append(out.Dims, int64(ti.dims[i]))
		}
	case ClassVlen:
		if err := withSuper(t, depth, out); err != nil {
			return nil, err
		}
	case ClassOpaque:
		lock()
		tag := C.qh5_opaque_tag(t)
		unlock()
		if tag != nil {
			out.Tag = C.GoString(tag)
			lock()
			C.qh5_free(unsafe.Pointer(tag))
			unlock()
		}
	case ClassReference:
		out.RegionRef = ti.ref_kind == 1
	}
	return out, nil
}

func withSuper(t C.hid_t, depth int, out *Type) error {
	lock()
	st := C.qh5_super(t)
	unlock()
	if st < 0 {
		return &Error{Msg: "cannot read base type"}
	}
	defer closeHid(st)
	b, err := describe(st, depth+1)
	if err != nil {
		return err
	}
	out.Base = b
	return nil
}

func closeHid(id C.hid_t) {
	lock()
	C.qh5_close_id(id)
	unlock()
}

// IsBool reports whether t is an h5py-style boolean: an integer-based enum
// with exactly the members FALSE=0 and TRUE=1 (case-insensitive).
func (t *Type) IsBool() bool {
	if t.Class != ClassEnum || len(t.Enum) != 2 {
		return false
	}
	var f, tr bool
	for _, m := range t.Enum {
		switch {
		case strings.EqualFold(m.Name, "false") && m.Value == 0:
			f = true
		case strings.EqualFold(m.Name, "true") && m.Value == 1:
			tr = true
		}
	}
	return f && tr
}

// IsNumeric reports whether t is an integer or floating-point type.
func (t *Type) IsNumeric() bool {
	return t.Class == ClassInteger || t.Class == ClassFloat
}

// NumElements is the product of an array type's dims (1 for other types).
func (t *Type) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// String renders t in the compact notation Quarry shows users:
// "int32", "uint8", "float64", "bool", "|S8", "vlen utf-8 string",
// "enum(int8){A=0, B=1}", "compound{x: float64, y: int32}", "float32[3]",
// "opaque(16 bytes)", "object reference", "vlen<int32>".
func (t *Type) String() string {
	var sb strings.Builder
	t.write(&sb, 0)
	return sb.String()
}

func (t *Type) write(sb *strings.Builder, depth int) {
	if depth > maxTypeDepth {
		sb.WriteString("...")
		return
	}
	switch t.Class {
	case ClassInteger:
		if !t.Signed {
			sb.WriteString("u")
		}
		fmt.Fprintf(sb, "int%d", t.Size*8)
	case ClassFloat:
		fmt.Fprintf(sb, "float%d", t.Size*8)
	case ClassString:
		cs := "ascii"
		if t.CharSet == CharSetUTF8 {
			cs = "utf-8"
		}
		if t.VarString {
			fmt.Fprintf(sb, "vlen %s string", cs)
		} else if t.CharSet == CharSetUTF8 {
			fmt.Fprintf(sb, "|S%d (utf-8)", t.Size)
		} else {
			fmt.Fprintf(sb, "|S%d", t.Size)
		}
	case ClassEnum:
		if t.IsBool() {
			sb.WriteString("bool")
			return
		}
		sb.WriteString("enum(")
		t.Base.write(sb, depth+1)
		sb.WriteString("){")
		for i, m := range t.Enum {
			if i > 0 {
				sb.WriteString(", ")
			}
			if i == 16 {
				fmt.Fprintf(sb, "... %d more", len(t.Enum)-16)
				break
			}
			fmt.Fprintf(sb, "%s=%d", m.Name, m.Value)
		}
		sb.WriteString("}")
	case ClassCompound:
		sb.WriteString("compound{")
		for i, m := range t.Members {
			if i > 0 {
				sb.WriteString(", ")
			}
			if i == 32 {
				fmt.Fprintf(sb, "... %d more", len(t.Members)-32)
				break
			}
			sb.WriteString(m.Name)
			sb.WriteString(": ")
			m.Type.write(sb, depth+1)
		}
		sb.WriteString("}")
	case ClassArray:
		t.Base.write(sb, depth+1)
		sb.WriteString("[")
		for i, d := range t.Dims {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(sb, "%d", d)
		}
		sb.WriteString("]")
	case ClassVlen:
		sb.WriteString("vlen<")
		t.Base.write(sb, depth+1)
		sb.WriteString(">")
	case ClassOpaque:
		fmt.Fprintf(sb, "opaque(%d bytes", t.Size)
		if t.Tag != "" {
			fmt.Fprintf(sb, ", tag %q", t.Tag)
		}
		sb.WriteString(")")
	case ClassReference:
		if t.RegionRef {
			sb.WriteString("region reference")
		} else {
			sb.WriteString("object reference")
		}
	case ClassBitfield:
		fmt.Fprintf(sb, "bitfield%d", t.Size*8)
	case ClassTime:
		fmt.Fprintf(sb, "time%d", t.Size*8)
	default:
		sb.WriteString(t.Class.String())
	}
}

// Native type kinds for NewNative.
const (
	nativeInt8 = iota + 1
	nativeUint8
	nativeInt16
	nativeUint16
	nativeInt32
	nativeUint32
	nativeInt64
	nativeUint64
	nativeFloat32
	nativeFloat64
	nativeRefObj
	nativeRefRegion
	nativeB8
)

// NewInt returns a new little-endian/native integer type of size 1, 2, 4
// or 8 bytes (other sizes round up to 8). Close it with Close.
func NewInt(size int, signed bool) ID {
	k := nativeInt64
	switch {
	case size <= 1:
		k = nativeInt8
	case size <= 2:
		k = nativeInt16
	case size <= 4:
		k = nativeInt32
	}
	if !signed {
		k++
	}
	return newNative(k)
}

// NewFloat returns a new native float type: float32 for size <= 4, else float64.
func NewFloat(size int) ID {
	if size <= 4 {
		return newNative(nativeFloat32)
	}
	return newNative(nativeFloat64)
}

// NewObjectRef returns a copy of the object-reference type.
func NewObjectRef() ID { return newNative(nativeRefObj) }

func newNative(k int) ID {
	lock()
	defer unlock()
	return ID(C.qh5_native(C.int(k)))
}

// NewString returns a string type: size < 0 means variable length.
func NewString(size int, utf8 bool, pad StrPad) ID {
	cs := 0
	if utf8 {
		cs = 1
	}
	lock()
	defer unlock()
	return ID(C.qh5_string_type(C.longlong(size), C.int(cs), C.int(pad)))
}

// SetBigEndian switches an atomic type's byte order (big = true for BE).
func SetBigEndian(t ID, big bool) error {
	b := 0
	if big {
		b = 1
	}
	lock()
	defer unlock()
	if C.qh5_type_set_order(C.hid_t(t), C.int(b)) < 0 {
		return &Error{Msg: "H5Tset_order failed"}
	}
	return nil
}

// MemberSpec is one field for NewCompound.
type MemberSpec struct {
	Name   string // member name
	Offset int    // byte offset in the record
	Type   ID     // member type
}

// NewCompound creates a compound type of the given size with members.
func NewCompound(size int, members []MemberSpec) (ID, error) {
	lock()
	t := C.qh5_compound_create(C.size_t(size))
	unlock()
	if t < 0 {
		return Invalid, &Error{Msg: "H5Tcreate(compound) failed"}
	}
	for _, m := range members {
		cn := cstr(m.Name)
		lock()
		r := C.qh5_compound_insert(t, cn, C.size_t(m.Offset), C.hid_t(m.Type))
		unlock()
		free(cn)
		if r < 0 {
			closeHid(t)
			return Invalid, &Error{Msg: fmt.Sprintf("H5Tinsert(%q) failed", m.Name)}
		}
	}
	return ID(t), nil
}

// NewArray creates an array type of base with dims.
func NewArray(base ID, dims []int64) (ID, error) {
	if len(dims) == 0 || len(dims) > MaxRank {
		return Invalid, &Error{Msg: "bad array rank"}
	}
	cd := make([]C.hsize_t, len(dims))
	for i, d := range dims {
		cd[i] = C.hsize_t(d)
	}
	lock()
	t := C.qh5_array_create(C.hid_t(base), C.int(len(dims)), &cd[0])
	unlock()
	if t < 0 {
		return Invalid, &Error{Msg: "H5Tarray_create2 failed"}
	}
	return ID(t), nil
}

// NewEnum creates an enumeration over the integer type base.
func NewEnum(base ID, members []EnumMember) (ID, error) {
	lock()
	t := C.qh5_enum_create(C.hid_t(base))
	unlock()
	if t < 0 {
		return Invalid, &Error{Msg: "H5Tenum_create failed"}
	}
	for _, m := range members {
		cn := cstr(m.Name)
		lock()
		r := C.qh5_enum_insert(t, cn, C.longlong(m.Value))
		unlock()
		free(cn)
		if r < 0 {
			closeHid(t)
			return Invalid, &Error{Msg: fmt.Sprintf("H5Tenum_insert(%q) failed", m.Name)}
		}
	}
	return ID(t), nil
}

// NewOpaque creates an opaque type of size bytes with an optional tag.
func NewOpaque(size int, tag string) (ID, error) {
	ct := cstr(tag)
	defer free(ct)
	lock()
	t := C.qh5_opaque_create(C.size_t(size), ct)
	unlock()
	if t < 0 {
		return Invalid, &Error{Msg: "H5Tcreate(opaque) failed"}
	}
	return ID(t), nil
}

// MemType builds the in-memory counterpart of t, with native byte order and
// packed compound layout, and returns it with its size in bytes. It fails for
// classes HDF5 cannot convert to memory (vlen sequences, bitfields, time).
// Integers keep their width (odd widths widen to 8 bytes), floats become
// float32 (size <= 4) or float64, strings keep their size, padding and
// character set, enums get a native base and the same members (HDF5 converts
// enums by member name), references and opaque types are copied.
func MemType(t *Type) (ID, int, error) {
	return memType(t, 0)
}

func memType(t *Type, depth int) (ID, int, error) {
	if depth > maxTypeDepth {
		return Invalid, 0, &Error{Msg: "datatype nested too deeply"}
	}
	switch t.Class {
	case ClassInteger:
		id := NewInt(t.Size, t.Signed)
		return id, intMemSize(t.Size), nil
	case ClassFloat:
		if t.Size <= 4 {
			return NewFloat(4), 4, nil
		}
		return NewFloat(8), 8, nil
	case ClassString:
		if t.VarString {
			return NewString(-1, t.CharSet == CharSetUTF8, t.Pad), int(unsafe.Sizeof(uintptr(0))), nil
		}
		return NewString(t.Size, t.CharSet == CharSetUTF8, t.Pad), max(t.Size, 1), nil
	case ClassEnum:
		if t.Base == nil || t.Base.Class != ClassInteger {
			return Invalid, 0, &Error{Msg: "enum with non-integer base"}
		}
		base := NewInt(t.Base.Size, t.Base.Signed)
		defer Close(base)
		id, err := NewEnum(base, t.Enum)
		if err != nil {
			return Invalid, 0, err
		}
		return id, intMemSize(t.Base.Size), nil
	case ClassCompound:
		off := 0
		var specs []MemberSpec
		defer func() {
			for _, s := range specs {
				Close(s.Type)
			}
		}()
		for _, m := range t.Members {
			mid, sz, err := memType(m.Type, depth+1)
			if err != nil {
				return Invalid, 0, err
			}
			specs = append(specs, MemberSpec{Name: m.Name, Offset: off, Type: mid})
			off += sz
		}
		id, err := NewCompound(max(off, 1), specs)
		return id, max(off, 1), err
	case ClassArray:
		bid, bsz, err := memType(t.Base, depth+1)
		if err != nil {
			return Invalid, 0, err
		}
		defer Close(bid)
		id, err := NewArray(bid, t.Dims)
		return id, bsz * int(t.NumElements()), err
	case ClassReference:
		if t.RegionRef {
			return newNative(nativeRefRegion), t.Size, nil
		}
		return newNative(nativeRefObj), t.Size, nil
	case ClassOpaque:
		id, err := NewOpaque(t.Size, t.Tag)
		return id, t.Size, err
	}
	return Invalid, 0, &Error{Msg: fmt.Sprintf("no in-memory representation for %s", t)}
}

func intMemSize(size int) int {
	switch {
	case size <= 1:
		return 1
	case size <= 2:
		return 2
	case size <= 4:
		return 4
	}
	return 8
}

// HasVarData reports whether t contains variable-length data (vlen strings
// or sequences), whose memory must be reclaimed after a read.
func (t *Type) HasVarData() bool {
	switch t.Class {
	case ClassString:
		return t.VarString
	case ClassVlen:
		return true
	case ClassCompound:
		for _, m := range t.Members {
			if m.Type.HasVarData() {
				return true
			}
		}
	case ClassArray:
		return t.Base.HasVarData()
	}
	return false
}
