/* mem_hbm.c — the HBM timing model and its controllers, in DRAM clock (tCK).
 *
 * Timing state. Every JEDEC rule is "command Y to node N may not issue before
 * command X to node N' + latency", where N and N' share a scope: the bank,
 * the bank group, the pseudo-channel (PC) or the channel's command bus. We
 * keep, at each node of the hierarchy, the earliest cycle at which each
 * command type may issue (nxt[]); issuing X raises nxt[] of the nodes it
 * constrains (a max, so values only grow). A command is ready when the
 * current cycle has reached the max over its bank, bank group, PC and bus
 * nodes, plus the rolling four-ACT window of its PC. That makes readiness
 * O(1) and lets us cache lower bounds: since nxt[] only grows, a ready time
 * computed once stays a lower bound until the bank's own state changes.
 *
 * Controllers, one per channel (serving all its PCs), in one of two
 * structures the config selects:
 *  - cmd_queue > 0: a transaction queue feeding per-bank command queues one
 *    transaction per cycle, commands picked round-robin over banks, first
 *    ready command in each queue (DRAMSim3's structure);
 *  - cmd_queue = 0: FR-FCFS straight over the request queue: each request's
 *    next command (ACT, PRE or RD/WR) is derived from its bank's state; the
 *    oldest ready request wins, with an active buffer for requests whose ACT
 *    has issued (Ramulator 2's structure).
 * Both share: write drain with watermarks, the row-hit cap on PREs that
 * would close a row with pending hits, open/closed page, all-bank and
 * per-bank refresh, and dual command issue (one row and one column command
 * per cycle).
 *
 * Event-driven: each channel keeps `wake`, the earliest cycle at which it
 * can do anything (a command can become ready, a request becomes eligible,
 * a refresh falls due). Channels are ticked only at their wake cycles, in
 * global time order, interleaved with completions, so callbacks fire in
 * time order and may submit new requests. */
#include <stdio.h>
#include <string.h>

#include "memmodel/mem_int.h"

const char *const mem_cmd_names[MC__N] = { "ACT", "PRE", "PREA", "RD", "RDA", "WR", "WRA", "REFA", "REFB" };

#define NEVER UINT64_MAX
enum { SC_BANK, SC_BG, SC_PC, SC__N };

typedef struct hreq {
    uint64_t addr, tag, arrive;
    uint64_t lb;            /* lower bound on the ready cycle of `need` (valid while epoch matches) */
    uint32_t row, epoch;
    uint16_t bank, bg;      /* flat in the channel */
    uint8_t pc, is_write, need, classified;
    int32_t mnext;          /* reads merged into this one (merge_reads), a chain */
    int32_t hnext;          /* pending-read hash chain (merge_reads) */
} hreq;

typedef struct tnode { uint64_t nxt[MC__N]; } tnode;

typedef struct hbank {
    tnode t;
    int32_t open_row;       /* -1 closed */
    uint32_t hits;          /* column commands since the ACT */
    uint32_t epoch;         /* bumped on every row-state change */
    uint8_t ref_pending;    /* a per-bank refresh waits for this bank */
} hbank;

typedef struct hpc {
    tnode t;
    uint64_t faw[4];        /* effective cycles of the last four ACTs (ring) */
    int faw_i, nact;
    int open_banks;
    uint64_t next_refpb;
    int refpb_bank;
} hpc;

typedef struct hchan {
    tnode bus;              /* row command bus occupancy */
    hbank *bk;
    tnode *bg;
    hpc *pc;
    int32_t *rq, *wq, *aq;  /* request indices, arrival order */
    uint16_t *rqb, *wqb;    /* bank of each rq / wq entry (a compact copy for scans) */
    uint32_t *rqr, *wqr;    /* row of each rq / wq entry (likewise) */
    int32_t *orow;          /* bk[b].open_row of each bank, compact for the FR-FCFS scan */
    /* rq, wq and their bank and row copies slide in buffers of twice the
     * queue size: a removal shifts the shorter side (the front one by
     * advancing the start), an append at the buffer's end first moves the
     * queue back to its start */
    int32_t *qbuf[2];
    uint16_t *qbbuf[2];
    uint32_t *qrbuf[2];
    int nrq, nwq, naq;
    /* per-bank command queues [bank][cmd_queue]: request and its row side
     * by side (scans read the rows; a removal moves both in one go) */
    struct cqe { int32_t req; uint32_t row; } *cq;
    int *ncq;
    uint64_t *cq_lb;        /* nbank > 64: per-bank lower bound on the next ready command */
    uint64_t cq_min;        /* lower bound of the next ready command (0 after any reset) */
    uint64_t cq_nonempty;   /* bit b: bank queue b holds commands (when nbank <= 64) */
    uint64_t cq_room;       /* bit b: bank queue b has room */
    /* nbank <= 64: per-bank candidate summaries (see dq_summarise) */
    struct dqsum { uint8_t n, k[2], pos[2]; } *cs;     /* k: index in dq_kinds; ready cycles in ltk */
    uint64_t cq_dirty;      /* bit b: summary of bank b must be rebuilt */
    uint64_t lt_dirty;      /* some ltd[k] is non-zero */
    uint64_t ltd[4];        /* bit b: only ltk[k][b] (the bank / bank-group part) is stale */
    uint64_t cmask[4];      /* bit b: bank b has a candidate with command dq_kinds[k] */
    uint64_t shr[4][4];     /* shared_ready of PC p for dq_kinds[k], kept by issue() */
    uint64_t ltk[4][64];    /* bank / bank-group part of the ready cycle of bank b's dq_kinds[k] candidate (valid where cmask has b) */
    uint64_t qpres[2];      /* bit b: the read (0) / write (1) queue holds a request to bank b */
    /* queues of at most 64 entries (h->qrun): bit i of the read (0) / write
     * (1) queue's mask is set where entry i starts a run of entries to one
     * bank and row (a line's atoms arrive as one such run) */
    uint64_t qhead[2];
    uint16_t *qcnt[2];      /* per bank: requests in the read / write queue */
    int qnb[2];             /* banks with requests in the read / write queue (popcount of
                             * qpres where nbank <= 64, but kept: without -mpopcnt that is a
                             * libgcc call, 1.3 % of a random-trace memsim run) */
    int ncq_total;
    int rr;
    int wmode, drain_left;
    uint64_t next_ref;
    int refq[8], nref;      /* PCs with an all-bank refresh due, in order */
    int32_t *refb;          /* banks with a per-bank refresh due, in order */
    int nrefb;
    uint64_t occ_t;
    int32_t *rhash;         /* merge_reads: buckets of pending reads by atom address */
    mem_chan_stats st;
} hchan;

typedef struct hdone { uint64_t t, seq, tag; } hdone;

/* uint16_t, not uint8_t: a char-typed field could alias the nxt[] stores
 * of issue() and would be reloaded after each */
typedef struct clist { uint16_t scope, cmd; uint32_t lat; } clist;

struct mem_hbm {
    mem_config cfg;
    mem_map map;
    int nch, npc, ngpc, nbpc, nbank, nbg;   /* per channel: pcs, bgs per pc, banks per pc, banks, bgs */
    int qrun;                                /* queues of at most 64 and at most 64 banks: hchan.qhead is kept (the run-start scan) */
    int bc;                                  /* burst cycles */
    int a1;                                  /* act_cycles - 1 */
    int rd_lat;                              /* RD issue to last data beat */
    int atom;
    /* constraints: for each preceding command, the (scope, following, latency) list */
    clist cons[MC__N][64];
    int ncons[MC__N];
    int cend[MC__N][SC__N];                  /* cons[x] sorted by scope: end of each scope's run */
    uint8_t shk[MC__N];                      /* kinds (ACT PRE RD WR) whose PC / bus part x can move */
    uint8_t bgk[MC__N];                      /* kinds whose bank-group part x can move */
    unsigned ready_read;                     /* bit c: some scheduler tests command c's ready cycle */
    hchan *ch;
    hreq *pool;
    int32_t *freel;
    int npool, nfree;
    hdone *heap;
    int nheap, capheap;
    /* Completions pushed in time order (reads complete a fixed latency
     * after issue, so nearly all do) go to a FIFO ring instead of the
     * heap; only one earlier than the ring's tail goes to the heap. The
     * pop takes the least (t, seq) of the two heads: the same order. */
    hdone *fifo;
    uint32_t fhead, nfifo, capfifo;   /* capfifo a power of 2 */
    /* decode: for each byte of (addr >> atom bits), the packed field bits it
     * contributes (k h p s g b: 6 bits each from bit 0; c: 12 bits from 36;
     * r: 16 bits from 48 and the rest kept apart) */
    uint64_t dtab[8][256];
    uint64_t dc_addr;                        /* one-entry decode cache: its key, addr >> dc_shift */
    struct hloc { uint32_t row; uint16_t chan, bank, bg; uint8_t pc; } dc;
    int dc_valid;
    uint32_t drow_hi[8][256];
    int dbytes;                              /* address bytes (above the atom) the mapping uses */
    /* every field a run of consecutive address bits, low bit first, no XOR:
     * decode_loc extracts each with a shift and a mask */
    int dfast;
    uint8_t fpos[MF__N];
    uint32_t fmask[MF__N];
    /* addresses equal above dc_shift (the atom and the lowest column bits,
     * when no XOR term reads those) share channel, bank and row: the
     * decode cache keys on that, so the atoms of an L2 line decode once */
    int dc_shift;
    int drow_hi_used;                        /* some row bit >= 16 is mapped */
    uint64_t seq;
    uint64_t pops;                           /* requests removed from rq / wq (mem_hbm_accept_epoch) */
    uint64_t next_t;                         /* first cycle not yet ticked */
    /* Kept so that next_event and advance_to need no scan of every channel
     * per event (with 32 channels the scans cost more than the ticks):
     * wake_min = the least wake over channels, exact: a submit lowers it
     * with the channel's wake, and the pass that ticks the due channels
     * recomputes it (a binary heap of channels was tried instead and cost
     * more than this one pass: with 8-32 channels the pass is a few
     * instructions a channel, the heap's sift more per tick). nlive =
     * requests in any queue of any channel (read, write, active, command
     * queues; merged reads not counted); nwq_all = requests in the write
     * queues. */
    uint64_t wake_min;
    /* each channel's next tick (NEVER: none), apart from the channels so
     * that the pass over them in advance_to reads 4 host cache lines, not
     * one per channel */
    uint64_t *wk;
    uint64_t nlive, nwq_all;
    mem_done_fn done;
    void *user;
    int log_on;
    mem_cmd_fn cmd_fn;      /* streaming command observer (traces), or NULL */
    void *cmd_user;
    mem_cmd_rec *log;
    size_t nlog, caplog;
    int oom;
    uint32_t rhash_mask;
    /* nbank <= 64: each bank's PC and flat bank group, and the banks of
     * each bank group / PC as masks */
    uint8_t bpc[64], bbg[64];
    uint64_t bgmask[64], pcmask[4];
};

/* ---- constraints ------------------------------------------------------- */
/* The commands a request can need (need_of), as the candidate kinds of the
 * DRAMSim3-structure search; k indexes them (dq_kinds[k]). */
static const uint8_t dq_kinds[4] = { MC_ACT, MC_PRE, MC_RD, MC_WR };
/* The index k of a candidate command c in dq_kinds (dq_kinds[k] == c). */
static inline int dq_kind_of(int c) { return c == MC_ACT ? 0 : c == MC_PRE ? 1 : c == MC_RD ? 2 : 3; }
/* 1 << k for a candidate command, 0 for any other */
static inline unsigned kind_bit(int c)
{
    return c == MC_ACT || c == MC_PRE || c == MC_RD || c == MC_WR ? 1u << dq_kind_of(c) : 0;
}

static void add_c(mem_hbm *h, int sc, int x, int y, int lat)
{
    if (lat <= 0 || !(h->ready_read >> y & 1)) return;
    /* latencies count from the ACT's last row-bus cycle: shift both ends */
    int eff = lat + (x == MC_ACT ? h->a1 : 0) - (y == MC_ACT ? h->a1 : 0);
    if (eff <= 0) return;
    for (int i = 0; i < h->ncons[x]; i++)
        if (h->cons[x][i].scope == sc && h->cons[x][i].cmd == y) {
            if ((int)h->cons[x][i].lat < eff) h->cons[x][i].lat = (uint32_t)eff;
            return;
        }
    clist *c = &h->cons[x][h->ncons[x]++];
    c->scope = (uint16_t)sc; c->cmd = (uint16_t)y; c->lat = (uint32_t)eff;
}

static void add_cs(mem_hbm *h, int sc, const int *xs, int nx, const int *ys, int ny, int lat)
{
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++) add_c(h, sc, xs[i], ys[j], lat);
}

static void build_constraints(mem_hbm *h)
{
    const mem_hbm_cfg *t = &h->cfg.hbm;
    /* Only the ready cycles of commands the schedulers test are kept (a
     * constraint on any other is never read): requests need ACT, PRE, RD
     * or WR (RDA/WRA replace a RD/WR already found ready); refresh needs
     * PRE and REFab (+ PREab) or REFpb, by the refresh mode. */
    h->ready_read = 1u << MC_ACT | 1u << MC_PRE | 1u << MC_RD | 1u << MC_WR;
    if (t->refresh == MEM_REF_ALL_BANK) h->ready_read |= 1u << MC_REFA | (t->refresh_prea ? 1u << MC_PREA : 0);
    if (t->refresh == MEM_REF_PER_BANK) h->ready_read |= 1u << MC_REFB;
    static const int RDS[] = { MC_RD, MC_RDA }, WRS[] = { MC_WR, MC_WRA };
    int bc = h->bc, wl = t->tCWL;
    int wr_pre = wl + bc + t->tWR, rd_pre = t->tRTP;
    /* bank */
    add_c(h, SC_BANK, MC_ACT, MC_ACT, t->tRC);
    add_cs(h, SC_BANK, (int[]){ MC_ACT }, 1, RDS, 2, t->tRCDRD);
    add_cs(h, SC_BANK, (int[]){ MC_ACT }, 1, WRS, 2, t->tRCDWR);
    add_c(h, SC_BANK, MC_ACT, MC_PRE, t->tRAS);
    add_c(h, SC_BANK, MC_PRE, MC_ACT, t->tRP);
    add_c(h, SC_BANK, MC_RD, MC_PRE, rd_pre);
    add_c(h, SC_BANK, MC_WR, MC_PRE, wr_pre);
    add_c(h, SC_BANK, MC_RDA, MC_ACT, rd_pre + t->tRP);
    add_c(h, SC_BANK, MC_WRA, MC_ACT, wr_pre + t->tRP);
    add_c(h, SC_BANK, MC_REFB, MC_ACT, t->tRFCpb);
    add_c(h, SC_BANK, MC_ACT, MC_REFB, t->tRC);
    add_c(h, SC_BANK, MC_PRE, MC_REFB, t->tRP);
    add_c(h, SC_BANK, MC_RDA, MC_REFB, rd_pre + t->tRP);
    add_c(h, SC_BANK, MC_WRA, MC_REFB, wr_pre + t->tRP);
    /* bank group */
    add_cs(h, SC_BG, RDS, 2, RDS, 2, NPU_MAX(bc, t->tCCD_L));
    add_cs(h, SC_BG, WRS, 2, WRS, 2, NPU_MAX(bc, t->tCCD_L));
    add_cs(h, SC_BG, WRS, 2, RDS, 2, wl + bc + t->tWTR_L);
    add_c(h, SC_BG, MC_ACT, MC_ACT, t->tRRD_L);
    /* pseudo-channel */
    add_cs(h, SC_PC, RDS, 2, RDS, 2, NPU_MAX(bc, t->tCCD_S));
    add_cs(h, SC_PC, WRS, 2, WRS, 2, NPU_MAX(bc, t->tCCD_S));
    add_cs(h, SC_PC, RDS, 2, WRS, 2, t->tRTW);
    add_cs(h, SC_PC, WRS, 2, RDS, 2, wl + bc + t->tWTR_S);
    add_c(h, SC_PC, MC_ACT, MC_ACT, t->tRRD_S);
    add_cs(h, SC_PC, RDS, 2, (int[]){ MC_PREA }, 1, rd_pre);
    add_cs(h, SC_PC, WRS, 2, (int[]){ MC_PREA }, 1, wr_pre);
    add_c(h, SC_PC, MC_ACT, MC_PREA, t->tRAS);
    add_c(h, SC_PC, MC_PREA, MC_ACT, t->tRP);
    add_c(h, SC_PC, MC_PREA, MC_REFB, t->tRP);
    add_c(h, SC_PC, MC_PRE, MC_REFA, t->tRP);
    add_c(h, SC_PC, MC_PREA, MC_REFA, t->tRP);
    add_c(h, SC_PC, MC_ACT, MC_REFA, t->tRC);
    add_c(h, SC_PC, MC_RDA, MC_REFA, rd_pre + t->tRP);
    add_c(h, SC_PC, MC_WRA, MC_REFA, wr_pre + t->tRP);
    add_cs(h, SC_PC, (int[]){ MC_REFA }, 1, (int[]){ MC_ACT, MC_REFA, MC_PREA, MC_REFB, MC_PRE }, 5, t->tRFC);
    add_c(h, SC_PC, MC_REFB, MC_REFA, t->tRFCpb);
    add_c(h, SC_PC, MC_REFB, MC_ACT, t->tRREFD);
    add_c(h, SC_PC, MC_REFB, MC_REFB, t->tRREFD);
    add_c(h, SC_PC, MC_ACT, MC_REFB, t->tRRD_S);
    /* sort each list by scope (bank, bank group, PC) so issue() walks
     * three runs without a branch per constraint */
    for (int x = 0; x < MC__N; x++) {
        clist tmp[64];
        int n = 0;
        for (int sc = 0; sc < SC__N; sc++) {
            for (int i = 0; i < h->ncons[x]; i++)
                if (h->cons[x][i].scope == sc) tmp[n++] = h->cons[x][i];
            h->cend[x][sc] = n;
        }
        memcpy(h->cons[x], tmp, (size_t)n * sizeof tmp[0]);
        /* the candidate kinds (dq_kinds) whose bank-group part x's
         * bank-group rules move, and whose PC / bus part its PC rules move;
         * a row command also moves the bus (ACT, PRE), an ACT the four-ACT
         * window */
        for (int i = h->cend[x][SC_BANK]; i < h->cend[x][SC_BG]; i++) h->bgk[x] |= kind_bit(tmp[i].cmd);
        for (int i = h->cend[x][SC_BG]; i < n; i++) h->shk[x] |= kind_bit(tmp[i].cmd);
        if (!mem_cmd_is_col(x)) h->shk[x] |= 3;
    }
}

/* ---- small helpers --------------------------------------------------------- */
static int is_row_cmd(int c) { return !mem_cmd_is_col(c); }

static void heap_push_slow(mem_hbm *h, uint64_t t, uint64_t tag);
static void fifo_grow(mem_hbm *h);

static inline __attribute__((always_inline))
void done_push(mem_hbm *h, uint64_t t, uint64_t tag)
{
    if (h->nfifo && h->fifo[(h->fhead + h->nfifo - 1) & (h->capfifo - 1)].t > t) { heap_push_slow(h, t, tag); return; }
    if (h->nfifo == h->capfifo) {
        fifo_grow(h);
        if (h->nfifo == h->capfifo) return;   /* out of memory (h->oom set) */
    }
    hdone *e = &h->fifo[(h->fhead + h->nfifo++) & (h->capfifo - 1)];
    e->t = t; e->seq = h->seq++; e->tag = tag;
}

static void fifo_grow(mem_hbm *h)
{
    uint32_t nc = h->capfifo ? h->capfifo * 2 : 256;
    hdone *n = npu_malloc((size_t)nc * sizeof *n);
    if (!n) { h->oom = 1; return; }
    for (uint32_t i = 0; i < h->nfifo; i++) n[i] = h->fifo[(h->fhead + i) & (h->capfifo - 1)];
    npu_free(h->fifo);
    h->fifo = n; h->capfifo = nc; h->fhead = 0;
}

static void heap_push_slow(mem_hbm *h, uint64_t t, uint64_t tag)
{
    if (h->nheap == h->capheap) {
        int nc = h->capheap ? h->capheap * 2 : 256;
        hdone *n = npu_realloc(h->heap, (size_t)nc * sizeof *n);
        if (!n) { h->oom = 1; return; }
        h->heap = n; h->capheap = nc;
    }
    hdone e = { t, h->seq++, tag };
    int i = h->nheap++;
    while (i > 0) {
        int p = (i - 1) / 2;
        hdone *q = &h->heap[p];
        if (q->t < e.t || (q->t == e.t && q->seq < e.seq)) break;
        h->heap[i] = *q;
        i = p;
    }
    h->heap[i] = e;
}

static inline uint64_t done_next_t(const mem_hbm *h)
{
    uint64_t t = h->nheap ? h->heap[0].t : NEVER;
    if (h->nfifo && h->fifo[h->fhead].t < t) t = h->fifo[h->fhead].t;
    return t;
}

static hdone heap_pop(mem_hbm *h);

static inline hdone done_pop(mem_hbm *h)
{
    if (h->nfifo) {
        const hdone *f = &h->fifo[h->fhead];
        if (!h->nheap || f->t < h->heap[0].t || (f->t == h->heap[0].t && f->seq < h->heap[0].seq)) {
            hdone e = *f;
            h->fhead = (h->fhead + 1) & (h->capfifo - 1);
            h->nfifo--;
            return e;
        }
    }
    return heap_pop(h);
}

static hdone heap_pop(mem_hbm *h)
{
    hdone top = h->heap[0], last = h->heap[--h->nheap];
    int i = 0, n = h->nheap;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        const hdone *mv = &last;
        if (l < n && (h->heap[l].t < mv->t || (h->heap[l].t == mv->t && h->heap[l].seq < mv->seq))) { m = l; mv = &h->heap[l]; }
        if (r < n && (h->heap[r].t < mv->t || (h->heap[r].t == mv->t && h->heap[r].seq < mv->seq))) { m = r; }
        if (m == i) break;
        h->heap[i] = h->heap[m];
        i = m;
    }
    if (n) h->heap[i] = last;
    return top;
}

static int32_t req_grow(mem_hbm *h);

static inline int32_t req_alloc(mem_hbm *h)
{
    if (h->nfree) return h->freel[--h->nfree];
    return req_grow(h);
}

static int32_t req_grow(mem_hbm *h)
{
    int nc = h->npool ? h->npool * 2 : 1024;
    hreq *np = npu_realloc(h->pool, (size_t)nc * sizeof *np);
    if (!np) return -1;
    h->pool = np;
    int32_t *nf = npu_realloc(h->freel, (size_t)nc * sizeof *nf);
    if (!nf) return -1;
    h->freel = nf;
    for (int i = nc - 1; i > h->npool; i--) h->freel[h->nfree++] = i;
    int got = h->npool;
    h->npool = nc;
    return got;
}

static void req_free(mem_hbm *h, int32_t i) { h->freel[h->nfree++] = i; }

/* Queues are short: a loop beats a call to memmove (the Makefile keeps GCC
 * from turning these loops into one). */
static inline void q_remove(int32_t *q, int *n, int pos)
{
    int m = --*n;
    for (int i = pos; i < m; i++) q[i] = q[i + 1];
}

/* Remove entry pos of the read (w = 0) or write queue, with its bank copy. */
static inline __attribute__((always_inline))
void rw_remove(mem_hbm *h, hchan *ch, int w, int pos)
{
    if (w) h->nwq_all--;
    h->pops++;
    int32_t *q = w ? ch->wq : ch->rq;
    uint16_t *b = w ? ch->wqb : ch->rqb;
    uint32_t *rw = w ? ch->wqr : ch->rqr;
    int *n = w ? &ch->nwq : &ch->nrq;
    int bank = b[pos];
    if (--ch->qcnt[w][bank] == 0) {
        ch->qnb[w]--;
        if (bank < 64) ch->qpres[w] &= ~((uint64_t)1 << bank);
    }
    int after = *n - pos - 1;
    if (pos < after) {
        /* fewer entries in front: move them up one and start one later */
        for (int i = pos; i > 0; i--) { q[i] = q[i - 1]; b[i] = b[i - 1]; rw[i] = rw[i - 1]; }
        if (w) { ch->wq = q + 1; ch->wqb = b + 1; ch->wqr = rw + 1; }
        else { ch->rq = q + 1; ch->rqb = b + 1; ch->rqr = rw + 1; }
        b++; rw++;
    } else {
        for (int i = pos; i < *n - 1; i++) { q[i] = q[i + 1]; b[i] = b[i + 1]; rw[i] = rw[i + 1]; }
    }
    (*n)--;
    if (h->qrun) {
        /* either way entry pos left and the ones after it moved down one:
         * so do their run-start bits; the entry now at pos starts a run
         * unless it continues the one before it */
        uint64_t m = ch->qhead[w], lo = ((uint64_t)1 << pos) - 1;
        m = (m & lo) | ((m >> 1) & ~lo);
        if (pos < *n) {
            uint64_t bit = (uint64_t)1 << pos;
            if (pos == 0 || b[pos - 1] != b[pos] || rw[pos - 1] != rw[pos]) m |= bit;
            else m &= ~bit;
        }
        ch->qhead[w] = m;
    }
}

/* ---- decode ------------------------------------------------------------------ */
static const int dshift[MF__N] = { 0, 6, 12, 18, 24, 30, 36, 48 };

/* Table-driven decode: eight lookups instead of a loop over every bit. */
static void build_decode(mem_hbm *h)
{
    const mem_map *m = &h->map;
    for (int byte = 0; byte < 8; byte++)
        for (int v = 0; v < 256; v++) {
            uint64_t packed = 0;
            uint32_t hi = 0;
            for (int k = 0; k < 8; k++) {
                int i = byte * 8 + k;
                if (i >= m->nbits || !((v >> k) & 1)) continue;
                int f = m->field[i], idx = m->idx[i];
                if (f == MF_R && idx >= 16) hi |= 1u << (idx - 16);
                else packed |= (uint64_t)1 << (dshift[f] + idx);
            }
            h->dtab[byte][v] = packed;
            h->drow_hi[byte][v] = hi;
            if (hi) h->drow_hi_used = 1;
        }
    h->dbytes = (m->nbits + 7) / 8;
    if (h->dbytes > 8) h->dbytes = 8;
    /* Fields that are a run of consecutive address bits, low bit first,
     * decode with a shift and a mask each. decode_loc needs every field but
     * the column, and the column only when an XOR term reads or writes it. */
    int first[MF__N], width[MF__N], ok[MF__N];
    for (int f = 0; f < MF__N; f++) first[f] = -1, width[f] = 0, ok[f] = 1;
    for (int i = 0; i < m->nbits; i++) {
        int f = m->field[i];
        if (first[f] < 0) first[f] = i;
        if (m->idx[i] != width[f] || i != first[f] + width[f]) ok[f] = 0;
        width[f]++;
    }
    int need_c = 0;
    for (int i = 0; i < m->nxor; i++) need_c |= m->xs[i] == MF_C || m->xt[i] == MF_C;
    int lowc = 0;
    while (!need_c && lowc < m->nbits && m->field[lowc] == MF_C) lowc++;
    h->dc_shift = m->off_bits + lowc;
    h->dfast = 1;
    for (int f = 0; f < MF__N; f++) {
        int used = f != MF_C || need_c;
        if (used && (!ok[f] || width[f] > 31)) h->dfast = 0;
        h->fpos[f] = (uint8_t)(first[f] < 0 || !used ? 0 : first[f]);
        h->fmask[f] = width[f] && used ? (uint32_t)(((uint64_t)1 << width[f]) - 1) : 0;
    }
}

/* mem_hbm_decode's table lookup: the packed field bits of addr (layout
 * at dtab) and the row bits from 16 up in *hi. */
static inline uint64_t decode_packed(const mem_hbm *h, uint64_t addr, uint32_t *hi)
{
    uint64_t x = addr >> h->map.off_bits, packed = 0;
    uint32_t r = 0;
    /* bytes above the mapped bits contribute nothing */
    int nb = h->dbytes;
    for (int byte = 0; byte < nb; byte++) packed |= h->dtab[byte][(x >> (8 * byte)) & 255];
    if (h->drow_hi_used)
        for (int byte = 0; byte < nb; byte++) r |= h->drow_hi[byte][(x >> (8 * byte)) & 255];
    *hi = r;
    return packed;
}

/* The mapping's XOR terms on field values g (sources are the pre-hash values). */
static inline void apply_xor(const mem_map *m, uint32_t g[MF__N])
{
    if (!m->nxor) return;
    uint32_t f[MF__N];
    memcpy(f, g, sizeof f);
    for (int i = 0; i < m->nxor; i++) g[m->xt[i]] ^= ((f[m->xs[i]] >> m->xsi[i]) & 1u) << m->xti[i];
}

void mem_hbm_decode(const mem_hbm *h, uint64_t addr, mem_addr *a)
{
    const mem_map *m = &h->map;
    uint32_t hi;
    uint64_t packed = decode_packed(h, addr, &hi);
    uint32_t g[MF__N];
    for (int i = 0; i < MF_C; i++) g[i] = (uint32_t)(packed >> dshift[i]) & 63u;
    g[MF_C] = (uint32_t)(packed >> 36) & 0xfffu;
    g[MF_R] = (uint32_t)(packed >> 48) | (hi << 16);
    apply_xor(m, g);
    const mem_hbm_cfg *c = &h->cfg.hbm;
    a->stack = (int)g[MF_K];
    a->channel = (int)g[MF_H];
    a->chan = a->stack * c->channels + a->channel;
    a->pc = (int)g[MF_P];
    a->sid = (int)g[MF_S];
    a->bg = (int)g[MF_G];
    a->bank = (int)g[MF_B];
    a->row = g[MF_R];
    a->col = g[MF_C];
}

/* ---- create / free ------------------------------------------------------------ */
mem_hbm *mem_hbm_new(const mem_config *c, npu_diag *d)
{
    if (mem_config_validate(c, "memory", d)) return NULL;
    mem_hbm *h = npu_calloc(1, sizeof *h);
    if (!h) { npu_errf(d, NPU_ENOMEM, "mem_hbm_new: out of memory"); return NULL; }
    h->cfg = *c;
    mem_map_build(&c->hbm, &h->map, "memory", d);
    build_decode(h);
    const mem_hbm_cfg *t = &c->hbm;
    h->nch = t->stacks * t->channels;
    h->npc = t->pseudo_channels;
    h->ngpc = t->sids * t->bankgroups;
    h->nbpc = h->ngpc * t->banks;
    h->nbank = h->npc * h->nbpc;
    h->qrun = c->ctrl.read_queue <= 64 && c->ctrl.write_queue <= 64 && h->nbank <= 64;
    h->nbg = h->npc * h->ngpc;
    h->bc = t->burst_length / 2;
    h->a1 = t->act_cycles - 1;
    h->rd_lat = t->tCL + h->bc;
    h->atom = mem_config_atom_bytes(c);
    build_constraints(h);
    if (h->nbank <= 64)
        for (int b = 0; b < h->nbank; b++) {
            h->bpc[b] = (uint8_t)(b / h->nbpc);
            h->bbg[b] = (uint8_t)(b / t->banks);
            h->bgmask[h->bbg[b]] |= (uint64_t)1 << b;
            h->pcmask[h->bpc[b]] |= (uint64_t)1 << b;
        }
    h->ch = npu_calloc((size_t)h->nch, sizeof *h->ch);
    h->wk = npu_calloc((size_t)h->nch, sizeof *h->wk);
    if (!h->ch || !h->wk) goto oom;
    int cqd = c->ctrl.cmd_queue;
    for (int i = 0; i < h->nch; i++) {
        hchan *ch = &h->ch[i];
        ch->bk = npu_calloc((size_t)h->nbank, sizeof *ch->bk);
        ch->bg = npu_calloc((size_t)h->nbg, sizeof *ch->bg);
        ch->pc = npu_calloc((size_t)h->npc, sizeof *ch->pc);
        ch->rq = ch->qbuf[0] = npu_calloc(2 * (size_t)c->ctrl.read_queue, sizeof *ch->rq);
        ch->wq = ch->qbuf[1] = npu_calloc(2 * (size_t)c->ctrl.write_queue, sizeof *ch->wq);
        ch->aq = npu_calloc((size_t)NPU_MAX(1, c->ctrl.active_buffer), sizeof *ch->aq);
        ch->refb = npu_calloc((size_t)h->nbank, sizeof *ch->refb);
        ch->rqb = ch->qbbuf[0] = npu_calloc(2 * (size_t)c->ctrl.read_queue, sizeof *ch->rqb);
        ch->wqb = ch->qbbuf[1] = npu_calloc(2 * (size_t)c->ctrl.write_queue, sizeof *ch->wqb);
        ch->rqr = ch->qrbuf[0] = npu_calloc(2 * (size_t)c->ctrl.read_queue, sizeof *ch->rqr);
        ch->wqr = ch->qrbuf[1] = npu_calloc(2 * (size_t)c->ctrl.write_queue, sizeof *ch->wqr);
        ch->qcnt[0] = npu_calloc((size_t)h->nbank, sizeof(uint16_t));
        ch->qcnt[1] = npu_calloc((size_t)h->nbank, sizeof(uint16_t));
        if (!ch->rqb || !ch->wqb || !ch->rqr || !ch->wqr || !ch->qcnt[0] || !ch->qcnt[1]) goto oom;
        if (c->ctrl.merge_reads) {
            uint32_t nb = 64;
            while (nb < 2u * (uint32_t)(c->ctrl.read_queue + h->nbank * cqd + c->ctrl.active_buffer)) nb <<= 1;
            h->rhash_mask = nb - 1;
            ch->rhash = npu_malloc(nb * sizeof *ch->rhash);
            if (!ch->rhash) goto oom;
            for (uint32_t k = 0; k < nb; k++) ch->rhash[k] = -1;
        }
        ch->cq_room = h->nbank >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << h->nbank) - 1;
        if (!ch->bk || !ch->bg || !ch->pc || !ch->rq || !ch->wq || !ch->aq || !ch->refb) goto oom;
        if (cqd) {
            ch->cq = npu_calloc((size_t)h->nbank * (size_t)cqd, sizeof *ch->cq);
            ch->ncq = npu_calloc((size_t)h->nbank, sizeof *ch->ncq);
            if (!ch->cq || !ch->ncq) goto oom;
            /* per-bank bounds for the bank scan, or candidate summaries for
             * the mask search (nbank <= 64): each path keeps only its own */
            if (h->nbank > 64) ch->cq_lb = npu_calloc((size_t)h->nbank, sizeof *ch->cq_lb);
            else ch->cs = npu_calloc((size_t)h->nbank, sizeof *ch->cs);
            if (!ch->cq_lb && !ch->cs) goto oom;
        }
        ch->orow = npu_malloc((size_t)h->nbank * sizeof *ch->orow);
        if (!ch->orow) goto oom;
        for (int b = 0; b < h->nbank; b++) ch->bk[b].open_row = ch->orow[b] = -1;
        h->wk[i] = NEVER;
        ch->next_ref = t->refresh == MEM_REF_ALL_BANK ? (uint64_t)t->tREFI : NEVER;
        for (int p = 0; p < h->npc; p++) {
            /* stagger per-bank refreshes of the PCs over one interval */
            ch->pc[p].next_refpb = t->refresh == MEM_REF_PER_BANK
                ? (uint64_t)t->tREFIpb + (uint64_t)p * (uint64_t)t->tREFIpb / (uint64_t)h->npc : NEVER;
        }
        ch->st.lat.min = NEVER;
    }
    /* idle channels still refresh: every channel starts awake at its first due refresh */
    for (int i = 0; i < h->nch; i++) {
        hchan *ch = &h->ch[i];
        h->wk[i] = ch->next_ref;
        for (int p = 0; p < h->npc; p++) if (ch->pc[p].next_refpb < h->wk[i]) h->wk[i] = ch->pc[p].next_refpb;
    }
    h->wake_min = NEVER;
    for (int i = 0; i < h->nch; i++) if (h->wk[i] < h->wake_min) h->wake_min = h->wk[i];
    return h;
oom:
    mem_hbm_free(h);
    npu_errf(d, NPU_ENOMEM, "mem_hbm_new: out of memory");
    return NULL;
}

void mem_hbm_free(mem_hbm *h)
{
    if (!h) return;
    if (h->ch)
        for (int i = 0; i < h->nch; i++) {
            hchan *ch = &h->ch[i];
            npu_free(ch->bk); npu_free(ch->bg); npu_free(ch->pc);
            npu_free(ch->qbuf[0]); npu_free(ch->qbuf[1]); npu_free(ch->qbbuf[0]); npu_free(ch->qbbuf[1]);
            npu_free(ch->qrbuf[0]); npu_free(ch->qrbuf[1]); npu_free(ch->orow);
            npu_free(ch->qcnt[0]); npu_free(ch->qcnt[1]); npu_free(ch->rhash); npu_free(ch->aq); npu_free(ch->refb);
            npu_free(ch->cq); npu_free(ch->ncq); npu_free(ch->cq_lb); npu_free(ch->cs);
        }
    npu_free(h->ch);
    npu_free(h->wk);
    npu_free(h->pool);
    npu_free(h->freel);
    npu_free(h->heap);
    npu_free(h->fifo);
    npu_free(h->log);
    npu_free(h);
}

int mem_hbm_channels(const mem_hbm *h) { return h->nch; }
void mem_hbm_set_callback(mem_hbm *h, mem_done_fn done, void *user) { h->done = done; h->user = user; }
uint64_t mem_hbm_now(const mem_hbm *h) { return h->next_t; }
uint64_t mem_hbm_accept_epoch(const mem_hbm *h) { return h->pops; }
const mem_chan_stats *mem_hbm_chan_stats(const mem_hbm *h, int chan) { return &h->ch[chan].st; }
void mem_hbm_log_commands(mem_hbm *h, int on) { h->log_on = on; }
void mem_hbm_set_cmd_observer(mem_hbm *h, mem_cmd_fn fn, void *user) { h->cmd_fn = fn; h->cmd_user = user; }
int mem_cmd_count(void) { return MC__N; }
const char *mem_cmd_name(int cmd) { return cmd >= 0 && cmd < MC__N ? mem_cmd_names[cmd] : "?"; }
uint64_t mem_hbm_logged_commands(const mem_hbm *h) { return h->nlog; }

void mem_hbm_dump_commands(const mem_hbm *h, FILE *f)
{
    for (size_t i = 0; i < h->nlog; i++) {
        const mem_cmd_rec *r = &h->log[i];
        fprintf(f, "%llu ch%u pc%u bg%u ba%u %s row %u\n", (unsigned long long)r->t, r->chan, r->pc, r->bg,
                r->bank, mem_cmd_names[r->cmd], r->row);
    }
}

/* ---- timing ---------------------------------------------------------------------- */
static inline uint64_t ready_at(const mem_hbm *h, const hchan *ch, int cmd, int pc, int bg, int bank)
{
    uint64_t r = ch->bus.nxt[cmd];
    uint64_t x = ch->pc[pc].t.nxt[cmd];
    if (x > r) r = x;
    if (bank >= 0) {
        x = ch->bg[bg].nxt[cmd]; if (x > r) r = x;
        x = ch->bk[bank].t.nxt[cmd]; if (x > r) r = x;
    }
    if (cmd == MC_ACT && h->cfg.hbm.tFAW && ch->pc[pc].nact >= 4) {
        const hpc *p = &ch->pc[pc];
        x = p->faw[p->faw_i] + (uint64_t)h->cfg.hbm.tFAW - (uint64_t)h->a1;
        if (x > r) r = x;
    }
    return r;
}

/* The pseudo-channel / bus part of ready_at for a command type. */
static inline uint64_t shared_ready(const mem_hbm *h, const hchan *ch, int cmd, int pc)
{
    uint64_t r = ch->bus.nxt[cmd], x = ch->pc[pc].t.nxt[cmd];
    if (x > r) r = x;
    if (cmd == MC_ACT && h->cfg.hbm.tFAW && ch->pc[pc].nact >= 4) {
        const hpc *p = &ch->pc[pc];
        x = p->faw[p->faw_i] + (uint64_t)h->cfg.hbm.tFAW - (uint64_t)h->a1;
        if (x > r) r = x;
    }
    return r;
}

static void log_cmd(mem_hbm *h, int chan, uint64_t t, int cmd, int pc, int bg, int bank, uint32_t row)
{
    if (h->nlog == h->caplog) {
        size_t nc = h->caplog ? h->caplog * 2 : 4096;
        mem_cmd_rec *n = npu_realloc(h->log, nc * sizeof *n);
        if (!n) { h->oom = 1; h->log_on = 0; return; }
        h->log = n; h->caplog = nc;
    }
    mem_cmd_rec *r = &h->log[h->nlog++];
    r->t = t; r->row = row; r->chan = (uint16_t)chan; r->cmd = (uint8_t)cmd;
    r->pc = (uint8_t)pc; r->bg = (uint8_t)(bg < 0 ? 0 : bg % h->ngpc); r->bank = (uint8_t)(bank < 0 ? 0 : bank % h->nbpc);
}

static void close_bank(hchan *ch, hbank *b, int pc)
{
    if (b->open_row >= 0) { b->open_row = -1; ch->orow[b - ch->bk] = -1; ch->pc[pc].open_banks--; }
    b->epoch++;
}

/* Issue cmd at cycle t; bank/bg are flat channel indices (-1 for PC-level). */
static inline __attribute__((always_inline))
void issue_i(mem_hbm *h, int chan, uint64_t t, int cmd, int pc, int bg, int bank, uint32_t row)
{
    hchan *ch = &h->ch[chan];
    uint64_t te = t + (cmd == MC_ACT ? (uint64_t)h->a1 : 0);
    /* lat already counts from the ACT's last cycle */
    const clist *cl = h->cons[cmd];
    const int *ce = h->cend[cmd];
    int i = 0, e_bank = ce[SC_BANK], e_bg = ce[SC_BG], e_pc = ce[SC_PC];
    if (bank >= 0) {
        uint64_t *n = ch->bk[bank].t.nxt;
        for (; i < e_bank; i++) { uint64_t v = t + cl[i].lat; if (v > n[cl[i].cmd]) n[cl[i].cmd] = v; }
        n = ch->bg[bg].nxt;
        for (; i < e_bg; i++) { uint64_t v = t + cl[i].lat; if (v > n[cl[i].cmd]) n[cl[i].cmd] = v; }
    } else {
        i = e_bg;
    }
    {
        uint64_t *n = ch->pc[pc].t.nxt;
        for (; i < e_pc; i++) { uint64_t v = t + cl[i].lat; if (v > n[cl[i].cmd]) n[cl[i].cmd] = v; }
    }
    if (is_row_cmd(cmd)) {
        /* the row bus is busy for the ACT's cycles; other row commands follow */
        uint64_t v = t + (cmd == MC_ACT ? (uint64_t)h->cfg.hbm.act_cycles : 1);
        uint64_t *bn = ch->bus.nxt;
        bn[MC_ACT] = NPU_MAX(bn[MC_ACT], v); bn[MC_PRE] = NPU_MAX(bn[MC_PRE], v);
        bn[MC_PREA] = NPU_MAX(bn[MC_PREA], v); bn[MC_REFA] = NPU_MAX(bn[MC_REFA], v);
        bn[MC_REFB] = NPU_MAX(bn[MC_REFB], v);
    }
    mem_chan_stats *st = &ch->st;
    hbank *b = bank >= 0 ? &ch->bk[bank] : NULL;
    switch (cmd) {
    case MC_ACT: {
        hpc *p = &ch->pc[pc];
        b->open_row = (int32_t)row; b->hits = 0; b->epoch++;
        ch->orow[bank] = (int32_t)row;
        p->open_banks++;
        p->faw[p->faw_i] = te; p->faw_i = (p->faw_i + 1) & 3; p->nact++;
        st->act++;
        break;
    }
    case MC_PRE: close_bank(ch, b, pc); st->pre++; break;
    case MC_PREA:
        for (int i = 0; i < h->nbpc; i++) close_bank(ch, &ch->bk[pc * h->nbpc + i], pc);
        st->prea++;
        break;
    case MC_RD: case MC_WR: case MC_RDA: case MC_WRA:
        if (b->hits) st->cmd_row_hits++;
        b->hits++;
        if (cmd == MC_RD) st->rd++;
        else if (cmd == MC_WR) st->wr++;
        else if (cmd == MC_RDA) { st->rda++; close_bank(ch, b, pc); }
        else { st->wra++; close_bank(ch, b, pc); }
        break;
    case MC_REFA:
        for (int i = 0; i < h->nbpc; i++) ch->bk[pc * h->nbpc + i].epoch++;
        st->refab++;
        break;
    case MC_REFB: b->epoch++; b->ref_pending = 0; st->refpb++; break;
    }
    if (ch->cq) {
        ch->cq_min = 0;
        if (h->nbank <= 64) {
            /* the bank's candidates change; its bank group's timing too */
            if (bank >= 0) {
                ch->cq_dirty |= (uint64_t)1 << bank;
                /* its bank-group rules move the bank-group part of these kinds */
                for (unsigned m = h->bgk[cmd]; m; m &= m - 1) ch->ltd[__builtin_ctz(m)] |= h->bgmask[bg];
                if (h->bgk[cmd]) ch->lt_dirty = 1;
            }
            else ch->cq_dirty |= h->pcmask[pc];
            /* the PC's (and, for a row command, every PC's) shared part */
            for (unsigned m = h->shk[cmd]; m; m &= m - 1) {
                int k = __builtin_ctz(m);
                ch->shr[pc][k] = shared_ready(h, ch, dq_kinds[k], pc);
            }
            if (is_row_cmd(cmd))
                for (int p = 0; p < h->npc; p++)
                    if (p != pc) for (int k = 0; k < 2; k++) ch->shr[p][k] = shared_ready(h, ch, dq_kinds[k], p);
        } else if (bank >= 0) ch->cq_lb[bank] = 0;
        else for (int i = 0; i < h->nbpc; i++) ch->cq_lb[pc * h->nbpc + i] = 0;
    }
    if (h->log_on) log_cmd(h, chan, t, cmd, pc, bg, bank, row);
    if (h->cmd_fn)
        h->cmd_fn(h->cmd_user, chan, pc, cmd, bg < 0 ? -1 : bg % h->ngpc,
                  bank < 0 ? -1 : bank % h->nbpc, row, t);
}

/* Out of line, for the refresh commands (the per-request paths inline issue_i). */
static void issue(mem_hbm *h, int chan, uint64_t t, int cmd, int pc, int bg, int bank, uint32_t row)
{
    issue_i(h, chan, t, cmd, pc, bg, bank, row);
}

/* The request's next command, from its bank's state. */
static inline int need_of(const hchan *ch, const hreq *r)
{
    const hbank *b = &ch->bk[r->bank];
    if (b->open_row == (int32_t)r->row) return r->is_write ? MC_WR : MC_RD;
    return b->open_row >= 0 ? MC_PRE : MC_ACT;
}

static void classify(hreq *r, int cmd, mem_chan_stats *st)
{
    if (r->classified) return;
    r->classified = 1;
    if (mem_cmd_is_col(cmd)) st->row_hits++;
    else if (cmd == MC_ACT) st->row_misses++;
    else st->row_conflicts++;
}

/* A request's column command issued: it is done (read data at +CL+BL/2,
 * write at issue). */
static uint32_t rhash_of(const mem_hbm *h, uint64_t addr)
{
    uint64_t x = addr >> h->map.off_bits;   /* the atom is a power of two */
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32) & h->rhash_mask;
}

static inline __attribute__((always_inline))
void finish(mem_hbm *h, hchan *ch, int32_t ri, uint64_t t)
{
    hreq *r = &h->pool[ri];
    h->nlive--;
    uint64_t done = r->is_write ? t : t + (uint64_t)h->rd_lat;
    if (ch->rhash && !r->is_write) {
        /* unhash, and answer the reads merged into this one with it */
        int32_t *pp = &ch->rhash[rhash_of(h, r->addr)];
        while (*pp >= 0 && *pp != ri) pp = &h->pool[*pp].hnext;
        if (*pp == ri) *pp = r->hnext;
        for (int32_t m = r->mnext; m >= 0;) {
            hreq *x = &h->pool[m];
            int32_t nx = x->mnext;
            mem_hist_add_i(&ch->st.lat, done - x->arrive);
            done_push(h, done, x->tag);
            ch->st.reads++;
            ch->st.bytes_read += (uint64_t)h->atom;
            req_free(h, m);
            m = nx;
        }
        r = &h->pool[ri];
    }
    if (!r->is_write) mem_hist_add_i(&ch->st.lat, done - r->arrive);
    done_push(h, done, r->tag);
    if (r->is_write) { ch->st.writes++; ch->st.bytes_written += (uint64_t)h->atom; }
    else { ch->st.reads++; ch->st.bytes_read += (uint64_t)h->atom; }
    if (done > ch->st.last_done) ch->st.last_done = done;
    req_free(h, ri);
}

/* Any queued request other than `self` to this bank and row? */
static int row_wanted(const mem_hbm *h, const hchan *ch, const int32_t *q, int n, int self, int bank, uint32_t row)
{
    for (int i = 0; i < n; i++) {
        if (q[i] == self) continue;
        const hreq *r = &h->pool[q[i]];
        if (r->bank == bank && r->row == row) return 1;
    }
    (void)ch;
    return 0;
}

/* ---- refresh ------------------------------------------------------------------------ */
static void refresh_due(mem_hbm *h, hchan *ch, uint64_t t)
{
    const mem_hbm_cfg *c = &h->cfg.hbm;
    while (ch->next_ref <= t) {
        for (int p = 0; p < h->npc && ch->nref < 8; p++) ch->refq[ch->nref++] = p;
        ch->next_ref += (uint64_t)c->tREFI;
    }
    if (c->refresh == MEM_REF_PER_BANK)
        for (int p = 0; p < h->npc; p++) {
            hpc *pc = &ch->pc[p];
            while (pc->next_refpb <= t) {
                int b = p * h->nbpc + pc->refpb_bank;
                pc->refpb_bank = (pc->refpb_bank + 1) % h->nbpc;
                if (!ch->bk[b].ref_pending) { ch->bk[b].ref_pending = 1; ch->refb[ch->nrefb++] = b; }
                pc->next_refpb += (uint64_t)c->tREFIpb;
            }
        }
}

static int active_in(const mem_hbm *h, const hchan *ch, int pc, int bank)
{
    for (int i = 0; i < ch->naq; i++) {
        const hreq *r = &h->pool[ch->aq[i]];
        if (bank >= 0 ? r->bank == bank : r->pc == pc) return 1;
    }
    return 0;
}

/* The refresh-related row command that is due (PRE/PREA/REFA/REFB), its
 * target and ready cycle, for a channel with a refresh pending (refresh_cmd
 * tests that first). */
static int refresh_cmd_due(const mem_hbm *h, const hchan *ch, uint64_t t, int *cmd, int *pc, int *bank, uint64_t *rt)
{
    if (ch->nref) {
        int p = ch->refq[0];
        *pc = p;
        if (ch->pc[p].open_banks == 0) {
            *cmd = MC_REFA; *bank = -1;
        } else if (h->cfg.hbm.refresh_prea) {
            *cmd = MC_PREA; *bank = -1;
        } else {
            /* one PRE per open bank: the first (in bank order) whose PRE is
             * ready now, else the one ready soonest (DRAMSim3's choice) */
            uint64_t best = NEVER;
            int bb = -1;
            *cmd = MC_PRE;
            for (int i = 0; i < h->nbpc; i++) {
                int b = p * h->nbpc + i;
                if (ch->bk[b].open_row < 0) continue;
                uint64_t r = ready_at(h, ch, MC_PRE, p, b / h->cfg.hbm.banks, b);
                if (r <= t) { bb = b; best = r; break; }
                if (r < best) { best = r; bb = b; }
            }
            *bank = bb;
            *rt = best;
            return 1;
        }
    } else if (ch->nrefb) {
        int b = ch->refb[0];
        *bank = b; *pc = b / h->nbpc;
        *cmd = ch->bk[b].open_row >= 0 ? MC_PRE : MC_REFB;
    } else {
        return 0;
    }
    int bg = *bank >= 0 ? *bank / h->cfg.hbm.banks : -1;
    *rt = ready_at(h, ch, *cmd, *pc, bg, *bank);
    return 1;
}

/* The refresh command channel ch needs next (1; *rt: when it is ready), or 0
 * when no refresh waits: that test inline, since most ticks have none. */
static inline int refresh_cmd(const mem_hbm *h, const hchan *ch, uint64_t t, int *cmd, int *pc, int *bank, uint64_t *rt)
{
    return (ch->nref || ch->nrefb) && refresh_cmd_due(h, ch, t, cmd, pc, bank, rt);
}

static void refresh_issued(hchan *ch, int cmd)
{
    if (cmd == MC_REFA) { memmove(ch->refq, ch->refq + 1, (size_t)(ch->nref - 1) * sizeof ch->refq[0]); ch->nref--; }
    else if (cmd == MC_REFB) { memmove(ch->refb, ch->refb + 1, (size_t)(ch->nrefb - 1) * sizeof ch->refb[0]); ch->nrefb--; }
}

/* ---- FR-FCFS over the request queue (cmd_queue = 0) ----------------------------------- */
static int col_cmd_for(const mem_hbm *h, const hchan *ch, const hreq *r, int32_t self,
                       const int32_t *q, int nq)
{
    int c = r->is_write ? MC_WR : MC_RD;
    if (h->cfg.ctrl.page_policy == MEM_PAGE_CLOSED &&
        !row_wanted(h, ch, q, nq, self, r->bank, r->row) &&
        !row_wanted(h, ch, ch->aq, ch->naq, self, r->bank, r->row))
        c = r->is_write ? MC_WRA : MC_RDA;
    return c;
}

static void update_wmode(const mem_hbm *h, hchan *ch)
{
    const mem_ctrl_cfg *k = &h->cfg.ctrl;
    if (!ch->wmode) {
        if (ch->nwq && (ch->nwq * 100 >= k->wr_high_pct * k->write_queue ||
                        (ch->nrq == 0 && ch->nwq >= k->wr_idle_min)))
            ch->wmode = 1;
    } else if (ch->nrq > 0 && (ch->nwq == 0 || ch->nwq * 100 < k->wr_low_pct * k->write_queue)) {
        ch->wmode = 0;
    }
}

/* Readiness of request r at t for FR-FCFS: 1 = its next command (r->need)
 * may issue now; 0 = not (then *wake gets when it might, unless it waits
 * for an event: a refresh, a hit-cap or an active-buffer release). */
static inline __attribute__((always_inline))
int fr_eval(mem_hbm *h, hchan *ch, hreq *r, uint64_t t, uint64_t *wake, int in_active)
{
    hbank *b = &ch->bk[r->bank];
    /* fast path: a cached lower bound still in the future */
    if (r->lb > t && r->epoch == b->epoch && (in_active || r->arrive < t)) {
        if (r->lb < *wake) *wake = r->lb;
        return 0;
    }
    if (!in_active && r->arrive >= t) {         /* accepted this cycle: eligible next */
        if (r->arrive + 1 < *wake) *wake = r->arrive + 1;
        return 0;
    }
    if (r->epoch != b->epoch) {
        r->need = (uint8_t)need_of(ch, r);
        r->epoch = b->epoch;
        r->lb = ready_at(h, ch, r->need, r->pc, r->bg, r->bank);
    } else if (r->lb <= t) {
        /* the bank's row state is unchanged (every change bumps its epoch),
         * so the needed command is too; only its ready cycle may have moved */
        r->lb = ready_at(h, ch, r->need, r->pc, r->bg, r->bank);
    }
    if (b->ref_pending && !mem_cmd_is_col(r->need)) return 0;
    if (r->lb > t) { if (r->lb < *wake) *wake = r->lb; return 0; }
    return 1;
}

/* May this ready PRE close its bank's row now? */
static int pre_ok(mem_hbm *h, hchan *ch, const hreq *r, const int32_t *q, int nq)
{
    const hbank *b = &ch->bk[r->bank];
    int cap = h->cfg.ctrl.row_hit_cap;
    /* row-hit cap: keep a row with pending hits open until cap hits were served */
    if (cap && (int)b->hits < cap &&
        (row_wanted(h, ch, q, nq, -1, r->bank, (uint32_t)b->open_row) ||
         row_wanted(h, ch, ch->aq, ch->naq, -1, r->bank, (uint32_t)b->open_row)))
        return 0;
    /* never close a row whose ACT was for a request still in the active buffer */
    return !active_in(h, ch, r->pc, r->bank);
}

/* The request-queue part of tick_fr's pass (see there): entries are
 * evaluated oldest first until both a column and a row command are picked.
 * Past the oldest hit and the oldest miss of a bank, its other hits and
 * misses are skipped, read from the compact bank and row copies without
 * loading the request: each needs the same command as the oldest one of
 * its kind (RD/WR for a hit, PRE or ACT for a miss), so it has the same
 * ready cycle and the same refresh and pre_ok verdicts, and arrived no
 * earlier; it could only be picked where the oldest one was. What the
 * skip changes is the wake: a skipped entry's cached lower bound is not
 * read, so the channel wakes later where that bound was stale, on a cycle
 * where it would have issued nothing. Those idle ticks change no result
 * (memory.controller.skip_idle = false and the tests that run it): the L2
 * stamps what it hands over from the clocks alone (mem_sys.c, dram_open)
 * and the engine's refused requests wait for the accept epoch. (Before
 * those two, this skip had changed a 4096^3 GEMM's cycles, 1 967 933 ->
 * 1 960 227, and was removed.) Banks are bits of a 64-bit mask: wider
 * channels scan every entry. skip: 0 none, 1 the skip, 2 the skip over
 * the run starts in heads only (queues of at most 64, hchan.qhead). */
static inline __attribute__((always_inline))
void fr_scan_q(mem_hbm *h, hchan *ch, const int32_t *q, const uint16_t *qbk, const uint32_t *qrw, int nq,
               uint64_t heads, uint64_t t, uint64_t *wake, int32_t *cpick, int *cpos, int *caq, int32_t *rpick, int *rpos,
               int *raq, const int skip)
{
    uint64_t seen_hit = 0, seen_miss = 0;   /* banks whose oldest hit / miss was seen */
    /* skip 2 visits run starts only (heads, h->qrun): an entry that
     * continues a run (same bank and row as the one before it) is
     * classified as that one was, so it would always be skipped */
    for (int i = -1; *cpick < 0 || *rpick < 0;) {
        if (skip == 2) {
            if (!heads) break;
            i = __builtin_ctzll(heads);
            heads &= heads - 1;
        } else if (++i >= nq) {
            break;
        }
        if (skip) {
            /* masks, not a branch on hit-or-miss: that is a coin toss to the
             * host's predictor (such a branch took a sixth of a GEMM timing
             * run's samples); the open rows come from a compact copy */
            int bn = qbk[i];
            uint64_t bit = (uint64_t)1 << bn;
            uint64_t hm = -(uint64_t)(ch->orow[bn] == (int32_t)qrw[i]);
            uint64_t hb = bit & hm, mb = bit & ~hm;
            uint64_t dup = (seen_hit & hb) | (seen_miss & mb);
            seen_hit |= hb;
            seen_miss |= mb;
            if (dup) continue;
        }
        hreq *r = &h->pool[q[i]];
        if (!fr_eval(h, ch, r, t, wake, 0)) continue;
        if (mem_cmd_is_col(r->need)) { if (*cpick < 0) { *cpick = q[i]; *cpos = i; *caq = 0; } }
        else if (*rpick < 0 && (r->need != MC_PRE || pre_ok(h, ch, r, q, nq))) { *rpick = q[i]; *rpos = i; *raq = 0; }
    }
}

static uint64_t tick_fr(mem_hbm *h, int chan, uint64_t t)
{
    hchan *ch = &h->ch[chan];
    uint64_t wake = NEVER;
    int issued = 0, col_issued = 0;
    update_wmode(h, ch);
    int32_t *q = ch->wmode ? ch->wq : ch->rq;
    int *nq = ch->wmode ? &ch->nwq : &ch->nrq;
    int blocked = ch->nref > 0;                 /* all-bank refresh waiting: no requests */
    int want_row = (h->cfg.ctrl.dual_cmd || 1) && !blocked;

    /* one pass, oldest first (the active buffer, then the queue): the first
     * ready column command and the first ready row command */
    int32_t cpick = -1, rpick = -1;
    int cpos = -1, caq = 0, rpos = -1, raq = 0;
    for (int i = 0; i < ch->naq && (cpick < 0 || (want_row && rpick < 0)); i++) {
        hreq *r = &h->pool[ch->aq[i]];
        if (!fr_eval(h, ch, r, t, &wake, 1)) continue;
        if (mem_cmd_is_col(r->need)) { if (cpick < 0) { cpick = ch->aq[i]; cpos = i; caq = 1; } }
        else if (want_row && rpick < 0 && (r->need != MC_PRE || pre_ok(h, ch, r, q, *nq))) { rpick = ch->aq[i]; rpos = i; raq = 1; }
    }
    if (!blocked) {
        const uint16_t *qbk = ch->wmode ? ch->wqb : ch->rqb;
        const uint32_t *qrw = ch->wmode ? ch->wqr : ch->rqr;
        /* the skip pays where banks repeat (a burst's atoms to one row, as
         * in a GEMM's tile loads): at three entries a bank or more; with
         * fewer (random traffic) its test costs more than it saves */
        int banks_repeat = h->nbank <= 64 && *nq >= 3 * ch->qnb[ch->wmode];
        if (banks_repeat && h->qrun)
            fr_scan_q(h, ch, q, qbk, qrw, *nq, ch->qhead[ch->wmode], t, &wake, &cpick, &cpos, &caq, &rpick, &rpos, &raq, 2);
        else if (banks_repeat)
            fr_scan_q(h, ch, q, qbk, qrw, *nq, 0, t, &wake, &cpick, &cpos, &caq, &rpick, &rpos, &raq, 1);
        else
            fr_scan_q(h, ch, q, qbk, qrw, *nq, 0, t, &wake, &cpick, &cpos, &caq, &rpick, &rpos, &raq, 0);
    }

    /* column slot */
    if (cpick >= 0) {
        hreq *r = &h->pool[cpick];
        int c = col_cmd_for(h, ch, r, cpick, q, *nq);
        classify(r, c, &ch->st);
        issue_i(h, chan, t, c, r->pc, r->bg, r->bank, r->row);
        if (caq) q_remove(ch->aq, &ch->naq, cpos);
        else { rw_remove(h, ch, ch->wmode, cpos); q = ch->wmode ? ch->wq : ch->rq; }   /* the queue may start later now */
        if (rpick >= 0 && raq == caq && cpos < rpos) rpos--;
        finish(h, ch, cpick, t);
        issued = col_issued = 1;
    }

    /* row slot: refresh first (while an all-bank refresh waits, no request
     * of the channel is scheduled), then the oldest ready ACT/PRE */
    if (h->cfg.ctrl.dual_cmd || !col_issued) {
        int rc, rp, rb, row_issued = 0;
        uint64_t rt;
        if (refresh_cmd(h, ch, t, &rc, &rp, &rb, &rt)) {
            int closing = rc == MC_PRE || rc == MC_PREA;
            if (closing && active_in(h, ch, rp, rc == MC_PRE ? rb : -1)) {
                /* waits for the active buffer's column commands (an issue wakes us) */
            } else if (rt <= t) {
                issue(h, chan, t, rc, rp, rb >= 0 ? rb / h->cfg.hbm.banks : -1, rb, 0);
                refresh_issued(ch, rc);
                row_issued = 1;
            } else if (rt < wake) {
                wake = rt;
            }
        }
        if (!row_issued && rpick >= 0) {
            hreq *r = &h->pool[rpick];
            /* the column command just issued may have moved this one's timing
             * (RD -> PRE, same bank) or closed its row (auto-precharge) */
            if (col_issued && (need_of(ch, r) != r->need ||
                               ready_at(h, ch, r->need, r->pc, r->bg, r->bank) > t ||
                               (r->need == MC_PRE && !pre_ok(h, ch, r, q, *nq))))
                rpick = -1;
            if (rpick >= 0) {
                int c = r->need;
                classify(r, c, &ch->st);
                issue_i(h, chan, t, c, r->pc, r->bg, r->bank, r->row);
                if (c == MC_ACT && !raq && ch->naq < h->cfg.ctrl.active_buffer) {
                    ch->aq[ch->naq++] = rpick;
                    rw_remove(h, ch, ch->wmode, rpos);
                }
                row_issued = 1;
            }
        }
        if (row_issued) {
            if (col_issued) ch->st.dual_issue_cycles++;
            issued = 1;
        }
    }
    /* the other queue's requests only matter once the mode flips; that
     * happens on a submit or an issue, both of which wake the channel */
    if (issued) return t + 1;
    if (ch->nref == 0 && ch->nrefb == 0 && ch->next_ref < wake) wake = ch->next_ref;
    if (h->cfg.hbm.refresh == MEM_REF_PER_BANK)   /* else every next_refpb is NEVER */
        for (int p = 0; p < h->npc; p++) if (ch->pc[p].next_refpb < wake) wake = ch->pc[p].next_refpb;
    if (wake <= t) wake = t + 1;
    return wake;
}

/* ---- DRAMSim3 structure: transaction queue -> per-bank command queues -------------------- */
/* First ready command of bank queue b (see the header); *lbp gets a lower
 * bound of the next ready cycle when none is. */
static inline __attribute__((always_inline))
int dq_first_ready(mem_hbm *h, hchan *ch, int b, uint64_t t, int *pos, int *cmd)
{
    int cqd = h->cfg.ctrl.cmd_queue;
    const struct cqe *cq = &ch->cq[b * cqd];
    int n = ch->ncq[b];
    hbank *bk = &ch->bk[b];
    uint64_t lb = NEVER;
    /* every command of the queue is to this bank, so the ready cycle of each
     * command type is computed once */
    uint64_t rtc[MC__N];
    unsigned have = 0;
    for (int j = 0; j < n; j++) {
        /* past the head only the row's hits (RD/WR) or, for a closed bank,
         * ACTs can issue, all with the ready cycle already known */
        if (j && (bk->open_row < 0 ? (have & (1u << MC_ACT)) != 0
                                   : (have & (1u << MC_RD)) && (have & (1u << MC_WR)))) break;
        /* past the head, a command to another row of an open bank would
         * need a PRE, which only the head may have: skip it unloaded */
        if (j && bk->open_row >= 0 && cq[j].row != (uint32_t)bk->open_row) continue;
        hreq *r = &h->pool[cq[j].req];
        int need = need_of(ch, r);
        if (need == MC_PRE) {
            if (j != 0) continue;              /* an older command to this bank comes first */
            int cap = h->cfg.ctrl.row_hit_cap;
            if (cap && (int)bk->hits < cap) {
                int pend = 0;
                for (int k = j + 1; k < n && !pend; k++) pend = cq[k].row == (uint32_t)bk->open_row;
                if (pend) continue;
            }
        }
        if (need == MC_WR) {
            int dep = 0;
            for (int k = 0; k < j && !dep; k++) dep = !h->pool[cq[k].req].is_write && h->pool[cq[k].req].addr == r->addr;
            if (dep) continue;
        }
        if (!(have & (1u << need))) { rtc[need] = ready_at(h, ch, need, r->pc, r->bg, r->bank); have |= 1u << need; }
        uint64_t rt = rtc[need];
        if (rt <= t) { *pos = j; *cmd = need; return 1; }
        if (rt < lb) lb = rt;
        if (mem_cmd_is_col(need)) {
            /* the other direction's hits: a lower bound for the early exit */
            int o = need == MC_RD ? MC_WR : MC_RD;
            if (!(have & (1u << o))) {
                rtc[o] = ready_at(h, ch, o, r->pc, r->bg, r->bank);
                have |= 1u << o;
                if (rtc[o] < lb) lb = rtc[o];
            }
        }
    }
    ch->cq_lb[b] = lb;
    return 0;
}

static int dq_blocked(const mem_hbm *h, const hchan *ch, int b)
{
    (void)h;
    /* a bank's ref_pending is set exactly while it is in refb[]: with no
     * per-bank refresh waiting, no bank's state needs loading */
    return ch->nref > 0 || (ch->nrefb > 0 && ch->bk[b].ref_pending);
}

/* Round-robin search over bank queues from rr+1; the pointer moves with
 * the search as DRAMSim3's does. */
static inline __attribute__((always_inline))
int dq_try_bank(mem_hbm *h, hchan *ch, uint64_t t, int b, int *bank, int *pos, int *cmd)
{
    if (ch->cq_lb[b] > t || dq_blocked(h, ch, b)) return 0;
    if (!dq_first_ready(h, ch, b, t, pos, cmd)) return 0;
    ch->rr = b;
    *bank = b;
    return 1;
}

/* nbank <= 64. The commands dq_first_ready may pick from bank queue b
 * depend only on the bank's row state and its queue, not on time: a closed
 * bank offers its head's ACT; an open one its head's PRE (unless the row-hit
 * cap protects the row) and then the first hit of the open row that no
 * older read to its address holds back (the scan stops at the first hit
 * evaluated, ready or not). Every command of one type to one bank is ready
 * at the same cycle, so the first ready candidate in queue order is what
 * the scan returns. The summary is rebuilt only after the bank's state or
 * queue changed (cq_dirty), and cmask[] lets a search skip, with a mask,
 * every bank whose candidates' pseudo-channel or bus constraints are not
 * met. */
static inline __attribute__((always_inline))
void dq_summarise(mem_hbm *h, hchan *ch, int b)
{
    struct dqsum *s = &ch->cs[b];
    uint64_t bit = (uint64_t)1 << b;
    for (int i = 0; i < s->n; i++) ch->cmask[s->k[i]] &= ~bit;
    s->n = 0;
    int n = ch->ncq[b];
    if (!n) return;
    const hbank *bk = &ch->bk[b];
    const tnode *bg = &ch->bg[h->bbg[b]];
    if (bk->open_row < 0) {
        s->k[0] = 0; s->pos[0] = 0; s->n = 1;
        ch->ltk[0][b] = NPU_MAX(bk->t.nxt[MC_ACT], bg->nxt[MC_ACT]);
        ch->cmask[0] |= bit;
        return;
    }
    int cqd = h->cfg.ctrl.cmd_queue;
    const struct cqe *cq = &ch->cq[b * cqd];
    uint32_t open = (uint32_t)bk->open_row;
    for (int j = 0; j < n; j++) {
        if (cq[j].row != open) {
            if (j) continue;
            int cap = h->cfg.ctrl.row_hit_cap;
            if (cap && (int)bk->hits < cap) {
                int pend = 0;
                for (int k = 1; k < n && !pend; k++) pend = cq[k].row == open;
                if (pend) continue;
            }
            ch->ltk[1][b] = NPU_MAX(bk->t.nxt[MC_PRE], bg->nxt[MC_PRE]);
            s->k[s->n] = 1; s->pos[s->n++] = 0;
            ch->cmask[1] |= bit;
            continue;
        }
        const hreq *r = &h->pool[cq[j].req];
        if (r->is_write) {
            int dep = 0;
            for (int k = 0; k < j && !dep; k++) dep = !h->pool[cq[k].req].is_write && h->pool[cq[k].req].addr == r->addr;
            if (dep) continue;
        }
        int c = r->is_write ? MC_WR : MC_RD, kk = r->is_write ? 3 : 2;
        ch->ltk[kk][b] = NPU_MAX(bk->t.nxt[c], bg->nxt[c]);
        s->k[s->n] = (uint8_t)kk; s->pos[s->n++] = (uint8_t)j;
        ch->cmask[kk] |= bit;
        break;
    }
}

static inline void dq_refresh_summaries(mem_hbm *h, hchan *ch)
{
    for (uint64_t x = ch->cq_dirty; x; x &= x - 1) dq_summarise(h, ch, __builtin_ctzll(x));
    if (ch->lt_dirty)
        for (int k = 0; k < 4; k++) {
            /* banks rebuilt above are fresh; banks without this kind have no ltk */
            uint64_t x = ch->ltd[k] & ch->cmask[k] & ~ch->cq_dirty;
            ch->ltd[k] = 0;
            int c = dq_kinds[k];
            for (; x; x &= x - 1) {
                int b = __builtin_ctzll(x);
                ch->ltk[k][b] = NPU_MAX(ch->bk[b].t.nxt[c], ch->bg[h->bbg[b]].nxt[c]);
            }
        }
    ch->cq_dirty = ch->lt_dirty = 0;
}

/* Banks waiting for a per-bank refresh (nbank <= 64). */
static inline uint64_t dq_blocked_mask(const hchan *ch)
{
    uint64_t m = 0;
    for (int i = 0; i < ch->nrefb; i++) m |= (uint64_t)1 << ch->refb[i];
    return m;
}

static inline __attribute__((always_inline))
int dq_search64(mem_hbm *h, hchan *ch, uint64_t t, int *bank, int *pos, int *cmd)
{
    if (ch->cq_dirty | ch->lt_dirty) dq_refresh_summaries(h, ch);
    /* banks with a candidate whose PC / bus constraints are met; sr[p]:
     * bit c = command type c meets them in PC p */
    uint64_t cand = 0;
    unsigned sr[4] = { 0 };
    if (h->npc == 1) {
        /* one pseudo-channel (legacy mode): no per-PC masks */
        const uint64_t *shr = ch->shr[0];
        unsigned m = (unsigned)(shr[0] <= t) | (unsigned)(shr[1] <= t) << 1 |
                     (unsigned)(shr[2] <= t) << 2 | (unsigned)(shr[3] <= t) << 3;
        sr[0] = m;
        cand = (m & 1 ? ch->cmask[0] : 0) | (m & 2 ? ch->cmask[1] : 0) |
               (m & 4 ? ch->cmask[2] : 0) | (m & 8 ? ch->cmask[3] : 0);
    } else {
        for (int p = 0; p < h->npc; p++)
            for (int k = 0; k < 4; k++) {
                uint64_t m = ch->cmask[k] & h->pcmask[p];
                if (m && ch->shr[p][k] <= t) { cand |= m; sr[p] |= 1u << k; }
            }
    }
    cand &= ch->cq_nonempty;
    if (ch->nrefb) cand &= ~dq_blocked_mask(ch);
    if (!cand) return 0;
    int start = ch->rr, nq = h->nbank;
    int s0 = start + 1 < nq ? start + 1 : 0;
    uint64_t hi = s0 ? cand >> s0 << s0 : cand, lo = s0 ? cand & (((uint64_t)1 << s0) - 1) : 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint64_t x = pass ? lo : hi; x; x &= x - 1) {
            int b = __builtin_ctzll(x);
            const struct dqsum *s = &ch->cs[b];
            unsigned srp = sr[h->bpc[b]];
            for (int i = 0; i < s->n; i++)
                if ((srp >> s->k[i] & 1) && ch->ltk[s->k[i]][b] <= t) {
                    ch->rr = b; *bank = b; *pos = s->pos[i]; *cmd = dq_kinds[s->k[i]];
                    return 1;
                }
        }
    return 0;
}

/* After a fruitless dq_search64: the least ready cycle of any candidate
 * of an unblocked bank (NEVER if none), exact. */
static uint64_t dq_wake64(mem_hbm *h, hchan *ch)
{
    if (ch->cq_dirty | ch->lt_dirty) dq_refresh_summaries(h, ch);
    if (ch->nref) return NEVER;
    uint64_t m = ch->cq_nonempty;
    if (ch->nrefb) m &= ~dq_blocked_mask(ch);
    uint64_t best = NEVER;
    for (int p = 0; p < h->npc; p++) {
        uint64_t mp = m & h->pcmask[p];
        if (!mp) continue;
        /* per command type: the shared part is common to the PC's banks,
         * so max(shared, min lt) is the least ready cycle of that type */
        for (int k = 0; k < 4; k++) {
            uint64_t mk = mp & ch->cmask[k];
            uint64_t r = ch->shr[p][k];
            /* this kind is ready no earlier than its shared part: skip it
             * when that cannot beat the best, and stop the bank scan once
             * a bank part is within the shared part */
            if (!mk || r >= best) continue;
            uint64_t lt = NEVER;
            const uint64_t *ltk = ch->ltk[k];
            for (; mk; mk &= mk - 1) {
                uint64_t v = ltk[__builtin_ctzll(mk)];
                if (v < lt) { lt = v; if (lt <= r) break; }
            }
            if (lt > r) r = lt;
            if (r < best) best = r;
        }
    }
    return best;
}

static inline __attribute__((always_inline))
int dq_search(mem_hbm *h, hchan *ch, uint64_t t, int *bank, int *pos, int *cmd)
{
    int nq = h->nbank, start = ch->rr;
    if (ch->cq_min > t) return 0;        /* no bank queue can have a ready command */
    /* an all-bank refresh waiting blocks every bank queue (dq_blocked), and
     * cq_min is then left alone: nothing to search */
    if (ch->nref > 0) return 0;
    if (nq <= 64) return dq_search64(h, ch, t, bank, pos, cmd);
    for (int i = 1; i <= nq; i++) {
        int b = start + i < nq ? start + i : start + i - nq;
        if (ch->ncq[b] && dq_try_bank(h, ch, t, b, bank, pos, cmd)) return 1;
    }
    return 0;                             /* a full turn leaves the pointer where it was */
}

static inline __attribute__((always_inline))
void dq_issue(mem_hbm *h, int chan, uint64_t t, int b, int pos, int cmd)
{
    hchan *ch = &h->ch[chan];
    int cqd = h->cfg.ctrl.cmd_queue;
    struct cqe *cq = &ch->cq[b * cqd];
    int32_t ri = cq[pos].req;
    hreq *r = &h->pool[ri];
    if (mem_cmd_is_col(cmd) && h->cfg.ctrl.page_policy == MEM_PAGE_CLOSED) {
        /* closed page: auto-precharge unless another command of the queue wants the row */
        int wanted = 0;
        for (int i = 0; i < ch->ncq[b] && !wanted; i++)   /* every entry is to bank b */
            wanted = cq[i].req != ri && cq[i].row == r->row;
        if (!wanted) cmd = r->is_write ? MC_WRA : MC_RDA;
    }
    classify(r, cmd, &ch->st);
    issue_i(h, chan, t, cmd, r->pc, r->bg, r->bank, r->row);
    if (mem_cmd_is_col(cmd)) {
        int m = --ch->ncq[b];
        for (int i = pos; i < m; i++) cq[i] = cq[i + 1];
        if (!ch->ncq[b] && b < 64) ch->cq_nonempty &= ~((uint64_t)1 << b);
        if (b < 64) ch->cq_room |= (uint64_t)1 << b;
        ch->ncq_total--;
        finish(h, ch, ri, t);
    }
}

static uint64_t tick_dq(mem_hbm *h, int chan, uint64_t t)
{
    hchan *ch = &h->ch[chan];
    const mem_ctrl_cfg *k = &h->cfg.ctrl;
    uint64_t wake = NEVER;
    int issued = 0, cls = -1;
    int rc, rp, rb;
    uint64_t rt;
    if (refresh_cmd(h, ch, t, &rc, &rp, &rb, &rt)) {
        if (rt <= t) {
            issue(h, chan, t, rc, rp, rb >= 0 ? rb / h->cfg.hbm.banks : -1, rb, 0);
            refresh_issued(ch, rc);
            issued = 1; cls = 0;
        } else {
            wake = rt;
        }
    }
    int b, pos, cmd;
    if (!issued && dq_search(h, ch, t, &b, &pos, &cmd)) {
        dq_issue(h, chan, t, b, pos, cmd);
        issued = 1; cls = mem_cmd_is_col(cmd);
    }
    if (issued && k->dual_cmd && dq_search(h, ch, t, &b, &pos, &cmd) && mem_cmd_is_col(cmd) != cls) {
        dq_issue(h, chan, t, b, pos, cmd);
        ch->st.dual_issue_cycles++;
    }
    /* move one transaction into its bank's command queue */
    int moved = 0, dl0 = ch->drain_left;
    if (ch->drain_left == 0 && ch->nwq &&
        (ch->nwq * 100 >= k->wr_high_pct * k->write_queue ||
         (ch->nwq >= k->wr_idle_min && ch->ncq_total == 0)))
        ch->drain_left = ch->nwq;
    int drain = ch->drain_left > 0;
    int32_t *q = drain ? ch->wq : ch->rq;
    int *nq = drain ? &ch->nwq : &ch->nrq;
    const uint16_t *qb = drain ? ch->wqb : ch->rqb;
    /* nothing can move unless some bank with queued requests has room */
    int can = h->nbank > 64 || (ch->qpres[drain] & ch->cq_room);
    for (int i = 0; i < *nq && can; i++) {
        if (ch->ncq[qb[i]] >= k->cmd_queue) continue;
        hreq *r = &h->pool[q[i]];
        /* later entries arrived no earlier: nothing behind this one can move */
        if (r->arrive > t) { if (r->arrive < wake) wake = r->arrive; break; }
        if (drain) {
            /* a read to this address still waits: stop the drain (R->W order) */
            int dep = 0;
            for (int j = 0; j < ch->nrq && !dep; j++) dep = h->pool[ch->rq[j]].addr == r->addr;
            int cqd = k->cmd_queue;
            for (int j = 0; j < ch->ncq[r->bank] && !dep; j++) {
                const hreq *o = &h->pool[ch->cq[r->bank * cqd + j].req];
                dep = !o->is_write && o->addr == r->addr;
            }
            if (dep) { ch->drain_left = 0; break; }
            ch->drain_left--;
        }
        struct cqe *e = &ch->cq[r->bank * k->cmd_queue + ch->ncq[r->bank]++];
        e->req = q[i]; e->row = r->row;
        if (r->bank < 64) {
            ch->cq_nonempty |= (uint64_t)1 << r->bank;
            if (ch->ncq[r->bank] >= k->cmd_queue) ch->cq_room &= ~((uint64_t)1 << r->bank);
        }
        ch->ncq_total++;
        if (ch->cq_lb) ch->cq_lb[r->bank] = 0;
        else {
            /* appending changes the bank's candidates only if it was empty,
             * or it is open, has no hit candidate yet and this one hits
             * (it may be that hit, or make the row-hit cap protect the
             * row); a newer entry never holds back an older one */
            const struct dqsum *cs = &ch->cs[r->bank];
            const hbank *bk = &ch->bk[r->bank];
            int has_hit = cs->n && cs->k[cs->n - 1] >= 2;
            if (ch->ncq[r->bank] == 1 || (bk->open_row == (int32_t)r->row && !has_hit))
                ch->cq_dirty |= (uint64_t)1 << r->bank;
        }
        ch->cq_min = 0;
        rw_remove(h, ch, drain, i);
        moved = 1;
        break;
    }
    if (drain && ch->nwq == 0) ch->drain_left = 0;
    /* After a move, the next transaction may move next cycle. After an
     * issue, the old code ticked again at t + 1 too; but a tick in which
     * nothing issues or moves changes no state, and nothing can move at
     * t + 1 that could not move now (room and eligibility change only by
     * an issue, which happened before the move step, or by a submit, which
     * wakes the channel), so with the exact ready cycle of the command
     * queues the channel can sleep until then (not while a refresh
     * sequence is under way: its next step is only found by refresh_cmd;
     * nor when the drain state changed, which the next tick acts on). */
    if (h->nbank > 64 || ch->drain_left != dl0 || (issued && (ch->nref || ch->nrefb))) {
        if (issued || moved || ch->drain_left != dl0) return t + 1;
    } else if (moved && (ch->qpres[ch->drain_left > 0] & ch->cq_room)) {
        /* another transaction may move next cycle (one moves per cycle;
         * without room in a bank queue that has requests, none can until
         * a column command issues) */
        return t + 1;
    }
    uint64_t mn = NEVER;
    if (h->nbank <= 64) {
        /* exact: later cycles without an event are skipped; the bound stays
         * valid until a bank's state or queue changes (which resets it) */
        mn = ch->cq_min > t ? ch->cq_min : dq_wake64(h, ch);
        if (ch->nref == 0 && ch->nrefb == 0) ch->cq_min = mn;
    } else {
        for (int i = 0; i < h->nbank; i++)
            if (ch->ncq[i] && !dq_blocked(h, ch, i) && ch->cq_lb[i] < mn) mn = ch->cq_lb[i];
        if (ch->nref == 0 && ch->nrefb == 0) ch->cq_min = mn;   /* blocked banks were left out */
    }
    if (mn < wake) wake = mn;
    if (ch->nref == 0 && ch->nrefb == 0 && ch->next_ref < wake) wake = ch->next_ref;
    if (h->cfg.hbm.refresh == MEM_REF_PER_BANK)   /* else every next_refpb is NEVER */
        for (int p = 0; p < h->npc; p++) if (ch->pc[p].next_refpb < wake) wake = ch->pc[p].next_refpb;
    if (wake <= t) wake = t + 1;
    return wake;
}

static inline void account_occ(hchan *ch, uint64_t t)
{
    if (t > ch->occ_t) {
        uint64_t dt = t - ch->occ_t;
        ch->st.rq_occ_sum += dt * (uint64_t)(ch->nrq + ch->naq + ch->ncq_total);
        ch->st.wq_occ_sum += dt * (uint64_t)ch->nwq;
        ch->occ_t = t;
    }
}

static void tick(mem_hbm *h, int chan, uint64_t t)
{
    hchan *ch = &h->ch[chan];
    account_occ(ch, t);
    refresh_due(h, ch, t);
    h->wk[chan] = h->cfg.ctrl.cmd_queue ? tick_dq(h, chan, t) : tick_fr(h, chan, t);
    /* an idle channel still has to refresh, but only when it is due */
    if (!h->cfg.ctrl.skip_idle && (ch->nrq || ch->nwq || ch->naq || ch->ncq_total))
        h->wk[chan] = t + 1;   /* (skip_idle false: the wakes above must not matter) */
}

/* ---- public run interface ----------------------------------------------------------------- */
/* What the queues need of an address (flat bank and bank group in the
 * channel): a shift and a mask per field when the mapping allows
 * (dfast), else mem_hbm_decode's table walk. */
static inline __attribute__((always_inline))
void decode_loc(const mem_hbm *h, uint64_t addr, struct hloc *l)
{
    const mem_hbm_cfg *c = &h->cfg.hbm;
    uint32_t k, hc, p, sid, g, b, row;
    if (h->dfast) {
        uint64_t x = addr >> h->map.off_bits;
        uint32_t f[MF__N];
        for (int i = 0; i < MF__N; i++) f[i] = (uint32_t)(x >> h->fpos[i]) & h->fmask[i];
        apply_xor(&h->map, f);
        k = f[MF_K]; hc = f[MF_H]; p = f[MF_P]; sid = f[MF_S];
        g = f[MF_G]; b = f[MF_B]; row = f[MF_R];
    } else {
        mem_addr a;
        mem_hbm_decode(h, addr, &a);
        k = (uint32_t)a.stack; hc = (uint32_t)a.channel; p = (uint32_t)a.pc; sid = (uint32_t)a.sid;
        g = (uint32_t)a.bg; b = (uint32_t)a.bank; row = a.row;
    }
    uint32_t gf = sid * (uint32_t)c->bankgroups + g;
    l->chan = (uint16_t)(k * (uint32_t)c->channels + hc);
    l->pc = (uint8_t)p;
    l->bg = (uint16_t)(p * (uint32_t)h->ngpc + gf);
    l->bank = (uint16_t)(p * (uint32_t)h->nbpc + gf * (uint32_t)c->banks + b);
    l->row = row;
}

static inline __attribute__((always_inline))
struct hloc decode_cached(mem_hbm *h, uint64_t addr)
{
    uint64_t key = addr >> h->dc_shift;
    if (!h->dc_valid || h->dc_addr != key) {
        decode_loc(h, addr, &h->dc);
        h->dc_addr = key;
        h->dc_valid = 1;
    }
    return h->dc;
}

int mem_hbm_can_accept(const mem_hbm *h, uint64_t addr, int is_write)
{
    struct hloc a = decode_cached((mem_hbm *)h, addr);
    const hchan *ch = &h->ch[a.chan];
    return is_write ? ch->nwq < h->cfg.ctrl.write_queue : ch->nrq < h->cfg.ctrl.read_queue;
}

static inline __attribute__((always_inline))
npu_status submit_i(mem_hbm *h, uint64_t addr, int is_write, uint64_t tag, uint64_t cycle, npu_diag *d,
                    struct hloc a)
{
    hchan *ch = &h->ch[a.chan];
    uint64_t t = cycle > h->next_t ? cycle : h->next_t;
    account_occ(ch, t);
    uint64_t line = addr & ~(uint64_t)(h->atom - 1);
    /* the write buffer answers reads to what it holds and absorbs rewrites */
    for (int i = 0; i < ch->nwq; i++)
        if ((h->pool[ch->wq[i]].addr & ~(uint64_t)(h->atom - 1)) == line) {
            if (is_write) { ch->st.coalesced++; ch->st.writes++; ch->st.bytes_written += (uint64_t)h->atom; done_push(h, t, tag); }
            else {
                ch->st.forwarded++; ch->st.reads++; ch->st.bytes_read += (uint64_t)h->atom;
                mem_hist_add_i(&ch->st.lat, 1);
                done_push(h, t + 1, tag);
                if (t + 1 > ch->st.last_done) ch->st.last_done = t + 1;
            }
            return h->oom ? npu_errf(d, NPU_ENOMEM, "mem_hbm_submit: out of memory") : NPU_OK;
        }
    int32_t *q = is_write ? ch->wq : ch->rq;
    int *n = is_write ? &ch->nwq : &ch->nrq;
    int cap = is_write ? h->cfg.ctrl.write_queue : h->cfg.ctrl.read_queue;
    uint32_t hb = 0;
    if (ch->rhash && !is_write) {
        /* a read to an address with a read still pending rides along with it */
        hb = rhash_of(h, addr);
        int32_t f = ch->rhash[hb];
        while (f >= 0 && (h->pool[f].addr & ~(uint64_t)(h->atom - 1)) != line) f = h->pool[f].hnext;
        if (f >= 0) {
            int32_t mi = req_alloc(h);
            if (mi < 0) return npu_errf(d, NPU_ENOMEM, "mem_hbm_submit: out of memory");
            hreq *m = &h->pool[mi];
            memset(m, 0, sizeof *m);
            m->addr = addr; m->tag = tag; m->arrive = t;
            m->mnext = h->pool[f].mnext;
            m->hnext = -1;
            h->pool[f].mnext = mi;
            ch->st.merged_reads++;
            return NPU_OK;
        }
    }
    if (*n >= cap)
        return npu_errf(d, NPU_EINVAL, "mem_hbm_submit: channel %d %s queue full (call can_accept first)",
                        a.chan, is_write ? "write" : "read");
    int32_t ri = req_alloc(h);
    if (ri < 0) return npu_errf(d, NPU_ENOMEM, "mem_hbm_submit: out of memory");
    hreq *r = &h->pool[ri];
    *r = (hreq){ .addr = addr, .tag = tag, .arrive = t, .row = a.row, .epoch = UINT32_MAX,
                 .bank = a.bank, .bg = a.bg, .pc = a.pc, .is_write = (uint8_t)(is_write != 0),
                 .mnext = -1, .hnext = -1 };
    if (ch->rhash && !is_write) {
        r->hnext = ch->rhash[hb];
        ch->rhash[hb] = ri;
    }
    int w = r->is_write;
    if (q + *n == ch->qbuf[w] + 2 * cap) {
        /* the queue reached its buffer's end: back to the start */
        memmove(ch->qbuf[w], q, (size_t)*n * sizeof *q);
        memmove(ch->qbbuf[w], w ? ch->wqb : ch->rqb, (size_t)*n * sizeof(uint16_t));
        memmove(ch->qrbuf[w], w ? ch->wqr : ch->rqr, (size_t)*n * sizeof(uint32_t));
        q = ch->qbuf[w];
        if (w) { ch->wq = q; ch->wqb = ch->qbbuf[w]; ch->wqr = ch->qrbuf[w]; }
        else { ch->rq = q; ch->rqb = ch->qbbuf[w]; ch->rqr = ch->qrbuf[w]; }
    }
    {
        uint16_t *qb = w ? ch->wqb : ch->rqb;
        uint32_t *qr = w ? ch->wqr : ch->rqr;
        qb[*n] = r->bank;
        qr[*n] = r->row;
        if (h->qrun && (*n == 0 || qb[*n - 1] != r->bank || qr[*n - 1] != r->row))
            ch->qhead[w] |= (uint64_t)1 << *n;
    }
    h->nlive++;
    if (is_write) h->nwq_all++;
    if (ch->qcnt[r->is_write][r->bank]++ == 0) {
        ch->qnb[r->is_write]++;
        if (r->bank < 64) ch->qpres[r->is_write] |= (uint64_t)1 << r->bank;
    }
    q[(*n)++] = ri;
    if (t < h->wk[a.chan]) h->wk[a.chan] = t;
    if (t < h->wake_min) h->wake_min = t;
    return NPU_OK;
}

npu_status mem_hbm_submit(mem_hbm *h, uint64_t addr, int is_write, uint64_t tag, uint64_t cycle, npu_diag *d)
{
    return submit_i(h, addr, is_write, tag, cycle, d, decode_cached(h, addr));
}

int mem_hbm_offer(mem_hbm *h, uint64_t addr, int is_write, uint64_t tag, uint64_t cycle, npu_diag *d)
{
    struct hloc a = decode_cached(h, addr);
    const hchan *ch = &h->ch[a.chan];
    if (is_write ? ch->nwq >= h->cfg.ctrl.write_queue : ch->nrq >= h->cfg.ctrl.read_queue) return 0;
    return submit_i(h, addr, is_write, tag, cycle, d, a) ? -1 : 1;
}

/* Can buffered writes ever issue without new traffic? (DRAMSim3's drain
 * rule leaves fewer than wr_idle_min writes in the buffer until more come.) */
static int writes_can_drain(const mem_hbm *h, const hchan *ch)
{
    const mem_ctrl_cfg *k = &h->cfg.ctrl;
    if (!ch->nwq) return 0;
    if (k->cmd_queue ? ch->drain_left > 0 : ch->wmode) return 1;
    return ch->nwq * 100 >= k->wr_high_pct * k->write_queue || ch->nwq >= k->wr_idle_min;
}

uint64_t mem_hbm_next_event(const mem_hbm *h)
{
    uint64_t t = done_next_t(h);
    if (h->wake_min < t) t = h->wake_min;
    /* with nothing that can make progress, channels only wake to refresh:
     * nothing will ever be reported, so say idle. Requests outside the
     * write queues always make progress; only buffered writes need the
     * per-channel drain rule. */
    if (t != NEVER && !h->nheap && !h->nfifo && h->nlive == h->nwq_all) {
        int busy = 0;
        for (int i = 0; i < h->nch && !busy && h->nwq_all; i++) {
            const hchan *ch = &h->ch[i];
            busy = ch->nrq || ch->naq || ch->ncq_total || writes_can_drain(h, ch);
        }
        if (!busy) return NEVER;
    }
    return t;
}

npu_status mem_hbm_status(const mem_hbm *h) { return h->oom ? NPU_ENOMEM : NPU_OK; }

int mem_hbm_pending(const mem_hbm *h)
{
    int n = h->nheap + (int)h->nfifo;
    for (int i = 0; i < h->nch; i++) n += h->ch[i].nrq + h->ch[i].nwq + h->ch[i].naq + h->ch[i].ncq_total;
    return n;
}

void mem_hbm_advance_to(mem_hbm *h, uint64_t T)
{
    for (;;) {
        uint64_t tw = h->wake_min;
        uint64_t tc = done_next_t(h);
        uint64_t t = tw < tc ? tw : tc;
        if (t == NEVER || t > T) break;
        if (tc <= t) {
            while (done_next_t(h) <= t) {
                hdone e = done_pop(h);
                if (h->done) h->done(h->user, e.tag, e.t);
            }
            continue;   /* callbacks may have submitted work at t */
        }
        /* tick the due channels (in index order: completions at equal
         * times keep that order) and take the new least wake in the same
         * pass */
        uint64_t mn = NEVER;
        if (h->nch <= 64) {
            /* the due channels as a mask first (no branch a channel, which
             * the host mispredicted: which channels are due is a coin
             * toss), then their ticks in index order, then the least wake;
             * a tick changes only its own channel's wake (completions wait
             * for the branch above), so this is the loop below exactly */
            uint64_t due = 0;
            for (int i = 0; i < h->nch; i++) due |= (uint64_t)(h->wk[i] <= t) << i;
            for (; due; due &= due - 1) tick(h, __builtin_ctzll(due), t);
            for (int i = 0; i < h->nch; i++) mn = h->wk[i] < mn ? h->wk[i] : mn;
        } else {
            for (int i = 0; i < h->nch; i++) {
                if (h->wk[i] <= t) tick(h, i, t);
                if (h->wk[i] < mn) mn = h->wk[i];
            }
        }
        h->wake_min = mn;
        h->next_t = t + 1;
    }
    if (T != NEVER && T + 1 > h->next_t) h->next_t = T + 1;
}

void mem_hbm_account_to(mem_hbm *h, uint64_t t)
{
    for (int i = 0; i < h->nch; i++) account_occ(&h->ch[i], t);
}

void mem_hbm_total_stats(const mem_hbm *h, mem_chan_stats *o)
{
    memset(o->lat.bin, 0, sizeof o->lat.bin);
    mem_hbm_total_stats_nobins(h, o);
    for (int i = 0; i < h->nch; i++)
        for (int b = 0; b < MEM_HIST_N; b++) o->lat.bin[b] += h->ch[i].st.lat.bin[b];
}

void mem_hbm_total_stats_nobins(const mem_hbm *h, mem_chan_stats *o)
{
    memset(o, 0, offsetof(mem_chan_stats, lat) + offsetof(mem_hist, bin));
    o->lat.min = NEVER;
    for (int i = 0; i < h->nch; i++) {
        const mem_chan_stats *s = &h->ch[i].st;
        uint64_t *dst = (uint64_t *)o;
        const uint64_t *src = (const uint64_t *)s;
        size_t nscalar = offsetof(mem_chan_stats, lat) / sizeof(uint64_t);
        for (size_t k = 0; k < nscalar; k++) dst[k] += src[k];
        if (s->last_done > o->last_done) o->last_done = s->last_done;
        o->lat.n += s->lat.n; o->lat.sum += s->lat.sum;
        if (s->lat.n && s->lat.min < o->lat.min) o->lat.min = s->lat.min;
        if (s->lat.max > o->lat.max) o->lat.max = s->lat.max;
    }
    /* last_done was summed above with the scalars: recompute as the max */
    o->last_done = 0;
    for (int i = 0; i < h->nch; i++) if (h->ch[i].st.last_done > o->last_done) o->last_done = h->ch[i].st.last_done;
}

npu_status mem_hbm_check(const mem_hbm *h, uint64_t *violations, npu_diag *d)
{
    return mem_check_run(&h->cfg, h->log, h->nlog, violations, d);
}

/* ---- histogram ---------------------------------------------------------------------------- */
uint64_t mem_hist_bin_lo(int i)
{
    if (i < MEM_HIST_EXACT) return (uint64_t)i;
    int base = (i - MEM_HIST_EXACT) / MEM_HIST_SUB, sub = (i - MEM_HIST_EXACT) % MEM_HIST_SUB;
    int oct = base + 11;
    return ((uint64_t)1 << oct) | ((uint64_t)sub << (oct - 7));
}

void mem_hist_add(mem_hist *h, uint64_t v) { mem_hist_add_i(h, v); }

uint64_t mem_hist_pct(const mem_hist *h, double pct)
{
    if (!h->n) return 0;
    uint64_t rank = (uint64_t)((pct / 100.0) * (double)h->n + 0.999999999);
    if (rank < 1) rank = 1;
    uint64_t acc = 0;
    for (int i = 0; i < MEM_HIST_N; i++) {
        acc += h->bin[i];
        if (acc >= rank) return i < MEM_HIST_EXACT ? (uint64_t)i : mem_hist_bin_lo(i);
    }
    return h->max;
}
