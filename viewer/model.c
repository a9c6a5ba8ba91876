/* model.c — the trace, loaded once into arrays a frame can query fast.
 *
 * One pass over the trace (trc_iter in start order) sorts every event into
 * its track: a track per (core, pipe) holds its instructions and its stalls
 * as arrays sorted by start, so that a frame finds the visible part by binary
 * search and never walks what it does not draw. cum[] (prefix sums of busy
 * cycles) gives a pipe's utilisation over any window in O(log n), which is
 * what the per-core utilisation tracks and the sub-pixel merging need.
 * Counters (cumulative samples) become per-bin deltas from cycle 0 summed
 * over units, and totals (each unit's last sample); HBM commands become tick
 * lanes per (channel, pseudo-channel); flag sets and waits are paired by
 * their sequence number into flows for the arrows. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include <cjson/cJSON.h>

#include "counters/ctr.h"
#include "frontend/config.h"
#include "viewer/vw.h"

double vw_clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now_s(void) { return vw_clock_s(CLOCK_MONOTONIC); }

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need)
        nc *= 2;
    void *q = npu_realloc(*p, nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* The open-addressing u64 -> int32 tables of the loader (stacks, flags):
 * key 0 marks an empty slot, linear probing, a power-of-two capacity. Each
 * table indexes by the Fibonacci hash shifted right by its own amount (its
 * keys' varying bits differ). */
static size_t kslot(uint64_t k, unsigned shift, size_t cap)
{
    return (size_t)(k * 0x9E3779B97F4A7C15ull >> shift) & (cap - 1);
}

/* Double the table (1024 slots when empty) and reinsert every key; on OOM
 * the old table is kept and -1 returned. */
static int ktab_grow(uint64_t **key, int32_t **val, size_t *cap, unsigned shift)
{
    size_t nc = *cap ? *cap * 2 : 1024;
    uint64_t *nk = npu_calloc(nc, sizeof *nk);
    int32_t *nv = npu_calloc(nc, sizeof *nv);
    if (!nk || !nv) {
        npu_free(nk);
        npu_free(nv);
        return -1;
    }
    for (size_t i = 0; i < *cap; i++)
        if ((*key)[i]) {
            size_t h = kslot((*key)[i], shift, nc);
            while (nk[h])
                h = (h + 1) & (nc - 1);
            nk[h] = (*key)[i];
            nv[h] = (*val)[i];
        }
    npu_free(*key);
    npu_free(*val);
    *key = nk;
    *val = nv;
    *cap = nc;
    return 0;
}

/* ---- interned stacks (open addressing on (parent, symbol)) ----------------- */
typedef struct stack_map {
    uint64_t *key;      /* 0 = empty; else (parent+1) << 40 ^ symbol-pointer hash, see below */
    int32_t *val;
    size_t cap;
} stack_map;

static uint64_t skey(int32_t parent, const trc_symbol *s)
{
    return ((uint64_t)(uint32_t)(parent + 1) << 44) ^ (uint64_t)(uintptr_t)s ^ 1u;
}

static int32_t intern(vw_model *m, stack_map *sm, int32_t parent, const trc_symbol *s)
{
    if (m->nstacks >= 65535)
        return 0;   /* beyond u16: fold into the root rather than fail */
    if (m->nstacks * 2 + 2 >= sm->cap) {
        if (ktab_grow(&sm->key, &sm->val, &sm->cap, 0))
            return -1;
    }
    uint64_t k = skey(parent, s);
    size_t h = kslot(k, 0, sm->cap);
    while (sm->key[h]) {
        if (sm->key[h] == k) {
            int32_t id = sm->val[h];
            if (m->stacks[id].parent == parent && m->stacks[id].sym == s)
                return id;
        }
        h = (h + 1) & (sm->cap - 1);
    }
    if (grow((void **)&m->stacks, &m->capstacks, m->nstacks + 1, sizeof *m->stacks))
        return -1;
    int32_t id = (int32_t)m->nstacks++;
    m->stacks[id] = (vw_frame){ parent, s };
    sm->key[h] = k;
    sm->val[h] = id;
    return id;
}

typedef struct core_ld {
    int32_t chain[64];      /* call chain: stack ids, chain[0] = root (0) */
    int depth;
    uint64_t last_pc;
    int32_t last_stack;
    /* (pc, chain) -> stack, direct mapped: a loop's few pcs hit every time */
    uint64_t c_pc[256];
    int32_t c_chain[256], c_stack[256];
    /* the stack each function was last called with: an instruction that
     * starts after its function returned is put back under that call */
    const trc_symbol *called[16];
    int32_t called_stack[16];
    unsigned ncalled;
} core_ld;

/* The stack of an instruction at pc given the core's call chain: the chain
 * cut at the pc's function (an instruction that started after its
 * function's return still belongs to it), then the label inside it. */
static int32_t stack_of(vw_model *m, stack_map *sm, core_ld *c, uint64_t pc)
{
    unsigned slot = (unsigned)((pc >> 2) ^ (pc >> 10)) & 255;
    if (c->c_pc[slot] == pc + 1 && c->c_chain[slot] == c->chain[c->depth])
        return c->c_stack[slot];
    const trc_symbol *fn = trc_reader_function_at(m->r, pc);
    const trc_symbol *lb = trc_reader_label_at(m->r, pc);
    int32_t node = c->chain[c->depth];
    if (fn) {
        int32_t k = node;
        while (k > 0 && m->stacks[k].sym != fn)
            k = m->stacks[k].parent;
        if (k <= 0)
            for (unsigned i = 0; i < 16 && i < c->ncalled; i++)
                if (c->called[i] == fn)
                    k = c->called_stack[i];
        node = k > 0 ? k : intern(m, sm, node, fn);
    }
    if (node >= 0 && lb && (!fn || lb->addr >= fn->addr))
        node = intern(m, sm, node, lb);
    if (node < 0)
        return -1;
    c->c_pc[slot] = pc + 1;
    c->c_chain[slot] = c->chain[c->depth];
    c->c_stack[slot] = node;
    return node;
}

static inline int push_box(vw_box **a, size_t *n, size_t *cap, uint32_t *maxdur, const vw_box *b)
{
    if (*n >= *cap && grow((void **)a, cap, *n + 1, sizeof **a))
        return -1;
    (*a)[(*n)++] = *b;
    if (b->dur > *maxdur)
        *maxdur = b->dur;
    return 0;
}

/* The roofs, from the config the trace embeds, through the peaks npusim
 * stat uses (ctr_machine_from_cfg): the cube's f16 MACs a cycle on every
 * core; GM's backing memory (the HBM, or the fixed port); the L2 when
 * enabled. A config that does not load as a machine config (a synthetic
 * trace's) gets the default machine's roofs but no L2 roof: nothing says
 * there is one. */
static void roofs(vw_model *m)
{
    cfg_machine *c = npu_malloc(sizeof *c);
    if (!c)
        return;   /* (no roofs: the roofline says so) */
    const char *js = m->meta->config_json;
    npu_diag d;
    int ok = js && cfg_load_json_text(c, js, strlen(js), "trace config", &d) == NPU_OK;
    if (!ok)
        cfg_default(c);
    ctr_machine p;
    ctr_machine_from_cfg(c, (int)m->ncores, &p);
    /* (per cycle at the config's clock; the fixed port implies a config) */
    double hz = (ok || m->meta->clock_ghz <= 0 ? c->chip.clock_ghz : m->meta->clock_ghz) * 1e9;
    m->cube_ops_per_busy_cycle = 2 * p.cube_macs_per_cycle[ISA_DT_F16];
    m->peak_ops_per_cycle = m->cube_ops_per_busy_cycle * m->ncores;
    m->fixed_port = p.fixed_port;
    m->peak_bytes_per_cycle = p.gm_peak_Bps / hz;
    m->l2_bytes_per_cycle = ok ? p.l2_peak_Bps / hz : 0;
    m->hbm_atom_bytes = mem_config_atom_bytes(&c->mem);
    npu_free(c);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* hbm_col_t: the times of the lanes' column commands (those named RD... or
 * WR... in the trace's HBM command table), sorted, once at load */
static int hbm_columns(vw_model *m)
{
    const trc_names *nm = &m->meta->hbm_commands;
    uint8_t col[256] = { 0 };
    for (uint32_t i = 0; i < nm->count && i < 256; i++)
        col[i] = nm->names[i] && (!strncmp(nm->names[i], "RD", 2) || !strncmp(nm->names[i], "WR", 2));
    size_t n = 0;
    for (uint32_t l = 0; l < m->nhbm; l++)
        for (size_t i = 0; i < m->hbm[l].n; i++)
            n += col[m->hbm[l].v[i].cmd];
    if (!n)
        return 0;
    if (!(m->hbm_col_t = npu_malloc(n * sizeof *m->hbm_col_t)))
        return -1;
    for (uint32_t l = 0; l < m->nhbm; l++)
        for (size_t i = 0; i < m->hbm[l].n; i++)
            if (col[m->hbm[l].v[i].cmd])
                m->hbm_col_t[m->nhbm_col++] = m->hbm[l].v[i].t;
    if (n > 1)
        qsort(m->hbm_col_t, n, sizeof *m->hbm_col_t, cmp_u64);
    return 0;
}

double vw_hbm_bytes(const vw_model *m, uint64_t a, uint64_t z, const char **how)
{
    if (m->nhbm_col) {
        *how = "RD/WR commands x atom";
        return (double)vw_hbm_col_count(m, a, z) * m->hbm_atom_bytes;
    }
    *how = "hbm.bytes_* counters";
    return vw_bytes_counters(m, "hbm", a, z);
}

double vw_bytes_counters(const vw_model *m, const char *level, uint64_t a, uint64_t z)
{
    size_t n = strlen(level);
    double s = 0;
    int any = 0;
    for (size_t i = 0; i < m->nctr; i++) {
        const char *nm = m->ctr[i].name;
        if (strncmp(nm, level, n) || nm[n] != '.' || !strstr(nm + n, "bytes"))
            continue;
        any = 1;
        for (size_t k = (size_t)(a / m->ctr_width); k < m->ctr[i].nbins && k * m->ctr_width < z; k++)
            s += m->ctr[i].bin[k];
    }
    return any ? s : -1;
}

size_t vw_hbm_col_count(const vw_model *m, uint64_t t0, uint64_t t1)
{
    /* (vw_track_first: the first element after t; elements < x end at the
     * first one after x - 1) */
    if (t1 <= t0)
        return 0;
    size_t lo = t0 ? vw_track_first(m->hbm_col_t, m->nhbm_col, t0 - 1) : 0;
    return vw_track_first(m->hbm_col_t, m->nhbm_col, t1 - 1) - lo;
}

npu_status vw_model_load(vw_model *m, const char *path, npu_diag *d)
{
    memset(m, 0, sizeof *m);
    trc_reader *r = trc_open(path, d);
    if (!r)
        return d && d->status ? d->status : NPU_EIO;
    return vw_model_load_reader(m, r, d);
}

/* ---- a threaded load: the reader decodes while the model sorts --------
 * Decoding (zlib, varints, the merge of chunks) is about half of a load; a
 * producer thread runs the trc_iter into a ring of event batches and the
 * loading thread files them into tracks, so both halves overlap. The
 * iterator itself inflates chunks ahead on a third thread
 * (trc_iter_prefetch). */
#define PIPE_BATCH 8192
#define PIPE_SLOTS 4
typedef struct ev_pipe {
    trc_iter *it;
    pthread_t th;
    int threaded, joined, inited;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    trc_event *buf[PIPE_SLOTS];
    size_t n[PIPE_SLOTS];
    unsigned head, tail;    /* batches produced / consumed */
    int done, stop;
    double cpu;             /* CPU seconds of the decoding (producer or inline) */
} ev_pipe;

static double thread_cpu(void) { return vw_clock_s(CLOCK_THREAD_CPUTIME_ID); }

static size_t fill(trc_iter *it, trc_event *b)
{
    size_t n = 0;
    while (n < PIPE_BATCH && trc_iter_next(it, &b[n]))
        n++;
    return n;
}

static void *producer(void *arg)
{
    ev_pipe *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->head - p->tail == PIPE_SLOTS && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        int stop = p->stop;
        unsigned slot = p->head % PIPE_SLOTS;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;
        size_t n = fill(p->it, p->buf[slot]);
        pthread_mutex_lock(&p->mu);
        p->n[slot] = n;
        p->head++;
        if (n < PIPE_BATCH)
            p->done = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (n < PIPE_BATCH)
            break;
    }
    p->cpu = thread_cpu();  /* read by the consumer after the join */
    return NULL;
}

static int pipe_start(ev_pipe *p, trc_iter *it)
{
    memset(p, 0, sizeof *p);
    p->it = it;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->inited = 1;
    for (int i = 0; i < PIPE_SLOTS; i++) {
        p->buf[i] = npu_malloc(PIPE_BATCH * sizeof(trc_event));
        if (!p->buf[i])
            return -1;
    }
    /* without a thread (creation failed) the consumer fills batches itself */
    p->threaded = pthread_create(&p->th, NULL, producer, p) == 0;
    return 0;
}

/* The next batch (NULL at the end); hand it back with pipe_release. */
static const trc_event *pipe_next(ev_pipe *p, size_t *n)
{
    if (!p->threaded) {
        if (p->done)
            return NULL;
        *n = fill(p->it, p->buf[0]);
        p->done = *n < PIPE_BATCH;
        return p->buf[0];
    }
    pthread_mutex_lock(&p->mu);
    while (p->head == p->tail && !p->done)
        pthread_cond_wait(&p->cv, &p->mu);
    const trc_event *b = NULL;
    if (p->head != p->tail) {
        unsigned slot = p->tail % PIPE_SLOTS;
        *n = p->n[slot];
        b = p->buf[slot];
    }
    pthread_mutex_unlock(&p->mu);
    return b;
}

static void pipe_release(ev_pipe *p)
{
    if (!p->threaded)
        return;
    pthread_mutex_lock(&p->mu);
    p->tail++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Stop and join the producer (idempotent), free the batches. */
static void pipe_end(ev_pipe *p)
{
    if (p->threaded && !p->joined) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->th, NULL);
        p->joined = 1;
    }
    if (p->inited) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        p->inited = 0;
    }
    for (int i = 0; i < PIPE_SLOTS; i++) {
        npu_free(p->buf[i]);
        p->buf[i] = NULL;
    }
}

/* Unpaired flag sets by (core, src, dst, flag): key -> newest set's index
 * (-1 = none), open addressing; 0 marks an empty slot. */
typedef struct fmap { uint64_t *key; int32_t *head; size_t cap, n; int32_t none; } fmap;

static uint64_t fkey(uint32_t core, unsigned src, unsigned dst, uint32_t id)
{
    return ((uint64_t)core << 24 | (uint64_t)(src & 0xFF) << 16 | (uint64_t)(dst & 0xFF) << 8 | (id & 0xFF)) + 1;
}

/* The list head of key k. A key never seen gets a new empty list if add,
 * else an empty list that is not stored (f->none). NULL only on OOM. */
static int32_t *fmap_slot(fmap *f, uint64_t k, int add)
{
    if (add && (f->n + 1) * 2 > f->cap) {
        if (ktab_grow(&f->key, &f->head, &f->cap, 20))
            return NULL;
    }
    if (!f->cap) {
        f->none = -1;
        return &f->none;
    }
    size_t h = kslot(k, 20, f->cap);
    while (f->key[h]) {
        if (f->key[h] == k)
            return &f->head[h];
        h = (h + 1) & (f->cap - 1);
    }
    if (!add) {
        f->none = -1;
        return &f->none;
    }
    f->key[h] = k;
    f->head[h] = -1;
    f->n++;
    return &f->head[h];
}

static int build_sums(vw_model *m);
static int collect_pipe_pcs(vw_model *m);
static void sums_free(vw_sums *u);
static void lod_free(vw_lod *lod);

typedef struct ctr_last { uint64_t t, v; int seen; } ctr_last;

static int heat_pyramid(vw_model *m, vw_heat *h);

/* Add delta, counted over the cycles pt..t (t > pt), to the bins of width
 * w it covers, in proportion; a delta at one cycle (t == pt) goes to the
 * bin of that cycle. */
static void spread(double *bin, size_t nbins, uint64_t w, uint64_t pt, uint64_t t, double delta)
{
    if (t == pt) {
        uint64_t bi = pt ? (pt - 1) / w : 0;
        if (bi < nbins)
            bin[bi] += delta;
        return;
    }
    double span = (double)(t - pt);
    for (uint64_t bi = pt / w; bi <= (t - 1) / w && bi < nbins; bi++) {
        uint64_t a = NPU_MAX(pt, bi * w), z = NPU_MIN(t, (bi + 1) * w);
        if (z > a)
            bin[bi] += delta * (double)(z - a) / span;
    }
}

/* The heat map row of a counter unit named "L2 slice N" / "HBM channel N"
 * (kind in *g), or -1. */
static int heat_row(const char *name, int *g)
{
    static const char *const pre[VW_HEAT__N] = { "L2 slice ", "HBM channel " };
    for (int k = 0; name && k < VW_HEAT__N; k++) {
        size_t l = strlen(pre[k]);
        if (strncmp(name, pre[k], l) != 0)
            continue;
        char *end;
        long v = strtol(name + l, &end, 10);
        if (end == name + l || *end || v < 0 || v >= 4096)
            return -1;
        *g = k;
        return (int)v;
    }
    return -1;
}

/* trc_kind_class as a table the filing loop reads inline (one call per
 * event otherwise): expanded from the same events.def */
static const uint8_t kind_class[TRC_NKINDS] = {
    [TRC_KIND_NONE] = TRC_CLASS_CORE,
#define TRC_EVENT(ID, nm, cl, ...) [TRC_##ID] = TRC_CLASS_##cl,
#include "traces/events.def"
#undef TRC_EVENT
};

npu_status vw_model_load_reader(vw_model *m, trc_reader *r, npu_diag *d)
{
    double c_start = thread_cpu(), c_post = 0, w_post = 0;
    memset(m, 0, sizeof *m);
    m->r = r;
    m->meta = trc_reader_meta(r);
    trc_reader_time_range(r, &m->t_min, &m->t_end);
    m->ncores = m->meta->n_cores;
    npu_status st = NPU_OK;
    stack_map sm = {0};
    core_ld *cl = NULL;
    ctr_last *last = NULL;
    size_t nlast = 0;
    int32_t *hunit = NULL;      /* per counter unit: heat kind << 16 | row, or -1 */
    uint32_t nhunit = 0;
    int hctr[64];               /* per counter id (< 64): the heat kind it feeds, or -1 */
    for (int i = 0; i < 64; i++)
        hctr[i] = -1;
    trc_iter *it = NULL;
    fmap fm = {0};
    int32_t *fnext = NULL;  /* per flow: the next older unpaired set of its key */
    ev_pipe pp;
    memset(&pp, 0, sizeof pp);
    /* Cores may exceed the meta's count in a damaged or odd trace: tracks
     * grow on demand up to a sane bound. */
    if (m->ncores == 0 || m->ncores > 4096)
        m->ncores = m->ncores ? 4096 : 1;
    m->tracks = npu_calloc((size_t)m->ncores * TRC_NPIPES, sizeof *m->tracks);
    cl = npu_calloc(m->ncores, sizeof *cl);
    if (!m->tracks || !cl)
        goto oom;
    if (intern(m, &sm, -1, NULL) != 0)  /* the root */
        goto oom;
    m->ctr_width = m->meta->counter_interval ? m->meta->counter_interval : 1000;
    m->nctr = m->meta->counters.count;
    if (m->nctr) {
        m->ctr = npu_calloc(m->nctr, sizeof *m->ctr);
        if (!m->ctr)
            goto oom;
        size_t nb = (size_t)((m->t_end / m->ctr_width) + 2);
        if (nb > ((size_t)1 << 26))
            nb = (size_t)1 << 26;
        for (size_t i = 0; i < m->nctr; i++) {
            m->ctr[i].name = m->meta->counters.names[i] ? m->meta->counters.names[i] : "counter";
            m->ctr[i].nbins = nb;
            m->ctr[i].bin = npu_calloc(nb, sizeof(double));
            if (!m->ctr[i].bin)
                goto oom;
        }
        /* heat maps of per-slice and per-channel units (record -A) */
        const trc_names *un = &m->meta->units;
        if (un->count && un->names) {
            hunit = npu_malloc(un->count * sizeof *hunit);
            if (!hunit)
                goto oom;
            for (uint32_t u = 0; u < un->count; u++) {
                int g = 0, row = heat_row(un->names[u], &g);
                hunit[u] = row < 0 ? -1 : g << 16 | row;
                if (row >= 0 && (uint32_t)row + 1 > m->heat[g].n)
                    m->heat[g].n = (uint32_t)row + 1;
            }
            nhunit = un->count;
            for (int g = 0; g < VW_HEAT__N; g++) {
                vw_heat *h = &m->heat[g];
                if (h->n && (size_t)h->n * nb > ((size_t)1 << 24))
                    h->n = 0;   /* too many cells (an odd trace): no map, not 128 MB + its pyramid */
                if (!h->n)
                    continue;
                h->nbins = nb;
                h->bin = npu_calloc((size_t)h->n * nb, sizeof(double));
                if (!h->bin)
                    goto oom;
            }
        }
        for (size_t i = 0; i < m->nctr && i < 64; i++) {
            const char *nm = m->ctr[i].name;
            hctr[i] = !strcmp(nm, "l2.bytes") ? VW_HEAT_L2
                    : !strcmp(nm, "hbm.bytes_read") || !strcmp(nm, "hbm.bytes_written") ? VW_HEAT_HBM : -1;
        }
    }
    /* a trace whose STALL causes include wait_flag shows waits twice if
     * FLAG_WAIT intervals became stalls as well */
    int flag_cause = 0;
    for (uint32_t i = 0; i < m->meta->causes.count; i++)
        if (m->meta->causes.names[i] && strstr(m->meta->causes.names[i], "flag"))
            flag_cause = 1;
    it = trc_iter_new(r, NULL, d);
    if (!it) {
        st = d && d->status ? d->status : NPU_ENOMEM;
        goto fail;
    }
    /* chunks are read and inflated on a helper thread ahead of the decoding
     * one (same events, same order): decoding was the longer of the two
     * load threads */
    trc_iter_prefetch(it, 1);
    if (pipe_start(&pp, it))
        goto oom;
    const trc_event *batch;
    size_t nbatch = 0;
    while ((batch = pipe_next(&pp, &nbatch))) {
    for (size_t bi = 0; bi < nbatch; bi++) {
        trc_event e = batch[bi];
        m->n_events++;
        unsigned kc = e.kind < TRC_NKINDS ? kind_class[e.kind] : TRC_CLASS_CORE;
        if (kc == TRC_CLASS_CORE && e.core >= m->ncores)
            continue;   /* a core the header does not know: skipped, not fatal */
        core_ld *c = kc == TRC_CLASS_CORE ? &cl[e.core] : NULL;
        switch (e.kind) {
        case TRC_INSN: {
            if (e.pipe >= TRC_NPIPES)
                break;
            int32_t s = stack_of(m, &sm, c, e.addr);
            if (s < 0)
                goto oom;
            c->last_stack = s;
            c->last_pc = e.addr;
            uint64_t du = e.t1 > e.t0 ? e.t1 - e.t0 : 0;
            vw_box b = { e.t0, du > UINT32_MAX ? UINT32_MAX : (uint32_t)du, (uint32_t)e.addr,
                         (uint16_t)e.id, (uint16_t)s };
            vw_track *t = vw_track_at(m, e.core, e.pipe);
            if (push_box(&t->box, &t->n, &t->cap, &t->maxdur, &b))
                goto oom;
            m->n_insn++;
            break;
        }
        case TRC_STALL: case TRC_FLAG_WAIT: case TRC_BARRIER: {
            if (e.kind == TRC_FLAG_WAIT && flag_cause)
                goto pair;  /* the STALL events already show the wait */
            unsigned p = e.kind == TRC_STALL ? e.pipe : e.kind == TRC_FLAG_WAIT ? e.pipe2 : TRC_PIPE_S;
            if (p >= TRC_NPIPES)
                break;
            uint64_t du = e.t1 > e.t0 ? e.t1 - e.t0 : 0;
            uint16_t op = e.kind == TRC_STALL ? (uint16_t)NPU_MIN(e.id, 0xFFEFu)
                        : e.kind == TRC_FLAG_WAIT ? VW_CAUSE_FLAG : VW_CAUSE_BARRIER;
            vw_box b = { e.t0, du > UINT32_MAX ? UINT32_MAX : (uint32_t)du, (uint32_t)c->last_pc, op,
                         (uint16_t)c->last_stack };
            vw_track *t = vw_track_at(m, e.core, p);
            if (push_box(&t->stall, &t->ns, &t->caps, &t->maxsdur, &b))
                goto oom;
            m->n_stall++;
        pair:
            if (e.kind == TRC_FLAG_WAIT && e.id < 256) {
                /* pair with the newest unpaired set of the same (core, src,
                 * dst, flag) that came before the wait ended: sets come
                 * earlier in start order, and each key keeps its unpaired
                 * sets in a list (newest first), so this is O(1), not a
                 * scan over recent flows */
                int32_t *hp = fmap_slot(&fm, fkey(e.core, e.pipe, e.pipe2, e.id), 0);
                if (!hp)
                    goto oom;
                for (int32_t *pp_ = hp; *pp_ >= 0; pp_ = &fnext[*pp_]) {
                    vw_flow *f = &m->flows[*pp_];
                    if (f->t_set <= e.t1) {
                        f->t_wait0 = e.t0;
                        f->t_wait1 = e.t1 ? e.t1 : 1;
                        *pp_ = fnext[*pp_];
                        break;
                    }
                }
            }
            break;
        }
        case TRC_FLAG_SET: {
            size_t fcap = m->capflows;
            if (grow((void **)&m->flows, &m->capflows, m->nflows + 1, sizeof *m->flows))
                goto oom;
            if (m->capflows != fcap) {
                int32_t *q = npu_realloc(fnext, m->capflows * sizeof *q);
                if (!q)
                    goto oom;
                fnext = q;
            }
            int32_t *hp = fmap_slot(&fm, fkey(e.core, e.pipe, e.pipe2, (uint8_t)e.id), 1);
            if (!hp || m->nflows >= INT32_MAX)
                goto oom;
            fnext[m->nflows] = *hp;
            *hp = (int32_t)m->nflows;
            m->flows[m->nflows++] = (vw_flow){ e.core, e.pipe, e.pipe2, (uint8_t)e.id, 0, e.t0, 0, 0 };
            break;
        }
        case TRC_CALL:
            if (c->depth < 63) {
                const trc_symbol *fn = trc_reader_function_at(r, e.addr2);
                int32_t s = fn ? intern(m, &sm, c->chain[c->depth], fn) : c->chain[c->depth];
                if (s < 0)
                    goto oom;
                c->chain[++c->depth] = s;
                if (fn) {
                    unsigned slot = 16;
                    for (unsigned i = 0; i < 16 && i < c->ncalled; i++)
                        if (c->called[i] == fn)
                            slot = i;
                    if (slot == 16)
                        slot = c->ncalled++ % 16;
                    c->called[slot] = fn;
                    c->called_stack[slot] = s;
                }
            }
            break;
        case TRC_RET:
            if (c->depth > 0)
                c->depth--;
            break;
        case TRC_COUNTER: {
            if (e.id >= m->nctr)
                break;
            size_t key = (size_t)e.core * m->nctr + e.id;
            if (key >= nlast) {
                size_t nn = key + 1 + 64;
                ctr_last *q = npu_realloc(last, nn * sizeof *q);
                if (!q)
                    goto oom;
                memset(q + nlast, 0, (nn - nlast) * sizeof *q);
                last = q;
                nlast = nn;
            }
            ctr_last *l = &last[key];
            /* samples are cumulative from cycle 0: before a unit's first
             * sample it stood at 0 at cycle 0 (that first interval is part
             * of the run too). A sample below the previous one (never
             * written by the recorder) adds nothing. */
            uint64_t pt = l->seen ? l->t : 0, pv = l->seen ? l->v : 0;
            if (e.val > pv && e.t0 >= pt) {
                /* the delta since the unit's last sample, spread evenly over
                 * the bins that interval covers (totals stay exact) */
                double delta = (double)(e.val - pv);
                vw_counter *k = &m->ctr[e.id];
                spread(k->bin, k->nbins, m->ctr_width, pt, e.t0, delta);
                if (e.core < nhunit && hunit[e.core] >= 0 && e.id < 64 &&
                    hctr[e.id] == hunit[e.core] >> 16) {
                    vw_heat *h = &m->heat[hunit[e.core] >> 16];
                    uint32_t row = (uint32_t)hunit[e.core] & 0xFFFF;
                    if (row < h->n)
                        spread(h->bin + (size_t)row * h->nbins, h->nbins, m->ctr_width, pt, e.t0, delta);
                }
            }
            if (l->seen && e.val < l->v)
                break;   /* keep the larger: the total is the last cumulative value */
            l->seen = 1;
            l->t = e.t0;
            l->v = e.val;
            break;
        }
        case TRC_MEM:
            m->mem_bytes += e.aux;
            break;
        case TRC_HBM: {
            uint32_t lane = e.core * 2 + (e.pipe & 1);
            if (lane >= 1024)
                break;
            if (lane >= m->nhbm) {
                vw_lane_hbm *q = npu_realloc(m->hbm, (lane + 1) * sizeof *q);
                if (!q)
                    goto oom;
                memset(q + m->nhbm, 0, (lane + 1 - m->nhbm) * sizeof *q);
                m->hbm = q;
                m->nhbm = lane + 1;
            }
            vw_lane_hbm *h = &m->hbm[lane];
            if (grow((void **)&h->v, &h->cap, h->n + 1, sizeof *h->v))
                goto oom;
            h->v[h->n++] = (vw_tick){ e.t0, e.pipe2 };
            break;
        }
        default:
            break;
        }
    }
    pipe_release(&pp);
    }
    pipe_end(&pp);
    c_post = thread_cpu();
    w_post = now_s();
    m->load_decode_cpu = pp.cpu;
    m->load_build_cpu = c_post - c_start;
    st = trc_iter_error(it, d);
    if (st)
        goto fail;
    if (m->n_events == 0) {
        const trc_damage *dl;
        size_t nd = trc_reader_damage(r, &dl);
        if (nd)
            st = npu_errf(d, NPU_EFORMAT, "trace has no readable events: at byte %llu: %s",
                          (unsigned long long)dl[0].offset, dl[0].what);
        else
            st = npu_errf(d, NPU_EFORMAT, "trace has no events");
        goto fail;
    }
    /* prefix arrays, stall totals, summaries, levels of detail and grids:
     * per core, on two threads */
    if (build_sums(m) || collect_pipe_pcs(m))
        goto oom;
    /* per-counter totals: each unit's last (cumulative) sample */
    for (size_t key = 0; key < nlast && m->nctr; key++)
        if (last[key].seen)
            m->ctr[key % m->nctr].total += last[key].v;
    for (size_t i = 0; i < m->nctr; i++) {
        double mx = 0;
        for (size_t k = 0; k < m->ctr[i].nbins; k++)
            mx = NPU_MAX(mx, vw_counter_rate(m, &m->ctr[i], k));
        m->ctr[i].max_rate = mx;
    }
    if (m->t_end <= m->t_min)
        m->t_end = m->t_min + 1;
    for (int g = 0; g < VW_HEAT__N; g++)
        if (heat_pyramid(m, &m->heat[g]))
            goto oom;
    roofs(m);
    if (hbm_columns(m))
        goto oom;
    pipe_end(&pp);
    trc_iter_free(it);
    npu_free(cl);
    npu_free(last);
    npu_free(hunit);
    npu_free(sm.key);
    npu_free(sm.val);
    npu_free(fm.key);
    npu_free(fm.head);
    npu_free(fnext);
    m->load_post_cpu = thread_cpu() - c_post;
    m->load_post_wall = now_s() - w_post;
    return NPU_OK;
oom:
    st = npu_errf(d, NPU_ENOMEM, "npuview: out of memory loading the trace (%llu events read)",
                  (unsigned long long)m->n_events);
fail:
    pipe_end(&pp);
    trc_iter_free(it);
    npu_free(cl);
    npu_free(last);
    npu_free(hunit);
    npu_free(sm.key);
    npu_free(sm.val);
    npu_free(fm.key);
    npu_free(fm.head);
    npu_free(fnext);
    vw_model_free(m);
    return st;
}

void vw_model_free(vw_model *m)
{
    if (m->tracks)
        for (size_t i = 0; i < (size_t)m->ncores * TRC_NPIPES; i++) {
            npu_free(m->tracks[i].box);
            npu_free(m->tracks[i].cum);
            npu_free(m->tracks[i].maxend);
            npu_free(m->tracks[i].smaxend);
            npu_free(m->tracks[i].stall);
            sums_free(&m->tracks[i].sb);
            sums_free(&m->tracks[i].ss);
            lod_free(m->tracks[i].lod);
            lod_free(m->tracks[i].slod);
        }
    npu_free(m->tracks);
    npu_free(m->ugrid);
    npu_free(m->mgrid);
    npu_free(m->pipe_pcs);
    npu_free(m->flows);
    for (size_t i = 0; i < m->nctr; i++)
        npu_free(m->ctr[i].bin);
    npu_free(m->ctr);
    for (int g = 0; g < VW_HEAT__N; g++) {
        npu_free(m->heat[g].bin);
        for (int l = 0; l < m->heat[g].nlv; l++)
            npu_free(m->heat[g].lv[l]);
    }
    for (uint32_t i = 0; i < m->nhbm; i++)
        npu_free(m->hbm[i].v);
    npu_free(m->hbm);
    npu_free(m->hbm_col_t);
    npu_free(m->stacks);
    if (m->r)
        trc_close(m->r);
    memset(m, 0, sizeof *m);
}

size_t vw_track_first(const uint64_t *maxend, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (maxend[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Cycles of counter bin k (the last one ends at the trace's end). */
static double bin_cycles(const vw_model *m, size_t k)
{
    uint64_t a = (uint64_t)k * m->ctr_width, z = a + m->ctr_width;
    if (m->t_end > a && m->t_end < z)
        z = m->t_end;
    return (double)(z - a);
}

static size_t lv_len(const vw_heat *h, int l) { return (h->nbins + ((size_t)1 << l) - 1) >> l; }

/* The rates (level 0) and their max pyramid; the map's max_rate. */
static int heat_pyramid(vw_model *m, vw_heat *h)
{
    if (!h->n || !h->nbins)
        return 0;
    h->lv[0] = npu_malloc((size_t)h->n * h->nbins * sizeof(double));
    if (!h->lv[0])
        return -1;
    h->nlv = 1;
    for (uint32_t row = 0; row < h->n; row++)
        for (size_t k = 0; k < h->nbins; k++) {
            double r = vw_heat_rate(m, h, row, k);
            h->lv[0][(size_t)row * h->nbins + k] = r;
            h->max_rate = NPU_MAX(h->max_rate, r);
        }
    while (h->nlv < 32 && lv_len(h, h->nlv - 1) > 1) {
        int l = h->nlv;
        size_t w = lv_len(h, l), pw = lv_len(h, l - 1);
        double *a = npu_malloc((size_t)h->n * w * sizeof(double));
        if (!a)
            return -1;
        for (uint32_t row = 0; row < h->n; row++) {
            const double *p = h->lv[l - 1] + (size_t)row * pw;
            for (size_t j = 0; j < w; j++) {
                double x = p[2 * j];
                if (2 * j + 1 < pw)
                    x = NPU_MAX(x, p[2 * j + 1]);
                a[(size_t)row * w + j] = x;
            }
        }
        h->lv[l] = a;
        h->nlv++;
    }
    return 0;
}

double vw_heat_max(const vw_model *m, const vw_heat *h, uint32_t row, size_t ba, size_t bz)
{
    if (row >= h->n || ba >= h->nbins || ba > bz)
        return 0.0;
    if (bz >= h->nbins)
        bz = h->nbins - 1;
    if (!h->nlv) {   /* no pyramid (a model not built by vw_model_load) */
        double mx = 0;
        for (size_t k = ba; k <= bz; k++)
            mx = NPU_MAX(mx, vw_heat_rate(m, h, row, k));
        return mx;
    }
    double mx = 0;
    for (size_t i = ba; i <= bz;) {
        /* the largest aligned block at i that ends within bz */
        int l = 0;
        while (l + 1 < h->nlv && !(i & (((size_t)2 << l) - 1)) && i + ((size_t)2 << l) - 1 <= bz)
            l++;
        mx = NPU_MAX(mx, h->lv[l][(size_t)row * lv_len(h, l) + (i >> l)]);
        i += (size_t)1 << l;
    }
    return mx;
}

double vw_heat_rate(const vw_model *m, const vw_heat *h, uint32_t row, size_t k)
{
    if (row >= h->n || k >= h->nbins || !m->ctr_width)
        return 0.0;
    return h->bin[(size_t)row * h->nbins + k] / bin_cycles(m, k);
}

double vw_counter_rate(const vw_model *m, const vw_counter *c, size_t k)
{
    if (k >= c->nbins || !m->ctr_width)
        return 0.0;
    return c->bin[k] / bin_cycles(m, k);
}

size_t vw_first_ge(const vw_box *b, size_t n, uint64_t t, size_t from)
{
    size_t lo, hi;
    if (from > n)
        from = n;
    if (from > 0 && b[from - 1].t0 >= t) {
        /* the answer is at or before from - 1: gallop backwards */
        size_t step = 1;
        hi = from - 1;
        for (;;) {
            if (hi < step) {
                lo = 0;
                break;
            }
            if (b[hi - step].t0 < t) {
                lo = hi - step + 1;
                break;
            }
            hi -= step;
            step *= 2;
        }
    } else {
        /* at or after from: gallop forwards */
        size_t step = 1;
        lo = from;
        for (;;) {
            size_t probe = lo + step - 1;
            if (probe >= n) {
                hi = n;
                break;
            }
            if (b[probe].t0 >= t) {
                hi = probe;
                break;
            }
            lo = probe + 1;
            step *= 2;
        }
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].t0 < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Cycles of boxes [0, j) past x: the boxes that start before x and end
 * after it. Scanning back stops where no earlier box can reach x (its
 * start is more than the longest box before x, or the prefix maximum of
 * the ends is at or before x): for a pipe that runs one box at a time
 * this is one box. */
static uint64_t excess(const vw_box *b, const uint64_t *maxend, uint32_t maxdur, size_t j, uint64_t x)
{
    uint64_t s = 0;
    for (size_t k = j; k-- > 0;) {
        if (maxend[k] <= x || b[k].t0 + maxdur <= x)
            break;
        uint64_t e = b[k].t0 + b[k].dur;
        if (e > x)
            s += e - x;
    }
    return s;
}

uint64_t vw_track_busy_to(const vw_track *t, uint64_t x, size_t *hint)
{
    if (t->n == 0)
        return 0;
    size_t j = vw_first_ge(t->box, t->n, x, hint ? *hint : 0);
    if (hint)
        *hint = j;
    return t->cum[j] - excess(t->box, t->maxend, t->maxdur, j, x);
}

uint64_t vw_track_busy(const vw_track *t, uint64_t a, uint64_t b)
{
    if (b <= a || t->n == 0)
        return 0;
    size_t h = 0;
    uint64_t za = vw_track_busy_to(t, a, &h);
    return vw_track_busy_to(t, b, &h) - za;
}

/* ---- summaries: leaves and per-block prefix sums ------------------------- */

/* Assign every box of a to its leaf (distinct pc, op, stack) and build the
 * per-block prefix rows. The block is at least 4 x the leaves (rows cost
 * at most 3 bytes a box) and at least 256 boxes. */
static int sums_build(vw_sums *u, vw_box *a, size_t n)
{
    memset(u, 0, sizeof *u);
    size_t cap = 64, nl = 0, lcap = 16;
    uint64_t *key = npu_calloc(cap, sizeof *key);
    uint32_t *val = npu_malloc(cap * sizeof *val);
    u->leaf = npu_malloc(lcap * sizeof *u->leaf);
    if (!key || !val || !u->leaf)
        goto oom;
    uint64_t lastk = 0;
    uint32_t lastv = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = ((uint64_t)a[i].pc | (uint64_t)a[i].op << 32 | (uint64_t)a[i].stack << 48) + 1;
        if (k == lastk) {   /* runs of one pc are common (a loop's body per pipe) */
            a[i].leaf = lastv;
            continue;
        }
        size_t h = (size_t)(k * 0x9E3779B97F4A7C15ull >> 24) & (cap - 1);
        while (key[h] && key[h] != k)
            h = (h + 1) & (cap - 1);
        if (!key[h]) {
            if (nl >= lcap) {
                lcap *= 2;
                vw_leaf *q = npu_realloc(u->leaf, lcap * sizeof *q);
                if (!q)
                    goto oom;
                u->leaf = q;
            }
            u->leaf[nl] = (vw_leaf){ a[i].pc, a[i].op, a[i].stack };
            key[h] = k;
            val[h] = (uint32_t)nl++;
            if (nl * 2 > cap) {   /* rehash at half full */
                size_t nc = cap * 2;
                uint64_t *nk = npu_calloc(nc, sizeof *nk);
                uint32_t *nv = npu_malloc(nc * sizeof *nv);
                if (!nk || !nv) {
                    npu_free(nk);
                    npu_free(nv);
                    goto oom;
                }
                for (size_t q = 0; q < cap; q++)
                    if (key[q]) {
                        size_t g = (size_t)(key[q] * 0x9E3779B97F4A7C15ull >> 24) & (nc - 1);
                        while (nk[g])
                            g = (g + 1) & (nc - 1);
                        nk[g] = key[q];
                        nv[g] = val[q];
                    }
                npu_free(key);
                npu_free(val);
                key = nk;
                val = nv;
                cap = nc;
                h = (size_t)(k * 0x9E3779B97F4A7C15ull >> 24) & (cap - 1);
                while (key[h] != k)
                    h = (h + 1) & (cap - 1);
            }
        }
        a[i].leaf = lastv = val[h];
        lastk = k;
    }
    npu_free(key);
    npu_free(val);
    key = NULL;
    val = NULL;
    u->nleaf = (uint32_t)nl;
    u->shift = 8;
    while (((size_t)1 << u->shift) < 4 * nl && u->shift < 30)
        u->shift++;
    size_t blk = (size_t)1 << u->shift;
    u->nrow = (n + blk - 1) / blk + 1;
    if (nl) {
        u->w = npu_calloc(u->nrow * nl, sizeof *u->w);
        u->c = npu_calloc(u->nrow * nl, sizeof *u->c);
        if (!u->w || !u->c)
            goto oom;
        /* row r + 1 = row r + the boxes of block r */
        for (size_t r = 0; r + 1 < u->nrow; r++) {
            uint64_t *w = u->w + (r + 1) * nl;
            uint32_t *c = u->c + (r + 1) * nl;
            memcpy(w, w - nl, nl * sizeof *w);
            memcpy(c, c - nl, nl * sizeof *c);
            size_t z = NPU_MIN(n, (r + 1) * blk);
            for (size_t i = r * blk; i < z; i++) {
                w[a[i].leaf] += a[i].dur;
                c[a[i].leaf]++;
            }
        }
    }
    return 0;
oom:
    npu_free(key);
    npu_free(val);
    npu_free(u->leaf);
    npu_free(u->w);
    npu_free(u->c);
    memset(u, 0, sizeof *u);
    return -1;
}

static void sums_free(vw_sums *u)
{
    npu_free(u->leaf);
    npu_free(u->w);
    npu_free(u->c);
    memset(u, 0, sizeof *u);
}

/* Add (sign +1) or take away (-1) the prefix [0, k) of the boxes to w/c
 * per leaf: the nearer row plus or minus the boxes between it and k. */
static void sums_prefix(const vw_sums *u, const vw_box *a, size_t n, size_t k, int sign, uint64_t *w, uint64_t *c)
{
    size_t blk = (size_t)1 << u->shift, r = k >> u->shift;
    size_t lo = r * blk, hi = NPU_MIN(n, lo + blk);
    size_t row = r, from = lo, to = k;  /* row r, plus [lo, k) */
    int add = 1;
    if (hi - k < k - lo) {
        row = r + 1;            /* row r + 1, minus [k, hi) */
        from = k;
        to = hi;
        add = -1;
    }
    if (k == n) {
        row = u->nrow - 1;
        from = to = n;
    }
    const uint64_t *rw = u->w + row * u->nleaf;
    const uint32_t *rc = u->c + row * u->nleaf;
    if (sign > 0)
        for (uint32_t l = 0; l < u->nleaf; l++) {
            w[l] += rw[l];
            c[l] += rc[l];
        }
    else
        for (uint32_t l = 0; l < u->nleaf; l++) {
            w[l] -= rw[l];
            c[l] -= rc[l];
        }
    for (size_t i = from; i < to; i++) {
        if (sign * add > 0) {
            w[a[i].leaf] += a[i].dur;
            c[a[i].leaf]++;
        } else {
            w[a[i].leaf] -= a[i].dur;
            c[a[i].leaf]--;
        }
    }
}

/* Cycles and counts per leaf of the boxes of one track (or its stalls)
 * inside [t0, t1), added to w/c (nleaf entries each). A box counts when it
 * overlaps the range by a cycle or more, or has no duration and starts in
 * it; its cycles are the overlap. Unsigned wrap-around in the middle is
 * fine: the results are exact non-negative numbers. */
static void track_range(const vw_track *t, int stalls, uint64_t t0, uint64_t t1, uint64_t *w, uint64_t *c)
{
    const vw_sums *u = stalls ? &t->ss : &t->sb;
    const vw_box *a = stalls ? t->stall : t->box;
    const uint64_t *me = stalls ? t->smaxend : t->maxend;
    size_t n = stalls ? t->ns : t->n;
    uint32_t maxdur = stalls ? t->maxsdur : t->maxdur;
    if (!n || !u->nleaf || t1 <= t0)
        return;
    /* boxes before i end at or before t0 (zero-length ones at t0 too: they
     * are picked up from i0 below); boxes from j start at or after t1 */
    size_t i0 = vw_first_ge(a, n, t0, 0);
    size_t i = NPU_MIN(vw_track_first(me, n, t0), i0);
    size_t j = vw_first_ge(a, n, t1, i0);
    if (j <= i)
        return;
    size_t blk = (size_t)1 << u->shift;
    if (j - i <= 2 * blk) {
        for (size_t k = i; k < j; k++) {
            uint64_t s = NPU_MAX(a[k].t0, t0), e = NPU_MIN(a[k].t0 + a[k].dur, t1);
            if (e > s || (a[k].dur == 0 && a[k].t0 >= t0)) {
                w[a[k].leaf] += e > s ? e - s : 0;
                c[a[k].leaf]++;
            }
        }
        return;
    }
    sums_prefix(u, a, n, j, 1, w, c);
    sums_prefix(u, a, n, i, -1, w, c);
    /* boxes that start before t0: only their overlap counts */
    for (size_t k = i; k < i0; k++) {
        uint64_t e = a[k].t0 + a[k].dur, o = e > t0 ? NPU_MIN(e, t1) - t0 : 0;
        w[a[k].leaf] -= a[k].dur - o;
        if (!o)
            c[a[k].leaf]--;
    }
    /* boxes from i0 on that end after t1: their part past t1 does not */
    for (size_t k = j; k-- > i0;) {
        if (me[k] <= t1 || a[k].t0 + maxdur <= t1)
            break;
        uint64_t e = a[k].t0 + a[k].dur;
        if (e > t1)
            w[a[k].leaf] -= e - t1;
    }
}

/* The levels of detail of one array (see vw_lod). A level that would not
 * hold fewer than 3/4 of the runs of the level below is not kept (drawing
 * falls back to the finer one), nor are levels of short lanes. */
static int lod_build(vw_lod *lod, const vw_box *a, size_t n)
{
    size_t prev = n;
    const vw_run *src = NULL;   /* the runs of the last kept level (NULL: the boxes) */
    for (int L = 0; L < VW_NLOD; L++) {
        lod[L] = (vw_lod){ 0 };
        if (n < 1024)
            continue;
        uint64_t gap = (uint64_t)VW_LOD_GAP0 << (2 * L);
        vw_run *r = npu_malloc(NPU_MAX(prev, (size_t)1) * sizeof *r);
        if (!r)
            return -1;
        size_t nr = 0;
        int wide = 0;   /* the open run is one wide box */
        /* Each level merges the runs of the level below (or the boxes):
         * what that level merged has gaps and boxes under its smaller gap,
         * so the result is what merging the boxes would give. */
        for (size_t i = 0; i < prev; i++) {
            vw_run x = src ? src[i] : (vw_run){ a[i].t0, a[i].t0 + a[i].dur, 1, (uint32_t)i };
            int w = x.count == 1 && x.end - x.t0 >= gap;
            /* a run overlapping the open one always joins it, so runs are
             * disjoint and sorted by start and by end alike */
            if (nr && (x.t0 < r[nr - 1].end || (!wide && !w && x.t0 < r[nr - 1].end + gap))) {
                r[nr - 1].end = NPU_MAX(r[nr - 1].end, x.end);
                r[nr - 1].count += x.count;
                wide = 0;
                continue;
            }
            if (nr == prev)
                break;  /* no fewer runs than the level below: not kept */
            r[nr++] = x;
            wide = w;
        }
        if (nr * 4 > prev * 3) {
            npu_free(r);
            continue;
        }
        vw_run *q = npu_realloc(r, nr * sizeof *r);
        lod[L].r = q ? q : r;
        lod[L].n = nr;
        prev = nr;
        src = lod[L].r;
    }
    return 0;
}

static void lod_free(vw_lod *lod)
{
    for (int L = 0; L < VW_NLOD; L++) {
        npu_free(lod[L].r);
        lod[L] = (vw_lod){ 0 };
    }
}

typedef struct sums_job {
    vw_model *m;
    size_t first, step;
    int err;
    uint64_t pipe_stall[TRC_NPIPES], cause_stall[VW_CAUSE_SLOTS];    /* this job's share */
} sums_job;

/* cum[] and maxend[] of a track's boxes, smaxend[] of its stalls, and the
 * job's stall totals per pipe and cause */
static int prefix_arrays(vw_track *t, unsigned pipe, sums_job *j)
{
    t->cum = npu_malloc((t->n + 1) * sizeof *t->cum);
    t->maxend = npu_malloc((t->n + 1) * sizeof *t->maxend);
    t->smaxend = npu_malloc((t->ns + 1) * sizeof *t->smaxend);
    if (!t->cum || !t->maxend || !t->smaxend)
        return -1;
    t->cum[0] = 0;
    uint64_t me = 0;
    for (size_t k = 0; k < t->n; k++) {
        t->cum[k + 1] = t->cum[k] + t->box[k].dur;
        me = NPU_MAX(me, t->box[k].t0 + t->box[k].dur);
        t->maxend[k] = me;
    }
    me = 0;
    for (size_t k = 0; k < t->ns; k++) {
        me = NPU_MAX(me, t->stall[k].t0 + t->stall[k].dur);
        t->smaxend[k] = me;
        unsigned op = t->stall[k].op;
        j->pipe_stall[pipe] += t->stall[k].dur;
        j->cause_stall[vw_cause_slot(op)] += t->stall[k].dur;
    }
    return 0;
}

/* Add the boxes' cycles to the grid cells they cover (g = ngrid + 1 cells,
 * cell k + 1 = cycles in [k, k + 1) << shift, made prefix sums later). */
static void grid_add(uint64_t *g, size_t ngrid, uint32_t shift, const vw_box *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t s = a[i].t0, e = s + a[i].dur;
        for (uint64_t k = s >> shift; s < e && k < ngrid; k++) {
            uint64_t z = NPU_MIN(e, (k + 1) << shift);
            g[k + 1] += z - s;
            s = z;
        }
    }
}

/* The instruction a stall belongs to: the box of its track that holds the
 * stall's start (a data move waiting for GM inside its own box), else the
 * next box to start (the instruction that waited: a wait_flag, or on S the
 * dispatch of an instruction whose pipe's queue was full). At load a
 * stall only knows the core's last instruction, often a branch on another
 * pipe; when nothing follows on its track it gets the track's last
 * instruction, and keeps the core's only on a track without any. Both arrays
 * are sorted by start, and a pipe's boxes follow one another, so one
 * forward pass serves all the track's stalls. */
static void stall_owners(vw_track *t)
{
    size_t j = 0;
    for (size_t k = 0; k < t->ns; k++) {
        vw_box *s = &t->stall[k];
        while (j < t->n && t->box[j].t0 + t->box[j].dur <= s->t0)   /* ended (or ran in no time) first */
            j++;
        /* nothing starts after it: the lane's last instruction (what the
         * pipe did before it waited to the end) */
        const vw_box *o = j < t->n ? &t->box[j] : t->n ? &t->box[t->n - 1] : NULL;
        if (!o)
            break;   /* no instruction on the lane at all: the core's last one */
        s->pc = o->pc;
        s->stack = o->stack;
    }
}

static void *sums_worker(void *arg)
{
    sums_job *j = arg;
    vw_model *m = j->m;
    /* by core, so that a core's grid rows belong to one thread */
    for (uint32_t c = (uint32_t)j->first; c < m->ncores && !j->err; c += (uint32_t)j->step) {
        uint64_t *ug = m->ugrid + (size_t)c * (m->ngrid + 1), *mg = m->mgrid + (size_t)c * (m->ngrid + 1);
        for (unsigned p = 0; p < TRC_NPIPES && !j->err; p++) {
            vw_track *t = vw_track_at(m, c, p);
            stall_owners(t);
            if (prefix_arrays(t, p, j) || sums_build(&t->sb, t->box, t->n) || sums_build(&t->ss, t->stall, t->ns) ||
                lod_build(t->lod, t->box, t->n) || lod_build(t->slod, t->stall, t->ns))
                j->err = 1;
            grid_add(ug, m->ngrid, m->grid_shift, t->box, t->n);
            if (p == TRC_PIPE_M)
                grid_add(mg, m->ngrid, m->grid_shift, t->box, t->n);
        }
        for (size_t k = 0; k < m->ngrid; k++) {
            ug[k + 1] += ug[k];
            mg[k + 1] += mg[k];
        }
    }
    return NULL;
}

/* The summaries, levels of detail and busy grids of every track, on two
 * threads (the cores alternate). */
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* m->pipe_pcs from the leaves of every track but S (after build_sums) */
static int collect_pipe_pcs(vw_model *m)
{
    size_t n = 0;
    for (uint32_t c = 0; c < m->ncores; c++)
        for (unsigned p = 0; p < TRC_NPIPES; p++)
            if (p != TRC_PIPE_S)
                n += vw_track_at(m, c, p)->sb.nleaf;
    uint32_t *a = npu_malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return -1;
    size_t k = 0;
    for (uint32_t c = 0; c < m->ncores; c++)
        for (unsigned p = 0; p < TRC_NPIPES; p++)
            if (p != TRC_PIPE_S) {
                const vw_sums *u = &vw_track_at(m, c, p)->sb;
                for (uint32_t l = 0; l < u->nleaf; l++)
                    a[k++] = u->leaf[l].pc;
            }
    if (k > 1)
        qsort(a, k, sizeof *a, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || a[u - 1] != a[i])
            a[u++] = a[i];
    m->pipe_pcs = a;
    m->npipe_pcs = u;
    return 0;
}

static int is_pipe_pc(const vw_model *m, uint32_t pc)
{
    size_t lo = 0, hi = m->npipe_pcs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->pipe_pcs[mid] < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->npipe_pcs && m->pipe_pcs[lo] == pc;
}

static int build_sums(vw_model *m)
{
    /* the grid: at least 64 cycles a cell, at most 128 K cells a core and
     * 4 M cells in all (with 24 cores and 6 M cycles: 90 K cells, 35 MB) */
    size_t cells = NPU_MIN((size_t)131072, NPU_MAX((size_t)256, ((size_t)1 << 22) / NPU_MAX(m->ncores, 1u)));
    m->grid_shift = 6;
    while ((m->t_end >> m->grid_shift) >= cells && m->grid_shift < 62)
        m->grid_shift++;
    m->ngrid = (size_t)(m->t_end >> m->grid_shift) + 1;
    m->ugrid = npu_calloc((size_t)m->ncores * (m->ngrid + 1), sizeof *m->ugrid);
    m->mgrid = npu_calloc((size_t)m->ncores * (m->ngrid + 1), sizeof *m->mgrid);
    if (!m->ugrid || !m->mgrid)
        return -1;
    sums_job jobs[2] = { { m, 0, 2, 0, {0}, {0} }, { m, 1, 2, 0, {0}, {0} } };
    pthread_t th;
    int threaded = pthread_create(&th, NULL, sums_worker, &jobs[1]) == 0;
    if (!threaded)
        jobs[0].step = 1;
    sums_worker(&jobs[0]);
    if (threaded)
        pthread_join(th, NULL);
    for (int k = 0; k < 2; k++) {
        for (unsigned p = 0; p < TRC_NPIPES; p++)
            m->pipe_stall[p] += jobs[k].pipe_stall[p];
        for (unsigned c = 0; c < VW_CAUSE_SLOTS; c++)
            m->cause_stall[c] += jobs[k].cause_stall[c];
    }
    return jobs[0].err || (threaded && jobs[1].err) ? -1 : 0;
}

const char *vw_op_name(const vw_model *m, unsigned op)
{
    if (op < m->meta->opcodes.count && m->meta->opcodes.names[op])
        return m->meta->opcodes.names[op];
    return "op?";
}

const char *vw_cause_name(const vw_model *m, unsigned cause)
{
    if (cause == VW_CAUSE_FLAG)
        return "wait_flag";
    if (cause == VW_CAUSE_BARRIER)
        return "barrier";
    if (cause < m->meta->causes.count && m->meta->causes.names[cause])
        return m->meta->causes.names[cause];
    return "stall";
}

const char *vw_stack_name(const vw_model *m, uint32_t stack)
{
    if (stack >= m->nstacks || !m->stacks[stack].sym)
        return m->meta->kernel && *m->meta->kernel ? m->meta->kernel : "kernel";
    return m->stacks[stack].sym->name ? m->stacks[stack].sym->name : "?";
}

/* ---- aggregates ---------------------------------------------------------- */

/* A small u64 -> slot hash map for aggregation. */
typedef struct agg {
    uint64_t *key; size_t *slot; size_t cap, n;
} agg;

static long agg_get(agg *a, uint64_t k, int *is_new)
{
    if ((a->n + 1) * 2 > a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 256;
        uint64_t *nk = npu_malloc(nc * sizeof *nk);
        size_t *ns = npu_malloc(nc * sizeof *ns);
        if (!nk || !ns) {
            npu_free(nk);
            npu_free(ns);
            return -1;
        }
        for (size_t i = 0; i < nc; i++)
            ns[i] = SIZE_MAX;
        for (size_t i = 0; i < a->cap; i++)
            if (a->slot[i] != SIZE_MAX) {
                size_t h = (size_t)((a->key[i] + 1) * 0x9E3779B97F4A7C15ull) & (nc - 1);
                while (ns[h] != SIZE_MAX)
                    h = (h + 1) & (nc - 1);
                nk[h] = a->key[i];
                ns[h] = a->slot[i];
            }
        npu_free(a->key);
        npu_free(a->slot);
        a->key = nk;
        a->slot = ns;
        a->cap = nc;
    }
    size_t h = (size_t)((k + 1) * 0x9E3779B97F4A7C15ull) & (a->cap - 1);
    while (a->slot[h] != SIZE_MAX) {
        if (a->key[h] == k) {
            *is_new = 0;
            return (long)a->slot[h];
        }
        h = (h + 1) & (a->cap - 1);
    }
    a->key[h] = k;
    a->slot[h] = a->n;
    *is_new = 1;
    return (long)a->n++;
}

static void agg_free(agg *a) { npu_free(a->key); npu_free(a->slot); }

typedef struct wrow { uint64_t key, w, count; } wrow;

/* Visit the leaves of every track (boxes or stalls) with their cycles and
 * counts inside [t0, t1) (leaves with a count only): O(tracks x (leaves +
 * block)) through the summaries, however many boxes the range holds. */
typedef int (*leaf_fn)(void *ctx, unsigned pipe, const vw_leaf *l, uint64_t w, uint64_t c);
/* core: one core's tracks, or -1 for all */
static int visit_range(const vw_model *m, int stalls, uint64_t t0, uint64_t t1, int core, leaf_fn fn, void *ctx)
{
    uint32_t mx = 0;
    for (size_t i = 0; i < (size_t)m->ncores * TRC_NPIPES; i++)
        mx = NPU_MAX(mx, stalls ? m->tracks[i].ss.nleaf : m->tracks[i].sb.nleaf);
    uint64_t *w = npu_malloc((size_t)(mx ? mx : 1) * 2 * sizeof *w), *c = w + (mx ? mx : 1);
    if (!w)
        return -1;
    int err = 0;
    size_t i0 = core < 0 ? 0 : (size_t)core * TRC_NPIPES;
    size_t i1 = core < 0 ? (size_t)m->ncores * TRC_NPIPES : NPU_MIN(i0 + TRC_NPIPES, (size_t)m->ncores * TRC_NPIPES);
    for (size_t i = i0; i < i1 && !err; i++) {
        const vw_track *t = &m->tracks[i];
        const vw_sums *u = stalls ? &t->ss : &t->sb;
        if (!u->nleaf)
            continue;
        memset(w, 0, u->nleaf * sizeof *w);
        memset(c, 0, u->nleaf * sizeof *c);
        track_range(t, stalls, t0, t1, w, c);
        for (uint32_t l = 0; l < u->nleaf && !err; l++)
            if (c[l])
                err = fn(ctx, (unsigned)(i % TRC_NPIPES), &u->leaf[l], w[l], c[l]);
    }
    npu_free(w);
    return err;
}

static int32_t fchild(vw_flame *f, int32_t parent, const char *name, uint32_t depth, int pipe)
{
    int32_t c = parent >= 0 ? f->n[parent].child : -1, prev = -1;
    for (; c >= 0; prev = c, c = f->n[c].next)
        if (strcmp(f->n[c].name, name) == 0)
            return c;
    if (grow((void **)&f->n, &f->cap, f->count + 1, sizeof *f->n))
        return -2;
    int32_t id = (int32_t)f->count++;
    vw_fnode *n = &f->n[id];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    n->parent = parent;
    n->child = n->next = -1;
    n->depth = depth;
    n->pipe = pipe;
    if (depth > f->max_depth)
        f->max_depth = depth;
    if (parent >= 0) {
        if (prev >= 0)
            f->n[prev].next = id;
        else
            f->n[parent].child = id;
    }
    return id;
}

typedef struct flame_acc { agg a; wrow *rows; size_t cap; } flame_acc;

static int flame_leaf(void *ctx, unsigned pipe, const vw_leaf *l, uint64_t w, uint64_t c)
{
    flame_acc *fa = ctx;
    if (!w)
        return 0;   /* frames weigh cycles: a zero-cycle box adds nothing */
    uint64_t key = (uint64_t)l->stack << 32 | (uint64_t)pipe << 16 | l->op;
    int nw;
    long s = agg_get(&fa->a, key, &nw);
    if (s < 0 || grow((void **)&fa->rows, &fa->cap, (size_t)s + 1, sizeof *fa->rows))
        return -1;
    if (nw)
        fa->rows[s] = (wrow){ key, 0, 0 };
    fa->rows[s].w += w;
    fa->rows[s].count += c;
    return 0;
}

npu_status vw_flame_build(const vw_model *m, uint64_t t0, uint64_t t1, int stalls, vw_flame *f,
                          npu_diag *d)
{
    vw_flame_free(f);
    f->stalls = stalls;
    if (t1 == 0)
        t1 = UINT64_MAX;
    flame_acc fa = {0};
    if (visit_range(m, stalls, t0, t1, -1, flame_leaf, &fa))
        goto oom;
    const wrow *rows = fa.rows;
    char root[64];
    snprintf(root, sizeof root, "kernel %s", m->meta->kernel && *m->meta->kernel ? m->meta->kernel : "");
    if (fchild(f, -1, root, 0, -1) < 0)
        goto oom;
    for (size_t i = 0; i < fa.a.n; i++) {
        uint32_t stack = (uint32_t)(rows[i].key >> 32);
        unsigned pipe = (unsigned)(rows[i].key >> 16) & 0xFFFF, op = (unsigned)rows[i].key & 0xFFFF;
        int32_t path[80];
        int np = 0;
        for (int32_t s = (int32_t)stack; s > 0 && np < 80; s = m->stacks[s].parent)
            path[np++] = s;
        int32_t node = 0;
        f->n[0].w += rows[i].w;
        for (int k = np - 1; k >= 0 && node >= 0; k--) {
            node = fchild(f, node, vw_stack_name(m, (uint32_t)path[k]), f->n[node].depth + 1, -1);
            if (node >= 0)
                f->n[node].w += rows[i].w;
        }
        if (node >= 0)
            node = fchild(f, node, trc_pipe_name(pipe), f->n[node].depth + 1, (int)pipe);
        if (node >= 0) {
            f->n[node].w += rows[i].w;
            node = fchild(f, node, stalls ? vw_cause_name(m, op) : vw_op_name(m, op), f->n[node].depth + 1,
                          (int)pipe);
        }
        if (node < 0)
            goto oom;
        f->n[node].w += rows[i].w;
    }
    agg_free(&fa.a);
    npu_free(fa.rows);
    return NPU_OK;
oom:
    agg_free(&fa.a);
    npu_free(fa.rows);
    vw_flame_free(f);
    return npu_errf(d, NPU_ENOMEM, "npuview: out of memory building the flame graph");
}

void vw_flame_free(vw_flame *f)
{
    npu_free(f->n);
    int st = f->stalls;
    memset(f, 0, sizeof *f);
    f->stalls = st;
}

unsigned vw_hrow_top_cause(const vw_hrow *r)
{
    unsigned best = 0;
    for (unsigned s = 1; s < VW_CAUSE_SLOTS; s++)
        if (r->stall_by[s] > r->stall_by[best])
            best = s;
    return best;
}

void vw_table_free(vw_table *t)
{
    npu_free(t->row);
    memset(t, 0, sizeof *t);
}

static vw_hrow *trow(vw_table *t, agg *a, uint64_t key, int *err)
{
    int nw;
    long s = agg_get(a, key, &nw);
    if (s < 0 || grow((void **)&t->row, &t->cap, (size_t)s + 1, sizeof *t->row)) {
        *err = 1;
        return NULL;
    }
    if ((size_t)s >= t->n)
        t->n = (size_t)s + 1;
    if (nw) {
        memset(&t->row[s], 0, sizeof t->row[s]);
        t->row[s].key = key;
    }
    return &t->row[s];
}

/* A label-table key: the function at the key's address, before its first
 * label (an address never has bit 63 set) */
#define HK_NOLABEL ((uint64_t)1 << 63)

typedef struct hot_acc { const vw_model *m; vw_hkey key; int st; vw_table *t; agg a; } hot_acc;

static int hot_leaf(void *ctx, unsigned pipe, const vw_leaf *l, uint64_t w, uint64_t c)
{
    hot_acc *h = ctx;
    uint64_t k;
    if (h->key == VW_HK_PC)
        k = l->pc;
    else if (h->key == VW_HK_OPCODE)
        k = h->st ? UINT64_MAX : l->op;  /* stalls: one row "stalls" */
    else {
        const trc_symbol *s = h->key == VW_HK_FUNC ? trc_reader_function_at(h->m->r, l->pc)
                                                  : trc_reader_label_at(h->m->r, l->pc);
        k = s ? s->addr : UINT64_MAX;
        if (!s && h->key == VW_HK_LABEL) {
            /* before a function's first label: its own row (HK_NOLABEL) */
            const trc_symbol *f = trc_reader_function_at(h->m->r, l->pc);
            if (f)
                k = f->addr | HK_NOLABEL;
        }
    }
    int err = 0;
    vw_hrow *r = trow(h->t, &h->a, k, &err);
    if (!r)
        return -1;
    /* a stall's leaf carries its cause, not an opcode, and may be on
     * another pipe than the instruction's: it names a row only when no
     * instruction of the row ran (stalls are visited after the boxes) */
    if (!h->st || !r->count)
        r->pipe = pipe;
    if (h->st) {
        r->stall += w;
        r->stall_by[vw_cause_slot(l->op)] += w;
        h->t->total_stall += w;
    } else {
        r->busy += w;
        h->t->total_busy += w;
        /* an instruction counts once, on its pipe: its dispatch slot on S
         * is busy cycles of S, not another instruction */
        if (pipe != TRC_PIPE_S || !is_pipe_pc(h->m, l->pc))
            r->count += c;
        if (h->key == VW_HK_PC)
            r->pipe = pipe | (unsigned)l->op << 8;
    }
    return 0;
}

npu_status vw_hotspots(const vw_model *m, vw_hkey key, uint64_t t0, uint64_t t1, vw_table *t,
                       npu_diag *d)
{
    return vw_hotspots_core(m, key, t0, t1, -1, t, d);
}

npu_status vw_hotspots_core(const vw_model *m, vw_hkey key, uint64_t t0, uint64_t t1, int core, vw_table *t,
                            npu_diag *d)
{
    vw_table_free(t);
    if (t1 == 0)
        t1 = UINT64_MAX;
    hot_acc h = { m, key, 0, t, {0} };
    int err = 0;
    for (h.st = 0; h.st < 2 && !err; h.st++)
        err = visit_range(m, h.st, t0, t1, core, hot_leaf, &h) != 0;
    agg a = h.a;
    agg_free(&a);
    if (err) {
        vw_table_free(t);
        return npu_errf(d, NPU_ENOMEM, "npuview: out of memory building the hotspot table");
    }
    for (size_t i = 0; i < t->n; i++) {
        vw_hrow *r = &t->row[i];
        if (r->key == UINT64_MAX) {
            snprintf(r->name, sizeof r->name, key == VW_HK_OPCODE ? "(stalls)" : "(no symbol)");
            continue;
        }
        switch (key) {
        case VW_HK_PC: {
            const char *dis = trc_reader_disasm(m->r, r->key);
            /* the instruction's pipe too (a stall-only row: the stall's) */
            snprintf(r->name, sizeof r->name, "0x%05llx  %-4s  %s", (unsigned long long)r->key,
                     trc_pipe_name(r->pipe & 0xFF), dis ? dis : vw_op_name(m, r->pipe >> 8));
            break;
        }
        case VW_HK_OPCODE:
            snprintf(r->name, sizeof r->name, "%s", vw_op_name(m, (unsigned)r->key));
            break;
        default: {
            if (key == VW_HK_LABEL && (r->key & HK_NOLABEL)) {
                const trc_symbol *f = trc_reader_function_at(m->r, r->key & ~HK_NOLABEL);
                snprintf(r->name, sizeof r->name, "%s (before its first label)", f && f->name ? f->name : "?");
                break;
            }
            const trc_symbol *s = trc_reader_symbol_exact(m->r, r->key);
            snprintf(r->name, sizeof r->name, "%s", s && s->name ? s->name : "?");
        }
        }
    }
    return NPU_OK;
}

const char *const vw_hkey_names[VW_HK__N] = { "functions", "labels", "pcs", "opcodes" };
const char *const vw_sort_names[VW_SORT__N] = { "name", "count", "busy", "stall", "addr" };

static int cmp_row(const void *pa, const void *pb, void *ctx)
{
    const vw_hrow *a = pa, *b = pb;
    uint64_t x = 0, y = 0;
    switch (*(const int *)ctx) {
    case 0: return strcmp(a->name, b->name);
    case 4: {
        /* by address (the key: pc, symbol address or opcode id), a
         * function's own row (HK_NOLABEL) before its labels' */
        uint64_t ka = a->key & ~HK_NOLABEL, kb = b->key & ~HK_NOLABEL;
        if (ka != kb)
            return ka < kb ? -1 : 1;
        return (b->key & HK_NOLABEL) ? 1 : (a->key & HK_NOLABEL) ? -1 : 0;
    }
    case 1: x = a->count; y = b->count; break;
    case 3: x = a->stall; y = b->stall; break;
    default: x = a->busy; y = b->busy; break;
    }
    if (x != y)
        return x < y ? 1 : -1;
    return a->key < b->key ? -1 : a->key > b->key;
}

void vw_table_sort(vw_table *t, int col)
{
    if (t->n > 1)   /* an empty table may have no rows array: qsort wants one */
        qsort_r(t->row, t->n, sizeof *t->row, cmp_row, &col);
}

static int cmp_range(const void *pa, const void *pb)
{
    const vw_hrow *a = pa, *b = pb;
    /* busiest first: the panel shows as many rows as fit */
    if (a->busy != b->busy)
        return a->busy < b->busy ? 1 : -1;
    if ((a->pipe & 0xFF) != (b->pipe & 0xFF))
        return (a->pipe & 0xFF) < (b->pipe & 0xFF) ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

typedef struct range_acc { vw_table *t; agg a; } range_acc;

static int range_leaf(void *ctx, unsigned pipe, const vw_leaf *l, uint64_t w, uint64_t c)
{
    range_acc *ra = ctx;
    int err = 0;
    vw_hrow *r = trow(ra->t, &ra->a, (uint64_t)pipe << 16 | l->op, &err);
    if (!r)
        return -1;
    r->pipe = pipe;
    r->count += c;
    r->busy += w;
    ra->t->total_busy += w;
    return 0;
}

npu_status vw_range_table(const vw_model *m, uint64_t t0, uint64_t t1, vw_table *t, npu_diag *d)
{
    vw_table_free(t);
    range_acc ra = { t, {0} };
    int err = visit_range(m, 0, t0, t1, -1, range_leaf, &ra) != 0;
    agg a = ra.a;
    agg_free(&a);
    if (err) {
        vw_table_free(t);
        return npu_errf(d, NPU_ENOMEM, "npuview: out of memory building the range table");
    }
    for (size_t i = 0; i < t->n; i++)
        snprintf(t->row[i].name, sizeof t->row[i].name, "%s", vw_op_name(m, (unsigned)t->row[i].key & 0xFFFF));
    if (t->n > 1)
        qsort(t->row, t->n, sizeof *t->row, cmp_range);
    return NPU_OK;
}
