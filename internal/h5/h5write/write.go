// Package h5write is the writing side of Quarry's libhdf5 shim: files,
// groups, datasets (any layout and filter pipeline, raw chunks with filter
// masks), attributes, links, committed types and a toy filter. Quarry never
// writes HDF5 data; tests and the demo data generator (demodata/h5gen) use
// this package to build fixtures with every type and layout the reader
// supports, and the shipped binary does not link it (a test in package h5
// checks that cmd/quarry does not depend on it).
//
// Objects are created without timestamps so generated files are
// byte-for-byte reproducible, and link names are stored as UTF-8. Every
// call follows package h5's rules: it runs under h5.Locked and reports
// library failures as *h5.Error with the library's error stack.
package h5write

/*
#cgo pkg-config: hdf5
#cgo CFLAGS: -DH5_USE_110_API -Wall -Wextra -Werror -I${SRCDIR}/..
#include "write.h"
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/quarrydb/quarry/internal/h5"
)

// call runs one C helper under h5's locking discipline; a false result is
// the library failure the helper captured into e.
func call(f func(e *C.qh5_err) bool) error {
	var e C.qh5_err
	var ok bool
	h5.Locked(func() { ok = f(&e) })
	if !ok {
		return h5.LibraryError(C.GoString(&e.msg[0]))
	}
	return nil
}

// create runs a C helper that returns a new identifier (negative on
// failure).
func create(f func(e *C.qh5_err) C.hid_t) (h5.ID, error) {
	id := h5.Invalid
	err := call(func(e *C.qh5_err) bool {
		id = h5.ID(f(e))
		return id >= 0
	})
	if err != nil {
		return h5.Invalid, err
	}
	return id, nil
}

// cstrs copies ss into C strings for one call; free them with freeAll.
func cstrs(ss ...string) []*C.char {
	cs := make([]*C.char, len(ss))
	for i, s := range ss {
		cs[i] = C.CString(s)
	}
	return cs
}

func freeAll(cs []*C.char) {
	for _, c := range cs {
		C.free(unsafe.Pointer(c))
	}
}

// dims converts a shape, start or offset to C, refusing more than
// h5.MaxRank dimensions and negative values.
func dims(v []int64) (d [h5.MaxRank]C.hsize_t, err error) {
	if len(v) > h5.MaxRank {
		return d, &h5.Error{Msg: fmt.Sprintf("rank %d exceeds %d", len(v), h5.MaxRank)}
	}
	for i, x := range v {
		if x < 0 {
			return d, &h5.Error{Msg: fmt.Sprintf("negative dimension %d", x)}
		}
		d[i] = C.hsize_t(x)
	}
	return d, nil
}

// CreateFile creates (truncates) path for writing.
func CreateFile(path string) (h5.ID, error) {
	cs := cstrs(path)
	defer freeAll(cs)
	return create(func(e *C.qh5_err) C.hid_t { return C.qh5_fcreate(cs[0], e) })
}

// CreateGroup creates a group (and missing intermediate groups).
func CreateGroup(loc h5.ID, name string) (h5.ID, error) {
	cs := cstrs(name)
	defer freeAll(cs)
	return create(func(e *C.qh5_err) C.hid_t { return C.qh5_gcreate(C.hid_t(loc), cs[0], e) })
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
	// MaxDims, nil = dims; h5.Unlimited (-1) for unlimited dimensions.
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
func CreateDataset(loc h5.ID, name string, typ h5.ID, shape []int64, o *DatasetOptions) (h5.ID, error) {
	if o == nil {
		o = &DatasetOptions{}
	}
	var c C.qh5_dcreate_opts
	if len(shape) > h5.MaxRank || len(o.Chunk) > h5.MaxRank || len(o.Filters) > 4 {
		return h5.Invalid, &h5.Error{Msg: "too many dims or filters"}
	}
	c.rank = C.int(len(shape))
	for i, d := range shape {
		c.dims[i] = C.hsize_t(d)
		c.maxdims[i] = C.hsize_t(d)
		if o.MaxDims != nil {
			if o.MaxDims[i] == h5.Unlimited {
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
	if len(o.Fill) > 0 {
		fill := C.CBytes(o.Fill)
		defer C.free(fill)
		c.fill = fill
	}
	cs := cstrs(name, o.External)
	defer freeAll(cs)
	if o.External != "" {
		c.external = cs[1]
	}
	return create(func(e *C.qh5_err) C.hid_t { return C.qh5_dcreate(C.hid_t(loc), cs[0], C.hid_t(typ), &c, e) })
}

// Write writes the whole dataset from buf (elements of memType).
func Write(dset, memType h5.ID, buf unsafe.Pointer) error {
	return call(func(e *C.qh5_err) bool {
		return C.qh5_write(C.hid_t(dset), C.hid_t(memType), 0, nil, nil, buf, e) >= 0
	})
}

// WriteSlab writes the block start/count of the dataset from buf.
func WriteSlab(dset, memType h5.ID, start, count []int64, buf unsafe.Pointer) error {
	if len(start) != len(count) || len(count) == 0 {
		return &h5.Error{Msg: "WriteSlab: start and count differ in rank"}
	}
	s, err := dims(start)
	if err != nil {
		return err
	}
	n, err := dims(count)
	if err != nil {
		return err
	}
	return call(func(e *C.qh5_err) bool {
		return C.qh5_write(C.hid_t(dset), C.hid_t(memType), C.int(len(count)), &s[0], &n[0], buf, e) >= 0
	})
}

// WriteValues writes a whole dataset from a Go slice of fixed-size values
// (numbers or structs without pointers) laid out as memType.
func WriteValues[T any](dset, memType h5.ID, vals []T) error {
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
func WriteStrings(dset h5.ID, vals []string, utf8 bool) error {
	if len(vals) == 0 {
		return nil
	}
	mt := h5.NewString(-1, utf8, h5.StrNullTerm)
	defer h5.Close(mt)
	cs := NewCStrings(vals)
	defer cs.Free()
	return Write(dset, mt, unsafe.Pointer(&cs.ptrs[0]))
}

// CreateAttribute creates an attribute (shape nil = scalar).
func CreateAttribute(obj h5.ID, name string, typ h5.ID, shape []int64) (h5.ID, error) {
	cd, err := dims(shape)
	if err != nil {
		return h5.Invalid, err
	}
	cs := cstrs(name)
	defer freeAll(cs)
	return create(func(e *C.qh5_err) C.hid_t {
		return C.qh5_acreate(C.hid_t(obj), cs[0], C.hid_t(typ), C.int(len(shape)), &cd[0], e)
	})
}

// WriteAttribute writes an attribute's data.
func WriteAttribute(attr, memType h5.ID, buf unsafe.Pointer) error {
	return call(func(e *C.qh5_err) bool { return C.qh5_awrite(C.hid_t(attr), C.hid_t(memType), buf, e) >= 0 })
}

// SetAttr creates attribute name on obj from a Go value: string (vlen
// UTF-8), []string, bool (h5py enum), int, int64, []int64, float64,
// []float64, float32, []int32.
func SetAttr(obj h5.ID, name string, v any) error {
	write := func(t h5.ID, dims []int64, buf unsafe.Pointer) error {
		defer h5.Close(t)
		a, err := CreateAttribute(obj, name, t, dims)
		if err != nil {
			return err
		}
		defer h5.Close(a)
		return WriteAttribute(a, t, buf)
	}
	switch x := v.(type) {
	case string:
		cs := NewCStrings([]string{x})
		defer cs.Free()
		return write(h5.NewString(-1, true, h5.StrNullTerm), nil, unsafe.Pointer(&cs.ptrs[0]))
	case []string:
		if len(x) == 0 {
			return &h5.Error{Msg: "empty string list attribute"}
		}
		cs := NewCStrings(x)
		defer cs.Free()
		return write(h5.NewString(-1, true, h5.StrNullTerm), []int64{int64(len(x))}, unsafe.Pointer(&cs.ptrs[0]))
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
		return write(h5.NewInt(8, true), nil, unsafe.Pointer(&y))
	case int64:
		return write(h5.NewInt(8, true), nil, unsafe.Pointer(&x))
	case []int64:
		return write(h5.NewInt(8, true), []int64{int64(len(x))}, unsafe.Pointer(&x[0]))
	case []int32:
		return write(h5.NewInt(4, true), []int64{int64(len(x))}, unsafe.Pointer(&x[0]))
	case float64:
		return write(h5.NewFloat(8), nil, unsafe.Pointer(&x))
	case float32:
		return write(h5.NewFloat(4), nil, unsafe.Pointer(&x))
	case []float64:
		return write(h5.NewFloat(8), []int64{int64(len(x))}, unsafe.Pointer(&x[0]))
	}
	return &h5.Error{Msg: fmt.Sprintf("SetAttr: unsupported Go type %T", v)}
}

// NewBoolType returns the h5py boolean type: an int8 enum FALSE=0, TRUE=1.
func NewBoolType() (h5.ID, error) {
	base := h5.NewInt(1, true)
	defer h5.Close(base)
	return h5.NewEnum(base, []h5.EnumMember{{Name: "FALSE", Value: 0}, {Name: "TRUE", Value: 1}})
}

// CreateSoftLink creates a soft link name -> target.
func CreateSoftLink(loc h5.ID, target, name string) error {
	cs := cstrs(target, name)
	defer freeAll(cs)
	return call(func(e *C.qh5_err) bool { return C.qh5_lcreate_soft(C.hid_t(loc), cs[0], cs[1], e) >= 0 })
}

// CreateExternalLink creates an external link name -> file:obj.
func CreateExternalLink(loc h5.ID, file, obj, name string) error {
	cs := cstrs(file, obj, name)
	defer freeAll(cs)
	return call(func(e *C.qh5_err) bool { return C.qh5_lcreate_external(C.hid_t(loc), cs[0], cs[1], cs[2], e) >= 0 })
}

// CreateHardLink creates a second hard link name to the object at target.
func CreateHardLink(loc h5.ID, target, name string) error {
	cs := cstrs(target, name)
	defer freeAll(cs)
	return call(func(e *C.qh5_err) bool { return C.qh5_lcreate_hard(C.hid_t(loc), cs[0], cs[1], e) >= 0 })
}

// WriteObjectRef creates a one-element dataset name holding an object
// reference to target (a type Quarry does not read).
func WriteObjectRef(loc h5.ID, name, target string) error {
	cs := cstrs(name, target)
	defer freeAll(cs)
	return call(func(e *C.qh5_err) bool { return C.qh5_write_obj_ref(C.hid_t(loc), cs[0], cs[1], e) >= 0 })
}

// CommitType stores t in the file as the named datatype name.
func CommitType(loc h5.ID, name string, t h5.ID) error {
	cs := cstrs(name)
	defer freeAll(cs)
	return call(func(e *C.qh5_err) bool { return C.qh5_type_commit(C.hid_t(loc), cs[0], C.hid_t(t), e) >= 0 })
}

// RegisterXORFilter registers, in this process only, a toy filter under id
// that XORs every byte with 0x5A (test support: it makes datasets that
// need a filter the library lacks once UnregisterFilter is called).
func RegisterXORFilter(id int) error {
	return call(func(e *C.qh5_err) bool { return C.qh5_register_xor_filter(C.int(id), e) >= 0 })
}

// UnregisterFilter removes a filter registered with RegisterXORFilter.
func UnregisterFilter(id int) error {
	return call(func(e *C.qh5_err) bool { return C.qh5_unregister_filter(C.int(id), e) >= 0 })
}

// WriteRawChunk stores data as the chunk of dset at offset (the chunk's
// first element), bypassing the filter pipeline: mask marks the filters,
// by pipeline position, that the data did not go through. Used by tests
// to build chunks with filter masks or corrupt contents.
func WriteRawChunk(dset h5.ID, offset []int64, mask uint32, data []byte) error {
	if len(data) == 0 {
		return &h5.Error{Msg: "WriteRawChunk: empty chunk"}
	}
	off, err := dims(offset)
	if err != nil {
		return err
	}
	return call(func(e *C.qh5_err) bool {
		return C.qh5_write_raw_chunk(C.hid_t(dset), &off[0], C.uint(mask), unsafe.Pointer(&data[0]), C.size_t(len(data)), e) >= 0
	})
}
