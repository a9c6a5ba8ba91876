/* timing.c — the event-driven timing engine (see timing.h, docs/timing.md).
 *
 * Data structures, in one breath:
 *   - one event queue for the whole launch (isa/npu_calq.h), ordered by
 *     (cycle, creation sequence): that order is the only order, so runs
 *     are deterministic;
 *   - per core: the scalar unit's state machine (issue, stalled on a full
 *     queue, waiting on a flag, draining for a barrier or halt, at the
 *     cross-core barrier, waiting on a GM scalar load), the flag FIFOs, and
 *     per pipe an in-order ring of dispatched instructions plus the one
 *     instruction executing;
 *   - the memory system behind a small vtable (tm_mem): memmodel's mem_sys
 *     (L2 + HBM) or the fixed port (latency + one shared bandwidth), both with
 *     the DRAMSim3 shape: submit (can-accept and submit in one call: a
 *     refused request changes nothing), advance_to, next_event and a
 *     completion callback.
 * Wake-ups carry a generation number so that a unit woken twice for the same
 * moment runs once. */
#include "sim/timing.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "isa/npu_calq.h"
#include "sim/cost.h"

#ifdef MEM_H
#define TM_HAVE_MEMMODEL 1   /* config.h carries memmodel's mem_config */
#else
#define TM_HAVE_MEMMODEL 0
#endif

#define TM_NONE UINT64_MAX
#define TM_NP ISA_NPIPES

const char *sim_stall_name(int cause)
{
    static const char *const names[SIM_STALL__COUNT] = {
#define STALL(id, name, doc) name,
#include "isa/stalls.def"
#undef STALL
    };
    return cause >= 0 && cause < SIM_STALL__COUNT ? names[cause] : "?";
}

void sim_timing_stats_free(sim_timing_stats *st)
{
    if (!st)
        return;
    npu_free(st->core);
    st->core = NULL;
    st->ncores = 0;
}

/* ===================================================================== *
 *  Events
 * ===================================================================== */

enum { EV_SCALAR, EV_PIPE, EV_DONE, EV_GMSUB, EV_RELEASE, EV_SANSWER };

/* An engine event: what it wakes (type, core, pipe) and the wake-up
 * generation it was made for; queued in the shared calendar queue
 * (isa/npu_calq.h: (cycle, creation sequence) order, the only order, so
 * runs are deterministic) as two words. */
typedef struct tm_ev {
    uint64_t t;
    uint32_t gen;
    uint8_t type, pipe;
    int core;
} tm_ev;

static int tmq_push(npu_calq *q, const tm_ev *e)
{
    return npu_calq_push(q, e->t, (uint64_t)e->gen | (uint64_t)e->type << 32 | (uint64_t)e->pipe << 40,
                         (uint64_t)(uint32_t)e->core);
}

/* Take the next event if it is at cycle t: 1, else 0. */
static int tmq_pop_at(npu_calq *q, uint64_t t, tm_ev *e)
{
    npu_cev c;
    if (npu_calq_next(q) != t || !npu_calq_pop(q, &c))
        return 0;
    e->t = c.t;
    e->gen = (uint32_t)c.a;
    e->type = (uint8_t)(c.a >> 32);
    e->pipe = (uint8_t)(c.a >> 40);
    e->core = (int)(uint32_t)c.b;
    return 1;
}

/* ===================================================================== *
 *  The memory system interface (fixed port or memmodel)
 * ===================================================================== */

typedef void (*tm_done_fn)(void *user, uint64_t tag, uint64_t cycle);

typedef struct tm_mem {
    void *impl;
    /* submit where the model can take the request now (*taken = 1); a
     * refused one (*taken = 0, NPU_OK) changes nothing */
    npu_status (*submit)(void *impl, uint64_t addr, uint32_t bytes, int is_write, int core,
                         uint64_t cycle, uint64_t tag, int *taken, npu_diag *d);
    void (*advance_to)(void *impl, uint64_t cycle);
    /* NULL, or: NPU_ENOMEM once the model lost work to a failed allocation */
    npu_status (*status)(void *impl);
    uint64_t (*next_event)(void *impl);
    /* moves only while the model advances, whenever room may have
     * appeared (see mem_sys_accept_epoch): a refused request waits for it */
    uint64_t (*accept_epoch)(void *impl);
    void (*free)(void *impl);
    uint32_t line;       /* requests never cross a line of this size */
    int line_shift;      /* log2(line) when a power of two, else -1 */
    /* next_event is asked once per distinct cycle; it only changes after a
     * submit or an advance, so it is cached between those */
    uint64_t next_cache;
    int next_valid;
} tm_mem;

static uint64_t mem_next_ev(tm_mem *m)
{
    if (!m->next_valid) {
        m->next_cache = m->next_event(m->impl);
        m->next_valid = 1;
    }
    return m->next_cache;
}

/* The fixed port: one FCFS server of `bw` bytes per cycle shared by every
 * core, then a fixed latency. The server's free time only grows and the
 * latency is one number, so answers are due in submission order: they wait
 * in a FIFO (a ring that doubles when full) and are delivered from its head
 * in (cycle, submission) order. */
typedef struct tm_fixed_done { uint64_t t, tag; } tm_fixed_done;
typedef struct tm_fixed {
    double bw, free_at;
    uint64_t lat;
    tm_fixed_done *a;
    size_t head, n, cap;   /* cap: 0 or a power of two */
    tm_done_fn done;
    void *user;
} tm_fixed;

static uint64_t fixed_accept_epoch(void *impl)
{
    (void)impl;
    return 0;   /* (never asked: the port refuses nothing) */
}

static npu_status fixed_submit(void *impl, uint64_t addr, uint32_t bytes, int is_write,
                               int core, uint64_t cycle, uint64_t tag, int *taken, npu_diag *d)
{
    tm_fixed *f = impl;
    (void)addr; (void)is_write; (void)core;
    *taken = 1;   /* the port refuses nothing */
    double start = f->free_at > (double)cycle ? f->free_at : (double)cycle;
    f->free_at = start + (double)bytes / f->bw;
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 256;
        tm_fixed_done *na = npu_malloc(nc * sizeof *na);
        if (!na)
            return npu_errf(d, NPU_ENOMEM, "timing: out of memory (GM port queue)");
        for (size_t i = 0; i < f->n; i++)
            na[i] = f->a[(f->head + i) & (f->cap - 1)];
        npu_free(f->a);
        f->a = na;
        f->head = 0;
        f->cap = nc;
    }
    f->a[(f->head + f->n++) & (f->cap - 1)] =
        (tm_fixed_done){ (uint64_t)ceil(f->free_at - 1e-9) + f->lat, tag };
    return NPU_OK;
}

static void fixed_advance_to(void *impl, uint64_t cycle)
{
    tm_fixed *f = impl;
    while (f->n && f->a[f->head].t <= cycle) {
        tm_fixed_done top = f->a[f->head];
        f->head = (f->head + 1) & (f->cap - 1);
        f->n--;
        f->done(f->user, top.tag, top.t);
    }
}

static uint64_t fixed_next_event(void *impl)
{
    tm_fixed *f = impl;
    return f->n ? f->a[f->head].t : TM_NONE;
}

static void fixed_free(void *impl)
{
    tm_fixed *f = impl;
    if (f) {
        npu_free(f->a);
        npu_free(f);
    }
}

#if TM_HAVE_MEMMODEL
static npu_status sys_submit(void *impl, uint64_t addr, uint32_t bytes, int is_write, int core,
                             uint64_t cycle, uint64_t tag, int *taken, npu_diag *d)
{
    mem_req r = { addr, bytes, is_write, core, cycle, tag };
    npu_status st = mem_sys_try_submit(impl, &r, taken);
    if (st)
        return npu_errf(d, st, "timing: memory system refused a request at 0x%" PRIx64, addr);
    return NPU_OK;
}
static void sys_advance_to(void *impl, uint64_t cycle) { mem_sys_advance_to(impl, cycle); }
static npu_status sys_status(void *impl) { return mem_sys_status(impl); }
static uint64_t sys_next_event(void *impl) { return mem_sys_next_event(impl); }
static uint64_t sys_accept_epoch(void *impl) { return mem_sys_accept_epoch(impl); }
static void sys_free(void *impl) { mem_sys_free(impl); }
#endif

/* ===================================================================== *
 *  Engine state
 * ===================================================================== */

enum { K_EXEC, K_GM, K_SET, K_WAIT, K_BAR };

/* One dispatched, not yet finished, non-scalar instruction. */
typedef struct tm_ent {
    uint64_t seq, pc, dispatch;
    isa_insn in;
    uint8_t kind;
    int8_t path;
    uint64_t dur;        /* K_EXEC / K_BAR: pipe cycles; K_GM: on-chip part (latency) */
    uint64_t conflict;   /* part of dur due to UB bank conflicts */
    uint64_t bytes;      /* K_GM: payload streamed at the path width */
    uint32_t nranges;    /* K_GM: its ranges, next in the pipe's range FIFO */
} tm_ent;

/* GM byte ranges of queued moves, consumed in order (a FIFO arena), run-
 * length encoded: one tm_run stands for `count` ranges of `len` bytes at
 * addr, addr + stride, ... (the rows of a strided move). A GEMM tile load is
 * 128 ranges; as one 32-byte record instead of 128 x 24 bytes the FIFOs of
 * 24 cores stay in the host's cache (their misses were a tenth of the
 * engine's time in a 4096^3 timing run). The ranges, their order and the
 * requests cut from them are exactly those of the unencoded list. */
typedef struct tm_run {
    uint64_t addr;       /* the first range */
    uint64_t stride;     /* range k starts at addr + k * stride (0 while count is 1) */
    uint64_t len;        /* bytes of each range */
    uint32_t count;
    int is_write;
} tm_run;

typedef struct tm_rfifo {
    tm_run *r;
    size_t head, tail, cap;
    size_t mstart;       /* first record of the move being pushed (runs never span moves) */
    sim_gm_range pend;   /* the move's last range, still growing by contiguous merges */
    int have_pend;
} tm_rfifo;

typedef struct tm_pipe {
    tm_ent *q;           /* ring of `cap` = queue depth entries */
    uint32_t head, n, cap;
    int busy;
    tm_ent cur;          /* executing when busy */
    uint64_t start;
    uint64_t wait_since; /* head blocked on a flag since (TM_NONE: not) */
    uint32_t gen;        /* wake-up generation */
    uint64_t wake_t;     /* pending wake-up time (TM_NONE: none) */
    tm_rfifo rf;
    /* the GM move being streamed */
    struct {
        size_t ri, rend;      /* records [ri, rend) of rf */
        uint64_t k;           /* range k of record ri */
        uint64_t off;         /* bytes of that range already sent */
        uint64_t sent, outstanding, last_done, local_end;
        int all_sent;
    } gm;
} tm_pipe;

#define TM_FLAG_FIFO 8
typedef struct tm_flag {
    uint64_t vis[TM_FLAG_FIFO], set_seq[TM_FLAG_FIFO];
    uint8_t head, n;
} tm_flag;

enum { S_RUN, S_QFULL, S_WAITF, S_DRAIN, S_BARRIER, S_GMLOAD, S_GMSUB, S_DONE };
enum { DR_PBAR, DR_SYNC, DR_HALT };

typedef struct tm_core {
    tm_pipe pipe[TM_NP];
    tm_flag flag[TM_NP][TM_NP][SIM_NFLAG_IDS];
    int state, drain_kind;
    uint64_t s_ready;
    uint32_t s_gen;
    uint64_t s_wake_t;
    tm_ent pend;         /* S_QFULL: the instruction waiting for queue space */
    int pend_pipe;
    isa_insn wait_in;    /* S_WAITF: the wait_flag on S */
    uint64_t wait_seq, wait_pc;
    uint64_t stall_since;
    uint64_t seq;
    uint64_t last_pc;    /* the last instruction the scalar unit issued */
    isa_insn last_in;
    uint64_t gm_out;     /* S_GMLOAD: outstanding requests */
    uint64_t gm_last;
    /* S_GMSUB: the scalar GM access the memory system has not taken yet
     * (ranges [sg_i, sg_n) of sg, sg_off bytes of sg[sg_i] already sent);
     * the access executed functionally at issue, only its requests wait */
    sim_gm_range *sg;
    uint32_t sg_n, sg_cap, sg_i;
    uint64_t sg_off;
    int sg_store;        /* sdg / swg: the scalar unit does not wait for the answer */
    uint64_t end;
} tm_core;

typedef struct tm {
    npu_sim *s;
    const cfg_machine *m;
    const sim_timing_observer *obs;
    sim_timing_stats *st;
    int ncores;
    tm_core *core;
    npu_calq *q;         /* the event queue (npu_malloc'd: 8 KB of slot heads and tails) */
    tm_mem mem;
    uint64_t now, max_cycles;
    /* per data path: width in bytes per cycle (0 in the config counts as
     * 1) and its log2 when a power of two, else -1 (gm_pump's pacing) */
    uint64_t path_width[CFG_PATH__COUNT];
    int path_wshift[CFG_PATH__COUNT];
    uint64_t path_wmul[CFG_PATH__COUNT];   /* width no power of 2: 2^64 / width + 1 (pace_div) */
    int arrived;         /* cores at the cross-core barrier */
    uint64_t arrive_max;
    int finished;        /* cores done */
    /* Requests the memory system refused wait here, oldest first, until its
     * accept epoch moves past the one they saw (mem_block, mem_unblock):
     * their retry times then follow the model's own state changes, not the
     * events it happens to schedule (an idle tick skipped or not). p is a
     * data-move pipe or ISA_PIPE_S (the scalar unit, not before nb). */
    struct tm_waiter { int c, p; uint64_t epoch, nb; } *mw;
    size_t mw_head, mw_n, mw_cap;
    npu_status err;      /* first error raised inside a callback */
    npu_diag *d;
} tm;

/* ---- small helpers ------------------------------------------------------- */

static npu_status oom(tm *T)
{
    return npu_errf(T->d, NPU_ENOMEM, "timing: out of memory");
}

/* The memory model lost work to a failed allocation (its status is sticky,
 * so it is asked only where a run ends: normally, in a deadlock or at the
 * watchdog, never per step). A lost completion leaves cores waiting: that
 * is reported as what it is, not as a deadlock. */
static int mem_lost(tm *T) { return T->mem.status && T->mem.status(T->mem.impl) != NPU_OK; }

static npu_status mem_lost_err(tm *T, npu_diag *d)
{
    return npu_errf(d, NPU_ENOMEM, "timing: out of memory in the memory model by cycle %" PRIu64,
                    T->now);
}

static npu_status push_ev(tm *T, uint64_t t, int type, int core, int pipe, uint32_t gen)
{
    tm_ev e = { t < T->now ? T->now : t, gen, (uint8_t)type, (uint8_t)pipe, core };
    return tmq_push(T->q, &e) ? oom(T) : NPU_OK;
}

static npu_status wake_scalar(tm *T, int c, uint64_t t)
{
    tm_core *k = &T->core[c];
    if (t < T->now)
        t = T->now;
    if (k->s_wake_t != TM_NONE && k->s_wake_t <= t)
        return NPU_OK;
    k->s_wake_t = t;
    return push_ev(T, t, EV_SCALAR, c, 0, ++k->s_gen);
}

static npu_status wake_pipe(tm *T, int c, int p, uint64_t t)
{
    tm_pipe *pp = &T->core[c].pipe[p];
    if (t < T->now)
        t = T->now;
    if (pp->wake_t != TM_NONE && pp->wake_t <= t)
        return NPU_OK;
    pp->wake_t = t;
    return push_ev(T, t, EV_PIPE, c, p, ++pp->gen);
}

/* The memory system refused a request of pipe p of core c (ISA_PIPE_S:
 * the scalar unit, which may go on no earlier than nb): wait for room. */
static npu_status mem_block(tm *T, int c, int p, uint64_t nb)
{
    if (T->mw_head + T->mw_n == T->mw_cap) {
        if (T->mw_head) {
            memmove(T->mw, T->mw + T->mw_head, T->mw_n * sizeof *T->mw);
            T->mw_head = 0;
        } else {
            size_t nc = T->mw_cap ? 2 * T->mw_cap : 64;
            struct tm_waiter *n = npu_realloc(T->mw, nc * sizeof *n);
            if (!n)
                return oom(T);
            T->mw = n;
            T->mw_cap = nc;
        }
    }
    T->mw[T->mw_head + T->mw_n++] =
        (struct tm_waiter){ c, p, T->mem.accept_epoch(T->mem.impl), nb };
    return NPU_OK;
}

static npu_status gm_pump(tm *T, int c, int p, uint64_t t);

/* Retry, at t, every waiter that saw an older accept epoch, oldest first
 * (before the events of t: a blocked request goes ahead of new ones).
 * Epochs grow along the FIFO, so those waiters are a prefix; one refused
 * again goes to the back with the new epoch. */
static npu_status mem_unblock(tm *T, uint64_t t)
{
    uint64_t ep = T->mem.accept_epoch(T->mem.impl);
    size_t n = 0;
    while (n < T->mw_n && T->mw[T->mw_head + n].epoch != ep)
        n++;
    npu_status st = NPU_OK;
    for (size_t i = 0; i < n && !st; i++) {
        struct tm_waiter w = T->mw[T->mw_head];
        T->mw_head++;
        T->mw_n--;
        if (w.p == ISA_PIPE_S)
            st = wake_scalar(T, w.c, w.nb > t ? w.nb : t);
        else
            st = gm_pump(T, w.c, w.p, t);
    }
    if (!T->mw_n)
        T->mw_head = 0;
    return st;
}

static void stall(tm *T, int c, int pipe, int cause, uint64_t seq, uint64_t pc, uint64_t from,
                  uint64_t to)
{
    if (to <= from)
        return;
    T->st->core[c].stall[pipe][cause] += to - from;
    if (T->obs && T->obs->on_stall)
        T->obs->on_stall(T->obs->user, c, pipe, cause, seq, pc, from, to);
}

static void exec_ev(tm *T, int c, int pipe, const tm_ent *e, uint64_t start, uint64_t end)
{
    if (T->obs && T->obs->on_exec)
        T->obs->on_exec(T->obs->user, c, pipe, e->seq, e->pc, &e->in, start, end);
}

static int core_drained(const tm_core *k)
{
    for (int p = 1; p < TM_NP; p++)
        if (k->pipe[p].busy || k->pipe[p].n)
            return 0;
    return 1;
}

/* ---- GM range FIFO ------------------------------------------------------- */

/* Append a range of a move to pipe pp's FIFO. Contiguous ranges of one move
 * (bursts whose stride equals their length) coalesce into one stream;
 * `first` marks a move's first range, which never merges into the previous
 * move's. The last range stays pending (rf.pend) while it can still grow;
 * rf_end commits it at the end of the move. Compaction shifts the indexes
 * of the move being streamed. */
static int rf_commit(tm_pipe *pp)
{
    tm_rfifo *f = &pp->rf;
    const sim_gm_range *r = &f->pend;
    f->have_pend = 0;
    if (f->tail > f->mstart && f->tail > f->head) {
        tm_run *d = &f->r[f->tail - 1];
        if (d->is_write == r->is_write && d->len == r->len && d->count < UINT32_MAX) {
            if (d->count == 1 && r->addr > d->addr) {
                d->stride = r->addr - d->addr;
                d->count = 2;
                return 0;
            }
            if (d->count > 1 && r->addr == d->addr + (uint64_t)d->count * d->stride) {
                d->count++;
                return 0;
            }
        }
    }
    if (f->tail == f->cap) {
        if (f->head > 0) {
            memmove(f->r, f->r + f->head, (f->tail - f->head) * sizeof *f->r);
            if (pp->busy && pp->cur.kind == K_GM && !pp->gm.all_sent) {
                pp->gm.ri -= f->head;
                pp->gm.rend -= f->head;
            }
            f->mstart -= f->head;
            f->tail -= f->head;
            f->head = 0;
        }
        if (f->tail == f->cap) {
            size_t nc = f->cap ? f->cap * 2 : 64;
            tm_run *nr = npu_realloc(f->r, nc * sizeof *nr);
            if (!nr)
                return -1;
            f->r = nr;
            f->cap = nc;
        }
    }
    tm_run *d = &f->r[f->tail++];
    d->addr = r->addr;
    d->stride = 0;
    d->len = r->len;
    d->count = 1;
    d->is_write = r->is_write;
    return 0;
}

static int rf_push(tm_pipe *pp, const sim_gm_range *r, int first)
{
    tm_rfifo *f = &pp->rf;
    if (first)
        f->mstart = f->tail;
    if (f->have_pend) {
        if (!first && f->pend.is_write == r->is_write && f->pend.addr + f->pend.len == r->addr) {
            f->pend.len += r->len;
            return 0;
        }
        if (rf_commit(pp))
            return -1;
    }
    f->pend = *r;
    f->have_pend = 1;
    return 0;
}

static int rf_end(tm_pipe *pp)
{
    return pp->rf.have_pend ? rf_commit(pp) : 0;
}

/* ===================================================================== *
 *  Flags
 * ===================================================================== */

static npu_status flag_set(tm *T, int c, int sp, int dp, int id, uint64_t t, uint64_t seq)
{
    tm_core *k = &T->core[c];
    tm_flag *f = &k->flag[sp][dp][id & (SIM_NFLAG_IDS - 1)];
    uint64_t vis = t + T->m->sync.flag_latency;
    if (f->n < TM_FLAG_FIFO) {
        int i = (f->head + f->n) % TM_FLAG_FIFO;
        f->vis[i] = vis;
        f->set_seq[i] = seq;
        f->n++;
    }
    /* (a set beyond TM_FLAG_FIFO pending merges: the executor reports the
     * flag set twice as a finding) */
    T->st->core[c].flag_sets++;
    if (T->obs && T->obs->on_flag)
        T->obs->on_flag(T->obs->user, c, SIM_TM_FLAG_SET, sp, dp, id, vis, seq, 0);
    if (dp == ISA_PIPE_S)
        return k->state == S_WAITF ? wake_scalar(T, c, vis) : NPU_OK;
    return wake_pipe(T, c, dp, vis);
}

/* Try to consume flag (sp, dp, id) at t: 1 consumed, 0 not yet (then
 * *when is the cycle it becomes visible, or TM_NONE if never set). */
static int flag_take(tm *T, int c, int sp, int dp, int id, uint64_t t, uint64_t wait_seq,
                     uint64_t *when)
{
    tm_flag *f = &T->core[c].flag[sp][dp][id & (SIM_NFLAG_IDS - 1)];
    if (!f->n) {
        *when = TM_NONE;
        return 0;
    }
    if (f->vis[f->head] > t) {
        *when = f->vis[f->head];
        return 0;
    }
    uint64_t set_seq = f->set_seq[f->head];
    f->head = (f->head + 1) % TM_FLAG_FIFO;
    f->n--;
    T->st->core[c].flag_waits++;
    if (T->obs && T->obs->on_flag)
        T->obs->on_flag(T->obs->user, c, SIM_TM_FLAG_WAIT, sp, dp, id, t, set_seq, wait_seq);
    return 1;
}

/* ===================================================================== *
 *  Pipes
 * ===================================================================== */

static npu_status pipe_run(tm *T, int c, int p, uint64_t t)
{
    tm_core *k = &T->core[c];
    tm_pipe *pp = &k->pipe[p];
    npu_status st;
    while (!pp->busy && pp->n) {
        tm_ent *e = &pp->q[pp->head];
        if (e->kind == K_WAIT) {
            uint64_t when;
            if (!flag_take(T, c, e->in.spipe, p, e->in.fid, t, e->seq, &when)) {
                if (pp->wait_since == TM_NONE)
                    pp->wait_since = t;
                if (when != TM_NONE)
                    return wake_pipe(T, c, p, when);
                return NPU_OK;
            }
            if (pp->wait_since != TM_NONE) {
                stall(T, c, p, SIM_STALL_FLAG, e->seq, e->pc, pp->wait_since, t);
                pp->wait_since = TM_NONE;
            }
        }
        tm_ent cur = *e;
        if (++pp->head == pp->cap)   /* (no division: cap is not a constant) */
            pp->head = 0;
        pp->n--;
        /* a slot freed: a scalar unit stalled on this queue may dispatch */
        if (k->state == S_QFULL && k->pend_pipe == p)
            if ((st = wake_scalar(T, c, t)))
                return st;
        switch (cur.kind) {
        case K_WAIT:
            T->st->core[c].insns[p]++;
            exec_ev(T, c, p, &cur, t, t);
            break;
        case K_SET:
            T->st->core[c].insns[p]++;
            exec_ev(T, c, p, &cur, t, t);
            if ((st = flag_set(T, c, p, cur.in.dpipe, cur.in.fid, t, cur.seq)))
                return st;
            break;
        case K_EXEC:
        case K_BAR:
            pp->busy = 1;
            pp->cur = cur;
            pp->start = t;
            return push_ev(T, t + cur.dur, EV_DONE, c, p, 0);
        case K_GM:
            pp->busy = 1;
            pp->cur = cur;
            pp->start = t;
            pp->gm.ri = pp->rf.head;
            pp->gm.rend = pp->rf.head + cur.nranges;
            pp->gm.k = 0;
            pp->gm.off = 0;
            pp->gm.sent = 0;
            pp->gm.outstanding = 0;
            pp->gm.last_done = t;
            pp->gm.local_end = t + sim_cost_dma_stream(T->m, cur.path, cur.bytes);
            pp->gm.all_sent = cur.nranges == 0;
            return gm_pump(T, c, p, t);
        }
    }
    /* drained: a scalar unit waiting for the core to drain may go on */
    if (!pp->busy && !pp->n && k->state == S_DRAIN)
        return wake_scalar(T, c, t);
    return NPU_OK;
}

/* The move's last request is in and answered: it ends after the path
 * latency, but never before the on-chip stream would. */
static npu_status gm_finish(tm *T, int c, int p)
{
    tm_pipe *pp = &T->core[c].pipe[p];
    uint64_t end = NPU_MAX(pp->gm.last_done, pp->gm.local_end) + pp->cur.dur;
    uint64_t floor = pp->start + T->m->path[pp->cur.path].min_cycles;
    return push_ev(T, end < floor ? floor : end, EV_DONE, c, p, 0);
}

/* Submit the requests of the current move whose time has come: request k
 * goes out once the path has streamed the bytes before it (paced at the
 * path width), split at line boundaries, respecting back-pressure.
 *
 * Host cost: this runs once per GM request (millions in a large GEMM), so
 * the stream position lives in locals and is written back on every exit,
 * the division by the line size is a shift (a power of two in every
 * shipped config), and the one by the path width a shift or pace_div. */
/* sent / the path's width: a shift for a power of 2; else, below 2^32
 * bytes, a multiplication by the width's reciprocal (exact for 32-bit
 * operands, Lemire, Kaser and Kurz 2019), the GM -> L1 path's 144 B a
 * cycle being the usual case; the division took a quarter of gm_pump's
 * samples. */
static inline uint64_t pace_div(const tm *T, int path, int wsh, uint64_t sent)
{
    if (wsh >= 0)
        return sent >> wsh;
    if (sent >> 32 || T->path_width[path] >> 32)
        return sent / T->path_width[path];
    return (uint64_t)(((unsigned __int128)T->path_wmul[path] * sent) >> 64);
}

static npu_status gm_pump(tm *T, int c, int p, uint64_t t)
{
    tm_pipe *pp = &T->core[c].pipe[p];
    if (!pp->gm.all_sent) {
        const int path = pp->cur.path;
        const int wsh = T->path_wshift[path];
        const uint64_t start = pp->start;
        uint64_t sent = pp->gm.sent;
        /* most calls are a pacing event: the next request's time comes
         * first, before anything else is loaded */
        uint64_t at = start + pace_div(T, path, wsh, sent);
        if (at > t)
            return push_ev(T, at, EV_GMSUB, c, p, 0);
        const uint64_t line = T->mem.line;
        const int lsh = T->mem.line_shift;
        const uint64_t tag_base = ((uint64_t)c * TM_NP + (uint64_t)p) * 2;
        const int posted_writes = T->m->timing.gm_posted_writes != 0;
        npu_status st = NPU_OK;
        size_t ri = pp->gm.ri;
        const size_t rend = pp->gm.rend;
        uint64_t off = pp->gm.off, k = pp->gm.k;
        const tm_run *r = &pp->rf.r[ri];
        uint64_t raddr = r->addr + k * r->stride, rlen = r->len;
        int rw = r->is_write;
        for (;;) {
            uint64_t addr = raddr + off;
            uint64_t chunk = line - (lsh >= 0 ? addr & (line - 1) : addr % line);
            if (chunk > rlen - off)
                chunk = rlen - off;
            /* a posted write is not waited for: the move only needs the
             * memory system to have taken it (its answer is ignored) */
            int posted = rw && posted_writes, taken;
            st = T->mem.submit(T->mem.impl, addr, (uint32_t)chunk, rw, c, t,
                               tag_base + (uint64_t)posted, &taken, T->d);
            if (st)
                break;
            if (!taken) {
                st = mem_block(T, c, p, t);
                break;
            }
            T->mem.next_valid = 0;
            T->st->core[c].gm_requests++;
            if (posted) {
                if (t > pp->gm.last_done)
                    pp->gm.last_done = t;
            } else {
                pp->gm.outstanding++;
            }
            sent += chunk;
            off += chunk;
            if (off == rlen) {
                off = 0;
                if (++k < r->count) {
                    raddr += r->stride;
                } else {
                    k = 0;
                    if (++ri == rend) {
                        pp->gm.all_sent = 1;
                        pp->rf.head = rend;
                        if (pp->rf.head == pp->rf.tail)
                            pp->rf.head = pp->rf.tail = 0;
                        break;
                    }
                    r = &pp->rf.r[ri];
                    raddr = r->addr;
                    rlen = r->len;
                    rw = r->is_write;
                }
            }
            at = start + pace_div(T, path, wsh, sent);
            if (at > t) {
                st = push_ev(T, at, EV_GMSUB, c, p, 0);
                break;
            }
        }
        pp->gm.ri = ri;
        pp->gm.k = k;
        pp->gm.off = off;
        pp->gm.sent = sent;
        if (st || !pp->gm.all_sent)
            return st;
    }
    if (!pp->gm.outstanding)
        return gm_finish(T, c, p);
    return NPU_OK;
}

static npu_status pipe_done(tm *T, int c, int p, uint64_t t)
{
    tm_core *k = &T->core[c];
    tm_pipe *pp = &k->pipe[p];
    sim_timing_core_stats *cs = &T->st->core[c];
    const tm_ent *e = &pp->cur;
    cs->busy[p] += t - pp->start;
    cs->insns[p]++;
    if (e->kind == K_GM) {
        uint64_t own = e->dur + sim_cost_dma_stream(T->m, e->path, e->bytes);
        if (t - pp->start > own)
            stall(T, c, p, SIM_STALL_MEMORY, e->seq, e->pc, pp->start + own, t);
    } else if (e->conflict) {
        stall(T, c, p, SIM_STALL_BANK, e->seq, e->pc, t - e->conflict, t);
    }
    exec_ev(T, c, p, e, pp->start, t);
    pp->busy = 0;
    return pipe_run(T, c, p, t);
}

/* ===================================================================== *
 *  Memory completions
 * ===================================================================== */

/* An answer to the scalar unit of core c at cycle (its own event when it
 * came early: the unit's state at that cycle decides what it does). */
static npu_status scalar_answer(tm *T, int c, uint64_t cycle)
{
    tm_core *k = &T->core[c];
    if (k->gm_out)
        k->gm_out--;
    if (cycle > k->gm_last)
        k->gm_last = cycle;
    if (k->gm_out || k->state != S_GMLOAD)
        return NPU_OK;
    stall(T, c, ISA_PIPE_S, SIM_STALL_MEMORY, k->seq - 1, k->last_pc, k->stall_since, k->gm_last);
    k->state = S_RUN;
    k->s_ready = k->gm_last + T->m->scalar.issue_cycles;
    return wake_scalar(T, c, k->s_ready);
}

/* The memory system's answer to a request (tag: core, pipe, posted bit)
 * at cycle. It may come before that cycle (mem_sys_set_early_answers): a
 * data move only takes the latest answer cycle and counts what is still
 * out, which is the same whenever it is told; the scalar unit gets its
 * answer as an event at the cycle. */
static void mem_done(void *user, uint64_t tag, uint64_t cycle)
{
    tm *T = user;
    if (tag & 1)
        return;   /* a posted write: nobody waits for it */
    tag >>= 1;
    int c = (int)(tag / TM_NP), p = (int)(tag % TM_NP);
    if (c < 0 || c >= T->ncores || T->err)
        return;
    tm_core *k = &T->core[c];
    npu_status st = NPU_OK;
    if (p == ISA_PIPE_S) {
        st = cycle > T->now ? push_ev(T, cycle, EV_SANSWER, c, 0, 0) : scalar_answer(T, c, cycle);
    } else {
        tm_pipe *pp = &k->pipe[p];
        if (pp->gm.outstanding)
            pp->gm.outstanding--;
        if (cycle > pp->gm.last_done)
            pp->gm.last_done = cycle;
        if (pp->busy && pp->gm.all_sent && !pp->gm.outstanding)
            st = gm_finish(T, c, p);
    }
    if (st && !T->err)
        T->err = st;
}

/* ===================================================================== *
 *  The scalar unit
 * ===================================================================== */

static npu_status release_barrier(tm *T, uint64_t t)
{
    npu_status st;
    sim_barrier_release(T->s);
    T->arrived = 0;
    T->arrive_max = 0;
    for (int c = 0; c < T->ncores; c++) {
        tm_core *k = &T->core[c];
        if (k->state != S_BARRIER)
            continue;
        stall(T, c, ISA_PIPE_S, SIM_STALL_BARRIER, k->seq - 1, k->last_pc, k->stall_since, t);
        k->state = S_RUN;
        k->s_ready = t;
        if ((st = wake_scalar(T, c, t)))
            return st;
    }
    return NPU_OK;
}

/* The scalar unit of a core finished draining for a barrier or halt. */
static npu_status drained(tm *T, int c, uint64_t t)
{
    tm_core *k = &T->core[c];
    switch (k->drain_kind) {
    case DR_HALT:
        k->state = S_DONE;
        k->end = t;
        T->st->core[c].cycles = t;
        T->finished++;
        return NPU_OK;
    case DR_PBAR:
        stall(T, c, ISA_PIPE_S, SIM_STALL_BARRIER, k->seq - 1, k->last_pc, k->stall_since, t);
        k->state = S_RUN;
        k->s_ready = t + T->m->sync.pipe_barrier_cycles;
        return wake_scalar(T, c, k->s_ready);
    default: /* DR_SYNC */
        k->state = S_BARRIER;
        T->arrived++;
        if (t > T->arrive_max)
            T->arrive_max = t;
        if (T->arrived == T->ncores)
            return push_ev(T, T->arrive_max + T->m->sync.core_barrier_latency, EV_RELEASE, 0, 0, 0);
        return NPU_OK;
    }
}

static npu_status dispatch_ent(tm *T, int c, int p, const tm_ent *e, uint64_t t)
{
    tm_pipe *pp = &T->core[c].pipe[p];
    uint32_t i = pp->head + pp->n;   /* < 2 * cap */
    if (i >= pp->cap)
        i -= pp->cap;
    pp->q[i] = *e;
    pp->q[i].dispatch = t;
    pp->n++;
    return wake_pipe(T, c, p, t);
}

/* Account the work of an instruction at dispatch (counters, not time). */
static void account(tm *T, int c, const sim_op *op)
{
    sim_timing_core_stats *cs = &T->st->core[c];
    const sim_work *w = &op->work;
    int dt = op->in.dt < SIM_TM_NDT ? op->in.dt : 0;
    if (op->in.op == ISA_OP_MMAD || op->in.op == ISA_OP_MMADSP)
        cs->macs[dt] += w->macs;
    else if (op->pipe == ISA_PIPE_V && sim_cost_vop(op->in.op) >= 0)
        cs->vec_elems[dt] += w->elems;
    int path = sim_cost_path(op->in.op);
    if (path >= 0)
        cs->path_bytes[path] += w->bytes;
    cs->gm_rd_bytes += w->gm_rd;
    cs->gm_wr_bytes += w->gm_wr;
}

/* Describe a non-scalar instruction as a queue entry. */
static npu_status make_ent(tm *T, int c, const sim_op *op, uint64_t seq, tm_ent *e, int *pipe)
{
    const cfg_machine *m = T->m;
    memset(e, 0, sizeof *e);
    e->seq = seq;
    e->pc = op->pc;
    e->in = op->in;
    e->path = -1;
    *pipe = op->pipe;
    if (op->is_set_flag) {
        e->kind = K_SET;
        return NPU_OK;
    }
    if (op->is_wait_flag) {
        e->kind = K_WAIT;
        return NPU_OK;
    }
    if (op->is_barrier) {
        e->kind = K_BAR;
        e->dur = m->sync.pipe_barrier_cycles;
        return NPU_OK;
    }
    int path = sim_cost_path(op->in.op);
    if (path >= 0) {
        e->path = (int8_t)path;
        if (op->ngm) {
            tm_pipe *pp = &T->core[c].pipe[*pipe];
            size_t before = pp->rf.tail - pp->rf.head;
            int first = 1;
            for (uint32_t i = 0; i < op->ngm; i++) {
                if (!op->gm[i].len)
                    continue;
                if (rf_push(pp, &op->gm[i], first))
                    return oom(T);
                first = 0;
            }
            if (rf_end(pp))
                return oom(T);
            e->nranges = (uint32_t)(pp->rf.tail - pp->rf.head - before);
        }
        if (e->nranges) {
            e->kind = K_GM;
            e->dur = m->path[path].latency;
            e->bytes = op->work.bytes;
        } else {
            e->kind = K_EXEC;
            e->dur = sim_cost_dma(m, path, op->work.bytes);
        }
        return NPU_OK;
    }
    e->kind = K_EXEC;
    if (op->in.op == ISA_OP_MMAD || op->in.op == ISA_OP_MMADSP)
        e->dur = sim_cost_cube(m, &op->in, &op->work);
    else if (sim_cost_vop(op->in.op) >= 0)
        e->dur = sim_cost_vec(m, &op->in, &op->work, &e->conflict);
    else   /* vmask / vmaskc and anything else on a pipe: one issue slot */
        e->dur = m->scalar.issue_cycles ? m->scalar.issue_cycles : 1;
    if (!e->dur)
        e->dur = 1;
    return NPU_OK;
}

/* Send the pending scalar GM requests (k->sg) at t, one per line piece, as
 * long as the memory system accepts. 1: all sent; 0: refused (back-pressure,
 * the rest stays pending for a retry). */
static npu_status scalar_gm_pump(tm *T, int c, uint64_t t, int *all_sent)
{
    tm_core *k = &T->core[c];
    *all_sent = 0;
    while (k->sg_i < k->sg_n) {
        const sim_gm_range *r = &k->sg[k->sg_i];
        uint64_t a = r->addr + k->sg_off;
        uint64_t ch = T->mem.line - a % T->mem.line;
        if (ch > r->len - k->sg_off)
            ch = r->len - k->sg_off;
        int taken;
        npu_status st = T->mem.submit(T->mem.impl, a, (uint32_t)ch, r->is_write, c, t,
                                      ((uint64_t)c * TM_NP + ISA_PIPE_S) * 2, &taken, T->d);
        if (st)
            return st;
        if (!taken)
            return NPU_OK;
        T->mem.next_valid = 0;
        T->st->core[c].gm_requests++;
        k->gm_out++;
        k->sg_off += ch;
        if (k->sg_off == r->len) {
            k->sg_off = 0;
            k->sg_i++;
        }
    }
    k->sg_n = k->sg_i = 0;
    *all_sent = 1;
    return NPU_OK;
}

/* A scalar GM access (ldg / lwg / sdg / swg) issued at t: its requests go
 * to the memory system; a load then waits for the answers (*blocked 1),
 * and a request the memory system cannot take yet stalls the scalar unit
 * (*blocked 2: state S_GMSUB, retried at the memory system's next event). */
static npu_status scalar_gm(tm *T, int c, const sim_op *op, uint64_t t, int *blocked)
{
    tm_core *k = &T->core[c];
    *blocked = 0;
    /* op->gm is valid only during this step: keep a copy of the ranges */
    k->sg_n = k->sg_i = 0;
    k->sg_off = 0;
    for (uint32_t i = 0; i < op->ngm; i++) {
        const sim_gm_range *r = &op->gm[i];
        if (!r->len)
            continue;
        if (r->is_write)
            T->st->core[c].gm_wr_bytes += r->len;
        else
            T->st->core[c].gm_rd_bytes += r->len;
        if (k->sg_n == k->sg_cap) {
            uint32_t nc = k->sg_cap ? k->sg_cap * 2 : 4;
            sim_gm_range *nr = npu_realloc(k->sg, nc * sizeof *nr);
            if (!nr)
                return oom(T);
            k->sg = nr;
            k->sg_cap = nc;
        }
        k->sg[k->sg_n++] = *r;
    }
    k->sg_store = op->in.op == ISA_OP_SDG || op->in.op == ISA_OP_SWG;
    int all_sent;
    npu_status st = scalar_gm_pump(T, c, t, &all_sent);
    if (st)
        return st;
    if (!all_sent) {
        *blocked = 2;
        return NPU_OK;
    }
    if (k->gm_out && !k->sg_store) {
        *blocked = 1;
        k->gm_last = t;
    }
    return NPU_OK;
}

static npu_status scalar_run(tm *T, int c, uint64_t t)
{
    tm_core *k = &T->core[c];
    npu_sim *s = T->s;
    npu_status st;
    sim_timing_core_stats *cs = &T->st->core[c];

    for (;;) {
        switch (k->state) {
        case S_DONE: case S_BARRIER: case S_GMLOAD:
            return NPU_OK;
        case S_GMSUB: {
            /* retry the requests the memory system refused; the stall since
             * the issue slot is memory time (a load's goes on until its
             * answers, charged by mem_done) */
            int all_sent;
            if ((st = scalar_gm_pump(T, c, t, &all_sent)))
                return st;
            if (!all_sent)
                return mem_block(T, c, ISA_PIPE_S, t);
            if (k->gm_out && !k->sg_store) {
                k->state = S_GMLOAD;
                k->gm_last = t;
                return NPU_OK;
            }
            stall(T, c, ISA_PIPE_S, SIM_STALL_MEMORY, k->seq - 1, k->last_pc, k->stall_since, t);
            k->state = S_RUN;
            k->s_ready = NPU_MAX(t, k->stall_since);
            continue;
        }
        case S_QFULL: {
            tm_pipe *pp = &k->pipe[k->pend_pipe];
            if (pp->n >= pp->cap)
                return NPU_OK;
            stall(T, c, ISA_PIPE_S, SIM_STALL_QUEUE_FULL, k->pend.seq, k->pend.pc,
                  k->stall_since, t);
            if ((st = dispatch_ent(T, c, k->pend_pipe, &k->pend, t)))
                return st;
            k->state = S_RUN;
            uint64_t dc = sim_cost_dispatch(T->m);
            cs->busy[ISA_PIPE_S] += dc;
            k->s_ready = t + dc;
            continue;
        }
        case S_WAITF: {
            uint64_t when;
            if (!flag_take(T, c, k->wait_in.spipe, ISA_PIPE_S, k->wait_in.fid, t, k->wait_seq,
                           &when))
                return when != TM_NONE ? wake_scalar(T, c, when) : NPU_OK;
            stall(T, c, ISA_PIPE_S, SIM_STALL_FLAG, k->wait_seq, k->wait_pc, k->stall_since, t);
            cs->insns[ISA_PIPE_S]++;
            k->state = S_RUN;
            k->s_ready = t;
            continue;
        }
        case S_DRAIN:
            if (!core_drained(k))
                return NPU_OK;
            if ((st = drained(T, c, t)))
                return st;
            continue;
        default:
            break;
        }
        /* S_RUN */
        if (t < k->s_ready)
            return wake_scalar(T, c, k->s_ready);
        if (t > T->max_cycles)
            return NPU_OK;   /* the loop reports the watchdog */
        s->cores[c].cycle = t;
        /* no memset: the step fills every field of op (a 200-byte clear
         * per instruction was measurable) */
        sim_op op;
        if ((st = sim_core_step(s, c, &op, T->d)))
            return st;
        uint64_t seq = k->seq++;
        k->last_pc = op.pc;
        k->last_in = op.in;
        if (T->obs && T->obs->on_dispatch)
            T->obs->on_dispatch(T->obs->user, c, seq, &op, t);
        if (T->obs && T->obs->on_call && (op.is_call || op.is_ret))
            T->obs->on_call(T->obs->user, c, op.is_ret, op.pc, op.target, t);
        account(T, c, &op);
        uint64_t issue = T->m->scalar.issue_cycles ? T->m->scalar.issue_cycles : 1;

        if (op.ended) {
            cs->insns[ISA_PIPE_S]++;
            cs->busy[ISA_PIPE_S] += issue;
            k->state = S_DRAIN;
            k->drain_kind = DR_HALT;
            k->stall_since = t + issue;
            t += issue;      /* the halt's own issue slot */
            continue;
        }
        if (op.is_sync_all || (op.is_barrier && op.barrier_pipe == ISA_PIPE_ALL)) {
            cs->insns[ISA_PIPE_S]++;
            cs->busy[ISA_PIPE_S] += issue;
            k->state = S_DRAIN;
            k->drain_kind = op.is_sync_all ? DR_SYNC : DR_PBAR;
            t += issue;
            k->stall_since = t;
            continue;
        }
        if (op.pipe == ISA_PIPE_S) {
            cs->insns[ISA_PIPE_S] += op.is_wait_flag ? 0 : 1;
            if (op.is_set_flag) {
                cs->busy[ISA_PIPE_S] += issue;
                if ((st = flag_set(T, c, ISA_PIPE_S, op.in.dpipe, op.in.fid, t, seq)))
                    return st;
                k->s_ready = t + issue;
            } else if (op.is_wait_flag) {
                /* the wait takes its issue slot; the next instruction issues
                 * at the release (or right after the slot if already set) */
                cs->busy[ISA_PIPE_S] += issue;
                k->state = S_WAITF;
                k->wait_in = op.in;
                k->wait_seq = seq;
                k->wait_pc = op.pc;
                t += issue;
                k->stall_since = t;
                continue;
            } else if (op.is_barrier) {
                cs->busy[ISA_PIPE_S] += issue;
                k->s_ready = t + NPU_MAX(issue, T->m->sync.pipe_barrier_cycles);
            } else if (op.ngm) {
                int blocked;
                cs->busy[ISA_PIPE_S] += issue;
                if ((st = scalar_gm(T, c, &op, t, &blocked)))
                    return st;
                if (blocked == 2) {
                    k->state = S_GMSUB;
                    k->stall_since = t + issue;
                    return mem_block(T, c, ISA_PIPE_S, t + issue);
                }
                if (blocked) {
                    k->state = S_GMLOAD;
                    k->stall_since = t + issue;
                    return NPU_OK;
                }
                k->s_ready = t + issue;
            } else {
                uint64_t cyc = sim_cost_scalar(T->m, &op.in, op.cost, op.taken);
                cs->busy[ISA_PIPE_S] += cyc;
                k->s_ready = t + cyc;
            }
            continue;
        }
        /* a pipe instruction: into its queue */
        tm_ent e;
        int p;
        if ((st = make_ent(T, c, &op, seq, &e, &p)))
            return st;
        tm_pipe *pp = &k->pipe[p];
        if (pp->n >= pp->cap) {
            k->state = S_QFULL;
            k->pend = e;
            k->pend_pipe = p;
            k->stall_since = t;
            return NPU_OK;
        }
        if ((st = dispatch_ent(T, c, p, &e, t)))
            return st;
        uint64_t dc = sim_cost_dispatch(T->m);
        cs->busy[ISA_PIPE_S] += dc;
        k->s_ready = t + dc;
    }
}

/* ===================================================================== *
 *  Reports (deadlock, watchdog)
 * ===================================================================== */

static const char *state_name(int s)
{
    switch (s) {
    case S_RUN: return "issuing";
    case S_QFULL: return "stalled: queue full";
    case S_WAITF: return "waiting for a flag";
    case S_DRAIN: return "draining its pipes";
    case S_BARRIER: return "at sync_all";
    case S_GMLOAD: return "waiting for a GM load";
    case S_GMSUB: return "stalled: memory system full (scalar GM access)";
    default: return "done";
    }
}

static void report_state(tm *T, npu_buf *b)
{
    char dis[160];
    for (int c = 0; c < T->ncores; c++) {
        tm_core *k = &T->core[c];
        if (k->state == S_DONE)
            continue;
        if (b->len > 1700) {
            npu_buf_printf(b, "\n  ...");
            return;
        }
        uint64_t spc = k->state == S_QFULL ? k->pend.pc : k->state == S_WAITF ? k->wait_pc
                                                                              : k->last_pc;
        sim_disasm_at(T->s, spc, dis, sizeof dis);
        npu_buf_printf(b, "\n  core %d scalar: %s at pc 0x%" PRIx64 ": %s", c,
                       state_name(k->state), spc, dis);
        if (k->state == S_QFULL)
            npu_buf_printf(b, " (pipe %s)", isa_pipe_name(k->pend_pipe));
        for (int p = 1; p < TM_NP; p++) {
            tm_pipe *pp = &k->pipe[p];
            if (pp->busy) {
                sim_disasm_at(T->s, pp->cur.pc, dis, sizeof dis);
                npu_buf_printf(b, "\n    %s: executing since cycle %" PRIu64 " pc 0x%" PRIx64
                               ": %s", isa_pipe_name(p), pp->start, pp->cur.pc, dis);
            } else if (pp->n) {
                const tm_ent *e = &pp->q[pp->head];
                sim_disasm_at(T->s, e->pc, dis, sizeof dis);
                npu_buf_printf(b, "\n    %s: %s pc 0x%" PRIx64 ": %s (%u queued)",
                               isa_pipe_name(p), e->kind == K_WAIT ? "waiting at" : "pending",
                               e->pc, dis, pp->n);
            }
        }
    }
}

/* ===================================================================== *
 *  The run
 * ===================================================================== */

#if TM_HAVE_MEMMODEL
/* memmodel's command observer -> the timing observer, in core cycles. */
static void hbm_cmd_fwd(void *user, int chan, int pc, int cmd, int bg, int bank, uint32_t row,
                        uint64_t dram_cycle)
{
    tm *T = user;
    uint64_t cyc = mem_sys_dram_to_core((const mem_sys *)T->mem.impl, dram_cycle);
    T->obs->on_hbm_cmd(T->obs->user, chan, pc, cmd, bg, bank, row, cyc);
}
#endif

static npu_status mem_open(tm *T)
{
    const cfg_machine *m = T->m;
#if TM_HAVE_MEMMODEL
    if (m->timing.memory_model == CFG_MEM_HBM) {
        mem_sys *ms = mem_sys_new(&m->mem, m->chip.clock_ghz, T->d);
        if (!ms)
            return T->d && T->d->status ? T->d->status : oom(T);
        mem_sys_set_callback(ms, mem_done, T);
        mem_sys_set_early_answers(ms, 1);
        T->mem.impl = ms;
        if (T->obs && T->obs->on_hbm_cmd)
            mem_sys_set_cmd_observer(ms, hbm_cmd_fwd, T);
        T->mem.submit = sys_submit;
        T->mem.advance_to = sys_advance_to;
        T->mem.status = sys_status;
        T->mem.next_event = sys_next_event;
        T->mem.accept_epoch = sys_accept_epoch;
        T->mem.free = sys_free;
        T->mem.line = m->mem.l2.line_bytes > 0 ? (uint32_t)m->mem.l2.line_bytes : 512;
        return NPU_OK;
    }
#endif
    tm_fixed *f = npu_calloc(1, sizeof *f);
    if (!f)
        return oom(T);
    f->bw = m->timing.gm_fixed_bytes_per_cycle > 0 ? m->timing.gm_fixed_bytes_per_cycle : 1;
    f->lat = m->timing.gm_fixed_latency;
    f->done = mem_done;
    f->user = T;
    T->mem.impl = f;
    T->mem.submit = fixed_submit;
    T->mem.advance_to = fixed_advance_to;
    T->mem.next_event = fixed_next_event;
    T->mem.accept_epoch = fixed_accept_epoch;
    T->mem.free = fixed_free;
    T->mem.line = m->timing.gm_request_bytes ? (uint32_t)m->timing.gm_request_bytes : 512;
    return NPU_OK;
}

static void tm_free(tm *T)
{
    if (T->core) {
        for (int c = 0; c < T->ncores; c++) {
            for (int p = 0; p < TM_NP; p++) {
                npu_free(T->core[c].pipe[p].q);
                npu_free(T->core[c].pipe[p].rf.r);
            }
            npu_free(T->core[c].sg);
        }
        npu_free(T->core);
    }
    if (T->q) {
        npu_calq_free(T->q);
        npu_free(T->q);
    }
    npu_free(T->mw);
    if (T->mem.free && T->mem.impl)
        T->mem.free(T->mem.impl);
}

/* log2(v) when v is a power of two, else -1. */
static int pow2_shift(uint64_t v)
{
    if (!v || (v & (v - 1)))
        return -1;
    int k = 0;
    while ((1ull << k) != v)
        k++;
    return k;
}

static npu_status tm_init(tm *T)
{
    for (int i = 0; i < CFG_PATH__COUNT; i++) {
        T->path_width[i] = T->m->path[i].width ? T->m->path[i].width : 1;
        T->path_wshift[i] = pow2_shift(T->path_width[i]);
        T->path_wmul[i] = UINT64_MAX / T->path_width[i] + 1;
    }
    T->q = npu_malloc(sizeof *T->q);
    if (!T->q)
        return oom(T);
    npu_calq_init(T->q);
    T->core = npu_calloc((size_t)T->ncores, sizeof *T->core);
    T->st->core = npu_calloc((size_t)T->ncores, sizeof *T->st->core);
    if (!T->core || !T->st->core)
        return oom(T);
    T->st->ncores = T->ncores;
    for (int c = 0; c < T->ncores; c++) {
        tm_core *k = &T->core[c];
        k->s_wake_t = TM_NONE;
        for (int p = 1; p < TM_NP; p++) {
            tm_pipe *pp = &k->pipe[p];
            uint64_t depth = T->m->pipe[p].queue_depth;
            pp->cap = (uint32_t)(depth ? depth : 1);
            pp->q = npu_calloc(pp->cap, sizeof *pp->q);
            if (!pp->q)
                return oom(T);
            pp->wait_since = TM_NONE;
            pp->wake_t = TM_NONE;
        }
    }
    npu_status st = mem_open(T);
    T->mem.line_shift = pow2_shift(T->mem.line);
    return st;
}

static npu_status handle(tm *T, const tm_ev *e)
{
    tm_core *k = &T->core[e->core];
    switch (e->type) {
    case EV_SCALAR:
        if (e->gen != k->s_gen)
            return NPU_OK;
        k->s_wake_t = TM_NONE;
        return scalar_run(T, e->core, e->t);
    case EV_PIPE: {
        tm_pipe *pp = &k->pipe[e->pipe];
        if (e->gen != pp->gen)
            return NPU_OK;
        pp->wake_t = TM_NONE;
        return pipe_run(T, e->core, e->pipe, e->t);
    }
    case EV_DONE:
        return pipe_done(T, e->core, e->pipe, e->t);
    case EV_GMSUB:
        return gm_pump(T, e->core, e->pipe, e->t);
    case EV_RELEASE:
        return release_barrier(T, e->t);
    case EV_SANSWER:
        return scalar_answer(T, e->core, e->t);
    }
    return NPU_OK;
}

npu_status sim_timing_run(npu_sim *s, const sim_timing_opts *opts, sim_timing_stats *stats,
                          npu_diag *d)
{
    sim_timing_opts o = opts ? *opts : (sim_timing_opts){ 0 };
    memset(stats, 0, sizeof *stats);
    if (!s || !s->loaded)
        return npu_errf(d, NPU_EINVAL, "timing: no kernel loaded");
    tm T;
    memset(&T, 0, sizeof T);
    T.s = s;
    T.m = &s->cfg;
    T.obs = o.obs;
    T.st = stats;
    T.d = d;
    T.ncores = s->ncores;
    T.max_cycles = o.max_cycles ? o.max_cycles : s->cfg.timing.max_cycles;
    stats->clock_ghz = s->cfg.chip.clock_ghz;
    s->nodata = o.nodata;
    /* perf mode computes data in per-core batches (exec.c, "Deferred
     * data"), unless an observer watches every access as it happens; the
     * units called at dispatch then only check and account */
    s->defer = !o.nodata && s->nobs == 0;
    s->uctx.nodata = o.nodata || s->defer;
    sim_defer_begin(s);

    npu_status st = tm_init(&T);
    for (int c = 0; !st && c < T.ncores; c++)
        st = wake_scalar(&T, c, 0);
    const int prog = sim_progress_on(s);
    uint64_t next_poll = 4096;
    /* interval samples of the memory system's statistics (on_mem_sample) */
    void *msamp = NULL;
    const uint64_t every = o.mem_sample_cycles;
    uint64_t next_b = every;
#if TM_HAVE_MEMMODEL
    if (!st && every && T.obs && T.obs->on_mem_sample && T.mem.free == sys_free &&
        !(msamp = npu_calloc(1, sizeof(mem_sys_stats))))
        st = oom(&T);
#else
    (void)next_b;
#endif

    while (!st) {
        uint64_t tm_next = npu_calq_next(T.q);
        uint64_t mem_next = mem_next_ev(&T.mem);
        uint64_t t = tm_next < mem_next ? tm_next : mem_next;
        if (t != TM_NONE && t < T.now)
            t = T.now;   /* never step time backwards */
        if (t == TM_NONE) {
            if (T.finished == T.ncores)
                break;
            if (mem_lost(&T)) {
                st = mem_lost_err(&T, d);
                break;
            }
            npu_buf b = { 0 };
            report_state(&T, &b);
            st = npu_errf(d, NPU_EDEADLOCK,
                          "deadlock at cycle %" PRIu64 ": every pipe of every unfinished core "
                          "waits and nothing is in flight:%s",
                          T.now, b.data ? (const char *)b.data : "");
            npu_buf_free(&b);
            break;
        }
        if (t > T.max_cycles) {
            if (mem_lost(&T)) {
                st = mem_lost_err(&T, d);
                break;
            }
            npu_buf b = { 0 };
            report_state(&T, &b);
            st = npu_errf(d, NPU_ETIMEOUT,
                          "watchdog: the run exceeded %" PRIu64 " cycles (--max-cycles):%s",
                          T.max_cycles, b.data ? (const char *)b.data : "");
            npu_buf_free(&b);
            break;
        }
#if TM_HAVE_MEMMODEL
        while (msamp && t >= next_b) {
            /* everything before t is done and nothing happened since the
             * last event, which was before next_b; a slice wait still
             * under way counts up to next_b (mem_sys_stats_at), and then
             * each window end it spans gets its own sample */
            mem_sys_stats_at(T.mem.impl, next_b, msamp);
            T.obs->on_mem_sample(T.obs->user, next_b, msamp);
            if (mem_sys_waits_pending(T.mem.impl))
                next_b += every;
            else
                next_b = (t / every + 1) * every;
        }
#endif
        T.now = t;
        npu_calq_advance(T.q, t);
        if (mem_next <= t) {
            T.mem.next_valid = 0;
            T.mem.advance_to(T.mem.impl, t);
            if (T.err) {
                st = T.err;
                break;
            }
            if (T.mw_n && (st = mem_unblock(&T, t)))
                break;
        }
        tm_ev e;
        while (!st && tmq_pop_at(T.q, t, &e)) {
            stats->events++;
            st = handle(&T, &e);
            if (!st && T.err)
                st = T.err;
        }
        if (prog && stats->events >= next_poll) {
            /* (every 4096 events or so: reading the clock is the cost) */
            next_poll = stats->events + 4096;
            sim_progress_poll(s, t, T.finished);
        }
    }
    /* a lost request nobody waited for (a posted write) ends the run
     * normally: the failed allocation still fails it */
    if (!st && mem_lost(&T))
        st = mem_lost_err(&T, d);
    /* the data of what was dispatched, then the worker stops */
    st = sim_defer_end(s, st, d);
    s->defer = 0;
    s->uctx.nodata = s->nodata;
    for (int c = 0; c < T.ncores && stats->core; c++) {
        if (!stats->core[c].cycles)
            stats->core[c].cycles = T.core ? T.core[c].end : 0;
        if (stats->core[c].cycles > stats->cycles)
            stats->cycles = stats->core[c].cycles;
    }
    if (st && !stats->cycles)
        stats->cycles = T.now;
    s->cycles = stats->cycles;
#if TM_HAVE_MEMMODEL
    /* (counters) hand the memory system's statistics to the observer
     * before the memory system is freed */
    if (T.obs && T.obs->on_mem_stats && T.mem.impl && T.mem.free == sys_free) {
        mem_sys_stats *ms = npu_malloc(sizeof *ms);
        if (ms) {
            mem_sys_stats_get(T.mem.impl, ms);
            T.obs->on_mem_stats(T.obs->user, ms);
            npu_free(ms);
        }
    }
#endif
    npu_free(msamp);
    tm_free(&T);
    return st;
}

/* ===================================================================== *
 *  The perf report
 * ===================================================================== */

void sim_timing_report(const sim_timing_stats *st, npu_buf *b)
{
    double ghz = st->clock_ghz > 0 ? st->clock_ghz : 1;
    double secs = (double)st->cycles / (ghz * 1e9);
    uint64_t macs = 0, gm = 0;
    for (int c = 0; c < st->ncores; c++) {
        for (int dt = 0; dt < SIM_TM_NDT; dt++)
            macs += st->core[c].macs[dt];
        gm += st->core[c].gm_rd_bytes + st->core[c].gm_wr_bytes;
    }
    npu_buf_printf(b, "cycles: %" PRIu64 "  (%.3f us at %.3f GHz)\n", st->cycles, secs * 1e6, ghz);
    npu_buf_printf(b, "achieved: %.3f TFLOP/s (%" PRIu64 " MACs), %.3f GB/s GM (%" PRIu64 " B)\n",
                   secs > 0 ? 2.0 * (double)macs / secs / 1e12 : 0, macs,
                   secs > 0 ? (double)gm / secs / 1e9 : 0, gm);
    uint64_t cause[SIM_STALL__COUNT] = { 0 };
    for (int c = 0; c < st->ncores; c++)
        for (int p = 0; p < ISA_NPIPES; p++)
            for (int k = 0; k < SIM_STALL__COUNT; k++)
                cause[k] += st->core[c].stall[p][k];
    npu_buf_printf(b, "stall cycles (all cores and pipes):");
    for (int k = 0; k < SIM_STALL__COUNT; k++)
        npu_buf_printf(b, " %s %" PRIu64, sim_stall_name(k), cause[k]);
    npu_buf_printf(b, "\n");
    /* per core: busy % of each pipe over the run, and the cycle the core
     * ended (cores ending early are idle for the rest: a load imbalance) */
    npu_buf_printf(b, "pipe busy %%:  core      S      V      M   MTE1   MTE2   MTE3    FIX   ended at\n");
    for (int c = 0; c < st->ncores; c++) {
        const sim_timing_core_stats *cs = &st->core[c];
        npu_buf_printf(b, "             %4d", c);
        for (int p = 0; p < ISA_NPIPES; p++)
            npu_buf_printf(b, " %6.1f", st->cycles ? 100.0 * (double)cs->busy[p] / (double)st->cycles : 0.0);
        npu_buf_printf(b, " %10" PRIu64 "\n", cs->cycles);
    }
}
