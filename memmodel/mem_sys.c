/* mem_sys.c — the memory system the timing engine talks to: a shared,
 * sliced L2 in front of the HBM model, timed in core clock cycles.
 *
 * Request path. A request (at most one L2 line) goes to the slice its line
 * hashes to. The slice moves slice_bytes_per_cycle, so requests are
 * serialised on it (start = max(arrival, slice busy)). At start the tags are
 * looked up: a hit answers at start + hit_latency. A miss goes to an MSHR
 * (merging with an outstanding fill of the same line, or waiting for a free
 * MSHR), which fetches the whole line from HBM as atom-sized requests; when
 * the last atom returns the line is installed (evicting the LRU way, with a
 * write-back of a dirty victim) and every merged request answers. Writes
 * mark lines dirty (write-back) or go on to HBM (write-through); a write
 * miss allocates (fetching the line unless the write covers it) or, without
 * write-allocate, goes straight to HBM. With the L2 disabled, requests are
 * split into atoms and go to HBM directly.
 *
 * Clocks. The HBM runs on its own clock. Core and DRAM clocks are held as
 * integers in kHz and cycles are converted with exact integer arithmetic
 * (rounding up: an event is seen at the first core cycle at or after it),
 * so there is no floating drift however long the run.
 *
 * Events: core-cycle events (slice lookups, answers) interleaved with the
 * HBM's own events, processed in (time, push order): the calendar queue
 * the timing engine uses too (isa/npu_calq.h), which gives one heap's
 * order at a few dozen host instructions an event. */
#include <string.h>

#include "isa/npu_calq.h"
#include "memmodel/mem_int.h"

#define NEVER UINT64_MAX

enum { EV_LOOKUP, EV_ANSWER };
enum { OP_FILL, OP_DIRECT, OP_WB };

typedef struct sev { uint64_t t; int kind; int32_t a; uint64_t tag; } sev;

typedef struct sreq {          /* a request inside a slice */
    uint64_t addr, tag, issue;
    uint32_t bytes;
    int is_write;
    int32_t next;              /* waiter list link */
} sreq;

typedef struct smshr {
    uint64_t line;
    int32_t head, tail;        /* waiting sreqs */
    int32_t op;
    int busy;
} smshr;

typedef struct slice {
    uint64_t *tag;             /* [sets * ways]: line number + 1, or 0 when invalid: a
                                * calloc'd array starts all invalid, and a large calloc
                                * comes zeroed from the OS with no pass over it (the
                                * NEVER-filling loop was most of the per-run build cost) */
    uint64_t *lru;             /* last use stamp */
    uint8_t *dirty;
    smshr *mshr;
    int nmshr_busy;
    int32_t blk_head, blk_tail;  /* misses waiting for a free MSHR */
    int nwait;                 /* accepted and not yet answered or handed to an MSHR */
    uint64_t busy_until;
    /* lookups scheduled and not yet started: their count and the sum of
     * their start cycles, so that a sample at T counts only the part of
     * their waits (l2.stall_cycles, added whole at submit) before T */
    uint64_t wstart_sum;
    uint32_t wn;
    mem_l2_stats st;
} slice;

typedef struct hop {           /* one HBM-bound operation (several atoms) */
    int kind, left, slice, mshr;
    uint64_t tag, issue;       /* OP_DIRECT: caller's tag and issue cycle */
    int is_write;
    int32_t next_free;
} hop;

typedef struct outq { uint64_t addr, tag; int is_write; } outq;

struct mem_sys {
    mem_config cfg;
    mem_hbm *hbm;
    uint64_t ck, dk;           /* core and DRAM clocks, kHz, divided by their gcd */
    int atom, nslice, sets, ways, line, line_shift;   /* line = 1 << line_shift (validated a power of 2) */
    /* the slice hash and the set index, per request: n - 1 and log2 n when
     * the slice and set counts are powers of 2 (every shipped config),
     * else a mask of 0 (then a division) */
    uint64_t slice_mask, set_mask;
    uint64_t set_M;            /* sets not a power of 2: Lemire's fastmod multiplier, 2^64 / sets + 1 */
    int slice_shift;
    uint64_t occ_line;         /* slice cycles of a whole-line request */
    slice *sl;
    sreq *rq; int32_t *rq_free; int nrq, nrq_free;
    hop *op; int32_t op_free; int nop;
    npu_calq q;                /* the events (sev: kind and a in one word, tag in the other) */
    uint64_t stamp;
    outq *out; size_t nout, capout, outh;     /* FIFO of atoms waiting for an HBM queue */
    /* the HBM's accept epoch when it refused the head atom (its queue was
     * full), NEVER while not refused: until some HBM queue loses an entry
     * (the epoch moves) it would be refused again */
    uint64_t out_refused;
    uint64_t now;              /* core cycle being processed */
    uint64_t accepts;          /* mem_sys_accept_epoch's own part */
    /* The HBM's next event (DRAM cycle and core cycle), valid until the HBM
     * advances or is offered atoms, the only things that move it (hbm_next;
     * most events and submits are L2 lookups that do neither) */
    int hn_valid;
    uint64_t hn_dram, hn_core;
    void (*done)(void *, uint64_t, uint64_t);
    void *user;
    int early;                 /* mem_sys_set_early_answers */
    int oom;
    mem_chan_stats *chan_copy;
    mem_l2_stats *slice_copy;
    /* every slice's tags, LRU stamps and dirty bits, one block each: a
     * block this large is mmap'd by calloc and comes zeroed from the OS
     * without a pass over it (per-slice arrays stayed under the mmap
     * threshold and were memset: most of a run's model build time) */
    uint64_t *tag_all, *lru_all;
    uint8_t *dirty_all;
};

/* ---- clocks -------------------------------------------------------------- */
static uint64_t gcd64(uint64_t a, uint64_t b) { while (b) { uint64_t t = a % b; a = b; b = t; } return a; }

/* Both conversions are called once per event of the loop: while the
 * product fits 64 bits (after the gcd reduction the factors are small, so
 * for any realistic cycle count) a 64-bit division gives the same result
 * as the 128-bit one, several times cheaper. */
uint64_t mem_sys_core_to_dram(const mem_sys *s, uint64_t c)
{
    if (c == NEVER) return NEVER;
    if (c <= (UINT64_MAX - s->ck) / s->dk) return (c * s->dk + s->ck - 1) / s->ck;
    unsigned __int128 x = (unsigned __int128)c * s->dk;
    return (uint64_t)((x + s->ck - 1) / s->ck);
}

uint64_t mem_sys_dram_to_core(const mem_sys *s, uint64_t d)
{
    if (d == NEVER) return NEVER;
    if (d <= (UINT64_MAX - s->dk) / s->ck) return (d * s->ck + s->dk - 1) / s->dk;
    unsigned __int128 x = (unsigned __int128)d * s->ck;
    return (uint64_t)((x + s->dk - 1) / s->dk);
}

/* The first DRAM cycle the HBM has not ticked by core cycle c: at core
 * cycle c every DRAM cycle whose edge (mem_sys_dram_to_core) is at or
 * before c has been ticked (the HBM's events go first at equal times), so
 * a request handed over at c arrives in the DRAM cycle after those. This
 * depends on the two clocks only, never on whether some channel happened
 * to have an event at that edge: the arrival stamps, and so the results,
 * stay the same whichever idle cycles the HBM skips. Edge d is at or
 * before c exactly when d <= c * dk / ck, so that cycle is
 * floor(c * dk / ck) + 1: one division. */
static uint64_t dram_open(const mem_sys *s, uint64_t c)
{
    if (c == NEVER) return NEVER;
    if (c <= UINT64_MAX / s->dk) return c * s->dk / s->ck + 1;
    return (uint64_t)((unsigned __int128)c * s->dk / s->ck) + 1;
}

/* ---- pools and events ---------------------------------------------------------- */
static void push_ev(mem_sys *s, uint64_t t, int kind, int32_t a, uint64_t tag)
{
    if (npu_calq_push(&s->q, t, (uint64_t)(uint32_t)kind | (uint64_t)(uint32_t)a << 32, tag))
        s->oom = 1;
}

static inline uint64_t ev_next_t(const mem_sys *s) { return npu_calq_next(&s->q); }

/* The least event. Call only when ev_next_t is not NEVER. */
static sev pop_ev(mem_sys *s)
{
    npu_cev c = { 0, 0, 0, 0 };
    npu_calq_pop(&s->q, &c);
    return (sev){ c.t, (int)(uint32_t)c.a, (int32_t)(uint32_t)(c.a >> 32), c.b };
}

static int32_t sreq_new(mem_sys *s)
{
    if (s->nrq_free) return s->rq_free[--s->nrq_free];
    int nc = s->nrq ? s->nrq * 2 : 1024;
    sreq *n = npu_realloc(s->rq, (size_t)nc * sizeof *n);
    if (!n) return -1;
    s->rq = n;
    int32_t *f = npu_realloc(s->rq_free, (size_t)nc * sizeof *f);
    if (!f) return -1;
    s->rq_free = f;
    for (int i = nc - 1; i > s->nrq; i--) s->rq_free[s->nrq_free++] = i;
    int got = s->nrq;
    s->nrq = nc;
    return got;
}

static int32_t op_new(mem_sys *s)
{
    if (s->op_free < 0) {
        int nc = s->nop ? s->nop * 2 : 1024;
        hop *n = npu_realloc(s->op, (size_t)nc * sizeof *n);
        if (!n) return -1;
        s->op = n;
        for (int i = nc - 1; i >= s->nop; i--) { s->op[i].next_free = s->op_free; s->op_free = i; }
        s->nop = nc;
    }
    int32_t i = s->op_free;
    s->op_free = s->op[i].next_free;
    return i;
}

static void op_del(mem_sys *s, int32_t i) { s->op[i].next_free = s->op_free; s->op_free = i; }

/* Queue `bytes` from addr as atom requests to HBM for op. */
static void send_atoms(mem_sys *s, uint64_t addr, uint32_t bytes, int is_write, int32_t op)
{
    uint64_t a0 = addr & ~(uint64_t)(s->atom - 1);
    uint64_t a1 = (addr + (bytes ? bytes : 1) + (uint64_t)s->atom - 1) & ~(uint64_t)(s->atom - 1);
    int n = (int)((a1 - a0) / (uint64_t)s->atom);
    s->op[op].left = n;
    for (int i = 0; i < n; i++) {
        if (s->nout == s->capout) {
            size_t nc = s->capout ? s->capout * 2 : 1024;
            outq *q = npu_malloc(nc * sizeof *q);
            if (!q) { s->oom = 1; return; }
            for (size_t k = 0; k < s->nout; k++) q[k] = s->out[(s->outh + k) & (s->capout - 1)];   /* capout: 0 or a power of 2 */
            npu_free(s->out);
            s->out = q; s->capout = nc; s->outh = 0;
        }
        outq *e = &s->out[(s->outh + s->nout++) & (s->capout - 1)];
        e->addr = a0 + (uint64_t)i * (uint64_t)s->atom;
        e->tag = (uint64_t)op;
        e->is_write = is_write;
    }
}

/* Hand queued atoms to the HBM, in order, while its queues take them. A
 * full queue holds back what follows it (the L2's request port is in order).
 * Without the L2 that buffer is the request port: it emptying while the
 * model advances is room for a refused request (mem_sys_accept_epoch); in
 * a submit it only empties again what the submit filled. Offering may move
 * the HBM's next event (hn_valid). */
static void drain_out(mem_sys *s, int advancing)
{
    if (!s->nout) return;    /* (called after every event: no clock conversion then) */
    if (s->out_refused != NEVER) {
        if (mem_hbm_accept_epoch(s->hbm) == s->out_refused) return;
        s->out_refused = NEVER;
    }
    s->hn_valid = 0;
    uint64_t dc = dram_open(s, s->now);
    while (s->nout) {
        outq *e = &s->out[s->outh];
        int ok = mem_hbm_offer(s->hbm, e->addr, e->is_write, e->tag, dc, NULL);
        if (ok < 0) { s->oom = 1; break; }
        if (!ok) {
            s->out_refused = mem_hbm_accept_epoch(s->hbm);
            break;
        }
        s->outh = (s->outh + 1) & (s->capout - 1);
        if (--s->nout == 0 && advancing && !s->cfg.l2.enabled) s->accepts++;
    }
}

/* ---- L2 ------------------------------------------------------------------------ */
static int slice_of(const mem_sys *s, uint64_t line)
{
    uint64_t h = line ^ (line >> 7) ^ (line >> 15) ^ (line >> 23);
    return (int)(s->slice_mask ? h & s->slice_mask : h % (uint64_t)s->nslice);
}

static uint64_t *set_tags(mem_sys *s, slice *sl, uint64_t line, int *base)
{
    uint64_t q = s->slice_mask ? line >> s->slice_shift : line / (uint64_t)s->nslice;
    /* the default's 768 sets a slice are no power of 2: a remainder by
     * multiplication (exact for q < 2^32, Lemire, Kaser and Kurz 2019)
     * instead of a division, which took a seventh of do_lookup's samples */
    uint64_t set = s->set_mask ? q & s->set_mask
                 : q >> 32 ? q % (uint64_t)s->sets
                 : (uint64_t)(((unsigned __int128)(s->set_M * q) * (uint64_t)s->sets) >> 64);
    *base = (int)set * s->ways;
    return &sl->tag[*base];
}

static int lookup(mem_sys *s, slice *sl, uint64_t line)
{
    int base;
    uint64_t *t = set_tags(s, sl, line, &base);
    for (int w = 0; w < s->ways; w++)
        if (t[w] == line + 1) { sl->lru[base + w] = ++s->stamp; return base + w; }
    return -1;
}

/* Install line, evicting the LRU way (write-back if dirty). Returns the way index. */
static int install(mem_sys *s, int si, uint64_t line)
{
    slice *sl = &s->sl[si];
    int base;
    uint64_t *t = set_tags(s, sl, line, &base);
    int v = 0;
    for (int w = 0; w < s->ways; w++) {
        if (t[w] == 0) { v = w; break; }
        if (sl->lru[base + w] < sl->lru[base + v]) v = w;
    }
    int i = base + v;
    if (sl->tag[i] != 0) {
        sl->st.evictions++;
        if (sl->dirty[i]) {
            sl->st.writebacks++;
            int32_t op = op_new(s);
            if (op < 0) { s->oom = 1; }
            else {
                s->op[op].kind = OP_WB;
                send_atoms(s, (sl->tag[i] - 1) * (uint64_t)s->line, (uint32_t)s->line, 1, op);
            }
        }
    }
    sl->tag[i] = line + 1;
    sl->dirty[i] = 0;
    sl->lru[i] = ++s->stamp;
    return i;
}

static void answer(mem_sys *s, int si, int32_t ri, uint64_t t)
{
    sreq *r = &s->rq[ri];
    slice *sl = &s->sl[si];
    mem_hist_add_i(&sl->st.lat, t - r->issue);
    uint64_t tag = r->tag;
    sl->nwait--;
    s->accepts++;
    s->rq_free[s->nrq_free++] = ri;
    if (!s->early) push_ev(s, t, EV_ANSWER, -1, tag);
    else if (s->done) s->done(s->user, tag, t);
}

static void start_miss(mem_sys *s, int si, int32_t ri, uint64_t t);

/* A request's tag lookup at cycle t. */
static void do_lookup(mem_sys *s, int si, int32_t ri, uint64_t t)
{
    slice *sl = &s->sl[si];
    sreq *r = &s->rq[ri];
    const mem_l2_cfg *l = &s->cfg.l2;
    uint64_t line = r->addr >> s->line_shift;
    int w = lookup(s, sl, line);
    if (w >= 0) {
        sl->st.hits++;
        if (r->is_write) {
            if (l->write_back) sl->dirty[w] = 1;
            else {
                int32_t op = op_new(s);
                if (op >= 0) { s->op[op].kind = OP_WB; send_atoms(s, r->addr, r->bytes, 1, op); }
            }
        }
        answer(s, si, ri, t + (uint64_t)l->hit_latency);
        return;
    }
    sl->st.misses++;
    if (r->is_write && !l->write_allocate) {
        /* no allocation: the write goes on to HBM, posted */
        int32_t op = op_new(s);
        if (op >= 0) { s->op[op].kind = OP_WB; send_atoms(s, r->addr, r->bytes, 1, op); }
        answer(s, si, ri, t + (uint64_t)l->hit_latency);
        return;
    }
    if (r->is_write && r->bytes >= (uint32_t)s->line && (r->addr & (uint64_t)(s->line - 1)) == 0) {
        /* a full-line write needs no fill */
        int i = install(s, si, line);
        sl->dirty[i] = l->write_back ? 1 : 0;
        if (!l->write_back) {
            int32_t op = op_new(s);
            if (op >= 0) { s->op[op].kind = OP_WB; send_atoms(s, r->addr, r->bytes, 1, op); }
        }
        answer(s, si, ri, t + (uint64_t)l->hit_latency);
        return;
    }
    start_miss(s, si, ri, t);
}

static void start_miss(mem_sys *s, int si, int32_t ri, uint64_t t)
{
    slice *sl = &s->sl[si];
    sreq *r = &s->rq[ri];
    uint64_t line = r->addr >> s->line_shift;
    r->next = -1;
    for (int m = 0; m < s->cfg.l2.mshrs; m++) {
        smshr *x = &sl->mshr[m];
        if (x->busy && x->line == line) {
            sl->st.mshr_merges++;
            s->rq[x->tail].next = ri;
            x->tail = ri;
            return;
        }
    }
    if (sl->nmshr_busy >= s->cfg.l2.mshrs) {
        if (sl->blk_tail >= 0) s->rq[sl->blk_tail].next = ri; else sl->blk_head = ri;
        sl->blk_tail = ri;
        return;
    }
    int m = 0;
    while (sl->mshr[m].busy) m++;
    smshr *x = &sl->mshr[m];
    int32_t op = op_new(s);
    if (op < 0) { s->oom = 1; return; }
    x->busy = 1; x->line = line; x->head = x->tail = ri; x->op = op;
    sl->nmshr_busy++;
    s->op[op].kind = OP_FILL; s->op[op].slice = si; s->op[op].mshr = m;
    (void)t;
    send_atoms(s, line * (uint64_t)s->line, (uint32_t)s->line, 0, op);
}

static void fill_done(mem_sys *s, int si, int m, uint64_t t)
{
    slice *sl = &s->sl[si];
    smshr *x = &sl->mshr[m];
    const mem_l2_cfg *l = &s->cfg.l2;
    int w = install(s, si, x->line);
    for (int32_t ri = x->head; ri >= 0;) {
        int32_t nx = s->rq[ri].next;
        if (s->rq[ri].is_write) {
            if (l->write_back) sl->dirty[w] = 1;
            else {
                int32_t op = op_new(s);
                if (op >= 0) { s->op[op].kind = OP_WB; send_atoms(s, s->rq[ri].addr, s->rq[ri].bytes, 1, op); }
            }
        }
        answer(s, si, ri, t + (uint64_t)l->hit_latency);
        ri = nx;
    }
    x->busy = 0;
    sl->nmshr_busy--;
    /* a miss that waited for an MSHR looks up again (the line may be there now) */
    if (sl->blk_head >= 0) {
        int32_t ri = sl->blk_head;
        sl->blk_head = s->rq[ri].next;
        if (sl->blk_head < 0) sl->blk_tail = -1;
        do_lookup(s, si, ri, t);
    }
}

/* HBM completion (DRAM cycle dc). */
static void hbm_done(void *user, uint64_t tag, uint64_t dc)
{
    mem_sys *s = user;
    hop *o = &s->op[tag];
    if (--o->left > 0) return;
    uint64_t t = mem_sys_dram_to_core(s, dc);
    if (t < s->now) t = s->now;
    int32_t op = (int32_t)tag;
    if (o->kind == OP_FILL) {
        int si = o->slice, m = o->mshr;
        op_del(s, op);
        fill_done(s, si, m, t);
    } else if (o->kind == OP_DIRECT) {
        push_ev(s, t, EV_ANSWER, -1, o->tag);
        op_del(s, op);
    } else {
        op_del(s, op);
    }
}

/* ---- public ------------------------------------------------------------------------------ */
mem_sys *mem_sys_new(const mem_config *c, double core_clock_ghz, npu_diag *d)
{
    if (!(core_clock_ghz > 0.0009 && core_clock_ghz < 100)) {
        npu_errf(d, NPU_EINVAL, "mem_sys_new: core clock %g GHz out of range", core_clock_ghz);
        return NULL;
    }
    if (mem_config_validate(c, "memory", d)) return NULL;
    mem_sys *s = npu_calloc(1, sizeof *s);
    if (!s) { npu_errf(d, NPU_ENOMEM, "mem_sys_new: out of memory"); return NULL; }
    npu_calq_init(&s->q);
    s->out_refused = NEVER;
    s->cfg = *c;
    s->hbm = mem_hbm_new(c, d);
    if (!s->hbm) { npu_free(s); return NULL; }
    mem_hbm_set_callback(s->hbm, hbm_done, s);
    uint64_t ck = (uint64_t)(core_clock_ghz * 1e6 + 0.5), dk = (uint64_t)c->hbm.data_rate_mbps * 500;
    uint64_t g = gcd64(ck, dk);
    s->ck = ck / g; s->dk = dk / g;
    s->atom = mem_config_atom_bytes(c);
    s->op_free = -1;
    s->line = c->l2.line_bytes;
    s->line_shift = __builtin_ctz((unsigned)s->line);
    s->nslice = c->l2.slices;
    s->ways = c->l2.ways;
    s->sets = (int)(c->l2.size_bytes / ((int64_t)s->line * s->ways * s->nslice));
    if ((s->nslice & (s->nslice - 1)) == 0) {
        s->slice_mask = (uint64_t)s->nslice - 1;
        s->slice_shift = __builtin_ctz((unsigned)s->nslice);
    }
    if (s->sets > 0 && (s->sets & (s->sets - 1)) == 0) s->set_mask = (uint64_t)s->sets - 1;
    else if (s->sets > 0) s->set_M = UINT64_MAX / (uint64_t)s->sets + 1;
    s->occ_line = ((uint64_t)s->line + (uint64_t)c->l2.slice_bytes_per_cycle - 1) /
                  (uint64_t)c->l2.slice_bytes_per_cycle;
    s->sl = npu_calloc((size_t)s->nslice, sizeof *s->sl);
    s->chan_copy = npu_calloc((size_t)mem_hbm_channels(s->hbm), sizeof *s->chan_copy);
    s->slice_copy = npu_calloc((size_t)s->nslice, sizeof *s->slice_copy);
    if (!s->sl || !s->chan_copy || !s->slice_copy) goto oom;
    size_t n = (size_t)s->sets * (size_t)s->ways;
    if (c->l2.enabled) {
        s->tag_all = npu_calloc(n * (size_t)s->nslice, sizeof *s->tag_all);
        s->lru_all = npu_calloc(n * (size_t)s->nslice, sizeof *s->lru_all);
        s->dirty_all = npu_calloc(n * (size_t)s->nslice, 1);
        if (!s->tag_all || !s->lru_all || !s->dirty_all) goto oom;
    }
    for (int i = 0; c->l2.enabled && i < s->nslice; i++) {
        slice *sl = &s->sl[i];
        sl->tag = s->tag_all + (size_t)i * n;
        sl->lru = s->lru_all + (size_t)i * n;
        sl->dirty = s->dirty_all + (size_t)i * n;
        sl->mshr = npu_calloc((size_t)c->l2.mshrs, sizeof *sl->mshr);
        if (!sl->mshr) goto oom;
        sl->blk_head = sl->blk_tail = -1;
        sl->st.lat.min = NEVER;
    }
    return s;
oom:
    mem_sys_free(s);
    npu_errf(d, NPU_ENOMEM, "mem_sys_new: out of memory");
    return NULL;
}

void mem_sys_free(mem_sys *s)
{
    if (!s) return;
    for (int i = 0; s->sl && i < s->nslice; i++) {
        npu_free(s->sl[i].mshr);
    }
    npu_free(s->tag_all); npu_free(s->lru_all); npu_free(s->dirty_all);
    npu_free(s->sl);
    mem_hbm_free(s->hbm);
    npu_free(s->rq); npu_free(s->rq_free); npu_free(s->op); npu_calq_free(&s->q); npu_free(s->out);
    npu_free(s->chan_copy); npu_free(s->slice_copy);
    npu_free(s);
}

void mem_sys_set_callback(mem_sys *s, void (*done)(void *, uint64_t, uint64_t), void *user)
{
    s->done = done;
    s->user = user;
}

void mem_sys_set_early_answers(mem_sys *s, int on) { s->early = on != 0; }

mem_hbm *mem_sys_hbm(mem_sys *s) { return s->hbm; }

/* The slice a request to addr goes to (0 without an L2), or -1 when its
 * port cannot take it now: the one acceptance rule, which submit applies
 * with the slice it needs anyway (no second hash per request). */
static int accept_port(mem_sys *s, uint64_t addr, int is_write)
{
    if (!s->cfg.l2.enabled) {
        /* in-order port: accept while nothing waits ahead of us */
        return s->nout == 0 && mem_hbm_can_accept(s->hbm, addr, is_write) ? 0 : -1;
    }
    int si = slice_of(s, addr >> s->line_shift);
    return s->sl[si].nwait < s->cfg.l2.queue ? si : -1;
}

int mem_sys_can_accept(mem_sys *s, uint64_t addr, int is_write)
{
    return accept_port(s, addr, is_write) >= 0;
}

uint64_t mem_sys_accept_epoch(const mem_sys *s)
{
    /* with the L2 the port's room is its slices' (answer); without it, the
     * in-order buffer's and the HBM queues' behind it */
    return s->accepts + (s->cfg.l2.enabled ? 0 : mem_hbm_accept_epoch(s->hbm));
}

npu_status mem_sys_submit(mem_sys *s, const mem_req *r)
{
    int taken;
    npu_status st = mem_sys_try_submit(s, r, &taken);
    return st ? st : taken ? NPU_OK : NPU_EINVAL;
}

npu_status mem_sys_try_submit(mem_sys *s, const mem_req *r, int *taken)
{
    static npu_diag *const nod = NULL;
    *taken = 0;
    if (r->bytes == 0 || r->bytes > (uint32_t)s->line || (r->addr & (uint64_t)(s->line - 1)) + r->bytes > (uint64_t)s->line)
        return npu_errf(nod, NPU_EINVAL, "mem_sys_submit: request of %u B at 0x%llx crosses an L2 line",
                        r->bytes, (unsigned long long)r->addr);
    int si = accept_port(s, r->addr, r->is_write);
    if (si < 0) return NPU_OK;
    *taken = 1;
    uint64_t t = r->cycle > s->now ? r->cycle : s->now;
    if (!s->cfg.l2.enabled) {
        int32_t op = op_new(s);
        if (op < 0) return NPU_ENOMEM;
        s->op[op].kind = OP_DIRECT; s->op[op].tag = r->tag; s->op[op].issue = r->cycle;
        uint64_t saved = s->now;
        s->now = t;
        send_atoms(s, r->addr, r->bytes, r->is_write, op);
        drain_out(s, 0);
        s->now = saved;
        return s->oom ? NPU_ENOMEM : NPU_OK;
    }
    slice *sl = &s->sl[si];
    {
        /* the lookup comes later (an event at the slice's start cycle): ask
         * the host cache for the set's tags and LRU stamps now (a large L2's
         * arrays miss the host caches, and the lookup waited on them) */
        int base;
        const uint64_t *tg = set_tags(s, sl, r->addr >> s->line_shift, &base);
        for (int w = 0; w < s->ways; w += 8) {
            __builtin_prefetch(tg + w);
            __builtin_prefetch(&sl->lru[base + w], 1);
        }
    }
    int32_t ri = sreq_new(s);
    if (ri < 0) return NPU_ENOMEM;
    sreq *q = &s->rq[ri];
    q->addr = r->addr; q->tag = r->tag; q->issue = r->cycle; q->bytes = r->bytes; q->is_write = r->is_write;
    q->next = -1;
    if (r->is_write) sl->st.writes++; else sl->st.reads++;
    sl->st.bytes += r->bytes;
    uint64_t bw = (uint64_t)s->cfg.l2.slice_bytes_per_cycle;
    uint64_t occ = r->bytes == (uint32_t)s->line ? s->occ_line : (r->bytes + bw - 1) / bw;
    uint64_t start = t > sl->busy_until ? t : sl->busy_until;
    sl->st.stall_cycles += start - t;
    sl->busy_until = start + occ;
    sl->wstart_sum += start;
    sl->wn++;
    sl->nwait++;
    push_ev(s, start, EV_LOOKUP, si, (uint64_t)ri);
    return s->oom ? NPU_ENOMEM : NPU_OK;
}

npu_status mem_sys_status(const mem_sys *s)
{
    return s->oom ? NPU_ENOMEM : mem_hbm_status(s->hbm);
}

/* The HBM's next event in core cycles (its DRAM cycle in hn_dram), asked
 * of the HBM only when it advanced or was offered atoms since last time. */
static uint64_t hbm_next(mem_sys *s)
{
    if (!s->hn_valid) {
        s->hn_dram = mem_hbm_next_event(s->hbm);
        s->hn_core = mem_sys_dram_to_core(s, s->hn_dram);
        s->hn_valid = 1;
    }
    return s->hn_core;
}

static void hbm_advance(mem_sys *s, uint64_t dram_cycle)
{
    mem_hbm_advance_to(s->hbm, dram_cycle);
    s->hn_valid = 0;
}

uint64_t mem_sys_next_event(mem_sys *s)
{
    uint64_t t = ev_next_t(s);
    uint64_t h = hbm_next(s);
    return h < t ? h : t;
}

void mem_sys_advance_to(mem_sys *s, uint64_t T)
{
    for (;;) {
        uint64_t te = ev_next_t(s);
        uint64_t th = hbm_next(s);
        uint64_t t = te < th ? te : th;
        if (t == NEVER || t > T) break;
        if (t > s->now) s->now = t;
        if (th <= te) {
            hbm_advance(s, s->hn_dram);
        } else {
            sev e = pop_ev(s);
            if (e.kind == EV_LOOKUP) {
                s->sl[e.a].wstart_sum -= e.t;
                s->sl[e.a].wn--;
                do_lookup(s, e.a, (int32_t)e.tag, e.t);
            }
            else if (s->done) s->done(s->user, e.tag, e.t);
        }
        drain_out(s, 1);
    }
    if (T > s->now) s->now = T;
    /* keep the HBM's clock with ours so later submissions are timed right */
    uint64_t ho = dram_open(s, T);
    if (ho > 0 && ho - 1 >= mem_hbm_now(s->hbm)) hbm_advance(s, ho - 1);
    drain_out(s, 1);
}

void mem_sys_stats_get(mem_sys *s, mem_sys_stats *o)
{
    mem_sys_stats_at(s, 0, o);
}

int mem_sys_waits_pending(const mem_sys *s)
{
    for (int i = 0; i < s->nslice; i++)
        if (s->sl[i].wn) return 1;
    return 0;
}

void mem_sys_stats_at(mem_sys *s, uint64_t T, mem_sys_stats *o)
{
    /* a sample (T > 0) leaves the histograms' bins out */
    const size_t cl = T ? offsetof(mem_chan_stats, lat) + offsetof(mem_hist, bin) : sizeof(mem_chan_stats);
    const size_t ll = T ? offsetof(mem_l2_stats, lat) + offsetof(mem_hist, bin) : sizeof(mem_l2_stats);
    memset(o, 0, T ? offsetof(mem_sys_stats, hbm_total) : sizeof *o);
    o->nchan = mem_hbm_channels(s->hbm);
    o->nslice = s->nslice;
    for (int i = 0; i < o->nchan; i++) memcpy(&s->chan_copy[i], mem_hbm_chan_stats(s->hbm, i), cl);
    o->chan = s->chan_copy;
    if (T)
        mem_hbm_total_stats_nobins(s->hbm, &o->hbm_total);
    else
        mem_hbm_total_stats(s->hbm, &o->hbm_total);
    memset(&o->l2_total, 0, ll);
    o->dram_cycles = o->core_cycles = 0;
    o->l2_total.lat.min = NEVER;
    for (int i = 0; i < s->nslice; i++) {
        memcpy(&s->slice_copy[i], &s->sl[i].st, ll);
        const mem_l2_stats *x = &s->slice_copy[i];
        /* the waits of lookups still to start, up to T only (every one
         * starts at or after T when T is the caller's current cycle) */
        const slice *q = &s->sl[i];
        if (T && q->wn && q->wstart_sum > (uint64_t)q->wn * T)
            s->slice_copy[i].stall_cycles -= q->wstart_sum - (uint64_t)q->wn * T;
        mem_l2_stats *t = &o->l2_total;
        t->reads += x->reads; t->writes += x->writes; t->hits += x->hits; t->misses += x->misses;
        t->mshr_merges += x->mshr_merges; t->evictions += x->evictions; t->writebacks += x->writebacks;
        t->bytes += x->bytes; t->stall_cycles += x->stall_cycles;
        t->lat.n += x->lat.n; t->lat.sum += x->lat.sum;
        if (x->lat.n && x->lat.min < t->lat.min) t->lat.min = x->lat.min;
        if (x->lat.max > t->lat.max) t->lat.max = x->lat.max;
        for (int b = 0; !T && b < MEM_HIST_N; b++) t->lat.bin[b] += x->lat.bin[b];
    }
    o->slice = s->slice_copy;
    o->dram_cycles = mem_hbm_now(s->hbm);
    o->core_cycles = s->now;
}

void mem_sys_set_cmd_observer(mem_sys *s, mem_cmd_fn fn, void *user)
{
    mem_hbm_set_cmd_observer(s->hbm, fn, user);
}
