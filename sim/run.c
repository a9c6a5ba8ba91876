/* run.c — a launch: arguments into GM, func mode over N cores with the
 * sync_all protocol, the watchdog, end-of-run sync findings; npu_sim_run. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"
#include "sim/timing.h"

/* ---- arguments ---------------------------------------------------------- */

npu_status sim_place_args(npu_sim *s, npu_diag *d)
{
    /* GM as the launch describes it, whatever an earlier run left there */
    for (size_t i = 0; i < s->img.nsegs; i++) {
        const elf_seg *g = &s->img.segs[i];
        if (!g->size)
            continue;
        sim_gm_zero(&s->gm, g->addr);
        if (g->filesz) {
            npu_status st = sim_gm_write_init(&s->gm, g->addr, g->data,
                                              NPU_MIN(g->filesz, g->size), d);
            if (st)
                return st;
        }
    }
    for (size_t i = 0; i < s->nargs; i++) {
        const sim_arg *a = &s->args[i];
        if (a->kind != SIM_ARG_TENSOR)
            continue;
        sim_gm_zero(&s->gm, a->addr);
        if (a->init) {
            npu_status st = sim_gm_write_init(&s->gm, a->addr, a->init, a->nbytes, d);
            if (st)
                return st;
        }
    }
    uint64_t size = (uint64_t)(s->nargs ? s->nargs : 1) * 8;
    const sim_gm_alloc *pa = s->param_addr ? sim_gm_find(&s->gm, s->param_addr, 1) : NULL;
    if (!pa || pa->size != size) {
        sim_gm_drop_kind(&s->gm, SIM_GM_PARAM);
        npu_status st = sim_gm_alloc_new(&s->gm, size, SIM_GM_PARAM, "parameter block",
                                         &s->param_addr, d);
        if (st)
            return st;
    }
    for (size_t i = 0; i < s->nargs; i++) {
        uint8_t b[8];
        memcpy(b, &s->args[i].value, 8); /* little-endian host (build requirement) */
        npu_status st = sim_gm_write_init(&s->gm, s->param_addr + 8 * i, b, 8, d);
        if (st)
            return st;
    }
    return NPU_OK;
}

/* ---- sync_all ------------------------------------------------------------- */

int sim_barrier_ready(const npu_sim *s)
{
    int waiting = 0;
    for (int i = 0; i < s->ncores; i++) {
        sim_core_state st = s->cores[i].state;
        if (st == SIM_CORE_AT_BARRIER)
            waiting++;
        else if (st != SIM_CORE_ENDED)
            return 0;
    }
    return waiting > 0 && waiting == s->ncores;
}

void sim_barrier_release(npu_sim *s)
{
    for (int i = 0; i < s->ncores; i++)
        if (s->cores[i].state == SIM_CORE_AT_BARRIER)
            s->cores[i].state = SIM_CORE_RUNNING;
}

/* "core 0 pc 0x48 (main+0x48) at sync_all, core 1 ended at ..." */
static void core_pcs(const npu_sim *s, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    static const char *const stname[] = {"running", "at sync_all", "ended", "faulted"};
    for (int i = 0; i < s->ncores && len + 1 < n; i++) {
        char sym[128];
        sim_symbolize(s, s->cores[i].pc, sym, sizeof sym);
        int w = snprintf(buf + len, n - len, "%score %d pc 0x%" PRIx64 " (%s) %s", i ? ", " : "",
                         i, s->cores[i].pc, sym, stname[s->cores[i].state]);
        if (w < 0)
            break;
        len += (size_t)w;
        if (len >= n) {
            len = n - 1;
            break;
        }
    }
}

npu_status sim_barrier_check(npu_sim *s, npu_diag *d)
{
    int waiting = 0, ended = 0;
    for (int i = 0; i < s->ncores; i++) {
        if (s->cores[i].state == SIM_CORE_AT_BARRIER)
            waiting++;
        if (s->cores[i].state == SIM_CORE_ENDED)
            ended++;
    }
    if (waiting && waiting + ended == s->ncores && ended) {
        char pcs[1500];
        core_pcs(s, pcs, sizeof pcs);
        return npu_errf(d, NPU_EDEADLOCK,
                        "%s: deadlock: %d core(s) wait at sync_all but %d core(s) ended without "
                        "reaching it: %s",
                        s->kname, waiting, ended, pcs);
    }
    return NPU_OK;
}

/* ---- findings ------------------------------------------------------------- */

void sim_sync_findings(npu_sim *s)
{
    for (int c = 0; c < s->ncores; c++) {
        const sim_core *k = &s->cores[c];
        for (int sp = 0; sp < ISA_NPIPES; sp++)
            for (int dp = 0; dp < ISA_NPIPES; dp++)
                for (int id = 0; id < SIM_NFLAG_IDS; id++) {
                    const sim_flag *f = &k->flag[sp][dp][id];
                    if (f->pending > 0)
                        sim_add_finding(s, NPU_FIND_FLAG_LEFT_SET, c, f->last_set_pc,
                                        "core %d: flag (%s, %s, %d) still set when the kernel "
                                        "ended (%u sets, %u waits; last set at pc 0x%" PRIx64 ")",
                                        c, isa_pipe_name(sp), isa_pipe_name(dp), id, f->nset,
                                        f->nwait, f->last_set_pc);
                    else if (f->pending < 0)
                        sim_add_finding(s, NPU_FIND_WAIT_UNMATCHED, c, f->last_wait_pc,
                                        "core %d: %" PRId64 " wait_flag(%s, %s, %d) never matched "
                                        "by a set_flag (%u sets, %u waits; last wait at pc 0x%" PRIx64
                                        "): the %s pipe would block forever",
                                        c, -f->pending, isa_pipe_name(sp), isa_pipe_name(dp), id,
                                        f->nset, f->nwait, f->last_wait_pc, isa_pipe_name(dp));
                }
    }
}

/* ---- progress ------------------------------------------------------------- */

void npu_sim_set_progress(npu_sim *s, npu_progress_fn fn, void *user, unsigned period_ms)
{
    s->prog.fn = fn;
    s->prog.user = user;
    s->prog.period = (period_ms ? period_ms : 1) * 1e-3;
}

void sim_progress_start(npu_sim *s)
{
    if (s->prog.fn) {
        s->prog.start = npu_mono_s();
        s->prog.next = s->prog.start + s->prog.period;
    }
}

void sim_progress_poll(npu_sim *s, uint64_t cycles, int cores_done)
{
    double now = npu_mono_s();
    if (!s->prog.fn || now < s->prog.next)
        return;
    s->prog.next = now + s->prog.period;
    npu_progress p = { s->mode, 0, cycles, cores_done, s->ncores, now - s->prog.start };
    for (int i = 0; i < s->ncores; i++)
        p.insns += s->cores[i].insns;
    s->prog.fn(s->prog.user, &p);
}

/* ---- func mode ------------------------------------------------------------ */

static npu_status watchdog(npu_sim *s, int core, npu_diag *d)
{
    char pcs[1200];
    core_pcs(s, pcs, sizeof pcs);
    npu_diag tmp;
    sim_fault(s, core, s->cores[core].pc, NPU_ETIMEOUT, &tmp,
              "watchdog: %" PRIu64 " instructions retired without ending (the instruction "
              "limit, --max-insns); every core: %s",
              s->cores[core].insns, pcs);
    if (d)
        *d = tmp;
    return NPU_ETIMEOUT;
}

#define SIM_PROGRESS_CHUNK (1u << 20)   /* func-mode instructions between progress polls */

npu_status sim_run_func(npu_sim *s, npu_diag *d)
{
    int stepwise = 0;
    for (int i = 0; i < s->nobs; i++)
        if (s->obs[i].on_op)
            stepwise = 1;
    for (;;) {
        int ended = 0;
        for (int i = 0; i < s->ncores; i++) {
            sim_core *c = &s->cores[i];
            while (c->state == SIM_CORE_RUNNING) {
                if (c->insns >= s->max_insns)
                    return watchdog(s, i, d);
                npu_status st;
                if (stepwise) {
                    sim_op op;
                    st = sim_core_step(s, i, &op, d);
                } else {
                    /* in chunks when someone watches the progress: the
                     * same instructions in the same order, in pieces */
                    uint64_t left = s->max_insns - c->insns;
                    if (sim_progress_on(s) && left > SIM_PROGRESS_CHUNK)
                        left = SIM_PROGRESS_CHUNK;
                    st = sim_core_run(s, i, left, d);
                }
                if (st)
                    return st;
                /* (stepwise: every 4096 instructions, the clock is the cost) */
                if (sim_progress_on(s) && (!stepwise || (c->insns & 4095) == 0))
                    sim_progress_poll(s, 0, ended);
            }
            if (c->state == SIM_CORE_ENDED)
                ended++;
        }
        if (ended == s->ncores)
            return NPU_OK;
        if (sim_barrier_ready(s)) {
            sim_barrier_release(s);
            continue;
        }
        npu_status st = sim_barrier_check(s, d);
        if (st)
            return st;
        /* unreachable: every core is ENDED or AT_BARRIER after the sweep */
        return npu_errf(d, NPU_EINVAL, "sim_run_func: inconsistent core states");
    }
}

/* ---- npu_sim_run ---------------------------------------------------------- */

npu_status sim_run_begin(npu_sim *s, npu_mode mode, uint64_t max_insns, const char *who,
                         npu_diag *d)
{
    s->mode = mode;
    s->nodata = mode == NPU_MODE_TIMING;
    s->max_insns = max_insns ? max_insns : NPU_DEFAULT_MAX_INSNS;
    s->nfind = 0;
    s->faulted = 0;
    npu_diag_clear(&s->fault);
    s->cycles = 0;
    sim_progress_start(s);
    if (s->tstats)
        sim_timing_stats_free(s->tstats);
    npu_status st = sim_place_args(s, d);
    if (!st)
        st = sim_cores_reset(s, d);
    if (!st && mode != NPU_MODE_FUNC && !s->tstats) {
        s->tstats = npu_calloc(1, sizeof *s->tstats);
        if (!s->tstats)
            st = npu_errf(d, NPU_ENOMEM, "%s: out of memory", who);
    }
    return st;
}

npu_status sim_run_timed(npu_sim *s, uint64_t max_cycles, const struct sim_timing_observer *obs,
                         uint64_t mem_sample_cycles, npu_diag *d)
{
    sim_timing_opts to = {s->nodata, max_cycles, obs, mem_sample_cycles};
    npu_status st = sim_timing_run(s, &to, s->tstats, d);
    if (st == NPU_OK)
        sim_sync_findings(s);
    return st;
}

npu_status npu_sim_run(npu_sim *s, const npu_run_opts *opts, npu_diag *d)
{
    npu_run_opts def = {NPU_MODE_FUNC, 0, 0};
    if (!opts)
        opts = &def;
    if (!s->loaded)
        return npu_errf(d, NPU_EINVAL, "run: no kernel loaded");
    if (opts->mode != NPU_MODE_FUNC && opts->mode != NPU_MODE_PERF &&
        opts->mode != NPU_MODE_TIMING)
        return npu_errf(d, NPU_EINVAL, "run: unknown mode %d", (int)opts->mode);
    npu_status st = sim_run_begin(s, opts->mode, opts->max_insns, "run", d);
    if (st)
        return st;
    if (opts->mode != NPU_MODE_FUNC)
        return sim_run_timed(s, opts->max_cycles, NULL, 0, d);
    st = sim_run_func(s, d);
    if (st == NPU_OK)
        sim_sync_findings(s);
    return st;
}
