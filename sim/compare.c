/* compare.c — output tensors against golden ones (rtol/atol), the numerics
 * check of `npusim run --expect` and `npusim check`. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"  /* first: config.h must see the dtype enum before isa.h */
#include "frontend/npy.h"

/* flat index i of a tensor of ndim dimensions shape as a multi-dimensional index */
static void unflatten(int64_t i, const int64_t *shape, int ndim, int64_t *out)
{
    for (int k = ndim - 1; k >= 0; k--) {
        int64_t dim = shape[k] ? shape[k] : 1;
        out[k] = i % dim;
        i /= dim;
    }
}

npu_status npu_compare(const struct npy_tensor *got, const struct npy_tensor *want, double rtol,
                       double atol, npu_cmp_result *r, npu_diag *d)
{
    memset(r, 0, sizeof *r);
    if (got->ndim != want->ndim)
        return npu_errf(d, NPU_EINVAL, "shape mismatch: %d dimensions vs %d in the expected tensor",
                        got->ndim, want->ndim);
    for (int i = 0; i < got->ndim; i++)
        if (got->shape[i] != want->shape[i])
            return npu_errf(d, NPU_EINVAL,
                            "shape mismatch: dimension %d is %" PRId64 " but %" PRId64
                            " in the expected tensor",
                            i, got->shape[i], want->shape[i]);
    if (!(rtol >= 0) || !(atol >= 0))
        return npu_errf(d, NPU_EINVAL, "rtol and atol must be >= 0");
    int64_t n = npy_numel(got);
    int gs = isa_dtype_bytes(got->dtype), ws = isa_dtype_bytes(want->dtype);
    if (gs <= 0 || ws <= 0)
        return npu_errf(d, NPU_EINVAL, "compare: unknown dtype");
    if ((uint64_t)n * (uint64_t)gs > got->nbytes || (uint64_t)n * (uint64_t)ws > want->nbytes)
        return npu_errf(d, NPU_EINVAL, "compare: tensor data shorter than its shape");
    r->numel = (uint64_t)n;
    r->ndim = got->ndim;
    r->rtol = rtol;
    r->atol = atol;
    int64_t rel_i = -1;
    const uint8_t *gp = got->data, *wp = want->data;
    for (int64_t i = 0; i < n; i++) {
        double g = isa_fp_load(got->dtype, gp + (size_t)i * (size_t)gs);
        double w = isa_fp_load(want->dtype, wp + (size_t)i * (size_t)ws);
        int bad;
        double diff;
        if (isnan(g) || isnan(w)) {
            bad = isnan(g) != isnan(w);
            diff = bad ? INFINITY : 0;
        } else if (isinf(g) || isinf(w)) {
            bad = g != w;
            diff = bad ? INFINITY : 0;
        } else {
            diff = fabs(g - w);
            bad = diff > atol + rtol * fabs(w);
        }
        if (diff > r->max_abs)
            r->max_abs = diff;
        if (w != 0 && !isnan(w)) {
            double rel = diff / fabs(w);
            if (rel > r->max_rel) {
                r->max_rel = rel;
                r->max_rel_got = g;
                r->max_rel_want = w;
                rel_i = i;
            }
        }
        if (bad) {
            if (r->mismatches == 0) {
                r->first_flat = (uint64_t)i;
                r->first_got = g;
                r->first_want = w;
                unflatten(i, got->shape, got->ndim, r->first);
            }
            r->mismatches++;
        }
    }
    if (rel_i >= 0)
        unflatten(rel_i, got->shape, got->ndim, r->max_rel_at);
    r->pass = r->mismatches == 0;
    return NPU_OK;
}

/* "[i, j]" of a multi-dimensional index */
static void fmt_index(const int64_t *ix, int ndim, char *buf, size_t n)
{
    size_t l = 0;
    buf[0] = 0;
    for (int k = 0; k < ndim && l + 24 < n; k++)
        l += (size_t)snprintf(buf + l, n - l, "%s%" PRId64, k ? ", " : "", ix[k]);
}

void npu_compare_format(const npu_cmp_result *r, char *buf, size_t n)
{
    char idx[200];
    if (r->pass) {
        int l = snprintf(buf, n, "pass: 0 of %" PRIu64 " elements mismatch, max abs err %.3g, max rel err %.3g",
                         r->numel, r->max_abs, r->max_rel);
        if (r->max_rel > r->rtol && l > 0 && (size_t)l < n) {
            /* a relative error past rtol passed on atol: say where, so
             * that it reads as the near-zero reference it is */
            fmt_index(r->max_rel_at, r->ndim, idx, sizeof idx);
            snprintf(buf + l, n - (size_t)l, " at [%s] (got %.3g, want %.3g: within atol)", idx,
                     r->max_rel_got, r->max_rel_want);
        }
        return;
    }
    fmt_index(r->first, r->ndim, idx, sizeof idx);
    snprintf(buf, n,
             "FAIL: %" PRIu64 " of %" PRIu64 " elements mismatch, max abs err %.3g, max rel err %.3g, "
             "first at [%s]: got %.9g, want %.9g",
             r->mismatches, r->numel, r->max_abs, r->max_rel, idx, r->first_got, r->first_want);
}
