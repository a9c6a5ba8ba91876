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

static float fp8_table_val(int dt, unsigned v) { return isa_fp_to_f32((isa_dtype)dt, v); }

/* Element (row, col) of a ZZ/ZN-style fractal store: fractal index fi,
 * in-fractal row r (0..15) and column c (0..c0-1). */
static inline const uint8_t *frac_elem(const uint8_t *base, uint64_t fi, int r, int c, int s, int c0)
{
    return base + fi * 512u + (uint64_t)(r * c0 + c) * (uint64_t)s;
}

/* Decode n values of dtype dt at p (consecutive) to f32. */
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

/* A: M16 x k f32, row-major (lda = k). */
static void decode_a_f(const mm *p, const uint8_t *l0a, int dt, float *A, const float *t8, int f16c)
{
    int M16 = p->M1 * 16;
    for (int row = 0; row < M16; row++) {
        float *o = A + (size_t)row * (size_t)p->k;
        for (int k1 = 0; k1 < p->KA1; k1++) {
            int w = NPU_MIN(p->c0, p->k - k1 * p->c0);
            const uint8_t *src = frac_elem(l0a, (uint64_t)(row / 16) * (uint64_t)p->KA1 + (uint64_t)k1, row % 16, 0, p->s, p->c0);
            if (f16c && dt == ISA_DT_F16)
                dec_row_f16_f16c(src, w, o + k1 * p->c0);
            else
                dec_row_f(dt, src, w, o + k1 * p->c0, t8);
        }
    }
}

/* B (dense): per n1 a k x 16 panel: Bt[(n1*k + kk)*16 + j]. Each stored
 * fractal row is one n with c0 consecutive k; decode it, then scatter. */
static void decode_b_f(const mm *p, const uint8_t *l0b, int dt, float *Bt, const float *t8, int f16c)
{
    float row[32];
    for (int k1 = 0; k1 < p->K1; k1++) {
        int w = NPU_MIN(p->c0, p->k - k1 * p->c0);
        for (int n1 = 0; n1 < p->N1; n1++) {
            float *panel = Bt + ((size_t)n1 * (size_t)p->k + (size_t)k1 * (size_t)p->c0) * 16;
            for (int j = 0; j < 16; j++) {
                const uint8_t *src = frac_elem(l0b, (uint64_t)k1 * (uint64_t)p->N1 + (uint64_t)n1, j, 0, p->s, p->c0);
                if (f16c && dt == ISA_DT_F16)
                    dec_row_f16_f16c(src, w, row);
                else
                    dec_row_f(dt, src, w, row, t8);
                for (int c = 0; c < w; c++)
                    panel[c * 16 + j] = row[c];
            }
        }
    }
}

static inline int32_t s8at(const uint8_t *p) { return (int8_t)p[0]; }

static void decode_a_i(const mm *p, const uint8_t *l0a, int32_t *A)
{
    int M16 = p->M1 * 16;
    for (int row = 0; row < M16; row++)
        for (int kk = 0; kk < p->k; kk++)
            A[(size_t)row * (size_t)p->k + (size_t)kk] =
                s8at(frac_elem(l0a, (uint64_t)(row / 16) * (uint64_t)p->KA1 + (uint64_t)(kk / 32), row % 16, kk % 32, 1, 32));
}

static void decode_b_i(const mm *p, const uint8_t *l0b, int32_t *Bt)
{
    for (int n1 = 0; n1 < p->N1; n1++)
        for (int kk = 0; kk < p->k; kk++)
            for (int j = 0; j < 16; j++)
                Bt[((size_t)n1 * (size_t)p->k + (size_t)kk) * 16 + (size_t)j] =
                    s8at(frac_elem(l0b, (uint64_t)(kk / 32) * (uint64_t)p->N1 + (uint64_t)n1, j, kk % 32, 1, 32));
}

/* 2:4 sparse B: expand the k/2 stored rows into the dense k x 16 panels,
 * zeros at the dropped positions (docs/cube.md: mmad.sp computes what mmad
 * computes with the decompressed B). Metadata nibble of (group g, column n)
 * is nibble g*N16 + n at meta: bits 1:0 the position of stored row 2g in
 * its group of 4, bits 3:2 that of row 2g+1. */
static npu_status expand_sparse(const mm *p, const uint8_t *l0b, int dt, void *Bt, const float *t8, npu_diag *d)
{
    int N16 = p->N1 * 16, G = p->k / 4;
    size_t panel = (size_t)p->k * 16;
    if (p->isint)
        memset(Bt, 0, (size_t)p->N1 * panel * sizeof(int32_t));
    else
        memset(Bt, 0, (size_t)p->N1 * panel * sizeof(float));
    const uint8_t *meta = l0b + p->meta;
    for (int g = 0; g < G; g++)
        for (int n = 0; n < p->n; n++) {
            uint64_t q = (uint64_t)g * (uint64_t)N16 + (uint64_t)n;
            unsigned nib = (meta[q / 2] >> (4 * (q % 2))) & 0xf;
            int i0 = (int)(nib & 3), i1 = (int)(nib >> 2);
            if (i0 >= i1)
                return npu_errf(d, NPU_EFAULT, "mmad.sp: metadata at L0B 0x%" PRIx64 ": column %d group %d has positions (%d, %d); need first < second",
                                p->meta + q / 2, n, g, i0, i1);
            for (int t = 0; t < 2; t++) {
                int kr = 2 * g + t;
                const uint8_t *src = frac_elem(l0b + p->b, (uint64_t)(kr / p->c0) * (uint64_t)p->N1 + (uint64_t)(n / 16), n % 16, kr % p->c0, p->s, p->c0);
                size_t at = (size_t)(n / 16) * panel + (size_t)(4 * g + (t ? i1 : i0)) * 16 + (size_t)(n % 16);
                if (p->isint) {
                    ((int32_t *)Bt)[at] = s8at(src);
                } else {
                    float v;
                    dec_row_f(dt, src, 1, &v, t8);
                    ((float *)Bt)[at] = v;
                }
            }
        }
    return NPU_OK;
}

/* ---- micro-kernels ------------------------------------------------------ */
/* Each computes R rows x 16 columns: c (R consecutive rows of 16 f32 in an
 * L0C fractal) = (init ? 0 : c) + sum over kk < k of a[r*lda + kk] * bt[kk*16 + j]. */

static inline float canon(float v) { return isnan(v) ? isa_fp_bits_f32(ISA_FP_NAN_F32) : v; }

static void fk_port(const float *a, size_t lda, const float *bt, int k, uint8_t *c, int init, int exact)
{
    (void)exact;   /* a*b + acc in C: never contracted under -std=c11 */
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

__attribute__((target("avx2,fma"))) static void fk_avx2(const float *a, size_t lda, const float *bt, int k, uint8_t *c,
                                                         int init, int exact)
{
    float *cf = (float *)(void *)c;
    __m256 c00, c01, c10, c11, c20, c21, c30, c31;
    if (init) {
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = _mm256_setzero_ps();
    } else {
        c00 = _mm256_loadu_ps(cf + 0);  c01 = _mm256_loadu_ps(cf + 8);
        c10 = _mm256_loadu_ps(cf + 16); c11 = _mm256_loadu_ps(cf + 24);
        c20 = _mm256_loadu_ps(cf + 32); c21 = _mm256_loadu_ps(cf + 40);
        c30 = _mm256_loadu_ps(cf + 48); c31 = _mm256_loadu_ps(cf + 56);
    }
    const float *a0 = a, *a1 = a + lda, *a2 = a + 2 * lda, *a3 = a + 3 * lda;
    if (exact) {
        for (int kk = 0; kk < k; kk++) {
            __m256 b0 = _mm256_loadu_ps(bt + (size_t)kk * 16), b1 = _mm256_loadu_ps(bt + (size_t)kk * 16 + 8);
            __m256 x = _mm256_broadcast_ss(a0 + kk);
            c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01);
            x = _mm256_broadcast_ss(a1 + kk);
            c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11);
            x = _mm256_broadcast_ss(a2 + kk);
            c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21);
            x = _mm256_broadcast_ss(a3 + kk);
            c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31);
        }
    } else {
        for (int kk = 0; kk < k; kk++) {
            __m256 b0 = _mm256_loadu_ps(bt + (size_t)kk * 16), b1 = _mm256_loadu_ps(bt + (size_t)kk * 16 + 8);
            __m256 x = _mm256_broadcast_ss(a0 + kk);
            c00 = _mm256_add_ps(c00, _mm256_mul_ps(x, b0)); c01 = _mm256_add_ps(c01, _mm256_mul_ps(x, b1));
            x = _mm256_broadcast_ss(a1 + kk);
            c10 = _mm256_add_ps(c10, _mm256_mul_ps(x, b0)); c11 = _mm256_add_ps(c11, _mm256_mul_ps(x, b1));
            x = _mm256_broadcast_ss(a2 + kk);
            c20 = _mm256_add_ps(c20, _mm256_mul_ps(x, b0)); c21 = _mm256_add_ps(c21, _mm256_mul_ps(x, b1));
            x = _mm256_broadcast_ss(a3 + kk);
            c30 = _mm256_add_ps(c30, _mm256_mul_ps(x, b0)); c31 = _mm256_add_ps(c31, _mm256_mul_ps(x, b1));
        }
    }
    _mm256_storeu_ps(cf + 0, canon8(c00));  _mm256_storeu_ps(cf + 8, canon8(c01));
    _mm256_storeu_ps(cf + 16, canon8(c10)); _mm256_storeu_ps(cf + 24, canon8(c11));
    _mm256_storeu_ps(cf + 32, canon8(c20)); _mm256_storeu_ps(cf + 40, canon8(c21));
    _mm256_storeu_ps(cf + 48, canon8(c30)); _mm256_storeu_ps(cf + 56, canon8(c31));
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
            for (int r = 0; r < 8; r++)
                acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[(size_t)r * lda + (size_t)kk]), b, acc[r]);
        }
    } else {
        for (int kk = 0; kk < k; kk++) {
            __m512 b = _mm512_loadu_ps(bt + (size_t)kk * 16);
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
#define INT_KERNEL(name, attr)                                                             \
    attr static void name(const int32_t *a, size_t lda, const int32_t *bt, int k, uint8_t *c, \
                          int init)                                                         \
    {                                                                                       \
        uint32_t acc[4][16];                                                                \
        if (init)                                                                           \
            memset(acc, 0, sizeof acc);                                                     \
        else                                                                                \
            memcpy(acc, c, sizeof acc);                                                     \
        for (int kk = 0; kk < k; kk++) {                                                    \
            const int32_t *b = bt + (size_t)kk * 16;                                        \
            for (int r = 0; r < 4; r++) {                                                   \
                uint32_t x = (uint32_t)a[(size_t)r * lda + (size_t)kk];                     \
                for (int j = 0; j < 16; j++)                                                \
                    acc[r][j] += x * (uint32_t)b[j];                                        \
            }                                                                               \
        }                                                                                   \
        memcpy(c, acc, sizeof acc);                                                         \
    }
INT_KERNEL(ik_port, )
INT_KERNEL(ik_avx2, __attribute__((target("avx2"))))
INT_KERNEL(ik_avx512, __attribute__((target("avx512f"))))

/* ---- the instruction ------------------------------------------------------ */

static int host_variant(void)
{
    if (__builtin_cpu_supports("avx512f"))
        return SIM_CUBE_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return SIM_CUBE_AVX2;
    return SIM_CUBE_PORTABLE;
}

int sim_cube_variant_supported(int variant)
{
    switch (variant) {
    case SIM_CUBE_PORTABLE: return 1;
    case SIM_CUBE_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    case SIM_CUBE_AVX512: return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("f16c");
    default: return 0;
    }
}

static npu_status compute(const mm *p, sim_unit_ctx *ctx, int dt, int variant, npu_diag *d)
{
    const uint8_t *l0a = ctx->buf[SIM_SP_L0A] + p->a;
    const uint8_t *l0b = ctx->buf[SIM_SP_L0B];
    uint8_t *l0c = ctx->buf[SIM_SP_L0C] + p->c;
    size_t M16 = (size_t)p->M1 * 16;
    size_t asz = M16 * (size_t)p->k, bsz = (size_t)p->N1 * 16 * (size_t)p->k;
    void *A = npu_malloc(asz * 4 + 64), *Bt = npu_malloc(bsz * 4 + 64);
    if (!A || !Bt) {
        npu_free(A);
        npu_free(Bt);
        return npu_errf(d, NPU_ENOMEM, "mmad: out of host memory for a %dx%dx%d tile", p->m, p->k, p->n);
    }
    float t8[256];
    if (dt == ISA_DT_E4M3 || dt == ISA_DT_E5M2)
        for (unsigned v = 0; v < 256; v++)
            t8[v] = fp8_table_val(dt, v);
    int f16c = variant != SIM_CUBE_PORTABLE;
    npu_status st = NPU_OK;
    if (p->isint) {
        decode_a_i(p, l0a, A);
        if (p->sparse)
            st = expand_sparse(p, l0b, dt, Bt, t8, d);
        else
            decode_b_i(p, l0b + p->b, Bt);
    } else {
        decode_a_f(p, l0a, dt, A, t8, f16c);
        if (p->sparse)
            st = expand_sparse(p, l0b, dt, Bt, t8, d);
        else
            decode_b_f(p, l0b + p->b, dt, Bt, t8, f16c);
    }
    if (st) {
        npu_free(A);
        npu_free(Bt);
        return st;
    }
    int R = variant == SIM_CUBE_AVX512 && !p->isint ? 8 : 4;
    for (int n1 = 0; n1 < p->N1; n1++) {
        size_t boff = (size_t)n1 * (size_t)p->k * 16;
        for (size_t row = 0; row < M16; row += (size_t)R) {
            uint8_t *crow = l0c + ((uint64_t)n1 * (uint64_t)p->M1 + row / 16) * 1024u + (row % 16) * 64u;
            size_t aoff = row * (size_t)p->k;
            if (p->isint) {
                const int32_t *ai = (const int32_t *)A + aoff, *bi = (const int32_t *)Bt + boff;
                if (variant == SIM_CUBE_AVX512)
                    ik_avx512(ai, (size_t)p->k, bi, p->k, crow, p->init);
                else if (variant == SIM_CUBE_AVX2)
                    ik_avx2(ai, (size_t)p->k, bi, p->k, crow, p->init);
                else
                    ik_port(ai, (size_t)p->k, bi, p->k, crow, p->init);
            } else {
                const float *af = (const float *)A + aoff, *bf = (const float *)Bt + boff;
                if (variant == SIM_CUBE_AVX512)
                    fk_avx512(af, (size_t)p->k, bf, p->k, crow, p->init, p->exact);
                else if (variant == SIM_CUBE_AVX2)
                    fk_avx2(af, (size_t)p->k, bf, p->k, crow, p->init, p->exact);
                else
                    fk_port(af, (size_t)p->k, bf, p->k, crow, p->init, p->exact);
            }
        }
    }
    npu_free(A);
    npu_free(Bt);
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

npu_status sim_cube_exec_variant(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d, int variant)
{
    const char *mn = sim_mn(in);
    if (in->op != ISA_OP_MMAD && in->op != ISA_OP_MMADSP)
        return npu_errf(d, NPU_EFAULT, "%s: not a cube instruction", mn);
    if (variant < 0)
        variant = host_variant();
    else if (!sim_cube_variant_supported(variant))
        return npu_errf(d, NPU_EUNSUPP, "%s: cube kernel variant %d not supported by this host", mn, variant);
    mm p;
    memset(&p, 0, sizeof p);
    int dt = in->dt;
    p.isint = dt == ISA_DT_S8;
    if (!(dt == ISA_DT_F16 || dt == ISA_DT_BF16 || dt == ISA_DT_S8 || dt == ISA_DT_E4M3 || dt == ISA_DT_E5M2 ||
          dt == ISA_DT_F32))
        return npu_errf(d, NPU_EFAULT, "%s: input dtype %s not legal", mn, isa_dtype_suffix(dt));
    if (in->dt2 != (p.isint ? ISA_DT_S32 : ISA_DT_F32))
        return npu_errf(d, NPU_EFAULT, "%s.%s.%s: %s inputs accumulate in %s", mn, isa_dtype_suffix(dt),
                        isa_dtype_suffix(in->dt2), isa_dtype_suffix(dt), p.isint ? "s32" : "f32");
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
    return compute(&p, ctx, dt, variant, d);
}

npu_status sim_exec_cube(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d)
{
    return sim_cube_exec_variant(ctx, in, w, d, -1);
}
