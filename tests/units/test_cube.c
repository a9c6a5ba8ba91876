/* test_cube.c — mmad / mmad.sp against hand-computed results and against a
 * plain triple loop (docs/cube.md's accumulation order: per output, in
 * increasing k, acc = f32(acc + f32(a*b))), every dtype, every kernel
 * variant the host has (bit-identical), sparsity, faults. Also the 2:4
 * compressor of sim/sparse.h. */
#include "tests/units/ut.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim/sparse.h"
#include "sim/units_int.h"

/* Layout helpers, written from the docs, independently of cube.c. */
static size_t za_off(int row, int col, int K1, int s)   /* L0A ZZ */
{
    int c0 = 32 / s;
    return ((size_t)(row / 16) * (size_t)K1 + (size_t)(col / c0)) * 512 + ((size_t)(row % 16) * (size_t)c0 + (size_t)(col % c0)) * (size_t)s;
}
static size_t zb_off(int kk, int n, int N1, int s)      /* L0B ZN */
{
    int c0 = 32 / s;
    return ((size_t)(kk / c0) * (size_t)N1 + (size_t)(n / 16)) * 512 + ((size_t)(n % 16) * (size_t)c0 + (size_t)(kk % c0)) * (size_t)s;
}
static size_t nzc_off(int m, int n, int M1)             /* L0C NZ, column-block-major */
{
    return ((size_t)(n / 16) * (size_t)M1 + (size_t)(m / 16)) * 1024 + ((size_t)(m % 16) * 16 + (size_t)(n % 16)) * 4;
}

/* A random element of dt, as its bits, moderate magnitude. */
static uint32_t rnd_elem(npu_rng *r, int dt)
{
    uint64_t x = npu_rng_next(r);
    double v = ((double)(x >> 11) / 9007199254740992.0) * 4.0 - 2.0;
    switch (dt) {
    case ISA_DT_S8: return (uint32_t)(uint8_t)(int8_t)((int)(x % 256) - 128);
    default: return isa_fp_from_double((isa_dtype)dt, v, ISA_RM_RNE, 1);
    }
}

static void put(uint8_t *p, int s, uint32_t v) { memcpy(p, &v, (size_t)s); }

static double val(int dt, uint32_t bits)
{
    return dt == ISA_DT_S8 ? (double)(int8_t)bits : isa_fp_to_double((isa_dtype)dt, bits);
}

typedef struct gemm {
    int dt, m, k, n;
    uint32_t *A, *B;     /* bits, row-major m x k and k x n */
} gemm;

static void gemm_fill(gemm *g, npu_rng *r)
{
    g->A = npu_malloc(sizeof(uint32_t) * (size_t)g->m * (size_t)g->k);
    g->B = npu_malloc(sizeof(uint32_t) * (size_t)g->k * (size_t)g->n);
    for (int i = 0; i < g->m * g->k; i++)
        g->A[i] = rnd_elem(r, g->dt);
    for (int i = 0; i < g->k * g->n; i++)
        g->B[i] = rnd_elem(r, g->dt);
}

static void gemm_load(ut *u, const gemm *g, uint64_t a, uint64_t b)
{
    int s = isa_dtype_bytes(g->dt), c0 = 32 / s;
    int K1 = (g->k + c0 - 1) / c0, N1 = (g->n + 15) / 16;
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk++)
            put(u->ctx.buf[SIM_SP_L0A] + a + za_off(i, kk, K1, s), s, g->A[i * g->k + kk]);
    for (int kk = 0; kk < g->k; kk++)
        for (int j = 0; j < g->n; j++)
            put(u->ctx.buf[SIM_SP_L0B] + b + zb_off(kk, j, N1, s), s, g->B[kk * g->n + j]);
}

/* The reference: the documented order, in the plainest way. c0 holds the
 * initial accumulator (NULL: zero); B may be given dense with zeros. */
static void ref_gemm(const gemm *g, const uint32_t *B, const void *c0, void *out)
{
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            if (g->dt == ISA_DT_S8) {
                uint32_t acc = c0 ? ((const uint32_t *)c0)[i * g->n + j] : 0;
                for (int kk = 0; kk < g->k; kk++)
                    acc += (uint32_t)((int32_t)val(g->dt, g->A[i * g->k + kk]) * (int32_t)val(g->dt, B[kk * g->n + j]));
                ((uint32_t *)out)[i * g->n + j] = acc;
            } else {
                float acc = c0 ? ((const float *)c0)[i * g->n + j] : 0.0f;
                for (int kk = 0; kk < g->k; kk++) {
                    float p = (float)(val(g->dt, g->A[i * g->k + kk]) * val(g->dt, B[kk * g->n + j]));
                    acc = (float)((double)acc + (double)p);
                }
                ((float *)out)[i * g->n + j] = acc;
            }
        }
}

static void read_c(ut *u, const gemm *g, uint64_t c, void *out)
{
    int M1 = (g->m + 15) / 16;
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++)
            memcpy((uint8_t *)out + 4 * (size_t)(i * g->n + j), u->ctx.buf[SIM_SP_L0C] + c + nzc_off(i, j, M1), 4);
}

static int acc_dt(int dt) { return dt == ISA_DT_S8 ? ISA_DT_S32 : ISA_DT_F32; }

START_TEST(t_hand_f16)
{
    ut *u = ut_new();
    /* A = [1 2 3; 4 5 6], B = [1 0; 0 1; 1 1] -> C = [4 5; 10 11]; then += again -> [8 10; 20 22] */
    float A[2][3] = {{1, 2, 3}, {4, 5, 6}}, B[3][2] = {{1, 0}, {0, 1}, {1, 1}};
    for (int i = 0; i < 2; i++)
        for (int kk = 0; kk < 3; kk++)
            ut_put_f16(u->ctx.buf[SIM_SP_L0A] + za_off(i, kk, 1, 2), A[i][kk]);
    for (int kk = 0; kk < 3; kk++)
        for (int j = 0; j < 2; j++)
            ut_put_f16(u->ctx.buf[SIM_SP_L0B] + zb_off(kk, j, 1, 2), B[kk][j]);
    u->x[R_D] = 0; u->x[R_S0] = 0; u->x[R_S1] = 0; u->x[R_CFG] = ISA_MM_CFG(2, 3, 2, 1);
    isa_insn in = ut_insn(ISA_OP_MMAD, ISA_DT_F16, ISA_DT_F32, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    uint8_t *c = u->ctx.buf[SIM_SP_L0C];
    ck_assert_float_eq(ut_get_f32(c + 0), 4.0f);
    ck_assert_float_eq(ut_get_f32(c + 4), 5.0f);
    ck_assert_float_eq(ut_get_f32(c + 64), 10.0f);
    ck_assert_float_eq(ut_get_f32(c + 68), 11.0f);
    ck_assert_uint_eq(u->w.macs, 12);
    ck_assert_uint_eq(u->w.fractals, 1);
    u->x[R_CFG] = ISA_MM_CFG(2, 3, 2, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f32(c + 68), 22.0f);
    /* reports: A, B, C read (accumulate), C write */
    ck_assert_int_eq(u->nlog, 4);
    ck_assert_int_eq(u->log[3].sp, SIM_SP_L0C);
    ck_assert_int_eq(u->log[3].w, 1);
    ck_assert_uint_eq(u->log[3].len, 1024);
    ut_free(u);
}
END_TEST

/* Random shapes, every dtype, every variant: bit-exact against the reference. */
START_TEST(t_random_all_dtypes)
{
    static const int dts[] = {ISA_DT_F16, ISA_DT_BF16, ISA_DT_E4M3, ISA_DT_E5M2, ISA_DT_F32, ISA_DT_S8};
    npu_rng r = {2024};
    ut *u = ut_new();
    for (size_t t = 0; t < NPU_ARRAY_LEN(dts); t++)
        for (int rep = 0; rep < 4; rep++) {
            gemm g = {dts[t], 1 + (int)(npu_rng_next(&r) % 40), 1 + (int)(npu_rng_next(&r) % 70), 1 + (int)(npu_rng_next(&r) % 40), 0, 0};
            if (rep == 3) {   /* larger than one 128-row x 128-k chunk of the model */
                int s = isa_dtype_bytes(dts[t]);
                g.m = s == 4 ? 20 : 130;
                g.k = s == 4 ? 300 : s == 2 ? 200 : 300;
                g.n = 40;
            }
            gemm_fill(&g, &r);
            memset(u->ctx.buf[SIM_SP_L0A], 0, 65536);
            memset(u->ctx.buf[SIM_SP_L0B], 0, 65536);
            gemm_load(u, &g, 1024, 512);
            size_t mn = (size_t)g.m * (size_t)g.n;
            uint32_t *want = npu_malloc(4 * mn), *want2 = npu_malloc(4 * mn), *got = npu_malloc(4 * mn);
            ref_gemm(&g, g.B, NULL, want);
            ref_gemm(&g, g.B, want, want2);
            for (int v = SIM_CUBE_PORTABLE; v <= SIM_CUBE_AVX512; v++) {
                if (!sim_cube_variant_supported(v))
                    continue;
                u->x[R_D] = 2048; u->x[R_S0] = 1024; u->x[R_S1] = 512;
                u->x[R_CFG] = ISA_MM_CFG(g.m, g.k, g.n, 1);
                isa_insn in = ut_insn(ISA_OP_MMAD, g.dt, acc_dt(g.dt), 0);
                memset(&u->w, 0, sizeof u->w);
                ck_assert_int_eq(sim_cube_exec_variant(&u->ctx, &in, &u->w, &u->d, v), NPU_OK);
                read_c(u, &g, 2048, got);
                for (size_t i = 0; i < mn; i++)
                    ck_assert_msg(got[i] == want[i], "%s %dx%dx%d variant %d elem %zu: %08x want %08x",
                                  isa_dtype_suffix(g.dt), g.m, g.k, g.n, v, i, got[i], want[i]);
                u->x[R_CFG] = ISA_MM_CFG(g.m, g.k, g.n, 0);
                ck_assert_int_eq(sim_cube_exec_variant(&u->ctx, &in, &u->w, &u->d, v), NPU_OK);
                read_c(u, &g, 2048, got);
                for (size_t i = 0; i < mn; i++)
                    ck_assert_msg(got[i] == want2[i], "%s accumulate variant %d elem %zu", isa_dtype_suffix(g.dt), v, i);
                int c0 = 32 / isa_dtype_bytes(g.dt);
                ck_assert_uint_eq(u->w.fractals, (uint64_t)((g.m + 15) / 16) * (uint64_t)((g.k + c0 - 1) / c0) * (uint64_t)((g.n + 15) / 16));
                ck_assert_uint_eq(u->w.macs, (uint64_t)g.m * (uint64_t)g.k * (uint64_t)g.n);
            }
            npu_free(want); npu_free(want2); npu_free(got);
            npu_free(g.A); npu_free(g.B);
        }
    ut_free(u);
}
END_TEST

/* Special values: NaN results are canonical in every variant; inf * 0. */
START_TEST(t_special_values)
{
    ut *u = ut_new();
    ut_put_f16(u->ctx.buf[SIM_SP_L0A] + za_off(0, 0, 1, 2), INFINITY);
    ut_put_f16(u->ctx.buf[SIM_SP_L0A] + za_off(1, 0, 1, 2), 1.0f);
    ut_put_f16(u->ctx.buf[SIM_SP_L0B] + zb_off(0, 0, 1, 2), 0.0f);
    ut_put_f16(u->ctx.buf[SIM_SP_L0B] + zb_off(0, 1, 1, 2), 65504.0f);
    ut_put_f16(u->ctx.buf[SIM_SP_L0B] + zb_off(1, 1, 1, 2), 65504.0f);
    ut_put_f16(u->ctx.buf[SIM_SP_L0A] + za_off(1, 1, 1, 2), 65504.0f);
    for (int v = 0; v <= 2; v++) {
        if (!sim_cube_variant_supported(v))
            continue;
        u->x[R_CFG] = ISA_MM_CFG(2, 2, 2, 1);
        isa_insn in = ut_insn(ISA_OP_MMAD, ISA_DT_F16, ISA_DT_F32, 0);
        ck_assert_int_eq(sim_cube_exec_variant(&u->ctx, &in, &u->w, &u->d, v), NPU_OK);
        uint8_t *c = u->ctx.buf[SIM_SP_L0C];
        ck_assert_uint_eq(isa_fp_f32_bits(ut_get_f32(c + 0)), ISA_FP_NAN_F32);          /* inf * 0 */
        ck_assert_float_eq(ut_get_f32(c + 64 + 4), 65504.0f + 65504.0f * 65504.0f);  /* f32 holds it */
    }
    ut_free(u);
}
END_TEST

START_TEST(t_sparsify_hand)
{
    /* k = 4, n = 2: column 0 = [1, -5, 3, 0] keeps -5 (1), 3 (2); column 1 = [2, 2, 2, 2] keeps 0, 1 */
    float b[4][2] = {{1, 2}, {-5, 2}, {3, 2}, {0, 2}};
    float vals[2][2];
    uint8_t meta[8];
    npu_diag d;
    ck_assert_int_eq(sim_sparsify_24(ISA_DT_F32, b, 4, 2, vals, meta, &d), NPU_OK);
    ck_assert_uint_eq(sim_sparse_meta_bytes(4, 2), 8);
    ck_assert_float_eq(vals[0][0], -5.0f);
    ck_assert_float_eq(vals[1][0], 3.0f);
    ck_assert_float_eq(vals[0][1], 2.0f);
    ck_assert_float_eq(vals[1][1], 2.0f);
    ck_assert_uint_eq(meta[0], (1 | 2 << 2) | (0 | 1 << 2) << 4);
    for (int i = 1; i < 8; i++)
        ck_assert_uint_eq(meta[i], 0);
    ck_assert_int_eq(sim_sparsify_24(ISA_DT_F32, b, 3, 2, vals, meta, &d), NPU_EINVAL);
}
END_TEST

START_TEST(t_sparse_mmad)
{
    static const int dts[] = {ISA_DT_F16, ISA_DT_BF16, ISA_DT_E4M3, ISA_DT_S8, ISA_DT_F32};
    npu_rng r = {77};
    ut *u = ut_new();
    for (size_t t = 0; t < NPU_ARRAY_LEN(dts); t++) {
        int dt = dts[t], s = isa_dtype_bytes(dt);
        gemm g = {dt, 1 + (int)(npu_rng_next(&r) % 33), 4 * (1 + (int)(npu_rng_next(&r) % 70)), 1 + (int)(npu_rng_next(&r) % 40), 0, 0};
        if (t % 2 == 0)
            g.k = 256 - 4 * (int)t;   /* more than one 128-k chunk */
        gemm_fill(&g, &r);
        /* dense B as bytes, compress, build the decompressed dense reference B */
        uint8_t *db = npu_malloc((size_t)(g.k * g.n * s)), *cv = npu_malloc((size_t)(g.k * g.n * s / 2));
        uint8_t *meta = npu_calloc(1, (size_t)sim_sparse_meta_bytes(g.k, g.n));
        for (int i = 0; i < g.k * g.n; i++)
            put(db + (size_t)i * (size_t)s, s, g.B[i]);
        ck_assert_int_eq(sim_sparsify_24((isa_dtype)dt, db, g.k, g.n, cv, meta, &u->d), NPU_OK);
        uint32_t *dense = npu_calloc((size_t)(g.k * g.n), 4);
        int N16 = (g.n + 15) / 16 * 16;
        for (int gi = 0; gi < g.k / 4; gi++)
            for (int j = 0; j < g.n; j++) {
                int q = gi * N16 + j;
                int nib = (meta[q / 2] >> (4 * (q % 2))) & 15;
                uint32_t v0 = 0, v1 = 0;
                memcpy(&v0, cv + ((size_t)(2 * gi) * (size_t)g.n + (size_t)j) * (size_t)s, (size_t)s);
                memcpy(&v1, cv + ((size_t)(2 * gi + 1) * (size_t)g.n + (size_t)j) * (size_t)s, (size_t)s);
                dense[(4 * gi + (nib & 3)) * g.n + j] = v0;
                dense[(4 * gi + (nib >> 2)) * g.n + j] = v1;
                /* the kept two are the largest in magnitude */
                for (int i = 0; i < 4; i++)
                    if (i != (nib & 3) && i != (nib >> 2))
                        ck_assert(fabs(val(dt, g.B[(4 * gi + i) * g.n + j])) <= fabs(val(dt, v0)) &&
                                  fabs(val(dt, g.B[(4 * gi + i) * g.n + j])) <= fabs(val(dt, v1)));
            }
        /* load: A as usual; compressed B (k/2 rows) in ZN; meta at 32768 */
        memset(u->ctx.buf[SIM_SP_L0B], 0, 65536);
        gemm ga = g;
        gemm_load(u, &ga, 0, 0);
        memset(u->ctx.buf[SIM_SP_L0B], 0, 32768);
        int N1 = (g.n + 15) / 16;
        for (int kk = 0; kk < g.k / 2; kk++)
            for (int j = 0; j < g.n; j++)
                memcpy(u->ctx.buf[SIM_SP_L0B] + zb_off(kk, j, N1, s), cv + ((size_t)kk * (size_t)g.n + (size_t)j) * (size_t)s, (size_t)s);
        memcpy(u->ctx.buf[SIM_SP_L0B] + 32768, meta, (size_t)sim_sparse_meta_bytes(g.k, g.n));
        size_t mn = (size_t)g.m * (size_t)g.n;
        uint32_t *want = npu_malloc(4 * mn), *got = npu_malloc(4 * mn);
        ref_gemm(&g, dense, NULL, want);
        for (int v = 0; v <= 2; v++) {
            if (!sim_cube_variant_supported(v))
                continue;
            u->x[R_D] = 0; u->x[R_S0] = 0; u->x[R_S1] = 0; u->x[R_R4] = 32768;
            u->x[R_CFG] = ISA_MM_CFG(g.m, g.k, g.n, 1);
            isa_insn in = ut_insn(ISA_OP_MMADSP, dt, acc_dt(dt), 0);
            ck_assert_msg(sim_cube_exec_variant(&u->ctx, &in, &u->w, &u->d, v) == NPU_OK, "%s", u->d.msg);
            read_c(u, &g, 0, got);
            for (size_t i = 0; i < mn; i++)
                ck_assert_msg(got[i] == want[i], "sparse %s variant %d elem %zu", isa_dtype_suffix(dt), v, i);
        }
        ck_assert_uint_eq(u->w.macs, (uint64_t)g.m * (uint64_t)(g.k / 2) * (uint64_t)g.n);
        /* broken metadata: positions (2, 2) */
        u->ctx.buf[SIM_SP_L0B][32768] = 0xa;
        isa_insn in = ut_insn(ISA_OP_MMADSP, dt, acc_dt(dt), 0);
        ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
        ck_assert_msg(strstr(u->d.msg, "metadata"), "%s", u->d.msg);
        npu_free(want); npu_free(got); npu_free(dense); npu_free(meta); npu_free(cv); npu_free(db);
        npu_free(g.A); npu_free(g.B);
    }
    ut_free(u);
}
END_TEST

START_TEST(t_cube_faults)
{
    ut *u = ut_new();
    isa_insn in = ut_insn(ISA_OP_MMAD, ISA_DT_F16, ISA_DT_F32, 0);
    u->x[R_CFG] = ISA_MM_CFG(128, 512, 16, 1);   /* A = 8 x 32 fractals = 128 KB > L0A */
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "L0A read [0x0, +131072) outside L0A (65536 bytes)"), "%s", u->d.msg);
    u->x[R_CFG] = ISA_MM_CFG(16, 16, 16, 1);
    u->x[R_S0] = 256;
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "512-byte aligned"), "%s", u->d.msg);
    u->x[R_S0] = 0;
    u->x[R_CFG] = ISA_MM_CFG(0, 16, 16, 1);
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    u->x[R_CFG] = ISA_MM_CFG(16, 16, 16, 1);
    in = ut_insn(ISA_OP_MMAD, ISA_DT_S8, ISA_DT_F32, 0);
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    in = ut_insn(ISA_OP_MMADSP, ISA_DT_F16, ISA_DT_F32, 0);
    u->x[R_CFG] = ISA_MM_CFG(16, 18, 16, 1);
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    /* nodata: accounting and reports only */
    u->ctx.nodata = 1;
    in = ut_insn(ISA_OP_MMAD, ISA_DT_F16, ISA_DT_F32, 0);
    u->x[R_CFG] = ISA_MM_CFG(32, 64, 48, 1);
    ut_put_f32(u->ctx.buf[SIM_SP_L0C], 3.0f);
    ck_assert_int_eq(ut_run(u, &in), NPU_OK);
    ck_assert_uint_eq(u->w.fractals, 2 * 4 * 3);
    ck_assert_float_eq(ut_get_f32(u->ctx.buf[SIM_SP_L0C]), 3.0f);
    ck_assert_int_eq(u->nlog, 3);
    ut_free(u);
}
END_TEST

Suite *cube_suite(void)
{
    Suite *s = suite_create("cube");
    TCase *tc = tcase_create("cube");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_hand_f16);
    tcase_add_test(tc, t_random_all_dtypes);
    tcase_add_test(tc, t_special_values);
    tcase_add_test(tc, t_sparsify_hand);
    tcase_add_test(tc, t_sparse_mmad);
    tcase_add_test(tc, t_cube_faults);
    suite_add_tcase(s, tc);
    return s;
}
