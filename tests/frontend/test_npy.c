/* test_npy.c — the .npy reader and writer against hand-written byte images
 * (numpy is not needed: the images below are what numpy's format.py
 * writes, spelled out byte by byte), every dtype round trip, and every
 * error class with its message. */
#include "tests/frontend/suites.h"
#include "frontend/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* A file image: preamble for `major`, the header text exactly as given
 * (the caller pads it), then the data bytes. */
static size_t mkimg(uint8_t *out, int major, const char *hdr, const void *data, size_t dlen)
{
    size_t hl = strlen(hdr), n = 0;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (uint8_t)major;
    out[7] = 0;
    if (major == 1) {
        out[8] = (uint8_t)hl;
        out[9] = (uint8_t)(hl >> 8);
        n = 10;
    } else {
        for (int i = 0; i < 4; i++)
            out[8 + i] = (uint8_t)(hl >> (8 * i));
        n = 12;
    }
    memcpy(out + n, hdr, hl);
    n += hl;
    if (dlen)
        memcpy(out + n, data, dlen);
    return n + dlen;
}

static char tmpdir[256];

static void setup_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/npusim-npy-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Path of a file in the test's directory (a static buffer: copy it to
 * keep two at once). */
static const char *tpath(const char *name)
{
    static char p[400];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    return p;
}

/* Load an image from memory, expecting failure with `status` and a message
 * containing each of the given substrings. */
static void expect_err(const uint8_t *img, size_t len, npu_status status, const char *sub1,
                       const char *sub2)
{
    npy_tensor t;
    npu_diag d = {0};
    npu_status s = npy_load_mem(img, len, "a.npy", &t, &d);
    ck_assert_msg(s == status, "status %s, want %s (%s)", npu_status_name(s),
                  npu_status_name(status), d.msg);
    ck_assert_ptr_null(t.data);
    ck_assert_msg(strncmp(d.msg, "a.npy: ", 7) == 0, "message does not name the file: %s", d.msg);
    ck_assert_msg(strstr(d.msg, sub1), "message '%s' lacks '%s'", d.msg, sub1);
    if (sub2)
        ck_assert_msg(strstr(d.msg, sub2), "message '%s' lacks '%s'", d.msg, sub2);
}

static void expect_hdr_err(const char *hdr, npu_status status, const char *sub1, const char *sub2)
{
    uint8_t img[1024];
    uint8_t data[64] = {0};
    size_t n = mkimg(img, 1, hdr, data, 12);
    expect_err(img, n, status, sub1, sub2);
}

/* ---- valid files ----------------------------------------------------------------------- */

/* Exactly what numpy (>= 1.24, incl. 2.x) np.save(np.arange(6, dtype=np.float32)
 * .reshape(2, 3)) writes: version 1.0, the dict, 21 - len("2") spaces of
 * growth room for the first axis, then spaces and '\n' to a 64-byte
 * boundary. */
START_TEST(t_write_exact_bytes)
{
    npy_tensor t;
    npu_diag d = {0};
    int64_t shape[2] = {2, 3};
    ck_assert_int_eq(npy_alloc(&t, ISA_DT_F32, 2, shape, &d), NPU_OK);
    float *f = t.data;
    for (int i = 0; i < 6; i++)
        f[i] = (float)i;
    npu_buf b = {0};
    ck_assert_int_eq(npy_encode(&t, NPY_DESCR_MLDTYPES, &b, &d), NPU_OK);
    char want_hdr[129];
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    memset(want_hdr, ' ', sizeof want_hdr);
    memcpy(want_hdr, dict, strlen(dict));
    want_hdr[117] = '\n';   /* 10 + 118 = 128 */
    want_hdr[118] = 0;
    uint8_t want[256];
    size_t n = mkimg(want, 1, want_hdr, t.data, 24);
    ck_assert_uint_eq(n, 128 + 24);
    ck_assert_uint_eq(b.len, n);
    ck_assert(memcmp(b.data, want, n) == 0);
    npu_buf_free(&b);
    /* one dimension is written "(5,)", a scalar "()" */
    int64_t s1 = 5;
    npy_free(&t);
    ck_assert_int_eq(npy_alloc(&t, ISA_DT_U8, 1, &s1, &d), NPU_OK);
    b = (npu_buf){0};
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_OK);
    ck_assert(strstr((char *)b.data + 10, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"));
    ck_assert_uint_eq((b.len - 5) % 64, 0);
    npu_buf_free(&b);
    npy_free(&t);
    ck_assert_int_eq(npy_alloc(&t, ISA_DT_S64, 0, NULL, &d), NPU_OK);
    b = (npu_buf){0};
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_OK);
    ck_assert(strstr((char *)b.data + 10, "'shape': (), }"));
    ck_assert_uint_eq(b.len, 128 + 8);   /* a 56-char dict needs two lines of 64 */
    npu_buf_free(&b);
    npy_free(&t);
    /* a header ending exactly on a boundary gets a full 64 bytes more, as
     * numpy's padlen = 64 - (len % 64) does: this shape gives a 97-char
     * dict, + 20 growth spaces + '\n' + 10 = 128 (empty: a zero dim) */
    int64_t sh8[8] = {0, 100, 1000, 1000, 1000, 1000, 1000, 1000};
    ck_assert_int_eq(npy_alloc(&t, ISA_DT_F32, 8, sh8, &d), NPU_OK);
    b = (npu_buf){0};
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_OK);
    ck_assert_uint_eq(b.len, 128 + 64);
    ck_assert_uint_eq(b.data[8] | b.data[9] << 8, 128 + 64 - 10);
    ck_assert_uint_eq(b.data[b.len - 1], '\n');
    ck_assert_uint_eq(b.data[b.len - 65], ' ');
    npu_buf_free(&b);
    npy_free(&t);
}
END_TEST

static const isa_dtype all_dt[] = {ISA_DT_F32, ISA_DT_F16, ISA_DT_BF16, ISA_DT_E4M3,
                                   ISA_DT_E5M2, ISA_DT_S32, ISA_DT_S16, ISA_DT_S8,
                                   ISA_DT_U8, ISA_DT_U16, ISA_DT_U32, ISA_DT_S64};

START_TEST(t_roundtrip_dtypes)
{
    setup_tmp();
    for (int style = 0; style < 2; style++)
        for (unsigned k = 0; k < NPU_ARRAY_LEN(all_dt); k++) {
            npy_tensor t, u;
            npu_diag d = {0};
            int64_t shape[3] = {3, 1, 5 + (int64_t)k};
            ck_assert_int_eq(npy_alloc(&t, all_dt[k], 3, shape, &d), NPU_OK);
            for (size_t i = 0; i < t.nbytes; i++)
                ((uint8_t *)t.data)[i] = (uint8_t)(i * 37 + k);
            const char *p = tpath("rt.npy");
            ck_assert_msg(npy_save_ex(p, &t, style, &d) == NPU_OK, "%s", d.msg);
            ck_assert_msg(npy_load(p, &u, &d) == NPU_OK, "%s", d.msg);
            ck_assert_int_eq(u.dtype, all_dt[k]);
            ck_assert_int_eq(u.ndim, 3);
            for (int i = 0; i < 3; i++)
                ck_assert_int_eq(u.shape[i], shape[i]);
            ck_assert_uint_eq(u.nbytes, t.nbytes);
            ck_assert_int_eq(npy_numel(&u), 15 + 3 * (int64_t)k);
            ck_assert(memcmp(u.data, t.data, t.nbytes) == 0);
            /* the descr in the file is the documented one */
            uint8_t *raw;
            size_t len;
            ck_assert_int_eq(npu_read_file(p, 0, 0, &raw, &len, &d), NPU_OK);
            char want[64];
            snprintf(want, sizeof want, "'descr': '%s'", npy_descr(all_dt[k], style));
            ck_assert_msg(strstr((char *)raw + 10, want), "%s not in %s", want, (char *)raw + 10);
            ck_assert_uint_eq((len - t.nbytes) % 64, 0);
            npu_free(raw);
            npy_free(&t);
            npy_free(&u);
        }
    /* no temporary file is left behind by the atomic write */
    ck_assert_int_eq(access(tpath("rt.npy"), F_OK), 0);
    char tmpname[480];
    snprintf(tmpname, sizeof tmpname, "%.400s.tmp.%ld", tpath("rt.npy"), (long)getpid());
    ck_assert_int_ne(access(tmpname, F_OK), 0);
    teardown_tmp();
}
END_TEST

START_TEST(t_descr_forms)
{
    ck_assert_str_eq(npy_descr(ISA_DT_BF16, NPY_DESCR_MLDTYPES), "<V2");
    ck_assert_str_eq(npy_descr(ISA_DT_E4M3, NPY_DESCR_MLDTYPES), "<V1");
    ck_assert_str_eq(npy_descr(ISA_DT_E5M2, NPY_DESCR_MLDTYPES), "<f1");
    ck_assert_str_eq(npy_descr(ISA_DT_BF16, NPY_DESCR_NAMED), "bfloat16");
    ck_assert_str_eq(npy_descr(ISA_DT_S8, NPY_DESCR_NAMED), "|i1");
    ck_assert_str_eq(npy_descr(ISA_DT_F16, NPY_DESCR_MLDTYPES), "<f2");
    /* every spelling numpy or a hand-written header may use */
    static const struct { const char *descr; isa_dtype dt; } forms[] = {
        {"<f4", ISA_DT_F32}, {"=f4", ISA_DT_F32}, {"f4", ISA_DT_F32},  {"<f2", ISA_DT_F16},
        {"<V2", ISA_DT_BF16}, {"|V2", ISA_DT_BF16}, {"bfloat16", ISA_DT_BF16},
        {"<V1", ISA_DT_E4M3}, {"|V1", ISA_DT_E4M3}, {"float8_e4m3fn", ISA_DT_E4M3},
        {"<f1", ISA_DT_E5M2}, {"|f1", ISA_DT_E5M2}, {"float8_e5m2", ISA_DT_E5M2},
        {"|i1", ISA_DT_S8},  {">i1", ISA_DT_S8},  {"|u1", ISA_DT_U8},  {"<u2", ISA_DT_U16},
        {"<u4", ISA_DT_U32}, {"<i2", ISA_DT_S16}, {"<i4", ISA_DT_S32}, {"<i8", ISA_DT_S64},
    };
    for (unsigned i = 0; i < NPU_ARRAY_LEN(forms); i++) {
        char hdr[128];
        snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }\n",
                 forms[i].descr);
        uint8_t img[256], data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        size_t n = mkimg(img, 1, hdr, data, 2 * (size_t)isa_dtype_bytes(forms[i].dt));
        npy_tensor t;
        npu_diag d = {0};
        ck_assert_msg(npy_load_mem(img, n, "f.npy", &t, &d) == NPU_OK, "%s: %s", forms[i].descr,
                      d.msg);
        ck_assert_int_eq(t.dtype, forms[i].dt);
        ck_assert(memcmp(t.data, data, t.nbytes) == 0);
        npy_free(&t);
    }
}
END_TEST

/* Versions 2.0 and 3.0, other spacing, double quotes, key order, no
 * trailing comma, Python 2 longs, scalar and empty shapes. */
START_TEST(t_read_variants)
{
    static const struct { int major; const char *hdr; isa_dtype dt; int ndim; int64_t s0, s1; size_t nbytes; } v[] = {
        {2, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }\n", ISA_DT_S32, 2, 2, 2, 16},
        {3, "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }   \n", ISA_DT_F16, 1, 3, 0, 6},
        {1, "{\"shape\": (1, 4), \"descr\": \"<u2\", \"fortran_order\": False}", ISA_DT_U16, 2, 1, 4, 8},
        {1, "{ 'descr' : '|u1' ,\n 'fortran_order' : False , 'shape' : ( 7 , ) }\n", ISA_DT_U8, 1, 7, 0, 7},
        {1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 1L), }\n", ISA_DT_S64, 2, 2, 1, 16},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", ISA_DT_F32, 0, 0, 0, 4},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }\n", ISA_DT_F32, 2, 0, 5, 0},
        /* Fortran order with one non-trivial axis is the same layout */
        {1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }\n", ISA_DT_F32, 1, 3, 0, 12},
        {1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3), }\n", ISA_DT_F32, 2, 1, 3, 12},
    };
    for (unsigned i = 0; i < NPU_ARRAY_LEN(v); i++) {
        uint8_t img[512], data[64];
        for (int j = 0; j < 64; j++)
            data[j] = (uint8_t)(j * 7 + 1);
        size_t n = mkimg(img, v[i].major, v[i].hdr, data, v[i].nbytes);
        npy_tensor t;
        npu_diag d = {0};
        ck_assert_msg(npy_load_mem(img, n, "v.npy", &t, &d) == NPU_OK, "%u: %s", i, d.msg);
        ck_assert_int_eq(t.dtype, v[i].dt);
        ck_assert_int_eq(t.ndim, v[i].ndim);
        if (v[i].ndim > 0)
            ck_assert_int_eq(t.shape[0], v[i].s0);
        if (v[i].ndim > 1)
            ck_assert_int_eq(t.shape[1], v[i].s1);
        ck_assert_uint_eq(t.nbytes, v[i].nbytes);
        ck_assert_ptr_nonnull(t.data);
        ck_assert(memcmp(t.data, data, t.nbytes) == 0);
        ck_assert_int_eq(npy_numel(&t), v[i].ndim == 0 ? 1 : v[i].s0 * (v[i].ndim > 1 ? v[i].s1 : 1));
        npy_free(&t);
        ck_assert_ptr_null(t.data);
    }
}
END_TEST

START_TEST(t_gzip_and_missing)
{
    setup_tmp();
    static const char hdr[] = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }\n";
    uint8_t img[256];
    const int16_t data[3] = {-1, 2, -300};
    size_t n = mkimg(img, 1, hdr, data, 6);
    gzFile gz = gzopen(tpath("z.npy"), "wb");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzwrite(gz, img, (unsigned)n), (int)n);
    gzclose(gz);
    npy_tensor t;
    npu_diag d = {0};
    ck_assert_msg(npy_load(tpath("z.npy"), &t, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(((int16_t *)t.data)[2], -300);
    npy_free(&t);
    ck_assert_int_eq(npy_load(tpath("missing.npy"), &t, &d), NPU_EIO);
    ck_assert(strstr(d.msg, "missing.npy"));
    /* a file error names the path too */
    FILE *f = fopen(tpath("bad.npy"), "wb");
    fwrite("\x93NUMPY\x01\x00\x40\x00{", 1, 11, f);
    fclose(f);
    ck_assert_int_eq(npy_load(tpath("bad.npy"), &t, &d), NPU_EFORMAT);
    ck_assert(strstr(d.msg, "bad.npy: truncated header"));
    /* saving into a missing directory fails cleanly */
    int64_t s1 = 2;
    ck_assert_int_eq(npy_alloc(&t, ISA_DT_S8, 1, &s1, &d), NPU_OK);
    ck_assert_int_eq(npy_save(tpath("no/such/dir.npy"), &t, &d), NPU_EIO);
    npy_free(&t);
    teardown_tmp();
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------- */

START_TEST(t_err_preamble)
{
    uint8_t img[256];
    expect_err((const uint8_t *)"PK\x03\x04 not npy", 14, NPU_EFORMAT, "bad magic", NULL);
    expect_err((const uint8_t *)"", 0, NPU_EFORMAT, "bad magic", NULL);
    expect_err((const uint8_t *)"\x93NUMPY\x01", 7, NPU_EFORMAT, "truncated", NULL);
    size_t n = mkimg(img, 4, "{}", NULL, 0);
    expect_err(img, n, NPU_EUNSUPP, "version 4.0", NULL);
    n = mkimg(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", "abcd", 4);
    img[7] = 1;  /* minor 1 */
    expect_err(img, n, NPU_EUNSUPP, "version 1.1", NULL);
    expect_err((const uint8_t *)"\x93NUMPY\x02\x00\x10\x00", 10, NPU_EFORMAT, "truncated", NULL);
    /* header length beyond the file */
    n = mkimg(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", NULL, 0);
    expect_err(img, n - 20, NPU_EFORMAT, "truncated header", NULL);
    n = mkimg(img, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", NULL, 0);
    expect_err(img, n - 1, NPU_EFORMAT, "truncated header", NULL);
}
END_TEST

START_TEST(t_err_syntax)
{
    expect_hdr_err("['descr', '<f4']", NPU_EFORMAT, "not a dict", "header byte 10");
    expect_hdr_err("{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}", NPU_EFORMAT,
                   "expected ':' after key", "header byte 19");
    expect_hdr_err("{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}", NPU_EFORMAT,
                   "expected ',' or '}'", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", NPU_EFORMAT,
                   "unterminated dict", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (3,", NPU_EFORMAT,
                   "unterminated tuple", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (3 4)}", NPU_EFORMAT,
                   "expected ',' or ')'", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}", NPU_EFORMAT,
                   "expected a Python literal", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}", NPU_EFORMAT,
                   "only decimal integers", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", NPU_EFORMAT,
                   "unknown key 'x'", NULL);
    expect_hdr_err("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
                   NPU_EFORMAT, "duplicate key 'descr'", NULL);
    expect_hdr_err("{'descr': '<f4', 'shape': (3,)}", NPU_EFORMAT, "lacks the key 'fortran_order'",
                   NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x", NPU_EFORMAT,
                   "unexpected text after", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\x01", NPU_EFORMAT,
                   "control character", NULL);
    expect_hdr_err("{3: '<f4'}", NPU_EFORMAT, "keys must be strings", NULL);
    expect_hdr_err("{'descr': 4, 'fortran_order': False, 'shape': (3,)}", NPU_EFORMAT,
                   "'descr' must be a string", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", NPU_EFORMAT,
                   "'fortran_order' must be True or False", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", NPU_EFORMAT,
                   "'shape' must be a tuple of integers", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': ('3',)}", NPU_EFORMAT,
                   "'shape' must be a tuple of integers", NULL);
    expect_hdr_err("{'descr': 'a\\tb', 'fortran_order': False, 'shape': (3,)}", NPU_EFORMAT,
                   "escape sequences", NULL);
    /* deep nesting is an error, not a stack overflow */
    char deep[400];
    strcpy(deep, "{'descr': ");
    for (int i = 0; i < 100; i++)
        strcat(deep, "(");
    expect_hdr_err(deep, NPU_EFORMAT, "nested too deeply", NULL);
}
END_TEST

START_TEST(t_err_layout_dtype)
{
    expect_hdr_err("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 1, 2), }\n", NPU_EUNSUPP,
                   "a.npy: fortran_order=True is not supported; save with np.ascontiguousarray",
                   NULL);
    expect_hdr_err("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }\n", NPU_EUNSUPP,
                   "big-endian dtype '>f4'", "newbyteorder");
    expect_hdr_err("{'descr': '>V2', 'fortran_order': False, 'shape': (3,), }\n", NPU_EUNSUPP,
                   "big-endian", NULL);
    expect_hdr_err("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }\n", NPU_EUNSUPP,
                   "object arrays", "pickle");
    expect_hdr_err("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (3,), }\n",
                   NPU_EUNSUPP, "structured dtypes", NULL);
    expect_hdr_err("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n", NPU_EUNSUPP,
                   "dtype '<f8' (float64) is not supported", "float32 '<f4'");
    expect_hdr_err("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }\n", NPU_EUNSUPP,
                   "(bool)", NULL);
    expect_hdr_err("{'descr': '<U8', 'fortran_order': False, 'shape': (3,), }\n", NPU_EUNSUPP,
                   "'<U8'", NULL);
    expect_hdr_err("{'descr': '<V4', 'fortran_order': False, 'shape': (3,), }\n", NPU_EUNSUPP,
                   "'<V4' is not supported", NULL);
}
END_TEST

START_TEST(t_err_shape_data)
{
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }\n", NPU_EFORMAT,
                   "shape[0] = -3 is negative", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }\n", NPU_EFORMAT,
                   "shape[1] = -1 is negative", NULL);
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n",
                   NPU_EUNSUPP, "shape too large", NULL);
    /* the product overflows 64 bits: caught before multiplying */
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }\n",
                   NPU_EUNSUPP, "shape too large", NULL);
    expect_hdr_err("{'descr': '<u1', 'fortran_order': False, 'shape': (99999999999999999999999,), }\n",
                   NPU_EFORMAT, "beyond 2^63", NULL);
    expect_hdr_err("{'descr': '<u1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n",
                   NPU_EUNSUPP, "9 dimensions", NULL);
    /* data too short / too long (expect_hdr_err supplies 12 data bytes) */
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", NPU_EFORMAT,
                   "truncated data: shape needs 16 bytes", "has 12");
    expect_hdr_err("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", NPU_EFORMAT,
                   "4 bytes of trailing data", NULL);
    /* a zero dimension makes a huge other dimension harmless */
    uint8_t img[256];
    size_t n = mkimg(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904), }\n", NULL, 0);
    npy_tensor t;
    npu_diag d = {0};
    ck_assert_msg(npy_load_mem(img, n, "z.npy", &t, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npy_numel(&t), 0);
    npy_free(&t);
}
END_TEST

START_TEST(t_err_save)
{
    npy_tensor t = {0};
    npu_diag d = {0};
    npu_buf b = {0};
    t.dtype = ISA_DT_F32;
    t.ndim = 1;
    t.shape[0] = 4;
    t.nbytes = 8;
    uint8_t data[16] = {0};
    t.data = data;
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_EINVAL);
    ck_assert(strstr(d.msg, "nbytes is 8 but the shape needs 16"));
    t.nbytes = 16;
    t.ndim = 9;
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_EINVAL);
    t.ndim = 1;
    t.shape[0] = -4;
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_EINVAL);
    t.shape[0] = 4;
    t.dtype = (isa_dtype)77;
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_EINVAL);
    t.dtype = ISA_DT_F32;
    t.data = NULL;
    ck_assert_int_eq(npy_encode(&t, 0, &b, &d), NPU_EINVAL);
    ck_assert_uint_eq(b.len, 0);
    int64_t big[2] = {1ll << 40, 1ll << 40};
    ck_assert_int_eq(npy_alloc(&t, ISA_DT_U8, 2, big, &d), NPU_EINVAL);
    ck_assert_ptr_null(t.data);
}
END_TEST

/* Every allocation of load and save can fail, and each failure is a clean
 * ENOMEM (ASan checks that nothing leaks). */
START_TEST(t_alloc_failures)
{
    setup_tmp();
    npy_tensor t, u;
    npu_diag d = {0};
    int64_t shape[2] = {4, 4};
    ck_assert_int_eq(npy_alloc(&t, ISA_DT_BF16, 2, shape, &d), NPU_OK);
    char p[400], p2[400];
    snprintf(p, sizeof p, "%s", tpath("af.npy"));
    snprintf(p2, sizeof p2, "%s", tpath("af2.npy"));
    ck_assert_int_eq(npy_save(p, &t, &d), NPU_OK);
    int failures = 0;
    for (long k = 1; k < 64; k++) {
        npu_alloc_fail_after(k);
        npu_status s1 = npy_load(p, &u, &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (failed) {
            ck_assert_int_eq(s1, NPU_ENOMEM);
            ck_assert_ptr_null(u.data);
            failures++;
        } else {
            ck_assert_msg(s1 == NPU_OK, "k=%ld: %s", k, d.msg);
            npy_free(&u);
        }
        npu_alloc_fail_after(k);
        npu_status s2 = npy_save(p2, &t, &d);
        failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (failed)
            ck_assert_int_eq(s2, NPU_ENOMEM);
        else
            ck_assert_int_eq(s2, NPU_OK);
    }
    ck_assert(failures > 0);
    npy_free(&t);
    teardown_tmp();
}
END_TEST

/* Mutated and truncated images never crash and never succeed with a
 * tensor that disagrees with its header. */
START_TEST(t_mutations)
{
    uint8_t base[256];
    uint8_t data[32];
    for (int i = 0; i < 32; i++)
        data[i] = (uint8_t)i;
    size_t n = mkimg(base, 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 8), }         \n",
                     data, 32);
    npu_rng rng = {42};
    uint8_t img[256];
    int ok = 0;
    for (int k = 0; k < 20000; k++) {
        memcpy(img, base, n);
        size_t len = n;
        uint64_t r = npu_rng_next(&rng);
        int flips = 1 + (int)(r & 3);
        for (int f = 0; f < flips; f++) {
            uint64_t q = npu_rng_next(&rng);
            img[q % n] = (uint8_t)(q >> 16);
        }
        if ((r >> 8) & 1)
            len = (size_t)((r >> 16) % (n + 1));
        npy_tensor t;
        npu_diag d = {0};
        npu_status s = npy_load_mem(img, len, "m.npy", &t, &d);
        if (s == NPU_OK) {
            ck_assert_uint_eq((uint64_t)npy_numel(&t) * (uint64_t)isa_dtype_bytes(t.dtype), t.nbytes);
            ok++;
            npy_free(&t);
        } else {
            ck_assert_ptr_null(t.data);
            ck_assert(strncmp(d.msg, "m.npy: ", 7) == 0);
        }
    }
    ck_assert(ok > 0);
}
END_TEST

Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_write_exact_bytes);
    tcase_add_test(tc, t_roundtrip_dtypes);
    tcase_add_test(tc, t_descr_forms);
    tcase_add_test(tc, t_read_variants);
    tcase_add_test(tc, t_gzip_and_missing);
    tcase_add_test(tc, t_err_preamble);
    tcase_add_test(tc, t_err_syntax);
    tcase_add_test(tc, t_err_layout_dtype);
    tcase_add_test(tc, t_err_shape_data);
    tcase_add_test(tc, t_err_save);
    tcase_add_test(tc, t_alloc_failures);
    tcase_add_test(tc, t_mutations);
    suite_add_tcase(s, tc);
    return s;
}
