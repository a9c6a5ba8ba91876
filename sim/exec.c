/* exec.c — the executor: one core's instructions, functionally, in program
 * order, at the moment the scalar unit dispatches them.
 *
 * One loop (exec_loop) serves both callers:
 *   sim_core_step — exactly one instruction (budget 1), described in a
 *                   sim_op for the timing engine and the on_op observers;
 *   sim_core_run  — func mode's fast path: threaded dispatch (a table of
 *                   label addresses indexed by the predecoded op), no
 *                   per-instruction description, no allocation.
 * Both share every semantic body, so the two cannot disagree; the
 * description code sits behind `if (single)`, a well-predicted branch.
 *
 * pc is a byte address; .text is predecoded into s->text with one sentinel
 * (INVALID) entry after the last instruction, and every jump target is
 * checked when taken, so the loop needs no per-instruction bounds check. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"

/* ---- helpers --------------------------------------------------------------- */

static void pmu_account(sim_core *c, uint64_t n)
{
    if (!(c->pmu_ctl & 1) || n == 0)
        return;
    for (int i = 0; i < 4; i++)
        if (c->pmu_sel[i] == 0)
            c->pmu_cnt[i] += n;
}

static void gmr_add(sim_core *c, uint64_t addr, uint64_t len, int is_write)
{
    if (c->ngmr == c->capgmr) {
        uint32_t nc = c->capgmr ? c->capgmr * 2 : 64;
        sim_gm_range *nr = npu_realloc(c->gmr, nc * sizeof *nr);
        if (!nr) {
            c->gmr_oom = 1;
            return;
        }
        c->gmr = nr;
        c->capgmr = nc;
    }
    c->gmr[c->ngmr].addr = addr;
    c->gmr[c->ngmr].len = len;
    c->gmr[c->ngmr].is_write = is_write;
    c->ngmr++;
}

static void notify(npu_sim *s, sim_space sp, uint64_t addr, uint64_t len, int is_write)
{
    sim_access_ev ev = {s->cur_core, s->cur_pc, s->cur_pipe, sp, addr, len, is_write};
    for (int i = 0; i < s->nobs; i++)
        if (s->obs[i].access)
            s->obs[i].access(s->obs[i].user, &ev);
}

/* The units' access sink: record GM ranges for the step, forward to observers. */
static void unit_access(void *user, sim_space sp, uint64_t addr, uint64_t len, int is_write)
{
    npu_sim *s = user;
    if (sp == SIM_SP_GM && s->rec_gm)
        gmr_add(&s->cores[s->cur_core], addr, len, is_write);
    if (s->nobs)
        notify(s, sp, addr, len, is_write);
}

/* Point the unit context at core c (cached: only when the core changes).
 * In perf and timing modes the cores interleave, so the core changes at
 * nearly every step: after the first full setup of a run (uctx_core is -1
 * at every cores reset) only the per-core fields are rewritten. */
static void setup_uctx(npu_sim *s, int core)
{
    sim_core *c = &s->cores[core];
    sim_unit_ctx *u = &s->uctx;
    const cfg_machine *m = &s->cfg;
    if (s->uctx_core >= 0) {
        for (int sp = SIM_SP_L1; sp < SIM_SP_COUNT; sp++) {
            u->buf[sp] = c->buf[sp];
            u->size[sp] = c->bufsize[sp];
        }
        u->vmask = &c->vmask;
        u->x = c->x;
        s->uctx_core = core;
        return;
    }
    memset(u, 0, sizeof *u);
    for (int sp = SIM_SP_L1; sp < SIM_SP_COUNT; sp++) {
        u->buf[sp] = c->buf[sp];
        u->size[sp] = c->bufsize[sp];
    }
    u->align[SIM_SP_GM] = 1;
    u->align[SIM_SP_L1] = (uint32_t)m->core.l1.align;
    u->align[SIM_SP_L0A] = (uint32_t)m->core.l0a.align;
    u->align[SIM_SP_L0B] = (uint32_t)m->core.l0b.align;
    u->align[SIM_SP_L0C] = (uint32_t)m->core.l0c.align;
    u->align[SIM_SP_UB] = (uint32_t)m->core.ub.align;
    u->align[SIM_SP_SB] = (uint32_t)m->core.sdata.align;
    u->gm = sim_gm_iface(&s->gm);
    u->vmask = &c->vmask;
    u->x = c->x;
    u->nodata = s->nodata || s->defer;   /* deferring: data comes later (sim_defer_flush) */
    u->access = unit_access;
    u->access_user = s;
    u->ub_banks = (uint32_t)m->core.ub.banks;
    u->ub_bank_bytes = (uint32_t)m->core.ub.bank_size;
    u->ub_bank_groups = (uint32_t)m->core.ub.bank_groups;
    s->uctx_core = core;
}

static const char *mnem(isa_op op)
{
    const isa_info *i = isa_info_of(op);
    return i ? i->mnemonic : "?";
}

npu_status sim_unit_run(sim_unit_ctx *u, int unit, const isa_insn *in, sim_work *w, npu_diag *ud)
{
    if (unit == 'v')
        return sim_exec_vec(u, in, w, ud);
    if (unit == 'c')
        return sim_exec_cube(u, in, w, ud);
    if (unit == 'd')
        return sim_exec_dma(u, in, w, ud);
    return npu_errf(ud, NPU_EFAULT, "%s: no unit executes this instruction", mnem(in->op));
}

/* The bounding intervals of the GM ranges the step reported (all of GM
 * when a range could not be recorded). */
static void gm_bounds(const sim_core *c, sim_gm_bounds *b)
{
    uint64_t rlo = UINT64_MAX, rhi = 0, wlo = UINT64_MAX, whi = 0;
    for (uint32_t k = 0; k < c->ngmr; k++) {
        const sim_gm_range *g = &c->gmr[k];
        uint64_t e = g->addr + g->len;
        if (g->is_write) {
            wlo = NPU_MIN(wlo, g->addr);
            whi = NPU_MAX(whi, e);
        } else {
            rlo = NPU_MIN(rlo, g->addr);
            rhi = NPU_MAX(rhi, e);
        }
    }
    b->rlo = rhi ? rlo : 0;
    b->rhi = rhi;
    b->wlo = whi ? wlo : 0;
    b->whi = whi;
    if (c->gmr_oom) {
        b->rlo = b->wlo = 0;
        b->rhi = b->whi = UINT64_MAX;
    }
}

/* Check the GM ranges a unit in nodata mode reported (timing mode, and
 * perf mode's dispatch) as its data pass would touch them: NPU_OK, or the
 * first failing range's error in gd. One lookup per direction when each
 * bounding interval lies in one allocation (the usual case). */
static npu_status gm_check(npu_sim *s, const sim_core *c, const sim_gm_bounds *b, npu_diag *gd)
{
    if (c->gmr_oom)
        return NPU_OK;   /* (ranges unknown: the data pass checks, in perf mode) */
    if ((!b->rhi || !sim_gm_check(&s->gm, &s->gm_hint, b->rlo, b->rhi - b->rlo, 0, gd)) &&
        (!b->whi || !sim_gm_check(&s->gm, &s->gm_hint, b->wlo, b->whi - b->wlo, 1, gd)))
        return NPU_OK;
    for (uint32_t k = 0; k < c->ngmr; k++) {
        const sim_gm_range *g = &c->gmr[k];
        npu_status st = sim_gm_check(&s->gm, &s->gm_hint, g->addr, g->len, g->is_write, gd);
        if (st)
            return st;
    }
    return NPU_OK;
}

/* The fault for a word that did not decode (or the sentinel past .text). */
static npu_status illegal(npu_sim *s, int core, uint64_t pc, npu_diag *d)
{
    if (pc >= s->text_end)
        return sim_fault(s, core, pc, NPU_EFAULT, d,
                         "pc ran past the end of .text [0x0, 0x%" PRIx64 ")", s->text_end);
    npu_diag tmp;
    isa_insn in;
    if (isa_decode(s->img.text[pc >> 3], &in, &tmp) == NPU_OK)
        snprintf(tmp.msg, sizeof tmp.msg, "illegal instruction 0x%016" PRIx64, s->img.text[pc >> 3]);
    return sim_fault(s, core, pc, NPU_EFAULT, d, "%s", tmp.msg);
}

static npu_status bad_target(npu_sim *s, int core, uint64_t pc, uint64_t t, npu_diag *d)
{
    return sim_fault(s, core, pc, NPU_EFAULT, d,
                     "jump target 0x%" PRIx64 " is outside .text [0x0, 0x%" PRIx64 ")%s", t,
                     s->text_end, (t & 7) ? " and not 8-aligned" : "");
}

static npu_status sb_fault(npu_sim *s, int core, uint64_t pc, uint64_t addr, unsigned size,
                           int is_write, npu_diag *d)
{
    const sim_core *c = &s->cores[core];
    uint64_t sbs = c->bufsize[SIM_SP_SB];
    if (sbs < size || addr > sbs - size)
        return sim_fault(s, core, pc, NPU_EFAULT, d,
                         "scalar buffer %s [0x%" PRIx64 ", +%u) outside the scalar buffer (%" PRIu64
                         " bytes)",
                         is_write ? "write" : "read", addr, size, sbs);
    return sim_fault(s, core, pc, NPU_EFAULT, d,
                     "misaligned scalar buffer %s of %u bytes at 0x%" PRIx64
                     " (needs %u-byte alignment)",
                     is_write ? "write" : "read", size, addr, size);
}

/* Little-endian loads/stores on the host buffer (memcpy: no aliasing UB;
 * the compiler turns each into one move). */
static inline uint64_t ld_le(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    switch (size) {
    case 1: v = p[0]; break;
    case 2: { uint16_t t; memcpy(&t, p, 2); v = t; } break;
    case 4: { uint32_t t; memcpy(&t, p, 4); v = t; } break;
    default: memcpy(&v, p, 8); break;
    }
    return v;
}

static inline void st_le(uint8_t *p, uint64_t v, unsigned size)
{
    switch (size) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: { uint16_t t = (uint16_t)v; memcpy(p, &t, 2); } break;
    case 4: { uint32_t t = (uint32_t)v; memcpy(p, &t, 4); } break;
    default: memcpy(p, &v, 8); break;
    }
}

static const char *pipe_nm(int p) { return isa_pipe_name(p); }

/* ---- the loop ----------------------------------------------------------- */

#define RS1 x[in->rs1]
#define RS2 x[in->rs2]
#define RD x[in->rd]
#define SRS1 ((int64_t)x[in->rs1])
#define SRS2 ((int64_t)x[in->rs2])
#define IMM ((uint64_t)in->imm)

/* Taken control transfer to t: checked against .text. */
#define JUMP_TO(t)                                                   \
    do {                                                             \
        uint64_t t_ = (t);                                           \
        if (t_ >= text_end || (t_ & 7)) {                         \
            st = bad_target(s, core, pc, t_, d);                     \
            goto fault;                                              \
        }                                                            \
        next = t_;                                                   \
    } while (0)

#define BRANCH(cond)                                                 \
    do {                                                             \
        int tk_ = (cond);                                            \
        if (single) { op->is_branch = 1; op->taken = tk_; }          \
        if (tk_) {                                                   \
            JUMP_TO(pc + IMM);                                       \
            if (single) op->target = next;                           \
        }                                                            \
    } while (0)

/* Scalar buffer load/store of `sz` bytes (sz a power of two). */
#define SB_ADDR(sz)                                                  \
    uint64_t a_ = RS1 + IMM;                                         \
    if (a_ > sbsize - (sz) || (a_ & ((sz) - 1)) || sbsize < (sz)) {  \
        st = sb_fault(s, core, pc, a_, (sz), is_st_, d);             \
        goto fault;                                                  \
    }                                                                \
    if (obs) { s->cur_pc = pc; s->cur_pipe = ISA_PIPE_S;             \
               notify(s, SIM_SP_SB, a_, (sz), is_st_); }
#define SB_LOAD(sz, conv)                                            \
    { const int is_st_ = 0; SB_ADDR(sz)                              \
      RD = conv(ld_le(sb + a_, (sz))); }
#define SB_STORE(sz)                                                 \
    { const int is_st_ = 1; SB_ADDR(sz)                              \
      st_le(sb + a_, RS2, (sz)); }

#define CONV_S8(v) ((uint64_t)(int64_t)(int8_t)(v))
#define CONV_S16(v) ((uint64_t)(int64_t)(int16_t)(v))
#define CONV_S32(v) ((uint64_t)(int64_t)(int32_t)(v))
#define CONV_U(v) (v)

/* Retire the instruction and dispatch the next (budget 1 = one step). */
#define NEXT                                                         \
    do {                                                             \
        x[0] = 0;                                                    \
        n++;                                                         \
        pc = next;                                                   \
        if (__builtin_expect(n >= budget, 0))                        \
            goto done;                                               \
        in = &text[pc >> 3].in;                                      \
        next = pc + 8;                                               \
        goto *tbl[in->op];                                           \
    } while (0)

/* GCC merges the identical dispatch tails of the handlers back into one
 * jump (cross-jumping, GCSE), undoing the threading; keep them apart.
 * (clang keeps them apart by itself and has no such attribute.) */
#if defined(__GNUC__) && !defined(__clang__)
#define EXEC_KEEP_TAILS __attribute__((optimize("no-crossjumping", "no-gcse")))
#else
#define EXEC_KEEP_TAILS
#endif

/* op NULL: the fast path (no description); op set: budget is 1. */
static __attribute__((noinline)) EXEC_KEEP_TAILS npu_status
exec_loop(npu_sim *s, const int core, uint64_t budget, sim_op *op, npu_diag *d)
{
    const int single = op != NULL;
    sim_core *c = &s->cores[core];
    uint64_t *x = c->x;
    const sim_pinsn *text = s->text;
    uint8_t *sb = c->buf[SIM_SP_SB];
    const uint64_t sbsize = c->bufsize[SIM_SP_SB];
    const uint64_t text_end = s->text_end;   /* a local: x[] stores may alias s */
    const int obs = s->nobs;
    uint64_t pc = c->pc;
    uint64_t n = 0, acc = 0;   /* retired here; of which given to the PMU */
    npu_status st = NPU_OK;
    const isa_insn *in = NULL;
    uint64_t next = pc;

    if (s->uctx_core != core)
        setup_uctx(s, core);
    s->cur_core = core;
    if (single) {
        /* field by field: a memset of the whole 200-byte op was half the
         * cost of a step (rep stos) */
        static const sim_work nowork;
        op->work = nowork;
        op->is_set_flag = op->is_wait_flag = op->is_barrier = op->barrier_pipe = 0;
        op->is_sync_all = op->is_branch = op->taken = op->is_call = op->is_ret = 0;
        op->ended = op->faulted = 0;
        op->target = 0;
        c->ngmr = 0;
    }

    /* Threaded dispatch: every handler ends in its own copy of the
     * dispatch jump (NEXT), which the host's branch predictor learns per
     * instruction pair; one shared switch jump mispredicts (measured 2x).
     * A handler added below needs its row here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#pragma GCC diagnostic ignored "-Wpedantic"
    static const void *const tbl[ISA_OP_COUNT] = {
        [0 ... ISA_OP_COUNT - 1] = &&L_default,
        [ISA_OP_NOP] = &&L_NOP,
        [ISA_OP_HALT] = &&L_HALT,
        [ISA_OP_TRAP] = &&L_TRAP,
        [ISA_OP_ADD] = &&L_ADD,
        [ISA_OP_SUB] = &&L_SUB,
        [ISA_OP_MUL] = &&L_MUL,
        [ISA_OP_MULH] = &&L_MULH,
        [ISA_OP_DIV] = &&L_DIV,
        [ISA_OP_DIVU] = &&L_DIVU,
        [ISA_OP_REM] = &&L_REM,
        [ISA_OP_REMU] = &&L_REMU,
        [ISA_OP_AND] = &&L_AND,
        [ISA_OP_OR] = &&L_OR,
        [ISA_OP_XOR] = &&L_XOR,
        [ISA_OP_SLL] = &&L_SLL,
        [ISA_OP_SRL] = &&L_SRL,
        [ISA_OP_SRA] = &&L_SRA,
        [ISA_OP_SLT] = &&L_SLT,
        [ISA_OP_SLTU] = &&L_SLTU,
        [ISA_OP_MIN] = &&L_MIN,
        [ISA_OP_MAX] = &&L_MAX,
        [ISA_OP_MINU] = &&L_MINU,
        [ISA_OP_MAXU] = &&L_MAXU,
        [ISA_OP_ADDI] = &&L_ADDI,
        [ISA_OP_MULI] = &&L_MULI,
        [ISA_OP_ANDI] = &&L_ANDI,
        [ISA_OP_ORI] = &&L_ORI,
        [ISA_OP_XORI] = &&L_XORI,
        [ISA_OP_SLLI] = &&L_SLLI,
        [ISA_OP_SRLI] = &&L_SRLI,
        [ISA_OP_SRAI] = &&L_SRAI,
        [ISA_OP_SLTI] = &&L_SLTI,
        [ISA_OP_SLTIU] = &&L_SLTIU,
        [ISA_OP_LI] = &&L_LI,
        [ISA_OP_LIH] = &&L_LIH,
        [ISA_OP_LB] = &&L_LB,
        [ISA_OP_LBU] = &&L_LBU,
        [ISA_OP_LH] = &&L_LH,
        [ISA_OP_LHU] = &&L_LHU,
        [ISA_OP_LW] = &&L_LW,
        [ISA_OP_LWU] = &&L_LWU,
        [ISA_OP_LD] = &&L_LD,
        [ISA_OP_SB] = &&L_SB,
        [ISA_OP_SH] = &&L_SH,
        [ISA_OP_SW] = &&L_SW,
        [ISA_OP_SD] = &&L_SD,
        [ISA_OP_LDG] = &&L_LDG,
        [ISA_OP_LWG] = &&L_LWG,
        [ISA_OP_SDG] = &&L_SDG,
        [ISA_OP_SWG] = &&L_SWG,
        [ISA_OP_BEQ] = &&L_BEQ,
        [ISA_OP_BNE] = &&L_BNE,
        [ISA_OP_BLT] = &&L_BLT,
        [ISA_OP_BGE] = &&L_BGE,
        [ISA_OP_BLTU] = &&L_BLTU,
        [ISA_OP_BGEU] = &&L_BGEU,
        [ISA_OP_JAL] = &&L_JAL,
        [ISA_OP_JALR] = &&L_JALR,
        [ISA_OP_MFSR] = &&L_MFSR,
        [ISA_OP_MTSR] = &&L_MTSR,
        [ISA_OP_SETF] = &&L_SETF,
        [ISA_OP_WAITF] = &&L_WAITF,
        [ISA_OP_PBAR] = &&L_PBAR,
        [ISA_OP_SYNCALL] = &&L_SYNCALL,
        [ISA_OP_VMASK] = &&L_VMASK,
        [ISA_OP_VMASKC] = &&L_VMASKC,
        [ISA_OP_INVALID] = &&L_INVALID,
    };
#pragma GCC diagnostic pop

    in = &text[pc >> 3].in;
    next = pc + 8;
    goto *tbl[in->op];

        /* ---- system ---- */
        L_NOP: NEXT;
        L_HALT:
            /* an ended core's pc stays at its halt (reports name it) */
            c->state = SIM_CORE_ENDED;
            if (single) op->ended = 1;
            next = pc;
            goto retire_stop;
        L_TRAP:
            st = sim_fault(s, core, pc, NPU_EFAULT, d, "trap %" PRId64, in->imm);
            goto fault;
        /* ---- ALU register-register ---- */
        L_ADD: RD = RS1 + RS2; NEXT;
        L_SUB: RD = RS1 - RS2; NEXT;
        L_MUL: RD = RS1 * RS2; NEXT;
        L_MULH:
            RD = (uint64_t)(((__int128)SRS1 * (__int128)SRS2) >> 64);
            NEXT;
        L_DIV: {
            int64_t a = SRS1, b = SRS2;
            RD = b == 0 ? ~0ull : (a == INT64_MIN && b == -1) ? (uint64_t)INT64_MIN
                                                              : (uint64_t)(a / b);
            NEXT;
        }
        L_DIVU: RD = RS2 == 0 ? ~0ull : RS1 / RS2; NEXT;
        L_REM: {
            int64_t a = SRS1, b = SRS2;
            RD = b == 0 ? (uint64_t)a : (b == -1) ? 0 : (uint64_t)(a % b);
            NEXT;
        }
        L_REMU: RD = RS2 == 0 ? RS1 : RS1 % RS2; NEXT;
        L_AND: RD = RS1 & RS2; NEXT;
        L_OR: RD = RS1 | RS2; NEXT;
        L_XOR: RD = RS1 ^ RS2; NEXT;
        L_SLL: RD = RS1 << (RS2 & 63); NEXT;
        L_SRL: RD = RS1 >> (RS2 & 63); NEXT;
        L_SRA: RD = (uint64_t)(SRS1 >> (RS2 & 63)); NEXT;
        L_SLT: RD = SRS1 < SRS2; NEXT;
        L_SLTU: RD = RS1 < RS2; NEXT;
        L_MIN: RD = SRS1 < SRS2 ? RS1 : RS2; NEXT;
        L_MAX: RD = SRS1 > SRS2 ? RS1 : RS2; NEXT;
        L_MINU: RD = RS1 < RS2 ? RS1 : RS2; NEXT;
        L_MAXU: RD = RS1 > RS2 ? RS1 : RS2; NEXT;
        /* ---- ALU register-immediate ---- */
        L_ADDI: RD = RS1 + IMM; NEXT;
        L_MULI: RD = RS1 * IMM; NEXT;
        L_ANDI: RD = RS1 & IMM; NEXT;
        L_ORI: RD = RS1 | IMM; NEXT;
        L_XORI: RD = RS1 ^ IMM; NEXT;
        L_SLLI: RD = RS1 << (IMM & 63); NEXT;
        L_SRLI: RD = RS1 >> (IMM & 63); NEXT;
        L_SRAI: RD = (uint64_t)(SRS1 >> (IMM & 63)); NEXT;
        L_SLTI: RD = SRS1 < in->imm; NEXT;
        L_SLTIU: RD = RS1 < IMM; NEXT;
        L_LI: RD = IMM; NEXT;
        L_LIH: RD = (RD & 0x0000ffffffffffffull) | ((IMM & 0xffff) << 48); NEXT;
        /* ---- scalar buffer ---- */
        L_LB: SB_LOAD(1, CONV_S8) NEXT;
        L_LBU: SB_LOAD(1, CONV_U) NEXT;
        L_LH: SB_LOAD(2, CONV_S16) NEXT;
        L_LHU: SB_LOAD(2, CONV_U) NEXT;
        L_LW: SB_LOAD(4, CONV_S32) NEXT;
        L_LWU: SB_LOAD(4, CONV_U) NEXT;
        L_LD: SB_LOAD(8, CONV_U) NEXT;
        L_SB: SB_STORE(1) NEXT;
        L_SH: SB_STORE(2) NEXT;
        L_SW: SB_STORE(4) NEXT;
        L_SD: SB_STORE(8) NEXT;
        /* ---- GM scalar access ---- */
        L_LDG: L_LWG: L_SDG: L_SWG: {
            const unsigned sz = (in->op == ISA_OP_LDG || in->op == ISA_OP_SDG) ? 8 : 4;
            const int is_wr = in->op == ISA_OP_SDG || in->op == ISA_OP_SWG;
            uint64_t a = RS1 + IMM;
            if (a & (sz - 1)) {
                st = sim_fault(s, core, pc, NPU_EFAULT, d,
                               "misaligned GM %s of %u bytes at 0x%" PRIx64 " (needs %u-byte alignment)",
                               is_wr ? "write" : "read", sz, a, sz);
                goto fault;
            }
            uint8_t tmp[8];
            npu_diag gd;
            if (sim_defer_pending(s) && (st = sim_defer_flush_all(s, d)))
                goto fault;
            if (is_wr) {
                st_le(tmp, RS2, sz);
                st = sim_gm_write(&s->gm, a, tmp, sz, &gd);
            } else {
                if (s->nodata) {
                    const sim_gm_alloc *al = sim_gm_find(&s->gm, a, sz);
                    if (al && al->kind == SIM_GM_TENSOR) {
                        st = sim_fault(s, core, pc, NPU_EUNSUPP, d,
                                       "timing mode cannot run this kernel: %s at pc 0x%" PRIx64
                                       " reads tensor data of %s (control flow depends on data); "
                                       "use --mode perf",
                                       mnem(in->op), pc, al->name);
                        goto fault;
                    }
                }
                st = sim_gm_read(&s->gm, a, tmp, sz, &gd);
            }
            if (st) {
                st = sim_fault(s, core, pc, st, d, "%s", gd.msg);
                goto fault;
            }
            if (!is_wr)
                RD = sz == 8 ? ld_le(tmp, 8) : CONV_S32(ld_le(tmp, 4));
            if (single)
                gmr_add(c, a, sz, is_wr);
            if (obs) {
                s->cur_pc = pc;
                s->cur_pipe = ISA_PIPE_S;
                notify(s, SIM_SP_GM, a, sz, is_wr);
            }
            NEXT;
        }
        /* ---- control flow ---- */
        L_BEQ: BRANCH(RS1 == RS2); NEXT;
        L_BNE: BRANCH(RS1 != RS2); NEXT;
        L_BLT: BRANCH(SRS1 < SRS2); NEXT;
        L_BGE: BRANCH(SRS1 >= SRS2); NEXT;
        L_BLTU: BRANCH(RS1 < RS2); NEXT;
        L_BGEU: BRANCH(RS1 >= RS2); NEXT;
        L_JAL:
            JUMP_TO(pc + IMM);
            RD = pc + 8;
            if (single) {
                op->target = next;
                op->is_call = in->rd == 1;
            }
            NEXT;
        L_JALR: {
            uint64_t t = (RS1 + IMM) & ~7ull;
            if (single) {
                op->target = t;
                op->is_call = in->rd == 1;
                op->is_ret = in->rd == 0 && in->rs1 == 1 && in->imm == 0;
            }
            if (t == text_end) {
                /* the initial ra: the entry function returned, like halt */
                RD = pc + 8;
                c->state = SIM_CORE_ENDED;
                if (single) op->ended = 1;
                next = t;
                x[0] = 0;
                goto retire_stop_keep_next;
            }
            JUMP_TO(t);
            RD = pc + 8;
            NEXT;
        }
        /* ---- special registers ---- */
        L_MFSR: {
            uint64_t v = 0;
            switch (in->sreg) {
            case ISA_SR_COREID: v = (uint64_t)c->id; break;
            case ISA_SR_CORENUM: v = (uint64_t)s->ncores; break;
            case ISA_SR_CYCLE: v = c->cycle; break;
            case ISA_SR_ARGS: v = s->param_addr; break;
            case ISA_SR_NARGS: v = s->nargs; break;
            case ISA_SR_PMUCTL: v = c->pmu_ctl; break;
            case ISA_SR_PMUSEL0: case ISA_SR_PMUSEL1: case ISA_SR_PMUSEL2: case ISA_SR_PMUSEL3:
                v = c->pmu_sel[in->sreg - ISA_SR_PMUSEL0];
                break;
            case ISA_SR_PMUCNT0: case ISA_SR_PMUCNT1: case ISA_SR_PMUCNT2: case ISA_SR_PMUCNT3: {
                int i = in->sreg - ISA_SR_PMUCNT0;
                pmu_account(c, n - acc);
                acc = n;
                v = c->pmu_cnt[i];
                if (c->pmu_sel[i] != 0 && s->pmu_read)
                    v = s->pmu_read(s->pmu_user, s, core, i, c->pmu_sel[i]);
                break;
            }
            default:
                st = sim_fault(s, core, pc, NPU_EFAULT, d, "no special register 0x%x", in->sreg);
                goto fault;
            }
            RD = v;
            NEXT;
        }
        L_MTSR: {
            pmu_account(c, n - acc);
            acc = n;
            uint64_t v = RS1;
            switch (in->sreg) {
            case ISA_SR_PMUCTL:
                if (v & 2)
                    memset(c->pmu_cnt, 0, sizeof c->pmu_cnt);
                c->pmu_ctl = v & 1;
                break;
            case ISA_SR_PMUSEL0: case ISA_SR_PMUSEL1: case ISA_SR_PMUSEL2: case ISA_SR_PMUSEL3:
                c->pmu_sel[in->sreg - ISA_SR_PMUSEL0] = v;
                break;
            default:
                st = sim_fault(s, core, pc, NPU_EFAULT, d, "special register %s is read-only",
                               isa_sreg_name(in->sreg) ? isa_sreg_name(in->sreg) : "?");
                goto fault;
            }
            NEXT;
        }
        /* ---- synchronisation ---- */
        L_SETF: L_WAITF: {
            unsigned sp = in->spipe, dp = in->dpipe, id = in->fid;
            if (sp >= ISA_NPIPES || dp >= ISA_NPIPES || sp == dp || id >= SIM_NFLAG_IDS) {
                st = sim_fault(s, core, pc, NPU_EFAULT, d,
                               "bad flag (%s, %s, %u): pipes must be two different real pipes, id 0..%d",
                               pipe_nm((int)sp), pipe_nm((int)dp), id, SIM_NFLAG_IDS - 1);
                goto fault;
            }
            sim_flag *f = &c->flag[sp][dp][id];
            if (in->op == ISA_OP_SETF) {
                if (f->pending > 0)
                    sim_add_finding(s, NPU_FIND_FLAG_SET_TWICE, core, pc,
                                    "set_flag(%s, %s, %u) at pc 0x%" PRIx64
                                    " sets a flag already set (at pc 0x%" PRIx64 ") and not yet waited for",
                                    pipe_nm((int)sp), pipe_nm((int)dp), id, pc, f->last_set_pc);
                f->pending++;
                f->nset++;
                f->last_set_pc = pc;
                if (single) op->is_set_flag = 1;
            } else {
                if (dp == ISA_PIPE_S && f->pending <= 0) {
                    st = sim_fault(s, core, pc, NPU_EDEADLOCK, d,
                                   "deadlock: wait_flag(%s, S, %u) blocks the scalar unit but no "
                                   "earlier set_flag(%s, S, %u) is pending, and no later one can be issued",
                                   pipe_nm((int)sp), id, pipe_nm((int)sp), id);
                    goto fault;
                }
                f->pending--;
                f->nwait++;
                f->last_wait_pc = pc;
                if (single) op->is_wait_flag = 1;
            }
            NEXT;
        }
        L_PBAR:
            if (in->pipe > ISA_PIPE_ALL) {
                st = sim_fault(s, core, pc, NPU_EFAULT, d, "pipe_barrier: no pipe %d", in->pipe);
                goto fault;
            }
            if (single) {
                op->is_barrier = 1;
                op->barrier_pipe = in->pipe;
            }
            NEXT;
        L_SYNCALL:
            c->state = SIM_CORE_AT_BARRIER;
            if (single) op->is_sync_all = 1;
            goto retire_stop;
        /* ---- vector mask ---- */
        L_VMASK:
            c->vmask.bits[0] = RS1;
            c->vmask.bits[1] = RS2;
            c->vmask.counter_mode = 0;
            NEXT;
        L_VMASKC:
            c->vmask.counter_mode = 1;
            c->vmask.count = RS1;
            NEXT;
        L_INVALID:
            st = illegal(s, core, pc, d);
            goto fault;
        /* ---- everything else goes to its unit ---- */
        L_default: {
            sim_work w;
            npu_diag ud;
            memset(&w, 0, sizeof w);
            s->cur_pc = pc;
            s->cur_pipe = isa_insn_pipe(in);
            s->rec_gm = single;
            int u = sim_unit_of(in->op);
            /* (deferring, uctx is in nodata mode: check and account now,
             * compute later) */
            st = sim_unit_run(&s->uctx, u, in, &w, &ud);
            if (st) {
                st = sim_fault(s, core, pc, st, d, "%s", ud.msg);
                goto fault;
            }
            if (s->uctx.nodata && single) {
                /* the GM ranges against the allocations, here (timing
                 * mode computes nothing; perf mode computes later) */
                sim_gm_bounds gb;
                gm_bounds(c, &gb);
                int bad = gm_check(s, c, &gb, &ud) != NPU_OK;
                if (s->defer) {
                    /* a bad range: compute what was dispatched, this move
                     * included, now; it faults there with its data pass's
                     * own report, leaving GM as computing at dispatch */
                    if ((st = sim_defer_push(s, core, in, pc, u, &gb, d)) ||
                        (bad && (st = sim_defer_flush_all(s, d))))
                        goto fault;
                } else if (bad) {
                    st = sim_fault(s, core, pc, NPU_EFAULT, d, "%s", ud.msg);
                    goto fault;
                }
            }
            if (single)
                op->work = w;
            NEXT;
        }
        

retire_stop:
    x[0] = 0;
retire_stop_keep_next:
    n++;
    pc = next;
    goto done;

fault:
    if (single)
        op->faulted = 1;
    next = pc;   /* a faulting instruction does not retire; pc stays at it */
done:
    c->pc = pc;
    c->insns += n;
    pmu_account(c, n - acc);
    if (single) {
        op->next_pc = c->pc;
        op->in = *in;
        const size_t ix = (size_t)(in - &text[0].in);
        op->pipe = (isa_pipe)s->tpipe[ix];
        op->cost = (isa_cost)s->tcost[ix];
        op->gm = c->gmr;
        op->ngm = c->ngmr;
    }
    return st;
}

npu_status sim_core_step(npu_sim *s, int core, sim_op *op, npu_diag *d)
{
    if (core < 0 || core >= s->ncores || !s->cores)
        return npu_errf(d, NPU_EINVAL, "sim_core_step: no core %d", core);
    sim_core *c = &s->cores[core];
    if (c->state != SIM_CORE_RUNNING)
        return npu_errf(d, NPU_EINVAL, "sim_core_step: core %d is not running (state %d)", core,
                        (int)c->state);
    sim_op tmp;
    if (!op)
        op = &tmp;
    uint64_t pc0 = c->pc;
    npu_status st = exec_loop(s, core, 1, op, d);
    op->pc = pc0;
    for (int i = 0; i < s->nobs; i++)
        if (s->obs[i].on_op)
            s->obs[i].on_op(s->obs[i].user, s, core, op);
    return st;
}

npu_status sim_core_run(npu_sim *s, int core, uint64_t budget, npu_diag *d)
{
    if (core < 0 || core >= s->ncores || !s->cores)
        return npu_errf(d, NPU_EINVAL, "sim_core_run: no core %d", core);
    if (s->cores[core].state != SIM_CORE_RUNNING || budget == 0)
        return NPU_OK;
    return exec_loop(s, core, budget, NULL, d);
}
