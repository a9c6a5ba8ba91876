/* ref_softmax.c — golden data for kernels/softmax.s: row softmax of a
 * rows x len matrix, fp32 or fp16.
 *
 * Reference, in double from the (rounded) inputs: m = max_j x[j],
 * e[j] = exp(x[j] - m), y[j] = e[j] / sum_j e[j], rounded once to the
 * output dtype. The kernel computes in fp32 (fp16 inputs widened exactly):
 * x - m is one fp32 rounding (relative 2^-24 of |x - m| <= 16 here, so
 * exp's result moves by up to 16 * 2^-24 ~ 1e-6 relative), exp and the
 * division one rounding each, and the sum a pairwise fp32 tree (relative
 * error <= log2(len) * 2^-24 ~ 1e-6); rows longer than 8192 add one
 * rescale s * exp(m - m') and one add per 8192-element chunk (<= 32 chunks:
 * ~2e-6). Hence rtol 1e-5 for fp32; fp16 adds
 * one output rounding (2^-11) -> rtol 2e-3. Outputs are in (0, 1]; atol
 * covers the smallest (exp(-16)/len ~ 1e-10). */
#include <math.h>
#include <string.h>

#include "kernels/ref/ref.h"

npu_status ref_gen_softmax(ref_ctx *c, npu_diag *d)
{
    isa_dtype dt;
    int64_t rows, len;
    npu_status st;
    if ((st = ref_opt_dtype(c, "dtype", ISA_DT_F32, (1u << ISA_DT_F16) | (1u << ISA_DT_F32), &dt, d)) ||
        (st = ref_opt_int(c, "rows", 64, &rows, d)) || (st = ref_opt_int(c, "len", 1000, &len, d)))
        return st;
    if (rows < 1 || rows > (1 << 20))
        return npu_errf(d, NPU_EINVAL, "ref softmax: --rows %lld: need 1..2^20", (long long)rows);
    /* rows longer than 8192 take softmax.s's two-pass chunked path; the
     * bound keeps the reference (and the test data) small */
    if (len < 1 || len > (1 << 18))
        return npu_errf(d, NPU_EINVAL, "ref softmax: --len %lld: need 1..262144", (long long)len);
    npy_tensor x, y;
    memset(&y, 0, sizeof y);
    if ((st = ref_rand(&x, dt, rows, len, ref_rng(c), -8.0, 8.0, d)))
        return st;
    int64_t shape[2] = {rows, len};
    if ((st = npy_alloc(&y, dt, 2, shape, d))) {
        npy_free(&x);
        return st;
    }
    for (int64_t r = 0; r < rows; r++) {
        const int64_t o = r * len;
        double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < len; j++)
            m = fmax(m, ref_get(&x, o + j));
        for (int64_t j = 0; j < len; j++)
            s += exp(ref_get(&x, o + j) - m);
        for (int64_t j = 0; j < len; j++)
            ref_put(&y, o + j, exp(ref_get(&x, o + j) - m) / s);
        ref_progress(c, (double)(r + 1) / (double)rows);
    }
    int f16 = dt == ISA_DT_F16;
    if ((st = ref_in(c, "x", &x, d)))
        goto fail;
    if ((st = ref_out(c, "y", &y, f16 ? 2e-3 : 1e-5, f16 ? 1e-6 : 1e-10,
                      f16 ? "f16 output rounding (2^-11) over an fp32 pipeline"
                          : "fp32 roundings of x-m (amplified by exp, |x-m| <= 16), exp, pairwise sum, divide",
                      d)))
        return st;
    if ((st = ref_scalar(c, "rows", rows, d)) || (st = ref_scalar(c, "len", len, d)) ||
        (st = ref_define(c, "F16", f16, d)))
        return st;
    ref_kernel(c, "softmax.s");
    ref_note(c, "softmax over rows: %lld x %lld %s, y = exp(x - max) / sum(exp(x - max))", (long long)rows,
             (long long)len, isa_dtype_suffix(dt));
    return NPU_OK;
fail:
    npy_free(&x);
    npy_free(&y);
    return st;
}
