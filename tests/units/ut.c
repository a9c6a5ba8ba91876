/* ut.c — the fixture of ut.h. */
#include "tests/units/ut.h"

#include <inttypes.h>

static npu_status gm_rd(void *g, uint64_t a, void *dst, uint64_t len, npu_diag *d)
{
    ut *u = g;
    if (a < UT_GM_BASE || a - UT_GM_BASE > UT_GM_SIZE || len > UT_GM_SIZE - (a - UT_GM_BASE))
        return npu_errf(d, NPU_EFAULT, "GM read [0x%" PRIx64 ", +%" PRIu64 ") outside any allocation", a, len);
    memcpy(dst, u->gm + (a - UT_GM_BASE), len);
    return NPU_OK;
}

static npu_status gm_wr(void *g, uint64_t a, const void *src, uint64_t len, npu_diag *d)
{
    ut *u = g;
    if (a < UT_GM_BASE || a - UT_GM_BASE > UT_GM_SIZE || len > UT_GM_SIZE - (a - UT_GM_BASE))
        return npu_errf(d, NPU_EFAULT, "GM write [0x%" PRIx64 ", +%" PRIu64 ") outside any allocation", a, len);
    memcpy(u->gm + (a - UT_GM_BASE), src, len);
    return NPU_OK;
}

static void acc(void *user, sim_space sp, uint64_t a, uint64_t len, int w)
{
    ut *u = user;
    if (u->nlog < UT_MAXLOG)
        u->log[u->nlog++] = (ut_acc){sp, a, len, w};
}

ut *ut_new(void)
{
    static const uint64_t sizes[SIM_SP_COUNT] = {0, 512 << 10, 64 << 10, 64 << 10, 128 << 10, 192 << 10, 16 << 10};
    static const uint32_t al[SIM_SP_COUNT] = {1, 32, 512, 512, 64, 32, 1};
    ut *u = npu_calloc(1, sizeof *u);
    ck_assert_ptr_nonnull(u);
    for (int s = 1; s < SIM_SP_COUNT; s++) {
        u->ctx.buf[s] = npu_calloc(1, sizes[s]);
        ck_assert_ptr_nonnull(u->ctx.buf[s]);
        u->ctx.size[s] = sizes[s];
        u->ctx.align[s] = al[s];
    }
    u->ctx.align[0] = al[0];
    u->gm = npu_calloc(1, UT_GM_SIZE);
    ck_assert_ptr_nonnull(u->gm);
    u->ctx.gm = (sim_gm_if){u, gm_rd, gm_wr};
    u->ctx.vmask = &u->vm;
    u->vm.bits[0] = u->vm.bits[1] = ~0ull;
    u->ctx.x = u->x;
    u->ctx.access = acc;
    u->ctx.access_user = u;
    u->ctx.ub_banks = 48;
    u->ctx.ub_bank_bytes = 4096;
    u->ctx.ub_bank_groups = 16;
    return u;
}

void ut_free(ut *u)
{
    for (int s = 1; s < SIM_SP_COUNT; s++)
        npu_free(u->ctx.buf[s]);
    npu_free(u->gm);
    npu_free(u);
}

npu_status ut_run(ut *u, const isa_insn *in)
{
    memset(&u->w, 0, sizeof u->w);
    npu_diag_clear(&u->d);
    u->nlog = 0;
    switch (sim_unit_of(in->op)) {
    case 'v': return sim_exec_vec(&u->ctx, in, &u->w, &u->d);
    case 'c': return sim_exec_cube(&u->ctx, in, &u->w, &u->d);
    case 'd': return sim_exec_dma(&u->ctx, in, &u->w, &u->d);
    default: ck_abort_msg("no unit for op %d", in->op); return NPU_EINVAL;
    }
}

isa_insn ut_insn(isa_op op, int dt, int dt2, int mod)
{
    isa_insn in;
    memset(&in, 0, sizeof in);
    in.op = op;
    in.rd = R_D;
    in.rs1 = R_S0;
    in.rs2 = R_S1;
    in.rs3 = R_CFG;
    in.rs4 = R_R4;
    in.dt = (uint8_t)dt;
    in.dt2 = (uint8_t)dt2;
    in.mod = (uint8_t)mod;
    return in;
}

uint8_t *ut_ub(ut *u, uint64_t a) { return u->ctx.buf[SIM_SP_UB] + a; }
void ut_put_f32(uint8_t *p, float v) { memcpy(p, &v, 4); }
float ut_get_f32(const uint8_t *p) { float v; memcpy(&v, p, 4); return v; }
void ut_put_f16(uint8_t *p, float v) { uint16_t h = isa_fp_f32_to_f16(v); memcpy(p, &h, 2); }
float ut_get_f16(const uint8_t *p) { uint16_t h; memcpy(&h, p, 2); return isa_fp_f16_to_f32(h); }
