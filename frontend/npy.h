/* npy.h — NumPy .npy tensor files: read (format 1.0, 2.0, 3.0) and write
 * (1.0, or 2.0 when the header needs it), C order, little-endian.
 *
 * dtypes: the numpy builtins float32, float16, int32, int16, int8, uint8,
 * uint16, uint32, int64, and bfloat16 / float8_e4m3fn / float8_e5m2 in
 * the form numpy writes them when the arrays come from the ml_dtypes
 * package ('<V2', '<V1', '<f1'; see docs/numerics.md for why, and for how
 * a numpy user loads them). Anything else (Fortran order, big-endian,
 * object, structured, other dtypes, a malformed header, short data) is an
 * error whose message names the file and the problem. */
#ifndef FRONTEND_NPY_H
#define FRONTEND_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "isa/isa_fp.h"
#include "isa/npu_util.h"

#define NPY_MAX_DIMS 8
/* Largest tensor accepted or written: 4 GiB of data. */
#define NPY_MAX_NBYTES ((size_t)1 << 32)

/* A dense C-order tensor. data holds nbytes = numel * dtype size bytes,
 * little-endian, owned by the tensor (npu_malloc'd; free with npy_free).
 * ndim 0 is a scalar (one element); a zero dimension gives nbytes 0 and a
 * valid, unused data pointer. */
typedef struct npy_tensor {
    isa_dtype dtype;
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    size_t nbytes;
    void *data;
} npy_tensor;

/* How bfloat16 / float8 are spelled in the header on write (read accepts
 * both, and every builtin dtype is spelled the same in either):
 *   NPY_DESCR_MLDTYPES  what np.save writes for ml_dtypes arrays:
 *                       bf16 '<V2', e4m3 '<V1', e5m2 '<f1' (the default)
 *   NPY_DESCR_NAMED     the dtype's name: 'bfloat16', 'float8_e4m3fn',
 *                       'float8_e5m2'; np.load gives the typed array
 *                       directly once ml_dtypes is imported */
enum { NPY_DESCR_MLDTYPES = 0, NPY_DESCR_NAMED = 1 };

/* Read a .npy file (gzip'd files are inflated). On success *t owns its
 * data; on failure *t is zeroed and d says what is wrong, e.g.
 * "a.npy: fortran_order=True is not supported; save with np.ascontiguousarray". */
npu_status npy_load(const char *path, npy_tensor *t, npu_diag *d);
/* The same from memory (name is used in messages; the fuzz entry point).
 * The data is copied; buf is not kept. */
npu_status npy_load_mem(const void *buf, size_t len, const char *name, npy_tensor *t,
                        npu_diag *d);

/* Write atomically (npu_write_file_atomic). The tensor is not changed. */
npu_status npy_save(const char *path, const npy_tensor *t, npu_diag *d);
npu_status npy_save_ex(const char *path, const npy_tensor *t, int descr_style, npu_diag *d);
/* Append the whole file image to out (for in-memory use and tests). */
npu_status npy_encode(const npy_tensor *t, int descr_style, npu_buf *out, npu_diag *d);

/* Make a zero-filled tensor of the given dtype and shape. */
npu_status npy_alloc(npy_tensor *t, isa_dtype dtype, int ndim, const int64_t *shape,
                     npu_diag *d);
void npy_free(npy_tensor *t);
/* Number of elements (1 for a scalar). */
int64_t npy_numel(const npy_tensor *t);
/* The descr written for dtype in the given style ("<f4", "<V2", ...). */
const char *npy_descr(isa_dtype dtype, int descr_style);

#endif
