// C helpers over libhdf5; see shim.h.
#include <stdio.h>
#include <string.h>
#include <dlfcn.h>
#include <pthread.h>
#include <zlib.h>
#include "shim.h"

static __thread int qh5_quiet_done;

void qh5_quiet(void) {
	if (!qh5_quiet_done) {
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
		qh5_quiet_done = 1;
	}
}

int qh5_init(void) {
	H5open();
	qh5_quiet();
#ifdef H5_HAVE_THREADSAFE
	return 1;
#else
	return 0;
#endif
}

typedef struct {
	char first[320];
	char last[320];
	int n;
} qh5_walk;

static herr_t qh5_walk_cb(unsigned n, const H5E_error2_t *err, void *data) {
	qh5_walk *w = (qh5_walk *)data;
	const char *d = (err && err->desc) ? err->desc : "";
	(void)n;
	if (w->n == 0) {
		snprintf(w->first, sizeof w->first, "%s", d);
	}
	snprintf(w->last, sizeof w->last, "%s", d);
	w->n++;
	return 0;
}

void qh5_capture(qh5_err *e, const char *what) {
	qh5_walk w;
	memset(&w, 0, sizeof w);
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, qh5_walk_cb, &w);
	H5Eclear2(H5E_DEFAULT);
	if (e == NULL) {
		return;
	}
	if (w.n == 0) {
		snprintf(e->msg, QH5_ERRLEN, "%s failed", what);
	} else if (w.n == 1 || strcmp(w.first, w.last) == 0) {
		snprintf(e->msg, QH5_ERRLEN, "%s: %s", what, w.first);
	} else {
		snprintf(e->msg, QH5_ERRLEN, "%s: %s (%s)", what, w.first, w.last);
	}
}

int qh5_close_id(hid_t id) {
	herr_t r = -1;
	qh5_quiet();
	if (id < 0) {
		return 0;
	}
	switch (H5Iget_type(id)) {
	case H5I_FILE: r = H5Fclose(id); break;
	case H5I_GROUP: r = H5Gclose(id); break;
	case H5I_DATASET: r = H5Dclose(id); break;
	case H5I_DATATYPE: r = H5Tclose(id); break;
	case H5I_DATASPACE: r = H5Sclose(id); break;
	case H5I_ATTR: r = H5Aclose(id); break;
	case H5I_GENPROP_LST: r = H5Pclose(id); break;
	default: r = -1;
	}
	H5Eclear2(H5E_DEFAULT);
	return r;
}

long long qh5_open_object_count(void) {
	qh5_quiet();
	return (long long)H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
}

int qh5_id_valid(hid_t id) {
	qh5_quiet();
	return H5Iis_valid(id) > 0;
}

int qh5_is_hdf5(const char *path, qh5_err *e) {
	htri_t r;
	qh5_quiet();
	r = H5Fis_hdf5(path);
	if (r < 0) {
		qh5_capture(e, "H5Fis_hdf5");
	}
	return (int)r;
}

hid_t qh5_fopen(const char *path, qh5_err *e) {
	hid_t fapl, f;
	qh5_quiet();
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0) {
		qh5_capture(e, "H5Pcreate");
		return -1;
	}
	// Read-only access never takes the shared file lock: a long-lived cache
	// must not stop scientists from rewriting their files (the cache notices
	// changed files by mtime and size instead).
#ifdef QH5_HAVE_FILE_LOCKING
	H5Pset_file_locking(fapl, 0, 1);
#endif
	f = H5Fopen(path, H5F_ACC_RDONLY, fapl);
	if (f < 0) {
		qh5_capture(e, "H5Fopen");
	}
	H5Pclose(fapl);
	return f;
}

static herr_t qh5_deny_elink(const char *parent_file, const char *parent_group, const char *child_file,
                             const char *child_object, unsigned *acc_flags, hid_t fapl_id, void *op_data) {
	(void)parent_file; (void)parent_group; (void)child_file; (void)child_object;
	(void)acc_flags; (void)fapl_id; (void)op_data;
	return -1;
}

hid_t qh5_lapl_noext(void) {
	hid_t l;
	qh5_quiet();
	l = H5Pcreate(H5P_LINK_ACCESS);
	if (l >= 0) {
		H5Pset_elink_cb(l, qh5_deny_elink, NULL);
	}
	return l;
}

int qh5_link_info(hid_t loc, const char *name, hid_t lapl, int *type, size_t *valsize, qh5_err *e) {
	htri_t ex;
	H5L_info_t li;
	qh5_quiet();
	ex = H5Lexists(loc, name, lapl);
	if (ex < 0) {
		qh5_capture(e, "H5Lexists");
		return -1;
	}
	if (ex == 0) {
		return 0;
	}
	if (H5Lget_info(loc, name, &li, lapl) < 0) {
		qh5_capture(e, "H5Lget_info");
		return -1;
	}
	*type = (int)li.type;
	*valsize = (li.type == H5L_TYPE_HARD) ? 0 : li.u.val_size;
	return 1;
}

int qh5_link_val(hid_t loc, const char *name, hid_t lapl, size_t valsize, int type, char *obj, char *file, qh5_err *e) {
	char *buf;
	qh5_quiet();
	buf = (char *)calloc(valsize + 1, 1);
	if (buf == NULL) {
		snprintf(e->msg, QH5_ERRLEN, "out of memory");
		return -1;
	}
	if (H5Lget_val(loc, name, buf, valsize, lapl) < 0) {
		qh5_capture(e, "H5Lget_val");
		free(buf);
		return -1;
	}
	if (type == H5L_TYPE_EXTERNAL) {
		const char *fn = NULL, *on = NULL;
		unsigned flags = 0;
		if (H5Lunpack_elink_val(buf, valsize, &flags, &fn, &on) < 0) {
			qh5_capture(e, "H5Lunpack_elink_val");
			free(buf);
			return -1;
		}
		snprintf(file, valsize + 1, "%s", fn ? fn : "");
		snprintf(obj, valsize + 1, "%s", on ? on : "");
	} else {
		memcpy(obj, buf, valsize);
		obj[valsize] = 0;
	}
	free(buf);
	return 0;
}

int qh5_obj_info(hid_t loc, const char *name, hid_t lapl, int *otype, unsigned long *fileno, unsigned long long *addr,
                 unsigned long long *nattrs, qh5_err *e) {
	H5O_info_t oi;
	qh5_quiet();
	if (H5Oget_info_by_name2(loc, name, &oi, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS, lapl) < 0) {
		qh5_capture(e, "H5Oget_info_by_name");
		return -1;
	}
	*otype = (int)oi.type;
	*fileno = oi.fileno;
	*addr = (unsigned long long)oi.addr;
	*nattrs = (unsigned long long)oi.num_attrs;
	return 0;
}

hid_t qh5_oopen(hid_t loc, const char *name, hid_t lapl, qh5_err *e) {
	hid_t o;
	qh5_quiet();
	o = H5Oopen(loc, name, lapl);
	if (o < 0) {
		qh5_capture(e, "H5Oopen");
	}
	return o;
}

hid_t qh5_dopen(hid_t loc, const char *name, size_t cache_bytes, qh5_err *e) {
	hid_t dapl, d;
	qh5_quiet();
	dapl = H5Pcreate(H5P_DATASET_ACCESS);
	if (dapl < 0) {
		qh5_capture(e, "H5Pcreate");
		return -1;
	}
	H5Pset_elink_cb(dapl, qh5_deny_elink, NULL);
	if (cache_bytes > 0) {
		H5Pset_chunk_cache(dapl, 12421, cache_bytes, 1.0);
	}
	d = H5Dopen2(loc, name, dapl);
	if (d < 0) qh5_capture(e, "H5Dopen2");
	H5Pclose(dapl);
	return d;
}

static int qh5_members_push(qh5_members *m, const char *name, int ltype, int otype, unsigned long long addr) {
	size_t len = strlen(name) + 1;
	m->total++;
	if (m->n >= m->max) {
		return 0;
	}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 16;
		int *lt = (int *)realloc(m->ltypes, nc * sizeof(int));
		if (lt == NULL) return -1;
		m->ltypes = lt;
		int *ot = (int *)realloc(m->otypes, nc * sizeof(int));
		if (ot == NULL) return -1;
		m->otypes = ot;
		unsigned long long *ad = (unsigned long long *)realloc(m->addrs, nc * sizeof(unsigned long long));
		if (ad == NULL) return -1;
		m->addrs = ad;
		m->cap = nc;
	}
	if (m->names_len + len > m->names_cap) {
		size_t nc = m->names_cap ? m->names_cap * 2 : 256;
		while (nc < m->names_len + len) nc *= 2;
		char *nb = (char *)realloc(m->names, nc);
		if (nb == NULL) return -1;
		m->names = nb;
		m->names_cap = nc;
	}
	memcpy(m->names + m->names_len, name, len);
	m->names_len += len;
	m->ltypes[m->n] = ltype;
	m->otypes[m->n] = otype;
	m->addrs[m->n] = addr;
	m->n++;
	return 0;
}

typedef struct {
	qh5_members *m;
	hid_t lapl;
} qh5_iter;

static herr_t qh5_link_cb(hid_t group, const char *name, const H5L_info_t *info, void *data) {
	qh5_iter *it = (qh5_iter *)data;
	int otype = -1;
	unsigned long long addr = 0;
	if (info->type == H5L_TYPE_HARD && it->m->n < it->m->max) {
		H5O_info_t oi;
		if (H5Oget_info_by_name2(group, name, &oi, H5O_INFO_BASIC, it->lapl) >= 0) {
			otype = (int)oi.type;
			addr = (unsigned long long)oi.addr;
		} else {
			H5Eclear2(H5E_DEFAULT);
		}
	}
	if (qh5_members_push(it->m, name, (int)info->type, otype, addr) < 0) {
		it->m->failed = 1;
		return -1;
	}
	return 0;
}

int qh5_list_members(hid_t group, hid_t lapl, size_t max, qh5_members *out, qh5_err *e) {
	qh5_iter it;
	qh5_quiet();
	memset(out, 0, sizeof *out);
	out->max = max;
	it.m = out;
	it.lapl = lapl;
	if (H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, NULL, qh5_link_cb, &it) < 0) {
		if (out->failed) {
			snprintf(e->msg, QH5_ERRLEN, "out of memory listing group members");
			H5Eclear2(H5E_DEFAULT);
		} else {
			qh5_capture(e, "H5Literate");
		}
		return -1;
	}
	return 0;
}

void qh5_members_free(qh5_members *m) {
	free(m->names);
	free(m->ltypes);
	free(m->otypes);
	free(m->addrs);
	memset(m, 0, sizeof *m);
}

int qh5_type_info(hid_t t, qh5_typeinfo *ti, qh5_err *e) {
	H5T_class_t cls;
	qh5_quiet();
	memset(ti, 0, sizeof *ti);
	cls = H5Tget_class(t);
	if (cls == H5T_NO_CLASS) {
		qh5_capture(e, "H5Tget_class");
		return -1;
	}
	ti->cls = (int)cls;
	ti->size = H5Tget_size(t);
	ti->order = -1;
	ti->sign = -1;
	ti->cset = -1;
	ti->strpad = -1;
	switch (cls) {
	case H5T_INTEGER:
	case H5T_FLOAT:
	case H5T_BITFIELD:
	case H5T_TIME:
		ti->order = (int)H5Tget_order(t);
		if (cls == H5T_INTEGER) ti->sign = (int)H5Tget_sign(t);
		break;
	case H5T_STRING:
		ti->is_vstr = H5Tis_variable_str(t) > 0;
		ti->cset = (int)H5Tget_cset(t);
		ti->strpad = (int)H5Tget_strpad(t);
		break;
	case H5T_COMPOUND:
	case H5T_ENUM:
		ti->nmembers = H5Tget_nmembers(t);
		break;
	case H5T_ARRAY:
		ti->ndims = H5Tget_array_ndims(t);
		if (ti->ndims > 0 && ti->ndims <= QH5_MAX_RANK) {
			H5Tget_array_dims2(t, ti->dims);
		} else {
			ti->ndims = 0;
		}
		break;
	case H5T_REFERENCE:
		ti->ref_kind = H5Tequal(t, H5T_STD_REF_DSETREG) > 0 ? 1 : 0;
		break;
	default:
		break;
	}
	H5Eclear2(H5E_DEFAULT);
	return 0;
}

char *qh5_member_name(hid_t t, int idx) {
	qh5_quiet();
	return H5Tget_member_name(t, (unsigned)idx);
}

size_t qh5_member_offset(hid_t t, int idx) {
	qh5_quiet();
	return H5Tget_member_offset(t, (unsigned)idx);
}

hid_t qh5_member_type(hid_t t, int idx) {
	qh5_quiet();
	return H5Tget_member_type(t, (unsigned)idx);
}

hid_t qh5_super(hid_t t) {
	qh5_quiet();
	return H5Tget_super(t);
}

int qh5_enum_member(hid_t t, int idx, long long *value) {
	unsigned char buf[64];
	hid_t super;
	int rc = -1;
	qh5_quiet();
	memset(buf, 0, sizeof buf);
	super = H5Tget_super(t);
	if (super < 0) return -1;
	if (H5Tget_size(super) <= 16 && H5Tget_member_value(t, (unsigned)idx, buf) >= 0 &&
	    H5Tconvert(super, H5T_NATIVE_LLONG, 1, buf, NULL, H5P_DEFAULT) >= 0) {
		memcpy(value, buf, sizeof(long long));
		rc = 0;
	}
	H5Tclose(super);
	H5Eclear2(H5E_DEFAULT);
	return rc;
}

char *qh5_opaque_tag(hid_t t) {
	qh5_quiet();
	return H5Tget_tag(t);
}

void qh5_free(void *p) {
	if (p) H5free_memory(p);
}

hid_t qh5_native(int kind) {
	qh5_quiet();
	switch (kind) {
	case 1: return H5Tcopy(H5T_NATIVE_INT8);
	case 2: return H5Tcopy(H5T_NATIVE_UINT8);
	case 3: return H5Tcopy(H5T_NATIVE_INT16);
	case 4: return H5Tcopy(H5T_NATIVE_UINT16);
	case 5: return H5Tcopy(H5T_NATIVE_INT32);
	case 6: return H5Tcopy(H5T_NATIVE_UINT32);
	case 7: return H5Tcopy(H5T_NATIVE_INT64);
	case 8: return H5Tcopy(H5T_NATIVE_UINT64);
	case 9: return H5Tcopy(H5T_NATIVE_FLOAT);
	case 10: return H5Tcopy(H5T_NATIVE_DOUBLE);
	case 11: return H5Tcopy(H5T_STD_REF_OBJ);
	case 12: return H5Tcopy(H5T_STD_REF_DSETREG);
	case 13: return H5Tcopy(H5T_NATIVE_B8);
	}
	return -1;
}

hid_t qh5_string_type(long long size, int cset, int strpad) {
	hid_t t;
	qh5_quiet();
	t = H5Tcopy(H5T_C_S1);
	if (t < 0) return t;
	if (size < 0) {
		H5Tset_size(t, H5T_VARIABLE);
	} else {
		H5Tset_size(t, (size_t)(size > 0 ? size : 1));
	}
	H5Tset_cset(t, cset == 1 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
	if (strpad >= 0) H5Tset_strpad(t, (H5T_str_t)strpad);
	return t;
}

hid_t qh5_native_enum(hid_t t) {
	qh5_quiet();
	return H5Tget_native_type(t, H5T_DIR_ASCEND);
}

hid_t qh5_compound_create(size_t size) {
	qh5_quiet();
	return H5Tcreate(H5T_COMPOUND, size);
}

int qh5_compound_insert(hid_t t, const char *name, size_t off, hid_t member) {
	qh5_quiet();
	return H5Tinsert(t, name, off, member);
}

hid_t qh5_array_create(hid_t base, int ndims, const hsize_t *dims) {
	qh5_quiet();
	return H5Tarray_create2(base, (unsigned)ndims, dims);
}

hid_t qh5_enum_create(hid_t base) {
	qh5_quiet();
	return H5Tenum_create(base);
}

int qh5_enum_insert(hid_t t, const char *name, long long value) {
	unsigned char buf[64];
	hid_t super;
	int rc = -1;
	qh5_quiet();
	super = H5Tget_super(t);
	if (super < 0) return -1;
	memset(buf, 0, sizeof buf);
	memcpy(buf, &value, sizeof value);
	if (H5Tconvert(H5T_NATIVE_LLONG, super, 1, buf, NULL, H5P_DEFAULT) >= 0 && H5Tenum_insert(t, name, buf) >= 0) {
		rc = 0;
	}
	H5Tclose(super);
	return rc;
}

hid_t qh5_opaque_create(size_t size, const char *tag) {
	hid_t t;
	qh5_quiet();
	t = H5Tcreate(H5T_OPAQUE, size);
	if (t >= 0 && tag && tag[0]) H5Tset_tag(t, tag);
	return t;
}

hid_t qh5_type_copy(hid_t t) {
	qh5_quiet();
	return H5Tcopy(t);
}

int qh5_type_set_order(hid_t t, int big) {
	qh5_quiet();
	return H5Tset_order(t, big ? H5T_ORDER_BE : H5T_ORDER_LE);
}

/* describe_space reports a dataspace's class, rank, dims and (when maxdims
 * is not NULL) max dims, then closes it. fn names the call that produced s,
 * for the error report when it failed. */
static int describe_space(hid_t s, const char *fn, int *space_class, int *rank, hsize_t *dims, hsize_t *maxdims,
                          qh5_err *e) {
	int r;
	if (s < 0) {
		qh5_capture(e, fn);
		return -1;
	}
	*space_class = (int)H5Sget_simple_extent_type(s);
	r = H5Sget_simple_extent_ndims(s);
	if (r < 0 || r > QH5_MAX_RANK) {
		qh5_capture(e, "H5Sget_simple_extent_ndims");
		H5Sclose(s);
		return -1;
	}
	*rank = r;
	if (r > 0 && H5Sget_simple_extent_dims(s, dims, maxdims) < 0) {
		qh5_capture(e, "H5Sget_simple_extent_dims");
		H5Sclose(s);
		return -1;
	}
	H5Sclose(s);
	return 0;
}

int qh5_dset_space(hid_t dset, int *space_class, int *rank, hsize_t *dims, hsize_t *maxdims, qh5_err *e) {
	qh5_quiet();
	return describe_space(H5Dget_space(dset), "H5Dget_space", space_class, rank, dims, maxdims, e);
}

hid_t qh5_dset_type(hid_t dset, qh5_err *e) {
	hid_t t;
	qh5_quiet();
	t = H5Dget_type(dset);
	if (t < 0) qh5_capture(e, "H5Dget_type");
	return t;
}

int qh5_dset_info(hid_t dset, qh5_dsetinfo *di, qh5_err *e) {
	hid_t dcpl;
	H5D_fill_value_t fv = H5D_FILL_VALUE_UNDEFINED;
	qh5_quiet();
	memset(di, 0, sizeof *di);
	dcpl = H5Dget_create_plist(dset);
	if (dcpl < 0) {
		qh5_capture(e, "H5Dget_create_plist");
		return -1;
	}
	di->layout = (int)H5Pget_layout(dcpl);
	if (di->layout == H5D_CHUNKED) {
		di->chunk_rank = H5Pget_chunk(dcpl, QH5_MAX_RANK, di->chunk);
		if (di->chunk_rank < 0) di->chunk_rank = 0;
	}
	di->nfilters = H5Pget_nfilters(dcpl);
	if (di->nfilters < 0) di->nfilters = 0;
	if (H5Pfill_value_defined(dcpl, &fv) < 0) fv = H5D_FILL_VALUE_UNDEFINED;
	di->fill_defined = (int)fv;
	di->storage_size = (unsigned long long)H5Dget_storage_size(dset);
	di->external_count = H5Pget_external_count(dcpl);
	if (di->external_count < 0) di->external_count = 0;
	if (di->layout == H5D_VIRTUAL) {
		size_t n = 0;
		if (H5Pget_virtual_count(dcpl, &n) >= 0) di->virtual_count = (int)n;
	}
	H5Pclose(dcpl);
	H5Eclear2(H5E_DEFAULT);
	return 0;
}

int qh5_dset_filter(hid_t dset, int idx, int *id, unsigned *flags, unsigned *cd, size_t *ncd, char *name, size_t namelen,
                    int *avail, qh5_err *e) {
	hid_t dcpl;
	H5Z_filter_t f;
	unsigned config = 0;
	qh5_quiet();
	dcpl = H5Dget_create_plist(dset);
	if (dcpl < 0) {
		qh5_capture(e, "H5Dget_create_plist");
		return -1;
	}
	name[0] = 0;
	f = H5Pget_filter2(dcpl, (unsigned)idx, flags, ncd, cd, namelen, name, &config);
	if (f < 0) {
		qh5_capture(e, "H5Pget_filter2");
		H5Pclose(dcpl);
		return -1;
	}
	*id = (int)f;
	*avail = H5Zfilter_avail(f) > 0;
	H5Pclose(dcpl);
	H5Eclear2(H5E_DEFAULT);
	return 0;
}

int qh5_dset_fill(hid_t dset, hid_t memtype, void *buf, qh5_err *e) {
	hid_t dcpl;
	herr_t r;
	qh5_quiet();
	dcpl = H5Dget_create_plist(dset);
	if (dcpl < 0) {
		qh5_capture(e, "H5Dget_create_plist");
		return -1;
	}
	r = H5Pget_fill_value(dcpl, memtype, buf);
	if (r < 0) qh5_capture(e, "H5Pget_fill_value");
	H5Pclose(dcpl);
	return r;
}

// qh5_select builds the file (and memory) dataspaces of a hyperslab read
// (or write: h5write).
int qh5_select(hid_t obj, int rank, const hsize_t *start, const hsize_t *stride, const hsize_t *count, hid_t *fs,
               hid_t *ms, hsize_t *n, qh5_err *e) {
	hsize_t total = 1;
	int i;
	*fs = H5Dget_space(obj);
	if (*fs < 0) {
		qh5_capture(e, "H5Dget_space");
		return -1;
	}
	if (H5Sget_simple_extent_ndims(*fs) != rank) {
		snprintf(e->msg, QH5_ERRLEN, "selection rank %d does not match the dataspace rank %d", rank,
		         H5Sget_simple_extent_ndims(*fs));
		H5Sclose(*fs);
		return -1;
	}
	if (rank > 0) {
		for (i = 0; i < rank; i++) total *= count[i];
		if (total == 0) {
			*n = 0;
			*ms = -1;
			return 0;
		}
		if (H5Sselect_hyperslab(*fs, H5S_SELECT_SET, start, stride, count, NULL) < 0) {
			qh5_capture(e, "H5Sselect_hyperslab");
			H5Sclose(*fs);
			return -1;
		}
	} else {
		H5Sselect_all(*fs);
	}
	/* The memory space has the selection's own shape (count), not a flat
	 * 1-D run of the same length: the bytes are identical (row-major), but
	 * matching shapes let libhdf5 copy chunk rows with its fast
	 * same-shape path instead of general span iteration (1.7x on a
	 * 512x512 gzip block, docs/BENCHMARKS.md). */
	if (rank > 0) {
		*ms = H5Screate_simple(rank, count, NULL);
	} else {
		*ms = H5Screate_simple(1, &total, NULL);
	}
	if (*ms < 0) {
		qh5_capture(e, "H5Screate_simple");
		H5Sclose(*fs);
		return -1;
	}
	*n = total;
	return 0;
}

int qh5_read(hid_t obj, int is_attr, hid_t memtype, int rank, const hsize_t *start, const hsize_t *stride,
             const hsize_t *count, void *buf, qh5_err *e) {
	hid_t fs, ms;
	hsize_t n;
	herr_t r;
	qh5_quiet();
	if (is_attr) {
		r = H5Aread(obj, memtype, buf);
		if (r < 0) qh5_capture(e, "H5Aread");
		return r;
	}
	if (qh5_select(obj, rank, start, stride, count, &fs, &ms, &n, e) < 0) return -1;
	if (n == 0) {
		H5Sclose(fs);
		return 0;
	}
	r = H5Dread(obj, memtype, ms, fs, H5P_DEFAULT, buf);
	if (r < 0) qh5_capture(e, "H5Dread");
	H5Sclose(ms);
	H5Sclose(fs);
	return r;
}

int qh5_read_vstr(hid_t obj, int is_attr, hid_t memtype, int rank, const hsize_t *start, const hsize_t *stride,
                  const hsize_t *count, size_t n, char ***out, long long *total, qh5_err *e) {
	char **p;
	long long t = 0;
	size_t i;
	qh5_quiet();
	*out = NULL;
	*total = 0;
	p = (char **)calloc(n ? n : 1, sizeof(char *));
	if (p == NULL) {
		snprintf(e->msg, QH5_ERRLEN, "out of memory");
		return -1;
	}
	if (n > 0 && qh5_read(obj, is_attr, memtype, rank, start, stride, count, p, e) < 0) {
		free(p);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (p[i]) t += (long long)strlen(p[i]);
	}
	*out = p;
	*total = t;
	return 0;
}

void qh5_vstr_fill(char **p, size_t n, int32_t *offsets, char *data) {
	size_t i;
	int32_t off = 0;
	for (i = 0; i < n; i++) {
		offsets[i] = off;
		if (p[i]) {
			size_t len = strlen(p[i]);
			memcpy(data + off, p[i], len);
			off += (int32_t)len;
		}
	}
	offsets[n] = off;
}

int qh5_reclaim(hid_t memtype, size_t n, void *buf) {
	hsize_t dims = n;
	hid_t s;
	herr_t r;
	qh5_quiet();
	if (n == 0) return 0;
	s = H5Screate_simple(1, &dims, NULL);
	r = H5Dvlen_reclaim(memtype, s, H5P_DEFAULT, buf);
	H5Sclose(s);
	H5Eclear2(H5E_DEFAULT);
	return r;
}

void qh5_vstr_free(hid_t memtype, char **p, size_t n) {
	if (p == NULL) return;
	qh5_reclaim(memtype, n, p);
	free(p);
}

static herr_t qh5_attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
	qh5_members *m = (qh5_members *)data;
	(void)loc; (void)info;
	if (qh5_members_push(m, name, 0, -1, 0) < 0) {
		m->failed = 1;
		return -1;
	}
	return 0;
}

int qh5_attr_names(hid_t obj, size_t max, qh5_members *out, qh5_err *e) {
	qh5_quiet();
	memset(out, 0, sizeof *out);
	out->max = max;
	if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, qh5_attr_cb, out) < 0) {
		if (out->failed) {
			snprintf(e->msg, QH5_ERRLEN, "out of memory listing attributes");
			H5Eclear2(H5E_DEFAULT);
		} else {
			qh5_capture(e, "H5Aiterate2");
		}
		return -1;
	}
	return 0;
}

hid_t qh5_aopen(hid_t obj, const char *name, qh5_err *e) {
	hid_t a;
	qh5_quiet();
	a = H5Aopen(obj, name, H5P_DEFAULT);
	if (a < 0) qh5_capture(e, "H5Aopen");
	return a;
}

int qh5_attr_space(hid_t attr, int *space_class, int *rank, hsize_t *dims, qh5_err *e) {
	qh5_quiet();
	return describe_space(H5Aget_space(attr), "H5Aget_space", space_class, rank, dims, NULL, e);
}

hid_t qh5_attr_type(hid_t attr, qh5_err *e) {
	hid_t t;
	qh5_quiet();
	t = H5Aget_type(attr);
	if (t < 0) qh5_capture(e, "H5Aget_type");
	return t;
}

/* ---------------------------------------------------------------------
 * Direct chunk reads (see chunk.go). The planning and raw-read helpers call
 * libhdf5 and run under the package's locking discipline; the decoding and
 * scattering helpers below them call only zlib and libc, never libhdf5, so
 * Go runs them on several threads at once with no HDF5 lock held.
 * --------------------------------------------------------------------- */

static int qh5_plan_reject(qh5_chunkplan *p, const char *why) {
	snprintf(p->reason, sizeof p->reason, "%s", why);
	return 0;
}

int qh5_chunk_raw(hid_t dset, const hsize_t *offset, void *buf, size_t cap, unsigned long long *size,
                  unsigned *mask, qh5_err *e) {
	haddr_t addr = HADDR_UNDEF;
	hsize_t sz = 0;
	unsigned fm = 0;
	uint32_t filters = 0;
	qh5_quiet();
	if (H5Dget_chunk_info_by_coord(dset, offset, &fm, &addr, &sz) < 0) {
		qh5_capture(e, "H5Dget_chunk_info_by_coord");
		return -1;
	}
	if (addr == HADDR_UNDEF || sz == 0) return 2;
	*size = (unsigned long long)sz;
	if (sz > cap) return 1;
	if (H5Dread_chunk(dset, H5P_DEFAULT, offset, &filters, buf) < 0) {
		qh5_capture(e, "H5Dread_chunk");
		return -1;
	}
	*mask = (unsigned)filters;
	return 0;
}

/* libdeflate (Debian's libdeflate0, present on most systems as a dependency
 * of libtiff) inflates zlib streams 2-3x faster than zlib. It is loaded at
 * run time when available, so it is not a build dependency; without it, or
 * when it rejects a stream, zlib decodes the chunk. Any valid zlib stream
 * has exactly one decoding, so both give the same bytes. */
typedef void *(*qh5_ld_alloc_fn)(void);
typedef void (*qh5_ld_free_fn)(void *);
typedef int (*qh5_ld_zlib_fn)(void *, const void *, size_t, void *, size_t, size_t *, size_t *);
static qh5_ld_alloc_fn qh5_ld_alloc;
static qh5_ld_free_fn qh5_ld_free;
static qh5_ld_zlib_fn qh5_ld_zlib;
static pthread_once_t qh5_ld_once = PTHREAD_ONCE_INIT;
static volatile int qh5_ld_off;

static void qh5_ld_load(void) {
	void *h = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) return;
	qh5_ld_alloc = (qh5_ld_alloc_fn)dlsym(h, "libdeflate_alloc_decompressor");
	qh5_ld_free = (qh5_ld_free_fn)dlsym(h, "libdeflate_free_decompressor");
	qh5_ld_zlib = (qh5_ld_zlib_fn)dlsym(h, "libdeflate_zlib_decompress_ex");
	if (qh5_ld_alloc == NULL || qh5_ld_free == NULL || qh5_ld_zlib == NULL) {
		qh5_ld_alloc = NULL;
		qh5_ld_free = NULL;
		qh5_ld_zlib = NULL;
	}
}

int qh5_have_libdeflate(void) {
	pthread_once(&qh5_ld_once, qh5_ld_load);
	return qh5_ld_zlib != NULL;
}

void qh5_libdeflate_off(int off) { qh5_ld_off = off; }

typedef struct {
	z_stream z;
	int z_ready;
	void *ld;
} qh5_inflater;

void *qh5_inflater_new(void) {
	qh5_inflater *f = (qh5_inflater *)calloc(1, sizeof(qh5_inflater));
	if (f == NULL) return NULL;
	if (!qh5_ld_off && qh5_have_libdeflate()) f->ld = qh5_ld_alloc();
	return f;
}

void qh5_inflater_free(void *p) {
	qh5_inflater *f = (qh5_inflater *)p;
	if (f == NULL) return;
	if (f->z_ready) inflateEnd(&f->z);
	if (f->ld) qh5_ld_free(f->ld);
	free(f);
}

/* Inflates the zlib stream in[0:n] into out (cap bytes); returns the
 * decoded length or -1 when the stream is invalid or does not fit. */
static long long qh5_inflate(qh5_inflater *f, const unsigned char *in, size_t n, unsigned char *out, size_t cap) {
	int zr;
	if (f->ld) {
		size_t used = 0, got = 0;
		if (qh5_ld_zlib(f->ld, in, n, out, cap, &used, &got) == 0) return (long long)got;
	}
	if (n > (size_t)UINT32_MAX || cap > (size_t)UINT32_MAX) return -1;
	if (!f->z_ready) {
		if (inflateInit(&f->z) != Z_OK) return -1;
		f->z_ready = 1;
	} else if (inflateReset(&f->z) != Z_OK) {
		return -1;
	}
	f->z.next_in = (Bytef *)in;
	f->z.avail_in = (uInt)n;
	f->z.next_out = (Bytef *)out;
	f->z.avail_out = (uInt)cap;
	zr = inflate(&f->z, Z_FINISH);
	if (zr != Z_STREAM_END) return -1;
	return (long long)(cap - f->z.avail_out);
}

/* Fletcher-32 as HDF5 computes it (16-bit big-endian words, sums started at
 * zero, an odd trailing byte as the high byte of a last word). */
static uint32_t qh5_fletcher32(const unsigned char *d, size_t len) {
	size_t words = len / 2;
	uint32_t s1 = 0, s2 = 0;
	while (words) {
		size_t n = words > 360 ? 360 : words;
		words -= n;
		while (n--) {
			s1 += ((uint32_t)d[0] << 8) | d[1];
			s2 += s1;
			d += 2;
		}
		s1 = (s1 & 0xffff) + (s1 >> 16);
		s2 = (s2 & 0xffff) + (s2 >> 16);
	}
	if (len % 2) {
		s1 += (uint32_t)d[0] << 8;
		s2 += s1;
		s1 = (s1 & 0xffff) + (s1 >> 16);
		s2 = (s2 & 0xffff) + (s2 >> 16);
	}
	s1 = (s1 & 0xffff) + (s1 >> 16);
	s2 = (s2 & 0xffff) + (s2 >> 16);
	return (s2 << 16) | s1;
}

static int qh5_fletcher_ok(const unsigned char *d, size_t n) {
	uint32_t sum, stored, swapped;
	const unsigned char *t = d + n;
	stored = (uint32_t)t[0] | ((uint32_t)t[1] << 8) | ((uint32_t)t[2] << 16) | ((uint32_t)t[3] << 24);
	sum = qh5_fletcher32(d, n);
	/* The library also accepts the byte-swapped sum that releases before
	 * 1.6.3 wrote on little-endian machines. */
	swapped = ((sum & 0x00ff00ffu) << 8) | ((sum & 0xff00ff00u) >> 8);
	return stored == sum || stored == swapped;
}

static void qh5_unshuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t size) {
	size_t elems, i, j;
	/* size 0 never comes from a plan (qh5_chunk_plan_fixed rejects it) but
	 * must not divide by zero here. */
	if (size <= 1 || (elems = n / size) <= 1) {
		memcpy(dst, src, n);
		return;
	}
	for (i = 0; i < size; i++) {
		const unsigned char *s = src + i * elems;
		unsigned char *d = dst + i;
		for (j = 0; j < elems; j++) d[j * size] = s[j];
	}
	if (n % size) memcpy(dst + elems * size, src + elems * size, n % size);
}

const void *qh5_chunk_decode(const qh5_chunkplan *p, void *inflater, const void *raw, size_t n, unsigned mask,
                             void *a, void *b, size_t cap, int *failure) {
	const unsigned char *cur = (const unsigned char *)raw;
	int i;
	*failure = 0;
	for (i = p->nfilters - 1; i >= 0; i--) {
		unsigned char *next = (cur == (const unsigned char *)a) ? (unsigned char *)b : (unsigned char *)a;
		if (i < 32 && (mask & (1u << i))) continue;
		switch (p->filter_id[i]) {
		case H5Z_FILTER_FLETCHER32:
			if (n < 4 || !qh5_fletcher_ok(cur, n - 4)) {
				*failure = 1;
				return NULL;
			}
			n -= 4;
			break;
		case H5Z_FILTER_SHUFFLE:
			if (n > cap) {
				*failure = 2;
				return NULL;
			}
			qh5_unshuffle(cur, next, n, p->filter_cd[i]);
			cur = next;
			break;
		case H5Z_FILTER_DEFLATE: {
			long long got = qh5_inflate((qh5_inflater *)inflater, cur, n, next, cap);
			if (got < 0) {
				*failure = 3;
				return NULL;
			}
			n = (size_t)got;
			cur = next;
			break;
		}
		default:
			*failure = 4;
			return NULL;
		}
	}
	if (n != p->chunk_bytes) {
		*failure = 5;
		return NULL;
	}
	return cur;
}

void qh5_chunk_scatter(const void *src, const qh5_chunkplan *p, const unsigned long long *lo,
                       const unsigned long long *step, const unsigned long long *count, void *dst,
                       const unsigned long long *dstride) {
	size_t es = p->elem_size;
	int rank = p->rank, last = rank - 1, d;
	unsigned long long sstride[QH5_MAX_RANK], idx[QH5_MAX_RANK];
	unsigned long long inner = count[last], sstep;
	for (d = 0; d < rank; d++) idx[d] = 0;
	sstride[last] = es;
	for (d = last - 1; d >= 0; d--) sstride[d] = sstride[d + 1] * p->chunk[d + 1];
	for (d = 0; d < rank; d++) {
		if (count[d] == 0) return;
	}
	sstep = step[last] * es;
	for (;;) {
		const unsigned char *s = (const unsigned char *)src + lo[last] * es;
		unsigned char *o = (unsigned char *)dst;
		unsigned long long k;
		for (d = 0; d < last; d++) {
			s += (lo[d] + idx[d] * step[d]) * sstride[d];
			o += idx[d] * dstride[d];
		}
		if (step[last] == 1) {
			memcpy(o, s, inner * es);
		} else {
			switch (es) {
			case 8:
				for (k = 0; k < inner; k++, s += sstep) memcpy(o + k * 8, s, 8);
				break;
			case 4:
				for (k = 0; k < inner; k++, s += sstep) memcpy(o + k * 4, s, 4);
				break;
			case 2:
				for (k = 0; k < inner; k++, s += sstep) memcpy(o + k * 2, s, 2);
				break;
			case 1:
				for (k = 0; k < inner; k++, s += sstep) o[k] = *s;
				break;
			default:
				for (k = 0; k < inner; k++, s += sstep) memcpy(o + k * es, s, es);
			}
		}
		for (d = last - 1; d >= 0; d--) {
			if (++idx[d] < count[d]) break;
			idx[d] = 0;
		}
		if (d < 0) return;
	}
}

// qh5_fixed_plain reports whether t is made only of integers, floats,
// fixed-length strings, enums, arrays and compounds of those: types whose
// elements are plain bytes with no pointers (no variable-length data, no
// references), so a no-op conversion leaves the file bytes as they are.
static int qh5_fixed_plain(hid_t t, int depth) {
	hid_t m;
	int i, n, ok = 1;
	if (depth > QH5_MAX_RANK) return 0;
	switch (H5Tget_class(t)) {
	case H5T_INTEGER:
	case H5T_FLOAT:
		return 1;
	case H5T_STRING:
		return H5Tis_variable_str(t) == 0;
	case H5T_ENUM:
	case H5T_ARRAY:
		m = H5Tget_super(t);
		if (m < 0) return 0;
		ok = qh5_fixed_plain(m, depth + 1);
		H5Tclose(m);
		return ok;
	case H5T_COMPOUND:
		n = H5Tget_nmembers(t);
		if (n <= 0) return 0;
		for (i = 0; i < n && ok; i++) {
			m = H5Tget_member_type(t, (unsigned)i);
			if (m < 0) return 0;
			ok = qh5_fixed_plain(m, depth + 1);
			H5Tclose(m);
		}
		return ok;
	default:
		return 0;
	}
}

int qh5_chunk_plan_fixed(hid_t dset, hid_t memtype, qh5_chunkplan *p, void *fill, size_t fill_size, qh5_err *e) {
	hid_t dcpl = -1, ftype = -1, space = -1;
	H5D_fill_time_t ft;
	H5D_fill_value_t fs;
	unsigned opts = 0;
	int i, r = 0, nf;
	size_t es;
	hsize_t elems = 1;
	qh5_quiet();
	memset(p, 0, sizeof *p);
	dcpl = H5Dget_create_plist(dset);
	if (dcpl < 0) {
		qh5_capture(e, "H5Dget_create_plist");
		return -1;
	}
	if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
		r = qh5_plan_reject(p, "not chunked");
		goto out;
	}
	if (H5Pget_chunk_opts(dcpl, &opts) < 0 || (opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS)) {
		r = qh5_plan_reject(p, "partial edge chunks are stored unfiltered");
		goto out;
	}
	nf = H5Pget_nfilters(dcpl);
	if (nf <= 0) {
		r = qh5_plan_reject(p, "no filters (the library reads the selected bytes directly)");
		goto out;
	}
	if (nf > QH5_MAX_FILTERS) {
		r = qh5_plan_reject(p, "too many filters");
		goto out;
	}
	for (i = 0; i < nf; i++) {
		unsigned flags = 0, cd[8], config = 0;
		size_t ncd = 8;
		char name[64];
		H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &config);
		if (f < 0) {
			qh5_capture(e, "H5Pget_filter2");
			r = -1;
			goto out;
		}
		p->filter_id[i] = (int)f;
		if (f == H5Z_FILTER_SHUFFLE) {
			if (ncd < 1 || cd[0] == 0) {
				r = qh5_plan_reject(p, "shuffle filter without an element size");
				goto out;
			}
			p->filter_cd[i] = cd[0];
		} else if (f != H5Z_FILTER_DEFLATE && f != H5Z_FILTER_FLETCHER32) {
			r = qh5_plan_reject(p, "a filter other than deflate, shuffle and fletcher32");
			goto out;
		}
	}
	p->nfilters = nf;
	ftype = H5Dget_type(dset);
	if (ftype < 0) {
		qh5_capture(e, "H5Dget_type");
		r = -1;
		goto out;
	}
	if (!qh5_fixed_plain(ftype, 0)) {
		r = qh5_plan_reject(p, "not a type of numbers, fixed-length strings, enums, arrays and compounds");
		goto out;
	}
	if (H5Tequal(ftype, memtype) <= 0) {
		r = qh5_plan_reject(p, "the file type differs from the memory type (conversion needed)");
		goto out;
	}
	es = H5Tget_size(ftype);
	if (es == 0 || es != fill_size) {
		r = qh5_plan_reject(p, "unsupported element size");
		goto out;
	}
	p->elem_size = es;
	if (H5Pget_fill_time(dcpl, &ft) < 0 || ft == H5D_FILL_TIME_NEVER) {
		r = qh5_plan_reject(p, "fill time never: unallocated chunks are left unwritten");
		goto out;
	}
	if (H5Pfill_value_defined(dcpl, &fs) < 0 || (fs != H5D_FILL_VALUE_DEFAULT && fs != H5D_FILL_VALUE_USER_DEFINED)) {
		r = qh5_plan_reject(p, "undefined fill value");
		goto out;
	}
	if (H5Pget_fill_value(dcpl, memtype, fill) < 0) {
		qh5_capture(e, "H5Pget_fill_value");
		r = -1;
		goto out;
	}
	space = H5Dget_space(dset);
	if (space < 0) {
		qh5_capture(e, "H5Dget_space");
		r = -1;
		goto out;
	}
	p->rank = H5Sget_simple_extent_ndims(space);
	if (p->rank < 1 || p->rank > QH5_MAX_RANK || H5Sget_simple_extent_dims(space, p->dims, NULL) < 0 ||
	    H5Pget_chunk(dcpl, QH5_MAX_RANK, p->chunk) != p->rank) {
		r = qh5_plan_reject(p, "unexpected dataspace or chunk rank");
		goto out;
	}
	for (i = 0; i < p->rank; i++) {
		if (p->chunk[i] == 0) {
			r = qh5_plan_reject(p, "zero chunk dimension");
			goto out;
		}
		elems *= p->chunk[i];
		if (elems > ((hsize_t)1 << 31)) break;
	}
	if (elems * es > QH5_MAX_CHUNK_BYTES) {
		r = qh5_plan_reject(p, "chunks too large for a direct read");
		goto out;
	}
	p->chunk_bytes = (size_t)(elems * es);
	r = 1;
out:
	if (space >= 0) H5Sclose(space);
	if (ftype >= 0) H5Tclose(ftype);
	H5Pclose(dcpl);
	H5Eclear2(H5E_DEFAULT);
	return r;
}

size_t qh5_type_size(hid_t t) {
	size_t n;
	qh5_quiet();
	n = H5Tget_size(t);
	H5Eclear2(H5E_DEFAULT);
	return n;
}
