/* ref_conv.c — golden data for kernels/conv2d.s: 2-D convolution with
 * stride, padding and dilation, fp16 inputs, fp32 accumulation, fp16 or
 * fp32 output, in the layouts conv2d.s documents:
 *   x [N][C1][H][W][16]      NC1HWC0 fp16 (channels >= cin are zero)
 *   w [KB][CO1][16][16]      L0B fractals: element [kb][o1][r][c] is
 *                            W[o1*16 + r][c1*16 + c][i][j], kb = (c1*KH + i)*KW + j
 *   y [N][CO1][HO][WO][16]   NC1HWC0 (channels >= cout are zero)
 * The reference sums in double over the real taps and rounds once. The
 * cube's products are exact in fp32 and it adds them in k order with one
 * fp32 rounding each (docs/cube.md), so |err| <= (K - 1) * 2^-24 *
 * sum |terms| (the recursive-summation bound, K = cin*KH*KW); atol is that
 * bound at the largest sum |terms| of any output, rtol covers the fp16
 * output rounding (2^-11) or is 1e-6 for fp32. */
#include <math.h>
#include <string.h>

#include "kernels/ref/ref.h"

typedef struct cv {
    int64_t n, cin, h, w, cout, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, tm, tn, kc, rb;
} cv;

npu_status ref_gen_conv2d(ref_ctx *c, npu_diag *d)
{
    cv p;
    isa_dtype out;
    npu_status st;
    struct { const char *name; int64_t def, lo, hi; int64_t *v; } o[] = {
        {"n", 1, 1, 64, &p.n},       {"cin", 16, 1, 1024, &p.cin}, {"h", 8, 1, 1024, &p.h},
        {"w", 8, 1, 1024, &p.w},     {"cout", 16, 1, 1024, &p.cout}, {"kh", 3, 1, 255, &p.kh},
        {"kw", 3, 1, 255, &p.kw},    {"sh", 1, 1, 255, &p.sh},     {"sw", 1, 1, 255, &p.sw},
        {"dh", 1, 1, 255, &p.dh},    {"dw", 1, 1, 255, &p.dw},     {"pt", 0, 0, 15, &p.pt},
        {"pb", 0, 0, 15, &p.pb},     {"pl", 0, 0, 15, &p.pl},      {"pr", 0, 0, 15, &p.pr},
        {"tm", 128, 16, 1024, &p.tm}, {"tn", 128, 16, 1024, &p.tn}, {"kc", 8, 1, 255, &p.kc},
        {"rb", 0, 0, 65535, &p.rb},
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(o); i++) {
        if ((st = ref_opt_int(c, o[i].name, o[i].def, o[i].v, d)))
            return st;
        if (*o[i].v < o[i].lo || *o[i].v > o[i].hi)
            return npu_errf(d, NPU_EINVAL, "ref conv2d: --%s %lld: need %lld..%lld", o[i].name, (long long)*o[i].v,
                            (long long)o[i].lo, (long long)o[i].hi);
    }
    if ((st = ref_opt_dtype(c, "out", ISA_DT_F16, (1u << ISA_DT_F16) | (1u << ISA_DT_F32), &out, d)))
        return st;
    int64_t eh = p.dh * (p.kh - 1) + 1, ew = p.dw * (p.kw - 1) + 1;
    if (p.pt >= eh || p.pb >= eh || p.pl >= ew || p.pr >= ew)
        return npu_errf(d, NPU_EINVAL, "ref conv2d: padding must be smaller than the dilated kernel (%lld x %lld)",
                        (long long)eh, (long long)ew);
    if (p.h + p.pt + p.pb < eh || p.w + p.pl + p.pr < ew)
        return npu_errf(d, NPU_EINVAL, "ref conv2d: the dilated kernel is larger than the padded image");
    int64_t c1 = (p.cin + 15) / 16, co1 = (p.cout + 15) / 16;
    int64_t ho = (p.h + p.pt + p.pb - eh) / p.sh + 1, wo = (p.w + p.pl + p.pr - ew) / p.sw + 1;
    int64_t kb = c1 * p.kh * p.kw;
    /* Row blocks (conv2d.s): two buffers of one block's input rows in L1.
     * --rb 0: the most output rows that fit. */
    if (!p.rb) {
        for (p.rb = ho; p.rb > 1; p.rb--) {
            int64_t hp = NPU_MIN((p.rb - 1) * p.sh + eh, p.h);
            if (2 * ((c1 * hp * p.w * 32 + 511) / 512 * 512) <= 512 * 1024)
                break;
        }
    }
    if (2 * ((c1 * NPU_MIN((NPU_MIN(p.rb, ho) - 1) * p.sh + eh, p.h) * p.w * 32 + 511) / 512 * 512) > 512 * 1024)
        return npu_errf(d, NPU_EINVAL, "ref conv2d: %lld output row(s) of a %lld-channel, %lld-wide image do not fit L1 twice",
                        (long long)p.rb, (long long)p.cin, (long long)p.w);
    npu_rng *r = ref_rng(c);
    npy_tensor x, w, y;
    memset(&w, 0, sizeof w);
    memset(&y, 0, sizeof y);
    int64_t xs[5] = {p.n, c1, p.h, p.w, 16}, ws[4] = {kb, co1, 16, 16}, ys[5] = {p.n, co1, ho, wo, 16};
    if ((st = npy_alloc(&x, ISA_DT_F16, 5, xs, d)))
        return st;
    if ((st = npy_alloc(&w, ISA_DT_F16, 4, ws, d)) || (st = npy_alloc(&y, out, 5, ys, d)))
        goto fail;
    /* npy_alloc zero-fills: padded channels stay 0 */
    for (int64_t n = 0; n < p.n; n++)
        for (int64_t ci = 0; ci < p.cin; ci++)
            for (int64_t hh = 0; hh < p.h; hh++)
                for (int64_t ww = 0; ww < p.w; ww++)
                    ref_put(&x, (((n * c1 + ci / 16) * p.h + hh) * p.w + ww) * 16 + ci % 16, ref_uniform(r, -1, 1));
    /* W[co][ci][i][j] lives at w[kb][co/16][co%16][ci%16] */
#define WIDX(co, ci, i, j) (((((ci) / 16 * p.kh + (i)) * p.kw + (j)) * co1 + (co) / 16) * 256 + (co) % 16 * 16 + (ci) % 16)
    for (int64_t co = 0; co < p.cout; co++)
        for (int64_t ci = 0; ci < p.cin; ci++)
            for (int64_t i = 0; i < p.kh; i++)
                for (int64_t j = 0; j < p.kw; j++)
                    ref_put(&w, WIDX(co, ci, i, j), ref_uniform(r, -1, 1));
    double maxabs = 0;
    for (int64_t n = 0; n < p.n; n++)
        for (int64_t co = 0; co < p.cout; co++)
            for (int64_t oh = 0; oh < ho; oh++)
                for (int64_t ow = 0; ow < wo; ow++) {
                    double s = 0, sa = 0;
                    for (int64_t ci = 0; ci < p.cin; ci++)
                        for (int64_t i = 0; i < p.kh; i++) {
                            int64_t hh = oh * p.sh - p.pt + i * p.dh;
                            if (hh < 0 || hh >= p.h)
                                continue;
                            for (int64_t j = 0; j < p.kw; j++) {
                                int64_t ww = ow * p.sw - p.pl + j * p.dw;
                                if (ww < 0 || ww >= p.w)
                                    continue;
                                double t = ref_get(&x, (((n * c1 + ci / 16) * p.h + hh) * p.w + ww) * 16 + ci % 16) *
                                           ref_get(&w, WIDX(co, ci, i, j));
                                s += t;
                                sa += fabs(t);
                            }
                        }
                    maxabs = fmax(maxabs, sa);
                    ref_put(&y, (((n * co1 + co / 16) * ho + oh) * wo + ow) * 16 + co % 16, s);
                    if (ow == wo - 1)
                        ref_progress(c, (double)((n * p.cout + co) * ho + oh + 1) / (double)(p.n * p.cout * ho));
                }
#undef WIDX
    double K = (double)(p.cin * p.kh * p.kw);
    double atol = fmax((K - 1) * ldexp(1.0, -24) * maxabs, 1e-7);
    int f32 = out == ISA_DT_F32;
    if ((st = ref_in(c, "x", &x, d)))
        goto fail;
    memset(&x, 0, sizeof x);
    if ((st = ref_in(c, "w", &w, d)))
        goto fail;
    memset(&w, 0, sizeof w);
    st = ref_out(c, "y", &y, f32 ? 1e-6 : 1e-3, atol,
                 f32 ? "fp32 accumulation in k order: (K-1) * 2^-24 * max sum|terms|"
                     : "f16 output rounding (2^-11) + fp32 accumulation bound (K-1) * 2^-24 * max sum|terms|",
                 d);
    memset(&y, 0, sizeof y);
    if (st)
        goto fail;
    struct { const char *name; int64_t v; } df[] = {
        {"N", p.n},   {"C1", c1},   {"H", p.h},   {"W", p.w},   {"CO1", co1}, {"KH", p.kh}, {"KW", p.kw},
        {"SH", p.sh}, {"SW", p.sw}, {"DH", p.dh}, {"DW", p.dw}, {"PT", p.pt}, {"PB", p.pb}, {"PL", p.pl},
        {"PR", p.pr}, {"F32OUT", f32}, {"TM", p.tm}, {"TN", p.tn}, {"KC", p.kc}, {"RB", p.rb},
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(df); i++)
        if ((st = ref_define(c, df[i].name, df[i].v, d)))
            return st;
    ref_kernel(c, "conv2d.s");
    ref_note(c, "conv2d: x %lldx%lldx%lldx%lld (NCHW) * w %lldx%lldx%lldx%lld, stride %lldx%lld, dilation %lldx%lld, "
                "pad t%lld b%lld l%lld r%lld -> y %lldx%lldx%lldx%lld %s; NC1HWC0 in/out, weights as L0B fractals",
             (long long)p.n, (long long)p.cin, (long long)p.h, (long long)p.w, (long long)p.cout, (long long)p.cin,
             (long long)p.kh, (long long)p.kw, (long long)p.sh, (long long)p.sw, (long long)p.dh, (long long)p.dw,
             (long long)p.pt, (long long)p.pb, (long long)p.pl, (long long)p.pr, (long long)p.n, (long long)p.cout,
             (long long)ho, (long long)wo, isa_dtype_suffix(out));
    return NPU_OK;
fail:
    npy_free(&x);
    npy_free(&w);
    npy_free(&y);
    return st;
}
