/* test_dma.c — data moves: plain bursts with strides, pad, nd2nz, trans
 * (every element size), FIX with casts/ReLU/quant in ND and NZ, img2col
 * against a direct convolution, a whole GEMM tile through
 * gm2l1.nd2nz -> l12l0a / l12l0b.trans -> mmad -> fix.l0c2gm.nd, faults. */
#include "tests/units/ut.h"

#include <stdio.h>
#include <stdlib.h>

#define GM(off) (UT_GM_BASE + (off))

static uint8_t *gmp(ut *u, uint64_t off) { return u->gm + off; }
static uint8_t *sp(ut *u, int s, uint64_t a) { return u->ctx.buf[s] + a; }

static npu_status mv(ut *u, isa_op op, int dt, int mod, uint64_t dst, uint64_t src, uint64_t nb, uint64_t bb,
                     uint64_t ss, uint64_t ds)
{
    u->x[R_D] = dst; u->x[R_S0] = src;
    u->x[R_S1] = ISA_DMA_CFG(nb, bb);
    u->x[R_CFG] = ISA_DMA_STRIDES(ss, ds);
    isa_insn in = ut_insn(op, dt, 0, mod);
    return ut_run(u, &in);
}

START_TEST(t_plain_strides)
{
    ut *u = ut_new();
    for (int i = 0; i < 4096; i++)
        *gmp(u, (uint64_t)i) = (uint8_t)(i * 7 + 1);
    /* 3 bursts of 64 B, source pitch 100, destination pitch 96 */
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_U8, 0, 0x100, GM(0x10), 3, 64, 100, 96), NPU_OK);
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < 96; i++)
            ck_assert_uint_eq(*sp(u, SIM_SP_UB, 0x100 + (uint64_t)(b * 96 + i)), i < 64 ? (uint8_t)((0x10 + b * 100 + i) * 7 + 1) : 0);
    ck_assert_uint_eq(u->w.gm_rd, 192);
    ck_assert_uint_eq(u->w.bytes, 192);
    ck_assert_uint_eq(u->w.nburst, 3);
    ck_assert_uint_eq(u->w.burst_bytes, 64);
    ck_assert_int_eq(u->w.src_space, SIM_SP_GM);
    ck_assert_int_eq(u->w.dst_space, SIM_SP_UB);
    ck_assert_int_eq(u->nlog, 6);   /* 3 GM reads, 3 UB writes (not adjacent) */
    ck_assert_int_eq(u->log[0].sp, SIM_SP_GM);
    ck_assert_uint_eq(u->log[0].a, GM(0x10));
    ck_assert_int_eq(u->log[3].sp, SIM_SP_UB);
    /* contiguous bursts are one report */
    ck_assert_int_eq(mv(u, ISA_OP_UB2GM, ISA_DT_U8, 0, GM(0x2000), 0x100, 4, 32, 32, 32), NPU_OK);
    ck_assert_int_eq(u->nlog, 2);
    ck_assert_uint_eq(u->log[1].len, 128);
    ck_assert_uint_eq(u->w.gm_wr, 128);
    ck_assert_int_eq(memcmp(gmp(u, 0x2000), sp(u, SIM_SP_UB, 0x100), 128), 0);
    /* UB -> GM with a burst that is not a multiple of 32 */
    ck_assert_int_eq(mv(u, ISA_OP_UB2GM, ISA_DT_U8, 0, GM(0x3001), 0x100, 1, 5, 0, 0), NPU_OK);
    ck_assert_int_eq(memcmp(gmp(u, 0x3001), sp(u, SIM_SP_UB, 0x100), 5), 0);
    /* ub2ub, l12ub, ub2l1, l12gm round trip */
    ck_assert_int_eq(mv(u, ISA_OP_UB2UB, ISA_DT_U8, 0, 0x1000, 0x100, 2, 64, 96, 64), NPU_OK);
    ck_assert_int_eq(mv(u, ISA_OP_UB2L1, ISA_DT_U8, 0, 0x40000, 0x1000, 1, 128, 0, 0), NPU_OK);
    ck_assert_int_eq(mv(u, ISA_OP_L12UB, ISA_DT_U8, 0, 0x2000, 0x40000, 1, 128, 0, 0), NPU_OK);
    ck_assert_int_eq(mv(u, ISA_OP_L12GM, ISA_DT_U8, 0, GM(0x5000), 0x40000, 1, 128, 0, 0), NPU_OK);
    for (int i = 0; i < 128; i++) {
        uint8_t want = (uint8_t)((0x10 + (i / 64) * 100 + i % 64) * 7 + 1);
        ck_assert_uint_eq(*sp(u, SIM_SP_UB, 0x2000 + (uint64_t)i), want);
        ck_assert_uint_eq(*gmp(u, 0x5000 + (uint64_t)i), want);
    }
    /* nodata: reports and accounting, no data */
    u->ctx.nodata = 1;
    ck_assert_int_eq(mv(u, ISA_OP_GM2L1, ISA_DT_U8, 0, 0x0, GM(0x0), 1, 64, 0, 0), NPU_OK);
    ck_assert_int_eq(u->nlog, 2);
    ck_assert_uint_eq(u->w.gm_rd, 64);
    ck_assert_uint_eq(*sp(u, SIM_SP_L1, 0), 0);
    ut_free(u);
}
END_TEST

START_TEST(t_pad)
{
    ut *u = ut_new();
    memset(u->ctx.buf[SIM_SP_UB], 0xee, 512);
    for (int i = 0; i < 100; i++)
        *gmp(u, (uint64_t)i) = (uint8_t)(i + 1);
    /* 2 bursts of 40 B -> 64 B each with 24 zero bytes */
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_F16, ISA_XFORM_PAD, 0, GM(0), 2, 40, 40, 64), NPU_OK);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 64; i++)
            ck_assert_uint_eq(*sp(u, SIM_SP_UB, (uint64_t)(b * 64 + i)), i < 40 ? (uint8_t)(b * 40 + i + 1) : 0);
    ck_assert_uint_eq(*sp(u, SIM_SP_UB, 128), 0xee);
    ck_assert_uint_eq(u->w.bytes, 128);
    ck_assert_uint_eq(u->w.gm_rd, 80);
    /* destination stride must hold the padded burst */
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_F16, ISA_XFORM_PAD, 0, GM(0), 2, 40, 40, 40), NPU_EFAULT);
    ut_free(u);
}
END_TEST

START_TEST(t_nd2nz)
{
    ut *u = ut_new();
    /* f16 matrix 3 rows x 20 columns (40 B rows, pitch 48 B in GM) -> NZ: 2 column blocks of 16 rows x 32 B */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 20; c++) {
            uint16_t v = (uint16_t)(100 * r + c + 1);
            memcpy(gmp(u, (uint64_t)(r * 48 + c * 2)), &v, 2);
        }
    memset(u->ctx.buf[SIM_SP_L1], 0xee, 4096);
    ck_assert_int_eq(mv(u, ISA_OP_GM2L1, ISA_DT_F16, ISA_XFORM_ND2NZ, 0, GM(0), 3, 40, 48, 1024), NPU_OK);
    for (int j = 0; j < 2; j++)
        for (int r = 0; r < 16; r++)
            for (int c = 0; c < 16; c++) {
                uint16_t v;
                memcpy(&v, sp(u, SIM_SP_L1, (uint64_t)(j * 1024 + r * 32 + c * 2)), 2);
                int col = j * 16 + c;
                ck_assert_uint_eq(v, (r < 3 && col < 20) ? 100 * r + col + 1 : 0);
            }
    ck_assert_uint_eq(*sp(u, SIM_SP_L1, 512), 0xee);   /* between blocks: untouched */
    ck_assert_uint_eq(u->w.bytes, 1024);
    ck_assert_int_eq(u->nlog, 5);   /* 3 row reads, 2 block writes */
    /* pitch too small, bad element multiple, bad destination */
    ck_assert_int_eq(mv(u, ISA_OP_GM2L1, ISA_DT_F16, ISA_XFORM_ND2NZ, 0, GM(0), 3, 40, 48, 256), NPU_EFAULT);
    ck_assert_int_eq(mv(u, ISA_OP_GM2L1, ISA_DT_F32, ISA_XFORM_ND2NZ, 0, GM(0), 3, 42, 48, 1024), NPU_EFAULT);
    ck_assert_int_eq(mv(u, ISA_OP_UB2GM, ISA_DT_F16, ISA_XFORM_ND2NZ, GM(0), 0, 3, 40, 48, 1024), NPU_EFAULT);
    ut_free(u);
}
END_TEST

START_TEST(t_trans)
{
    ut *u = ut_new();
    static const int dts[] = {ISA_DT_F16, ISA_DT_S8, ISA_DT_F32};
    for (size_t t = 0; t < NPU_ARRAY_LEN(dts); t++) {
        int es = isa_dtype_bytes(dts[t]), S = 32 / es;
        uint64_t unit = (uint64_t)S * 32;
        /* two units in one burst; bytes carry their (unit, row, col) */
        for (uint64_t i = 0; i < 2 * unit; i++)
            *sp(u, SIM_SP_L1, i) = (uint8_t)(i * 13 + 5);
        ck_assert_msg(mv(u, ISA_OP_L12L0B, dts[t], ISA_XFORM_TRANS, 0, 0, 1, 2 * unit, 0, 0) == NPU_OK, "%s", u->d.msg);
        for (int un = 0; un < 2; un++)
            for (int r = 0; r < S; r++)
                for (int c = 0; c < S; c++)
                    ck_assert_int_eq(memcmp(sp(u, SIM_SP_L0B, (uint64_t)un * unit + (uint64_t)(c * 32 + r * es)),
                                            sp(u, SIM_SP_L1, (uint64_t)un * unit + (uint64_t)(r * 32 + c * es)), (size_t)es), 0);
    }
    /* a burst that is not whole units; trans on a path without it */
    ck_assert_int_eq(mv(u, ISA_OP_L12L0A, ISA_DT_F16, ISA_XFORM_TRANS, 0, 0, 1, 256, 0, 0), NPU_EFAULT);
    ck_assert_int_eq(mv(u, ISA_OP_GM2L1, ISA_DT_F16, ISA_XFORM_TRANS, 0, GM(0), 1, 512, 0, 0), NPU_EFAULT);
    ut_free(u);
}
END_TEST

static uint32_t bits_of(float f) { return isa_fp_f32_bits(f); }

START_TEST(t_fix)
{
    ut *u = ut_new();
    /* L0C: m = 3, n = 20 f32: 2 column blocks (pitch 3*64 rounded to 1024) */
    int M = 3, N = 20;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            ut_put_f32(sp(u, SIM_SP_L0C, (uint64_t)((j / 16) * 1024 + i * 64 + (j % 16) * 4)), (float)(i * 100 + j) - 50.5f);
    u->x[R_D] = GM(0); u->x[R_S0] = 0; u->x[R_S1] = (uint64_t)M | (uint64_t)N << 16;
    u->x[R_CFG] = (uint64_t)1024 | (uint64_t)(N * 2) << 32;   /* f16 rows, pitch 40 */
    isa_insn in = ut_insn(ISA_OP_L0C2GM, ISA_DT_F32, ISA_DT_F16, ISA_FIX_ND | ISA_FIX_RELU);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = fmaxf((float)(i * 100 + j) - 50.5f, 0.0f);
            ck_assert_float_eq(ut_get_f16(gmp(u, (uint64_t)(i * 40 + j * 2))), isa_fp_f16_to_f32(isa_fp_f32_to_f16(want)));
        }
    ck_assert_uint_eq(u->w.gm_wr, 120);
    /* quant to s8 with saturation, NZ into UB: C0 = 32 s8 columns, rows padded to 16 with zeros */
    memset(u->ctx.buf[SIM_SP_UB], 0xee, 2048);
    u->x[R_D] = 0; u->x[R_CFG] = (uint64_t)1024 | (uint64_t)512 << 32;
    u->x[R_R4] = bits_of(0.5f);
    in = ut_insn(ISA_OP_L0C2UB, ISA_DT_F32, ISA_DT_S8, ISA_FIX_QUANT);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 32; c++) {
            int8_t v = (int8_t)*sp(u, SIM_SP_UB, (uint64_t)(r * 32 + c));
            int want = 0;
            if (r < M && c < N) {
                float f = ((float)(r * 100 + c) - 50.5f) * 0.5f;
                want = (int)nearbyintf(f);
                want = want > 127 ? 127 : want < -128 ? -128 : want;
            }
            ck_assert_int_eq(v, want);
        }
    ck_assert_uint_eq(*sp(u, SIM_SP_UB, 512), 0xee);
    /* s32 -> s8 saturates, f32 -> e4m3 saturates, f32 -> f16 overflows to inf */
    int32_t s[3] = {300, -300, 7};
    for (int j = 0; j < 3; j++)
        memcpy(sp(u, SIM_SP_L0C, 4096 + (uint64_t)j * 4), &s[j], 4);
    u->x[R_S0] = 4096; u->x[R_S1] = 1 | 3 << 16; u->x[R_CFG] = (uint64_t)64 | (uint64_t)32 << 32;
    in = ut_insn(ISA_OP_L0C2L1, ISA_DT_S32, ISA_DT_S8, ISA_FIX_ND);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_int_eq((int8_t)*sp(u, SIM_SP_L1, 0), 127);
    ck_assert_int_eq((int8_t)*sp(u, SIM_SP_L1, 1), -128);
    ck_assert_int_eq((int8_t)*sp(u, SIM_SP_L1, 2), 7);
    float big[2] = {1e6f, -1e6f};
    memcpy(sp(u, SIM_SP_L0C, 4096), big, 8);
    u->x[R_S1] = 1 | 2 << 16;
    in = ut_insn(ISA_OP_L0C2L1, ISA_DT_F32, ISA_DT_E4M3, ISA_FIX_ND);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(*sp(u, SIM_SP_L1, 0), 0x7E);
    ck_assert_uint_eq(*sp(u, SIM_SP_L1, 1), 0xFE);
    in = ut_insn(ISA_OP_L0C2L1, ISA_DT_F32, ISA_DT_F16, ISA_FIX_ND);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    uint16_t h[2];
    memcpy(h, sp(u, SIM_SP_L1, 0), 4);
    ck_assert_uint_eq(h[0], 0x7C00);
    ck_assert_uint_eq(h[1], 0xFC00);
    /* s32 -> f32 without quant: one rounding */
    int32_t odd = 16777217;
    memcpy(sp(u, SIM_SP_L0C, 4096), &odd, 4);
    u->x[R_S1] = 1 | 1 << 16;
    in = ut_insn(ISA_OP_L0C2L1, ISA_DT_S32, ISA_DT_F32, ISA_FIX_ND);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f32(sp(u, SIM_SP_L1, 0)), 16777216.0f);
    /* faults */
    u->x[R_S1] = 0;
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    u->x[R_S1] = 1 | 1 << 16;
    u->x[R_S0] = 4100;
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ut_free(u);
}
END_TEST

/* A GEMM tile from row-major GM through L1 into L0A/L0B and back. */
static void gemm_tile(int dt, int m, int k, int n, int use_trans)
{
    ut *u = ut_new();
    int s = isa_dtype_bytes(dt), c0 = 32 / s;
    int acc = dt == ISA_DT_S8 ? ISA_DT_S32 : ISA_DT_F32;
    npu_rng r = {(uint64_t)(dt * 1000 + m + k + n)};
    /* GM: A at 0 (m x k), B at 0x40000 (k x n), both row-major; small integers keep f32 sums exact */
    double *Ad = npu_malloc(sizeof(double) * (size_t)(m * k)), *Bd = npu_malloc(sizeof(double) * (size_t)(k * n));
    for (int i = 0; i < m * k; i++) {
        Ad[i] = (double)((int)(npu_rng_next(&r) % 9) - 4);
        isa_fp_store((isa_dtype)dt, gmp(u, (uint64_t)i * (uint64_t)s), Ad[i], ISA_RM_RNE, 0);
    }
    for (int i = 0; i < k * n; i++) {
        Bd[i] = (double)((int)(npu_rng_next(&r) % 9) - 4);
        isa_fp_store((isa_dtype)dt, gmp(u, 0x40000 + (uint64_t)i * (uint64_t)s), Bd[i], ISA_RM_RNE, 0);
    }
    int M1 = (m + 15) / 16, K1 = (k + c0 - 1) / c0, N1 = (n + 15) / 16;
    /* A: nd2nz into L1 (column blocks of C0 k-columns, M1*16 rows each) */
    uint64_t apitch = (uint64_t)M1 * 512;
    ck_assert_msg(mv(u, ISA_OP_GM2L1, dt, ISA_XFORM_ND2NZ, 0, GM(0), (uint64_t)m, (uint64_t)(k * s), (uint64_t)(k * s), apitch) == NPU_OK, "%s", u->d.msg);
    /* L1 NZ -> L0A ZZ: one move per m1: K1 fractals, source pitch = column-block pitch */
    for (int m1 = 0; m1 < M1; m1++)
        ck_assert_msg(mv(u, ISA_OP_L12L0A, dt, 0, (uint64_t)m1 * (uint64_t)K1 * 512, (uint64_t)m1 * 512, (uint64_t)K1, 512, apitch, 512) == NPU_OK, "%s", u->d.msg);
    if (use_trans) {
        /* B: nd2nz into L1 at 0x20000 (column blocks of C0 n-columns, k rows padded to 16),
         * then trans units (S x S) into L0B's ZN order */
        int S = c0, kp = (k + 15) / 16 * 16;
        uint64_t bpitch = (uint64_t)kp * 32;
        ck_assert_msg(mv(u, ISA_OP_GM2L1, dt, ISA_XFORM_ND2NZ, 0x20000, GM(0x40000), (uint64_t)k, (uint64_t)(n * s), (uint64_t)(n * s), bpitch) == NPU_OK, "%s", u->d.msg);
        int nb_count = (n + S - 1) / S;
        for (int nb = 0; nb < nb_count; nb++) {
            /* unit u covers k rows [S*u, S*u+S) of column block nb; it lands in ZN fractal
             * (k1, n1) rows: 2-byte: n1 = nb, k1 = u; 1-byte: n1 = 2nb, 2nb+1 (1 KB), k1 = u;
             * 4-byte: half (nb % 2) of n1 = nb/2, k1 = u */
            uint64_t dst = s == 4 ? (uint64_t)(nb / 2) * 512 + (uint64_t)(nb % 2) * 256 : (uint64_t)(nb * (s == 1 ? 2 : 1)) * 512;
            uint64_t units = (uint64_t)((k + S - 1) / S);
            ck_assert_msg(mv(u, ISA_OP_L12L0B, dt, ISA_XFORM_TRANS, dst, 0x20000 + (uint64_t)nb * bpitch, units,
                             (uint64_t)S * 32, (uint64_t)S * 32, (uint64_t)N1 * 512) == NPU_OK, "%s", u->d.msg);
        }
    }
    /* mmad into L0C at 0, f32/s32 */
    u->x[R_D] = 0; u->x[R_S0] = 0; u->x[R_S1] = 0; u->x[R_CFG] = ISA_MM_CFG(m, k, n, 1);
    isa_insn in = ut_insn(ISA_OP_MMAD, dt, acc, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    /* fix.l0c2gm.nd: f32 (s32) out, row pitch n*4 */
    u->x[R_D] = GM(0x80000); u->x[R_S0] = 0; u->x[R_S1] = (uint64_t)m | (uint64_t)n << 16;
    u->x[R_CFG] = (uint64_t)M1 * 1024 | (uint64_t)(n * 4) << 32;
    in = ut_insn(ISA_OP_L0C2GM, acc, acc, ISA_FIX_ND);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int kk = 0; kk < k; kk++)
                want += Ad[i * k + kk] * Bd[kk * n + j];
            double got = acc == ISA_DT_S32 ? (double)*(int32_t *)(void *)gmp(u, 0x80000 + (uint64_t)(i * n + j) * 4)
                                           : (double)ut_get_f32(gmp(u, 0x80000 + (uint64_t)(i * n + j) * 4));
            ck_assert_msg(got == want, "%s gemm %dx%dx%d C[%d][%d] = %g want %g", isa_dtype_suffix(dt), m, k, n, i, j, got, want);
        }
    npu_free(Ad);
    npu_free(Bd);
    ut_free(u);
}

START_TEST(t_gemm_tile)
{
    gemm_tile(ISA_DT_F16, 40, 48, 35, 1);
    gemm_tile(ISA_DT_F16, 16, 16, 16, 1);
    gemm_tile(ISA_DT_S8, 33, 64, 64, 1);
    gemm_tile(ISA_DT_F32, 20, 24, 32, 1);
    gemm_tile(ISA_DT_BF16, 17, 32, 48, 1);
}
END_TEST

/* img2col + mmad vs a direct convolution. */
/* img2col + mmad of one dtype against a direct convolution. Feature map
 * C1 = 2 channel blocks of C0, H = 5, W = 12; 3x3 kernel, stride (sw 1,
 * sh 2), dilation (dw 2, dh 1), pads 1 on every side; 8 output channels.
 * Small integers keep every sum exact, so the order does not matter. */
static void conv_case(ut *u, int dt, uint64_t *fm, uint64_t *kc)
{
    int s = isa_dtype_bytes(dt), C0 = 32 / s, acc = dt == ISA_DT_S8 ? ISA_DT_S32 : ISA_DT_F32;
    int C1 = 2, H = 5, W = 12, kh = 3, kw = 3, sw = 1, sh = 2, dw = 2, dh = 1, pl = 1, pr = 1, pt = 1, pb = 1, CO = 8;
    int ew = dw * (kw - 1) + 1, eh = dh * (kh - 1) + 1;
    int Wo = (W + pl + pr - ew) / sw + 1, Ho = (H + pt + pb - eh) / sh + 1, P = Ho * Wo;
    int K = C1 * kh * kw * C0;
    npu_rng r = {5};
    static double x[2][5][12][32], wt[8][2][3][3][32];
    memset(u->ctx.buf[SIM_SP_L0B], 0, 65536);
    for (int c1 = 0; c1 < C1; c1++)
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++)
                for (int c = 0; c < C0; c++) {
                    x[c1][h][w][c] = (double)((int)(npu_rng_next(&r) % 7) - 3);
                    isa_fp_store((isa_dtype)dt, sp(u, SIM_SP_L1, (uint64_t)(((c1 * H + h) * W + w) * 32 + c * s)), x[c1][h][w][c], ISA_RM_RNE, 0);
                }
    /* B = weights (K x CO) in L0B ZN: k index = ((c1*kh + i)*kw + j)*C0 + c */
    for (int o = 0; o < CO; o++)
        for (int c1 = 0; c1 < C1; c1++)
            for (int i = 0; i < kh; i++)
                for (int j = 0; j < kw; j++)
                    for (int c = 0; c < C0; c++) {
                        wt[o][c1][i][j][c] = (double)((int)(npu_rng_next(&r) % 5) - 2);
                        int kk = ((c1 * kh + i) * kw + j) * C0 + c;
                        isa_fp_store((isa_dtype)dt, sp(u, SIM_SP_L0B, (uint64_t)(kk / C0) * 512 + (uint64_t)(o * C0 + kk % C0) * (uint64_t)s),
                                     wt[o][c1][i][j][c], ISA_RM_RNE, 0);
                    }
    /* img2col.l0a: all P pixels, all K/C0 k blocks */
    u->x[R_D] = 0; u->x[R_S0] = 0;
    u->x[R_S1] = (uint64_t)W | (uint64_t)H << 16 | (uint64_t)C1 << 32;
    u->x[R_CFG] = (uint64_t)kw | (uint64_t)kh << 8 | (uint64_t)sw << 16 | (uint64_t)sh << 24 | (uint64_t)dw << 32 |
                  (uint64_t)dh << 40 | (uint64_t)pl << 48 | (uint64_t)pr << 52 | (uint64_t)pt << 56 | (uint64_t)pb << 60;
    u->x[R_R4] = 0 | (uint64_t)P << 16 | 0ull << 32 | (uint64_t)(K / C0) << 48;
    *fm = u->x[R_S1];
    *kc = u->x[R_CFG];
    isa_insn in = ut_insn(ISA_OP_IMG2L0A, dt, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bytes, (uint64_t)((P + 15) / 16) * (uint64_t)(K / C0) * 512);
    u->x[R_D] = 0; u->x[R_S0] = 0; u->x[R_S1] = 0; u->x[R_CFG] = ISA_MM_CFG(P, K, CO, 1);
    in = ut_insn(ISA_OP_MMAD, dt, acc, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int p = 0; p < P; p++)
        for (int o = 0; o < CO; o++) {
            double want = 0;
            int ho = p / Wo, wo = p % Wo;
            for (int c1 = 0; c1 < C1; c1++)
                for (int i = 0; i < kh; i++)
                    for (int j = 0; j < kw; j++) {
                        int h = ho * sh - pt + i * dh, w = wo * sw - pl + j * dw;
                        if (h < 0 || h >= H || w < 0 || w >= W)
                            continue;
                        for (int c = 0; c < C0; c++)
                            want += x[c1][h][w][c] * wt[o][c1][i][j][c];
                    }
            const uint8_t *cp = sp(u, SIM_SP_L0C, (uint64_t)(p / 16) * 1024 + (uint64_t)((p % 16) * 16 + o) * 4);
            int32_t gi;
            memcpy(&gi, cp, 4);
            double got = acc == ISA_DT_S32 ? (double)gi : (double)ut_get_f32(cp);
            ck_assert_msg(got == want, "conv %s pixel %d out %d: %g want %g", isa_dtype_suffix(dt), p, o, got, want);
        }
}

START_TEST(t_img2col_conv)
{
    ut *u = ut_new();
    uint64_t fm, kc;
    conv_case(u, ISA_DT_S8, &fm, &kc);
    conv_case(u, ISA_DT_F32, &fm, &kc);
    conv_case(u, ISA_DT_E5M2, &fm, &kc);
    conv_case(u, ISA_DT_F16, &fm, &kc);
    /* img2col.l0b of a window: pixels [3, +20), k blocks [2, +4): fractal (kb, n1) at (kb*2 + n1)*512,
     * the same content as img2col.l0a's fractal (n1, kb) at (n1*4 + kb)*512 */
    u->x[R_S1] = fm; u->x[R_CFG] = kc;
    u->x[R_R4] = 3 | 20ull << 16 | 2ull << 32 | 4ull << 48;
    u->x[R_S0] = 0; u->x[R_D] = 0;
    isa_insn in = ut_insn(ISA_OP_IMG2L0A, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    in = ut_insn(ISA_OP_IMG2L0B, ISA_DT_F16, 0, 0);
    u->x[R_D] = 0x8000;
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int n1 = 0; n1 < 2; n1++)
        for (int kb = 0; kb < 4; kb++)
            ck_assert_int_eq(memcmp(sp(u, SIM_SP_L0A, (uint64_t)(n1 * 4 + kb) * 512), sp(u, SIM_SP_L0B, 0x8000 + (uint64_t)(kb * 2 + n1) * 512), 512), 0);
    /* rows past the window are zero: pixel 3+20 .. 3+31 of n1 = 1 */
    for (int rr = 4; rr < 16; rr++)
        for (int b = 0; b < 32; b++)
            ck_assert_uint_eq(*sp(u, SIM_SP_L0A, (uint64_t)(1 * 4 + 0) * 512 + (uint64_t)(rr * 32 + b)), 0);
    /* faults: pad too large, window out of range */
    u->x[R_CFG] |= 0xfull << 48;
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "padding"), "%s", u->d.msg);
    u->x[R_CFG] &= ~(0xfull << 48);
    u->x[R_R4] = 0 | (uint64_t)(30 + 1) << 16 | 0ull << 32 | 1ull << 48;   /* 30 = Ho*Wo pixels */
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ut_free(u);
}
END_TEST

START_TEST(t_dma_faults)
{
    ut *u = ut_new();
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_U8, 0, 0, GM(0), 0, 32, 32, 32), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "non-zero"), "%s", u->d.msg);
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_U8, 0, 0, GM(0), 2, 64, 32, 64), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "stride smaller"), "%s", u->d.msg);
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_U8, 0, 0x2ff00, GM(0), 1, 512, 0, 0), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "UB write [0x2ff00, +512) outside UB (196608 bytes)"), "%s", u->d.msg);
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_U8, 0, 0x10, GM(0), 1, 32, 0, 0), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "aligned"), "%s", u->d.msg);
    ck_assert_int_eq(mv(u, ISA_OP_L12L0A, ISA_DT_U8, 0, 0, 0, 1, 48, 0, 0), NPU_EFAULT);   /* on-chip, not x32 */
    ck_assert_int_eq(mv(u, ISA_OP_GM2UB, ISA_DT_U8, 0, 0, 0x100, 1, 32, 0, 0), NPU_EFAULT);  /* GM outside */
    ck_assert_msg(strstr(u->d.msg, "outside any allocation"), "%s", u->d.msg);
    ck_assert_int_eq(mv(u, ISA_OP_UB2GM, ISA_DT_U8, ISA_XFORM_PAD, GM(0), 0, 1, 20, 0, 0), NPU_EFAULT);
    ck_assert_int_eq(mv(u, ISA_OP_GM2L1, ISA_DT_U8, 5, 0, GM(0), 1, 32, 0, 0), NPU_EFAULT);
    /* a failed host allocation is ENOMEM with a message, never a crash */
    npu_alloc_fail_after(1);
    npu_status st = mv(u, ISA_OP_GM2UB, ISA_DT_U8, 0, 0, GM(0), 1, 64, 0, 0);
    int failed = npu_alloc_failed();
    npu_alloc_fail_after(0);
    ck_assert(failed);
    ck_assert_int_eq(st, NPU_ENOMEM);
    ck_assert_msg(strstr(u->d.msg, "out of host memory"), "%s", u->d.msg);
    npu_alloc_fail_after(1);
    st = mv(u, ISA_OP_GM2L1, ISA_DT_F16, ISA_XFORM_ND2NZ, 0, GM(0), 3, 40, 48, 1024);
    npu_alloc_fail_after(0);
    ck_assert_int_eq(st, NPU_ENOMEM);
    ut_free(u);
}
END_TEST

Suite *dma_suite(void)
{
    Suite *s = suite_create("dma");
    TCase *tc = tcase_create("dma");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_plain_strides);
    tcase_add_test(tc, t_pad);
    tcase_add_test(tc, t_nd2nz);
    tcase_add_test(tc, t_trans);
    tcase_add_test(tc, t_fix);
    tcase_add_test(tc, t_gemm_tile);
    tcase_add_test(tc, t_img2col_conv);
    tcase_add_test(tc, t_dma_faults);
    suite_add_tcase(s, tc);
    return s;
}
