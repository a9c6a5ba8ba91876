/* ref_elementwise.c — golden data for kernels/elementwise.s: z = x + y,
 * z = gelu(x) (tanh form), z = silu(x), over a 1-D fp16 or fp32 tensor.
 *
 * The reference evaluates the same formula the kernel does, in double, and
 * rounds once to the output dtype:
 *   gelu(x) = x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3)))
 *           = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (same function)
 *   silu(x) = x / (1 + exp(-x))
 * The kernel computes in fp32 (fp16 inputs widened exactly, the result
 * rounded once to fp16), so the tolerances cover fp32 rounding of about 7
 * operations plus the output rounding; see docs/kernels.md. */
#include <math.h>
#include <string.h>

#include "kernels/ref/ref.h"

enum { OP_ADD = 1, OP_GELU = 2, OP_SILU = 3 };

static double gelu(double x)
{
    return x / (1.0 + exp(-2.0 * sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static double silu(double x) { return x / (1.0 + exp(-x)); }

npu_status ref_gen_elementwise(ref_ctx *c, npu_diag *d)
{
    const char *ops = ref_opt_str(c, "op", "add");
    int op = !strcmp(ops, "add") ? OP_ADD : !strcmp(ops, "gelu") ? OP_GELU : !strcmp(ops, "silu") ? OP_SILU : 0;
    if (!op)
        return npu_errf(d, NPU_EINVAL, "ref elementwise: --op %s: need add, gelu or silu", ops);
    isa_dtype dt;
    int64_t len, tile;
    npu_status st;
    if ((st = ref_opt_dtype(c, "dtype", ISA_DT_F16, (1u << ISA_DT_F16) | (1u << ISA_DT_F32), &dt, d)) ||
        (st = ref_opt_int(c, "len", 100000, &len, d)) || (st = ref_opt_int(c, "tile", 8192, &tile, d)))
        return st;
    if (len < 1 || len > (1ll << 30))
        return npu_errf(d, NPU_EINVAL, "ref elementwise: --len %lld: need 1..2^30", (long long)len);
    /* The kernel's limits (elementwise.s checks them too): a tile is one
     * vector instruction of at most 255 fp32 repeats (64 elements each),
     * a multiple of 64 elements so every tile but the last is whole blocks. */
    /* ... and the UB (192 KB) holds 2 slots of x (and y), plus for gelu/silu
     * three fp32 work buffers: 16 bytes an element except for fp16 add */
    int64_t tmax = op == OP_ADD && dt == ISA_DT_F16 ? 255 * 64 : 12160;
    if (tile < 64 || tile > tmax || tile % 64)
        return npu_errf(d, NPU_EINVAL, "ref elementwise: --tile %lld: need a multiple of 64 in 64..%lld",
                        (long long)tile, (long long)tmax);
    npu_rng *r = ref_rng(c);
    double lo = op == OP_ADD ? -8.0 : -6.0, hi = -lo;
    npy_tensor x, y, z;
    memset(&y, 0, sizeof y);
    if ((st = ref_rand(&x, dt, len, -1, r, lo, hi, d)))
        return st;
    if (op == OP_ADD && (st = ref_rand(&y, dt, len, -1, r, lo, hi, d))) {
        npy_free(&x);
        return st;
    }
    int64_t shape[1] = {len};
    if ((st = npy_alloc(&z, dt, 1, shape, d))) {
        npy_free(&x);
        npy_free(&y);
        return st;
    }
    for (int64_t i = 0; i < len; i++) {
        double a = ref_get(&x, i);
        double v = op == OP_ADD ? a + ref_get(&y, i) : op == OP_GELU ? gelu(a) : silu(a);
        ref_put(&z, i, v);
    }
    /* Tolerances (docs/kernels.md): add is one correctly rounded operation
     * (fp16: the f16 sum of two f16 values rounded through fp32 can differ
     * from the exact sum rounded once by one f16 ulp when their exponents
     * are far apart). gelu/silu: ~7 fp32 roundings, with exp amplifying the
     * relative error of its argument (|arg| <= ~20 here), below 1e-5
     * relative; fp16 adds one output rounding (2^-11) and a possible
     * one-ulp flip from a near-halfway fp32 result. atol covers results
     * that underflow toward zero (gelu(-6) ~ -4e-16). */
    double rtol, atol;
    const char *why;
    if (op == OP_ADD) {
        rtol = dt == ISA_DT_F16 ? 1e-3 : 1e-7;
        atol = dt == ISA_DT_F16 ? 1e-7 : 1e-30;
        why = dt == ISA_DT_F16 ? "one f16 ulp (2^-10): f16 add rounds its fp32 sum" : "fp32 add is correctly rounded";
    } else {
        rtol = dt == ISA_DT_F16 ? 2e-3 : 2e-5;
        atol = dt == ISA_DT_F16 ? 1e-7 : 1e-12;
        why = dt == ISA_DT_F16 ? "f16 output rounding (2^-11) + one-ulp flips from the fp32 pipeline"
                               : "~7 fp32 roundings, amplified by exp(|arg| <= 20)";
    }
    if ((st = ref_in(c, "x", &x, d)))
        goto fail;
    if (op == OP_ADD && (st = ref_in(c, "y", &y, d)))
        goto fail;
    if ((st = ref_out(c, "z", &z, rtol, atol, why, d)) || (st = ref_scalar(c, "n", len, d)))
        goto fail;
    if ((st = ref_define(c, "OP", op, d)) || (st = ref_define(c, "F32", dt == ISA_DT_F32, d)) ||
        (st = ref_define(c, "TILE", tile, d)))
        goto fail;
    ref_kernel(c, "elementwise.s");
    ref_note(c, "elementwise %s %s, n=%lld, tile=%lld elements: %s", ops, isa_dtype_suffix(dt), (long long)len,
             (long long)tile,
             op == OP_GELU ? "gelu(x) = x / (1 + exp(-2*sqrt(2/pi)*(x + 0.044715 x^3))) (tanh form)"
             : op == OP_SILU ? "silu(x) = x / (1 + exp(-x))" : "z = x + y");
    return NPU_OK;
fail:
    npy_free(&x);
    npy_free(&y);
    npy_free(&z);
    return st;
}
