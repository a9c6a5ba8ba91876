/* ref_attention.c — golden data for kernels/attention.s (flash-style
 * attention forward):
 *   O[b] = softmax(scale * Q[b] K[b]^T (+ causal: -inf where key > query)) V[b]
 * Q [BH][Sq][HD], K and V [BH][Sk][HD] fp16; O fp16 or fp32; scale =
 * 1/sqrt(HD) rounded to fp32 (the kernel's scalar argument).
 *
 * The reference is the plain two-pass softmax in double. The kernel's
 * dominant error: P is rounded to fp16 before P V (as on real flash
 * kernels) while the row sum l uses the fp32 P, so each output moves by at
 * most 2^-11 * sum_j p_j |v_j| / l <= 2^-11 * max|V|; the fp32 scores,
 * exp and rescaling add ~1e-6 relative. atol is 1.1 * 2^-11 * max|V| +
 * 1e-6; rtol 1e-5 (fp32 out) or 1e-3 (fp16 out: one more rounding of
 * 2^-11 relative). */
#include <math.h>
#include <string.h>

#include "kernels/ref/ref.h"

npu_status ref_gen_attention(ref_ctx *c, npu_diag *d)
{
    int64_t bh, sq, sk, hd, causal;
    isa_dtype out;
    npu_status st;
    if ((st = ref_opt_int(c, "bh", 2, &bh, d)) || (st = ref_opt_int(c, "sq", 128, &sq, d)) ||
        (st = ref_opt_int(c, "sk", -1, &sk, d)) || (st = ref_opt_int(c, "hd", 64, &hd, d)) ||
        (st = ref_opt_int(c, "causal", 0, &causal, d)) ||
        (st = ref_opt_dtype(c, "out", ISA_DT_F16, (1u << ISA_DT_F16) | (1u << ISA_DT_F32), &out, d)))
        return st;
    if (sk < 0)
        sk = sq;
    if (bh < 1 || bh > 4096 || sq < 1 || sq > 65536 || sk < 1 || sk > 65536)
        return npu_errf(d, NPU_EINVAL, "ref attention: need 1 <= bh <= 4096, 1 <= sq, sk <= 65536");
    if (hd < 16 || hd > 128 || hd % 16)
        return npu_errf(d, NPU_EINVAL, "ref attention: --hd %lld: need a multiple of 16 in 16..128", (long long)hd);
    if (causal != 0 && causal != 1)
        return npu_errf(d, NPU_EINVAL, "ref attention: --causal %lld: need 0 or 1", (long long)causal);
    if (causal && sq != sk)
        return npu_errf(d, NPU_EINVAL, "ref attention: --causal 1 needs sq == sk (got %lld, %lld)", (long long)sq,
                        (long long)sk);
    uint8_t sb[4];
    isa_fp_store(ISA_DT_F32, sb, 1.0 / sqrt((double)hd), ISA_RM_RNE, 1);
    double scale = isa_fp_load(ISA_DT_F32, sb);
    uint32_t scale_bits = (uint32_t)sb[0] | (uint32_t)sb[1] << 8 | (uint32_t)sb[2] << 16 | (uint32_t)sb[3] << 24;
    npu_rng *r = ref_rng(c);
    npy_tensor q, k, v, o;
    memset(&k, 0, sizeof k);
    memset(&v, 0, sizeof v);
    memset(&o, 0, sizeof o);
    int64_t qs[3] = {bh, sq, hd}, ks[3] = {bh, sk, hd};
    double *s = NULL;
    if ((st = npy_alloc(&q, ISA_DT_F16, 3, qs, d)))
        return st;
    if ((st = npy_alloc(&k, ISA_DT_F16, 3, ks, d)) || (st = npy_alloc(&v, ISA_DT_F16, 3, ks, d)) ||
        (st = npy_alloc(&o, out, 3, qs, d)))
        goto fail;
    /* Q and K in [-2, 2]: scores up to ~sqrt(hd) * 4/3, a peaked softmax */
    for (int64_t i = 0; i < bh * sq * hd; i++)
        ref_put(&q, i, ref_uniform(r, -2, 2));
    for (int64_t i = 0; i < bh * sk * hd; i++)
        ref_put(&k, i, ref_uniform(r, -2, 2));
    double vmax = 0;
    for (int64_t i = 0; i < bh * sk * hd; i++) {
        ref_put(&v, i, ref_uniform(r, -1, 1));
        vmax = fmax(vmax, fabs(ref_get(&v, i)));
    }
    s = npu_malloc((size_t)sk * sizeof *s);
    if (!s) {
        st = npu_errf(d, NPU_ENOMEM, "ref attention: out of memory");
        goto fail;
    }
    for (int64_t b = 0; b < bh; b++)
        for (int64_t i = 0; i < sq; i++) {
            int64_t nk = causal ? i + 1 : sk;
            double m = -INFINITY, l = 0;
            for (int64_t j = 0; j < nk; j++) {
                double t = 0;
                for (int64_t e = 0; e < hd; e++)
                    t += ref_get(&q, (b * sq + i) * hd + e) * ref_get(&k, (b * sk + j) * hd + e);
                s[j] = t * scale;
                m = fmax(m, s[j]);
            }
            for (int64_t j = 0; j < nk; j++) {
                s[j] = exp(s[j] - m);
                l += s[j];
            }
            for (int64_t e = 0; e < hd; e++) {
                double acc = 0;
                for (int64_t j = 0; j < nk; j++)
                    acc += s[j] * ref_get(&v, (b * sk + j) * hd + e);
                ref_put(&o, (b * sq + i) * hd + e, acc / l);
            }
            ref_progress(c, (double)(b * sq + i + 1) / (double)(bh * sq));
        }
    npu_free(s);
    s = NULL;
    int f32 = out == ISA_DT_F32;
    double atol = 1.1 * ldexp(vmax, -11) + 1e-6;
    const char *names[3] = {"q", "k", "v"};
    npy_tensor *ins[3] = {&q, &k, &v};
    for (int i = 0; i < 3; i++) {
        if ((st = ref_in(c, names[i], ins[i], d)))
            goto fail;
        memset(ins[i], 0, sizeof *ins[i]);
    }
    st = ref_out(c, "o", &o, f32 ? 1e-5 : 1e-3, atol,
                 f32 ? "P rounded to fp16 before P V: |err| <= 2^-11 * max|V|"
                     : "P rounded to fp16 before P V (2^-11 * max|V|) + fp16 output rounding",
                 d);
    memset(&o, 0, sizeof o);
    if (st || (st = ref_scalar(c, "bh", bh, d)) || (st = ref_scalar(c, "sq", sq, d)) ||
        (st = ref_scalar(c, "sk", sk, d)) || (st = ref_scalar(c, "scale_bits", scale_bits, d)) ||
        (st = ref_define(c, "HD", hd, d)) || (st = ref_define(c, "CAUSAL", causal, d)) ||
        (st = ref_define(c, "F32OUT", f32, d)))
        goto fail;
    ref_kernel(c, "attention.s");
    ref_note(c, "flash attention forward: bh %lld, sq %lld, sk %lld, hd %lld, %s, scale %.9g, out %s", (long long)bh,
             (long long)sq, (long long)sk, (long long)hd, causal ? "causal" : "non-causal", scale,
             isa_dtype_suffix(out));
    return NPU_OK;
fail:
    npu_free(s);
    npy_free(&q);
    npy_free(&k);
    npy_free(&v);
    npy_free(&o);
    return st;
}
