/* ref_layernorm.c — golden data for kernels/layernorm.s: layer
 * normalisation of each row of a rows x len matrix, fp32 or fp16:
 *   y = (x - mean) / sqrt(var + eps) * gamma + beta,
 *   mean = sum x / len, var = sum (x - mean)^2 / len (population variance).
 *
 * Reference in double from the rounded inputs, rounded once to the output
 * dtype. The kernel computes in fp32 (fp16 widened exactly): pairwise fp32
 * sums (relative error <= log2(len) * 2^-24), the centring, the square,
 * vrsqrt (one rounding) and three more roundings (* rstd, * gamma, + beta).
 * With |x| <= 7 (a per-row offset), |gamma|, |beta| <= 2 and unit-scale
 * xhat, every term is a few
 * fp32 ulps of a value <= ~20, so |err| <= ~1e-5 absolute; rtol 1e-5, atol
 * 2e-5 for fp32 (atol for results near zero, where beta cancels
 * xhat*gamma). fp16 adds the output rounding (2^-11 relative) and the
 * cancellation of rounded terms: rtol 2e-3, atol 4e-3 (one f16 ulp at
 * magnitude 8). */
#include <math.h>
#include <string.h>

#include "kernels/ref/ref.h"

npu_status ref_gen_layernorm(ref_ctx *c, npu_diag *d)
{
    isa_dtype dt;
    int64_t rows, len, eps_e9;
    npu_status st;
    if ((st = ref_opt_dtype(c, "dtype", ISA_DT_F32, (1u << ISA_DT_F16) | (1u << ISA_DT_F32), &dt, d)) ||
        (st = ref_opt_int(c, "rows", 64, &rows, d)) || (st = ref_opt_int(c, "len", 768, &len, d)) ||
        (st = ref_opt_int(c, "eps_e9", 10000, &eps_e9, d)))
        return st;
    if (rows < 1 || rows > (1 << 20))
        return npu_errf(d, NPU_EINVAL, "ref layernorm: --rows %lld: need 1..2^20", (long long)rows);
    if (len < 1 || len > 8192)   /* layernorm.s: a row in one counter-mode op */
        return npu_errf(d, NPU_EINVAL, "ref layernorm: --len %lld: need 1..8192", (long long)len);
    if (eps_e9 < 0 || eps_e9 > 1000000000)
        return npu_errf(d, NPU_EINVAL, "ref layernorm: --eps_e9 %lld: need 0..1e9 (eps in units of 1e-9)",
                        (long long)eps_e9);
    /* eps as the kernel sees it: fp32 */
    uint8_t eb[4];
    isa_fp_store(ISA_DT_F32, eb, (double)eps_e9 * 1e-9, ISA_RM_RNE, 1);
    uint32_t eps_bits = (uint32_t)eb[0] | (uint32_t)eb[1] << 8 | (uint32_t)eb[2] << 16 | (uint32_t)eb[3] << 24;
    double eps = isa_fp_load(ISA_DT_F32, eb);
    npy_tensor x, g, b, y;
    memset(&g, 0, sizeof g);
    memset(&b, 0, sizeof b);
    memset(&y, 0, sizeof y);
    npu_rng *r = ref_rng(c);
    int64_t shape[2] = {rows, len};
    if ((st = ref_rand(&x, dt, rows, len, r, -4.0, 4.0, d)) || (st = ref_rand(&g, dt, len, -1, r, -2.0, 2.0, d)) ||
        (st = ref_rand(&b, dt, len, -1, r, -2.0, 2.0, d)) || (st = npy_alloc(&y, dt, 2, shape, d)))
        goto fail;
    /* a per-row offset, so the centring matters (mean far from 0) */
    for (int64_t i = 0; i < rows; i++) {
        double off = (double)(i % 7) - 3.0;
        for (int64_t j = 0; j < len; j++)
            ref_put(&x, i * len + j, ref_get(&x, i * len + j) + off);
    }
    for (int64_t i = 0; i < rows; i++) {
        const int64_t o = i * len;
        double s = 0, v = 0;
        for (int64_t j = 0; j < len; j++)
            s += ref_get(&x, o + j);
        double mean = s / (double)len;
        for (int64_t j = 0; j < len; j++) {
            double t = ref_get(&x, o + j) - mean;
            v += t * t;
        }
        double rstd = 1.0 / sqrt(v / (double)len + eps);
        for (int64_t j = 0; j < len; j++)
            ref_put(&y, o + j, (ref_get(&x, o + j) - mean) * rstd * ref_get(&g, j) + ref_get(&b, j));
        ref_progress(c, (double)(i + 1) / (double)rows);
    }
    int f16 = dt == ISA_DT_F16;
    if ((st = ref_in(c, "x", &x, d)))
        goto fail;
    memset(&x, 0, sizeof x);
    if ((st = ref_in(c, "gamma", &g, d)))
        goto fail;
    memset(&g, 0, sizeof g);
    if ((st = ref_in(c, "beta", &b, d)))
        goto fail;
    memset(&b, 0, sizeof b);
    st = ref_out(c, "y", &y, f16 ? 2e-3 : 1e-5, f16 ? 4e-3 : 2e-5,
                 f16 ? "f16 output rounding (2^-11) and cancellation of xhat*gamma against beta (f16 ulp at 8)"
                     : "fp32 sums, centring, rsqrt and 3 roundings of values <= ~20 (a few fp32 ulps absolute)",
                 d);
    memset(&y, 0, sizeof y);
    if (st || (st = ref_scalar(c, "rows", rows, d)) || (st = ref_scalar(c, "len", len, d)) ||
        (st = ref_scalar(c, "eps_bits", eps_bits, d)) || (st = ref_define(c, "F16", f16, d)))
        goto fail;
    ref_kernel(c, "layernorm.s");
    ref_note(c, "layernorm over rows: %lld x %lld %s, eps %g: y = (x - mean) / sqrt(var + eps) * gamma + beta",
             (long long)rows, (long long)len, isa_dtype_suffix(dt), eps);
    return NPU_OK;
fail:
    npy_free(&x);
    npy_free(&g);
    npy_free(&b);
    npy_free(&y);
    return st;
}
