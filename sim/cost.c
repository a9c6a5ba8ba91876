/* cost.c — instruction durations from the machine config (see cost.h and
 * docs/timing.md). The formulas have the shape the reference measurements
 * show (docs/fidelity.md): a minimum occupancy, a fixed part and a rate. */
#include "sim/cost.h"

#include <math.h>

int sim_cost_vop(isa_op op)
{
    switch (op) {
    case ISA_OP_VADD: case ISA_OP_VSUB: case ISA_OP_VMUL: case ISA_OP_VMAX:
    case ISA_OP_VMIN: case ISA_OP_VAND: case ISA_OP_VOR:
        return CFG_VOP_BINARY;
    /* vaxpy reads two operands (src and dst) like a binary op, and the
     * 910B1 measurements give it the binary rate, not the madd one */
    case ISA_OP_VAXPY:
        return CFG_VOP_BINARY;
    case ISA_OP_VMLA:
        return CFG_VOP_MADD;
    case ISA_OP_VDIV:
        return CFG_VOP_DIV;
    case ISA_OP_VADDS: case ISA_OP_VMULS: case ISA_OP_VMAXS: case ISA_OP_VMINS:
    case ISA_OP_VABS: case ISA_OP_VRELU:
        return CFG_VOP_UNARY;
    case ISA_OP_VEXP:   return CFG_VOP_EXP;
    case ISA_OP_VLN:    return CFG_VOP_LN;
    case ISA_OP_VSQRT:  return CFG_VOP_SQRT;
    case ISA_OP_VRSQRT: return CFG_VOP_RSQRT;
    case ISA_OP_VREC:   return CFG_VOP_RECIP;
    case ISA_OP_VMOV:   return CFG_VOP_COPY;
    case ISA_OP_VCONV:  return CFG_VOP_CAST;
    case ISA_OP_VCMPV: case ISA_OP_VSEL:
        return CFG_VOP_CMPSEL;
    case ISA_OP_VCMPVS:
        return CFG_VOP_CMPS;
    case ISA_OP_VCADD:
        return CFG_VOP_REDUCE_SUM;
    case ISA_OP_VCMAX: case ISA_OP_VCMIN:
        return CFG_VOP_REDUCE_MAX;
    case ISA_OP_VCGADD: case ISA_OP_VCGMAX:
        return CFG_VOP_GROUP_REDUCE;
    case ISA_OP_VDUP: case ISA_OP_VBRCB:
        return CFG_VOP_DUP;
    default:
        return -1;
    }
}

int sim_cost_dt_column(int dt)
{
    switch (dt) {
    case ISA_DT_F32: case ISA_DT_F16: case ISA_DT_BF16:
    case ISA_DT_S32: case ISA_DT_S16: case ISA_DT_S8:
        return dt;
    case ISA_DT_U32: return ISA_DT_S32;
    case ISA_DT_U16: return ISA_DT_S16;
    case ISA_DT_U8: case ISA_DT_E4M3: case ISA_DT_E5M2: return ISA_DT_S8;
    case ISA_DT_S64: return ISA_DT_S32;
    default: return ISA_DT_F32;
    }
}

int sim_cost_path(isa_op op)
{
    switch (op) {
    case ISA_OP_GM2L1:   return CFG_PATH_GM_L1;
    case ISA_OP_GM2UB:   return CFG_PATH_GM_UB;
    case ISA_OP_GM2L0A:  return CFG_PATH_GM_L0A;
    case ISA_OP_GM2L0B:  return CFG_PATH_GM_L0B;
    case ISA_OP_L12L0A:  return CFG_PATH_L1_L0A;
    case ISA_OP_L12L0B:  return CFG_PATH_L1_L0B;
    case ISA_OP_L12UB:   return CFG_PATH_L1_UB;
    case ISA_OP_UB2GM:   return CFG_PATH_UB_GM;
    case ISA_OP_UB2L1:   return CFG_PATH_UB_L1;
    case ISA_OP_L12GM:   return CFG_PATH_L1_GM;
    case ISA_OP_UB2UB:   return CFG_PATH_UB_UB;
    case ISA_OP_IMG2L0A: return CFG_PATH_L1_L0A;
    case ISA_OP_IMG2L0B: return CFG_PATH_L1_L0B;
    case ISA_OP_L0C2GM:  return CFG_PATH_L0C_GM;
    case ISA_OP_L0C2UB:  return CFG_PATH_L0C_UB;
    case ISA_OP_L0C2L1:  return CFG_PATH_L0C_L1;
    default:             return -1;
    }
}

/* ceil of a non-negative double as cycles; the tiny slack keeps exact
 * products (3 x 2.0) from rounding up through representation error. */
static uint64_t cyc_ceil(double x)
{
    if (!(x > 0))
        return 0;
    return (uint64_t)ceil(x - 1e-9);
}

uint64_t sim_cost_vec(const cfg_machine *m, const isa_insn *in, const sim_work *w,
                      uint64_t *conflict_cycles)
{
    int vop = sim_cost_vop(in->op);
    uint64_t dur = m->vector.startup_cycles, conf = 0, body = 0;
    if (vop >= 0) {
        int col = sim_cost_dt_column(in->dt);
        double cpr = m->vector.cpr[vop][col];
        if (cpr <= 0)   /* n/a for this dtype in the table: cost it as f32 */
            cpr = m->vector.cpr[vop][ISA_DT_F32];
        if (vop == CFG_VOP_CAST) {
            /* a conversion's rate is per repeat of its source (a repeat's
             * worth of source bytes), or the pair's own
             * (vector.cast_to.DT2.DT); a vconv repeat covers the wider
             * operand, so a widening one reads less than a source repeat */
            double pr = m->vector.cast_to[sim_cost_dt_column(in->dt2)][col];
            if (pr > 0)
                cpr = pr;
            cpr = cpr * isa_vrep_elems(in->dt, in->dt2) * isa_dtype_bytes(in->dt) / ISA_VREP_BYTES;
        }
        body = cyc_ceil((double)w->repeats * cpr);
    }
    /* compares write one mask bit per element; a mask that ends inside a
     * UB block costs a read-modify-write of that block (part of the body:
     * the start-up floor still covers a short one) */
    if ((in->op == ISA_OP_VCMPV || in->op == ISA_OP_VCMPVS) && m->vector.block_bytes) {
        int eb = isa_dtype_bytes(in->dt);
        uint64_t bits = eb > 0 ? m->vector.repeat_bytes / (uint64_t)eb : 0;
        if (((uint64_t)w->repeats * bits / 8) % m->vector.block_bytes)
            body += m->vector.mask_partial_block_cycles;
    }
    if (body > dur)
        dur = body;
    if (m->vector.model_bank_conflicts)
        conf = (uint64_t)w->bank_conflicts * m->vector.bank_conflict_cycles +
               (uint64_t)w->bankgroup_conflicts * m->vector.bank_group_conflict_cycles;
    if (conflict_cycles)
        *conflict_cycles = conf;
    return dur + conf;
}

uint64_t sim_cost_cube(const cfg_machine *m, const isa_insn *in, const sim_work *w)
{
    double cpf = m->cube.dt[in->dt < ISA_DT_COUNT ? in->dt : 0].cycles_per_fractal;
    if (cpf <= 0)
        cpf = 1;
    double f = (double)w->fractals * cpf;
    if (in->op == ISA_OP_MMADSP && m->cube.sparse_speedup > 0)
        f /= m->cube.sparse_speedup;
    uint64_t dur = m->cube.startup_cycles + cyc_ceil(f);
    return dur < m->cube.min_cycles ? m->cube.min_cycles : dur;
}

uint64_t sim_cost_dma_stream(const cfg_machine *m, int path, uint64_t bytes)
{
    if (path < 0 || path >= CFG_PATH__COUNT)
        return 0;
    uint64_t wd = m->path[path].width ? m->path[path].width : 1;
    return (bytes + wd - 1) / wd;
}

uint64_t sim_cost_dma(const cfg_machine *m, int path, uint64_t bytes)
{
    if (path < 0 || path >= CFG_PATH__COUNT)
        return 1;
    uint64_t dur = m->path[path].latency + sim_cost_dma_stream(m, path, bytes);
    return dur < m->path[path].min_cycles ? m->path[path].min_cycles : dur;
}

uint64_t sim_cost_scalar(const cfg_machine *m, const isa_insn *in, isa_cost cost, int taken)
{
    uint64_t issue = m->scalar.issue_cycles ? m->scalar.issue_cycles : 1;
    uint64_t c = issue;
    (void)in;
    switch (cost) {
    case ISA_COST_SMUL: c = NPU_MAX(issue, m->scalar.mul_latency); break;
    case ISA_COST_SDIV: c = NPU_MAX(issue, m->scalar.div_latency); break;
    case ISA_COST_SLD:  c = NPU_MAX(issue, m->scalar.load_latency); break;
    case ISA_COST_BR:   c = issue + (taken ? m->scalar.branch_taken_penalty : 0); break;
    case ISA_COST_JMP:  c = issue + m->scalar.branch_taken_penalty; break;
    default: break;
    }
    return c;
}

uint64_t sim_cost_dispatch(const cfg_machine *m)
{
    return m->scalar.dispatch_cycles ? m->scalar.dispatch_cycles : 1;
}
