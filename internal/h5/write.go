package h5

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// This file is the writing side of the shim. Quarry never writes user data;
// it exists so tests and the demo generator (demodata/h5gen) can build
// fixtures with every type and layout the reader supports. Objects are
// created without timestamps so generated files are byte-for-byte
// reproducible, and link names are stored as UTF-8.

// CreateGroup creates a group (and missing intermediate groups).
func CreateGroup(loc ID, name string) (ID, error) {
	cn := cstr(name)
	defer free(cn)
	var e C.qh5_err
	lock()
	g := C.qh5_gcreate(C.hid_t(loc), cn, &e)
	unlock()
	if g < 0 {
		return Invalid, errOf(&e)
	}
	return ID(g), nil
}

// FilterSpec adds a raw filter to a dataset's pipeline.
type FilterSpec struct {
	// ID is the filter identifier.
	ID int
	// Optional sets H5Z_FLAG_OPTIONAL: the library may skip the filter
	// (which is how a dataset naming an unavailable filter can be created).
	Optional bool
}

// DatasetOptions are creation options for CreateDataset.
type DatasetOptions struct {
	// MaxDims, nil = dims; Unlimited (-1) for unlimited dimensions.
	MaxDims []int64
	// Chunk dims (required for filters and unlimited dims).
	Chunk []int64
	// Gzip level 1..9 (0 = no deflate).
	Gzip       int
	Shuffle    bool         // byte shuffle before compression
	Fletcher32 bool         // checksum chunks
	Filters    []FilterSpec // raw filters appended to the pipeline
	// Scalar creates a scalar dataspace (dims ignored); Null a null one.
	Scalar, Null bool
	// Compact stores the data in the object header.
	Compact bool
	// Fill is one element of the dataset type used as the fill value.
	Fill []byte
	// External stores the raw data in this flat file instead (contiguous
	// layout only).
	External string
}

// CreateDataset creates a dataset of type typ and shape dims.
func CreateDataset(loc ID, name string, typ ID, dims []int64, o *DatasetOptions) (ID, error) {
	if o == nil {
		o = &DatasetOptions{}
	}
	var c C.qh5_dcreate_opts
	if len(dims) > MaxRank || len(o.Chunk) > MaxRank || len(o.Filters) > 4 {
		return Invalid, &Error{Msg: "too many dims or filters"}
	}
	c.rank = C.int(len(dims))
	for i, d := range dims {
		c.dims[i] = C.hsize_t(d)
		c.maxdims[i] = C.hsize_t(d)
		if o.MaxDims != nil {
			if o.MaxDims[i] == Unlimited {
				c.maxdims[i] = C.hsize_t(math.MaxUint64)
			} else {
				c.maxdims[i] = C.hsize_t(o.MaxDims[i])
			}
		}
	}
	c.chunk_rank = C.int(len(o.Chunk))
	for i, d := range o.Chunk {
		c.chunk[i] = C.hsize_t(d)
	}
	c.deflate = -1
	if o.Gzip > 0 {
		c.deflate = C.int(o.Gzip)
	}
	if o.Shuffle {
		c.shuffle = 1
	}
	if o.Fletcher32 {
		c.fletcher32 = 1
	}
	c.nextra = C.int(len(o.Filters))
	for i, f := range o.Filters {
		c.extra_id[i] = C.int(f.ID)
		if f.Optional {
			c.extra_flags[i] = C.H5Z_FLAG_OPTIONAL
		}
	}
	switch {
	case o.Scalar:
		c.scalar = 1
	case o.Null:
		c.scalar = 2
	}
	if o.Compact {
		c.compact = 1
	}
	var fill unsafe.Pointer
	if len(o.Fill) > 0 {
		fill = C.CBytes(o.Fill)
		defer C.free(fill)
		c.fill = fill
	}
	if o.External != "" {
		ce := cstr(o.External)
		defer free(ce)
		c.external = ce
	}
	cn := cstr(name)
	defer free(cn)
	var e C.qh5_err
	lock()
	d := C.qh5_dcreate(C.hid_t(loc), cn, C.hid_t(typ), &c, &e)
	unlock()
	if d < 0 {
		return Invalid, errOf(&e)
	}
	return ID(d), nil
}

// Write writes the whole dataset from buf (elements of memType).
func Write(dset, memType ID, buf unsafe.Pointer) error {
	var e C.qh5_err
	lock()
	r := C.qh5_write(C.hid_t(dset), C.hid_t(memType), 0, nil, nil, buf, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// WriteSlab writes the block start/count of the dataset from buf.
func WriteSlab(dset, memType ID, start, count []int64, buf unsafe.Pointer) error {
	s, err := Hyperslab{Start: start, Count: count}.c()
	if err != nil {
		return err
	}
	var e C.qh5_err
	lock()
	r := C.qh5_write(C.hid_t(dset), C.hid_t(memType), C.int(s.rank), &s.start[0], &s.count[0], buf, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// WriteValues writes a whole dataset from a Go slice of fixed-size values
// (numbers or structs without pointers) laid out as memType.
func WriteValues[T any](dset, memType ID, vals []T) error {
	if len(vals) == 0 {
		return nil
	}
	return Write(dset, memType, unsafe.Pointer(&vals[0]))
}

// CStrings is a C array of C strings, for writing variable-length strings
// (alone or inside compound records). Free it after the write.
type CStrings struct {
	ptrs []uintptr
}

// NewCStrings copies vals into C memory.
func NewCStrings(vals []string) *CStrings {
	c := &CStrings{ptrs: make([]uintptr, len(vals))}
	for i, v := range vals {
		c.ptrs[i] = uintptr(unsafe.Pointer(C.CString(v)))
	}
	return c
}

// Ptr returns the address of string i (to store in a record buffer).
func (c *CStrings) Ptr(i int) uintptr { return c.ptrs[i] }

// Free releases the C memory.
func (c *CStrings) Free() {
	for i, p := range c.ptrs {
		C.free(*(*unsafe.Pointer)(unsafe.Pointer(&p)))
		c.ptrs[i] = 0
	}
}

// WriteStrings writes a whole variable-length string dataset.
func WriteStrings(dset ID, vals []string, utf8 bool) error {
	if len(vals) == 0 {
		return nil
	}
	mt := NewString(-1, utf8, StrNullTerm)
	defer Close(mt)
	cs := NewCStrings(vals)
	defer cs.Free()
	return Write(dset, mt, unsafe.Pointer(&cs.ptrs[0]))
}

// CreateAttribute creates an attribute (dims nil = scalar).
func CreateAttribute(obj ID, name string, typ ID, dims []int64) (ID, error) {
	cn := cstr(name)
	defer free(cn)
	var cd [MaxRank]C.hsize_t
	if len(dims) > MaxRank {
		return Invalid, &Error{Msg: "attribute rank too large"}
	}
	for i, d := range dims {
		cd[i] = C.hsize_t(d)
	}
	var e C.qh5_err
	lock()
	a := C.qh5_acreate(C.hid_t(obj), cn, C.hid_t(typ), C.int(len(dims)), &cd[0], &e)
	unlock()
	if a < 0 {
		return Invalid, errOf(&e)
	}
	return ID(a), nil
}

// WriteAttribute writes an attribute's data.
func WriteAttribute(attr, memType ID, buf unsafe.Pointer) error {
	var e C.qh5_err
	lock()
	r := C.qh5_awrite(C.hid_t(attr), C.hid_t(memType), buf, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// SetAttr creates attribute name on obj from a Go value: string (vlen
// UTF-8), []string, bool (h5py enum), int, int64, []int64, float64,
// []float64, float32, []int32.
func SetAttr(obj ID, name string, v any) error {
	write := func(t ID, dims []int64, buf unsafe.Pointer) error {
		defer Close(t)
		a, err := CreateAttribute(obj, name, t, dims)
		if err != nil {
			return err
		}
		defer Close(a)
		return WriteAttribute(a, t, buf)
	}
	switch x := v.(type) {
	case string:
		cs := NewCStrings([]string{x})
		defer cs.Free()
		return write(NewString(-1, true, StrNullTerm), nil, unsafe.Pointer(&cs.ptrs[0]))
	case []string:
		if len(x) == 0 {
			return &Error{Msg: "empty string list attribute"}
		}
		cs := NewCStrings(x)
		defer cs.Free()
		return write(NewString(-1, true, StrNullTerm), []int64{int64(len(x))}, unsafe.Pointer(&cs.ptrs[0]))
	case bool:
		t, err := NewBoolType()
		if err != nil {
			return err
		}
		b := int8(0)
		if x {
			b = 1
		}
		return write(t, nil, unsafe.Pointer(&b))
	case int:
		y := int64(x)
		return write(NewInt(8, true), nil, unsafe.Pointer(&y))
	case int64:
		return write(NewInt(8, true), nil, unsafe.Pointer(&x))
	case []int64:
		return write(NewInt(8, true), []int64{int64(len(x))}, unsafe.Pointer(&x[0]))
	case []int32:
		return write(NewInt(4, true), []int64{int64(len(x))}, unsafe.Pointer(&x[0]))
	case float64:
		return write(NewFloat(8), nil, unsafe.Pointer(&x))
	case float32:
		return write(NewFloat(4), nil, unsafe.Pointer(&x))
	case []float64:
		return write(NewFloat(8), []int64{int64(len(x))}, unsafe.Pointer(&x[0]))
	}
	return &Error{Msg: fmt.Sprintf("SetAttr: unsupported Go type %T", v)}
}

// NewBoolType returns the h5py boolean type: an int8 enum FALSE=0, TRUE=1.
func NewBoolType() (ID, error) {
	base := NewInt(1, true)
	defer Close(base)
	return NewEnum(base, []EnumMember{{Name: "FALSE", Value: 0}, {Name: "TRUE", Value: 1}})
}

// CreateSoftLink creates a soft link name -> target.
func CreateSoftLink(loc ID, target, name string) error {
	ct, cn := cstr(target), cstr(name)
	defer free(ct)
	defer free(cn)
	var e C.qh5_err
	lock()
	r := C.qh5_lcreate_soft(C.hid_t(loc), ct, cn, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// CreateExternalLink creates an external link name -> file:obj.
func CreateExternalLink(loc ID, file, obj, name string) error {
	cf, co, cn := cstr(file), cstr(obj), cstr(name)
	defer free(cf)
	defer free(co)
	defer free(cn)
	var e C.qh5_err
	lock()
	r := C.qh5_lcreate_external(C.hid_t(loc), cf, co, cn, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// CreateHardLink creates a second hard link name to the object at target.
func CreateHardLink(loc ID, target, name string) error {
	ct, cn := cstr(target), cstr(name)
	defer free(ct)
	defer free(cn)
	var e C.qh5_err
	lock()
	r := C.qh5_lcreate_hard(C.hid_t(loc), ct, cn, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// WriteObjectRef creates a one-element dataset name holding an object
// reference to target (a type Quarry does not read).
func WriteObjectRef(loc ID, name, target string) error {
	cn, ct := cstr(name), cstr(target)
	defer free(cn)
	defer free(ct)
	var e C.qh5_err
	lock()
	r := C.qh5_write_obj_ref(C.hid_t(loc), cn, ct, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// CommitType stores t in the file as the named datatype name.
func CommitType(loc ID, name string, t ID) error {
	cn := cstr(name)
	defer free(cn)
	var e C.qh5_err
	lock()
	r := C.qh5_type_commit(C.hid_t(loc), cn, C.hid_t(t), &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// RegisterXORFilter registers, in this process only, a toy filter under id
// that XORs every byte with 0x5A (test support: it makes datasets that
// need a filter the library lacks once UnregisterFilter is called).
func RegisterXORFilter(id int) error {
	var e C.qh5_err
	lock()
	r := C.qh5_register_xor_filter(C.int(id), &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// UnregisterFilter removes a filter registered with RegisterXORFilter.
func UnregisterFilter(id int) error {
	var e C.qh5_err
	lock()
	r := C.qh5_unregister_filter(C.int(id), &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}
