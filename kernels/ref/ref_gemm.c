/* ref_gemm.c — golden data for the GEMM family: kernels/gemm.s (dense),
 * kernels/gemm_fp8.s (e4m3 with per-128-block scales, DeepGEMM style) and
 * kernels/gemm_sparse.s (2:4 structured-sparse B through mmad.sp).
 *
 * Every reference is a plain triple loop in double over the inputs exactly
 * as stored (already rounded to their dtype), rounded once to the output
 * dtype. The kernels accumulate in fp32 (int32 for s8), one rounding per
 * multiply-add in increasing k (docs/cube.md), so the tolerances bound the
 * fp32 accumulation error (docs/kernels.md has the reasoning). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/ref/ref.h"
#include "sim/sparse.h"

#define DTB(x) (1u << ISA_DT_##x)
/* gemm_sparse.s's tile width: its metadata comes in panels of this many
 * columns (ref_sparse_panels). */
#define SPARSE_BN 128

/* Common options: m, n, k with limits. */
static npu_status get_mnk(ref_ctx *c, const char *who, int64_t *m, int64_t *n, int64_t *k, npu_diag *d)
{
    npu_status st;
    if ((st = ref_opt_int(c, "m", 128, m, d)) || (st = ref_opt_int(c, "n", 128, n, d)) ||
        (st = ref_opt_int(c, "k", 128, k, d)))
        return st;
    if (*m < 1 || *n < 1 || *k < 1 || *m > 65535 || *n > 65535 || *k > 65535)
        return npu_errf(d, NPU_EINVAL, "ref %s: m, n, k must be in 1..65535 (m=%lld n=%lld k=%lld)", who,
                        (long long)*m, (long long)*n, (long long)*k);
    return NPU_OK;
}

/* The dtype an output of the cube's accumulator can be cast to by FIX. */
static npu_status get_out(ref_ctx *c, const char *who, isa_dtype in, isa_dtype *out, npu_diag *d)
{
    if (in == ISA_DT_S8)
        return ref_opt_dtype(c, "out", ISA_DT_S32, DTB(S32), out, d);
    (void)who;
    return ref_opt_dtype(c, "out", ISA_DT_F32, DTB(F32) | DTB(F16) | DTB(BF16), out, d);
}

/* Tolerance of an fp32-accumulated dot product of length k with |a|,|b| <=
 * amax, bmax, rounded to out. Each of the k fp32 additions errs by at most
 * 2^-24 of the running sum; with random signs the running sum stays near
 * sqrt(k)/3 amax bmax, so 4 k 2^-24 amax bmax is a safe absolute bound
 * (the worst case, k^2/2 2^-24, is never approached by random data). The
 * output rounding is relative: half an ulp (f16 2^-11, bf16 2^-8), doubled
 * for a flip of a near-halfway fp32 sum. */
static void gemm_tol(isa_dtype out, int64_t k, double amax, double bmax, double *rtol, double *atol,
                     char *why, size_t wn)
{
    double acc = 4.0 * (double)k * ldexp(1.0, -24) * amax * bmax;
    switch (out) {
    case ISA_DT_S32:
        *rtol = 0;
        *atol = 0;
        snprintf(why, wn, "int32 accumulation is exact");
        return;
    case ISA_DT_F16:
        *rtol = ldexp(1.0, -10);
        *atol = acc + ldexp(1.0, -24);
        break;
    case ISA_DT_BF16:
        *rtol = ldexp(1.0, -7);
        *atol = acc + 1e-30;
        break;
    default:
        *rtol = 1e-6;
        *atol = acc;
        break;
    }
    snprintf(why, wn, "fp32 accumulation over k=%lld: atol = 4 k 2^-24 max|a| max|b|; rtol: %s output rounding",
             (long long)k, isa_dtype_suffix(out));
}

/* Every element of t as a double (exact), decoded once so that the triple
 * loops below run on plain doubles. NULL when out of memory. */
static double *to_f64(const npy_tensor *t)
{
    int64_t n = npy_numel(t);
    double *v = npu_malloc((size_t)(n ? n : 1) * sizeof *v);
    if (v)
        for (int64_t i = 0; i < n; i++)
            v[i] = ref_get(t, i);
    return v;
}

/* C = A x B in double, rounded to C's dtype. A m x k, B k x n row-major.
 *
 * Every element is the sum over p = 0..k-1 in increasing p, from 0, each
 * step one double multiply and one double add (no fused multiply-add), as
 * in the plain triple loop; the loops only visit the elements in blocks
 * so that the host's cache and registers hold them: MM_RB rows x MM_CB
 * columns of sums (in acc) over MM_KB values of p at a time, and within
 * that MM_R x MM_C sums in registers (two doubles a vector). The same
 * bits as the triple loop (tests/kernels/test_ref.c), 4096^3 in ~20 s
 * instead of ~120 s. */
#define MM_RB 64
#define MM_CB 512
#define MM_KB 256
#define MM_R 4   /* mm_kernel's block */
#define MM_C 4
_Static_assert(MM_R == 4 && MM_C == 4, "mm_kernel is written out for a 4 x 4 block");
typedef double mm_v2 __attribute__((vector_size(16)));

static inline mm_v2 mm_load(const double *p)
{
    mm_v2 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void mm_store(double *p, mm_v2 v) { memcpy(p, &v, sizeof v); }

/* acc[r][q] (row stride MM_CB) += A[i+r][p] bp[p-p0][q] (row stride
 * MM_CB: B's rows p0..p1 of the block, packed) over p = p0..p1-1 in order,
 * for a 4 x 4 block of sums held in eight two-double registers (named, so
 * that the compiler keeps them there). */
static void mm_kernel(double *acc, const double *av, const double *bp, int64_t k, int64_t i, int64_t p0,
                      int64_t p1)
{
    mm_v2 s00 = mm_load(acc), s01 = mm_load(acc + 2);
    mm_v2 s10 = mm_load(acc + MM_CB), s11 = mm_load(acc + MM_CB + 2);
    mm_v2 s20 = mm_load(acc + 2 * MM_CB), s21 = mm_load(acc + 2 * MM_CB + 2);
    mm_v2 s30 = mm_load(acc + 3 * MM_CB), s31 = mm_load(acc + 3 * MM_CB + 2);
    const double *a0 = av + i * k, *a1 = a0 + k, *a2 = a1 + k, *a3 = a2 + k;
    const double *br = bp;
    for (int64_t p = p0; p < p1; p++, br += MM_CB) {
        const mm_v2 b0 = mm_load(br), b1 = mm_load(br + 2);
        const mm_v2 x0 = {a0[p], a0[p]}, x1 = {a1[p], a1[p]}, x2 = {a2[p], a2[p]}, x3 = {a3[p], a3[p]};
        s00 += x0 * b0;
        s01 += x0 * b1;
        s10 += x1 * b0;
        s11 += x1 * b1;
        s20 += x2 * b0;
        s21 += x2 * b1;
        s30 += x3 * b0;
        s31 += x3 * b1;
    }
    mm_store(acc, s00);
    mm_store(acc + 2, s01);
    mm_store(acc + MM_CB, s10);
    mm_store(acc + MM_CB + 2, s11);
    mm_store(acc + 2 * MM_CB, s20);
    mm_store(acc + 2 * MM_CB + 2, s21);
    mm_store(acc + 3 * MM_CB, s30);
    mm_store(acc + 3 * MM_CB + 2, s31);
}

static npu_status matmul(ref_ctx *rc, const npy_tensor *a, const npy_tensor *b, npy_tensor *c, int64_t m,
                         int64_t n, int64_t k, npu_diag *d)
{
    double *acc = npu_malloc((size_t)MM_RB * MM_CB * sizeof *acc), *av = to_f64(a), *bv = to_f64(b);
    double *bp = npu_malloc((size_t)MM_KB * MM_CB * sizeof *bp);
    npu_status st = NPU_OK;
    if (!acc || !av || !bv || !bp) {
        st = npu_errf(d, NPU_ENOMEM, "ref gemm: out of memory for the reference");
        goto out;
    }
    for (int64_t i0 = 0; i0 < m; i0 += MM_RB) {
        const int64_t ib = NPU_MIN(MM_RB, m - i0);
        for (int64_t j0 = 0; j0 < n; j0 += MM_CB) {
            const int64_t jb = NPU_MIN(MM_CB, n - j0);
            memset(acc, 0, (size_t)MM_RB * MM_CB * sizeof *acc);
            for (int64_t p0 = 0; p0 < k; p0 += MM_KB) {
                const int64_t p1 = NPU_MIN(k, p0 + MM_KB);
                /* B's block, contiguous: no page walk per row of p */
                for (int64_t p = p0; p < p1; p++)
                    memcpy(bp + (p - p0) * MM_CB, bv + p * n + j0, (size_t)jb * sizeof *bp);
                /* whole register blocks, then the edge rows and columns */
                const int64_t ir = ib - ib % MM_R, jr = jb - jb % MM_C;
                for (int64_t ii = 0; ii < ir; ii += MM_R)
                    for (int64_t jj = 0; jj < jr; jj += MM_C)
                        mm_kernel(acc + ii * MM_CB + jj, av, bp + jj, k, i0 + ii, p0, p1);
                for (int64_t ii = 0; ii < ib; ii++) {
                    double *ar = acc + ii * MM_CB;
                    const double *ap = av + (i0 + ii) * k;
                    for (int64_t jj = ii < ir ? jr : 0; jj < jb; jj++)
                        for (int64_t p = p0; p < p1; p++)
                            ar[jj] += ap[p] * bp[(p - p0) * MM_CB + jj];
                }
            }
            for (int64_t ii = 0; ii < ib; ii++)
                for (int64_t j = 0; j < jb; j++)
                    ref_put(c, (i0 + ii) * n + j0 + j, acc[ii * MM_CB + j]);
        }
        ref_progress(rc, (double)(i0 + ib) / (double)m);
    }
out:
    npu_free(acc);
    npu_free(bp);
    npu_free(av);
    npu_free(bv);
    return st;
}

static npu_status tile_defines(ref_ctx *c, int64_t bm, int64_t bn, int64_t bk, npu_diag *d)
{
    npu_status st;
    if (bm > 0 && (st = ref_define(c, "BM", bm, d)))
        return st;
    if (bn > 0 && (st = ref_define(c, "BN", bn, d)))
        return st;
    if (bk > 0 && (st = ref_define(c, "BK", bk, d)))
        return st;
    return NPU_OK;
}

/* gemm.s's BM and BN when no -D gives them (its .ifndef defaults, for every
 * dtype): what the tile note assumes without --bm/--bn. tests/e2e/
 * t_kernel_gemm.sh holds the two together (the default kernel and one
 * assembled with -D BM=GEMM_TILE -D BN=GEMM_TILE are the same bytes). */
#define GEMM_TILE 128

/* How the kernel's tiles of C fall on the cores (dealt round robin): a last
 * round that leaves cores idle is the first thing to fix in a tiling
 * (docs/bottlenecks.md). */
static void tile_note(ref_ctx *c, int64_t m, int64_t n, int64_t bm, int64_t bn)
{
    int64_t cores = ref_cores(c) > 0 ? ref_cores(c) : 1;
    int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
    int64_t most = (tiles + cores - 1) / cores, rest = tiles % cores;
    if (tiles < cores)
        ref_note(c, "tiles: %lld of %lld x %lld over %lld cores: %lld cores get none", (long long)tiles,
                 (long long)bm, (long long)bn, (long long)cores, (long long)(cores - tiles));
    else if (rest)
        ref_note(c, "tiles: %lld of %lld x %lld over %lld cores: %lld cores compute %lld, %lld compute %lld "
                    "(the cores' work is %.0f %% balanced)",
                 (long long)tiles, (long long)bm, (long long)bn, (long long)cores, (long long)rest,
                 (long long)most, (long long)(cores - rest), (long long)(most - 1),
                 100.0 * (double)tiles / (double)(most * cores));
    else
        ref_note(c, "tiles: %lld of %lld x %lld over %lld cores: %lld each", (long long)tiles, (long long)bm,
                 (long long)bn, (long long)cores, (long long)most);
}

npu_status ref_gen_gemm(ref_ctx *c, npu_diag *d)
{
    int64_t m, n, k, bm, bn, bk;
    isa_dtype dt, out;
    npu_status st;
    if ((st = get_mnk(c, "gemm", &m, &n, &k, d)) ||
        (st = ref_opt_dtype(c, "dtype", ISA_DT_F16, DTB(F16) | DTB(BF16) | DTB(S8), &dt, d)) ||
        (st = get_out(c, "gemm", dt, &out, d)) || (st = ref_opt_int(c, "bm", 0, &bm, d)) ||
        (st = ref_opt_int(c, "bn", 0, &bn, d)) || (st = ref_opt_int(c, "bk", 0, &bk, d)))
        return st;
    npu_rng *r = ref_rng(c);
    double lim = dt == ISA_DT_S8 ? 127 : 1.0;
    npy_tensor A, B, C;
    memset(&B, 0, sizeof B);
    memset(&C, 0, sizeof C);
    int64_t cs[2] = {m, n};
    if ((st = ref_rand(&A, dt, m, k, r, dt == ISA_DT_S8 ? -128 : -1.0, lim, d)) ||
        (st = ref_rand(&B, dt, k, n, r, dt == ISA_DT_S8 ? -128 : -1.0, lim, d)) ||
        (st = npy_alloc(&C, out, 2, cs, d)))
        goto fail;
    if ((st = matmul(c, &A, &B, &C, m, n, k, d)))
        goto fail;
    double rtol, atol;
    char why[256];
    gemm_tol(out, k, lim, lim, &rtol, &atol, why, sizeof why);
    if ((st = ref_in(c, "A", &A, d)) || (st = ref_in(c, "B", &B, d)) ||
        (st = ref_out(c, "C", &C, rtol, atol, why, d)) || (st = ref_scalar(c, "m", m, d)) ||
        (st = ref_scalar(c, "n", n, d)) || (st = ref_scalar(c, "k", k, d)))
        goto fail;
    if ((st = ref_define(c, "DT", dt, d)) || (st = ref_define(c, "ODT", out, d)) ||
        (st = tile_defines(c, bm, bn, bk, d)))
        goto fail;
    ref_kernel(c, "gemm.s");
    ref_note(c, "gemm %s -> %s: C[%lld x %lld] = A[%lld x %lld] x B[%lld x %lld]", isa_dtype_suffix(dt),
             isa_dtype_suffix(out), (long long)m, (long long)n, (long long)m, (long long)k, (long long)k, (long long)n);
    tile_note(c, m, n, bm > 0 ? bm : GEMM_TILE, bn > 0 ? bn : GEMM_TILE);
    return NPU_OK;
fail:
    npy_free(&A);
    npy_free(&B);
    npy_free(&C);
    return st;
}

/* ---- fp8 with per-block scales ----------------------------------------------
 * DeepGEMM's fine-grained scaling: A (m x k, e4m3) has one fp32 scale per
 * row and 128-wide k block, B (k x n, e4m3) one per 128 x 128 block;
 *   C[i][j] = sum_kb sa[kb][i] * sb[kb][j / 128] * sum_{p in kb} A[i][p] B[p][j]
 * sa is stored k-block-major (KB x m, "MN-major" as DeepGEMM wants it), so
 * the scales of a row tile are contiguous; sb is KB x NB row-major. The
 * kernel computes each block's partial product on the cube (fp32), and the
 * vector unit multiplies it by the scales and accumulates in fp32 in UB. */
npu_status ref_gen_gemm_fp8(ref_ctx *c, npu_diag *d)
{
    int64_t m, n, k;
    isa_dtype out;
    npu_status st;
    if ((st = get_mnk(c, "gemm_fp8", &m, &n, &k, d)) ||
        (st = ref_opt_dtype(c, "out", ISA_DT_F32, DTB(F32) | DTB(BF16) | DTB(F16), &out, d)))
        return st;
    int64_t KB = (k + 127) / 128, NB = (n + 127) / 128;
    npu_rng *r = ref_rng(c);
    npy_tensor A, B, SA, SB, C;
    memset(&B, 0, sizeof B);
    memset(&SA, 0, sizeof SA);
    memset(&SB, 0, sizeof SB);
    memset(&C, 0, sizeof C);
    int64_t cs[2] = {m, n};
    /* Quantised data as DeepGEMM sees it: e4m3 values over their range,
     * scales of the size that undoes a per-block amax normalisation. */
    if ((st = ref_rand(&A, ISA_DT_E4M3, m, k, r, -448, 448, d)) ||
        (st = ref_rand(&B, ISA_DT_E4M3, k, n, r, -448, 448, d)) ||
        (st = ref_rand(&SA, ISA_DT_F32, KB, m, r, 0.5 / 448, 2.0 / 448, d)) ||
        (st = ref_rand(&SB, ISA_DT_F32, KB, NB, r, 0.5 / 448, 2.0 / 448, d)) ||
        (st = npy_alloc(&C, out, 2, cs, d)))
        goto fail;
    /* per row i: the block partials of every column, then scaled and summed */
    double *acc = npu_calloc((size_t)n, sizeof *acc), *part = npu_calloc((size_t)n, sizeof *part);
    double *av = to_f64(&A), *bv = to_f64(&B);
    if (!acc || !part || !av || !bv) {
        npu_free(acc);
        npu_free(part);
        npu_free(av);
        npu_free(bv);
        st = npu_errf(d, NPU_ENOMEM, "ref gemm_fp8: out of memory");
        goto fail;
    }
    for (int64_t i = 0; i < m; i++) {
        memset(acc, 0, (size_t)n * sizeof *acc);
        for (int64_t kb = 0; kb < KB; kb++) {
            memset(part, 0, (size_t)n * sizeof *part);
            for (int64_t p = kb * 128; p < k && p < kb * 128 + 128; p++) {
                double x = av[i * k + p];
                const double *br = bv + p * n;
                for (int64_t j = 0; j < n; j++)
                    part[j] += x * br[j];
            }
            double sa = ref_get(&SA, kb * m + i);
            for (int64_t j = 0; j < n; j++)
                acc[j] += part[j] * sa * ref_get(&SB, kb * NB + j / 128);
        }
        for (int64_t j = 0; j < n; j++)
            ref_put(&C, i * n + j, acc[j]);
        ref_progress(c, (double)(i + 1) / (double)m);
    }
    npu_free(acc);
    npu_free(part);
    npu_free(av);
    npu_free(bv);
    /* Each block partial: 128 fp32 additions of products up to 448^2 with
     * random signs, the running sum ~ sqrt(128) 448^2 / 3, each addition
     * erring by 2^-24 of it: together below 128 * 2^-24 * 448^2 (a 4x
     * margin over the random walk); scaled by at most smax^2. Then 2 fp32
     * roundings per block in the vector unit (scale product, multiply-add),
     * relative, in rtol. Over KB blocks the absolute bounds add up.
     * (Observed at m=300 n=200 k=500: max abs 7.6e-6 against atol 1.2e-4.) */
    double smax = 2.0 / 448;
    double blk = 128 * ldexp(1.0, -24) * 448.0 * 448.0 * smax * smax;
    double rtol = out == ISA_DT_F32 ? 1e-5 : out == ISA_DT_BF16 ? ldexp(1.0, -7) : ldexp(1.0, -10);
    double atol = (double)KB * blk;
    char why[256];
    snprintf(why, sizeof why, "fp32 block partials (128 adds) and 2 fp32 roundings per block over %lld blocks; %s output",
             (long long)KB, isa_dtype_suffix(out));
    if ((st = ref_in(c, "A", &A, d)) || (st = ref_in(c, "B", &B, d)) || (st = ref_in(c, "SA", &SA, d)) ||
        (st = ref_in(c, "SB", &SB, d)) || (st = ref_out(c, "C", &C, rtol, atol, why, d)) ||
        (st = ref_scalar(c, "m", m, d)) || (st = ref_scalar(c, "n", n, d)) || (st = ref_scalar(c, "k", k, d)))
        goto fail;
    if ((st = ref_define(c, "ODT", out, d)))
        goto fail;
    ref_kernel(c, "gemm_fp8.s");
    ref_note(c, "gemm_fp8 e4m3 -> %s: C[%lld x %lld], k=%lld in %lld blocks of 128; SA[%lld x %lld] (k-block major), SB[%lld x %lld]",
             isa_dtype_suffix(out), (long long)m, (long long)n, (long long)k, (long long)KB, (long long)KB, (long long)m,
             (long long)KB, (long long)NB);
    return NPU_OK;
fail:
    npy_free(&A);
    npy_free(&B);
    npy_free(&SA);
    npy_free(&SB);
    npy_free(&C);
    return st;
}

/* ---- 2:4 sparse ------------------------------------------------------------------
 * A dense m x k; B k x n pruned 2:4 along k by sim_sparsify_24 (the same
 * compressor `npusim sparsify` uses). The kernel gets the compressed values
 * (k/2 x n) and metadata; the reference multiplies A by the pruned dense B
 * (rebuilt here from values + metadata by the documented format, not by
 * the cube's decoder). k must be a multiple of 4. */
npu_status ref_gen_gemm_sparse(ref_ctx *c, npu_diag *d)
{
    int64_t m, n, k;
    isa_dtype dt, out;
    npu_status st;
    if ((st = get_mnk(c, "gemm_sparse", &m, &n, &k, d)) ||
        (st = ref_opt_dtype(c, "dtype", ISA_DT_F16, DTB(F16) | DTB(BF16), &dt, d)) ||
        (st = get_out(c, "gemm_sparse", dt, &out, d)))
        return st;
    if (k % 4)
        return npu_errf(d, NPU_EINVAL, "ref gemm_sparse: k=%lld is not a multiple of 4 (2:4 groups)", (long long)k);
    npu_rng *r = ref_rng(c);
    double lim = dt == ISA_DT_S8 ? 127 : 1.0;
    npy_tensor A, B, V, M, P, C;
    memset(&B, 0, sizeof B);
    memset(&V, 0, sizeof V);
    memset(&M, 0, sizeof M);
    memset(&P, 0, sizeof P);
    memset(&C, 0, sizeof C);
    int64_t cs[2] = {m, n}, vs[2] = {k / 2, n}, ms[1] = {(int64_t)sim_sparse_meta_bytes((int)k, (int)n)};
    int64_t bs[2] = {k, n};
    if ((st = ref_rand(&A, dt, m, k, r, dt == ISA_DT_S8 ? -128 : -1.0, lim, d)) ||
        (st = ref_rand(&B, dt, k, n, r, dt == ISA_DT_S8 ? -128 : -1.0, lim, d)) ||
        (st = npy_alloc(&V, dt, 2, vs, d)) || (st = npy_alloc(&M, ISA_DT_U8, 1, ms, d)) ||
        (st = npy_alloc(&P, dt, 2, bs, d)) || (st = npy_alloc(&C, out, 2, cs, d)))
        goto fail;
    if ((st = sim_sparsify_24(dt, B.data, (int)k, (int)n, V.data, M.data, d)))
        goto fail;
    {
        size_t es = (size_t)isa_dtype_bytes(dt);
        uint64_t n16 = ((uint64_t)n + 15) / 16 * 16;
        const uint8_t *mb = M.data;
        for (int64_t g = 0; g < k / 4; g++)
            for (int64_t col = 0; col < n; col++) {
                uint64_t q = (uint64_t)g * n16 + (uint64_t)col;
                unsigned nib = (mb[q / 2] >> (4 * (q % 2))) & 15u;
                for (int t = 0; t < 2; t++) {
                    int64_t row = 4 * g + (int)(t ? nib >> 2 : nib & 3);
                    memcpy((uint8_t *)P.data + ((size_t)row * (size_t)n + (size_t)col) * es,
                           (const uint8_t *)V.data + ((size_t)(2 * g + t) * (size_t)n + (size_t)col) * es, es);
                }
            }
    }
    if ((st = matmul(c, &A, &P, &C, m, n, k, d)))
        goto fail;
    double rtol, atol;
    char why[256];
    gemm_tol(out, k / 2, lim, lim, &rtol, &atol, why, sizeof why);
    npy_free(&B);
    npy_free(&P);
    {
        /* the kernel reads the metadata in panels of its BN columns */
        npy_tensor PM;
        int64_t ps[1] = {(int64_t)ref_sparse_panel_bytes((int)k, (int)n, SPARSE_BN)};
        if ((st = npy_alloc(&PM, ISA_DT_U8, 1, ps, d)))
            goto fail;
        ref_sparse_panels(M.data, (int)k, (int)n, SPARSE_BN, PM.data);
        npy_free(&M);
        M = PM;
        ms[0] = ps[0];
    }
    if ((st = ref_in(c, "A", &A, d)) || (st = ref_in(c, "BV", &V, d)) || (st = ref_in(c, "BM", &M, d)) ||
        (st = ref_out(c, "C", &C, rtol, atol, why, d)) || (st = ref_scalar(c, "m", m, d)) ||
        (st = ref_scalar(c, "n", n, d)) || (st = ref_scalar(c, "k", k, d)))
        goto fail;
    if ((st = ref_define(c, "DT", dt, d)) || (st = ref_define(c, "ODT", out, d)) ||
        (st = ref_define(c, "BN", SPARSE_BN, d)))
        goto fail;
    ref_kernel(c, "gemm_sparse.s");
    ref_note(c, "gemm_sparse %s -> %s: C[%lld x %lld] = A[%lld x %lld] x sparse24(B)[%lld x %lld] (BV: %lld x %lld values, BM: %lld metadata bytes in panels of %d columns)",
             isa_dtype_suffix(dt), isa_dtype_suffix(out), (long long)m, (long long)n, (long long)m, (long long)k,
             (long long)k, (long long)n, (long long)(k / 2), (long long)n, (long long)ms[0], SPARSE_BN);
    return NPU_OK;
fail:
    npy_free(&A);
    npy_free(&B);
    npy_free(&V);
    npy_free(&M);
    npy_free(&P);
    npy_free(&C);
    return st;
}
