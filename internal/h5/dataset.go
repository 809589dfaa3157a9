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

// SpaceClass is the class of a dataspace.
type SpaceClass int

// Dataspace classes.
const (
	SpaceScalar SpaceClass = C.H5S_SCALAR
	SpaceSimple SpaceClass = C.H5S_SIMPLE
	SpaceNull   SpaceClass = C.H5S_NULL
)

// Unlimited marks an unlimited maximum dimension in Space.MaxDims.
const Unlimited = -1

// Space is a dataset's or attribute's dataspace.
type Space struct {
	// Class is scalar, simple or null.
	Class SpaceClass
	// Dims is empty for scalar and null dataspaces.
	Dims []int64
	// MaxDims uses Unlimited (-1) for unlimited dimensions; nil for attributes.
	MaxDims []int64
}

// NumElements is the number of elements (1 for scalar, 0 for null).
func (s Space) NumElements() int64 {
	switch s.Class {
	case SpaceNull:
		return 0
	case SpaceScalar:
		return 1
	}
	n := int64(1)
	for _, d := range s.Dims {
		n = mulSat(n, d)
	}
	return n
}

func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func hsizeToInt(v C.hsize_t) int64 {
	if uint64(v) > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}

// DatasetSpace returns the dataspace of dataset dset.
func DatasetSpace(dset ID) (Space, error) {
	var e C.qh5_err
	var cls, rank C.int
	var dims, maxdims [MaxRank]C.hsize_t
	lock()
	r := C.qh5_dset_space(C.hid_t(dset), &cls, &rank, &dims[0], &maxdims[0], &e)
	unlock()
	if r < 0 {
		return Space{}, errOf(&e)
	}
	s := Space{Class: SpaceClass(cls)}
	if s.Class == SpaceSimple {
		s.Dims = make([]int64, int(rank))
		s.MaxDims = make([]int64, int(rank))
		for i := range s.Dims {
			s.Dims[i] = hsizeToInt(dims[i])
			if maxdims[i] == C.hsize_t(math.MaxUint64) {
				s.MaxDims[i] = Unlimited
			} else {
				s.MaxDims[i] = hsizeToInt(maxdims[i])
			}
		}
	}
	return s, nil
}

// DatasetType describes dataset dset's element type.
func DatasetType(dset ID) (*Type, error) {
	var e C.qh5_err
	lock()
	t := C.qh5_dset_type(C.hid_t(dset), &e)
	unlock()
	if t < 0 {
		return nil, errOf(&e)
	}
	defer closeHid(t)
	return DescribeType(ID(t))
}

// Layout is a dataset's storage layout.
type Layout int

// Storage layouts (H5D_layout_t).
const (
	LayoutCompact    Layout = C.H5D_COMPACT
	LayoutContiguous Layout = C.H5D_CONTIGUOUS
	LayoutChunked    Layout = C.H5D_CHUNKED
	LayoutVirtual    Layout = C.H5D_VIRTUAL
)

// String names the layout.
func (l Layout) String() string {
	switch l {
	case LayoutCompact:
		return "compact"
	case LayoutContiguous:
		return "contiguous"
	case LayoutChunked:
		return "chunked"
	case LayoutVirtual:
		return "virtual"
	}
	return "unknown"
}

// Well-known filter identifiers.
const (
	FilterDeflate    = 1
	FilterShuffle    = 2
	FilterFletcher32 = 3
	FilterSZIP       = 4
	FilterNBit       = 5
	FilterScaleOff   = 6
	FilterLZO        = 305
	FilterBZIP2      = 307
	FilterLZF        = 32000
	FilterBlosc      = 32001
	FilterZstd       = 32015
)

// knownFilters names registered third-party filter ids (from the HDF Group's
// registry) so unavailable filters can be reported by name.
var knownFilters = map[int]string{
	FilterDeflate: "deflate", FilterShuffle: "shuffle", FilterFletcher32: "fletcher32",
	FilterSZIP: "szip", FilterNBit: "nbit", FilterScaleOff: "scaleoffset",
	FilterLZO: "lzo", FilterBZIP2: "bzip2", FilterLZF: "lzf", FilterBlosc: "blosc",
	32002: "mafisc", 32003: "snappy", 32004: "lz4", 32005: "apax", 32006: "cbf",
	32007: "jpeg-xr", 32008: "bitshuffle", 32009: "spdp", 32010: "lpc-rice",
	32011: "ccsds-123", 32012: "jpeg-ls", 32013: "zfp", 32014: "fpzip",
	FilterZstd: "zstd", 32016: "b3d", 32017: "sz", 32018: "fcidecomp",
	32019: "jpeg", 32020: "vbz", 32022: "fapec", 32023: "bitgroom", 32024: "granularbr",
	32025: "sz3", 32026: "blosc2",
}

// FilterName returns the registered name of a filter id, or "" when unknown.
func FilterName(id int) string { return knownFilters[id] }

// Filter is one stage of a dataset's filter pipeline.
type Filter struct {
	// ID is the filter identifier (H5Z_filter_t).
	ID int
	// Name is the registered name when known, else the name stored in the file.
	Name string
	// Flags are the H5Z_FLAG_* flags (1 = optional).
	Flags uint
	// ClientData are the filter's parameters (e.g. the deflate level).
	ClientData []uint32
	// Available reports H5Zfilter_avail.
	Available bool
}

// DatasetInfo is a dataset's creation properties and storage size.
type DatasetInfo struct {
	// Layout is the storage layout.
	Layout Layout
	// Chunk dims, nil unless chunked.
	Chunk []int64
	// Filters is the pipeline, in order.
	Filters []Filter
	// FillDefined is 0 undefined, 1 library default, 2 user defined.
	FillDefined int
	// StorageSize is the number of bytes allocated in the file.
	StorageSize int64
	// ExternalFiles counts raw-data files outside the HDF5 file
	// (H5Pset_external); VirtualSources counts VDS mappings. Both make the
	// library read other files than the one opened.
	ExternalFiles, VirtualSources int
}

// UnavailableFilter returns the first filter the library cannot apply, if any.
func (d DatasetInfo) UnavailableFilter() (Filter, bool) {
	for _, f := range d.Filters {
		if !f.Available {
			return f, true
		}
	}
	return Filter{}, false
}

// GetDatasetInfo returns dset's creation properties.
func GetDatasetInfo(dset ID) (DatasetInfo, error) {
	var e C.qh5_err
	var di C.qh5_dsetinfo
	lock()
	r := C.qh5_dset_info(C.hid_t(dset), &di, &e)
	unlock()
	if r < 0 {
		return DatasetInfo{}, errOf(&e)
	}
	out := DatasetInfo{Layout: Layout(di.layout), FillDefined: int(di.fill_defined), StorageSize: int64(di.storage_size),
		ExternalFiles: int(di.external_count), VirtualSources: int(di.virtual_count)}
	if out.Layout == LayoutChunked {
		for i := 0; i < int(di.chunk_rank); i++ {
			out.Chunk = append(out.Chunk, int64(di.chunk[i]))
		}
	}
	for i := 0; i < int(di.nfilters); i++ {
		var id, avail C.int
		var flags C.uint
		var cd [16]C.uint
		ncd := C.size_t(len(cd))
		var name [256]C.char
		lock()
		r := C.qh5_dset_filter(C.hid_t(dset), C.int(i), &id, &flags, &cd[0], &ncd, &name[0], C.size_t(len(name)), &avail, &e)
		unlock()
		if r < 0 {
			return out, errOf(&e)
		}
		f := Filter{ID: int(id), Flags: uint(flags), Available: avail != 0}
		f.Name = FilterName(f.ID)
		if f.Name == "" {
			f.Name = C.GoString(&name[0])
		}
		for j := 0; j < int(ncd) && j < len(cd); j++ {
			f.ClientData = append(f.ClientData, uint32(cd[j]))
		}
		out.Filters = append(out.Filters, f)
	}
	return out, nil
}

// FilterAvailable reports whether the library can apply filter id.
func FilterAvailable(id int) bool {
	lock()
	defer unlock()
	return C.H5Zfilter_avail(C.H5Z_filter_t(id)) > 0
}

// FillValue reads dset's fill value converted to memType into buf (which
// must hold one element of memType).
func FillValue(dset, memType ID, buf []byte) error {
	if len(buf) == 0 {
		return &Error{Msg: "empty fill value buffer"}
	}
	var e C.qh5_err
	lock()
	r := C.qh5_dset_fill(C.hid_t(dset), C.hid_t(memType), unsafe.Pointer(&buf[0]), &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// Hyperslab is a regular selection: per dimension a start, a stride and a
// count of elements. An empty Hyperslab selects a whole scalar dataset.
type Hyperslab struct {
	Start  []int64 // first element per dimension
	Stride []int64 // step per dimension (nil = 1)
	Count  []int64 // elements per dimension
}

// NumElements is the number of selected elements.
func (h Hyperslab) NumElements() int64 {
	n := int64(1)
	for _, c := range h.Count {
		n = mulSat(n, c)
	}
	return n
}

type cslab struct {
	start, stride, count [MaxRank]C.hsize_t
	rank                 int
}

func (h Hyperslab) c() (cslab, error) {
	var s cslab
	if len(h.Count) > MaxRank || len(h.Start) != len(h.Count) || (h.Stride != nil && len(h.Stride) != len(h.Count)) {
		return s, &Error{Msg: "malformed hyperslab"}
	}
	s.rank = len(h.Count)
	for i := range h.Count {
		if h.Start[i] < 0 || h.Count[i] < 0 {
			return s, &Error{Msg: "negative hyperslab start or count"}
		}
		s.start[i] = C.hsize_t(h.Start[i])
		s.count[i] = C.hsize_t(h.Count[i])
		s.stride[i] = 1
		if h.Stride != nil {
			if h.Stride[i] < 1 {
				return s, &Error{Msg: "hyperslab stride must be positive"}
			}
			s.stride[i] = C.hsize_t(h.Stride[i])
		}
	}
	return s, nil
}

// Read reads the hyperslab sel of dataset dset, converted to memType, into
// buf, which must hold sel.NumElements() elements of memType packed
// contiguously (row-major). buf may be Go or C memory without Go pointers.
func Read(dset, memType ID, sel Hyperslab, buf unsafe.Pointer) error {
	s, err := sel.c()
	if err != nil {
		return err
	}
	if sel.NumElements() == 0 {
		return nil
	}
	var e C.qh5_err
	lock()
	r := C.qh5_read(C.hid_t(dset), 0, C.hid_t(memType), C.int(s.rank), &s.start[0], &s.stride[0], &s.count[0], buf, &e)
	unlock()
	if r < 0 {
		return errOf(&e)
	}
	return nil
}

// VarStrings holds variable-length strings read by the library (C memory)
// until Free is called.
type VarStrings struct {
	p     **C.char
	n     int
	total int64
	mt    C.hid_t
}

// ReadVarStrings reads the hyperslab sel of a variable-length string
// dataset (or a whole attribute when isAttr) with the vlen string memory
// type memType. n must equal sel.NumElements() (or the attribute's size).
func ReadVarStrings(obj ID, isAttr bool, memType ID, sel Hyperslab, n int) (*VarStrings, error) {
	s, err := sel.c()
	if err != nil {
		return nil, err
	}
	a := 0
	if isAttr {
		a = 1
	}
	var e C.qh5_err
	var p **C.char
	var total C.longlong
	lock()
	r := C.qh5_read_vstr(C.hid_t(obj), C.int(a), C.hid_t(memType), C.int(s.rank), &s.start[0], &s.stride[0], &s.count[0], C.size_t(n), &p, &total, &e)
	unlock()
	if r < 0 {
		return nil, errOf(&e)
	}
	return &VarStrings{p: p, n: n, total: int64(total), mt: C.hid_t(memType)}, nil
}

// Len is the number of strings.
func (v *VarStrings) Len() int { return v.n }

// TotalBytes is the sum of the strings' lengths.
func (v *VarStrings) TotalBytes() int64 { return v.total }

// Fill writes Arrow-style offsets (len Len()+1) and the concatenated bytes
// (len >= TotalBytes()) of the strings. NULL strings become empty strings.
func (v *VarStrings) Fill(offsets []int32, data []byte) {
	if len(offsets) < v.n+1 || int64(len(data)) < v.total {
		panic("h5: VarStrings.Fill buffers too small")
	}
	var dp *C.char
	if len(data) > 0 {
		dp = (*C.char)(unsafe.Pointer(&data[0]))
	}
	C.qh5_vstr_fill(v.p, C.size_t(v.n), (*C.int32_t)(unsafe.Pointer(&offsets[0])), dp)
}

// Strings copies the strings into Go strings.
func (v *VarStrings) Strings() []string {
	out := make([]string, v.n)
	if v.n == 0 {
		return out
	}
	ps := unsafe.Slice(v.p, v.n)
	for i, p := range ps {
		if p != nil {
			out[i] = C.GoString(p)
		}
	}
	return out
}

// Free releases the library's memory. Safe to call twice.
func (v *VarStrings) Free() {
	if v == nil || v.p == nil {
		return
	}
	lock()
	C.qh5_vstr_free(v.mt, v.p, C.size_t(v.n))
	unlock()
	v.p = nil
}

// PackFixedStrings compacts n fixed-size strings of size bytes stored back
// to back in data into Arrow layout in place: each string is trimmed
// according to pad (NULLTERM: cut at the first NUL; NULLPAD: trailing NULs
// removed; SPACEPAD: trailing spaces and NULs removed), offsets (len n+1)
// are written, and the number of data bytes used is returned. Large inputs
// are packed on several cores.
func PackFixedStrings(data []byte, n, size int, pad StrPad, offsets []int32) int {
	if len(offsets) < n+1 || len(data) < n*size {
		panic("h5: PackFixedStrings buffers too small")
	}
	if n == 0 || size == 0 {
		clear(offsets[:n+1])
		return 0
	}
	return packFixedParallel(data, data, n, size, size, pad, offsets)
}

// Reclaim frees variable-length data the library stored in buf (n elements
// of memType) during a read.
func Reclaim(memType ID, n int, buf unsafe.Pointer) {
	lock()
	C.qh5_reclaim(C.hid_t(memType), C.size_t(n), buf)
	unlock()
}

// ReadRaw reads the whole attribute (isAttr) or the hyperslab of a dataset
// into a new Go buffer of elemSize bytes per element. Variable-length data in
// the result must be released with Reclaim.
func ReadRaw(obj ID, isAttr bool, memType ID, elemSize int, sel Hyperslab, n int) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if elemSize <= 0 || int64(n) > math.MaxInt32/int64(elemSize) {
		return nil, &Error{Msg: fmt.Sprintf("read of %d elements of %d bytes is too large", n, elemSize)}
	}
	buf := make([]byte, n*elemSize)
	if isAttr {
		var e C.qh5_err
		lock()
		r := C.qh5_read(C.hid_t(obj), 1, C.hid_t(memType), 0, nil, nil, nil, unsafe.Pointer(&buf[0]), &e)
		unlock()
		if r < 0 {
			return nil, errOf(&e)
		}
		return buf, nil
	}
	if err := Read(obj, memType, sel, unsafe.Pointer(&buf[0])); err != nil {
		return nil, err
	}
	return buf, nil
}
