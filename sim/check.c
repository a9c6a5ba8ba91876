/* check.c — the checker's engine: happens-before by vector clocks per
 * (core, pipe), shadow state per byte range (interval lists in 4 KiB pages),
 * the sync model (count-paired flags), and finding grouping.
 * docs/checks.md defines what is checked; this file implements it.
 *
 * Happens-before, as computed here (all from the dispatch stream, which is
 * program order per core):
 *   - each pipe's own instructions are ordered (program order in the pipe);
 *   - an instruction dispatched to pipe P is after everything the scalar unit
 *     did before dispatching it (P's clock joins S's);
 *   - the n-th wait_flag(A, B, id) of a core is after the n-th
 *     set_flag(A, B, id), which is after everything before it on A;
 *   - pipe_barrier(ALL) makes the scalar unit wait for every pipe (S joins
 *     all), so later dispatches inherit it; pipe_barrier(P) orders nothing
 *     more than P's program order already does;
 *   - sync_all drains every pipe of every core: all accesses before the k-th
 *     sync_all of any core are before all accesses after the k-th sync_all
 *     of every core. So cross-core order needs no vector clock: an access is
 *     stamped with its core's barrier generation, and two accesses of
 *     different cores are ordered iff their generations differ. */
#include "sim/check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "frontend/npy.h"

#define NP ISA_NPIPES
#define PG_SHIFT 12
#define PG_SIZE (1ull << PG_SHIFT)
#define NREAD 4
#define MAX_GROUPS 20000

/* An access's epoch: who, when in happens-before terms, and where (report). */
typedef struct ep {
    uint64_t cycle;
    uint32_t clk, gen, pc;
    uint16_t core;
    uint8_t pipe, valid;
} ep;

typedef struct seg {
    uint64_t lo, hi;
    ep w;
    ep r[NREAD];
    uint8_t nr, init;
} seg;

typedef struct page {
    seg *s;
    uint32_t n, cap;
} page;

/* A set_flag's release: the setter pipe's clock at the set. */
typedef struct fset {
    uint32_t vc[NP];
    uint64_t pc, cycle;
} fset;

typedef struct fqueue {
    fset *e;
    uint32_t head, n, cap;
    uint32_t deferred;          /* waits dispatched before their set */
    uint64_t wait_pc, wait_cycle;
} fqueue;

typedef struct ccore {
    uint32_t vc[NP][NP];
    uint32_t gen;
    fqueue fq[NP][NP][SIM_NFLAG_IDS];
    uint8_t used[NP][NP];       /* flag ids the kernel uses (bit per id) */
    page *buf[SIM_SP_COUNT];    /* on-chip shadow pages, [bufsize / PG_SIZE + 1] */
    uint64_t npg[SIM_SP_COUNT];
} ccore;

/* One pending finding of the access being processed. */
typedef struct pend {
    int have;
    ep prior;
    uint64_t lo, hi;
} pend;

struct sim_chk {
    npu_sim *s;
    unsigned tools;
    int oom;
    ccore *core;
    int ncores;
    /* GM shadow: page number -> page, open addressing */
    uint64_t *hkey;             /* page + 1; 0 empty */
    page *hval;
    size_t hcap, hn;
    /* the current instruction (between its first access and its on_op) */
    int begun, bcore, bpipe;
    uint64_t op_no;             /* instructions seen (grouping) */
    /* GM init cache */
    const sim_gm_alloc *last_alloc;
    int last_alloc_init;
    seg *tmp;
    uint32_t tmpcap;
    /* findings */
    sim_chk_finding *f;
    size_t nf, capf;
    uint32_t *gidx;             /* hash of groups -> index + 1 */
    size_t gcap;
    uint64_t dropped;
};

/* ---- kinds ---------------------------------------------------------------- */

static const struct { const char *tool, *title; unsigned bit; } kinds[] = {
#define X(id, bit, tname, title) {tname, title, bit},
    SIM_CHK_KINDS(X)
#undef X
};

const char *sim_chk_kind_tool(sim_chk_kind k) { return k < SIM_CHK_K__COUNT ? kinds[k].tool : "?"; }
const char *sim_chk_kind_title(sim_chk_kind k) { return k < SIM_CHK_K__COUNT ? kinds[k].title : "?"; }
unsigned sim_chk_kind_bit(sim_chk_kind k) { return k < SIM_CHK_K__COUNT ? kinds[k].bit : 0; }

int sim_chk_parse_tools(const char *list, npu_diag *d)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        {"memcheck", SIM_CHK_MEM}, {"racecheck", SIM_CHK_RACE}, {"initcheck", SIM_CHK_INIT},
        {"synccheck", SIM_CHK_SYNC}, {"all", SIM_CHK_ALL}};
    unsigned bits = 0;
    const char *p = list ? list : "";
    if (!*p) {
        npu_errf(d, NPU_EINVAL, "--tool: empty list (memcheck, racecheck, initcheck, synccheck, all)");
        return -1;
    }
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        size_t i;
        for (i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && !strncmp(names[i].name, p, n))
                break;
        if (i == sizeof names / sizeof names[0]) {
            npu_errf(d, NPU_EINVAL,
                     "--tool: unknown tool '%.*s' (memcheck, racecheck, initcheck, synccheck, all)",
                     (int)(n > 40 ? 40 : n), p);
            return -1;
        }
        bits |= names[i].bit;
        p += n;
        if (*p == ',')
            p++;
    }
    return (int)bits;
}

/* ---- findings -------------------------------------------------------------- */

static uint64_t gkey_hash(sim_chk_kind k, const sim_chk_site *a, int nat)
{
    uint64_t h = 0x9e3779b97f4a7c15ull * ((uint64_t)k + 1);
    for (int i = 0; i < nat; i++) {
        h ^= a[i].pc + 0x7f4a7c15ull * (uint64_t)(a[i].pipe + 1) + ((uint64_t)a[i].is_write << 40);
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 31;
    }
    return h;
}

static int gkey_eq(const sim_chk_finding *f, sim_chk_kind k, const sim_chk_site *a, int nat)
{
    if (f->kind != k || f->nat != nat)
        return 0;
    for (int i = 0; i < nat; i++)
        if (f->at[i].pc != a[i].pc || f->at[i].pipe != a[i].pipe ||
            f->at[i].is_write != a[i].is_write)
            return 0;
    return 1;
}

static int grow_groups(sim_chk *c)
{
    size_t nc = c->gcap ? c->gcap * 2 : 256;
    uint32_t *g = npu_calloc(nc, sizeof *g);
    if (!g)
        return -1;
    for (size_t i = 0; i < c->nf; i++) {
        size_t h = (size_t)gkey_hash(c->f[i].kind, c->f[i].at, c->f[i].nat) & (nc - 1);
        while (g[h])
            h = (h + 1) & (nc - 1);
        g[h] = (uint32_t)i + 1;
    }
    npu_free(c->gidx);
    c->gidx = g;
    c->gcap = nc;
    return 0;
}

/* The finding grouped with (kind, sites), new or existing; NULL when the
 * group limit is reached or out of memory. *isnew tells which. Counting is
 * per instruction: several ranges of one instruction count once. */
static sim_chk_finding *group(sim_chk *c, sim_chk_kind k, const sim_chk_site *a, int nat,
                              int *isnew)
{
    *isnew = 0;
    if (c->gcap == 0 || (c->nf + 1) * 2 > c->gcap)
        if (grow_groups(c)) {
            c->oom = 1;
            return NULL;
        }
    size_t h = (size_t)gkey_hash(k, a, nat) & (c->gcap - 1);
    while (c->gidx[h]) {
        sim_chk_finding *f = &c->f[c->gidx[h] - 1];
        if (gkey_eq(f, k, a, nat)) {
            if (f->last_op != c->op_no) {
                f->count++;
                f->last_op = c->op_no;
            }
            return f;
        }
        h = (h + 1) & (c->gcap - 1);
    }
    if (c->nf >= MAX_GROUPS) {
        c->dropped++;
        return NULL;
    }
    if (c->nf == c->capf) {
        size_t nc = c->capf ? c->capf * 2 : 32;
        sim_chk_finding *nf = npu_realloc(c->f, nc * sizeof *nf);
        if (!nf) {
            c->oom = 1;
            return NULL;
        }
        c->f = nf;
        c->capf = nc;
    }
    sim_chk_finding *f = &c->f[c->nf];
    memset(f, 0, sizeof *f);
    f->kind = k;
    f->nat = nat;
    for (int i = 0; i < nat; i++)
        f->at[i] = a[i];
    f->count = 1;
    f->last_op = c->op_no;
    c->gidx[h] = (uint32_t)c->nf + 1;
    c->nf++;
    *isnew = 1;
    return f;
}

static sim_chk_site site_of(const ep *e, int is_write)
{
    sim_chk_site s = {e->core, e->pipe, e->pc, e->cycle, is_write};
    return s;
}

/* ---- shadow pages --------------------------------------------------------- */

static page *gm_page(sim_chk *c, uint64_t pn)
{
    if ((c->hn + 1) * 2 > c->hcap) {
        size_t nc = c->hcap ? c->hcap * 2 : 1024;
        uint64_t *nk = npu_calloc(nc, sizeof *nk);
        page *nv = npu_calloc(nc, sizeof *nv);
        if (!nk || !nv) {
            npu_free(nk);
            npu_free(nv);
            c->oom = 1;
            return NULL;
        }
        for (size_t i = 0; i < c->hcap; i++) {
            if (!c->hkey[i])
                continue;
            size_t h = (size_t)((c->hkey[i] * 0x9e3779b97f4a7c15ull) >> 20) & (nc - 1);
            while (nk[h])
                h = (h + 1) & (nc - 1);
            nk[h] = c->hkey[i];
            nv[h] = c->hval[i];
        }
        npu_free(c->hkey);
        npu_free(c->hval);
        c->hkey = nk;
        c->hval = nv;
        c->hcap = nc;
    }
    uint64_t key = pn + 1;
    size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (c->hcap - 1);
    while (c->hkey[h]) {
        if (c->hkey[h] == key)
            return &c->hval[h];
        h = (h + 1) & (c->hcap - 1);
    }
    c->hkey[h] = key;
    memset(&c->hval[h], 0, sizeof c->hval[h]);
    c->hn++;
    return &c->hval[h];
}

static page *chip_page(sim_chk *c, int core, int sp, uint64_t pn)
{
    ccore *k = &c->core[core];
    if (!k->buf[sp]) {
        uint64_t n = c->s->cores[core].bufsize[sp] / PG_SIZE + 1;
        k->buf[sp] = npu_calloc(n, sizeof(page));
        if (!k->buf[sp]) {
            c->oom = 1;
            return NULL;
        }
        k->npg[sp] = n;
    }
    return pn < k->npg[sp] ? &k->buf[sp][pn] : NULL;
}

static int ep_eq(const ep *a, const ep *b)
{
    return a->valid == b->valid &&
           (!a->valid || (a->clk == b->clk && a->gen == b->gen && a->pc == b->pc &&
                          a->core == b->core && a->pipe == b->pipe && a->cycle == b->cycle));
}

static int seg_same(const seg *a, const seg *b)
{
    if (a->init != b->init || a->nr != b->nr || !ep_eq(&a->w, &b->w))
        return 0;
    for (int i = 0; i < a->nr; i++)
        if (!ep_eq(&a->r[i], &b->r[i]))
            return 0;
    return 1;
}

/* ---- the access ------------------------------------------------------------ */

typedef struct acc {
    sim_chk *c;
    ccore *k;
    int core, pipe, is_write, gm;
    ep cur;
    pend p[4];   /* RAW, WAR, WAW-or-overwrite, UNINIT */
} acc;

enum { P_RAW, P_WAR, P_WAW, P_UNINIT };

static int ordered(const acc *a, const ep *e)
{
    if (e->gen != a->cur.gen)
        return e->gen < a->cur.gen;
    if (e->core != a->core)
        return 0;
    return a->k->vc[a->pipe][e->pipe] >= e->clk;
}

static void note(pend *p, const ep *prior, uint64_t lo, uint64_t hi)
{
    if (!p->have) {
        p->have = 1;
        if (prior)
            p->prior = *prior;
        p->lo = lo;
        p->hi = hi;
    } else if (hi > p->hi && (!prior || prior->pc == p->prior.pc)) {
        p->hi = hi;
    }
}

/* Check the piece [lo, hi) whose state is *g, then update *g. */
static void piece(acc *a, seg *g, uint64_t lo, uint64_t hi)
{
    if (a->is_write) {
        if (g->w.valid && !ordered(a, &g->w))
            note(&a->p[P_WAW], &g->w, lo, hi);
        for (int i = 0; i < g->nr; i++)
            if (!ordered(a, &g->r[i])) {
                note(&a->p[P_WAR], &g->r[i], lo, hi);
                break;
            }
        g->w = a->cur;
        g->nr = 0;
        g->init = 1;
    } else {
        if (g->w.valid && !ordered(a, &g->w))
            note(&a->p[P_RAW], &g->w, lo, hi);
        if (!g->init)
            note(&a->p[P_UNINIT], NULL, lo, hi);
        /* reads ordered before this one are subsumed by it (transitivity) */
        int j = 0;
        for (int i = 0; i < g->nr; i++)
            if (!ordered(a, &g->r[i]))
                g->r[j++] = g->r[i];
        if (j == NREAD) {   /* full: drop the oldest (may miss, never invents) */
            memmove(&g->r[0], &g->r[1], (NREAD - 1) * sizeof g->r[0]);
            j--;
        }
        g->r[j++] = a->cur;
        g->nr = (uint8_t)j;
    }
}

static int tmp_push(sim_chk *c, uint32_t *n, const seg *g)
{
    if (*n && c->tmp[*n - 1].hi == g->lo && seg_same(&c->tmp[*n - 1], g)) {
        c->tmp[*n - 1].hi = g->hi;
        return 0;
    }
    if (*n == c->tmpcap) {
        uint32_t nc = c->tmpcap ? c->tmpcap * 2 : 64;
        seg *t = npu_realloc(c->tmp, nc * sizeof *t);
        if (!t) {
            c->oom = 1;
            return -1;
        }
        c->tmp = t;
        c->tmpcap = nc;
    }
    c->tmp[(*n)++] = *g;
    return 0;
}

/* Apply the access to [lo, hi) within one page (offsets in the space). */
static void page_apply(acc *a, page *pg, uint64_t lo, uint64_t hi, int fresh_init)
{
    sim_chk *c = a->c;
    uint32_t n = 0, i = 0;
    seg g;
    /* fast path: the page holds exactly one segment covering the range */
    while (i < pg->n && pg->s[i].hi <= lo)
        if (tmp_push(c, &n, &pg->s[i++]))
            return;
    uint64_t cur = lo;
    while (i < pg->n && pg->s[i].lo < hi) {
        seg old = pg->s[i++];
        if (old.lo < lo) {
            g = old;
            g.hi = lo;
            if (tmp_push(c, &n, &g))
                return;
        }
        uint64_t s0 = old.lo > lo ? old.lo : lo;
        if (cur < s0) {
            memset(&g, 0, sizeof g);
            g.lo = cur;
            g.hi = s0;
            g.init = (uint8_t)fresh_init;
            piece(a, &g, g.lo, g.hi);
            if (tmp_push(c, &n, &g))
                return;
        }
        uint64_t e0 = old.hi < hi ? old.hi : hi;
        g = old;
        g.lo = s0;
        g.hi = e0;
        piece(a, &g, s0, e0);
        if (tmp_push(c, &n, &g))
            return;
        if (old.hi > hi) {
            g = old;
            g.lo = hi;
            if (tmp_push(c, &n, &g))
                return;
        }
        cur = e0;
    }
    if (cur < hi) {
        memset(&g, 0, sizeof g);
        g.lo = cur;
        g.hi = hi;
        g.init = (uint8_t)fresh_init;
        piece(a, &g, cur, hi);
        if (tmp_push(c, &n, &g))
            return;
    }
    while (i < pg->n)
        if (tmp_push(c, &n, &pg->s[i++]))
            return;
    if (n > pg->cap) {
        uint32_t nc = pg->cap ? pg->cap : 4;
        while (nc < n)
            nc *= 2;
        seg *ns = npu_realloc(pg->s, nc * sizeof *ns);
        if (!ns) {
            c->oom = 1;
            return;
        }
        pg->s = ns;
        pg->cap = nc;
    }
    memcpy(pg->s, c->tmp, n * sizeof *pg->s);
    pg->n = n;
}

/* Whether GM bytes of allocation al count as written at the start:
 * .rodata/.data/.bss (the ELF defines them; .bss as zeros), the parameter
 * block, in/inout tensors. Out tensors start unwritten. */
static int gm_init_of(sim_chk *c, const sim_gm_alloc *al)
{
    if (al == c->last_alloc)
        return c->last_alloc_init;
    int init = 1;
    if (al->kind == SIM_GM_TENSOR)
        for (size_t i = 0; i < c->s->nargs; i++)
            if (c->s->args[i].kind == SIM_ARG_TENSOR && c->s->args[i].addr == al->addr)
                init = (c->s->args[i].dir & NPU_IN) != 0;
    c->last_alloc = al;
    c->last_alloc_init = init;
    return init;
}

/* ---- ops ------------------------------------------------------------------- */

static void begin(sim_chk *c, int core, int pipe)
{
    ccore *k = &c->core[core];
    if (pipe < 0 || pipe >= NP)
        pipe = ISA_PIPE_S;
    if (pipe != ISA_PIPE_S)
        for (int q = 0; q < NP; q++)
            if (k->vc[ISA_PIPE_S][q] > k->vc[pipe][q])
                k->vc[pipe][q] = k->vc[ISA_PIPE_S][q];
    k->vc[pipe][pipe]++;
    c->begun = 1;
    c->bcore = core;
    c->bpipe = pipe;
}

static void fix_text(sim_chk *c, sim_chk_finding *f)
{
    const sim_chk_site *a = &f->at[0], *b = &f->at[1];
    char da[128], db[128];
    sim_disasm_at(c->s, a->pc, da, sizeof da);
    sim_disasm_at(c->s, b->pc, db, sizeof db);
    if (a->core != b->core) {
        snprintf(f->fix, sizeof f->fix,
                 "order the cores: sync_all after pc 0x%" PRIx64 " (%s) on core %d and before pc 0x%"
                 PRIx64 " (%s) on core %d, or give each core its own bytes",
                 a->pc, da, a->core, b->pc, db, b->core);
        return;
    }
    int id = 0;
    uint8_t used = c->core[a->core].used[a->pipe][b->pipe];
    while (id < SIM_NFLAG_IDS - 1 && (used >> id & 1))
        id++;
    const char *pa = isa_pipe_name(a->pipe), *pb = isa_pipe_name(b->pipe);
    /* a set no wait took and a wait no set matched, on the same pipe pair:
     * most likely one of the two has the wrong id */
    int set_id = -1, wait_id = -1;
    for (int i = 0; i < SIM_NFLAG_IDS; i++) {
        const fqueue *q = &c->core[a->core].fq[a->pipe][b->pipe][i];
        if (q->n && set_id < 0)
            set_id = i;
        if (q->deferred && wait_id < 0)
            wait_id = i;
    }
    if (set_id >= 0 && wait_id >= 0 && set_id != wait_id) {
        snprintf(f->fix, sizeof f->fix,
                 "the kernel sets (%s, %s, %d) but waits for (%s, %s, %d): use one id for the "
                 "set_flag after pc 0x%" PRIx64 " (%.100s) and the wait_flag before pc 0x%" PRIx64
                 " (%.100s)",
                 pa, pb, set_id, pa, pb, wait_id, a->pc, da, b->pc, db);
        return;
    }
    snprintf(f->fix, sizeof f->fix,
             "add set_flag(%s, %s, %d) after pc 0x%" PRIx64 " (%s) and wait_flag(%s, %s, %d) before "
             "pc 0x%" PRIx64 " (%s)",
             pa, pb, id, a->pc, da, pa, pb, id, b->pc, db);
}

static void range_what(sim_chk *c, sim_chk_finding *f)
{
    if (f->space == SIM_SP_GM) {
        const sim_gm_alloc *al = sim_gm_find(&c->s->gm, f->addr, f->len ? f->len : 1);
        if (al) {
            snprintf(f->what, sizeof f->what, "%s+0x%" PRIx64, al->name, f->addr - al->addr);
            return;
        }
    }
    f->what[0] = 0;
}

static void emit_access(acc *a, int space, int which)
{
    static const sim_chk_kind km[4] = {SIM_CHK_K_RAW, SIM_CHK_K_WAR, SIM_CHK_K_WAW, SIM_CHK_K_UNINIT};
    sim_chk *c = a->c;
    pend *p = &a->p[which];
    sim_chk_kind k = km[which];
    if (which == P_WAW && a->gm && p->prior.core != a->core)
        k = (c->tools & SIM_CHK_MEM) ? SIM_CHK_K_OVERWRITE : SIM_CHK_K_WAW;
    if (!(c->tools & sim_chk_kind_bit(k)))
        return;
    sim_chk_site st[2];
    int nat;
    if (which == P_UNINIT) {
        st[0] = site_of(&a->cur, 0);
        nat = 1;
    } else {
        st[0] = site_of(&p->prior, which == P_RAW || which == P_WAW);
        st[1] = site_of(&a->cur, a->is_write);
        nat = 2;
    }
    int isnew;
    sim_chk_finding *f = group(c, k, st, nat, &isnew);
    if (!f || !isnew)
        return;
    f->has_range = 1;
    f->space = space;
    f->addr = p->lo;
    f->len = p->hi - p->lo;
    range_what(c, f);
    if (nat == 2)
        fix_text(c, f);
}

static void on_access(void *user, const sim_access_ev *ev)
{
    sim_chk *c = user;
    if (c->oom || !ev->len || ev->core < 0 || ev->core >= c->ncores)
        return;
    if (!c->begun)
        begin(c, ev->core, ev->pipe);
    acc a;
    memset(&a, 0, sizeof a);
    a.c = c;
    a.core = c->bcore;
    a.pipe = c->bpipe;
    a.k = &c->core[a.core];
    a.is_write = ev->is_write;
    a.gm = ev->space == SIM_SP_GM;
    a.cur.valid = 1;
    a.cur.core = (uint16_t)a.core;
    a.cur.pipe = (uint8_t)a.pipe;
    a.cur.gen = a.k->gen;
    a.cur.clk = a.k->vc[a.pipe][a.pipe];
    a.cur.pc = (uint32_t)ev->pc;
    a.cur.cycle = c->s->cores[a.core].cycle;
    int fresh = 0;
    if (a.gm) {
        const sim_gm_alloc *al = sim_gm_find(&c->s->gm, ev->addr, ev->len);
        if (!al)
            return;   /* the GM interface faults it: memcheck reports the fault */
        fresh = gm_init_of(c, al);
    }
    uint64_t lo = ev->addr, hi = ev->addr + ev->len;
    for (uint64_t pn = lo >> PG_SHIFT; pn <= (hi - 1) >> PG_SHIFT; pn++) {
        page *pg = a.gm ? gm_page(c, pn) : chip_page(c, a.core, ev->space, pn);
        if (!pg)
            return;
        uint64_t plo = pn << PG_SHIFT, phi = plo + PG_SIZE;
        page_apply(&a, pg, lo > plo ? lo : plo, hi < phi ? hi : phi, fresh);
        if (c->oom)
            return;
    }
    for (int w = 0; w < 4; w++)
        if (a.p[w].have)
            emit_access(&a, ev->space, w);
}

static fqueue *fq_of(sim_chk *c, int core, const isa_insn *in)
{
    if (in->spipe >= NP || in->dpipe >= NP || in->fid >= SIM_NFLAG_IDS)
        return NULL;
    return &c->core[core].fq[in->spipe][in->dpipe][in->fid];
}

static void sync_finding(sim_chk *c, sim_chk_kind k, const sim_chk_site *st, int nat,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void sync_finding(sim_chk *c, sim_chk_kind k, const sim_chk_site *st, int nat,
                         const char *fmt, ...)
{
    if (!(c->tools & sim_chk_kind_bit(k)))
        return;
    int isnew;
    sim_chk_finding *f = group(c, k, st, nat, &isnew);
    if (!f || !isnew)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->what, sizeof f->what, fmt, ap);
    va_end(ap);
}

static void on_op(void *user, npu_sim *s, int core, const sim_op *op)
{
    sim_chk *c = user;
    (void)s;
    if (c->oom || core < 0 || core >= c->ncores) {
        c->begun = 0;
        return;
    }
    ccore *k = &c->core[core];
    int pipe = op->pipe < NP ? (int)op->pipe : ISA_PIPE_S;
    if (op->is_barrier || op->is_sync_all)
        pipe = ISA_PIPE_S;
    if (!c->begun && (pipe != ISA_PIPE_S || op->is_set_flag || op->is_wait_flag))
        begin(c, core, pipe);
    uint64_t cyc = c->s->cores[core].cycle;
    if (op->is_set_flag || op->is_wait_flag) {
        fqueue *q = fq_of(c, core, &op->in);
        if (q) {
            k->used[op->in.spipe][op->in.dpipe] |= (uint8_t)(1u << op->in.fid);
            int sp = op->in.spipe, dp = op->in.dpipe;
            if (op->is_set_flag) {
                if (q->deferred) {
                    /* a wait dispatched earlier is released by this set */
                    for (int r = 0; r < NP; r++)
                        if (k->vc[sp][r] > k->vc[dp][r])
                            k->vc[dp][r] = k->vc[sp][r];
                    q->deferred--;
                } else {
                    if (q->n) {
                        const fset *prev = &q->e[(q->head + q->n - 1) % q->cap];
                        sim_chk_site st[2] = {{core, sp, prev->pc, prev->cycle, 1},
                                              {core, sp, op->pc, cyc, 1}};
                        sync_finding(c, SIM_CHK_K_SET_TWICE, st, 2,
                                     "set_flag(%s, %s, %d) while the set at pc 0x%" PRIx64
                                     " is not yet waited for",
                                     isa_pipe_name(sp), isa_pipe_name(dp), op->in.fid, prev->pc);
                    }
                    if (q->n == q->cap) {
                        uint32_t nc = q->cap ? q->cap * 2 : 4;
                        fset *ne = npu_malloc(nc * sizeof *ne);
                        if (!ne) {
                            c->oom = 1;
                            c->begun = 0;
                            return;
                        }
                        for (uint32_t i = 0; i < q->n; i++)
                            ne[i] = q->e[(q->head + i) % q->cap];
                        npu_free(q->e);
                        q->e = ne;
                        q->head = 0;
                        q->cap = nc;
                    }
                    fset *e = &q->e[(q->head + q->n) % q->cap];
                    memcpy(e->vc, k->vc[sp], sizeof e->vc);
                    e->pc = op->pc;
                    e->cycle = cyc;
                    q->n++;
                }
            } else {
                if (q->n) {
                    const fset *e = &q->e[q->head];
                    for (int r = 0; r < NP; r++)
                        if (e->vc[r] > k->vc[dp][r])
                            k->vc[dp][r] = e->vc[r];
                    q->head = (q->head + 1) % q->cap;
                    q->n--;
                } else {
                    q->deferred++;
                    q->wait_pc = op->pc;
                    q->wait_cycle = cyc;
                }
            }
        }
    } else if (op->is_barrier && op->barrier_pipe == ISA_PIPE_ALL) {
        for (int p = 0; p < NP; p++)
            for (int r = 0; r < NP; r++)
                if (k->vc[p][r] > k->vc[ISA_PIPE_S][r])
                    k->vc[ISA_PIPE_S][r] = k->vc[p][r];
    } else if (op->is_sync_all) {
        k->gen++;
    }
    c->begun = 0;
    c->op_no++;
}

/* ---- life cycle -------------------------------------------------------------- */

npu_status sim_chk_new(sim_chk **out, npu_sim *s, unsigned tools, npu_diag *d)
{
    *out = NULL;
    sim_chk *c = npu_calloc(1, sizeof *c);
    if (!c)
        return npu_errf(d, NPU_ENOMEM, "check: out of memory");
    c->s = s;
    c->tools = tools & SIM_CHK_ALL;
    sim_observer o = {c, on_access, on_op};
    npu_status st = sim_add_observer(s, &o, d);
    if (st) {
        npu_free(c);
        return st;
    }
    *out = c;
    return NPU_OK;
}

static void free_state(sim_chk *c)
{
    for (int i = 0; c->core && i < c->ncores; i++) {
        ccore *k = &c->core[i];
        for (int sp = 0; sp < SIM_SP_COUNT; sp++) {
            for (uint64_t p = 0; k->buf[sp] && p < k->npg[sp]; p++)
                npu_free(k->buf[sp][p].s);
            npu_free(k->buf[sp]);
        }
        for (int a = 0; a < NP; a++)
            for (int b = 0; b < NP; b++)
                for (int id = 0; id < SIM_NFLAG_IDS; id++)
                    npu_free(k->fq[a][b][id].e);
    }
    npu_free(c->core);
    c->core = NULL;
    c->ncores = 0;
    for (size_t i = 0; i < c->hcap; i++)
        if (c->hkey[i])
            npu_free(c->hval[i].s);
    npu_free(c->hkey);
    npu_free(c->hval);
    c->hkey = NULL;
    c->hval = NULL;
    c->hcap = c->hn = 0;
}

void sim_chk_free(sim_chk *c)
{
    if (!c)
        return;
    npu_sim *s = c->s;
    int j = 0;
    for (int i = 0; i < s->nobs; i++)
        if (s->obs[i].user != c)
            s->obs[j++] = s->obs[i];
    s->nobs = j;
    free_state(c);
    npu_free(c->tmp);
    npu_free(c->f);
    npu_free(c->gidx);
    npu_free(c);
}

size_t sim_chk_nfindings(const sim_chk *c) { return c->nf; }
const sim_chk_finding *sim_chk_get(const sim_chk *c, size_t i) { return i < c->nf ? &c->f[i] : NULL; }
unsigned sim_chk_tools(const sim_chk *c) { return c->tools; }
uint64_t sim_chk_dropped(const sim_chk *c) { return c->dropped; }
npu_sim *sim_chk_sim(const sim_chk *c) { return c->s; }

/* The text of a fault report after the disassembled instruction: the unit's
 * own message ("GM read [..] is 4 bytes past the end of tensor A [..]"). */
static const char *fault_what(const npu_sim *s, int core, uint64_t pc, const char *msg)
{
    char dis[160];
    (void)core;
    sim_disasm_at(s, pc, dis, sizeof dis);
    const char *p = strstr(msg, dis);
    if (p && p[strlen(dis)] == ':' && p[strlen(dis) + 1] == ' ')
        return p + strlen(dis) + 2;
    return msg;
}

static int faulted_core(const npu_sim *s)
{
    for (int i = 0; i < s->ncores; i++)
        if (s->cores[i].state == SIM_CORE_FAULTED)
            return i;
    return -1;
}

/* End of run (it completed): flags left set, waits never matched. */
static void end_findings(sim_chk *c)
{
    for (int i = 0; i < c->ncores; i++)
        for (int a = 0; a < NP; a++)
            for (int b = 0; b < NP; b++)
                for (int id = 0; id < SIM_NFLAG_IDS; id++) {
                    fqueue *q = &c->core[i].fq[a][b][id];
                    if (q->n) {
                        const fset *e = &q->e[(q->head + q->n - 1) % q->cap];
                        sim_chk_site st = {i, a, e->pc, e->cycle, 1};
                        sync_finding(c, SIM_CHK_K_LEFT_SET, &st, 1,
                                     "set_flag(%s, %s, %d) still set when the kernel ended (%u "
                                     "set%s never waited for)",
                                     isa_pipe_name(a), isa_pipe_name(b), id, q->n,
                                     q->n == 1 ? "" : "s");
                    }
                    if (q->deferred) {
                        sim_chk_site st = {i, b, q->wait_pc, q->wait_cycle, 0};
                        sync_finding(c, SIM_CHK_K_WAIT_UNMATCHED, &st, 1,
                                     "wait_flag(%s, %s, %d) never matched by a set_flag (%u "
                                     "wait%s): pipe %s would block forever",
                                     isa_pipe_name(a), isa_pipe_name(b), id, q->deferred,
                                     q->deferred == 1 ? "" : "s", isa_pipe_name(b));
                    }
                }
}

/* A deadlock: one finding per wait that nothing can satisfy (in the logical
 * model: dispatched with no set before it and none after), carrying the
 * engine's report of every pipe's pending instruction. */
static void deadlock_findings(sim_chk *c, const char *report)
{
    size_t before = c->nf;
    for (int i = 0; i < c->ncores; i++)
        for (int a = 0; a < NP; a++)
            for (int b = 0; b < NP; b++)
                for (int id = 0; id < SIM_NFLAG_IDS; id++) {
                    fqueue *q = &c->core[i].fq[a][b][id];
                    if (!q->deferred)
                        continue;
                    sim_chk_site st = {i, b, q->wait_pc, q->wait_cycle, 0};
                    sync_finding(c, SIM_CHK_K_DEADLOCK, &st, 1,
                                 "wait_flag(%s, %s, %d) is never satisfied: no set_flag(%s, %s, %d)"
                                 " is pending or can come",
                                 isa_pipe_name(a), isa_pipe_name(b), id, isa_pipe_name(a),
                                 isa_pipe_name(b), id);
                }
    for (size_t i = before; i < c->nf; i++)
        snprintf(c->f[i].msg, sizeof c->f[i].msg, "%.1000s", report);
}

npu_status sim_chk_run(sim_chk *c, const npu_run_opts *ro, int *ran_ok, npu_diag *d)
{
    npu_sim *s = c->s;
    *ran_ok = 0;
    free_state(c);
    c->nf = 0;
    c->dropped = 0;
    c->begun = 0;
    c->op_no = 0;
    c->last_alloc = NULL;
    if (c->gidx)
        memset(c->gidx, 0, c->gcap * sizeof *c->gidx);
    c->ncores = s->ncores;
    c->core = npu_calloc((size_t)c->ncores, sizeof *c->core);
    if (!c->core)
        return npu_errf(d, NPU_ENOMEM, "check: out of memory");
    npu_diag rd;
    npu_diag_clear(&rd);
    npu_status st = npu_sim_run(s, ro, &rd);
    if (c->oom)
        return npu_errf(d, NPU_ENOMEM, "check: out of memory (shadow state)");
    if (st == NPU_OK) {
        end_findings(c);
        *ran_ok = 1;
        return NPU_OK;
    }
    if (st == NPU_ENOMEM)
        return npu_errf(d, st, "%s", rd.msg);
    int fc = faulted_core(s);
    if (st == NPU_EDEADLOCK) {
        if (strstr(rd.msg, "sync_all")) {
            /* the site: the first core waiting at the sync_all (its pc is
             * already past it); what: which cores wait and which ended */
            int isnew, wc = -1;
            char who[160] = "";
            size_t len = 0;
            for (int i = 0; i < s->ncores && len + 40 < sizeof who; i++) {
                int at = s->cores[i].state == SIM_CORE_AT_BARRIER;
                int end = s->cores[i].state == SIM_CORE_ENDED;
                if (at && wc < 0)
                    wc = i;
                if (at || end)
                    len += (size_t)snprintf(who + len, sizeof who - len, "%score %d %s",
                                            len ? ", " : "", i, at ? "waits" : "ended");
            }
            sim_chk_site site = {wc >= 0 ? wc : 0, ISA_PIPE_S,
                                 wc >= 0 && s->cores[wc].pc >= 8 ? s->cores[wc].pc - 8 : 0,
                                 wc >= 0 ? s->cores[wc].cycle : 0, 0};
            if (c->tools & SIM_CHK_SYNC) {
                sim_chk_finding *f = group(c, SIM_CHK_K_BARRIER, &site, wc >= 0, &isnew);
                if (f && isnew) {
                    snprintf(f->what, sizeof f->what,
                             "a core ended while others wait at sync_all (%.100s)", who);
                    snprintf(f->msg, sizeof f->msg, "%.1000s", rd.msg);
                }
            }
        } else {
            size_t before = c->nf;
            deadlock_findings(c, rd.msg);
            if (c->nf == before && (c->tools & SIM_CHK_SYNC)) {
                /* the executor's own deadlock fault (a scalar wait_flag with
                 * nothing pending) names its core: report at its pc */
                int isnew;
                sim_chk_site site = {fc >= 0 ? fc : 0, ISA_PIPE_S, fc >= 0 ? s->cores[fc].pc : 0,
                                     fc >= 0 ? s->cores[fc].cycle : 0, 0};
                sim_chk_finding *f = group(c, SIM_CHK_K_DEADLOCK, &site, fc >= 0, &isnew);
                if (f && isnew) {
                    if (fc >= 0)
                        snprintf(f->what, sizeof f->what, "%.150s",
                                 fault_what(s, fc, s->cores[fc].pc, rd.msg));
                    else
                        snprintf(f->what, sizeof f->what, "every pipe waits");
                    snprintf(f->msg, sizeof f->msg, "%.1000s", rd.msg);
                }
            }
        }
        return NPU_OK;
    }
    /* a fault of the kernel (or the watchdog): one finding at its site */
    sim_chk_kind k = SIM_CHK_K_FAULT;
    if (st == NPU_ETIMEOUT)
        k = SIM_CHK_K_TIMEOUT;
    else if (strstr(rd.msg, "aligned"))
        k = SIM_CHK_K_MISALIGNED;
    else if (strstr(rd.msg, "outside") || strstr(rd.msg, "past the end") ||
             strstr(rd.msg, "before the start") || strstr(rd.msg, "read-only"))
        k = SIM_CHK_K_OOB;
    int core = fc >= 0 ? fc : 0;
    uint64_t pc = fc >= 0 ? s->cores[fc].pc : 0;
    int pipe = ISA_PIPE_S;
    if (fc >= 0 && pc / 8 < s->ntext)
        pipe = s->tpipe[pc / 8] < NP ? s->tpipe[pc / 8] : ISA_PIPE_S;
    sim_chk_site site = {core, pipe, pc, fc >= 0 ? s->cores[fc].cycle : 0, 0};
    /* a fault always counts: its tool may be off, but the kernel stopped */
    unsigned save = c->tools;
    c->tools |= sim_chk_kind_bit(k);
    int isnew;
    sim_chk_finding *f = group(c, k, &site, fc >= 0 ? 1 : 0, &isnew);
    c->tools = save;
    if (f && isnew) {
        snprintf(f->what, sizeof f->what, "%.150s", fault_what(s, core, pc, rd.msg));
        snprintf(f->msg, sizeof f->msg, "%.1000s", rd.msg);
    }
    return NPU_OK;
}

npu_status sim_chk_add_numerics(sim_chk *c, const char *name, const struct npy_tensor *got,
                                const struct npy_tensor *want, double rtol, double atol,
                                int *pass, npu_diag *d)
{
    npu_cmp_result r;
    *pass = 0;
    npu_status st = npu_compare(got, want, rtol, atol, &r, d);
    if (st)
        return st;
    *pass = r.pass;
    if (r.pass)
        return NPU_OK;
    if (c->nf == c->capf) {
        size_t nc = c->capf ? c->capf * 2 : 32;
        sim_chk_finding *nf = npu_realloc(c->f, nc * sizeof *nf);
        if (!nf)
            return npu_errf(d, NPU_ENOMEM, "check: out of memory");
        c->f = nf;
        c->capf = nc;
    }
    sim_chk_finding *f = &c->f[c->nf++];
    memset(f, 0, sizeof *f);
    f->kind = SIM_CHK_K_NUMERICS;
    f->count = 1;
    char line[512];
    npu_compare_format(&r, line, sizeof line);
    snprintf(f->what, sizeof f->what, "%.60s: %" PRIu64 " of %" PRIu64 " elements mismatch", name,
             r.mismatches, r.numel);
    snprintf(f->msg, sizeof f->msg, "%s: %s (rtol %g, atol %g)", name, line, rtol, atol);
    return NPU_OK;
}
