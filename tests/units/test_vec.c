/* test_vec.c — the vector unit: every V instruction against hand-computed
 * results, masks in both modes, strides, vconv boundary cases for every
 * pair, bank conflicts, access reports and faults. */
#include "tests/units/ut.h"

#include <inttypes.h>
#include <stdio.h>

#define CFG(rep) ISA_VCFG(rep, 1, 1, 1, 8, 8, 8)

static uint16_t f16b(float v) { return isa_fp_f32_to_f16(v); }

static void set_f32s(ut *u, uint64_t a, int n, float (*f)(int))
{
    for (int i = 0; i < n; i++)
        ut_put_f32(ut_ub(u, a + 4u * (unsigned)i), f(i));
}

static float idx(int i) { return (float)i; }
static float idx2(int i) { return 2.0f * (float)i; }

START_TEST(t_vadd_f32_contig)
{
    ut *u = ut_new();
    set_f32s(u, 0x1000, 128, idx);
    set_f32s(u, 0x2000, 128, idx2);
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_S1] = 0x2000; u->x[R_CFG] = CFG(2);
    isa_insn in = ut_insn(ISA_OP_VADD, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < 128; i++)
        ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3000 + 4u * (unsigned)i)), 3.0f * (float)i);
    ck_assert_uint_eq(u->w.repeats, 2);
    ck_assert_uint_eq(u->w.elems, 128);
    /* contiguous operands: one report each (src0, src1, dst) */
    ck_assert_int_eq(u->nlog, 3);
    ck_assert_uint_eq(u->log[0].a, 0x1000); ck_assert_uint_eq(u->log[0].len, 512); ck_assert_int_eq(u->log[0].w, 0);
    ck_assert_uint_eq(u->log[2].a, 0x3000); ck_assert_int_eq(u->log[2].w, 1);
    ut_free(u);
}
END_TEST

START_TEST(t_mask_normal_f16)
{
    ut *u = ut_new();
    for (int i = 0; i < 128; i++) {
        ut_put_f16(ut_ub(u, 0x1000 + 2u * (unsigned)i), (float)i);
        ut_put_f16(ut_ub(u, 0x3000 + 2u * (unsigned)i), -1.0f);
    }
    u->vm.bits[0] = 0x5555555555555555ull;   /* even elements 0..63 */
    u->vm.bits[1] = 0x8000000000000001ull;   /* elements 64 and 127 */
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_S1] = 0x1000; u->x[R_CFG] = CFG(1);
    isa_insn in = ut_insn(ISA_OP_VADD, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < 128; i++) {
        int on = (i < 64 && i % 2 == 0) || i == 64 || i == 127;
        ck_assert_float_eq(ut_get_f16(ut_ub(u, 0x3000 + 2u * (unsigned)i)), on ? 2.0f * (float)i : -1.0f);
    }
    ck_assert_uint_eq(u->w.elems, 34);
    ut_free(u);
}
END_TEST

START_TEST(t_mask_normal_f32_and_u8)
{
    ut *u = ut_new();
    /* f32: 64 elements, bit i (low word) enables element i; hi word unused */
    u->vm.bits[0] = 0x8000000000000003ull;
    u->vm.bits[1] = ~0ull;
    u->x[R_D] = 0x3000; u->x[R_S1] = 0x3f800000; u->x[R_CFG] = CFG(1);
    isa_insn in = ut_insn(ISA_OP_VDUP, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < 64; i++)
        ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3000 + 4u * (unsigned)i)), (i < 2 || i == 63) ? 1.0f : 0.0f);
    ck_assert_uint_eq(u->w.elems, 3);
    /* u8: 256 elements; bit i enables elements 2i and 2i+1 */
    u->vm.bits[0] = 0x1;
    u->vm.bits[1] = 1ull << 63;
    u->x[R_D] = 0x4000; u->x[R_S1] = 0xab;
    in = ut_insn(ISA_OP_VDUP, ISA_DT_U8, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < 256; i++)
        ck_assert_uint_eq(*ut_ub(u, 0x4000 + (unsigned)i), (i < 2 || i >= 254) ? 0xab : 0);
    /* the reported write ranges: [0x4000,+2) and [0x40fe,+2) */
    ck_assert_int_eq(u->nlog, 2);
    ck_assert_uint_eq(u->log[0].a, 0x4000); ck_assert_uint_eq(u->log[0].len, 2);
    ck_assert_uint_eq(u->log[1].a, 0x40fe); ck_assert_uint_eq(u->log[1].len, 2);
    ut_free(u);
}
END_TEST

START_TEST(t_mask_counter)
{
    ut *u = ut_new();
    set_f32s(u, 0x1000, 256, idx);
    u->vm.counter_mode = 1;
    u->vm.count = 100;   /* f32: 64 per repeat -> 2 repeats, the field (7) ignored */
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_S1] = 0x40000000; u->x[R_CFG] = CFG(7);
    isa_insn in = ut_insn(ISA_OP_VMULS, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.repeats, 2);
    ck_assert_uint_eq(u->w.elems, 100);
    for (int i = 0; i < 200; i++)
        ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3000 + 4u * (unsigned)i)), i < 100 ? 2.0f * (float)i : 0.0f);
    u->vm.count = 64 * 255 + 1;
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ck_assert_ptr_nonnull(strstr(u->d.msg, "counter mode"));
    ut_free(u);
}
END_TEST

START_TEST(t_strides)
{
    ut *u = ut_new();
    /* s16: 16 per block; dst_blk = 2, s0_blk = 1, 2 repeats with dst_rep 16, s0_rep 8 */
    for (int i = 0; i < 256; i++) {
        int16_t v = (int16_t)i;
        memcpy(ut_ub(u, 0x1000 + 2u * (unsigned)i), &v, 2);
    }
    u->x[R_D] = 0x4000; u->x[R_S0] = 0x1000; u->x[R_S1] = 5; u->x[R_CFG] = ISA_VCFG(2, 2, 1, 1, 16, 8, 8);
    isa_insn in = ut_insn(ISA_OP_VADDS, ISA_DT_S16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int r = 0; r < 2; r++)
        for (int b = 0; b < 8; b++)
            for (int e = 0; e < 16; e++) {
                int16_t v;
                memcpy(&v, ut_ub(u, 0x4000 + (unsigned)(r * 16 * 32 + b * 2 * 32 + e * 2)), 2);
                ck_assert_int_eq(v, r * 128 + b * 16 + e + 5);
                /* the gaps stay zero */
                memcpy(&v, ut_ub(u, 0x4000 + (unsigned)(r * 16 * 32 + b * 2 * 32 + 32 + e * 2)), 2);
                ck_assert_int_eq(v, 0);
            }
    /* dst: 16 non-adjacent blocks -> 16 reports; src contiguous -> 1 */
    ck_assert_int_eq(u->nlog, 17);
    ut_free(u);
}
END_TEST

START_TEST(t_int_wrap)
{
    ut *u = ut_new();
    int32_t a[8] = {INT32_MAX, INT32_MIN, 7, -7, 65536, 3, 0, -1};
    int32_t b[8] = {1, -1, -8, 8, 65536, 5, 0, -1};
    memcpy(ut_ub(u, 0x1000), a, sizeof a);
    memcpy(ut_ub(u, 0x2000), b, sizeof b);
    u->vm.bits[0] = 0xff;
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_S1] = 0x2000; u->x[R_CFG] = CFG(1);
    int32_t r[8];
    isa_insn in = ut_insn(ISA_OP_VADD, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[0], INT32_MIN); ck_assert_int_eq(r[1], INT32_MAX); ck_assert_int_eq(r[2], -1);
    in = ut_insn(ISA_OP_VMUL, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[0], INT32_MAX); ck_assert_int_eq(r[4], 0); ck_assert_int_eq(r[5], 15); ck_assert_int_eq(r[3], -56);
    in = ut_insn(ISA_OP_VABS, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[1], INT32_MIN); ck_assert_int_eq(r[3], 7);
    in = ut_insn(ISA_OP_VRELU, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[1], 0); ck_assert_int_eq(r[2], 7); ck_assert_int_eq(r[7], 0);
    in = ut_insn(ISA_OP_VMAX, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[1], -1); ck_assert_int_eq(r[2], 7); ck_assert_int_eq(r[3], 8);
    in = ut_insn(ISA_OP_VMIN, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[0], 1); ck_assert_int_eq(r[1], INT32_MIN); ck_assert_int_eq(r[2], -8);
    in = ut_insn(ISA_OP_VSUB, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[0], INT32_MAX - 1); ck_assert_int_eq(r[1], INT32_MIN + 1); ck_assert_int_eq(r[2], 15);
    /* and/or on u32 */
    in = ut_insn(ISA_OP_VAND, ISA_DT_U32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[2], 7 & -8); ck_assert_int_eq(r[5], 1);
    in = ut_insn(ISA_OP_VOR, ISA_DT_U32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), sizeof r);
    ck_assert_int_eq(r[5], 7); ck_assert_int_eq(r[0], INT32_MAX); ck_assert_int_eq(r[7], -1);
    /* s16 mul wraps */
    int16_t h[2] = {300, -300}, hr[2];
    memcpy(ut_ub(u, 0x1000), h, 4);
    memcpy(ut_ub(u, 0x2000), h, 4);
    in = ut_insn(ISA_OP_VMUL, ISA_DT_S16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(hr, ut_ub(u, 0x3000), 4);
    ck_assert_int_eq(hr[0], (int16_t)(90000 - 65536)); ck_assert_int_eq(hr[1], (int16_t)(90000 - 65536));
    ut_free(u);
}
END_TEST

static float vun_f32(ut *u, isa_op op, float x)
{
    ut_put_f32(ut_ub(u, 0x1000), x);
    u->vm.bits[0] = 1;
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_CFG] = CFG(1);
    isa_insn in = ut_insn(op, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    return ut_get_f32(ut_ub(u, 0x3000));
}

static uint32_t fb(float f) { return isa_fp_f32_bits(f); }

START_TEST(t_float_unary)
{
    ut *u = ut_new();
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VEXP, 1.0f)), 0x402DF854u);     /* e */
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VEXP, 0.0f)), 0x3F800000u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VEXP, -200.0f)), 0u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VEXP, 100.0f)), 0x7F800000u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VLN, 2.0f)), 0x3F317218u);      /* ln 2 */
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VLN, 1.0f)), 0u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VLN, 0.0f)), 0xFF800000u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VLN, -1.0f)), ISA_FP_NAN_F32);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VSQRT, 2.0f)), 0x3FB504F3u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VSQRT, -4.0f)), ISA_FP_NAN_F32); /* canonical positive NaN */
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VRSQRT, 4.0f)), 0x3F000000u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VREC, 3.0f)), fb(1.0f / 3.0f));
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VREC, 0.0f)), 0x7F800000u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VABS, -2.5f)), fb(2.5f));
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VRELU, -2.5f)), 0u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VRELU, -0.0f)), 0u);
    ck_assert_uint_eq(fb(vun_f32(u, ISA_OP_VRELU, 1.5f)), fb(1.5f));
    /* exp and ln against libm in double, rounded once: equal (the fixed algorithm is as accurate) */
    npu_rng rng = {42};
    for (int i = 0; i < 2000; i++) {
        double x = ((double)(npu_rng_next(&rng) >> 11) / 9007199254740992.0) * 160.0 - 80.0;
        float xf = (float)x;
        float e = vun_f32(u, ISA_OP_VEXP, xf);
        float ref = (float)exp((double)xf);
        ck_assert_msg(e == ref, "exp(%a) = %a, libm %a", (double)xf, (double)e, (double)ref);
        float lx = fabsf(xf) * 1e3f + 1e-30f;
        float l = vun_f32(u, ISA_OP_VLN, lx);
        float lref = (float)log((double)lx);
        ck_assert_msg(l == lref, "ln(%a) = %a, libm %a", (double)lx, (double)l, (double)lref);
    }
    ut_free(u);
}
END_TEST

START_TEST(t_f16_arith)
{
    ut *u = ut_new();
    /* f16: computed in f32, rounded once: 1 + 2^-11 rounds to 1 (tie to even), 1 + 3*2^-11 to 1 + 2^-9 */
    uint16_t a[4] = {f16b(1.0f), f16b(1.0f), f16b(65504.0f), f16b(3.0f)};
    uint16_t b[4] = {f16b(0x1p-11f), f16b(0x1.8p-10f), f16b(65504.0f), f16b(7.0f)};
    memcpy(ut_ub(u, 0x1000), a, 8);
    memcpy(ut_ub(u, 0x2000), b, 8);
    u->vm.bits[0] = 0xf;
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_S1] = 0x2000; u->x[R_CFG] = CFG(1);
    isa_insn in = ut_insn(ISA_OP_VADD, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    uint16_t r[4];
    memcpy(r, ut_ub(u, 0x3000), 8);
    ck_assert_uint_eq(r[0], 0x3C00); ck_assert_uint_eq(r[1], 0x3C02); ck_assert_uint_eq(r[2], 0x7C00);
    ck_assert_float_eq(isa_fp_f16_to_f32(r[3]), 10.0f);
    in = ut_insn(ISA_OP_VDIV, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), 8);
    ck_assert_uint_eq(r[3], f16b(3.0f / 7.0f));
    /* vmla: dst = round(round(a*b) + dst): dst = 1 for all */
    uint16_t one[4] = {0x3C00, 0x3C00, 0x3C00, 0x3C00};
    memcpy(ut_ub(u, 0x3000), one, 8);
    in = ut_insn(ISA_OP_VMLA, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(r, ut_ub(u, 0x3000), 8);
    ck_assert_float_eq(isa_fp_f16_to_f32(r[3]), 22.0f);
    ck_assert_uint_eq(r[2], 0x7C00);
    /* vaxpy f32: dst = src * s + dst, two roundings */
    float fs[2] = {0x1.000002p0f, 3.0f}, fd[2] = {-1.0f, 1.0f};
    memcpy(ut_ub(u, 0x1000), fs, 8);
    memcpy(ut_ub(u, 0x3000), fd, 8);
    u->vm.bits[0] = 3;
    u->x[R_S1] = fb(0x1.000002p0f);
    in = ut_insn(ISA_OP_VAXPY, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    float fr[2];
    memcpy(fr, ut_ub(u, 0x3000), 8);
    ck_assert_float_eq(fr[0], (0x1.000002p0f * 0x1.000002p0f) - 1.0f);  /* the product is rounded first: 2^-22, not 2^-22+2^-46 */
    ck_assert_float_eq(fr[0], 0x1p-22f);
    ck_assert_float_eq(fr[1], 3.0f * 0x1.000002p0f + 1.0f);
    /* max / min with NaN and signed zeros */
    float ma[3] = {NAN, -0.0f, 1.0f}, mb[3] = {1.0f, 0.0f, 2.0f};
    memcpy(ut_ub(u, 0x1000), ma, 12);
    memcpy(ut_ub(u, 0x2000), mb, 12);
    u->vm.bits[0] = 7;
    u->x[R_S1] = 0x2000;
    in = ut_insn(ISA_OP_VMAX, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(fr, ut_ub(u, 0x3000), 8);
    ck_assert_uint_eq(fb(fr[0]), ISA_FP_NAN_F32); ck_assert_uint_eq(fb(fr[1]), 0);
    in = ut_insn(ISA_OP_VMIN, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(fr, ut_ub(u, 0x3000), 8);
    ck_assert_uint_eq(fb(fr[1]), 0x80000000u);
    /* vsub, vmins, vmaxs on f16 */
    ut_free(u);
}
END_TEST

START_TEST(t_cmp_sel)
{
    ut *u = ut_new();
    for (int i = 0; i < 128; i++) {
        ut_put_f16(ut_ub(u, 0x1000 + 2u * (unsigned)i), (float)i);
        ut_put_f16(ut_ub(u, 0x2000 + 2u * (unsigned)i), (float)(127 - i));
    }
    u->x[R_D] = 0x5000; u->x[R_S0] = 0x1000; u->x[R_S1] = 0x2000; u->x[R_CFG] = CFG(1);
    isa_insn in = ut_insn(ISA_OP_VCMPV, ISA_DT_F16, 0, ISA_CMP_LT);
    memset(ut_ub(u, 0x5000), 0xee, 64);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    /* i < 127 - i  <=>  i <= 63: bytes 0..7 = 0xff, 8..15 = 0, 16..31 zero-filled */
    for (int k = 0; k < 32; k++)
        ck_assert_uint_eq(*ut_ub(u, 0x5000 + (unsigned)k), k < 8 ? 0xff : 0);
    ck_assert_uint_eq(*ut_ub(u, 0x5020), 0xee);
    /* vsel by that mask: dst = mask ? src0 : src1 = min(i, 127-i) */
    u->x[R_D] = 0x3000; u->x[R_R4] = 0x5000;
    in = ut_insn(ISA_OP_VSEL, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < 128; i++)
        ck_assert_float_eq(ut_get_f16(ut_ub(u, 0x3000 + 2u * (unsigned)i)), (float)(i < 64 ? i : 127 - i));
    /* vcmpvs with a scalar, s32, ge */
    for (int i = 0; i < 64; i++) {
        int32_t v = i - 32;
        memcpy(ut_ub(u, 0x1000 + 4u * (unsigned)i), &v, 4);
    }
    u->x[R_D] = 0x5000; u->x[R_S1] = (uint64_t)(uint32_t)-3;
    in = ut_insn(ISA_OP_VCMPVS, ISA_DT_S32, 0, ISA_CMP_GE);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    uint64_t bits;
    memcpy(&bits, ut_ub(u, 0x5000), 8);
    ck_assert_uint_eq(bits, ~0ull << 29);   /* i - 32 >= -3  <=>  i >= 29 */
    /* each condition once (f32 with a NaN) */
    float a[4] = {1, 2, NAN, 3}, b[4] = {1, 1, NAN, 4};
    memcpy(ut_ub(u, 0x1000), a, 16);
    memcpy(ut_ub(u, 0x2000), b, 16);
    u->x[R_S1] = 0x2000;
    u->vm.bits[0] = 0xf;
    static const int want[6] = {0x1, 0xe, 0x8, 0x9, 0x2, 0x3};
    for (int c = 0; c < 6; c++) {
        in = ut_insn(ISA_OP_VCMPV, ISA_DT_F32, 0, c);
        ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
        ck_assert_uint_eq(*ut_ub(u, 0x5000), want[c]);
    }
    ut_free(u);
}
END_TEST

/* Reference pairwise tree, written plainly. */
static float ref_tree_sum(const float *v, int n)
{
    if (n == 1)
        return v[0];
    float t[256];
    for (int i = 0; i < n / 2; i++)
        t[i] = v[2 * i] + v[2 * i + 1];
    return ref_tree_sum(t, n / 2);
}

START_TEST(t_reductions)
{
    ut *u = ut_new();
    /* order matters: 1e8 + 1 - 1e8 ... in a sequential sum gives 0s; the tree pairs (1e8,1) first */
    float v[128];
    npu_rng rng = {7};
    for (int i = 0; i < 128; i++) {
        v[i] = (float)((int)(npu_rng_next(&rng) % 2001) - 1000) * ((i % 3) ? 1.0f : 1e6f);
        ut_put_f32(ut_ub(u, 0x1000 + 4u * (unsigned)i), v[i]);
    }
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_CFG] = CFG(2);
    isa_insn in = ut_insn(ISA_OP_VCADD, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3000)), ref_tree_sum(v, 64));
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3004)), ref_tree_sum(v + 64, 64));
    /* masked: only element 0..2 of each repeat */
    u->vm.bits[0] = 0x7;
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    float m3[4] = {v[0], v[1], v[2], 0};
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3000)), ref_tree_sum(m3, 4));
    in = ut_insn(ISA_OP_VCMAX, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3000)), fmaxf(v[0], fmaxf(v[1], v[2])));
    in = ut_insn(ISA_OP_VCMIN, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3004)), fminf(v[64], fminf(v[65], v[66])));
    u->vm.bits[0] = 0;
    in = ut_insn(ISA_OP_VCMAX, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x3000)), -INFINITY);
    u->vm.bits[0] = ~0ull;
    /* f16 sum in f32, rounded once: 64 x 1 + 64 x 2^-10 (each would vanish sequentially in f16) */
    for (int i = 0; i < 128; i++)
        ut_put_f16(ut_ub(u, 0x1000 + 2u * (unsigned)i), i % 2 ? 0x1p-10f : 1.0f);
    in = ut_insn(ISA_OP_VCADD, ISA_DT_F16, 0, 0);
    u->x[R_CFG] = CFG(1);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f16(ut_ub(u, 0x3000)), 64.0625f);
    /* vcgadd / vcgmax: 8 results per repeat */
    for (int i = 0; i < 128; i++)
        ut_put_f16(ut_ub(u, 0x1000 + 2u * (unsigned)i), (float)i);
    in = ut_insn(ISA_OP_VCGADD, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int b = 0; b < 8; b++)
        ck_assert_float_eq(ut_get_f16(ut_ub(u, 0x3000 + 2u * (unsigned)b)), (float)(16 * 16 * b + 120));
    in = ut_insn(ISA_OP_VCGMAX, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int b = 0; b < 8; b++)
        ck_assert_float_eq(ut_get_f16(ut_ub(u, 0x3000 + 2u * (unsigned)b)), (float)(16 * b + 15));
    ut_free(u);
}
END_TEST

START_TEST(t_dup_brcb_mov)
{
    ut *u = ut_new();
    for (int i = 0; i < 16; i++) {
        int32_t v = 100 + i;
        memcpy(ut_ub(u, 0x1000 + 4u * (unsigned)i), &v, 4);
    }
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_CFG] = ISA_VCFG(2, 1, 1, 1, 8, 8, 8);
    u->vm.bits[0] = 0;   /* vbrcb ignores the mask */
    isa_insn in = ut_insn(ISA_OP_VBRCB, ISA_DT_S32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int r = 0; r < 2; r++)
        for (int b = 0; b < 8; b++)
            for (int e = 0; e < 8; e++) {
                int32_t v;
                memcpy(&v, ut_ub(u, 0x3000 + (unsigned)(r * 256 + b * 32 + e * 4)), 4);
                ck_assert_int_eq(v, 100 + r * 8 + b);
            }
    u->vm.bits[0] = ~0ull;
    /* vmov bf16 with s0_blk 2: gathers every other block */
    for (int i = 0; i < 256; i++) {
        uint16_t h = (uint16_t)i;
        memcpy(ut_ub(u, 0x1000 + 2u * (unsigned)i), &h, 2);
    }
    u->x[R_CFG] = ISA_VCFG(1, 1, 2, 1, 8, 16, 8);
    in = ut_insn(ISA_OP_VMOV, ISA_DT_BF16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    for (int i = 0; i < 128; i++) {
        uint16_t h;
        memcpy(&h, ut_ub(u, 0x3000 + 2u * (unsigned)i), 2);
        ck_assert_uint_eq(h, (i / 16) * 32 + i % 16);
    }
    /* vdup f16 takes the low 16 bits */
    u->x[R_S1] = 0xdead3c00;
    u->x[R_CFG] = CFG(1);
    in = ut_insn(ISA_OP_VDUP, ISA_DT_F16, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f16(ut_ub(u, 0x3000 + 254)), 1.0f);
    ut_free(u);
}
END_TEST

/* One vconv of one element. */
static void conv1(ut *u, int from, int to, int mod, const void *src, void *dst)
{
    u->vm.counter_mode = 1;
    u->vm.count = 1;
    memcpy(ut_ub(u, 0x1000), src, (size_t)isa_dtype_bytes(from));
    memset(ut_ub(u, 0x3000), 0, 8);
    u->x[R_D] = 0x3000; u->x[R_S0] = 0x1000; u->x[R_CFG] = CFG(1);
    isa_insn in = ut_insn(ISA_OP_VCONV, from, to, mod);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    memcpy(dst, ut_ub(u, 0x3000), (size_t)isa_dtype_bytes(to));
    u->vm.counter_mode = 0;
}

static uint32_t cvf(ut *u, float v, int to, int mod)
{
    uint32_t r = 0;
    conv1(u, ISA_DT_F32, to, mod, &v, &r);
    return r;
}

START_TEST(t_vconv_boundaries)
{
    ut *u = ut_new();
    /* f32 -> f16: overflow, saturation, ties, directed modes, subnormals */
    ck_assert_uint_eq(cvf(u, 65504.0f, ISA_DT_F16, 0), 0x7BFF);
    ck_assert_uint_eq(cvf(u, 65520.0f, ISA_DT_F16, 0), 0x7C00);
    ck_assert_uint_eq(cvf(u, 65520.0f, ISA_DT_F16, ISA_RND_SAT), 0x7BFF);
    ck_assert_uint_eq(cvf(u, INFINITY, ISA_DT_F16, ISA_RND_SAT), 0x7BFF);
    ck_assert_uint_eq(cvf(u, 1.0f + 0x1p-11f, ISA_DT_F16, ISA_RND_RN), 0x3C00);
    ck_assert_uint_eq(cvf(u, 1.0f + 3 * 0x1p-11f, ISA_DT_F16, ISA_RND_RN), 0x3C02);
    ck_assert_uint_eq(cvf(u, 1.0f + 0x1p-11f, ISA_DT_F16, ISA_RND_RA), 0x3C01);
    ck_assert_uint_eq(cvf(u, 1.0f + 0x1p-12f, ISA_DT_F16, ISA_RND_RU), 0x3C01);
    ck_assert_uint_eq(cvf(u, -1.0f - 0x1p-12f, ISA_DT_F16, ISA_RND_RD), 0xBC01);
    ck_assert_uint_eq(cvf(u, -1.0f - 0x1p-12f, ISA_DT_F16, ISA_RND_RZ), 0xBC00);
    ck_assert_uint_eq(cvf(u, 0x1p-24f, ISA_DT_F16, 0), 0x0001);
    ck_assert_uint_eq(cvf(u, 0x1p-25f, ISA_DT_F16, 0), 0x0000);
    ck_assert_uint_eq(cvf(u, 0x1.8p-25f, ISA_DT_F16, 0), 0x0001);
    ck_assert_uint_eq(cvf(u, NAN, ISA_DT_F16, 0) & 0x7fff, ISA_FP_NAN_F16);
    /* f32 -> bf16 */
    ck_assert_uint_eq(cvf(u, 1.0f + 0x1p-8f, ISA_DT_BF16, 0), 0x3F80);
    ck_assert_uint_eq(cvf(u, 1.0f + 0x1p-8f, ISA_DT_BF16, ISA_RND_RU), 0x3F81);
    /* f32 -> fp8 */
    ck_assert_uint_eq(cvf(u, 448.0f, ISA_DT_E4M3, 0), 0x7E);
    ck_assert_uint_eq(cvf(u, 1000.0f, ISA_DT_E4M3, ISA_RND_SAT), 0x7E);
    ck_assert_uint_eq(cvf(u, 57344.0f, ISA_DT_E5M2, 0), 0x7B);
    ck_assert_uint_eq(cvf(u, 1e6f, ISA_DT_E5M2, 0), 0x7C);
    ck_assert_uint_eq(cvf(u, 1e6f, ISA_DT_E5M2, ISA_RND_SAT), 0x7B);
    /* f32 -> integers: rounding, saturation, wrap, NaN */
    ck_assert_uint_eq(cvf(u, 2.5f, ISA_DT_S32, 0), 2);
    ck_assert_uint_eq(cvf(u, 3.5f, ISA_DT_S32, 0), 4);
    ck_assert_uint_eq(cvf(u, 2.5f, ISA_DT_S32, ISA_RND_RA), 3);
    ck_assert_uint_eq(cvf(u, -2.5f, ISA_DT_S32, ISA_RND_RD), (uint32_t)-3);
    ck_assert_uint_eq(cvf(u, -2.5f, ISA_DT_S32, ISA_RND_RZ), (uint32_t)-2);
    ck_assert_uint_eq(cvf(u, 300.0f, ISA_DT_S8, ISA_RND_SAT), 127);
    ck_assert_uint_eq(cvf(u, -300.0f, ISA_DT_S8, ISA_RND_SAT), 0x80);
    ck_assert_uint_eq(cvf(u, 300.0f, ISA_DT_S8, 0), 300 - 256);
    ck_assert_uint_eq(cvf(u, -1.0f, ISA_DT_U8, ISA_RND_SAT), 0);
    ck_assert_uint_eq(cvf(u, 3e9f, ISA_DT_S32, ISA_RND_SAT), 0x7fffffffu);
    ck_assert_uint_eq(cvf(u, NAN, ISA_DT_S32, ISA_RND_SAT), 0);
    ck_assert_uint_eq(cvf(u, 70000.0f, ISA_DT_U16, ISA_RND_SAT), 0xffff);
    /* integer -> float and integer -> integer */
    int32_t big = 16777217;
    uint32_t r = 0;
    conv1(u, ISA_DT_S32, ISA_DT_F32, 0, &big, &r);
    ck_assert_uint_eq(r, fb(16777216.0f));
    conv1(u, ISA_DT_S32, ISA_DT_F32, ISA_RND_RU, &big, &r);
    ck_assert_uint_eq(r, fb(16777218.0f));
    int32_t s = 70000;
    r = 0;
    conv1(u, ISA_DT_S32, ISA_DT_F16, 0, &s, &r);
    ck_assert_uint_eq(r, 0x7C00);
    r = 0;
    conv1(u, ISA_DT_S32, ISA_DT_S16, ISA_RND_SAT, &s, &r);
    ck_assert_uint_eq(r, 0x7fff);
    r = 0;
    conv1(u, ISA_DT_S32, ISA_DT_S16, 0, &s, &r);
    ck_assert_uint_eq(r, 70000 - 65536);
    int8_t m1 = -1;
    r = 0;
    conv1(u, ISA_DT_S8, ISA_DT_U32, 0, &m1, &r);
    ck_assert_uint_eq(r, 0xffffffffu);
    r = 0;
    conv1(u, ISA_DT_S8, ISA_DT_U32, ISA_RND_SAT, &m1, &r);
    ck_assert_uint_eq(r, 0);
    /* fp8 -> f16 is exact; e5m2 inf -> f16 inf */
    uint8_t e = 0x7C;
    r = 0;
    conv1(u, ISA_DT_E5M2, ISA_DT_F16, 0, &e, &r);
    ck_assert_uint_eq(r, 0x7C00);
    e = 0x7E;
    r = 0;
    conv1(u, ISA_DT_E4M3, ISA_DT_F16, 0, &e, &r);
    ck_assert_float_eq(isa_fp_f16_to_f32((uint16_t)r), 448.0f);
    ut_free(u);
}
END_TEST

/* Every pair: a full repeat with mixed sizes goes element by element to
 * the place the block geometry says, with the value isa_fp_load/store give. */
START_TEST(t_vconv_all_pairs)
{
    static const int dts[] = {ISA_DT_F32, ISA_DT_F16, ISA_DT_BF16, ISA_DT_S32, ISA_DT_S16, ISA_DT_U32,
                              ISA_DT_U16, ISA_DT_S8, ISA_DT_U8, ISA_DT_E4M3, ISA_DT_E5M2};
    ut *u = ut_new();
    npu_rng rng = {99};
    for (size_t a = 0; a < NPU_ARRAY_LEN(dts); a++)
        for (size_t b = 0; b < NPU_ARRAY_LEN(dts); b++) {
            int from = dts[a], to = dts[b];
            int ss = isa_dtype_bytes(from), ds = isa_dtype_bytes(to);
            int E = 256 / NPU_MAX(ss, ds);
            for (int i = 0; i < 2048; i++)
                *ut_ub(u, 0x1000 + (unsigned)i) = (uint8_t)npu_rng_next(&rng);
            /* the first elements of repeat 0: boundary values of every range and rounding */
            static const double bnd[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.5, 2.5, -2.5, 0.5, 127.5, -128.5, 255.5,
                                         256.0, -129.0, 32767.5, -32768.5, 65535.5, 65536.0, 65504.0, 65520.0, 448.0,
                                         464.0, 57344.0, 61440.0, 2147483520.0, 2147483648.0, -2147483904.0,
                                         4294967296.0, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-126, 0x1p-149, 0x1p-10,
                                         3.0e38, -1.0};
            for (size_t q = 0; q < NPU_ARRAY_LEN(bnd) && (int)q < E; q++)
                isa_fp_store((isa_dtype)from, ut_ub(u, 0x1000 + (unsigned)(q * (size_t)ss)), bnd[q], ISA_RM_RNE, 1);
            memset(ut_ub(u, 0x4000), 0x5a, 4096);
            /* 2 repeats; src rep stride = its blocks per repeat, dst blk stride 2 */
            int sblk = E * ss / 32, dblk = E * ds / 32;
            u->x[R_D] = 0x4000; u->x[R_S0] = 0x1000;
            u->x[R_CFG] = ISA_VCFG(2, 2, 1, 1, 2 * dblk, sblk, 8);
            for (int mod = 0; mod <= 12; mod = (mod & 7) == 4 ? (mod & 8) + 8 : mod + 1) {
                isa_insn in = ut_insn(ISA_OP_VCONV, from, to, mod);
                ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
                ck_assert_uint_eq(u->w.elems, 2u * (unsigned)E);
                for (int r = 0; r < 2; r++)
                    for (int i = 0; i < E; i++) {
                        const uint8_t *sp = ut_ub(u, 0x1000 + (unsigned)(r * sblk * 32 + i * ss));
                        int epb = 32 / ds;
                        const uint8_t *dp = ut_ub(u, 0x4000 + (unsigned)(r * 2 * dblk * 32 + (i / epb) * 64 + (i % epb) * ds));
                        uint8_t want[4];
                        isa_fp_store((isa_dtype)to, want, isa_fp_load((isa_dtype)from, sp), mod & 7, (mod & 8) != 0);
                        ck_assert_msg(memcmp(want, dp, (size_t)ds) == 0, "vconv %s->%s mod %d elem %d", isa_dtype_suffix(from),
                                      isa_dtype_suffix(to), mod, i);
                    }
                /* gaps (odd blocks) untouched */
                ck_assert_uint_eq(*ut_ub(u, 0x4000 + 32), 0x5a);
            }
        }
    ut_free(u);
}
END_TEST

START_TEST(t_bank_conflicts)
{
    ut *u = ut_new();
    /* src0 and src1 1536 B apart: same bank in every beat (48 banks x 32 B) -> 8 per repeat */
    u->x[R_D] = 0x8000 + 32 * 5; u->x[R_S0] = 0x0; u->x[R_S1] = 1536; u->x[R_CFG] = CFG(2);
    isa_insn in = ut_insn(ISA_OP_VADD, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bank_conflicts, 16);
    ck_assert_uint_eq(u->w.bankgroup_conflicts, 0);
    /* dst 512 B from src0: same bank group (16 groups) -> one per beat */
    u->x[R_S1] = 0x100 + 32; u->x[R_D] = 512;
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bank_conflicts, 0);
    ck_assert_uint_eq(u->w.bankgroup_conflicts, 16);
    /* nodata: same accounting, no data change */
    ut_put_f32(ut_ub(u, 512), 9.0f);
    u->ctx.nodata = 1;
    ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bankgroup_conflicts, 16);
    ck_assert_int_eq(u->nlog, 3);
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 512)), 9.0f);
    ut_free(u);
}
END_TEST

/* Reading the very block being written in a beat is one port access, not a
 * bank-group conflict (vmla/vaxpy's accumulator, an in-place operand); a
 * write into the group of a read of another block still is one. */
START_TEST(t_bank_conflicts_same_block)
{
    ut *u = ut_new();
    u->ctx.nodata = 1;
    /* vmla: dst 0 (also read), src0 block 197, src1 block 394: three groups */
    u->x[R_D] = 0; u->x[R_S0] = 6304; u->x[R_S1] = 12608; u->x[R_CFG] = CFG(2);
    isa_insn mla = ut_insn(ISA_OP_VMLA, ISA_DT_F32, 0, 0);
    ck_assert_msg(ut_run(u, &mla) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bank_conflicts, 0);
    ck_assert_uint_eq(u->w.bankgroup_conflicts, 0);
    /* in-place vadd, dst == src0 */
    isa_insn add = ut_insn(ISA_OP_VADD, ISA_DT_F32, 0, 0);
    u->x[R_D] = 6304;
    ck_assert_msg(ut_run(u, &add) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bankgroup_conflicts, 0);
    /* vmla with src1 512 B from dst: src1's block is in dst's group */
    u->x[R_D] = 0; u->x[R_S1] = 512;
    ck_assert_msg(ut_run(u, &mla) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bankgroup_conflicts, 16);
    /* vaxpy (scalar form): only the accumulator shares dst's group */
    isa_insn axpy = ut_insn(ISA_OP_VAXPY, ISA_DT_F32, 0, 0);
    u->x[R_S1] = 0;
    ck_assert_msg(ut_run(u, &axpy) == NPU_OK, "%s", u->d.msg);
    ck_assert_uint_eq(u->w.bankgroup_conflicts, 0);
    ut_free(u);
}
END_TEST

START_TEST(t_faults)
{
    ut *u = ut_new();
    u->x[R_D] = 0x2ff00; u->x[R_S0] = 0; u->x[R_S1] = 0; u->x[R_CFG] = CFG(2);
    isa_insn in = ut_insn(ISA_OP_VADD, ISA_DT_F32, 0, 0);
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "UB write [0x2ff00, +512) outside UB (196608 bytes)"), "%s", u->d.msg);
    u->x[R_D] = 0x2f010;
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "not 32-byte aligned"), "%s", u->d.msg);
    /* a fault changes nothing */
    u->x[R_D] = 0x1000; u->x[R_S1] = 0x2ff00;
    ut_put_f32(ut_ub(u, 0x1000), 5.0f);
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ck_assert_msg(strstr(u->d.msg, "UB read"), "%s", u->d.msg);
    ck_assert_float_eq(ut_get_f32(ut_ub(u, 0x1000)), 5.0f);
    /* illegal dtype */
    in = ut_insn(ISA_OP_VDIV, ISA_DT_S32, 0, 0);
    ck_assert_int_eq(ut_run(u, &in), NPU_EFAULT);
    ut_free(u);
}
END_TEST


/* Randomised: every elementwise op, f32 / f16 / s32 / s16, random strides
 * and masks, against a plain reference: floats in double rounded once to
 * the dtype (which the double-rounding theorem says equals the unit's f32
 * computation), integers in int64 wrapped. */
static double rnd_val(npu_rng *r, int dt)
{
    double v = ((double)(npu_rng_next(r) >> 11) / 9007199254740992.0) * 200.0 - 100.0;
    if (dt == ISA_DT_S32 || dt == ISA_DT_S16)
        return (double)((int64_t)(npu_rng_next(r) % 2000001) - 1000000) * (dt == ISA_DT_S32 ? 1000.0 : 0.01);
    return v;
}

static uint32_t rbits(int dt, double v)
{
    if (dt == ISA_DT_S32)
        return (uint32_t)(int32_t)v;
    if (dt == ISA_DT_S16)
        return (uint32_t)(uint16_t)(int16_t)(int64_t)v;
    return isa_fp_from_double((isa_dtype)dt, v, ISA_RM_RNE, 0);
}

static double rval(int dt, uint32_t b)
{
    if (dt == ISA_DT_S32)
        return (double)(int32_t)b;
    if (dt == ISA_DT_S16)
        return (double)(int16_t)b;
    return isa_fp_to_double((isa_dtype)dt, b);
}

static uint32_t ref_op(isa_op op, int dt, uint32_t a, uint32_t b, uint32_t c)
{
    int fl = dt == ISA_DT_F32 || dt == ISA_DT_F16;
    double x = rval(dt, a), y = rval(dt, b), z = rval(dt, c), v;
    if (!fl) {
        int64_t i = (int64_t)x, j = (int64_t)y, rr;
        switch (op) {
        case ISA_OP_VADD: case ISA_OP_VADDS: rr = i + j; break;
        case ISA_OP_VSUB: rr = i - j; break;
        case ISA_OP_VMUL: case ISA_OP_VMULS: rr = (int64_t)((uint64_t)i * (uint64_t)j); break;
        case ISA_OP_VMAX: case ISA_OP_VMAXS: rr = i > j ? i : j; break;
        case ISA_OP_VMIN: case ISA_OP_VMINS: rr = i < j ? i : j; break;
        case ISA_OP_VABS: rr = i < 0 ? -i : i; break;
        case ISA_OP_VRELU: rr = i > 0 ? i : 0; break;
        default: rr = 0; ck_abort();
        }
        return dt == ISA_DT_S32 ? (uint32_t)rr : (uint32_t)(rr & 0xffff);
    }
    switch (op) {
    case ISA_OP_VADD: case ISA_OP_VADDS: v = x + y; break;
    case ISA_OP_VSUB: v = x - y; break;
    case ISA_OP_VMUL: case ISA_OP_VMULS: v = x * y; break;
    case ISA_OP_VDIV: v = x / y; break;
    case ISA_OP_VMAX: case ISA_OP_VMAXS: v = x > y ? x : y; break;
    case ISA_OP_VMIN: case ISA_OP_VMINS: v = x < y ? x : y; break;
    case ISA_OP_VMLA: case ISA_OP_VAXPY: v = rval(dt, rbits(dt, x * y)) + z; break;
    case ISA_OP_VSQRT: v = sqrt(x < 0 ? -x : x); break;
    case ISA_OP_VREC: v = 1.0 / x; break;
    case ISA_OP_VABS: v = fabs(x); break;
    case ISA_OP_VRELU: v = x > 0 ? x : 0; break;
    default: v = 0; ck_abort();
    }
    return rbits(dt, v);
}

START_TEST(t_random_elementwise)
{
    static const isa_op fops[] = {ISA_OP_VADD, ISA_OP_VSUB, ISA_OP_VMUL, ISA_OP_VDIV, ISA_OP_VMAX, ISA_OP_VMIN,
                                  ISA_OP_VMLA, ISA_OP_VADDS, ISA_OP_VMULS, ISA_OP_VMAXS, ISA_OP_VMINS, ISA_OP_VAXPY,
                                  ISA_OP_VSQRT, ISA_OP_VREC, ISA_OP_VABS, ISA_OP_VRELU};
    static const int dts[] = {ISA_DT_F32, ISA_DT_F16, ISA_DT_S32, ISA_DT_S16};
    ut *u = ut_new();
    npu_rng r = {31337};
    for (size_t t = 0; t < NPU_ARRAY_LEN(dts); t++)
        for (size_t o = 0; o < NPU_ARRAY_LEN(fops); o++) {
            int dt = dts[t];
            isa_op op = fops[o];
            const isa_info *info = isa_info_of(op);
            if (!(info->dtypes & (1u << dt)))
                continue;
            int size = isa_dtype_bytes(dt), E = 256 / size, epb = 32 / size;
            int bin = info->fmt == ISA_FMT_VBIN, sca = info->fmt == ISA_FMT_VSCA;
            /* operand areas: src0 0x0000, src1 0x8000, dst 0x10000; random strides 1..3, 3 repeats */
            int db = 1 + (int)(npu_rng_next(&r) % 3), s0b = 1 + (int)(npu_rng_next(&r) % 3), s1b = 1 + (int)(npu_rng_next(&r) % 3);
            int dr = 8 * db, s0r = 8 * s0b, s1r = 8 * s1b;
            for (int i = 0; i < 0x8000 / size; i++) {
                int sq = op == ISA_OP_VSQRT;
                uint32_t a = rbits(dt, sq ? fabs(rnd_val(&r, dt)) : rnd_val(&r, dt)), b = rbits(dt, rnd_val(&r, dt)), c = rbits(dt, rnd_val(&r, dt));
                memcpy(ut_ub(u, (uint64_t)(i * size)), &a, (size_t)size);
                memcpy(ut_ub(u, 0x8000 + (uint64_t)(i * size)), &b, (size_t)size);
                memcpy(ut_ub(u, 0x10000 + (uint64_t)(i * size)), &c, (size_t)size);
            }
            uint8_t before[0x8000];
            memcpy(before, ut_ub(u, 0x10000), sizeof before);
            uint32_t scal = rbits(dt, rnd_val(&r, dt));
            u->vm.bits[0] = npu_rng_next(&r);
            u->vm.bits[1] = npu_rng_next(&r);
            u->x[R_D] = 0x10000; u->x[R_S0] = 0; u->x[R_S1] = bin ? 0x8000 : scal;
            u->x[R_CFG] = ISA_VCFG(3, db, s0b, s1b, dr, s0r, s1r);
            isa_insn in = ut_insn(op, dt, 0, 0);
            ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
            for (int rr = 0; rr < 3; rr++)
                for (int i = 0; i < E; i++) {
                    int bit = E > 128 ? i / 2 : i;
                    int on = (u->vm.bits[bit / 64] >> (bit % 64)) & 1;
                    uint64_t da = (uint64_t)(rr * dr * 32 + (i / epb) * db * 32 + (i % epb) * size);
                    uint64_t aa = (uint64_t)(rr * s0r * 32 + (i / epb) * s0b * 32 + (i % epb) * size);
                    uint64_t ba = 0x8000 + (uint64_t)(rr * s1r * 32 + (i / epb) * s1b * 32 + (i % epb) * size);
                    uint32_t a = 0, b = 0, c = 0, got = 0;
                    memcpy(&a, ut_ub(u, aa), (size_t)size);
                    memcpy(&b, ut_ub(u, ba), (size_t)size);
                    memcpy(&c, before + da, (size_t)size);
                    memcpy(&got, ut_ub(u, 0x10000 + da), (size_t)size);
                    uint32_t want = on ? ref_op(op, dt, a, bin ? b : sca ? scal : 0, c) : c;
                    ck_assert_msg(got == want, "%s.%s repeat %d elem %d: got %x want %x", info->mnemonic, isa_dtype_suffix(dt), rr, i, got, want);
                }
        }
    ut_free(u);
}
END_TEST

/* vexp / vln / vrsqrt on every finite f16 input: the correctly rounded f16
 * of the libm double result (f16's 11 bits are far from double's error). */
START_TEST(t_f16_transcendental_exhaustive)
{
    ut *u = ut_new();
    static const isa_op ops[] = {ISA_OP_VEXP, ISA_OP_VLN, ISA_OP_VRSQRT};
    for (size_t o = 0; o < NPU_ARRAY_LEN(ops); o++)
        for (uint32_t base = 0; base < 0x10000; base += 128 * 8) {
            for (uint32_t i = 0; i < 128 * 8; i++) {
                uint16_t h = (uint16_t)(base + i);
                memcpy(ut_ub(u, 2u * i), &h, 2);
            }
            u->x[R_D] = 0x4000; u->x[R_S0] = 0; u->x[R_CFG] = CFG(8);
            isa_insn in = ut_insn(ops[o], ISA_DT_F16, 0, 0);
            ck_assert_msg(ut_run(u, &in) == NPU_OK, "%s", u->d.msg);
            for (uint32_t i = 0; i < 128 * 8; i++) {
                uint16_t h = (uint16_t)(base + i), got;
                memcpy(&got, ut_ub(u, 0x4000 + 2u * i), 2);
                double x = isa_fp_to_double(ISA_DT_F16, h);
                if (isnan(x))
                    continue;
                double ref = ops[o] == ISA_OP_VEXP ? exp(x) : ops[o] == ISA_OP_VLN ? log(x) : 1.0 / sqrt(x);
                uint16_t want = isnan(ref) ? (uint16_t)ISA_FP_NAN_F16 : (uint16_t)isa_fp_from_double(ISA_DT_F16, ref, ISA_RM_RNE, 0);
                ck_assert_msg(got == want, "%s.f16(0x%04x) = 0x%04x, want 0x%04x", isa_info_of(ops[o])->mnemonic, h, got, want);
            }
        }
    ut_free(u);
}
END_TEST

Suite *vec_suite(void)
{
    Suite *s = suite_create("vec");
    TCase *tc = tcase_create("vec");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, t_vadd_f32_contig);
    tcase_add_test(tc, t_mask_normal_f16);
    tcase_add_test(tc, t_mask_normal_f32_and_u8);
    tcase_add_test(tc, t_mask_counter);
    tcase_add_test(tc, t_strides);
    tcase_add_test(tc, t_int_wrap);
    tcase_add_test(tc, t_float_unary);
    tcase_add_test(tc, t_f16_arith);
    tcase_add_test(tc, t_cmp_sel);
    tcase_add_test(tc, t_reductions);
    tcase_add_test(tc, t_dup_brcb_mov);
    tcase_add_test(tc, t_vconv_boundaries);
    tcase_add_test(tc, t_vconv_all_pairs);
    tcase_add_test(tc, t_bank_conflicts);
    tcase_add_test(tc, t_bank_conflicts_same_block);
    tcase_add_test(tc, t_faults);
    tcase_add_test(tc, t_random_elementwise);
    tcase_add_test(tc, t_f16_transcendental_exhaustive);
    suite_add_tcase(s, tc);
    return s;
}
