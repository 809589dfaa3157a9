// C helpers of package h5write: the writing side of the shim (see shim.h
// for the conventions they share with package h5's helpers).
#ifndef QUARRY_H5_WRITE_H
#define QUARRY_H5_WRITE_H

#include "shim.h"

hid_t qh5_fcreate(const char *path, qh5_err *e);
int qh5_type_commit(hid_t loc, const char *name, hid_t t, qh5_err *e);
hid_t qh5_gcreate(hid_t loc, const char *name, qh5_err *e);
typedef struct {
	int rank;
	hsize_t dims[QH5_MAX_RANK];
	hsize_t maxdims[QH5_MAX_RANK]; // HSIZE_UNDEF == H5S_UNLIMITED
	int chunk_rank;
	hsize_t chunk[QH5_MAX_RANK];
	int deflate; // <0 none
	int shuffle;
	int fletcher32;
	int nextra;
	int extra_id[4];
	unsigned extra_flags[4];
	int scalar; // 1: scalar dataspace, 2: null dataspace
	int compact;
	const void *fill; // in the dataset type, may be NULL
	const char *external; // raw data file (contiguous layout only), may be NULL
} qh5_dcreate_opts;
hid_t qh5_dcreate(hid_t loc, const char *name, hid_t type, const qh5_dcreate_opts *c, qh5_err *e);
int qh5_write(hid_t dset, hid_t memtype, int rank, const hsize_t *start, const hsize_t *count, const void *buf, qh5_err *e);
hid_t qh5_acreate(hid_t obj, const char *name, hid_t type, int rank, const hsize_t *dims, qh5_err *e);
int qh5_awrite(hid_t attr, hid_t memtype, const void *buf, qh5_err *e);
int qh5_lcreate_soft(hid_t loc, const char *target, const char *name, qh5_err *e);
int qh5_lcreate_external(hid_t loc, const char *file, const char *obj, const char *name, qh5_err *e);
int qh5_lcreate_hard(hid_t loc, const char *target, const char *name, qh5_err *e);
// Test support: registers a pass-through-with-XOR filter under id / unregisters a filter.
int qh5_register_xor_filter(int id, qh5_err *e);
int qh5_unregister_filter(int id, qh5_err *e);
// Test support: writes one raw (already filtered) chunk with a filter mask.
int qh5_write_raw_chunk(hid_t dset, const hsize_t *offset, unsigned mask, const void *buf, size_t n, qh5_err *e);
int qh5_write_obj_ref(hid_t loc, const char *name, const char *target, qh5_err *e);

#endif
