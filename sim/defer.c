/* defer.c — perf mode's deferred data work, and the host thread that
 * computes it.
 *
 * In perf mode the timing engine dispatches the cores' instructions one at a
 * time in simulated-time order, and a unit instruction used to compute its
 * data right there. Twenty-four cores interleaved instruction by
 * instruction evict each other's buffers from the host's caches: a 4096^3
 * GEMM spent three seconds more in perf mode than func and timing mode
 * together, in the transposes, decodes and copies.
 *
 * So in perf mode (s->defer, set by the timing engine when no observer
 * watches accesses) a unit instruction is checked and accounted at
 * dispatch, with its unit in nodata mode exactly as in timing mode (the
 * work it reports and the GM ranges it touches do not depend on data, and
 * the executor checks those ranges against GM's allocations there), and
 * its data is computed later, in a batch of the same core's instructions
 * in program order, from a copy of the registers and vector mask it read.
 * The results are those of computing at dispatch:
 *   - within a core, program order is kept;
 *   - between cores only GM is shared: a core's deferred instructions are
 *     summarised by the GM interval they read and the one they write, and
 *     before an instruction whose ranges conflict with another core's
 *     deferred ones (a write against a read or a write), that core's batch
 *     is handed on first. Batches are computed in the order they are
 *     handed on, so every conflicting pair is computed in dispatch order;
 *   - a scalar GM access computes every core's deferred work first and
 *     waits for it; the end of a run, all of it. (No unit reaches the
 *     scalar buffer: no data path leads there, so scalar-buffer accesses
 *     need nothing.)
 *
 * The worker. Nothing on the engine's side reads what a batch computes
 * (data never steers the engine: that is what makes timing mode possible),
 * so with a second host CPU a batch handed on is computed by a worker
 * thread while the engine goes on: perf mode then takes about the longer
 * of the two, not their sum. The worker takes batches in the order they
 * were handed on (one FIFO), which is the order the rule above needs. The
 * engine waits for it only where it reads GM itself (scalar GM accesses,
 * the end of the run) and when every batch buffer is in flight. The engine
 * never touches GM's lookup cache or pages meanwhile: its dispatch-time
 * range check uses its own cache (sim_gm_check).
 *
 * Faults. Only two things can fail in the data pass: a bad 2:4 metadata
 * nibble of mmad.sp (data, so only the data pass sees it) and host memory.
 * A kernel that contains mmad.sp runs without the worker, so its fault
 * stops the run exactly where computing at the flush would. A failure in
 * the worker is recorded with its core, pc and dispatch cycle; the engine
 * reports it at its next hand-over, or at the end of the run, ahead of any
 * error of its own (computing at the flush would have stopped the run
 * first). Every entry carries the number of hand-overs before it
 * (hseq): after a failure in batch F the worker computes only what was
 * dispatched before F was handed on, which is what the synchronous path
 * leaves (the run stopped there, and its end computes the batches
 * then pending), so a failed run leaves the same GM either way.
 *
 * NPUSIM_THREADS=1 in the environment keeps everything on one thread
 * (npu_host_threads). */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/sim_int.h"

#define SIM_DEFER_BATCH 1024   /* ops a core defers at most (64 measured ~10 % slower at 4096^3) */

typedef struct sim_defer {
    isa_insn in;
    uint64_t pc, cycle;
    uint64_t hseq;          /* hand-overs (s->dseq) before this entry was deferred */
    uint64_t r[5];          /* x[rd], x[rs1], x[rs2], x[rs3], x[rs4] at dispatch */
    sim_vmask vm;
    int unit;
} sim_defer;

typedef struct dw_job {
    int core;
    uint32_t n;
    uint64_t seq;           /* its hand-over number */
    sim_defer *e;
    sim_unit_ctx u;         /* the core's buffers, computing */
} dw_job;

typedef struct sim_dworker sim_dworker;
struct sim_dworker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t work;    /* to the worker: a job, or stop */
    pthread_cond_t done;    /* to the engine: a job finished */
    dw_job *ring;           /* jobs in hand-over order; the head stays until computed */
    uint32_t cap, head, n;  /* cap: also the most batch buffers (each job holds one) */
    int stop;
    sim_defer **freeb;      /* batch buffers not held by a core or a job */
    uint32_t nfree, nbuf;
    int failed;             /* written under mu; read by the engine with an atomic load */
    npu_status est;         /* the first failure: */
    int ecore;
    uint64_t epc, ecycle, eseq;
    char emsg[sizeof(((npu_diag *)0)->msg)];
    int cube_variant1;      /* the cube's host kernel, looked up once per run */
    uint64_t batches;       /* computed here */
};

/* ---- the host thread count ------------------------------------------------ */

int npu_host_threads(void)
{
    const char *v = getenv("NPUSIM_THREADS");
    if (v && *v && strcmp(v, "auto") != 0) {
        uint64_t n;
        return npu_parse_u64(v, &n) || n < 1 || n > 1024 ? -1 : (int)n;
    }
    cpu_set_t cs;
    if (sched_getaffinity(0, sizeof cs, &cs) == 0)
        return CPU_COUNT(&cs) > 1 ? 2 : 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1 ? 2 : 1;
}

/* ---- computing a batch ------------------------------------------------------ */

/* Compute entries of e[0, n) dispatched before hand-over `upto` (all when
 * UINT64_MAX) on u's buffers; a failure stops the batch, *at = its entry. */
static npu_status run_batch(sim_unit_ctx *u, sim_defer *e, uint32_t n, uint64_t upto, uint32_t *at,
                            npu_diag *ud)
{
    uint64_t x[32] = { 0 };
    npu_status st = NPU_OK;
    u->x = x;
    for (uint32_t i = 0; i < n && !st; i++) {
        sim_defer *q = &e[i];
        if (q->hseq > upto)
            break;   /* (program order: hseq never falls along a batch) */
        x[q->in.rd] = q->r[0];
        x[q->in.rs1] = q->r[1];
        x[q->in.rs2] = q->r[2];
        x[q->in.rs3] = q->r[3];
        x[q->in.rs4] = q->r[4];
        u->vmask = &q->vm;
        sim_work w;
        st = sim_unit_run(u, q->unit, &q->in, &w, ud);
        *at = i;
    }
    u->x = NULL;   /* (x is this frame's) */
    return st;
}

/* The run's unit context (set up before anything was deferred) on core's
 * buffers, computing, with no access sink: the accesses were reported at
 * dispatch. */
static sim_unit_ctx data_ctx(const npu_sim *s, const sim_core *c)
{
    sim_unit_ctx u = s->uctx;
    for (int sp = SIM_SP_L1; sp < SIM_SP_COUNT; sp++) {
        u.buf[sp] = c->buf[sp];
        u.size[sp] = c->bufsize[sp];
    }
    u.nodata = 0;
    u.access = NULL;
    return u;
}

/* The fault of entry (core, pc, dispatch cycle): the core's report names
 * the cycle the instruction was dispatched in. */
static npu_status data_fault(npu_sim *s, int core, uint64_t pc, uint64_t cycle, npu_status st,
                             const char *msg, npu_diag *d)
{
    sim_core *c = &s->cores[core];
    uint64_t now = c->cycle;
    c->cycle = cycle;
    st = sim_fault(s, core, pc, st, d, "%s", msg);
    c->cycle = now;
    return st;
}

/* ---- the worker ---------------------------------------------------------------- */

static void *dw_main(void *arg)
{
    sim_dworker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->n && !w->stop)
            pthread_cond_wait(&w->work, &w->mu);
        if (!w->n)
            break;
        dw_job *j = &w->ring[w->head];
        uint64_t upto = w->failed ? w->eseq : UINT64_MAX;
        pthread_mutex_unlock(&w->mu);

        j->u.cube_variant1 = w->cube_variant1;
        uint32_t at = 0;
        npu_diag ud;
        npu_status st = run_batch(&j->u, j->e, j->n, upto, &at, &ud);
        w->cube_variant1 = j->u.cube_variant1;

        pthread_mutex_lock(&w->mu);
        if (st && !w->failed) {
            w->est = st;
            w->ecore = j->core;
            w->epc = j->e[at].pc;
            w->ecycle = j->e[at].cycle;
            w->eseq = j->seq;
            memcpy(w->emsg, ud.msg, sizeof w->emsg);
            __atomic_store_n(&w->failed, 1, __ATOMIC_RELEASE);
        }
        w->batches++;
        w->freeb[w->nfree++] = j->e;
        w->head = w->head + 1 == w->cap ? 0 : w->head + 1;
        w->n--;
        pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Wait until the worker has computed everything handed on. */
static void dw_drain(sim_dworker *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->n)
        pthread_cond_wait(&w->done, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* The worker's first failure as the run's fault (call after dw_drain or
 * once failed is seen: the record is written before the flag). */
static npu_status dw_report(npu_sim *s, npu_diag *d)
{
    sim_dworker *w = s->dw;
    pthread_mutex_lock(&w->mu);
    npu_status st = w->est;
    int core = w->ecore;
    uint64_t pc = w->epc, cycle = w->ecycle;
    char msg[sizeof w->emsg];
    memcpy(msg, w->emsg, sizeof msg);
    pthread_mutex_unlock(&w->mu);
    return data_fault(s, core, pc, cycle, st, msg, d);
}

static int dw_failed(const npu_sim *s)
{
    return s->dw && __atomic_load_n(&s->dw->failed, __ATOMIC_ACQUIRE);
}

/* Hand core's batch to the worker; the core gets an empty buffer. 1 when
 * no buffer could be had (out of host memory): the caller computes. */
static int dw_handoff(npu_sim *s, int core)
{
    sim_dworker *w = s->dw;
    sim_core *c = &s->cores[core];
    sim_defer *nb = NULL;
    pthread_mutex_lock(&w->mu);
    while (!w->nfree && w->nbuf >= w->cap)
        pthread_cond_wait(&w->done, &w->mu);
    if (w->nfree)
        nb = w->freeb[--w->nfree];
    else if ((nb = npu_malloc(SIM_DEFER_BATCH * sizeof *nb)) != NULL)
        w->nbuf++;
    if (!nb) {
        pthread_mutex_unlock(&w->mu);
        return 1;
    }
    uint32_t i = w->head + w->n;
    if (i >= w->cap)
        i -= w->cap;
    dw_job *j = &w->ring[i];
    j->core = core;
    j->n = c->ndq;
    j->seq = s->dseq;
    j->e = c->dq;
    j->u = data_ctx(s, c);
    w->n++;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    c->dq = nb;
    c->capdq = SIM_DEFER_BATCH;
    return 0;
}

void sim_defer_begin(npu_sim *s)
{
    s->dseq = 0;
    s->dw = NULL;
    s->dw_batches = 0;
    if (!s->defer || npu_host_threads() < 2 || npu_alloc_fail_armed())
        return;
    /* a data-pass fault the engine cannot foresee (mmad.sp metadata) must
     * stop the run where it happens: such kernels compute on this thread */
    for (size_t i = 0; i < s->ntext; i++)
        if (s->text[i].in.op == ISA_OP_MMADSP)
            return;
    sim_dworker *w = npu_calloc(1, sizeof *w);
    if (!w)
        return;
    w->cap = (uint32_t)(2 * s->ncores + 8);
    w->ring = npu_calloc(w->cap, sizeof *w->ring);
    w->freeb = npu_calloc(w->cap, sizeof *w->freeb);
    w->cube_variant1 = s->uctx.cube_variant1;
    if (!w->ring || !w->freeb)
        goto fail;
    if (pthread_mutex_init(&w->mu, NULL))
        goto fail;
    if (pthread_cond_init(&w->work, NULL) || pthread_cond_init(&w->done, NULL) ||
        pthread_create(&w->th, NULL, dw_main, w)) {
        /* (the conditions of a failed init are never used) */
        pthread_mutex_destroy(&w->mu);
        goto fail;
    }
    s->dw = w;
    return;
fail:
    npu_free(w->ring);
    npu_free(w->freeb);
    npu_free(w);
}

static void dw_stop(npu_sim *s)
{
    sim_dworker *w = s->dw;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    if (w->cube_variant1)
        s->uctx.cube_variant1 = w->cube_variant1;
    s->dw_batches = w->batches;
    for (uint32_t i = 0; i < w->nfree; i++)
        npu_free(w->freeb[i]);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->done);
    pthread_mutex_destroy(&w->mu);
    npu_free(w->ring);
    npu_free(w->freeb);
    npu_free(w);
    s->dw = NULL;
}

/* ---- the engine's side ------------------------------------------------------------ */

npu_status sim_defer_flush(npu_sim *s, int core, npu_diag *d)
{
    sim_core *c = &s->cores[core];
    if (!c->ndq)
        return NPU_OK;
    npu_status st = NPU_OK;
    if (!s->dw || dw_handoff(s, core)) {
        if (s->dw)
            dw_drain(s->dw);   /* (no buffer: compute here, after what is in flight) */
        sim_unit_ctx u = data_ctx(s, c);
        uint32_t at = 0;
        npu_diag ud;
        uint64_t upto = dw_failed(s) ? s->dw->eseq : UINT64_MAX;
        st = run_batch(&u, c->dq, c->ndq, upto, &at, &ud);
        s->uctx.cube_variant1 = u.cube_variant1;
        if (st)
            st = data_fault(s, core, c->dq[at].pc, c->dq[at].cycle, st, ud.msg, d);
    }
    s->dseq++;
    c->ndq = 0;
    c->dq_rlo = c->dq_rhi = c->dq_wlo = c->dq_whi = 0;
    s->ndefer--;
    if (!st && dw_failed(s))
        st = dw_report(s, d);
    return st;
}

npu_status sim_defer_flush_all(npu_sim *s, npu_diag *d)
{
    npu_status st = NPU_OK;
    npu_diag more;
    for (int k = 0; k < s->ncores && s->ndefer; k++) {
        npu_status e = sim_defer_flush(s, k, st ? &more : d);
        if (e && !st)
            st = e;
    }
    if (s->dw) {
        dw_drain(s->dw);
        if (!st && dw_failed(s))
            st = dw_report(s, d);
    }
    return st;
}

int sim_defer_pending(const npu_sim *s)
{
    return s->ndefer || s->dw;
}

npu_status sim_defer_end(npu_sim *s, npu_status st, npu_diag *d)
{
    if (st && s->dw) {
        /* the engine stopped on an error of its own: a failure the worker
         * found in a batch handed on before it came first */
        dw_drain(s->dw);
        if (dw_failed(s)) {
            s->faulted = 0;
            st = dw_report(s, d);
        }
    }
    if (sim_defer_pending(s)) {
        /* the data of what was dispatched (also after an error: the state
         * a failed run leaves is that of computing at dispatch) */
        npu_diag fd;
        npu_status fs = sim_defer_flush_all(s, st ? &fd : d);
        if (!st)
            st = fs;
    }
    dw_stop(s);
    return st;
}

static int overlaps(uint64_t alo, uint64_t ahi, uint64_t blo, uint64_t bhi)
{
    return alo < ahi && blo < bhi && alo < bhi && blo < ahi;
}

npu_status sim_defer_push(npu_sim *s, int core, const isa_insn *in, uint64_t pc, int unit,
                          const sim_gm_bounds *b, npu_diag *d)
{
    sim_core *c = &s->cores[core];
    npu_status st;
    if ((b->rhi || b->whi) && s->ndefer > (c->ndq ? 1 : 0))
        for (int k = 0; k < s->ncores; k++) {
            const sim_core *o = &s->cores[k];
            if (k == core || !o->ndq)
                continue;
            if (overlaps(b->wlo, b->whi, o->dq_rlo, o->dq_rhi) ||
                overlaps(b->wlo, b->whi, o->dq_wlo, o->dq_whi) ||
                overlaps(b->rlo, b->rhi, o->dq_wlo, o->dq_whi))
                if ((st = sim_defer_flush(s, k, d)))
                    return st;
        }
    if (c->ndq == c->capdq) {
        uint32_t nc = c->capdq ? 2 * c->capdq : SIM_DEFER_BATCH;
        sim_defer *n = npu_realloc(c->dq, (size_t)nc * sizeof *n);
        if (!n)
            return sim_fault(s, core, pc, NPU_ENOMEM, d, "out of host memory for deferred work");
        c->dq = n;
        c->capdq = nc;
    }
    sim_defer *e = &c->dq[c->ndq];
    e->in = *in;
    e->pc = pc;
    e->cycle = c->cycle;
    e->hseq = s->dseq;
    e->r[0] = c->x[in->rd];
    e->r[1] = c->x[in->rs1];
    e->r[2] = c->x[in->rs2];
    e->r[3] = c->x[in->rs3];
    e->r[4] = c->x[in->rs4];
    e->vm = c->vmask;
    e->unit = unit;
    if (c->ndq++ == 0)
        s->ndefer++;
    if (b->rhi) {
        c->dq_rlo = c->dq_rhi ? NPU_MIN(c->dq_rlo, b->rlo) : b->rlo;
        c->dq_rhi = NPU_MAX(c->dq_rhi, b->rhi);
    }
    if (b->whi) {
        c->dq_wlo = c->dq_whi ? NPU_MIN(c->dq_wlo, b->wlo) : b->wlo;
        c->dq_whi = NPU_MAX(c->dq_whi, b->whi);
    }
    return c->ndq >= SIM_DEFER_BATCH ? sim_defer_flush(s, core, d) : NPU_OK;
}
