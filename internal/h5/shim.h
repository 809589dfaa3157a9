// C helpers over libhdf5 used by package h5. Every helper that can fail
// takes a qh5_err* and fills it from the calling thread's HDF5 error stack
// inside the same C call: HDF5 error stacks are per OS thread and Go may move
// a goroutine to another thread between two cgo calls.
#ifndef QUARRY_H5_SHIM_H
#define QUARRY_H5_SHIM_H

#include <stdint.h>
#include <stdlib.h>
#include <hdf5.h>

// H5Pset_file_locking exists from 1.10.7 (and 1.12.1).
#if H5_VERSION_GE(1, 12, 1) || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7)
#define QH5_HAVE_FILE_LOCKING 1
#endif

#define QH5_MAX_RANK 32
#define QH5_ERRLEN 768

typedef struct {
	char msg[QH5_ERRLEN];
} qh5_err;

// Library set-up; returns 1 when the library was built thread-safe.
int qh5_init(void);
// Turns automatic error printing off for the calling thread (idempotent, cheap).
void qh5_quiet(void);
// Records the current thread's error stack into e (and clears it); prefix names the operation.
void qh5_capture(qh5_err *e, const char *what);

int qh5_close_id(hid_t id);
long long qh5_open_object_count(void);
int qh5_id_valid(hid_t id);

// Files.
int qh5_is_hdf5(const char *path, qh5_err *e);
hid_t qh5_fopen(const char *path, qh5_err *e);

// Link access property list that refuses to traverse external links.
hid_t qh5_lapl_noext(void);

// Links and objects.
// Returns 1 and fills type/valsize when the link exists, 0 when not, -1 on error.
int qh5_link_info(hid_t loc, const char *name, hid_t lapl, int *type, size_t *valsize, qh5_err *e);
// Copies a soft link's value (type 1) or unpacks an external link (type 64) into file/obj.
int qh5_link_val(hid_t loc, const char *name, hid_t lapl, size_t valsize, int type, char *obj, char *file, qh5_err *e);
int qh5_obj_info(hid_t loc, const char *name, hid_t lapl, int *otype, unsigned long *fileno, unsigned long long *addr, unsigned long long *nattrs, qh5_err *e);
hid_t qh5_oopen(hid_t loc, const char *name, hid_t lapl, qh5_err *e);
// Opens a dataset with a chunk cache of cache_bytes (0 = library default), refusing external links.
hid_t qh5_dopen(hid_t loc, const char *name, size_t cache_bytes, qh5_err *e);

typedef struct {
	char *names;          // NUL separated names
	size_t names_len, names_cap;
	int *ltypes;          // link types
	int *otypes;          // object types (hard links only, else -1)
	unsigned long long *addrs;
	size_t n, cap, max;
	long long total;
	int failed;
} qh5_members;
int qh5_list_members(hid_t group, hid_t lapl, size_t max, qh5_members *out, qh5_err *e);
void qh5_members_free(qh5_members *m);

// Datatypes.
typedef struct {
	int cls;
	size_t size;
	int order;
	int sign;
	int is_vstr;
	int cset;
	int strpad;
	int nmembers;
	int ndims;
	hsize_t dims[QH5_MAX_RANK];
	int ref_kind; // 0 object, 1 region (for references)
} qh5_typeinfo;
int qh5_type_info(hid_t t, qh5_typeinfo *ti, qh5_err *e);
char *qh5_member_name(hid_t t, int idx);
size_t qh5_member_offset(hid_t t, int idx);
hid_t qh5_member_type(hid_t t, int idx);
hid_t qh5_super(hid_t t);
int qh5_enum_member(hid_t t, int idx, long long *value);
char *qh5_opaque_tag(hid_t t);
void qh5_free(void *p);
hid_t qh5_native(int kind);
hid_t qh5_string_type(long long size, int cset, int strpad);
hid_t qh5_native_enum(hid_t t);
hid_t qh5_compound_create(size_t size);
int qh5_compound_insert(hid_t t, const char *name, size_t off, hid_t member);
hid_t qh5_array_create(hid_t base, int ndims, const hsize_t *dims);
hid_t qh5_enum_create(hid_t base);
int qh5_enum_insert(hid_t t, const char *name, long long value);
hid_t qh5_opaque_create(size_t size, const char *tag);
hid_t qh5_type_copy(hid_t t);
int qh5_type_set_order(hid_t t, int big);

// Datasets.
int qh5_dset_space(hid_t dset, int *space_class, int *rank, hsize_t *dims, hsize_t *maxdims, qh5_err *e);
hid_t qh5_dset_type(hid_t dset, qh5_err *e);
typedef struct {
	int layout; // 0 compact, 1 contiguous, 2 chunked, 3 virtual
	int chunk_rank;
	hsize_t chunk[QH5_MAX_RANK];
	int nfilters;
	int fill_defined; // H5D_fill_value_t
	unsigned long long storage_size;
	int external_count; // raw data stored in external files (H5Pset_external)
	int virtual_count;  // VDS mappings
} qh5_dsetinfo;
int qh5_dset_info(hid_t dset, qh5_dsetinfo *di, qh5_err *e);
int qh5_dset_filter(hid_t dset, int idx, int *id, unsigned *flags, unsigned *cd, size_t *ncd, char *name, size_t namelen, int *avail, qh5_err *e);
int qh5_dset_fill(hid_t dset, hid_t memtype, void *buf, qh5_err *e);
// Builds the file dataspace of obj with the hyperslab start/stride/count
// (stride NULL = 1) selected and a matching memory dataspace (*ms, not
// created when the selection is empty); *n is the number of elements.
int qh5_select(hid_t obj, int rank, const hsize_t *start, const hsize_t *stride, const hsize_t *count, hid_t *fs,
               hid_t *ms, hsize_t *n, qh5_err *e);
int qh5_read(hid_t obj, int is_attr, hid_t memtype, int rank, const hsize_t *start, const hsize_t *stride, const hsize_t *count, void *buf, qh5_err *e);
// Variable-length strings: read pointers (malloced array, freed by qh5_vstr_free), then copy.
int qh5_read_vstr(hid_t obj, int is_attr, hid_t memtype, int rank, const hsize_t *start, const hsize_t *stride, const hsize_t *count, size_t n, char ***out, long long *total, qh5_err *e);
void qh5_vstr_fill(char **p, size_t n, int32_t *offsets, char *data);
void qh5_vstr_free(hid_t memtype, char **p, size_t n);
int qh5_reclaim(hid_t memtype, size_t n, void *buf);

// Attributes.
int qh5_attr_names(hid_t obj, size_t max, qh5_members *out, qh5_err *e);
hid_t qh5_aopen(hid_t obj, const char *name, qh5_err *e);
int qh5_attr_space(hid_t attr, int *space_class, int *rank, hsize_t *dims, qh5_err *e);
hid_t qh5_attr_type(hid_t attr, qh5_err *e);

// Direct chunk reads (chunk.go).
#define QH5_MAX_FILTERS 32
// Larger chunks go through H5Dread (each decoding goroutine holds three
// chunk-sized buffers).
#define QH5_MAX_CHUNK_BYTES ((hsize_t)16 << 20)
typedef struct {
	int rank;
	hsize_t dims[QH5_MAX_RANK];
	hsize_t chunk[QH5_MAX_RANK];
	int nfilters;
	int filter_id[QH5_MAX_FILTERS];
	unsigned filter_cd[QH5_MAX_FILTERS]; // shuffle: the element size
	size_t elem_size;
	size_t chunk_bytes;
	char reason[128];       // why the dataset does not qualify
} qh5_chunkplan;
// Reads the raw (filtered) chunk at offset: 0 read (size, mask set), 1 buf
// smaller than the chunk (size set), 2 chunk not allocated, -1 error.
int qh5_chunk_raw(hid_t dset, const hsize_t *offset, void *buf, size_t cap, unsigned long long *size,
                  unsigned *mask, qh5_err *e);
// No libhdf5 calls below: safe on any thread without the HDF5 lock.
// 1 when libdeflate was found (loaded once, at first use).
int qh5_have_libdeflate(void);
// Test support: 1 makes new inflaters use zlib only.
void qh5_libdeflate_off(int off);
void *qh5_inflater_new(void);
void qh5_inflater_free(void *z);
// Undoes the filter pipeline on raw (n bytes; filters whose bit is set in
// mask were skipped on write) using scratch buffers a and b of cap bytes.
// Returns the decoded chunk (raw, a or b; chunk_bytes long) or NULL with
// *failure set.
const void *qh5_chunk_decode(const qh5_chunkplan *p, void *inflater, const void *raw, size_t n, unsigned mask,
                             void *a, void *b, size_t cap, int *failure);
// Copies the selected part of a decoded chunk into dst: per dimension lo is
// the first selected index inside the chunk, step the stride and count the
// number of selected elements; dst points at the first destination element
// and dstride holds the destination's byte strides.
void qh5_chunk_scatter(const void *src, const qh5_chunkplan *p, const unsigned long long *lo,
                       const unsigned long long *step, const unsigned long long *count, void *dst,
                       const unsigned long long *dstride);

// Returns 1 when dset's chunks can be decoded by Quarry for memtype, 0 when
// not (p->reason set), -1 on error. Qualifies: chunked datasets filtered
// only by deflate, shuffle and fletcher32 (edge chunks filtered too) of a
// type made only of integers, floats, fixed-length strings, enums, arrays
// and compounds of those (no variable-length data, no references) that
// equals memtype. The fill value (one element of memtype, fill_size bytes)
// goes to fill.
int qh5_chunk_plan_fixed(hid_t dset, hid_t memtype, qh5_chunkplan *p, void *fill, size_t fill_size, qh5_err *e);
// H5Tget_size (0 on error).
size_t qh5_type_size(hid_t t);

#endif
