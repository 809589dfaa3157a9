package h5

/*
#cgo pkg-config: hdf5
#cgo LDFLAGS: -lz -ldl
#cgo CFLAGS: -DH5_USE_110_API -Wall -Wextra -Werror
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// ID is an HDF5 identifier (hid_t). Negative values are invalid.
type ID int64

// Invalid is the zero "no identifier" value.
const Invalid ID = -1

// MaxRank is the largest dataspace rank HDF5 supports.
const MaxRank = C.QH5_MAX_RANK

var (
	threadSafe bool
	libMu      sync.Mutex
	noExtLAPL  C.hid_t
)

func init() {
	threadSafe = C.qh5_init() == 1
	noExtLAPL = C.qh5_lapl_noext()
}

// ThreadSafe reports whether the linked libhdf5 was built thread-safe. When
// it was not, every call into the library takes a package mutex.
func ThreadSafe() bool { return threadSafe }

func lock() {
	if !threadSafe {
		libMu.Lock()
	}
}

func unlock() {
	if !threadSafe {
		libMu.Unlock()
	}
}

// Error is an HDF5 library failure with the message taken from the
// library's error stack.
type Error struct {
	// Msg is "<API function>: <top message> (<deepest message>)".
	Msg string
}

// Error implements error.
func (e *Error) Error() string { return "hdf5: " + e.Msg }

func errOf(e *C.qh5_err) error { return LibraryError(C.GoString(&e.msg[0])) }

// LibraryError is the *Error for a message a C helper captured from the
// library's error stack (empty when the stack was).
func LibraryError(msg string) error {
	if msg == "" {
		msg = "unknown library error"
	}
	return &Error{Msg: msg}
}

// Locked runs f, which calls libhdf5 through cgo, under the package's
// locking discipline (see ThreadSafe). For package h5write, whose C
// helpers are its own.
func Locked(f func()) {
	lock()
	defer unlock()
	f()
}

func cstr(s string) *C.char { return C.CString(s) }

func free(p *C.char) { C.free(unsafe.Pointer(p)) }

// Close closes any identifier (file, group, dataset, datatype, dataspace,
// attribute, property list). Closing Invalid is a no-op.
func Close(id ID) error {
	if id < 0 {
		return nil
	}
	lock()
	defer unlock()
	if C.qh5_close_id(C.hid_t(id)) < 0 {
		return &Error{Msg: fmt.Sprintf("closing identifier %d failed", id)}
	}
	return nil
}

// Valid reports whether id names an open HDF5 object.
func Valid(id ID) bool {
	lock()
	defer unlock()
	return C.qh5_id_valid(C.hid_t(id)) != 0
}

// OpenObjectCount returns the number of open file, group, dataset, named
// datatype and attribute identifiers across all files (for leak tests).
func OpenObjectCount() int64 {
	lock()
	defer unlock()
	return int64(C.qh5_open_object_count())
}

// IsHDF5 reports whether path carries an HDF5 signature (H5Fis_hdf5).
func IsHDF5(path string) (bool, error) {
	cp := cstr(path)
	defer free(cp)
	var e C.qh5_err
	lock()
	r := C.qh5_is_hdf5(cp, &e)
	unlock()
	if r < 0 {
		return false, errOf(&e)
	}
	return r > 0, nil
}

// IsHDF5FD is IsHDF5 for the file f refers to (see OpenFD).
func IsHDF5FD(f *os.File) (bool, error) {
	ok, err := IsHDF5(fdPath(f))
	runtime.KeepAlive(f)
	return ok, err
}

// OpenFD opens the file f refers to read-only, like OpenFile. f is an open
// regular file (opened and checked by the caller, confined to the data
// root: internal/safeopen); the caller keeps it and may close it once
// OpenFD returns.
//
// libhdf5 opens files by name only. Giving it the name of f's descriptor
// (/proc/self/fd/N on Linux, /dev/fd/N elsewhere) makes it reopen the very
// file f refers to — the same inode, whatever has happened to f's path
// since it was checked — so a data file swapped for a symlink between the
// check and the open cannot redirect the read. (The alternative, opening
// by path and comparing the library's descriptor (H5Fget_vfd_handle) with
// f afterwards, would let libhdf5 open and parse the swapped-in file first
// and would block on a FIFO swapped in while holding the library lock.)
// libhdf5 resolves that name with realpath for the file name it reports,
// so relative external-link lookups inside the library still start from
// the file's real folder.
func OpenFD(f *os.File) (ID, error) {
	id, err := OpenFile(fdPath(f))
	runtime.KeepAlive(f)
	return id, err
}

// fdPath is the file-system name of f's descriptor.
func fdPath(f *os.File) string {
	return fmt.Sprintf("%s/%d", fdDir, f.Fd())
}

// OpenFile opens path read-only without taking the HDF5 file lock. Most
// callers go through a FileCache instead.
func OpenFile(path string) (ID, error) {
	cp := cstr(path)
	defer free(cp)
	var e C.qh5_err
	lock()
	id := C.qh5_fopen(cp, &e)
	unlock()
	if id < 0 {
		return Invalid, errOf(&e)
	}
	return ID(id), nil
}

// LinkType is the kind of a link in a group.
type LinkType int

// Link types (H5L_type_t).
const (
	LinkHard     LinkType = C.H5L_TYPE_HARD
	LinkSoft     LinkType = C.H5L_TYPE_SOFT
	LinkExternal LinkType = C.H5L_TYPE_EXTERNAL
)

// String names the link type.
func (t LinkType) String() string {
	switch t {
	case LinkHard:
		return "hard"
	case LinkSoft:
		return "soft"
	case LinkExternal:
		return "external"
	}
	return fmt.Sprintf("user-defined(%d)", int(t))
}

// Link describes a link without following it.
type Link struct {
	// Type is hard, soft, external or a user-defined type number.
	Type LinkType
	// Target is the soft link's path, or the external link's object path.
	Target string
	// TargetFile is the external link's file name (as stored).
	TargetFile string
}

// GetLink looks up the link at path relative to loc without following it.
// Every component of path but the last must already resolve through hard
// links (external links are never traversed). ok is false when the final
// link does not exist.
func GetLink(loc ID, path string) (l Link, ok bool, err error) {
	cp := cstr(path)
	defer free(cp)
	var e C.qh5_err
	var typ C.int
	var vs C.size_t
	lock()
	r := C.qh5_link_info(C.hid_t(loc), cp, noExtLAPL, &typ, &vs, &e)
	unlock()
	if r < 0 {
		return l, false, errOf(&e)
	}
	if r == 0 {
		return l, false, nil
	}
	l.Type = LinkType(typ)
	if l.Type == LinkSoft || l.Type == LinkExternal {
		obj := (*C.char)(C.calloc(vs+1, 1))
		file := (*C.char)(C.calloc(vs+1, 1))
		defer C.free(unsafe.Pointer(obj))
		defer C.free(unsafe.Pointer(file))
		lock()
		r = C.qh5_link_val(C.hid_t(loc), cp, noExtLAPL, vs, typ, obj, file, &e)
		unlock()
		if r < 0 {
			return l, true, errOf(&e)
		}
		l.Target = C.GoString(obj)
		if l.Type == LinkExternal {
			l.TargetFile = C.GoString(file)
		}
	}
	return l, true, nil
}

// ObjType is the type of an HDF5 object.
type ObjType int

// Object types (H5O_type_t).
const (
	ObjUnknown       ObjType = C.H5O_TYPE_UNKNOWN
	ObjGroup         ObjType = C.H5O_TYPE_GROUP
	ObjDataset       ObjType = C.H5O_TYPE_DATASET
	ObjNamedDatatype ObjType = C.H5O_TYPE_NAMED_DATATYPE
)

// String names the object type.
func (t ObjType) String() string {
	switch t {
	case ObjGroup:
		return "group"
	case ObjDataset:
		return "dataset"
	case ObjNamedDatatype:
		return "named_datatype"
	}
	return "unknown"
}

// ObjInfo is the basic information about an object.
type ObjInfo struct {
	Type     ObjType // group, dataset or named datatype
	FileNo   uint64  // the file's number in the library
	Addr     uint64  // object header address (unique within a file)
	NumAttrs int     // number of attributes
}

// GetObjInfo returns information about the object at path (links followed,
// external links refused).
func GetObjInfo(loc ID, path string) (ObjInfo, error) {
	cp := cstr(path)
	defer free(cp)
	var e C.qh5_err
	var ot C.int
	var fileno C.ulong
	var addr, na C.ulonglong
	lock()
	r := C.qh5_obj_info(C.hid_t(loc), cp, noExtLAPL, &ot, &fileno, &addr, &na, &e)
	unlock()
	if r < 0 {
		return ObjInfo{}, errOf(&e)
	}
	return ObjInfo{Type: ObjType(ot), FileNo: uint64(fileno), Addr: uint64(addr), NumAttrs: int(na)}, nil
}

// OpenObject opens the group, dataset or named datatype at path (links
// followed, external links refused). Close it with Close.
func OpenObject(loc ID, path string) (ID, error) {
	cp := cstr(path)
	defer free(cp)
	var e C.qh5_err
	lock()
	id := C.qh5_oopen(C.hid_t(loc), cp, noExtLAPL, &e)
	unlock()
	if id < 0 {
		return Invalid, errOf(&e)
	}
	return ID(id), nil
}

// Member is one link in a group, in name order.
type Member struct {
	// Name is the link name.
	Name string
	// Link is the link type.
	Link LinkType
	// Obj is the target's type for hard links (ObjUnknown otherwise).
	Obj ObjType
	// Addr is the target's object address for hard links.
	Addr uint64
}

// ListMembers lists up to max links of group (in name order) and returns
// the total number of links.
func ListMembers(group ID, max int) ([]Member, int64, error) {
	var m C.qh5_members
	var e C.qh5_err
	lock()
	r := C.qh5_list_members(C.hid_t(group), noExtLAPL, C.size_t(max), &m, &e)
	unlock()
	defer C.qh5_members_free(&m)
	if r < 0 {
		return nil, 0, errOf(&e)
	}
	n := int(m.n)
	out := make([]Member, n)
	if n == 0 {
		return out, int64(m.total), nil
	}
	names := unsafe.Slice((*byte)(unsafe.Pointer(m.names)), int(m.names_len))
	lt := unsafe.Slice((*C.int)(m.ltypes), n)
	ot := unsafe.Slice((*C.int)(m.otypes), n)
	ad := unsafe.Slice((*C.ulonglong)(m.addrs), n)
	pos := 0
	for i := 0; i < n; i++ {
		end := pos
		for names[end] != 0 {
			end++
		}
		out[i] = Member{Name: string(names[pos:end]), Link: LinkType(lt[i]), Obj: ObjType(ot[i]), Addr: uint64(ad[i])}
		if ot[i] < 0 {
			out[i].Obj = ObjUnknown
		}
		pos = end + 1
	}
	return out, int64(m.total), nil
}

// OpenDataset opens the dataset at path with a chunk cache of cacheBytes
// (0 = library default, 1 MiB), refusing external links.
func OpenDataset(loc ID, path string, cacheBytes int) (ID, error) {
	cp := cstr(path)
	defer free(cp)
	var e C.qh5_err
	lock()
	id := C.qh5_dopen(C.hid_t(loc), cp, C.size_t(max(cacheBytes, 0)), &e)
	unlock()
	if id < 0 {
		return Invalid, errOf(&e)
	}
	return ID(id), nil
}
