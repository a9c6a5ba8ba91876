/* cmd_stat.c — `npusim stat`: run a kernel in perf mode and print its
 * counters like `perf stat` (counters/ctr.h formats; this file collects).
 *
 * It ties the simulator to the counters part, which knows nothing of the
 * simulator: the collector below fills a ctr_values from three sources,
 * each event's row in counters/events.def naming which (its src column):
 *   - the timing engine's statistics (sim_timing_stats): cycles, busy,
 *     stalls, per-pipe instructions, MACs, vector elements, path and GM bytes;
 *   - the timing observer's dispatch calls (instruction classes, branches,
 *     scalar loads/stores, UB conflicts), and its exec/stall spans, which
 *     also feed the interval windows (-I) and the PMU;
 *   - memmodel's L2 and HBM statistics at the end (on_mem_stats).
 * The PMU: the executor asks s->pmu_read for pmucnt0..3 with a non-zero
 * select; the collector answers with the event's live value for the core
 * at its current cycle, minus the base taken when pmuctl zeroed or enabled
 * the counter (it watches mtsr pmuctl / pmusel at dispatch). docs/stat.md. */
#include "sim/sim_int.h" /* first: frontend/config.h wants the dtype enum before isa.h */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters/ctr.h"
#include "frontend/launch.h"
#include "frontend/npy.h"
#include "isa/isa_fp.h"
#include "memmodel/mem.h"
#include "sim/cost.h"
#include "sim/timing.h"
#include "sim/cmd_common.h"



static void usage(FILE *f)
{
    fprintf(f,
        "usage: npusim stat [-e EVENT,...|-M GROUP] [--per-core] [-A] [-x SEP] [--json]\n"
        "                   [-I CYCLES] [--check] RUN-ARGUMENTS...\n"
        "       npusim stat --list\n"
        "\n"
        "Runs the kernel in perf mode (the arguments of npusim run: KERNEL.elf or\n"
        "LAUNCH.json, --arg, --out, --cores, --config, --set, ...) and prints its\n"
        "counters the way perf stat does. Outputs naming a file are written (a kernel\n"
        "can store its own PMU counters); --expect is not checked.\n"
        "\n"
        "options:\n"
        "  -e LIST        events by name or glob, comma-separated (pipe.*.busy_cycles)\n"
        "  -M GROUP       an event group (see --list); default: the group 'default'\n"
        "  --per-core     core and pipe events per core (L2/HBM summed)\n"
        "  -A             no aggregation: every core, L2 slice and HBM channel\n"
        "  -x SEP         CSV with separator SEP: instance,value,kind,event,metric_value,\n"
        "                 metric_unit,metric_name (docs/stat.md)\n"
        "  --json         JSON (events in table order)\n"
        "  -I CYCLES      print the deltas of the events every CYCLES cycles (cores, pipes,\n"
        "                 L2 slices and HBM channels)\n"
        "  --check        also check the counters' consistency (exit 1 if violated)\n"
        "  --list         list events, groups and derived metrics\n"
        "  -h, --help     this help\n"
        "\n"
        "environment: " SIM_CMD_PROGRESS_HELP
        "\n"
        "exit status: 0 ok, 1 --check found an inconsistency, 2 bad input or a kernel fault\n");
}

/* ---- the collector ------------------------------------------------------- */
/* What each event row means to the collector, from its src, a1, a2 columns. */
typedef enum col_fam {
    F_INSNS, F_CYCLES, F_CHIP_CYCLES, F_BUSY, F_PIPE_INSNS, F_IDLE, F_STALL, F_CLASS, F_MACS,
    F_VELEMS, F_PATH, F_GM_RD, F_GM_WR, F_GM_REQ, F_UB_BANK, F_UB_BG, F_BR, F_BR_TAKEN, F_SLOAD,
    F_SSTORE, F_FLAG_SET, F_FLAG_WAIT, F_L2, F_HBM
} col_fam;

/* Instruction classes (the CLASS rows' a1), from the cost class. */
typedef enum col_class { CL_SCALAR, CL_SMEM, CL_CTRL, CL_SREG, CL_SYNC, CL_DMA, CL_CUBE, CL_VEC } col_class;

/* L2 / HBM fields (the L2 and HBM rows' a1). */
typedef enum col_memf {
    MF_reads, MF_writes, MF_hits, MF_misses, MF_mshr_merges, MF_evictions, MF_writebacks, MF_bytes,
    MF_stall_cycles, MF_act, MF_pre, MF_rd, MF_wr, MF_ref, MF_row_hits, MF_row_misses,
    MF_row_conflicts, MF_bytes_read, MF_bytes_written, MF_lat
} col_memf;

typedef struct col_desc { int8_t fam, pipe, cause, arg; } col_desc;

#define D_INSNS(a1, a2) {F_INSNS, -1, -1, -1}
#define D_CYCLES(a1, a2) {F_CYCLES, -1, -1, -1}
#define D_CHIP_CYCLES(a1, a2) {F_CHIP_CYCLES, -1, -1, -1}
#define D_BUSY(a1, a2) {F_BUSY, ISA_PIPE_##a1, -1, -1}
#define D_PIPE_INSNS(a1, a2) {F_PIPE_INSNS, ISA_PIPE_##a1, -1, -1}
#define D_IDLE(a1, a2) {F_IDLE, ISA_PIPE_##a1, -1, -1}
#define D_STALL(a1, a2) {F_STALL, ISA_PIPE_##a1, SIM_STALL_##a2, -1}
#define D_CLASS(a1, a2) {F_CLASS, -1, -1, CL_##a1}
#define D_MACS(a1, a2) {F_MACS, -1, -1, ISA_DT_##a1}
#define D_VELEMS(a1, a2) {F_VELEMS, -1, -1, ISA_DT_##a1}
#define D_PATH(a1, a2) {F_PATH, -1, -1, CFG_PATH_##a1}
#define D_GM_RD(a1, a2) {F_GM_RD, -1, -1, -1}
#define D_GM_WR(a1, a2) {F_GM_WR, -1, -1, -1}
#define D_GM_REQ(a1, a2) {F_GM_REQ, -1, -1, -1}
#define D_UB_BANK(a1, a2) {F_UB_BANK, -1, -1, -1}
#define D_UB_BG(a1, a2) {F_UB_BG, -1, -1, -1}
#define D_BR(a1, a2) {F_BR, -1, -1, -1}
#define D_BR_TAKEN(a1, a2) {F_BR_TAKEN, -1, -1, -1}
#define D_SLOAD(a1, a2) {F_SLOAD, -1, -1, -1}
#define D_SSTORE(a1, a2) {F_SSTORE, -1, -1, -1}
#define D_FLAG_SET(a1, a2) {F_FLAG_SET, -1, -1, -1}
#define D_FLAG_WAIT(a1, a2) {F_FLAG_WAIT, -1, -1, -1}
#define D_L2(a1, a2) {F_L2, -1, -1, MF_##a1}
#define D_HBM(a1, a2) {F_HBM, -1, -1, MF_##a1}
static const col_desc evd[CTR_EV__COUNT] = {
#define EV(id, name, unit, kind, src, a1, a2, desc) [CTR_EV_##id] = D_##src(a1, a2),
#include "counters/events.def"
#undef EV
};

/* Where the final value of an event comes from. */
static int from_engine(int fam)
{
    switch (fam) {
    case F_CYCLES: case F_CHIP_CYCLES: case F_BUSY: case F_PIPE_INSNS: case F_STALL: case F_MACS:
    case F_VELEMS: case F_PATH: case F_GM_RD: case F_GM_WR: case F_GM_REQ: case F_FLAG_SET:
    case F_FLAG_WAIT:
        return 1;
    default:
        return 0;
    }
}

static uint64_t engine_value(const sim_timing_stats *st, int c, int ev)
{
    const sim_timing_core_stats *cs = &st->core[c];
    const col_desc *e = &evd[ev];
    switch (e->fam) {
    case F_CYCLES: return cs->cycles;
    case F_CHIP_CYCLES: return st->cycles;
    case F_BUSY: return cs->busy[e->pipe];
    case F_PIPE_INSNS: return cs->insns[e->pipe];
    case F_STALL: return cs->stall[e->pipe][e->cause];
    case F_MACS: return cs->macs[e->arg];
    case F_VELEMS: return cs->vec_elems[e->arg];
    case F_PATH: return cs->path_bytes[e->arg];
    case F_GM_RD: return cs->gm_rd_bytes;
    case F_GM_WR: return cs->gm_wr_bytes;
    case F_GM_REQ: return cs->gm_requests;
    case F_FLAG_SET: return cs->flag_sets;
    case F_FLAG_WAIT: return cs->flag_waits;
    default: return 0;
    }
}

static int span_ev(int fam, int pipe, int cause)
{
    for (int e = 0; e < CTR_EV__COUNT; e++)
        if (evd[e].fam == fam && evd[e].pipe == pipe && (fam != F_STALL || evd[e].cause == cause))
            return e;
    return -1;
}

/* Stall causes that lie outside busy time (the engine stretches an
 * executing instruction by bank and, off S, memory stalls). */
static int stall_outside(int pipe, int cause)
{
    return cause != SIM_STALL_BANK && (cause != SIM_STALL_MEMORY || pipe == ISA_PIPE_S);
}

static col_class class_of(isa_cost c)
{
    switch (c) {
    case ISA_COST_SALU: case ISA_COST_SMUL: case ISA_COST_SDIV: case ISA_COST_SYS: return CL_SCALAR;
    case ISA_COST_SLD: case ISA_COST_SST: case ISA_COST_SLDG: case ISA_COST_SSTG: return CL_SMEM;
    case ISA_COST_BR: case ISA_COST_JMP: return CL_CTRL;
    case ISA_COST_SREG: return CL_SREG;
    case ISA_COST_SYNC: return CL_SYNC;
    case ISA_COST_DMA: return CL_DMA;
    case ISA_COST_CUBE: return CL_CUBE;
    default: return CL_VEC;
    }
}

/* The collector's state. One per `npusim stat` run (no globals). */
typedef struct span { int ev; uint64_t start, end; } span;

typedef struct pmu_state {
    uint64_t base[4], acc[4], sel[4];
    int enabled;
} pmu_state;

typedef struct col_core {
    uint64_t live[CTR_EV__COUNT];   /* observer counts and folded spans so far */
    span *sp;                       /* spans not yet folded (they end after the core's now) */
    size_t nsp, capsp;
    pmu_state pmu;
} col_core;

typedef struct collector {
    npu_sim *s;
    int ncores;
    col_core *core;
    int class_ev[8];                /* event of each col_class */
    int busy_ev[ISA_NPIPES];
    int stall_ev[ISA_NPIPES][SIM_STALL__COUNT];
    ctr_values cv;                  /* made at on_mem_stats (L2/HBM sized) or after the run */
    int cv_ready;
    ctr_intervals iv;
    int interval;
    size_t max_bins;
    /* interval mode, L2 and HBM: each slice's and channel's counts at the
     * last memory sample, [slot (iv.mslot)][instance] (NULL before the
     * first), and the memory system's clock at the end */
    uint64_t *mprev;
    uint64_t mem_now;
    npu_status err;
    npu_diag ediag;
} collector;

static void fail(collector *k, npu_status st)
{
    if (!k->err)
        k->err = st;
}

static void count(collector *k, int c, int ev, uint64_t cycle, uint64_t n)
{
    if (ev < 0 || !n)
        return;
    k->core[c].live[ev] += n;
    if (k->interval) {
        npu_status st = ctr_intervals_grow(&k->iv, (size_t)(cycle / k->iv.width), k->max_bins,
                                           &k->ediag);
        if (st)
            fail(k, st);
        else
            ctr_intervals_add(&k->iv, ev, c, cycle, n);
    }
}

/* Fold spans of core c that ended by `now` into its live totals. */
static void fold(collector *k, int c, uint64_t now)
{
    col_core *cc = &k->core[c];
    size_t j = 0;
    for (size_t i = 0; i < cc->nsp; i++) {
        if (cc->sp[i].end <= now)
            cc->live[cc->sp[i].ev] += cc->sp[i].end - cc->sp[i].start;
        else
            cc->sp[j++] = cc->sp[i];
    }
    cc->nsp = j;
}

static void add_span(collector *k, int c, int ev, uint64_t start, uint64_t end)
{
    if (ev < 0 || end <= start)
        return;
    col_core *cc = &k->core[c];
    if (cc->nsp == cc->capsp) {
        size_t nc = cc->capsp ? cc->capsp * 2 : 32;
        span *ns = npu_realloc(cc->sp, nc * sizeof *ns);
        if (!ns) {
            fail(k, npu_errf(&k->ediag, NPU_ENOMEM, "stat: out of memory"));
            return;
        }
        cc->sp = ns;
        cc->capsp = nc;
    }
    cc->sp[cc->nsp++] = (span){ev, start, end};
    if (k->interval) {
        npu_status st = ctr_intervals_grow(&k->iv, (size_t)((end - 1) / k->iv.width), k->max_bins,
                                           &k->ediag);
        if (st)
            fail(k, st);
        else
            ctr_intervals_add_span(&k->iv, ev, c, start, end);
    }
}

/* The live value of event ev for core c at cycle now (the PMU's view):
 * observer counts of everything dispatched before, engine counts the engine
 * keeps at issue (S busy, GM requests), spans clipped at now. L2 and HBM
 * events are known only at the end of the run: they read 0. */
static uint64_t live_value(collector *k, int c, int ev, uint64_t now)
{
    if (ev < 0 || ev >= CTR_EV__COUNT)
        return 0;
    col_core *cc = &k->core[c];
    const col_desc *e = &evd[ev];
    const sim_timing_core_stats *cs = k->s->tstats && k->s->tstats->core ? &k->s->tstats->core[c] : NULL;
    switch (e->fam) {
    case F_CYCLES: case F_CHIP_CYCLES: return now;
    case F_L2: case F_HBM: return 0;
    case F_GM_REQ: case F_FLAG_SET: case F_FLAG_WAIT:
        return cs ? engine_value(k->s->tstats, c, ev) : 0;
    case F_BUSY:
        if (e->pipe == ISA_PIPE_S)
            return cs ? cs->busy[ISA_PIPE_S] : 0;
        break;
    case F_IDLE: {
        uint64_t used = live_value(k, c, k->busy_ev[e->pipe], now);
        for (int ca = 0; ca < SIM_STALL__COUNT; ca++)
            if (stall_outside(e->pipe, ca))
                used += live_value(k, c, k->stall_ev[e->pipe][ca], now);
        return now > used ? now - used : 0;
    }
    default: break;
    }
    uint64_t v = cc->live[ev];
    for (size_t i = 0; i < cc->nsp; i++)
        if (cc->sp[i].ev == ev && cc->sp[i].start < now)
            v += NPU_MIN(now, cc->sp[i].end) - cc->sp[i].start;
    return v;
}

/* A pmusel value as an event (-1 past the table: such a counter reads 0). */
static int sel_ev(uint64_t sel) { return sel < CTR_EV__COUNT ? (int)sel : -1; }

static uint64_t pmu_read(void *user, npu_sim *s, int core, int idx, uint64_t sel)
{
    collector *k = user;
    (void)sel;
    pmu_state *p = &k->core[core].pmu;
    uint64_t now = s->cores[core].cycle;
    uint64_t v = p->acc[idx];
    if (p->enabled && p->sel[idx] == sel)
        v += live_value(k, core, sel_ev(sel), now) - p->base[idx];
    return v;
}

/* mtsr pmuctl / pmusel: the executor has applied it; re-base the counters. */
static void pmu_write(collector *k, int c, const sim_op *op, uint64_t now)
{
    pmu_state *p = &k->core[c].pmu;
    const sim_core *sc = &k->s->cores[c];
    if (op->in.sreg == ISA_SR_PMUCTL) {
        uint64_t v = sc->x[op->in.rs1];
        for (int i = 0; i < 4; i++) {
            uint64_t cur = live_value(k, c, sel_ev(p->sel[i]), now);
            if (p->enabled)
                p->acc[i] += cur - p->base[i];
            if (v & 2)
                p->acc[i] = 0;
            p->base[i] = cur;
        }
        p->enabled = (int)(v & 1);
    } else if (op->in.sreg >= ISA_SR_PMUSEL0 && op->in.sreg <= ISA_SR_PMUSEL3) {
        int i = op->in.sreg - ISA_SR_PMUSEL0;
        if (p->enabled)
            p->acc[i] += live_value(k, c, sel_ev(p->sel[i]), now) - p->base[i];
        p->sel[i] = sc->pmu_sel[i];
        p->base[i] = live_value(k, c, sel_ev(p->sel[i]), now);
    }
}

static void on_dispatch(void *user, int c, uint64_t seq, const sim_op *op, uint64_t t)
{
    collector *k = user;
    (void)seq;
    fold(k, c, t);
    if (op->in.op == ISA_OP_MTSR)
        pmu_write(k, c, op, t);
    const sim_work *w = &op->work;
    const isa_info *info = isa_info_of(op->in.op);
    count(k, c, CTR_EV_INSNS, t, 1);
    count(k, c, k->class_ev[class_of(op->cost)], t, 1);
    if (op->pipe < ISA_NPIPES)
        count(k, c, span_ev(F_PIPE_INSNS, op->pipe, 0), t, 1);
    int dt = op->in.dt < ISA_DT_COUNT ? op->in.dt : 0;
    if (op->in.op == ISA_OP_MMAD || op->in.op == ISA_OP_MMADSP) {
        for (int e = 0; e < CTR_EV__COUNT; e++)
            if (evd[e].fam == F_MACS && evd[e].arg == dt)
                count(k, c, e, t, w->macs);
    } else if (op->pipe == ISA_PIPE_V && sim_cost_vop(op->in.op) >= 0) {
        for (int e = 0; e < CTR_EV__COUNT; e++)
            if (evd[e].fam == F_VELEMS && evd[e].arg == dt)
                count(k, c, e, t, w->elems);
    }
    int path = sim_cost_path(op->in.op);
    for (int e = 0; path >= 0 && e < CTR_EV__COUNT; e++)
        if (evd[e].fam == F_PATH && evd[e].arg == path)
            count(k, c, e, t, w->bytes);
    uint64_t grd = w->gm_rd, gwr = w->gm_wr;
    if (op->pipe == ISA_PIPE_S)
        for (uint32_t i = 0; i < op->ngm; i++)
            *(op->gm[i].is_write ? &gwr : &grd) += op->gm[i].len;
    count(k, c, CTR_EV_GM_RD, t, grd);
    count(k, c, CTR_EV_GM_WR, t, gwr);
    count(k, c, CTR_EV_UB_BANK, t, w->bank_conflicts);
    count(k, c, CTR_EV_UB_BG, t, w->bankgroup_conflicts);
    if (op->is_branch) {
        count(k, c, CTR_EV_BR, t, 1);
        count(k, c, CTR_EV_BR_TAKEN, t, op->taken ? 1 : 0);
    }
    if (info && (info->flags & ISA_F_LOAD))
        count(k, c, CTR_EV_SLOAD, t, 1);
    if (info && (info->flags & ISA_F_STORE))
        count(k, c, CTR_EV_SSTORE, t, 1);
}

static void on_exec(void *user, int c, int pipe, uint64_t seq, uint64_t pc, const isa_insn *in,
                    uint64_t start, uint64_t end)
{
    collector *k = user;
    (void)seq, (void)pc, (void)in;
    if (pipe > 0 && pipe < ISA_NPIPES)
        add_span(k, c, k->busy_ev[pipe], start, end);
}

static void on_stall(void *user, int c, int pipe, int cause, uint64_t seq, uint64_t pc,
                     uint64_t start, uint64_t end)
{
    collector *k = user;
    (void)seq, (void)pc;
    if (pipe >= 0 && pipe < ISA_NPIPES && cause >= 0 && cause < SIM_STALL__COUNT)
        add_span(k, c, k->stall_ev[pipe][cause], start, end);
}

static void hist_sum(const mem_hist *h, ctr_hist_sum *o)
{
    o->n = h->n;
    o->sum = h->sum;
    o->min = h->n ? h->min : 0;
    o->max = h->max;
    o->p50 = h->n ? mem_hist_pct(h, 50) : 0;
    o->p90 = h->n ? mem_hist_pct(h, 90) : 0;
    o->p99 = h->n ? mem_hist_pct(h, 99) : 0;
}

static uint64_t l2_field(const mem_l2_stats *l, int f)
{
    switch (f) {
    case MF_reads: return l->reads;
    case MF_writes: return l->writes;
    case MF_hits: return l->hits;
    case MF_misses: return l->misses;
    case MF_mshr_merges: return l->mshr_merges;
    case MF_evictions: return l->evictions;
    case MF_writebacks: return l->writebacks;
    case MF_bytes: return l->bytes;
    case MF_stall_cycles: return l->stall_cycles;
    default: return 0;
    }
}

static uint64_t hbm_field(const mem_chan_stats *h, int f)
{
    switch (f) {
    case MF_act: return h->act;
    case MF_pre: return h->pre + h->prea;
    case MF_rd: return h->rd + h->rda;
    case MF_wr: return h->wr + h->wra;
    case MF_ref: return h->refab + h->refpb;
    case MF_row_hits: return h->row_hits;
    case MF_row_misses: return h->row_misses;
    case MF_row_conflicts: return h->row_conflicts;
    case MF_bytes_read: return h->bytes_read;
    case MF_bytes_written: return h->bytes_written;
    case MF_lat: return h->lat.n;
    default: return 0;
    }
}

/* Interval mode: set up the L2 / HBM windows at the first memory sample. */
static int mem_windows(collector *k, const mem_sys_stats *ms)
{
    if (k->mprev)
        return 1;
    npu_status st = ctr_intervals_mem_init(&k->iv, ms->nslice, ms->nchan, &k->ediag);
    if (!st && !(k->mprev = npu_calloc((size_t)k->iv.nmslot * (size_t)k->iv.nmem,
                                       sizeof *k->mprev)))
        st = npu_errf(&k->ediag, NPU_ENOMEM, "-I: out of memory");
    if (st)
        fail(k, st);
    return !st;
}

uint64_t sim_ctr_mem_value(const mem_sys_stats *ms, int e, int i)
{
    if (e < 0 || e >= CTR_EV__COUNT)
        return 0;
    if (evd[e].fam == F_L2)
        return l2_field(i < 0 ? &ms->l2_total : &ms->slice[i], evd[e].arg);
    if (evd[e].fam == F_HBM)
        return hbm_field(i < 0 ? &ms->hbm_total : &ms->chan[i], evd[e].arg);
    return 0;
}

/* The histogram of HIST event e (an L2 slice's or HBM channel's latency) at
 * instance i. */
static const mem_hist *mem_hist_of(const mem_sys_stats *ms, int e, int i)
{
    return evd[e].fam == F_L2 ? &ms->slice[i].lat : &ms->chan[i].lat;
}

/* Slot 0 of L2 / HBM event e at instance i (its value), slot 1 (a
 * histogram's) the sum of its samples. */
static uint64_t mem_value(const mem_sys_stats *ms, int e, int slot, int i)
{
    return slot ? mem_hist_of(ms, e, i)->sum : sim_ctr_mem_value(ms, e, i);
}

/* Slots of L2 / HBM event e in the windows (2 for a histogram). */
static int mem_slots(int e) { return ctr_event(e)->kind == CTR_KIND_HIST ? 2 : 1; }

/* The L2 / HBM counts since the last sample: into window bin, mprev then
 * the counts of ms; or, bin SIZE_MAX (the end, whose window col_finish
 * decides), kept in mprev. */
static void mem_deltas(collector *k, const mem_sys_stats *ms, size_t bin)
{
    npu_status st = bin == SIZE_MAX ? NPU_OK : ctr_intervals_grow(&k->iv, bin, k->max_bins, &k->ediag);
    if (st) {
        fail(k, st);
        return;
    }
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        if (k->iv.mslot[e] < 0)
            continue;
        int n = evd[e].fam == F_L2 ? ms->nslice : ms->nchan;
        for (int sl = 0; sl < mem_slots(e); sl++) {
            uint64_t *prev = k->mprev + (size_t)(k->iv.mslot[e] + sl) * (size_t)k->iv.nmem;
            for (int i = 0; i < n && i < k->iv.nmem; i++) {
                uint64_t v = mem_value(ms, e, sl, i);
                if (bin == SIZE_MAX) {
                    prev[i] = v - prev[i];
                } else {
                    ctr_intervals_add_mem_slot(&k->iv, e, sl, i, bin, v - prev[i]);
                    prev[i] = v;
                }
            }
        }
    }
}

/* Interval mode: everything the memory system counted before `cycle` (a
 * window's end) and since the last sample falls in that window. */
static void on_mem_sample(void *user, uint64_t cycle, const void *p)
{
    collector *k = user;
    if (!k->interval || k->err || cycle < k->iv.width || !mem_windows(k, p))
        return;
    mem_deltas(k, p, (size_t)(cycle / k->iv.width) - 1);
}

static void on_mem_stats(void *user, const void *p)
{
    collector *k = user;
    const mem_sys_stats *ms = p;
    if (k->cv_ready)
        return;
    if (k->interval && !k->err && mem_windows(k, ms)) {
        /* the counts after the last sample: placed by col_finish, which
         * knows the last window */
        k->mem_now = ms->core_cycles;
        mem_deltas(k, ms, SIZE_MAX);
    }
    npu_status st = ctr_values_init(&k->cv, k->ncores, ms->nslice, ms->nchan, &k->ediag);
    if (st) {
        fail(k, st);
        return;
    }
    k->cv_ready = 1;
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        if (evd[e].fam != F_L2 && evd[e].fam != F_HBM)
            continue;
        int n = evd[e].fam == F_L2 ? ms->nslice : ms->nchan;
        for (int i = 0; i < n; i++) {
            k->cv.v[e][i] = sim_ctr_mem_value(ms, e, i);
            if (k->cv.h[e])
                hist_sum(mem_hist_of(ms, e, i), &k->cv.h[e][i]);
        }
        k->cv.have[e] = n > 0;
    }
}

static npu_status col_init(collector *k, npu_sim *s, uint64_t interval)
{
    memset(k, 0, sizeof *k);
    k->s = s;
    k->ncores = s->ncores;
    k->core = npu_calloc((size_t)s->ncores, sizeof *k->core);
    if (!k->core)
        return npu_errf(&k->ediag, NPU_ENOMEM, "stat: out of memory");
    for (int i = 0; i < 8; i++)
        k->class_ev[i] = -1;
    for (int e = 0; e < CTR_EV__COUNT; e++)
        if (evd[e].fam == F_CLASS)
            k->class_ev[evd[e].arg] = e;
    for (int p = 0; p < ISA_NPIPES; p++) {
        k->busy_ev[p] = span_ev(F_BUSY, p, 0);
        for (int ca = 0; ca < SIM_STALL__COUNT; ca++)
            k->stall_ev[p][ca] = span_ev(F_STALL, p, ca);
    }
    if (interval) {
        k->interval = 1;
        k->iv.width = interval;
        k->iv.ncores = s->ncores;
        /* at most ~8 M cells (64 MB) of window data */
        k->max_bins = (size_t)(8u << 20) / ((size_t)CTR_EV__COUNT * (size_t)s->ncores) + 1;
        for (int e = 0; e < CTR_EV__COUNT; e++) {
            const ctr_event_info *ei = ctr_event(e);
            int fam = evd[e].fam;
            k->iv.binned[e] = (ei->unit == CTR_UNIT_CORE || ei->unit == CTR_UNIT_PIPE) &&
                              fam != F_GM_REQ && fam != F_FLAG_SET && fam != F_FLAG_WAIT &&
                              !((fam == F_BUSY || fam == F_IDLE) && evd[e].pipe == ISA_PIPE_S);
        }
    }
    return NPU_OK;
}

static void col_free(collector *k)
{
    for (int c = 0; k->core && c < k->ncores; c++)
        npu_free(k->core[c].sp);
    npu_free(k->core);
    ctr_values_free(&k->cv);
    ctr_intervals_free(&k->iv);
    npu_free(k->mprev);
}

/* After the run: the totals (engine where it counts, observer elsewhere),
 * idle cycles, and the interval windows' cycles and idle. */
static npu_status col_finish(collector *k, npu_diag *d)
{
    const sim_timing_stats *st = k->s->tstats;
    if (!k->cv_ready) {
        npu_status e = ctr_values_init(&k->cv, k->ncores, 0, 0, d);
        if (e)
            return e;
        k->cv_ready = 1;
    }
    for (int c = 0; c < k->ncores; c++)
        fold(k, c, UINT64_MAX);
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        const col_desc *ed = &evd[e];
        if (ed->fam == F_L2 || ed->fam == F_HBM)
            continue;
        k->cv.have[e] = 1;
        if (ed->fam == F_CHIP_CYCLES) {
            k->cv.v[e][0] = st->cycles;
            continue;
        }
        for (int c = 0; c < k->ncores; c++) {
            uint64_t v;
            if (ed->fam == F_IDLE) {
                const sim_timing_core_stats *cs = &st->core[c];
                uint64_t used = cs->busy[ed->pipe];
                for (int ca = 0; ca < SIM_STALL__COUNT; ca++)
                    if (stall_outside(ed->pipe, ca))
                        used += cs->stall[ed->pipe][ca];
                v = cs->cycles > used ? cs->cycles - used : 0;
            } else if (ed->fam == F_INSNS) {
                v = k->s->cores[c].insns;
            } else if (from_engine(ed->fam)) {
                v = engine_value(st, c, e);
            } else {
                v = k->core[c].live[e];
            }
            k->cv.v[e][c] = v;
        }
    }
    if (k->interval) {
        uint64_t maxc = st->cycles ? st->cycles : 1;
        npu_status e = ctr_intervals_grow(&k->iv, (size_t)((maxc - 1) / k->iv.width), k->max_bins, d);
        if (e)
            return e;
        for (int c = 0; c < k->ncores; c++)
            ctr_intervals_add_span(&k->iv, CTR_EV_CYCLES, c, 0, st->core[c].cycles);
        if (k->mprev) {
            /* the memory system's last counts, in the window of its clock
             * (the last window if it stopped at the run's very end) */
            size_t last = (size_t)((maxc - 1) / k->iv.width);
            size_t bin = NPU_MIN((size_t)(k->mem_now / k->iv.width), last);
            for (int ev = 0; ev < CTR_EV__COUNT; ev++)
                for (int sl = 0; k->iv.mslot[ev] >= 0 && sl < mem_slots(ev); sl++)
                    for (int i = 0; i < k->iv.nmem; i++)
                        ctr_intervals_add_mem_slot(
                            &k->iv, ev, sl, i, bin,
                            k->mprev[(size_t)(k->iv.mslot[ev] + sl) * (size_t)k->iv.nmem + (size_t)i]);
        }
        for (size_t b = 0; b < k->iv.nbins; b++)
            for (int c = 0; c < k->ncores; c++) {
                uint64_t *row = k->iv.v + b * CTR_EV__COUNT * (size_t)k->ncores;
#define IVV(ev) row[(size_t)(ev) * (size_t)k->ncores + (size_t)c]
                for (int p = 1; p < ISA_NPIPES; p++) {
                    uint64_t used = IVV(k->busy_ev[p]);
                    for (int ca = 0; ca < SIM_STALL__COUNT; ca++)
                        if (k->stall_ev[p][ca] >= 0 && stall_outside(p, ca))
                            used += IVV(k->stall_ev[p][ca]);
                    int ie = span_ev(F_IDLE, p, 0);
                    if (ie >= 0)
                        IVV(ie) = IVV(CTR_EV_CYCLES) > used ? IVV(CTR_EV_CYCLES) - used : 0;
                }
#undef IVV
            }
    }
    return NPU_OK;
}

/* --check: the observer's totals agree with the engine's for every event
 * both count (spans vs busy/stall, dispatch counts vs MACs/bytes/...), and
 * ctr_check's busy + stalls <= cycles. */
static npu_status col_check(collector *k, npu_diag *d)
{
    npu_status st = ctr_check(&k->cv, d);
    if (st)
        return st;
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        int fam = evd[e].fam;
        if (!from_engine(fam) || fam == F_CYCLES || fam == F_CHIP_CYCLES || fam == F_GM_REQ ||
            fam == F_FLAG_SET || fam == F_FLAG_WAIT || (fam == F_BUSY && evd[e].pipe == ISA_PIPE_S))
            continue;
        for (int c = 0; c < k->ncores; c++)
            if (k->core[c].live[e] != k->cv.v[e][c])
                return npu_errf(d, NPU_EINVAL,
                                "stat --check: core %d %s: observer %" PRIu64 " != engine %" PRIu64, c,
                                ctr_event(e)->name, k->core[c].live[e], k->cv.v[e][c]);
    }
    uint64_t ins = 0;
    for (int c = 0; c < k->ncores; c++)
        ins += k->core[c].live[CTR_EV_INSNS];
    if (ins != ctr_get(&k->cv, CTR_EV_INSNS, -1))
        return npu_errf(d, NPU_EINVAL, "stat --check: %" PRIu64 " instructions dispatched, %" PRIu64
                        " retired", ins, ctr_get(&k->cv, CTR_EV_INSNS, -1));
    return NPU_OK;
}

/* ---- running ------------------------------------------------------------- */

/* A perf/timing run (sim_run_begin + sim_run_timed, as npu_sim_run's), with
 * the collector as the timing observer and the PMU hook installed. */
static npu_status run_observed(npu_sim *s, collector *k, int nodata, uint64_t max_cycles,
                               uint64_t max_insns, npu_diag *d)
{
    npu_status st = sim_run_begin(s, nodata ? NPU_MODE_TIMING : NPU_MODE_PERF, max_insns, "stat", d);
    if (st)
        return st;
    if ((st = col_init(k, s, k->iv.width)))
        return npu_errf(d, st, "%s", k->ediag.msg);
    sim_timing_observer obs = {0};
    obs.user = k;
    obs.on_dispatch = on_dispatch;
    obs.on_exec = on_exec;
    obs.on_stall = on_stall;
    obs.on_mem_stats = on_mem_stats;
    obs.on_mem_sample = on_mem_sample;
    s->pmu_read = pmu_read;
    s->pmu_user = k;
    st = sim_run_timed(s, max_cycles, &obs, k->interval ? k->iv.width : 0, d);
    s->pmu_read = NULL;
    s->pmu_user = NULL;
    if (!st && k->err)
        st = npu_errf(d, k->err, "%s", k->ediag.msg);
    return st;
}

npu_status sim_stat_collect(npu_sim *s, int nodata, uint64_t max_cycles, uint64_t max_insns,
                            uint64_t interval, struct ctr_values *out, struct ctr_intervals *iv,
                            npu_diag *d)
{
    collector k;
    memset(&k, 0, sizeof k);
    k.iv.width = iv ? interval : 0;
    npu_status st = run_observed(s, &k, nodata, max_cycles, max_insns, d);
    if (!st)
        st = col_finish(&k, d);
    if (!st) {
        *out = k.cv;                    /* the caller owns the arrays now */
        memset(&k.cv, 0, sizeof k.cv);
        if (iv && interval) {
            *iv = k.iv;
            memset(&k.iv, 0, sizeof k.iv);
        }
    }
    col_free(&k);
    return st;
}

int sim_cmd_stat(int argc, char **argv)
{
    launch_desc l;
    memset(&l, 0, sizeof l);
    npu_diag d;
    npu_diag_clear(&d);
    const char *evs = NULL, *group = NULL, *sep = NULL;
    int json = 0, check = 0;
    ctr_aggr aggr = CTR_AGGR_ALL;
    uint64_t interval = 0;
    int i = 1;
    while (i < argc) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            launch_free(&l);
            return 0;
        }
        if (!strcmp(a, "--list")) {
            npu_buf b = {0};
            ctr_list(&b);
            if (b.len)
                fwrite(b.data, 1, b.len, stdout);
            npu_buf_free(&b);
            launch_free(&l);
            return 0;
        }
        /* -e LIST or -eLIST (perf's -x, is the common spelling) */
        int attached = a[0] == '-' && strchr("eMxI", a[1] ? a[1] : '?') && a[1] && a[2];
        if (attached)
            next = a + 2;
        if (attached || !strcmp(a, "-e") || !strcmp(a, "-M") || !strcmp(a, "-x") || !strcmp(a, "-I")) {
            if (!next) {
                fprintf(stderr, "npusim stat: %s needs a value (see npusim stat --help)\n", a);
                launch_free(&l);
                return 2;
            }
            if (a[1] == 'e')
                evs = next;
            else if (a[1] == 'M')
                group = next;
            else if (a[1] == 'x') {
                if (!*next) {
                    fprintf(stderr, "npusim stat: -x: empty separator\n");
                    launch_free(&l);
                    return 2;
                }
                sep = next;
            } else if (npu_parse_u64(next, &interval) || interval == 0) {
                fprintf(stderr, "npusim stat: -I: expected a positive number of cycles, got '%s'\n",
                        next);
                launch_free(&l);
                return 2;
            }
            i += attached ? 1 : 2;
            continue;
        }
        if (!strcmp(a, "--json") || !strcmp(a, "--per-core") || !strcmp(a, "-A") ||
            !strcmp(a, "--check")) {
            if (a[2] == 'j')
                json = 1;
            else if (a[2] == 'p')
                aggr = CTR_AGGR_PER_CORE;
            else if (a[1] == 'A')
                aggr = CTR_AGGR_NONE;
            else
                check = 1;
            i++;
            continue;
        }
        if (sim_cmd_launch_arg("stat", &l, argc, argv, &i, &d))
            return 2;
    }
    if (json && sep) {
        fprintf(stderr, "npusim stat: --json and -x are exclusive\n");
        launch_free(&l);
        return 2;
    }
    ctr_sel sel;
    if (ctr_select(&sel, evs, group, &d)) {
        fprintf(stderr, "npusim stat: %s\n", d.msg);
        launch_free(&l);
        return 2;
    }
    if (!l.kernel) {
        fprintf(stderr, "npusim stat: no kernel given (see npusim stat --help)\n");
        launch_free(&l);
        return 2;
    }
    npu_sim *s = NULL;
    collector k;
    memset(&k, 0, sizeof k);
    k.iv.width = interval;
    int rc = 2;
    npu_status st = sim_cmd_setup(&l, "stat", &s, &d);
    if (!st) {
        sim_cmd_progress(s, "npusim stat");
        st = run_observed(s, &k, l.mode == LAUNCH_MODE_TIMING, l.max_cycles, 0, &d);
        sim_cmd_progress_end();
    }
    if (s)
        for (size_t f = 0; f < npu_sim_nfindings(s); f++)
            fprintf(stderr, "npusim stat: warning: %s\n", npu_sim_finding(s, f)->msg);
    if (!st)
        st = col_finish(&k, &d);
    if (!st && l.mode != LAUNCH_MODE_TIMING)
        st = sim_cmd_save_outputs(s, &l, 1, &d);
    if (st) {
        fprintf(stderr, "npusim stat: %s\n", d.msg);
        goto out;
    }
    ctr_machine mach;
    ctr_machine_from_cfg(&s->cfg, s->ncores, &mach);
    ctr_report_opts ro = {aggr, sep, json, l.kernel, launch_mode_name(l.mode)};
    npu_buf b = {0};
    if (interval)
        ctr_report_intervals(&k.iv, &mach, &sel, &ro, &b);
    else
        ctr_report(&k.cv, &mach, &sel, &ro, &b);
    if (b.oom) {
        fprintf(stderr, "npusim stat: out of memory\n");
        npu_buf_free(&b);
        goto out;
    }
    fwrite(b.data, 1, b.len, stdout);
    npu_buf_free(&b);
    rc = 0;
    if (check) {
        if ((st = col_check(&k, &d))) {
            fprintf(stderr, "npusim stat: %s\n", d.msg);
            rc = 1;
        } else {
            fprintf(stderr, "npusim stat: check: counters consistent\n");
        }
    }
out:
    col_free(&k);
    npu_sim_free(s);
    launch_free(&l);
    fflush(stdout);
    return rc;
}
