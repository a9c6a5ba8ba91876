/* npy.c — NumPy .npy reader and writer (see npy.h, docs/numerics.md).
 *
 * File layout (numpy's format.py, NEP 1):
 *   "\x93NUMPY" major minor
 *   header length: uint16 LE (1.0) or uint32 LE (2.0, 3.0)
 *   header: a Python dict literal, ASCII (1.0, 2.0) or UTF-8 (3.0), e.g.
 *           {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 *           padded with spaces and a final '\n' so that the data starts on
 *           a 64-byte boundary
 *   data:   numel * itemsize bytes, C order.
 * The header is parsed by a small recursive-descent parser for the subset
 * of Python literals numpy writes (strings, ints, True/False/None, tuples,
 * lists, dicts); anything else is an error with the byte offset. */
#include "frontend/npy.h"

#include <stdio.h>
#include <string.h>

/* ---- dtype <-> descr --------------------------------------------------------- */

/* How each dtype is spelled on write, per style (see npy.h). */
static const char *const descr_mld[] = {
#define DT(id, suffix, bytes, kind, descr, doc) descr,
#include "isa/dtypes.def"
#undef DT
};

const char *npy_descr(isa_dtype dt, int style)
{
    switch (dt) {
    case ISA_DT_BF16: return style == NPY_DESCR_NAMED ? "bfloat16" : "<V2";
    case ISA_DT_E4M3: return style == NPY_DESCR_NAMED ? "float8_e4m3fn" : "<V1";
    case ISA_DT_E5M2: return style == NPY_DESCR_NAMED ? "float8_e5m2" : "<f1";
    default: break;
    }
    if ((unsigned)dt < NPU_ARRAY_LEN(descr_mld) && descr_mld[dt][0])
        return descr_mld[dt];
    return NULL;
}

/* descr type codes (without the byte-order character) we read. V2 and V1
 * are what numpy writes for ml_dtypes' bfloat16 and float8_e4m3fn (their
 * kind is 'V', void); f1 is float8_e5m2 (ml_dtypes gives it kind 'f').
 * A void of another width, or V1 meant as e5m2, cannot be told apart:
 * V1 reads as e4m3 (documented). */
static const struct { const char *code; isa_dtype dt; } code_map[] = {
    {"f4", ISA_DT_F32}, {"f2", ISA_DT_F16}, {"i4", ISA_DT_S32}, {"i2", ISA_DT_S16},
    {"i1", ISA_DT_S8},  {"u1", ISA_DT_U8},  {"u2", ISA_DT_U16}, {"u4", ISA_DT_U32},
    {"i8", ISA_DT_S64}, {"V2", ISA_DT_BF16}, {"V1", ISA_DT_E4M3}, {"f1", ISA_DT_E5M2},
};

static const struct { const char *name; isa_dtype dt; } named_map[] = {
    {"bfloat16", ISA_DT_BF16}, {"float8_e4m3fn", ISA_DT_E4M3}, {"float8_e5m2", ISA_DT_E5M2},
};

/* numpy names of codes we reject, to make the message useful. */
static const char *code_hint(const char *code)
{
    static const struct { const char *c, *n; } h[] = {
        {"f8", "float64"}, {"f16", "float128"}, {"c8", "complex64"}, {"c16", "complex128"},
        {"b1", "bool"},    {"u8", "uint64"},    {"O", "object"},     {"U", "unicode str"},
        {"S", "bytes"},    {"M8", "datetime64"}, {"m8", "timedelta64"},
    };
    for (unsigned i = 0; i < NPU_ARRAY_LEN(h); i++)
        if (strncmp(code, h[i].c, strlen(h[i].c)) == 0 &&
            (code[strlen(h[i].c)] == 0 || code[strlen(h[i].c)] == '['))
            return h[i].n;
    return NULL;
}

#define SUPPORTED_LIST                                                                 \
    "float32 '<f4', float16 '<f2', int32 '<i4', int16 '<i2', int8 '|i1', uint8 '|u1', " \
    "uint16 '<u2', uint32 '<u4', int64 '<i8', bfloat16 '<V2', float8_e4m3fn '<V1', "    \
    "float8_e5m2 '<f1'"

static npu_status descr_to_dtype(const char *name, const char *s, isa_dtype *dt, npu_diag *d)
{
    for (unsigned i = 0; i < NPU_ARRAY_LEN(named_map); i++)
        if (strcmp(s, named_map[i].name) == 0) {
            *dt = named_map[i].dt;
            return NPU_OK;
        }
    char order = '=';
    const char *code = s;
    if (*code == '<' || *code == '>' || *code == '|' || *code == '=')
        order = *code++;
    if (strcmp(code, "O") == 0 || strcmp(code, "O8") == 0)
        return npu_errf(d, NPU_EUNSUPP,
                        "%s: object arrays (descr '%s') are not supported: the data is a "
                        "pickle (numpy also saves non-legacy custom dtypes this way)",
                        name, s);
    for (unsigned i = 0; i < NPU_ARRAY_LEN(code_map); i++) {
        if (strcmp(code, code_map[i].code) != 0)
            continue;
        /* byte order matters only for multi-byte items; '=' is native and
         * this reader runs on little-endian hosts */
        if (order == '>' && isa_dtype_bytes(code_map[i].dt) > 1)
            return npu_errf(d, NPU_EUNSUPP,
                            "%s: big-endian dtype '%s' is not supported; save with "
                            "arr.astype(arr.dtype.newbyteorder('<'))",
                            name, s);
        *dt = code_map[i].dt;
        return NPU_OK;
    }
    const char *hint = code_hint(code);
    return npu_errf(d, NPU_EUNSUPP, "%s: dtype '%s'%s%s%s is not supported; supported: %s",
                    name, s, hint ? " (" : "", hint ? hint : "", hint ? ")" : "",
                    SUPPORTED_LIST);
}

/* ---- the header parser ---------------------------------------------------------- */

enum { PV_STR, PV_INT, PV_BOOL, PV_NONE, PV_TUPLE, PV_LIST, PV_DICT };

/* A parsed value: strings point into the header (not NUL-terminated);
 * tuples keep their first NPY_MAX_DIMS+1 items if they are ints. */
typedef struct pyval {
    int kind;
    const char *s;
    size_t slen;
    int64_t i;
    int int_overflow;
    int nitems;
    int all_int;
    int64_t items[NPY_MAX_DIMS + 1];
    int item_overflow;
} pyval;

typedef struct hparser {
    const char *name;
    const uint8_t *base;  /* start of the file, for offsets */
    const uint8_t *p, *end;
    npu_diag *d;
} hparser;

static npu_status perr(hparser *h, const char *what)
{
    return npu_errf(h->d, NPU_EFORMAT, "%s: header byte %zu: %s", h->name,
                    (size_t)(h->p - h->base), what);
}

static void skip_ws(hparser *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

static int at(hparser *h, char c)
{
    skip_ws(h);
    return h->p < h->end && *h->p == (uint8_t)c;
}

static int word(hparser *h, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n) != 0)
        return 0;
    const uint8_t *q = h->p + n;
    if (q < h->end && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                       (*q >= '0' && *q <= '9') || *q == '_'))
        return 0;
    h->p = q;
    return 1;
}

static npu_status parse_value(hparser *h, pyval *v, int depth);

/* Items of a tuple/list/dict up to the closing bracket `close`. */
static npu_status parse_seq(hparser *h, pyval *v, char close, int depth)
{
    v->nitems = 0;
    v->all_int = 1;
    h->p++;   /* the opening bracket */
    for (;;) {
        if (at(h, close)) {
            h->p++;
            return NPU_OK;
        }
        if (h->p >= h->end)
            return perr(h, close == ')' ? "unterminated tuple" : close == ']' ? "unterminated list"
                                                                               : "unterminated dict");
        pyval item;
        npu_status s = parse_value(h, &item, depth + 1);
        if (s)
            return s;
        if (close == '}') {
            if (!at(h, ':'))
                return perr(h, "expected ':' in dict");
            h->p++;
            pyval val;
            if ((s = parse_value(h, &val, depth + 1)))
                return s;
        }
        if (item.kind != PV_INT)
            v->all_int = 0;
        else if (v->nitems < NPY_MAX_DIMS + 1)
            v->items[v->nitems] = item.i;
        if (item.kind == PV_INT && item.int_overflow)
            v->item_overflow = 1;
        if (v->nitems < 1000000)
            v->nitems++;
        if (at(h, ',')) {
            h->p++;
            continue;
        }
        if (at(h, close))
            continue;
        return perr(h, close == ')' ? "expected ',' or ')' in tuple"
                    : close == ']'  ? "expected ',' or ']' in list"
                                    : "expected ',' or '}' in dict");
    }
}

static npu_status parse_value(hparser *h, pyval *v, int depth)
{
    memset(v, 0, sizeof *v);
    if (depth > 32)
        return perr(h, "nested too deeply");
    skip_ws(h);
    if (h->p >= h->end)
        return perr(h, "unexpected end of header");
    uint8_t c = *h->p;
    if (c == '\'' || c == '"') {
        const uint8_t *q = ++h->p;
        while (h->p < h->end && *h->p != c) {
            if (*h->p == '\\')
                return perr(h, "escape sequences in strings are not supported");
            if (*h->p == '\n')
                return perr(h, "unterminated string");
            h->p++;
        }
        if (h->p >= h->end)
            return perr(h, "unterminated string");
        v->kind = PV_STR;
        v->s = (const char *)q;
        v->slen = (size_t)(h->p - q);
        h->p++;
        return NPU_OK;
    }
    if (c == '(' || c == '[' || c == '{') {
        v->kind = c == '(' ? PV_TUPLE : c == '[' ? PV_LIST : PV_DICT;
        return parse_seq(h, v, c == '(' ? ')' : c == '[' ? ']' : '}', depth);
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
        int neg = c == '-';
        if (c == '-' || c == '+')
            h->p++;
        if (h->p >= h->end || *h->p < '0' || *h->p > '9')
            return perr(h, "expected a digit");
        uint64_t x = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            if (x > (UINT64_MAX - 9) / 10)
                v->int_overflow = 1;
            else
                x = x * 10 + (uint64_t)(*h->p - '0');
            h->p++;
        }
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l'))   /* Python 2 long */
            h->p++;
        if (h->p < h->end && (*h->p == '.' || *h->p == 'e' || *h->p == 'E' || *h->p == 'x'))
            return perr(h, "only decimal integers are supported");
        if (x > (uint64_t)INT64_MAX)
            v->int_overflow = 1;
        v->kind = PV_INT;
        v->i = v->int_overflow ? (neg ? INT64_MIN : INT64_MAX) : (neg ? -(int64_t)x : (int64_t)x);
        return NPU_OK;
    }
    if (word(h, "True")) {
        v->kind = PV_BOOL;
        v->i = 1;
        return NPU_OK;
    }
    if (word(h, "False")) {
        v->kind = PV_BOOL;
        return NPU_OK;
    }
    if (word(h, "None")) {
        v->kind = PV_NONE;
        return NPU_OK;
    }
    return perr(h, "expected a Python literal (string, integer, True/False, tuple)");
}

/* ---- load ------------------------------------------------------------------------- */

/* Parse the whole file image; on success *off is where the data starts. */
static npu_status parse_file(const uint8_t *b, size_t len, const char *name, npy_tensor *t,
                             size_t *off, npu_diag *d)
{
    static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    memset(t, 0, sizeof *t);
    if (len < 6 || memcmp(b, magic, 6) != 0)
        return npu_errf(d, NPU_EFORMAT, "%s: not a .npy file (bad magic: expected \\x93NUMPY)",
                        name);
    if (len < 10)
        return npu_errf(d, NPU_EFORMAT, "%s: truncated: %zu bytes, too short for a .npy preamble",
                        name, len);
    int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return npu_errf(d, NPU_EUNSUPP,
                        "%s: .npy format version %d.%d is not supported (1.0, 2.0 and 3.0 are)",
                        name, major, minor);
    size_t hstart, hlen;
    if (major == 1) {
        hstart = 10;
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
    } else {
        if (len < 12)
            return npu_errf(d, NPU_EFORMAT, "%s: truncated: %zu bytes, too short for a .npy "
                            "%d.0 preamble", name, len, major);
        hstart = 12;
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    }
    if (hlen > len - hstart)
        return npu_errf(d, NPU_EFORMAT,
                        "%s: truncated header: it declares %zu bytes, the file has %zu after "
                        "the preamble",
                        name, hlen, len - hstart);
    for (size_t i = 0; i < hlen; i++) {
        uint8_t c = b[hstart + i];
        /* 1.0 and 2.0 headers are latin-1/ASCII, 3.0 UTF-8; our keys and
         * values are all ASCII, so a non-ASCII byte can only sit inside a
         * string we reject anyway; control bytes are never valid */
        if (c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t'))
            return npu_errf(d, NPU_EFORMAT, "%s: header byte %zu: control character 0x%02x",
                            name, hstart + i, c);
    }
    hparser h = {name, b, b + hstart, b + hstart + hlen, d};
    skip_ws(&h);
    if (!at(&h, '{'))
        return perr(&h, "the header is not a dict (expected '{')");
    /* walk the top-level dict ourselves to pick out the three keys */
    h.p++;
    pyval descr = {0}, fo = {0}, shape = {0};
    int have_descr = 0, have_fo = 0, have_shape = 0;
    for (;;) {
        if (at(&h, '}')) {
            h.p++;
            break;
        }
        if (h.p >= h.end)
            return perr(&h, "unterminated dict");
        const uint8_t *keypos = h.p;
        pyval key, val;
        npu_status s = parse_value(&h, &key, 1);
        if (s)
            return s;
        if (key.kind != PV_STR) {
            h.p = keypos;
            return perr(&h, "dict keys must be strings");
        }
        if (!at(&h, ':'))
            return perr(&h, "expected ':' after key");
        h.p++;
        if ((s = parse_value(&h, &val, 1)))
            return s;
        int *have = NULL;
        pyval *dst = NULL;
        if (key.slen == 5 && memcmp(key.s, "descr", 5) == 0) {
            have = &have_descr;
            dst = &descr;
        } else if (key.slen == 13 && memcmp(key.s, "fortran_order", 13) == 0) {
            have = &have_fo;
            dst = &fo;
        } else if (key.slen == 5 && memcmp(key.s, "shape", 5) == 0) {
            have = &have_shape;
            dst = &shape;
        } else {
            h.p = keypos;
            return npu_errf(d, NPU_EFORMAT,
                            "%s: header byte %zu: unknown key '%.*s' (a .npy header has exactly "
                            "'descr', 'fortran_order' and 'shape')",
                            name, (size_t)(keypos - b), (int)NPU_MIN(key.slen, 64), key.s);
        }
        if (*have) {
            h.p = keypos;
            return npu_errf(d, NPU_EFORMAT, "%s: header byte %zu: duplicate key '%.*s'", name,
                            (size_t)(keypos - b), (int)key.slen, key.s);
        }
        *have = 1;
        *dst = val;
        if (at(&h, ',')) {
            h.p++;
            continue;
        }
        if (!at(&h, '}'))
            return perr(&h, h.p >= h.end ? "unterminated dict" : "expected ',' or '}' in dict");
    }
    skip_ws(&h);
    if (h.p != h.end)
        return perr(&h, "unexpected text after the header dict");
    if (!have_descr || !have_fo || !have_shape)
        return npu_errf(d, NPU_EFORMAT, "%s: header lacks the key '%s'", name,
                        !have_descr ? "descr" : !have_fo ? "fortran_order" : "shape");

    /* descr */
    if (descr.kind == PV_LIST)
        return npu_errf(d, NPU_EUNSUPP,
                        "%s: structured dtypes (descr is a list of fields) are not supported",
                        name);
    if (descr.kind != PV_STR)
        return npu_errf(d, NPU_EFORMAT, "%s: 'descr' must be a string", name);
    char dstr[64];
    if (descr.slen >= sizeof dstr)
        return npu_errf(d, NPU_EUNSUPP, "%s: dtype '%.40s...' is not supported", name, descr.s);
    memcpy(dstr, descr.s, descr.slen);
    dstr[descr.slen] = 0;
    npu_status s = descr_to_dtype(name, dstr, &t->dtype, d);
    if (s)
        return s;

    /* fortran_order */
    if (fo.kind != PV_BOOL)
        return npu_errf(d, NPU_EFORMAT, "%s: 'fortran_order' must be True or False", name);

    /* shape */
    if (shape.kind != PV_TUPLE || !shape.all_int)
        return npu_errf(d, NPU_EFORMAT, "%s: 'shape' must be a tuple of integers", name);
    if (shape.nitems > NPY_MAX_DIMS)
        return npu_errf(d, NPU_EUNSUPP, "%s: %d dimensions; at most %d are supported", name,
                        shape.nitems, NPY_MAX_DIMS);
    uint64_t isz = (uint64_t)isa_dtype_bytes(t->dtype);
    uint64_t nbytes = isz;
    for (int i = 0; i < shape.nitems; i++) {
        int64_t n = shape.items[i];
        if (n < 0)
            return npu_errf(d, NPU_EFORMAT, "%s: shape[%d] = %lld is negative", name, i,
                            (long long)n);
        if (shape.item_overflow)
            return npu_errf(d, NPU_EFORMAT, "%s: shape has a dimension beyond 2^63", name);
        t->shape[i] = n;
    }
    t->ndim = shape.nitems;
    /* Fortran order is the same byte layout as C order when at most one
     * dimension exceeds 1 (vectors, (1, n), (n, 1)), so only reject the
     * files whose data really is transposed. */
    if (fo.i) {
        int big = 0;
        for (int i = 0; i < t->ndim; i++)
            big += t->shape[i] > 1;
        if (big > 1)
            return npu_errf(d, NPU_EUNSUPP,
                            "%s: fortran_order=True is not supported; save with "
                            "np.ascontiguousarray",
                            name);
    }
    /* product with an overflow check at every step, against the limit */
    int zero = 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            zero = 1;
    if (zero) {
        nbytes = 0;
    } else {
        for (int i = 0; i < t->ndim; i++) {
            uint64_t n = (uint64_t)t->shape[i];
            if (nbytes > (uint64_t)NPY_MAX_NBYTES / n)
                return npu_errf(d, NPU_EUNSUPP,
                                "%s: shape too large: more than %zu bytes of data (the limit)",
                                name, NPY_MAX_NBYTES);
            nbytes *= n;
        }
    }
    size_t doff = hstart + hlen;
    size_t have = len - doff;
    if (have < nbytes)
        return npu_errf(d, NPU_EFORMAT,
                        "%s: truncated data: shape needs %llu bytes of %s after the %zu-byte "
                        "header, the file has %zu",
                        name, (unsigned long long)nbytes, isa_dtype_suffix(t->dtype), doff, have);
    if (have > nbytes)
        return npu_errf(d, NPU_EFORMAT,
                        "%s: %zu bytes of trailing data after the %llu bytes the shape needs",
                        name, have - (size_t)nbytes, (unsigned long long)nbytes);
    t->nbytes = (size_t)nbytes;
    *off = doff;
    return NPU_OK;
}

npu_status npy_load_mem(const void *buf, size_t len, const char *name, npy_tensor *t,
                        npu_diag *d)
{
    size_t off;
    npu_status s = parse_file(buf, len, name, t, &off, d);
    if (s) {
        memset(t, 0, sizeof *t);
        return s;
    }
    t->data = npu_malloc(t->nbytes);
    if (!t->data) {
        memset(t, 0, sizeof *t);
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory for %zu bytes of data", name,
                        len - off);
    }
    if (t->nbytes)
        memcpy(t->data, (const uint8_t *)buf + off, t->nbytes);
    return NPU_OK;
}

npu_status npy_load(const char *path, npy_tensor *t, npu_diag *d)
{
    memset(t, 0, sizeof *t);
    uint8_t *buf;
    size_t len;
    npu_status s = npu_read_file(path, 1, NPY_MAX_NBYTES + 65536 * 4, &buf, &len, d);
    if (s)
        return s;
    size_t off;
    s = parse_file(buf, len, path, t, &off, d);
    if (s) {
        npu_free(buf);
        memset(t, 0, sizeof *t);
        return s;
    }
    /* reuse the file buffer: move the data to its start (keeps npu_malloc
     * alignment) instead of holding two copies */
    memmove(buf, buf + off, t->nbytes);
    t->data = buf;
    return NPU_OK;
}

/* ---- save -------------------------------------------------------------------------- */

static npu_status check_tensor(const npy_tensor *t, const char *name, uint64_t *nbytes,
                               npu_diag *d)
{
    if ((unsigned)t->dtype >= ISA_DT_COUNT)
        return npu_errf(d, NPU_EINVAL, "%s: tensor has no valid dtype (%d)", name, (int)t->dtype);
    if (t->ndim < 0 || t->ndim > NPY_MAX_DIMS)
        return npu_errf(d, NPU_EINVAL, "%s: tensor has %d dimensions (0..%d allowed)", name,
                        t->ndim, NPY_MAX_DIMS);
    uint64_t n = (uint64_t)isa_dtype_bytes(t->dtype);
    int zero = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return npu_errf(d, NPU_EINVAL, "%s: shape[%d] = %lld is negative", name, i,
                            (long long)t->shape[i]);
        if (t->shape[i] == 0)
            zero = 1;
    }
    for (int i = 0; i < t->ndim && !zero; i++) {
        if (n > (uint64_t)NPY_MAX_NBYTES / (uint64_t)t->shape[i])
            return npu_errf(d, NPU_EINVAL, "%s: tensor larger than %zu bytes", name,
                            NPY_MAX_NBYTES);
        n *= (uint64_t)t->shape[i];
    }
    if (zero)
        n = 0;
    if (n != t->nbytes)
        return npu_errf(d, NPU_EINVAL, "%s: nbytes is %zu but the shape needs %llu", name,
                        t->nbytes, (unsigned long long)n);
    if (n && !t->data)
        return npu_errf(d, NPU_EINVAL, "%s: tensor has no data", name);
    *nbytes = n;
    return NPU_OK;
}

static npu_status encode_named(const npy_tensor *t, int style, const char *name, npu_buf *out,
                               npu_diag *d)
{
    uint64_t nbytes;
    npu_status s = check_tensor(t, name, &nbytes, d);
    if (s)
        return s;
    const char *descr = npy_descr(t->dtype, style);
    if (!descr)
        return npu_errf(d, NPU_EUNSUPP, "%s: dtype %s has no .npy descr", name,
                        isa_dtype_suffix(t->dtype));
    /* the dict exactly as numpy's repr-based writer spells it */
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr);
    for (int i = 0; i < t->ndim; i++)
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, i ? ", %lld" : "%lld",
                      (long long)t->shape[i]);
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, t->ndim == 1 ? ",), }" : "), }");
    /* Byte for byte what numpy >= 1.24 writes (format.py _write_array_header
     * and _wrap_header): room for the first axis to grow in place to
     * GROWTH_AXIS_MAX_DIGITS (21) digits, then spaces and '\n' so that the
     * data starts on a 64-byte boundary; numpy pads a full 64 bytes when the
     * header happens to end on a boundary already, and so do we. */
    if (t->ndim > 0) {
        char first[24];
        int fl = snprintf(first, sizeof first, "%lld", (long long)t->shape[0]);
        for (int i = fl; i < 21; i++)
            hdr[n++] = ' ';
        hdr[n] = 0;
    }
    /* version 1.0 unless the padded header exceeds its 16-bit length */
    size_t pre = 10;
    size_t hcore = (size_t)n + 1;
    size_t hlen = hcore + 64 - (pre + hcore) % 64;
    int major = 1;
    if (hlen > 65535) {
        major = 2;
        pre = 12;
        hlen = hcore + 64 - (pre + hcore) % 64;
    }
    uint8_t preamble[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (uint8_t)major, 0};
    if (major == 1) {
        preamble[8] = (uint8_t)hlen;
        preamble[9] = (uint8_t)(hlen >> 8);
    } else {
        for (int i = 0; i < 4; i++)
            preamble[8 + i] = (uint8_t)(hlen >> (8 * i));
    }
    int bad = npu_buf_append(out, preamble, pre);
    bad |= npu_buf_append(out, hdr, (size_t)n);
    for (size_t i = (size_t)n; i + 1 < hlen; i++)
        bad |= npu_buf_append(out, " ", 1);
    bad |= npu_buf_append(out, "\n", 1);
    if (nbytes)
        bad |= npu_buf_append(out, t->data, (size_t)nbytes);
    if (bad)
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory encoding %llu bytes", name,
                        (unsigned long long)nbytes);
    return NPU_OK;
}

npu_status npy_encode(const npy_tensor *t, int style, npu_buf *out, npu_diag *d)
{
    return encode_named(t, style, "npy", out, d);
}

npu_status npy_save_ex(const char *path, const npy_tensor *t, int style, npu_diag *d)
{
    npu_buf b = {0};
    npu_status s = encode_named(t, style, path, &b, d);
    if (!s)
        s = npu_write_file_atomic(path, b.data, b.len, d);
    npu_buf_free(&b);
    return s;
}

npu_status npy_save(const char *path, const npy_tensor *t, npu_diag *d)
{
    return npy_save_ex(path, t, NPY_DESCR_MLDTYPES, d);
}

/* ---- helpers -------------------------------------------------------------------------- */

npu_status npy_alloc(npy_tensor *t, isa_dtype dtype, int ndim, const int64_t *shape,
                     npu_diag *d)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim && i < NPY_MAX_DIMS; i++)
        t->shape[i] = shape[i];
    uint64_t n;
    /* check_tensor compares against nbytes: compute it the same way first */
    if ((unsigned)dtype >= ISA_DT_COUNT || ndim < 0 || ndim > NPY_MAX_DIMS) {
        memset(t, 0, sizeof *t);
        return npu_errf(d, NPU_EINVAL, "npy_alloc: bad dtype %d or ndim %d", (int)dtype, ndim);
    }
    n = (uint64_t)isa_dtype_bytes(dtype);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            memset(t, 0, sizeof *t);
            return npu_errf(d, NPU_EINVAL, "npy_alloc: shape[%d] = %lld is negative", i,
                            (long long)shape[i]);
        }
        if (shape[i] == 0) {
            n = 0;
            break;
        }
        if (n > (uint64_t)NPY_MAX_NBYTES / (uint64_t)shape[i]) {
            memset(t, 0, sizeof *t);
            return npu_errf(d, NPU_EINVAL, "npy_alloc: tensor larger than %zu bytes",
                            NPY_MAX_NBYTES);
        }
        n *= (uint64_t)shape[i];
    }
    t->nbytes = (size_t)n;
    t->data = npu_calloc(1, t->nbytes ? t->nbytes : 1);
    if (!t->data) {
        memset(t, 0, sizeof *t);
        return npu_errf(d, NPU_ENOMEM, "npy_alloc: out of memory for %llu bytes",
                        (unsigned long long)n);
    }
    return NPU_OK;
}

void npy_free(npy_tensor *t)
{
    if (!t)
        return;
    npu_free(t->data);
    memset(t, 0, sizeof *t);
}

int64_t npy_numel(const npy_tensor *t)
{
    /* A zero dimension first: (2^62, 4, 0) is a valid empty tensor, and
     * multiplying in order would overflow before reaching the 0. Without
     * one, the product is nbytes / dtype size, which the loader bounds. */
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] == 0)
            return 0;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}
