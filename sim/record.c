/* record.c — the trace recorder: the timing engine's observer, turned into
 * trace events (sim/record.h says which), and the perf-mode run around it.
 *
 * The engine reports things when it decides them, not in cycle order: a
 * scalar instruction at its issue, a pipe instruction when its end is known,
 * a stall when it ends. The writer sorts each chunk by start cycle, so the
 * recorder only has to fill in what one call alone does not know:
 *   - a pipe instruction's dispatch cycle (from on_dispatch, kept in a FIFO
 *     per pipe until its on_exec: pipes run in order, so FIFO order is
 *     execution order);
 *   - the scalar unit's dispatch slot, which a full queue delays (the
 *     QUEUE_FULL stall of that instruction ends at the real dispatch), so it
 *     is emitted at the core's next dispatch or at the end;
 *   - a flag wait's start: the engine reports the release first and then,
 *     right after, the FLAG stall that began at the wait's start (or no stall
 *     when the flag was already set), so the wait is held until the next
 *     observer call;
 *   - the trace's flag sequence numbers (sets of one flag counted from 1),
 *     mapped from the engine's per-core instruction numbers.
 * Counter samples are cumulative values at multiples of the interval, built
 * from per-interval bins. A bin is written once nothing can add to it any
 * more: every later contribution starts at or after the oldest pending
 * dispatch (pipe FIFO heads, held dispatch slots) and the scalar units'
 * current time (the largest dispatch cycle, less a slack for the few
 * cycles one core's issue may run ahead of another's). So the bins held
 * are those of the window of in-flight work, not of the whole run. A
 * contribution that still arrives late (never seen: a guard) goes into the
 * oldest open bin, so the totals stay exact. */
#include "sim/sim_int.h" /* first: frontend/config.h wants the dtype enum before isa.h */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/cost.h"
#include "sim/record.h"
#include "sim/timing.h"
#include "counters/ctr.h"
#include "memmodel/mem.h"
#include "traces/trace.h"

#define REC_FLAG_RING 8   /* = the engine's pending sets per flag (TM_FLAG_FIFO) */

typedef struct rec_pend {        /* a pipe instruction dispatched, not yet executed */
    uint64_t seq, dispatch;
    uint64_t gm_rd, gm_wr;
    size_t r0;                   /* its GM ranges: r[r0 .. r0+nr) of the pipe */
    uint32_t nr;
} rec_pend;

typedef struct rec_pipe {
    rec_pend *q;                 /* FIFO as a vector: [head, n) live */
    size_t head, n, cap;
    sim_gm_range *r;             /* ranges of the live entries (mem level) */
    size_t rn, rcap;
} rec_pipe;

typedef struct rec_flag {        /* one (src, dst, id) flag of a core */
    uint32_t nset;               /* sets so far = the trace seq of the last set */
    uint32_t head, n;
    uint64_t eng[REC_FLAG_RING]; /* engine seq of each pending set */
    uint32_t tseq[REC_FLAG_RING];
} rec_flag;

typedef struct rec_core {
    rec_pipe pipe[ISA_NPIPES];
    rec_flag *flag;              /* [NPIPES][NPIPES][SIM_NFLAG_IDS], lazily */
    /* the scalar unit's dispatch slot of the last pipe instruction */
    int slot;
    uint64_t slot_seq, slot_t, slot_pc;
    uint32_t slot_op;
    int slot_pipe;
    /* a scalar GM access, until its memory stall (if any) ends */
    sim_gm_range *sr;
    uint32_t nsr, capsr;
    uint64_t sr_seq, sr_t, sr_done;
    int last_sync_all;           /* the last dispatched instruction was sync_all */
    uint64_t *bins;              /* [nbins][SIM_REC_CTR__COUNT] increments of bins
                                  * base, base+1, ... (recorder's base) */
    size_t nbins;
    uint64_t cum[SIM_REC_CTR__COUNT];  /* values at the last sample written */
} rec_core;

typedef struct recorder {
    npu_sim *s;
    trc_writer *w;
    sim_rec_level level;
    uint64_t interval;
    uint64_t issue, dispatch_cost;
    int ncores;
    rec_core *core;
    uint8_t *seen;               /* per instruction of .text: its pc appears */
    uint64_t t_end;              /* largest cycle reported */
    uint64_t now;                /* largest dispatch cycle so far */
    uint64_t base;               /* first bin not yet written */
    uint64_t late;               /* contributions to written bins (moved to base) */
    /* the held flag wait */
    int wait;
    uint32_t w_core;
    int w_sp, w_dp, w_id;
    uint64_t w_start, w_end, w_tseq, w_eng;
    /* the memory system's counters (rec_mem_ev), unit ncores: on with the
     * HBM model and samples; the memory system's statistics at the run's end */
    int mem_ctr, mem_final;
    mem_sys_stats mem_fin;
    /* -A: the same counters per L2 slice (units ncores ..) and per HBM
     * channel (after the slices) instead of one summed unit; the final
     * per-slice/channel statistics are copied here */
    int mem_units, nslice, nchan;
    mem_l2_stats *fin_slice;
    mem_chan_stats *fin_chan;
    /* counts and the first error */
    uint64_t events, insn_events, dispatch_events;
    npu_status err;
    npu_diag ediag;
} recorder;

/* ---- small helpers -------------------------------------------------------- */

static void fail(recorder *R, npu_status st, const char *what)
{
    if (!R->err) {
        R->err = st;
        npu_errf(&R->ediag, st, "record: %s", what);
    }
}

static void emit(recorder *R, const trc_event *e)
{
    if (R->err)
        return;
    npu_status st = trc_write(R->w, e);
    if (st) {
        R->err = st;
        trc_writer_error(R->w, &R->ediag);
        return;
    }
    R->events++;
    if (e->t0 > R->t_end)
        R->t_end = e->t0;
    uint64_t end = trc_event_end(e);
    if (end > R->t_end)
        R->t_end = end;
}

static void mark(recorder *R, uint64_t pc)
{
    if (!(pc & 7) && (pc >> 3) < R->s->ntext)
        R->seen[pc >> 3] = 1;
}

/* Grow core c's bins to hold bin k (an absolute bin number). */
static uint64_t *bin(recorder *R, int c, uint64_t kabs)
{
    rec_core *k_ = &R->core[c];
    if (kabs < R->base) {
        R->late++;
        kabs = R->base;
    }
    size_t k = (size_t)(kabs - R->base);
    if (k >= k_->nbins) {
        size_t nn = k_->nbins ? k_->nbins : 64;
        while (nn <= k)
            nn *= 2;
        uint64_t *nb = npu_realloc(k_->bins, nn * SIM_REC_CTR__COUNT * sizeof *nb);
        if (!nb) {
            fail(R, NPU_ENOMEM, "out of memory (counter bins)");
            return NULL;
        }
        memset(nb + k_->nbins * SIM_REC_CTR__COUNT, 0,
               (nn - k_->nbins) * SIM_REC_CTR__COUNT * sizeof *nb);
        k_->bins = nb;
        k_->nbins = nn;
    }
    return k_->bins + k * SIM_REC_CTR__COUNT;
}

/* Busy cycles [start, end) into the bins they overlap. */
static void add_span(recorder *R, int c, int ctr, uint64_t start, uint64_t end)
{
    if (!R->interval || end <= start)
        return;
    uint64_t I = R->interval;
    for (uint64_t k = start / I; k * I < end; k++) {
        uint64_t lo = NPU_MAX(start, k * I), hi = NPU_MIN(end, (k + 1) * I);
        uint64_t *b = bin(R, c, k);
        if (!b)
            return;
        b[ctr] += hi - lo;
    }
}

/* n at cycle t: counted in samples at cycles >= t. */
static void add_at(recorder *R, int c, int ctr, uint64_t t, uint64_t n)
{
    if (!R->interval || !n)
        return;
    uint64_t *b = bin(R, c, t ? (t - 1) / R->interval : 0);
    if (b)
        b[ctr] += n;
}

/* n spread evenly over [start, end): each bin it overlaps gets its share
 * (integer parts, the remainder to the last), so a move that spans several
 * intervals shows its bytes where they flowed, not all at its end. The
 * total is exact. A zero-length span counts n at end, as add_at. */
static void add_spread(recorder *R, int c, int ctr, uint64_t start, uint64_t end, uint64_t n)
{
    if (!R->interval || !n)
        return;
    if (end <= start) {
        add_at(R, c, ctr, end, n);
        return;
    }
    uint64_t I = R->interval, len = end - start, given = 0;
    for (uint64_t k = start / I; k * I < end; k++) {
        uint64_t hi = NPU_MIN(end, (k + 1) * I);
        uint64_t share = hi == end ? n - given
                                   : (uint64_t)((unsigned __int128)n * (hi - start) / len) - given;
        uint64_t *b = bin(R, c, k);
        if (!b)
            return;
        b[ctr] += share;
        given += share;
    }
}

/* Write the samples of bins base .. upto-1 (at the end of each bin, the last
 * one no later than t_last) and drop those bins. */
static void write_bins(recorder *R, uint64_t upto, uint64_t t_last)
{
    if (upto <= R->base)
        return;
    uint64_t I = R->interval;
    for (uint64_t b = R->base; b < upto && !R->err; b++) {
        uint64_t t = NPU_MIN((b + 1) * I, t_last);
        size_t rel = (size_t)(b - R->base);
        for (int c = 0; c < R->ncores; c++) {
            rec_core *k = &R->core[c];
            for (int x = 0; x < SIM_REC_CTR__COUNT; x++) {
                if (rel < k->nbins)
                    k->cum[x] += k->bins[rel * SIM_REC_CTR__COUNT + x];
                trc_event e = trc_ev_counter((uint32_t)c, (uint32_t)x, t, k->cum[x]);
                emit(R, &e);
            }
        }
    }
    size_t d = (size_t)(upto - R->base);
    for (int c = 0; c < R->ncores; c++) {
        rec_core *k = &R->core[c];
        if (!k->nbins)
            continue;
        size_t keep = k->nbins > d ? k->nbins - d : 0;
        if (keep)
            memmove(k->bins, k->bins + d * SIM_REC_CTR__COUNT,
                    keep * SIM_REC_CTR__COUNT * sizeof *k->bins);
        memset(k->bins + keep * SIM_REC_CTR__COUNT, 0,
               (k->nbins - keep) * SIM_REC_CTR__COUNT * sizeof *k->bins);
    }
    R->base = upto;
}

#define REC_SLACK 256   /* cycles a core's dispatch may lag the largest one */

/* Write the bins that nothing can add to any more (see the top comment). */
static void flush_bins(recorder *R)
{
    if (R->now < REC_SLACK)
        return;
    uint64_t w = R->now - REC_SLACK;
    for (int c = 0; c < R->ncores; c++) {
        const rec_core *k = &R->core[c];
        if (k->slot && k->slot_t < w)
            w = k->slot_t;
        for (int p = 0; p < ISA_NPIPES; p++) {
            const rec_pipe *pp = &k->pipe[p];
            if (pp->head < pp->n && pp->q[pp->head].dispatch < w)
                w = pp->q[pp->head].dispatch;
        }
    }
    write_bins(R, w / R->interval, UINT64_MAX);
}

static void insn(recorder *R, int c, int pipe, uint64_t pc, uint32_t op, uint64_t dispatch,
                 uint64_t start, uint64_t end, uint32_t flags)
{
    trc_event e = trc_ev_insn((uint32_t)c, (unsigned)pipe, pc, op, dispatch, start, end, flags);
    emit(R, &e);
    R->insn_events++;
    if (flags & SIM_REC_INSN_DISPATCH)
        R->dispatch_events++;
    mark(R, pc);
    add_span(R, c, SIM_REC_CTR_S_BUSY + pipe, start, end);
}

static void mem_ev(recorder *R, int c, int pipe, const sim_gm_range *g, uint64_t issue,
                   uint64_t done)
{
    trc_event e = trc_ev_mem((uint32_t)c, (unsigned)pipe, g->addr,
                             (uint32_t)NPU_MIN(g->len, UINT32_MAX), g->is_write, issue, done);
    emit(R, &e);
}

/* Append ranges, merging contiguous same-direction ones (a move's bursts
 * with stride = length are one stream). */
static int push_ranges(recorder *R, sim_gm_range **v, size_t *n, size_t *cap, size_t first,
                       const sim_gm_range *g, uint32_t ng)
{
    for (uint32_t i = 0; i < ng; i++) {
        if (!g[i].len)
            continue;
        if (*n > first) {
            sim_gm_range *last = &(*v)[*n - 1];
            if (last->is_write == g[i].is_write && last->addr + last->len == g[i].addr) {
                last->len += g[i].len;
                continue;
            }
        }
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            sim_gm_range *nv = npu_realloc(*v, nc * sizeof *nv);
            if (!nv) {
                fail(R, NPU_ENOMEM, "out of memory (GM ranges)");
                return -1;
            }
            *v = nv;
            *cap = nc;
        }
        (*v)[(*n)++] = g[i];
    }
    return 0;
}

/* ---- held state ------------------------------------------------------------ */

static void flush_wait(recorder *R)
{
    if (!R->wait)
        return;
    R->wait = 0;
    trc_event e = trc_ev_flag_wait(R->w_core, (unsigned)R->w_sp, (unsigned)R->w_dp,
                                   (uint32_t)R->w_id, R->w_start, R->w_end, R->w_tseq);
    emit(R, &e);
}

/* The core's dispatch slot and scalar GM access, once nothing can change them. */
static void flush_core(recorder *R, int c)
{
    rec_core *k = &R->core[c];
    if (k->slot) {
        k->slot = 0;
        insn(R, c, ISA_PIPE_S, k->slot_pc, k->slot_op, k->slot_t, k->slot_t,
             k->slot_t + R->dispatch_cost, SIM_REC_INSN_DISPATCH);
    }
    if (k->nsr) {
        for (uint32_t i = 0; i < k->nsr; i++)
            mem_ev(R, c, ISA_PIPE_S, &k->sr[i], k->sr_t, k->sr_done);
        k->nsr = 0;
    }
}

static rec_flag *flag_of(recorder *R, int c, int sp, int dp, int id)
{
    rec_core *k = &R->core[c];
    if (!k->flag) {
        k->flag = npu_calloc((size_t)ISA_NPIPES * ISA_NPIPES * SIM_NFLAG_IDS, sizeof *k->flag);
        if (!k->flag) {
            fail(R, NPU_ENOMEM, "out of memory (flags)");
            return NULL;
        }
    }
    if (sp < 0 || sp >= ISA_NPIPES || dp < 0 || dp >= ISA_NPIPES)
        return NULL;
    return &k->flag[((size_t)sp * ISA_NPIPES + (size_t)dp) * SIM_NFLAG_IDS +
                    ((unsigned)id & (SIM_NFLAG_IDS - 1))];
}

/* ---- the observer ------------------------------------------------------------ */

static void on_dispatch(void *user, int c, uint64_t seq, const sim_op *op, uint64_t t)
{
    recorder *R = user;
    rec_core *k = &R->core[c];
    flush_wait(R);
    flush_core(R, c);
    if (t > R->now) {
        R->now = t;
        if (R->interval && R->now >= (R->base + 1) * R->interval + REC_SLACK)
            flush_bins(R);
    }
    k->last_sync_all = op->is_sync_all;
    uint64_t issue = R->issue;
    uint32_t opc = (uint32_t)op->in.op;
    if (op->ended || op->is_sync_all || (op->is_barrier && op->barrier_pipe == ISA_PIPE_ALL)) {
        insn(R, c, ISA_PIPE_S, op->pc, opc, t, t, t + issue, 0);
        return;
    }
    if (op->pipe == ISA_PIPE_S) {
        /* the engine's charges (sim/timing.c scalar_run), branch by branch */
        uint64_t dur;
        if (op->is_set_flag || op->is_wait_flag || op->is_barrier) {
            dur = issue;
        } else if (op->ngm) {
            dur = issue;
            for (uint32_t i = 0; i < op->ngm; i++)
                add_at(R, c, op->gm[i].is_write ? SIM_REC_CTR_GM_WR : SIM_REC_CTR_GM_RD, t,
                       op->gm[i].len);
            if (R->level >= SIM_REC_MEM) {
                size_t n = 0, cap = k->capsr;
                if (push_ranges(R, &k->sr, &n, &cap, 0, op->gm, op->ngm))
                    return;
                k->nsr = (uint32_t)n;
                k->capsr = (uint32_t)cap;
                k->sr_seq = seq;
                k->sr_t = t;
                k->sr_done = t + issue;
            }
        } else {
            dur = sim_cost_scalar(&R->s->cfg, &op->in, op->cost, op->taken);
        }
        insn(R, c, ISA_PIPE_S, op->pc, opc, t, t, t + dur, 0);
        return;
    }
    /* a pipe instruction: its dispatch waits in the pipe's FIFO for on_exec */
    if ((int)op->pipe < 0 || op->pipe >= ISA_NPIPES)
        return;
    rec_pipe *pp = &k->pipe[op->pipe];
    if (pp->head == pp->n) {
        pp->head = pp->n = 0;
        pp->rn = 0;
    } else if (pp->n == pp->cap && pp->head > 0) {
        /* compact: drop the executed entries and their ranges */
        size_t r0 = pp->q[pp->head].r0;
        memmove(pp->q, pp->q + pp->head, (pp->n - pp->head) * sizeof *pp->q);
        pp->n -= pp->head;
        pp->head = 0;
        for (size_t i = 0; i < pp->n; i++)
            pp->q[i].r0 -= r0;
        if (pp->rn > r0)
            memmove(pp->r, pp->r + r0, (pp->rn - r0) * sizeof *pp->r);
        pp->rn -= r0;
    }
    if (pp->n == pp->cap) {
        size_t nc = pp->cap ? pp->cap * 2 : 16;
        rec_pend *nq = npu_realloc(pp->q, nc * sizeof *nq);
        if (!nq) {
            fail(R, NPU_ENOMEM, "out of memory (pipe FIFO)");
            return;
        }
        pp->q = nq;
        pp->cap = nc;
    }
    rec_pend *e = &pp->q[pp->n++];
    memset(e, 0, sizeof *e);
    e->seq = seq;
    e->dispatch = t;
    e->gm_rd = op->work.gm_rd;
    e->gm_wr = op->work.gm_wr;
    e->r0 = pp->rn;
    if (R->level >= SIM_REC_MEM && op->ngm) {
        if (push_ranges(R, &pp->r, &pp->rn, &pp->rcap, pp->rn, op->gm, op->ngm))
            return;
        e->nr = (uint32_t)(pp->rn - e->r0);
    }
    k->slot = 1;
    k->slot_seq = seq;
    k->slot_t = t;
    k->slot_pc = op->pc;
    k->slot_op = opc;
    k->slot_pipe = op->pipe;
}

/* The memory system's counters in the trace: samples of the L2's and the
 * HBM's totals (cumulative, as the cores' counters) at every interval's end,
 * on counter unit ncores, ids after the cores' (SIM_REC_CTR__COUNT + j). */
static const int rec_mem_ev[] = { CTR_EV_L2_HITS, CTR_EV_L2_MISSES, CTR_EV_L2_BYTES,
                                  CTR_EV_HBM_BYTES_READ, CTR_EV_HBM_BYTES_WRITTEN };
enum { REC_NMEM = (int)(sizeof rec_mem_ev / sizeof rec_mem_ev[0]) };

static void rec_mem_emit(recorder *R, uint64_t cycle, const mem_sys_stats *ms)
{
    if (!R->mem_units) {
        for (int j = 0; j < REC_NMEM; j++) {
            trc_event e = trc_ev_counter((uint32_t)R->ncores, (uint32_t)(SIM_REC_CTR__COUNT + j), cycle,
                                         sim_ctr_mem_value(ms, rec_mem_ev[j], -1));
            emit(R, &e);
        }
        return;
    }
    /* a slice unit carries the L2 events, a channel unit the HBM ones */
    for (int u = 0; u < R->nslice + R->nchan; u++) {
        int l2 = u < R->nslice, inst = l2 ? u : u - R->nslice;
        if (inst >= (l2 ? ms->nslice : ms->nchan))
            continue;
        for (int j = 0; j < REC_NMEM; j++) {
            if ((ctr_event(rec_mem_ev[j])->unit == CTR_UNIT_L2) != l2)
                continue;
            trc_event e = trc_ev_counter((uint32_t)(R->ncores + u), (uint32_t)(SIM_REC_CTR__COUNT + j),
                                         cycle, sim_ctr_mem_value(ms, rec_mem_ev[j], inst));
            emit(R, &e);
        }
    }
}

/* A sample at an interval's end: what the memory system counted before it. */
static void on_mem_sample(void *user, uint64_t cycle, const void *p)
{
    rec_mem_emit(user, cycle, p);
}

/* The totals at the end (written once the run's last cycle is known; the
 * copy's per-slice/channel pointers are not valid after the call, so with
 * -A the arrays are copied too) */
static void on_mem_stats(void *user, const void *p)
{
    recorder *R = user;
    const mem_sys_stats *ms = p;
    R->mem_fin = *ms;
    R->mem_fin.slice = NULL;
    R->mem_fin.chan = NULL;
    if (R->mem_units) {
        if (ms->nslice > R->nslice || ms->nchan > R->nchan) {
            fail(R, NPU_EINVAL, "the memory system has more slices or channels than the config says");
            return;
        }
        if (ms->nslice)
            memcpy(R->fin_slice, ms->slice, (size_t)ms->nslice * sizeof *ms->slice);
        if (ms->nchan)
            memcpy(R->fin_chan, ms->chan, (size_t)ms->nchan * sizeof *ms->chan);
        R->mem_fin.slice = R->fin_slice;
        R->mem_fin.chan = R->fin_chan;
    }
    R->mem_final = 1;
}

/* Level full: every HBM command, streamed as the controllers issue it. */
static void on_hbm_cmd(void *user, int chan, int pc, int cmd, int bg, int bank, uint32_t row,
                       uint64_t cycle)
{
    recorder *R = user;
    if (R->err)
        return;
    /* bank: flat within the pseudo-channel (bank group x banks per group +
     * bank), all ones for an all-bank command (REFab, PREA) */
    uint32_t b = bank < 0 ? UINT32_MAX : (uint32_t)bank;
    (void)bg;
    trc_event e = trc_ev_hbm((uint32_t)chan, (unsigned)pc, b, row, (unsigned)cmd, cycle);
    emit(R, &e);
}

static void on_exec(void *user, int c, int pipe, uint64_t seq, uint64_t pc, const isa_insn *in,
                    uint64_t start, uint64_t end)
{
    recorder *R = user;
    flush_wait(R);
    if (pipe < 0 || pipe >= ISA_NPIPES)
        return;
    rec_pipe *pp = &R->core[c].pipe[pipe];
    rec_pend p = {0, start, 0, 0, 0, 0};
    if (pp->head < pp->n && pp->q[pp->head].seq == seq)
        p = pp->q[pp->head++];
    insn(R, c, pipe, pc, (uint32_t)in->op, p.dispatch, start, end, 0);
    add_spread(R, c, SIM_REC_CTR_GM_RD, start, end, p.gm_rd);
    add_spread(R, c, SIM_REC_CTR_GM_WR, start, end, p.gm_wr);
    for (uint32_t i = 0; i < p.nr; i++)
        mem_ev(R, c, pipe, &pp->r[p.r0 + i], start, end);
}

static void on_stall(void *user, int c, int pipe, int cause, uint64_t seq, uint64_t pc,
                     uint64_t start, uint64_t end)
{
    recorder *R = user;
    (void)pc;   /* the stalled instruction: STALL events have no pc slot yet; readers
                 * infer it (docs/traces.md, "Whose stall"), and agree with this one */
    rec_core *k = &R->core[c];
    if (R->wait && cause == SIM_STALL_FLAG && R->w_core == (uint32_t)c && R->w_dp == pipe &&
        R->w_eng == seq)
        R->w_start = start;     /* the wait blocked from the stall's start */
    flush_wait(R);
    if (pipe == ISA_PIPE_S && cause == SIM_STALL_QUEUE_FULL && k->slot && k->slot_seq == seq) {
        /* the dispatch happened when the queue had room */
        k->slot_t = end;
        rec_pipe *pp = &k->pipe[k->slot_pipe];
        if (pp->n > pp->head && pp->q[pp->n - 1].seq == seq)
            pp->q[pp->n - 1].dispatch = end;
    }
    if (pipe == ISA_PIPE_S && cause == SIM_STALL_MEMORY && k->nsr && k->sr_seq == seq)
        k->sr_done = end;
    trc_event e = trc_ev_stall((uint32_t)c, (unsigned)pipe, (uint32_t)cause, start, end);
    emit(R, &e);
    if (pipe == ISA_PIPE_S && cause == SIM_STALL_BARRIER && k->last_sync_all) {
        trc_event b = trc_ev_barrier((uint32_t)c, start, end);
        emit(R, &b);
    }
}

static void on_flag(void *user, int c, int kind, int sp, int dp, int id, uint64_t cycle,
                    uint64_t set_seq, uint64_t wait_seq)
{
    recorder *R = user;
    flush_wait(R);
    rec_flag *f = flag_of(R, c, sp, dp, id);
    if (!f)
        return;
    if (kind == SIM_TM_FLAG_SET) {
        f->nset++;
        if (f->n < REC_FLAG_RING) {
            uint32_t i = (f->head + f->n) % REC_FLAG_RING;
            f->eng[i] = set_seq;
            f->tseq[i] = f->nset;
            f->n++;
        }
        trc_event e = trc_ev_flag_set((uint32_t)c, (unsigned)sp, (unsigned)dp, (uint32_t)id,
                                      cycle, f->nset);
        emit(R, &e);
        return;
    }
    /* the wait takes the oldest pending set; find the engine's one */
    uint64_t tseq = 0;
    while (f->n) {
        uint32_t i = f->head;
        f->head = (f->head + 1) % REC_FLAG_RING;
        f->n--;
        if (f->eng[i] == set_seq) {
            tseq = f->tseq[i];
            break;
        }
    }
    R->wait = 1;
    R->w_core = (uint32_t)c;
    R->w_sp = sp;
    R->w_dp = dp;
    R->w_id = id;
    R->w_start = R->w_end = cycle;
    R->w_tseq = tseq;
    R->w_eng = wait_seq;
}

static void on_call(void *user, int c, int is_ret, uint64_t pc, uint64_t target, uint64_t cycle)
{
    recorder *R = user;
    flush_wait(R);
    trc_event e = is_ret ? trc_ev_ret((uint32_t)c, pc, target, cycle)
                         : trc_ev_call((uint32_t)c, pc, target, cycle);
    emit(R, &e);
    mark(R, pc);
    mark(R, target);
}

/* ---- meta ------------------------------------------------------------------- */

const char *sim_rec_level_name(sim_rec_level l)
{
    switch (l) {
    case SIM_REC_MEM: return "mem";
    case SIM_REC_FULL: return "full";
    default: return "instr";
    }
}

int sim_rec_level_from_name(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "instr"))
        return SIM_REC_INSTR;
    if (!strcmp(name, "mem"))
        return SIM_REC_MEM;
    if (!strcmp(name, "full"))
        return SIM_REC_FULL;
    return -1;
}

static const int ctr_events[SIM_REC_CTR__COUNT] = {
#define SIM_REC_CTR_EV(id, ev) CTR_EV_##ev,
    SIM_REC_COUNTERS(SIM_REC_CTR_EV)
#undef SIM_REC_CTR_EV
};

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* Open the writer with the run's meta (the tables are copied by the writer). */
static trc_writer *open_writer(recorder *R, const char *path, const sim_rec_opts *o, npu_diag *d)
{
    npu_sim *s = R->s;
    const char *opnames[ISA_OP_COUNT];
    for (int i = 0; i < ISA_OP_COUNT; i++) {
        const isa_info *inf = isa_info_of((isa_op)i);
        opnames[i] = inf ? inf->mnemonic : NULL;
    }
    const char *causes[SIM_STALL__COUNT];
    for (int i = 0; i < SIM_STALL__COUNT; i++)
        causes[i] = sim_stall_name(i);
    size_t nsym = 0;
    for (size_t i = 0; i < s->img.nsyms; i++)
        nsym += s->img.syms[i].section == ASM_SEC_TEXT;
    trc_symbol *syms = npu_calloc(nsym ? nsym : 1, sizeof *syms);
    char *json = cfg_dump_json(&s->cfg);
    if (!syms || !json) {
        npu_free(syms);
        npu_free(json);
        npu_errf(d, NPU_ENOMEM, "record: out of memory");
        return NULL;
    }
    nsym = 0;
    for (size_t i = 0; i < s->img.nsyms; i++) {
        const elf_sym *y = &s->img.syms[i];
        if (y->section != ASM_SEC_TEXT)
            continue;
        syms[nsym++] = (trc_symbol){ y->name, y->addr, y->size, y->is_func != 0 };
    }
    trc_meta m = {0};
    m.config_json = json;
    m.clock_ghz = s->cfg.chip.clock_ghz;
    m.n_cores = (uint32_t)s->ncores;
    m.seed = o->seed;
    m.kernel = o->kernel ? o->kernel : base_name(s->kname);
    m.level = sim_rec_level_name(o->level);
    m.counter_interval = o->interval;
    m.symbols = syms;
    m.n_symbols = (uint32_t)nsym;
    m.opcodes = (trc_names){ opnames, ISA_OP_COUNT };
    m.causes = (trc_names){ causes, SIM_STALL__COUNT };
    const char *ctr_names[SIM_REC_CTR__COUNT + REC_NMEM];
    for (int i = 0; i < SIM_REC_CTR__COUNT; i++)
        ctr_names[i] = ctr_event(ctr_events[i])->name;
    for (int j = 0; j < REC_NMEM; j++)
        ctr_names[SIM_REC_CTR__COUNT + j] = ctr_event(rec_mem_ev[j])->name;
    m.counters = (trc_names){ ctr_names, (uint32_t)(SIM_REC_CTR__COUNT + (R->mem_ctr ? REC_NMEM : 0)) };
    /* units 0 .. ncores-1 are the cores (unnamed); ncores the memory
     * system, or with -A its slices and channels */
    const char **unit_names = NULL;
    char *unit_text = NULL;
    if (R->mem_ctr) {
        int nmu = R->mem_units ? R->nslice + R->nchan : 1;
        unit_names = npu_calloc((size_t)s->ncores + (size_t)nmu, sizeof *unit_names);
        unit_text = R->mem_units ? npu_malloc((size_t)nmu * 24) : NULL;
        if (!unit_names || (R->mem_units && !unit_text)) {
            npu_free(unit_names);
            npu_free(syms);
            npu_free(json);
            npu_errf(d, NPU_ENOMEM, "record: out of memory");
            return NULL;
        }
        if (!R->mem_units)
            unit_names[s->ncores] = "memory (L2 + HBM)";
        for (int u = 0; R->mem_units && u < nmu; u++) {
            char *t = unit_text + (size_t)u * 24;
            if (u < R->nslice)
                snprintf(t, 24, "L2 slice %d", u);
            else
                snprintf(t, 24, "HBM channel %d", u - R->nslice);
            unit_names[s->ncores + u] = t;
        }
        m.units = (trc_names){ unit_names, (uint32_t)(s->ncores + nmu) };
    }
    const char *hbm_names[16];
    int nhbm = mem_cmd_count() < 16 ? mem_cmd_count() : 16;
    for (int i = 0; i < nhbm; i++)
        hbm_names[i] = mem_cmd_name(i);
    m.hbm_commands = (trc_names){ hbm_names, (uint32_t)nhbm };
    trc_writer *w = trc_writer_open(path, &m, d);
    npu_free(unit_names);
    npu_free(unit_text);
    npu_free(syms);
    npu_free(json);
    return w;
}

/* Counter samples (cumulative, at multiples of the interval and at the end),
 * then the disassembly of every pc seen. */
static void finish(recorder *R)
{
    flush_wait(R);
    for (int c = 0; c < R->ncores; c++)
        flush_core(R, c);
    if (R->interval && R->t_end)
        write_bins(R, (R->t_end + R->interval - 1) / R->interval, R->t_end);
    if (R->mem_ctr && R->mem_final && R->t_end)
        rec_mem_emit(R, R->t_end, &R->mem_fin);
    char buf[256];
    for (size_t i = 0; i < R->s->ntext && !R->err; i++) {
        if (!R->seen[i])
            continue;
        sim_disasm_at(R->s, (uint64_t)i * 8, buf, sizeof buf);
        npu_status st = trc_writer_add_disasm(R->w, (uint64_t)i * 8, buf);
        if (st) {
            R->err = st;
            trc_writer_error(R->w, &R->ediag);
        }
    }
}

static void rec_free(recorder *R)
{
    if (R->core)
        for (int c = 0; c < R->ncores; c++) {
            rec_core *k = &R->core[c];
            for (int p = 0; p < ISA_NPIPES; p++) {
                npu_free(k->pipe[p].q);
                npu_free(k->pipe[p].r);
            }
            npu_free(k->flag);
            npu_free(k->sr);
            npu_free(k->bins);
        }
    npu_free(R->core);
    npu_free(R->seen);
    npu_free(R->fin_slice);
    npu_free(R->fin_chan);
}

/* ---- the run ---------------------------------------------------------------- */

npu_status sim_record_run(npu_sim *s, const char *path, const sim_rec_opts *o,
                          sim_rec_result *r, npu_diag *d)
{
    memset(r, 0, sizeof *r);
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "record: no kernel loaded");
    recorder R;
    memset(&R, 0, sizeof R);
    R.s = s;
    R.level = o->level;
    R.interval = o->interval;
    R.issue = s->cfg.scalar.issue_cycles ? s->cfg.scalar.issue_cycles : 1;
    R.dispatch_cost = sim_cost_dispatch(&s->cfg);
    R.ncores = s->ncores;
    R.core = npu_calloc((size_t)(s->ncores > 0 ? s->ncores : 1), sizeof *R.core);
    R.seen = npu_calloc(s->ntext + 1, 1);
    if (!R.core || !R.seen) {
        rec_free(&R);
        return npu_errf(d, NPU_ENOMEM, "record: out of memory");
    }
    R.mem_ctr = o->interval && s->cfg.timing.memory_model == CFG_MEM_HBM;
    if (o->mem_units && !R.mem_ctr) {
        rec_free(&R);
        return npu_errf(d, NPU_EINVAL, o->interval
                        ? "-A splits the memory system's counters, and this machine has none: "
                          "timing.memory_model is fixed (one GM port, no L2 or HBM)"
                        : "-A splits the memory counters' samples, and -I 0 takes none");
    }
    if (R.mem_ctr && o->mem_units) {
        const mem_config *mc = &s->cfg.mem;
        R.mem_units = 1;
        R.nslice = mc->l2.slices;   /* with the L2 off its slices count nothing */
        R.nchan = mc->hbm.stacks * mc->hbm.channels;
        R.fin_slice = npu_calloc((size_t)(R.nslice ? R.nslice : 1), sizeof *R.fin_slice);
        R.fin_chan = npu_calloc((size_t)(R.nchan ? R.nchan : 1), sizeof *R.fin_chan);
        if (!R.fin_slice || !R.fin_chan) {
            rec_free(&R);
            return npu_errf(d, NPU_ENOMEM, "record: out of memory");
        }
    }
    R.w = open_writer(&R, path, o, d);
    if (!R.w) {
        rec_free(&R);
        return d ? d->status : NPU_EIO;
    }

    /* a perf/timing run as npu_sim_run's, with the recorder as observer */
    npu_status st = sim_run_begin(s, o->nodata ? NPU_MODE_TIMING : NPU_MODE_PERF, o->max_insns,
                                  "record", &r->run_diag);
    if (st) {
        /* the run could not start: no trace */
        trc_writer_discard(R.w);
        rec_free(&R);
        if (d)
            *d = r->run_diag;
        return st;
    }
    sim_timing_observer obs = {0};
    obs.user = &R;
    obs.on_dispatch = on_dispatch;
    obs.on_exec = on_exec;
    obs.on_stall = on_stall;
    obs.on_flag = on_flag;
    obs.on_call = on_call;
    if (R.level >= SIM_REC_FULL)
        obs.on_hbm_cmd = on_hbm_cmd;
    if (R.mem_ctr) {
        obs.on_mem_sample = on_mem_sample;
        obs.on_mem_stats = on_mem_stats;
    }
    st = sim_run_timed(s, o->max_cycles, &obs, R.mem_ctr ? o->interval : 0, &r->run_diag);
    r->run = st;
    if (!st)
        npu_diag_clear(&r->run_diag);
    if (s->tstats && s->tstats->cycles > R.t_end)
        R.t_end = s->tstats->cycles;
    finish(&R);
    r->events = R.events;
    r->insn_events = R.insn_events;
    r->dispatch_events = R.dispatch_events;
    r->counter_late = R.late;
    npu_status err = R.err;
    if (err) {
        if (d)
            *d = R.ediag;
        trc_writer_discard(R.w);
    } else {
        err = trc_writer_close(R.w, d);
    }
    rec_free(&R);
    return err;
}
