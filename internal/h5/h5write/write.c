// The writing side of the shim (package h5write): tests and the demo data
// generator build fixtures with these; the shipped binary does not link them.
// Each helper follows shim.h's rules: it silences the thread's error printer
// first and captures the thread's error stack into its qh5_err.
#include <string.h>
#include "write.h"

hid_t qh5_fcreate(const char *path, qh5_err *e) {
	hid_t fapl, f;
	qh5_quiet();
	fapl = H5Pcreate(H5P_FILE_ACCESS);
#ifdef QH5_HAVE_FILE_LOCKING
	H5Pset_file_locking(fapl, 0, 1);
#endif
	f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	if (f < 0) {
		qh5_capture(e, "H5Fcreate");
	}
	H5Pclose(fapl);
	return f;
}

static hid_t qh5_lcpl(void) {
	hid_t l = H5Pcreate(H5P_LINK_CREATE);
	H5Pset_create_intermediate_group(l, 1);
	H5Pset_char_encoding(l, H5T_CSET_UTF8);
	return l;
}

int qh5_type_commit(hid_t loc, const char *name, hid_t t, qh5_err *e) {
	hid_t lcpl;
	herr_t r;
	qh5_quiet();
	lcpl = qh5_lcpl();
	r = H5Tcommit2(loc, name, t, lcpl, H5P_DEFAULT, H5P_DEFAULT);
	if (r < 0) qh5_capture(e, "H5Tcommit2");
	H5Pclose(lcpl);
	return r;
}

hid_t qh5_gcreate(hid_t loc, const char *name, qh5_err *e) {
	hid_t lcpl, gcpl, g;
	qh5_quiet();
	lcpl = qh5_lcpl();
	gcpl = H5Pcreate(H5P_GROUP_CREATE);
	H5Pset_obj_track_times(gcpl, 0);
	g = H5Gcreate2(loc, name, lcpl, gcpl, H5P_DEFAULT);
	if (g < 0) qh5_capture(e, "H5Gcreate2");
	H5Pclose(gcpl);
	H5Pclose(lcpl);
	return g;
}

hid_t qh5_dcreate(hid_t loc, const char *name, hid_t type, const qh5_dcreate_opts *c, qh5_err *e) {
	hid_t space, dcpl, lcpl, d = -1;
	int i;
	qh5_quiet();
	if (c->scalar == 1) {
		space = H5Screate(H5S_SCALAR);
	} else if (c->scalar == 2) {
		space = H5Screate(H5S_NULL);
	} else {
		space = H5Screate_simple(c->rank, c->dims, c->maxdims);
	}
	if (space < 0) {
		qh5_capture(e, "H5Screate");
		return -1;
	}
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_obj_track_times(dcpl, 0);
	if (c->compact) H5Pset_layout(dcpl, H5D_COMPACT);
	if (c->chunk_rank > 0 && H5Pset_chunk(dcpl, c->chunk_rank, c->chunk) < 0) {
		qh5_capture(e, "H5Pset_chunk");
		goto done;
	}
	if (c->shuffle && H5Pset_shuffle(dcpl) < 0) {
		qh5_capture(e, "H5Pset_shuffle");
		goto done;
	}
	if (c->deflate >= 0 && H5Pset_deflate(dcpl, (unsigned)c->deflate) < 0) {
		qh5_capture(e, "H5Pset_deflate");
		goto done;
	}
	if (c->fletcher32 && H5Pset_fletcher32(dcpl) < 0) {
		qh5_capture(e, "H5Pset_fletcher32");
		goto done;
	}
	for (i = 0; i < c->nextra && i < 4; i++) {
		if (H5Pset_filter(dcpl, (H5Z_filter_t)c->extra_id[i], c->extra_flags[i], 0, NULL) < 0) {
			qh5_capture(e, "H5Pset_filter");
			goto done;
		}
	}
	if (c->external && H5Pset_external(dcpl, c->external, 0, H5F_UNLIMITED) < 0) {
		qh5_capture(e, "H5Pset_external");
		goto done;
	}
	if (c->fill && H5Pset_fill_value(dcpl, type, c->fill) < 0) {
		qh5_capture(e, "H5Pset_fill_value");
		goto done;
	}
	lcpl = qh5_lcpl();
	d = H5Dcreate2(loc, name, type, space, lcpl, dcpl, H5P_DEFAULT);
	if (d < 0) qh5_capture(e, "H5Dcreate2");
	H5Pclose(lcpl);
done:
	H5Pclose(dcpl);
	H5Sclose(space);
	return d;
}

int qh5_write(hid_t dset, hid_t memtype, int rank, const hsize_t *start, const hsize_t *count, const void *buf, qh5_err *e) {
	herr_t r;
	qh5_quiet();
	if (start == NULL) {
		r = H5Dwrite(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
		if (r < 0) qh5_capture(e, "H5Dwrite");
		return r;
	} else {
		hid_t fs, ms;
		hsize_t n;
		if (qh5_select(dset, rank, start, NULL, count, &fs, &ms, &n, e) < 0) return -1;
		if (n == 0) {
			H5Sclose(fs);
			return 0;
		}
		r = H5Dwrite(dset, memtype, ms, fs, H5P_DEFAULT, buf);
		if (r < 0) qh5_capture(e, "H5Dwrite");
		H5Sclose(ms);
		H5Sclose(fs);
		return r;
	}
}

hid_t qh5_acreate(hid_t obj, const char *name, hid_t type, int rank, const hsize_t *dims, qh5_err *e) {
	hid_t space, acpl, a;
	qh5_quiet();
	space = rank > 0 ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
	acpl = H5Pcreate(H5P_ATTRIBUTE_CREATE);
	H5Pset_char_encoding(acpl, H5T_CSET_UTF8);
	a = H5Acreate2(obj, name, type, space, acpl, H5P_DEFAULT);
	if (a < 0) qh5_capture(e, "H5Acreate2");
	H5Pclose(acpl);
	H5Sclose(space);
	return a;
}

int qh5_awrite(hid_t attr, hid_t memtype, const void *buf, qh5_err *e) {
	herr_t r;
	qh5_quiet();
	r = H5Awrite(attr, memtype, buf);
	if (r < 0) qh5_capture(e, "H5Awrite");
	return r;
}

int qh5_lcreate_soft(hid_t loc, const char *target, const char *name, qh5_err *e) {
	hid_t lcpl;
	herr_t r;
	qh5_quiet();
	lcpl = qh5_lcpl();
	r = H5Lcreate_soft(target, loc, name, lcpl, H5P_DEFAULT);
	if (r < 0) qh5_capture(e, "H5Lcreate_soft");
	H5Pclose(lcpl);
	return r;
}

int qh5_lcreate_external(hid_t loc, const char *file, const char *obj, const char *name, qh5_err *e) {
	hid_t lcpl;
	herr_t r;
	qh5_quiet();
	lcpl = qh5_lcpl();
	r = H5Lcreate_external(file, obj, loc, name, lcpl, H5P_DEFAULT);
	if (r < 0) qh5_capture(e, "H5Lcreate_external");
	H5Pclose(lcpl);
	return r;
}

int qh5_lcreate_hard(hid_t loc, const char *target, const char *name, qh5_err *e) {
	hid_t lcpl;
	herr_t r;
	qh5_quiet();
	lcpl = qh5_lcpl();
	r = H5Lcreate_hard(loc, target, loc, name, lcpl, H5P_DEFAULT);
	if (r < 0) qh5_capture(e, "H5Lcreate_hard");
	H5Pclose(lcpl);
	return r;
}

int qh5_write_obj_ref(hid_t loc, const char *name, const char *target, qh5_err *e) {
	hobj_ref_t ref;
	hsize_t one = 1;
	hid_t s, d, lcpl, dcpl;
	herr_t r;
	qh5_quiet();
	if (H5Rcreate(&ref, loc, target, H5R_OBJECT, -1) < 0) {
		qh5_capture(e, "H5Rcreate");
		return -1;
	}
	s = H5Screate_simple(1, &one, NULL);
	lcpl = qh5_lcpl();
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_obj_track_times(dcpl, 0);
	d = H5Dcreate2(loc, name, H5T_STD_REF_OBJ, s, lcpl, dcpl, H5P_DEFAULT);
	H5Pclose(dcpl);
	H5Pclose(lcpl);
	H5Sclose(s);
	if (d < 0) {
		qh5_capture(e, "H5Dcreate2");
		return -1;
	}
	r = H5Dwrite(d, H5T_STD_REF_OBJ, H5S_ALL, H5S_ALL, H5P_DEFAULT, &ref);
	if (r < 0) qh5_capture(e, "H5Dwrite");
	H5Dclose(d);
	return r;
}

static size_t qh5_xor_filter(unsigned int flags, size_t cd_nelmts, const unsigned int cd_values[], size_t nbytes,
                             size_t *buf_size, void **buf) {
	size_t i;
	unsigned char *p = (unsigned char *)*buf;
	(void)flags; (void)cd_nelmts; (void)cd_values; (void)buf_size;
	for (i = 0; i < nbytes; i++) p[i] ^= 0x5A;
	return nbytes;
}

int qh5_register_xor_filter(int id, qh5_err *e) {
	H5Z_class2_t cls;
	qh5_quiet();
	memset(&cls, 0, sizeof cls);
	cls.version = H5Z_CLASS_T_VERS;
	cls.id = (H5Z_filter_t)id;
	cls.encoder_present = 1;
	cls.decoder_present = 1;
	cls.name = "quarry test xor";
	cls.filter = qh5_xor_filter;
	if (H5Zregister(&cls) < 0) {
		qh5_capture(e, "H5Zregister");
		return -1;
	}
	return 0;
}

int qh5_unregister_filter(int id, qh5_err *e) {
	qh5_quiet();
	if (H5Zunregister((H5Z_filter_t)id) < 0) {
		qh5_capture(e, "H5Zunregister");
		return -1;
	}
	return 0;
}

int qh5_write_raw_chunk(hid_t dset, const hsize_t *offset, unsigned mask, const void *buf, size_t n, qh5_err *e) {
	qh5_quiet();
	if (H5Dwrite_chunk(dset, H5P_DEFAULT, (uint32_t)mask, offset, n, buf) < 0) {
		qh5_capture(e, "H5Dwrite_chunk");
		return -1;
	}
	return 0;
}

