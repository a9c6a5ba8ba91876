/* cube.c — the cube unit: mmad (L0C (+)= L0A x L0B) and mmad.sp (2:4
 * structured-sparse B). docs/cube.md is the reference (layouts with
 * pictures, accumulation order, work accounting).
 *
 * This is the simulator's hot path. An mmad is done in three steps:
 *  1. decode: A (L0A, ZZ fractals) into a dense row-major f32 (or s32)
 *     matrix of M16 rows x k columns; B (L0B, ZN fractals) into, per
 *     16-column block n1, a k x 16 f32 panel (B transposed back), so that
 *     the 16 outputs of a row are 16 consecutive lanes;
 *  2. a micro-kernel per (n1, group of rows): the accumulators of R rows x
 *     16 columns live in vector registers while k runs sequentially, each
 *     step broadcasting one A value per row against one B panel row;
 *  3. the accumulators are written straight into the L0C fractal rows (an
 *     NZ fractal row is exactly 16 consecutive f32).
 * Kernel variants: portable C, AVX2+FMA and AVX-512F, picked at run time
 * with __builtin_cpu_supports. All give bit-identical results: each output
 * is acc = acc + a*b in increasing k, one f32 rounding per step. For the
 * narrow inputs (f16, bf16, fp8) the product a*b is exact in f32, so a
 * fused multiply-add rounds exactly like a multiply then an add and the
 * vector variants may use FMA; for f32 inputs the product must round, so
 * every variant multiplies and adds separately (-std=c11 keeps the
 * compiler from contracting the portable code). NaN results are written as
 * the canonical quiet NaN, so the host's NaN propagation rules cannot make
 * variants differ. */
#include "sim/units_int.h"

#include <cpuid.h>
#include <immintrin.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "isa/isa_fp.h"
#include "sim/sparse.h"

typedef struct mm {
    int m, k, n, init, sparse;
    int s, c0;              /* input element bytes, k-columns per fractal (32 / s) */
    int M1, K1, N1;         /* fractal counts (K1 of the stored B: k/2 rows when sparse) */
    int KA1;                /* k fractals of A */
    int isint;              /* s8 x s8 -> s32 */
    int exact;              /* products exact in f32 (FMA allowed) */
    uint64_t a, b, c, meta;
} mm;

/* ---- decode ---------------------------------------------------------- */
/* The tile is done in chunks of at most MC rows x KC k-columns, so the
 * decoded operands live on the stack (no allocation per mmad): for each
 * k-chunk (in increasing k) and row chunk, A's chunk is decoded once and
 * each 16-column B panel once, and the kernel adds the chunk into L0C.
 * Storing the f32 (s32) accumulator to L0C between chunks and loading it
 * back is exact, so chunking does not change any result. */
enum { MC = 128, KC = 128 };

/* Element (row r, column c) of fractal fi of a ZZ/ZN-style store. */
static inline const uint8_t *frac_elem(const uint8_t *base, uint64_t fi, int r, int c, int s, int c0)
{
    return base + fi * 512u + (uint64_t)(r * c0 + c) * (uint64_t)s;
}

/* Decode n consecutive values of dtype dt at p to f32 (t8: fp8 table). */
static void dec_row_f(int dt, const uint8_t *p, int n, float *out, const float *t8)
{
    switch (dt) {
    case ISA_DT_F32:
        memcpy(out, p, (size_t)n * 4);
        break;
    case ISA_DT_F16:
        for (int i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            out[i] = isa_fp_f16_to_f32(h);
        }
        break;
    case ISA_DT_BF16:
        for (int i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            out[i] = isa_fp_bf16_to_f32(h);
        }
        break;
    default:
        for (int i = 0; i < n; i++)
            out[i] = t8[p[i]];
        break;
    }
}

/* F16C widening is exact like isa_fp_f16_to_f32 except for NaN payloads,
 * which the kernels canonicalise on output anyway. */
__attribute__((target("avx2,f16c"))) static void dec_row_f16_f16c(const uint8_t *p, int n, float *out)
{
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i))));
    for (; i < n; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        out[i] = isa_fp_f16_to_f32(h);
    }
}

/* A whole f16 B fractal (16 lines of 16 k) into 16 panel rows of 16 n
 * (pitch 16 floats): widen with F16C, transpose as four 8x8 blocks. */
__attribute__((target("avx2,f16c"))) static void dec_frac_f16_t(const uint8_t *src, float *out)
{
    for (int jh = 0; jh < 2; jh++)
        for (int ch = 0; ch < 2; ch++) {
            __m256 r[8], t[8], u[8];
            for (int i = 0; i < 8; i++)
                r[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(src + ((8 * jh + i) * 16 + 8 * ch) * 2)));
            for (int i = 0; i < 8; i += 2) {
                t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
                t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
            }
            for (int i = 0; i < 8; i += 4) {
                u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
                u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
                u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
                u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
            }
            for (int i = 0; i < 4; i++) {
                r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
                r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
            }
            for (int i = 0; i < 8; i++)
                _mm256_storeu_ps(out + (8 * ch + i) * 16 + 8 * jh, r[i]);
        }
}

typedef struct dec {
    const mm *p;
    int dt, f16c;
    float t8[256];
} dec;

static inline void dec_row(const dec *D, const uint8_t *src, int w, void *out)
{
    if (D->p->isint) {
        int32_t *o = out;
        for (int i = 0; i < w; i++)
            o[i] = (int8_t)src[i];
    } else if (D->f16c && D->dt == ISA_DT_F16) {
        dec_row_f16_f16c(src, w, out);
    } else {
        dec_row_f(D->dt, src, w, out, D->t8);
    }
}

/* A rows [r0, r0+nr) x columns [k0, k0+kw) into out (row pitch KC, 4-byte lanes). */
static void decode_a(const dec *D, const uint8_t *l0a, int r0, int nr, int k0, int kw, uint32_t *out)
{
    const mm *p = D->p;
    for (int row = r0; row < r0 + nr; row++) {
        uint32_t *o = out + (size_t)(row - r0) * KC;
        for (int kk = k0; kk < k0 + kw;) {
            int k1 = kk / p->c0, c = kk % p->c0;
            int w = NPU_MIN(p->c0 - c, k0 + kw - kk);
            dec_row(D, frac_elem(l0a, (uint64_t)(row / 16) * (uint64_t)p->KA1 + (uint64_t)k1, row % 16, c, p->s, p->c0), w,
                    o + (kk - k0));
            kk += w;
        }
    }
}

/* Dense B panel n1, k rows [k0, k0+kw): out[(kk-k0)*16 + j] = B[kk][16*n1 + j].
 * A stored fractal row is one n with c0 consecutive k: decode, then scatter. */
static void decode_b(const dec *D, const uint8_t *l0b, int n1, int k0, int kw, uint32_t *out)
{
    const mm *p = D->p;
    uint32_t row[32];
    for (int kk = k0; kk < k0 + kw;) {
        int k1 = kk / p->c0, c = kk % p->c0;
        int w = NPU_MIN(p->c0 - c, k0 + kw - kk);
        if (D->f16c && D->dt == ISA_DT_F16 && w == 16) {
            dec_frac_f16_t(frac_elem(l0b, (uint64_t)k1 * (uint64_t)p->N1 + (uint64_t)n1, 0, 0, 2, 16),
                           (float *)(void *)(out + (size_t)(kk - k0) * 16));
            kk += w;
            continue;
        }
        for (int j = 0; j < 16; j++) {
            dec_row(D, frac_elem(l0b, (uint64_t)k1 * (uint64_t)p->N1 + (uint64_t)n1, j, c, p->s, p->c0), w, row);
            for (int i = 0; i < w; i++)
                out[(size_t)(kk - k0 + i) * 16 + (size_t)j] = row[i];
        }
        kk += w;
    }
}

/* Metadata nibble of (group g, column n): nibble g*N16 + n at meta. */
static inline unsigned meta_nib(const mm *p, const uint8_t *meta, int g, int n)
{
    uint64_t q = (uint64_t)g * (uint64_t)(p->N1 * 16) + (uint64_t)n;
    return (meta[q / 2] >> (4 * (q % 2))) & 0xfu;
}

/* Every used nibble must name two positions, first < second. Checked
 * before anything is computed, so a bad one leaves L0C untouched. */
static npu_status check_meta(const mm *p, const uint8_t *meta, npu_diag *d)
{
    for (int g = 0; g < p->k / 4; g++)
        for (int n = 0; n < p->n; n++) {
            unsigned nib = meta_nib(p, meta, g, n);
            if ((nib & 3) >= (nib >> 2))
                return npu_errf(d, NPU_EFAULT,
                                "mmad.sp: metadata at L0B 0x%" PRIx64 ": column %d group %d has positions (%u, %u); need first < second",
                                p->meta + ((uint64_t)g * (uint64_t)(p->N1 * 16) + (uint64_t)n) / 2, n, g, nib & 3, nib >> 2);
        }
    return NPU_OK;
}

/* 2:4 sparse B panel: the dense k rows [k0, k0+kw) (a multiple of 4 from a
 * multiple of 4) rebuilt from the k/2 stored rows, zeros at the dropped
 * positions and in the padding columns (docs/cube.md: mmad.sp computes what
 * mmad computes with the decompressed B). */
static void decode_b_sparse(const dec *D, const uint8_t *l0b, int n1, int k0, int kw, uint32_t *out)
{
    const mm *p = D->p;
    memset(out, 0, (size_t)kw * 16 * 4);
    const uint8_t *meta = l0b + p->meta;
    for (int g = k0 / 4; g < (k0 + kw) / 4; g++)
        for (int j = 0; j < 16 && n1 * 16 + j < p->n; j++) {
            unsigned nib = meta_nib(p, meta, g, n1 * 16 + j);
            for (int t = 0; t < 2; t++) {
                int kr = 2 * g + t;
                const uint8_t *src = frac_elem(l0b + p->b, (uint64_t)(kr / p->c0) * (uint64_t)p->N1 + (uint64_t)n1, j,
                                               kr % p->c0, p->s, p->c0);
                int pos = (int)(t ? nib >> 2 : nib & 3);
                dec_row(D, src, 1, out + (size_t)(4 * g + pos - k0) * 16 + (size_t)j);
            }
        }
}

/* ---- micro-kernels ------------------------------------------------------ */
/* Each computes R rows x 16 columns: c (R consecutive 64-byte rows of an
 * L0C fractal) = (init ? 0 : c) + sum over kk < k of a[r*lda + kk] * bt[kk*16 + j],
 * in increasing kk, one rounding per step. */

static inline float canon(float v) { return isnan(v) ? isa_fp_bits_f32(ISA_FP_NAN_F32) : v; }

static void fk_port(const float *a, size_t lda, const float *bt, int k, uint8_t *c, int init, int exact)
{
    (void)exact;   /* acc + x*b in C: never contracted under -std=c11 */
    float acc[4][16];
    if (init)
        memset(acc, 0, sizeof acc);
    else
        memcpy(acc, c, sizeof acc);
    for (int kk = 0; kk < k; kk++) {
        const float *b = bt + (size_t)kk * 16;
        for (int r = 0; r < 4; r++) {
            float x = a[(size_t)r * lda + (size_t)kk];
            for (int j = 0; j < 16; j++)
                acc[r][j] = acc[r][j] + x * b[j];
        }
    }
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 16; j++)
            acc[r][j] = canon(acc[r][j]);
    memcpy(c, acc, sizeof acc);
}

__attribute__((target("avx2,fma"))) static inline __m256 canon8(__m256 v)
{
    __m256 nan = _mm256_castsi256_ps(_mm256_set1_epi32((int)ISA_FP_NAN_F32));
    return _mm256_blendv_ps(v, nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

/* AVX2: R (4 or 6) rows x 2 registers of 8 lanes; 12 accumulators keep
 * both FMA pipes busy across the FMA latency. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
fk_avx2_r(const float *a, size_t lda, const float *bt, int k, uint8_t *c, int init, int exact, const int R)
{
    float *cf = (float *)(void *)c;
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
        acc[r][0] = init ? _mm256_setzero_ps() : _mm256_loadu_ps(cf + 16 * r);
        acc[r][1] = init ? _mm256_setzero_ps() : _mm256_loadu_ps(cf + 16 * r + 8);
    }
    if (exact) {
        for (int kk = 0; kk < k; kk++) {
            __m256 b0 = _mm256_loadu_ps(bt + (size_t)kk * 16), b1 = _mm256_loadu_ps(bt + (size_t)kk * 16 + 8);
#pragma GCC unroll 6
            for (int r = 0; r < R; r++) {
                __m256 x = _mm256_broadcast_ss(a + (size_t)r * lda + (size_t)kk);
                acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
                acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
            }
        }
    } else {
        for (int kk = 0; kk < k; kk++) {
            __m256 b0 = _mm256_loadu_ps(bt + (size_t)kk * 16), b1 = _mm256_loadu_ps(bt + (size_t)kk * 16 + 8);
#pragma GCC unroll 6
            for (int r = 0; r < R; r++) {
                __m256 x = _mm256_broadcast_ss(a + (size_t)r * lda + (size_t)kk);
                acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_mul_ps(x, b0));
                acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_mul_ps(x, b1));
            }
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
        _mm256_storeu_ps(cf + 16 * r, canon8(acc[r][0]));
        _mm256_storeu_ps(cf + 16 * r + 8, canon8(acc[r][1]));
    }
}

__attribute__((target("avx2,fma"))) static void fk_avx2_6(const float *a, size_t lda, const float *bt, int k, uint8_t *c,
                                                           int init, int exact)
{
    fk_avx2_r(a, lda, bt, k, c, init, exact, 6);
}

__attribute__((target("avx2,fma"))) static void fk_avx2_4(const float *a, size_t lda, const float *bt, int k, uint8_t *c,
                                                           int init, int exact)
{
    fk_avx2_r(a, lda, bt, k, c, init, exact, 4);
}

/* AVX-512: 8 rows, one 16-lane register each. */
__attribute__((target("avx512f"))) static void fk_avx512(const float *a, size_t lda, const float *bt, int k, uint8_t *c,
                                                          int init, int exact)
{
    float *cf = (float *)(void *)c;
    __m512 acc[8];
    for (int r = 0; r < 8; r++)
        acc[r] = init ? _mm512_setzero_ps() : _mm512_loadu_ps(cf + 16 * r);
    if (exact) {
        for (int kk = 0; kk < k; kk++) {
            __m512 b = _mm512_loadu_ps(bt + (size_t)kk * 16);
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++)
                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[(size_t)r * lda + (size_t)kk]), b, acc[r]);
        }
    } else {
        for (int kk = 0; kk < k; kk++) {
            __m512 b = _mm512_loadu_ps(bt + (size_t)kk * 16);
#pragma GCC unroll 8
            for (int r = 0; r < 8; r++)
                acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(_mm512_set1_ps(a[(size_t)r * lda + (size_t)kk]), b));
        }
    }
    __m512 nan = _mm512_castsi512_ps(_mm512_set1_epi32((int)ISA_FP_NAN_F32));
    for (int r = 0; r < 8; r++) {
        __mmask16 un = _mm512_cmp_ps_mask(acc[r], acc[r], _CMP_UNORD_Q);
        _mm512_storeu_ps(cf + 16 * r, _mm512_mask_blend_ps(un, acc[r], nan));
    }
}

/* s8 x s8 -> s32, wrapping: plain C compiled for each target (the
 * compiler vectorises the 16-lane loop; integer results are exact). */
#define INT_KERNEL(name, attr)                                                                \
    attr static void name(const int32_t *a, size_t lda, const int32_t *bt, int k, uint8_t *c, \
                          int init)                                                            \
    {                                                                                          \
        uint32_t acc[4][16];                                                                   \
        if (init)                                                                              \
            memset(acc, 0, sizeof acc);                                                        \
        else                                                                                   \
            memcpy(acc, c, sizeof acc);                                                        \
        for (int kk = 0; kk < k; kk++) {                                                       \
            const int32_t *b = bt + (size_t)kk * 16;                                           \
            for (int r = 0; r < 4; r++) {                                                      \
                uint32_t x = (uint32_t)a[(size_t)r * lda + (size_t)kk];                        \
                for (int j = 0; j < 16; j++)                                                   \
                    acc[r][j] += x * (uint32_t)b[j];                                           \
            }                                                                                  \
        }                                                                                      \
        memcpy(c, acc, sizeof acc);                                                            \
    }
INT_KERNEL(ik_port, )
INT_KERNEL(ik_avx2, __attribute__((target("avx2"))))
INT_KERNEL(ik_avx512, __attribute__((target("avx512f"))))

/* ---- the instruction ------------------------------------------------------ */

static int host_variant(void)
{
    if (sim_cube_variant_supported(SIM_CUBE_AVX512))
        return SIM_CUBE_AVX512;
    if (sim_cube_variant_supported(SIM_CUBE_AVX2))
        return SIM_CUBE_AVX2;
    return SIM_CUBE_PORTABLE;
}

/* F16C from CPUID leaf 1 (clang's __builtin_cpu_supports has no "f16c");
 * the OS support for the AVX state it needs comes with the avx2 check. */
static int host_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

int sim_cube_variant_supported(int variant)
{
    switch (variant) {
    case SIM_CUBE_PORTABLE: return 1;
    case SIM_CUBE_AVX2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && host_f16c();
    case SIM_CUBE_AVX512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && host_f16c();
    default: return 0;
    }
}

/* Run the kernel over rows [0, 16) of one fractal (rows r0.. of the chunk). */
static void kernel_fractal(const mm *p, int variant, const uint32_t *A, const uint32_t *Bt, int kw, uint8_t *crow,
                           int init)
{
    if (p->isint) {
        for (int r = 0; r < 16; r += 4) {
            const int32_t *ai = (const int32_t *)(const void *)(A + (size_t)r * KC);
            const int32_t *bi = (const int32_t *)(const void *)Bt;
            if (variant == SIM_CUBE_AVX512)
                ik_avx512(ai, KC, bi, kw, crow + r * 64, init);
            else if (variant == SIM_CUBE_AVX2)
                ik_avx2(ai, KC, bi, kw, crow + r * 64, init);
            else
                ik_port(ai, KC, bi, kw, crow + r * 64, init);
        }
        return;
    }
    const float *af = (const float *)(const void *)A, *bf = (const float *)(const void *)Bt;
    switch (variant) {
    case SIM_CUBE_AVX512:
        fk_avx512(af, KC, bf, kw, crow, init, p->exact);
        fk_avx512(af + 8 * KC, KC, bf, kw, crow + 8 * 64, init, p->exact);
        break;
    case SIM_CUBE_AVX2:
        fk_avx2_6(af, KC, bf, kw, crow, init, p->exact);
        fk_avx2_6(af + 6 * KC, KC, bf, kw, crow + 6 * 64, init, p->exact);
        fk_avx2_4(af + 12 * KC, KC, bf, kw, crow + 12 * 64, init, p->exact);
        break;
    default:
        for (int r = 0; r < 16; r += 4)
            fk_port(af + (size_t)r * KC, KC, bf, kw, crow + r * 64, init, p->exact);
        break;
    }
}

static npu_status compute(const mm *p, sim_unit_ctx *ctx, int dt, int variant, npu_diag *d)
{
    const uint8_t *l0a = ctx->buf[SIM_SP_L0A] + p->a;
    const uint8_t *l0b = ctx->buf[SIM_SP_L0B];
    uint8_t *l0c = ctx->buf[SIM_SP_L0C] + p->c;
    if (p->sparse) {
        npu_status st = check_meta(p, l0b + p->meta, d);
        if (st)
            return st;
    }
    dec D;
    D.p = p;
    D.dt = dt;
    D.f16c = variant != SIM_CUBE_PORTABLE;
    if (dt == ISA_DT_E4M3 || dt == ISA_DT_E5M2)
        for (unsigned v = 0; v < 256; v++)
            D.t8[v] = isa_fp_to_f32((isa_dtype)dt, v);
    /* 64 KB + 8 KB of 4-byte lanes (f32 or s32) */
    uint32_t A[MC * KC], Bt[KC * 16];
    int M16 = p->M1 * 16;
    for (int k0 = 0; k0 < p->k; k0 += KC) {
        int kw = NPU_MIN(KC, p->k - k0);
        int init = p->init && k0 == 0;
        for (int r0 = 0; r0 < M16; r0 += MC) {
            int nr = NPU_MIN(MC, M16 - r0);
            decode_a(&D, l0a, r0, nr, k0, kw, A);
            for (int n1 = 0; n1 < p->N1; n1++) {
                if (p->sparse)
                    decode_b_sparse(&D, l0b, n1, k0, kw, Bt);
                else
                    decode_b(&D, l0b + p->b, n1, k0, kw, Bt);
                for (int r = 0; r < nr; r += 16) {
                    uint8_t *crow = l0c + ((uint64_t)n1 * (uint64_t)p->M1 + (uint64_t)(r0 + r) / 16) * 1024u;
                    kernel_fractal(p, variant, A + (size_t)r * KC, Bt, kw, crow, init);
                }
            }
        }
    }
    return NPU_OK;
}

static npu_status report(sim_unit_ctx *ctx, sim_space sp, int is_write, uint64_t a, uint64_t len, const char *mn,
                         npu_diag *d)
{
    sim_rng r;
    sim_rng_init(&r, ctx, sp, is_write, mn);
    npu_status st = sim_rng_add(&r, a, len, d);
    return st ? st : sim_rng_flush(&r, d);
}

/* The mmad body. variant < 0: the host's best, looked up only if the data
 * are computed (CPUID, which a virtual machine traps: microseconds a call,
 * so timing mode never asks and the executor asks once per simulator). */
static npu_status cube_exec(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d, int variant)
{
    const char *mn = sim_mn(in);
    if (in->op != ISA_OP_MMAD && in->op != ISA_OP_MMADSP)
        return npu_errf(d, NPU_EFAULT, "%s: not a cube instruction", mn);
    mm p;
    memset(&p, 0, sizeof p);
    int dt = in->dt;
    p.isint = dt == ISA_DT_S8;
    if (!(dt == ISA_DT_F16 || dt == ISA_DT_BF16 || dt == ISA_DT_S8 || dt == ISA_DT_E4M3 || dt == ISA_DT_E5M2 ||
          dt == ISA_DT_F32))
        return npu_errf(d, NPU_EFAULT, "%s: input dtype %s not legal", mn, isa_dtype_suffix(dt));
    if (in->dt2 != (p.isint ? ISA_DT_S32 : ISA_DT_F32))
        return npu_errf(d, NPU_EFAULT, "%s.%s.%s: %s inputs accumulate in %s", mn, isa_dtype_suffix(dt),
                        isa_dtype_suffix(in->dt2), isa_dtype_suffix(dt),
                        isa_dtype_suffix(p.isint ? ISA_DT_S32 : ISA_DT_F32));
    uint64_t cfg = ctx->x[in->rs3];
    p.m = (int)(cfg & 0xffff);
    p.k = (int)((cfg >> 16) & 0xffff);
    p.n = (int)((cfg >> 32) & 0xffff);
    p.init = (int)((cfg >> 48) & 1);
    p.sparse = in->op == ISA_OP_MMADSP;
    p.exact = dt != ISA_DT_F32;
    p.s = isa_dtype_bytes(dt);
    p.c0 = 32 / p.s;
    if (!p.m || !p.k || !p.n)
        return npu_errf(d, NPU_EFAULT, "%s: m, k and n must be non-zero (m=%d k=%d n=%d)", mn, p.m, p.k, p.n);
    if (p.sparse && p.k % 4)
        return npu_errf(d, NPU_EFAULT, "%s: k=%d is not a multiple of 4 (2:4 groups)", mn, p.k);
    p.M1 = (p.m + 15) / 16;
    p.N1 = (p.n + 15) / 16;
    p.KA1 = (p.k + p.c0 - 1) / p.c0;
    int kb = p.sparse ? p.k / 2 : p.k;
    p.K1 = (kb + p.c0 - 1) / p.c0;
    p.c = ctx->x[in->rd];
    p.a = ctx->x[in->rs1];
    p.b = ctx->x[in->rs2];
    npu_status st;
    if ((st = sim_chk_align(ctx, SIM_SP_L0C, p.c, "C", mn, d)) || (st = sim_chk_align(ctx, SIM_SP_L0A, p.a, "A", mn, d)) ||
        (st = sim_chk_align(ctx, SIM_SP_L0B, p.b, "B", mn, d)))
        return st;
    uint64_t abytes = (uint64_t)p.M1 * (uint64_t)p.KA1 * 512u, bbytes = (uint64_t)p.K1 * (uint64_t)p.N1 * 512u;
    uint64_t cbytes = (uint64_t)p.M1 * (uint64_t)p.N1 * 1024u;
    if ((st = report(ctx, SIM_SP_L0A, 0, p.a, abytes, mn, d)) || (st = report(ctx, SIM_SP_L0B, 0, p.b, bbytes, mn, d)))
        return st;
    if (p.sparse) {
        p.meta = ctx->x[in->rs4];
        uint64_t mbytes = sim_sparse_meta_bytes(p.k, p.N1 * 16);
        if ((st = sim_chk_align(ctx, SIM_SP_L0B, p.meta, "metadata", mn, d)) ||
            (st = report(ctx, SIM_SP_L0B, 0, p.meta, mbytes, mn, d)))
            return st;
    }
    if (!p.init && (st = report(ctx, SIM_SP_L0C, 0, p.c, cbytes, mn, d)))
        return st;
    if ((st = report(ctx, SIM_SP_L0C, 1, p.c, cbytes, mn, d)))
        return st;
    w->fractals = (uint64_t)p.M1 * (uint64_t)p.K1 * (uint64_t)p.N1;
    w->macs = (uint64_t)p.m * (uint64_t)kb * (uint64_t)p.n;
    if (ctx->nodata)
        return NPU_OK;
    if (variant < 0) {
        if (!ctx->cube_variant1)
            ctx->cube_variant1 = host_variant() + 1;
        variant = ctx->cube_variant1 - 1;
    }
    return compute(&p, ctx, dt, variant, d);
}

npu_status sim_cube_exec_variant(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d, int variant)
{
    if (variant >= 0 && !sim_cube_variant_supported(variant))
        return npu_errf(d, NPU_EUNSUPP, "%s: cube kernel variant %d not supported by this host", sim_mn(in),
                        variant);
    return cube_exec(ctx, in, w, d, variant);
}

npu_status sim_exec_cube(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d)
{
    return cube_exec(ctx, in, w, d, -1);
}
