/* sim_units.c — the unit-routing table and the helpers the vector, cube and
 * data-move models share (operand range checks, access reports). */
#include "sim/units_int.h"

#include <inttypes.h>

const char *sim_space_name(sim_space s)
{
    static const char *const names[SIM_SP_COUNT] = {"GM", "L1", "L0A", "L0B", "L0C", "UB", "SB"};
    return (unsigned)s < SIM_SP_COUNT ? names[s] : "?";
}

int sim_unit_of(isa_op op)
{
    switch (op) {
    case ISA_OP_MMAD: case ISA_OP_MMADSP:
        return 'c';
    case ISA_OP_GM2L1: case ISA_OP_GM2UB: case ISA_OP_GM2L0A: case ISA_OP_GM2L0B:
    case ISA_OP_L12L0A: case ISA_OP_L12L0B: case ISA_OP_L12UB: case ISA_OP_UB2GM:
    case ISA_OP_UB2L1: case ISA_OP_L12GM: case ISA_OP_UB2UB: case ISA_OP_IMG2L0A:
    case ISA_OP_IMG2L0B: case ISA_OP_L0C2GM: case ISA_OP_L0C2UB: case ISA_OP_L0C2L1:
        return 'd';
    case ISA_OP_VMASK: case ISA_OP_VMASKC:
        return 0;   /* the executor writes ctx->vmask itself */
    default: {
        const isa_info *i = isa_info_of(op);
        return i && i->pipe == ISA_PIPE_V ? 'v' : 0;
    }
    }
}

npu_status sim_chk_range(const sim_unit_ctx *ctx, sim_space sp, int is_write, uint64_t addr,
                         uint64_t len, const char *who, npu_diag *d)
{
    if (sp == SIM_SP_GM)
        return NPU_OK;   /* the GM interface owns GM bounds (allocations) */
    uint64_t size = ctx->size[sp];
    if (addr > size || len > size - addr)
        return npu_errf(d, NPU_EFAULT, "%s: %s %s [0x%" PRIx64 ", +%" PRIu64 ") outside %s (%" PRIu64 " bytes)",
                        who, sim_space_name(sp), is_write ? "write" : "read", addr, len,
                        sim_space_name(sp), size);
    return NPU_OK;
}

npu_status sim_chk_align(const sim_unit_ctx *ctx, sim_space sp, uint64_t addr, const char *what,
                         const char *who, npu_diag *d)
{
    uint32_t al = ctx->align[sp];
    if (al > 1 && addr % al)
        return npu_errf(d, NPU_EFAULT, "%s: %s address 0x%" PRIx64 " in %s is not %u-byte aligned",
                        who, what, addr, sim_space_name(sp), al);
    return NPU_OK;
}

void sim_rng_init(sim_rng *r, sim_unit_ctx *ctx, sim_space sp, int is_write, const char *who)
{
    r->ctx = ctx;
    r->sp = sp;
    r->is_write = is_write;
    r->who = who;
    r->a = r->len = 0;
    r->have = 0;
    r->total = 0;
}

npu_status sim_rng_flush(sim_rng *r, npu_diag *d)
{
    if (!r->have)
        return NPU_OK;
    r->have = 0;
    npu_status st = sim_chk_range(r->ctx, r->sp, r->is_write, r->a, r->len, r->who, d);
    if (st)
        return st;
    if (r->ctx->access)
        r->ctx->access(r->ctx->access_user, r->sp, r->a, r->len, r->is_write);
    return NPU_OK;
}

npu_status sim_rng_add(sim_rng *r, uint64_t addr, uint64_t len, npu_diag *d)
{
    if (len == 0)
        return NPU_OK;
    r->total += len;
    if (r->have && r->a + r->len == addr) {
        r->len += len;
        return NPU_OK;
    }
    npu_status st = sim_rng_flush(r, d);
    r->a = addr;
    r->len = len;
    r->have = 1;
    return st;
}
