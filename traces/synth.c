/* synth.c — a synthetic but realistic GEMM-like event stream.
 *
 * Used by the tests (size per event, exporters), npt-synth (benchmarks, the
 * viewer's test data) — never by the simulator. Each core runs tiles of a
 * double-buffered GEMM: the scalar unit dispatches in order (one
 * instruction a cycle, waiting when a pipe's 8-deep queue is full); MTE2
 * loads A and B tiles from GM, MTE1 moves them to L0A/L0B, the cube runs
 * mmads, FIX drains L0C, V adds a bias and MTE3 stores, each hand-off a
 * set_flag/wait_flag pair. Durations carry seeded jitter (HBM contention),
 * so events finish out of start order as in a real run; they are handed to
 * the sink in completion order, a round of tiles of all cores at a time. */
#include <stdlib.h>

#include "traces/trc_int.h"

#include "isa/isa.h"

/* opcodes: the ISA's (ids = isa_op, names = its mnemonics), as npusim
 * record writes them; the instructions the synthetic GEMM uses */
enum { OP_SADD = ISA_OP_ADD, OP_SMOV = ISA_OP_LI, OP_CALL = ISA_OP_JAL, OP_RET = ISA_OP_JALR,
       OP_GM_L1 = ISA_OP_GM2L1, OP_L1_L0A = ISA_OP_L12L0A, OP_L1_L0B = ISA_OP_L12L0B,
       OP_MMAD = ISA_OP_MMAD, OP_FIXPIPE = ISA_OP_L0C2GM, OP_VADD = ISA_OP_VADD,
       OP_UB_GM = ISA_OP_UB2GM, OP_SET = ISA_OP_SETF, OP_WAIT = ISA_OP_WAITF, OP_BAR = ISA_OP_PBAR };

static const char *const op_names[ISA_OP_COUNT] = {
#define DEF(id, mn, ...) [ISA_OP_##id] = mn,
#include "isa/isa.def"
#undef DEF
};
/* stall causes: the simulator's table (ids and names as npusim record writes) */
enum {
#define STALL(id, name, doc) C_##id,
#include "isa/stalls.def"
#undef STALL
    C_NCAUSES
};
static const char *const cause_names[C_NCAUSES] = {
#define STALL(id, name, doc) name,
#include "isa/stalls.def"
#undef STALL
};
static const char *const ctr_names[] = { "cycles", "insns", "cube_busy", "hbm_bytes" };
static const char *const hbm_names[] = { "ACT", "RD", "WR", "PRE", "REF" };
static const trc_symbol synth_syms[] = {
    { "gemm", 0x1000, 0x800, 1 },
    { "prologue", 0x1000, 0, 0 },
    { "tile_loop", 0x1040, 0, 0 },
    { "k_loop", 0x1100, 0, 0 },
    { "epilogue", 0x1400, 0, 0 },
    { "load_tile", 0x2000, 0x200, 1 },
    { "load_a", 0x2000, 0, 0 },
    { "load_b", 0x2080, 0, 0 },
};
#define PC_LO 0x1000u
#define PC_HI 0x2200u

const trc_meta *trc_synth_meta(const trc_synth_opts *o, trc_meta *m)
{
    memset(m, 0, sizeof *m);
    m->config_json = "{\"version\":1,\"name\":\"synthetic-a2\",\"cores\":24,\"clock_ghz\":1.8}";
    m->clock_ghz = 1.8;
    m->n_cores = o->cores;
    m->seed = o->seed;
    m->kernel = "gemm";
    m->level = o->mem ? "full" : "instr";
    m->counter_interval = 1000;
    m->symbols = synth_syms;
    m->n_symbols = NPU_ARRAY_LEN(synth_syms);
    m->opcodes = (trc_names){ op_names, ISA_OP_COUNT };
    m->causes = (trc_names){ cause_names, C_NCAUSES };
    m->counters = (trc_names){ ctr_names, NPU_ARRAY_LEN(ctr_names) };
    m->hbm_commands = (trc_names){ hbm_names, NPU_ARRAY_LEN(hbm_names) };
    return m;
}

typedef struct core_st {
    uint64_t ts;                /* scalar unit time */
    uint64_t tp[TRC_NPIPES];    /* when each pipe is free */
    uint64_t q[TRC_NPIPES][8];  /* start times of the last 8 per pipe (queue model) */
    unsigned qi[TRC_NPIPES];
    uint64_t seq[TRC_NPIPES][TRC_NPIPES][8];
    uint64_t next_sample, insns, cube_busy, hbm_bytes;
    uint32_t tile;
} core_st;

typedef struct synth {
    const trc_synth_opts *o;
    npu_rng rng;
    core_st *cores;
    trc_event *buf;
    size_t n, cap;
    uint8_t seen[(PC_HI - PC_LO) / 8];
    trc_synth_sink sink;
    npu_status (*disasm)(void *, uint64_t, const char *);
    void *ctx;
    uint32_t core;
    int oom;                    /* a push failed */
} synth;

static int push(synth *s, trc_event e)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4096;
        trc_event *nb = npu_realloc(s->buf, nc * sizeof *nb);
        if (!nb) {
            s->oom = 1;
            return -1;
        }
        s->buf = nb;
        s->cap = nc;
    }
    s->buf[s->n++] = e;
    return 0;
}

static npu_status note_pc(synth *s, uint64_t pc, unsigned op, unsigned pipe)
{
    if (!s->disasm || pc < PC_LO || pc >= PC_HI || s->seen[(pc - PC_LO) / 8])
        return NPU_OK;
    s->seen[(pc - PC_LO) / 8] = 1;
    char txt[96];
    snprintf(txt, sizeof txt, "%s %s, x%u, x%u", op_names[op], trc_pipe_name(pipe),
             (unsigned)(pc >> 3) % 32, (unsigned)(pc >> 4) % 32);
    return s->disasm(s->ctx, pc, txt);
}

static uint64_t jitter(synth *s, uint64_t span) { return span ? npu_rng_next(&s->rng) % span : 0; }

/* Dispatch one instruction to pipe p: returns its start. */
static uint64_t insn(synth *s, unsigned p, uint64_t pc, unsigned op, uint64_t dur, uint64_t not_before,
                     uint64_t *end_out)
{
    core_st *c = &s->cores[s->core];
    /* scalar issue: wait while the target queue is full */
    uint64_t oldest = c->q[p][c->qi[p] % 8];
    if (p != TRC_PIPE_S && c->qi[p] >= 8 && oldest > c->ts) {
        push(s, trc_ev_stall(s->core, TRC_PIPE_S, C_QUEUE_FULL, c->ts, oldest));
        c->ts = oldest;
    }
    uint64_t dispatch = c->ts++;
    uint64_t start = NPU_MAX(NPU_MAX(dispatch + 1, c->tp[p]), not_before);
    if (p == TRC_PIPE_S)
        start = dispatch;
    uint64_t end = start + dur;
    if (p != TRC_PIPE_S) {
        c->tp[p] = end;
        c->q[p][c->qi[p]++ % 8] = start;
    } else {
        c->ts = end;
    }
    push(s, trc_ev_insn(s->core, p, pc, op, dispatch, start, end, 0));
    note_pc(s, pc, op, p);
    c->insns++;
    if (end_out)
        *end_out = end;
    return start;
}

static uint64_t set_flag(synth *s, unsigned src, unsigned dst, unsigned id, uint64_t pc)
{
    core_st *c = &s->cores[s->core];
    uint64_t end;
    insn(s, src, pc, OP_SET, 1, 0, &end);
    uint64_t seq = ++c->seq[src][dst][id];
    push(s, trc_ev_flag_set(s->core, src, dst, id, end, seq));
    return end;
}

static void wait_flag(synth *s, unsigned src, unsigned dst, unsigned id, uint64_t set_at, uint64_t pc)
{
    core_st *c = &s->cores[s->core];
    uint64_t dispatch = c->ts;
    uint64_t start = NPU_MAX(dispatch + 1, c->tp[dst]);
    uint64_t end;
    uint64_t release = NPU_MAX(start, set_at);
    /* the pipe is blocked from start to release; the wait itself then
     * takes one cycle */
    insn(s, dst, pc, OP_WAIT, 1, release, &end);
    push(s, trc_ev_flag_wait(s->core, src, dst, id, start, end, c->seq[src][dst][id]));
    if (release > start)
        push(s, trc_ev_stall(s->core, dst, C_FLAG, start, release));
}

static int cmp_end(const void *a, const void *b)
{
    const trc_event *x = a, *y = b;
    uint64_t ex = trc_event_end(x), ey = trc_event_end(y);
    if (ex != ey)
        return ex < ey ? -1 : 1;
    /* ties: a fixed order so the stream is deterministic under qsort */
    if (x->core != y->core) return x->core < y->core ? -1 : 1;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->pipe != y->pipe) return x->pipe < y->pipe ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void tile(synth *s)
{
    core_st *c = &s->cores[s->core];
    const int KT = 4;
    uint64_t gm = 0x100000000ull + ((uint64_t)s->core << 28) + ((uint64_t)c->tile << 16);
    insn(s, TRC_PIPE_S, 0x1040, OP_SADD, 1, 0, NULL);
    insn(s, TRC_PIPE_S, 0x1048, OP_SMOV, 1, 0, NULL);
    insn(s, TRC_PIPE_S, 0x1050, OP_SADD, 1, 0, NULL);
    uint64_t m_done = 0;
    for (int k = 0; k < KT; k++) {
        unsigned id = (unsigned)k % 2;
        insn(s, TRC_PIPE_S, 0x1100, OP_SADD, 1, 0, NULL);
        /* the loads live in a called helper: CALL/RET give the stack */
        push(s, trc_ev_call(s->core, 0x1108, 0x2000, c->ts));
        insn(s, TRC_PIPE_S, 0x1108, OP_CALL, 1, 0, NULL);
        for (int ab = 0; ab < 2; ab++) {
            uint64_t pc = ab ? 0x2080 : 0x2000, end;
            insn(s, TRC_PIPE_S, pc, OP_SADD, 1, 0, NULL);
            uint64_t dur = 64 + 80 + jitter(s, 120) + (jitter(s, 16) == 0 ? 400 : 0);
            uint64_t st = insn(s, TRC_PIPE_MTE2, pc + 8, OP_GM_L1, dur, 0, &end);
            uint64_t addr = gm + (uint64_t)k * 32768 + (uint64_t)ab * 16384;
            if (s->o->mem) {
                push(s, trc_ev_mem(s->core, TRC_PIPE_MTE2, addr, 16384, 0, st + 2, end));
                uint32_t ch = (uint32_t)((addr >> 8) * 0x9E37u % 32);
                push(s, trc_ev_hbm(ch, (unsigned)(addr >> 13) & 1, (uint32_t)(addr >> 14) % 16,
                                   (addr >> 16) & 0xffff, 0, st + 10));
                for (int r = 0; r < 4; r++)
                    push(s, trc_ev_hbm(ch, (unsigned)(addr >> 13) & 1, (uint32_t)(addr >> 14) % 16,
                                       (addr >> 16) & 0xffff, 1, st + 24 + 4 * (uint64_t)r));
            }
            c->hbm_bytes += 16384;
        }
        push(s, trc_ev_ret(s->core, 0x2100, 0x1110, c->ts));
        insn(s, TRC_PIPE_S, 0x2100, OP_RET, 1, 0, NULL);
        uint64_t s1 = set_flag(s, TRC_PIPE_MTE2, TRC_PIPE_MTE1, id, 0x1110);
        wait_flag(s, TRC_PIPE_MTE2, TRC_PIPE_MTE1, id, s1, 0x1118);
        insn(s, TRC_PIPE_MTE1, 0x1120, OP_L1_L0A, 32 + jitter(s, 8), 0, NULL);
        insn(s, TRC_PIPE_MTE1, 0x1128, OP_L1_L0B, 24 + jitter(s, 8), 0, NULL);
        uint64_t s2 = set_flag(s, TRC_PIPE_MTE1, TRC_PIPE_M, id, 0x1130);
        wait_flag(s, TRC_PIPE_MTE1, TRC_PIPE_M, id, s2, 0x1138);
        for (int mm = 0; mm < 2; mm++) {
            uint64_t e;
            insn(s, TRC_PIPE_M, 0x1140 + 8 * (uint64_t)mm, OP_MMAD, 64 + jitter(s, 4), 0, &e);
            c->cube_busy += 64;
            m_done = e;
        }
        insn(s, TRC_PIPE_S, 0x1150, OP_SADD, 1, 0, NULL);
    }
    (void)m_done;
    uint64_t s3 = set_flag(s, TRC_PIPE_M, TRC_PIPE_FIX, 0, 0x1400);
    wait_flag(s, TRC_PIPE_M, TRC_PIPE_FIX, 0, s3, 0x1408);
    uint64_t fe;
    uint64_t fst = insn(s, TRC_PIPE_FIX, 0x1410, OP_FIXPIPE, 80 + jitter(s, 20), 0, &fe);
    if (s->o->mem)
        push(s, trc_ev_mem(s->core, TRC_PIPE_FIX, gm + 0x8000000, 8192, 1, fst + 4, fe));
    uint64_t s4 = set_flag(s, TRC_PIPE_FIX, TRC_PIPE_V, 0, 0x1418);
    wait_flag(s, TRC_PIPE_FIX, TRC_PIPE_V, 0, s4, 0x1420);
    uint64_t ve;
    uint64_t vst = insn(s, TRC_PIPE_V, 0x1428, OP_VADD, 16 + jitter(s, 4), 0, &ve);
    if (jitter(s, 4) == 0)
        push(s, trc_ev_stall(s->core, TRC_PIPE_V, C_BANK, vst, vst + 2));
    uint64_t s5 = set_flag(s, TRC_PIPE_V, TRC_PIPE_MTE3, 0, 0x1430);
    wait_flag(s, TRC_PIPE_V, TRC_PIPE_MTE3, 0, s5, 0x1438);
    uint64_t me;
    uint64_t mst = insn(s, TRC_PIPE_MTE3, 0x1440, OP_UB_GM, 64 + jitter(s, 64), 0, &me);
    if (s->o->mem)
        push(s, trc_ev_mem(s->core, TRC_PIPE_MTE3, gm + 0x9000000, 8192, 1, mst + 2, me));
    /* a sample when an interval boundary has passed, stamped now so that
     * the values are the true ones at that cycle */
    if (c->ts >= c->next_sample) {
        uint64_t t = c->ts;
        push(s, trc_ev_counter(s->core, 0, t, t));
        push(s, trc_ev_counter(s->core, 1, t, c->insns));
        push(s, trc_ev_counter(s->core, 2, t, c->cube_busy));
        push(s, trc_ev_counter(s->core, 3, t, c->hbm_bytes));
        c->next_sample = (t / 1000 + 1) * 1000;
    }
    c->tile++;
}

npu_status trc_synth_run(const trc_synth_opts *o, trc_synth_sink sink,
                         npu_status (*disasm)(void *ctx, uint64_t pc, const char *text),
                         void *ctx, npu_diag *d)
{
    if (o->cores == 0 || o->cores > 4096)
        return npu_errf(d, NPU_EINVAL, "synthetic trace: cores must be 1..4096 (got %u)", o->cores);
    synth s = { .o = o, .rng = { o->seed }, .sink = sink, .disasm = disasm, .ctx = ctx };
    s.cores = npu_calloc(o->cores, sizeof *s.cores);
    if (!s.cores)
        return npu_errf(d, NPU_ENOMEM, "synthetic trace: out of memory");
    for (uint32_t c = 0; c < o->cores; c++)
        s.cores[c].ts = jitter(&s, 50);   /* cores start a little apart */
    npu_status st = NPU_OK;
    uint64_t done = 0;
    while (done < o->events && st == NPU_OK) {
        for (s.core = 0; s.core < o->cores; s.core++)
            tile(&s);   /* one tile of every core per round */
        if (s.oom) {
            st = npu_errf(d, NPU_ENOMEM, "synthetic trace: out of memory");
            break;
        }
        qsort(s.buf, s.n, sizeof *s.buf, cmp_end);
        for (size_t i = 0; i < s.n && done < o->events && st == NPU_OK; i++, done++)
            st = sink(ctx, &s.buf[i]);
        s.n = 0;
    }
    if (st != NPU_OK && d && d->status == NPU_OK)
        npu_errf(d, st, "synthetic trace: the sink failed (%s)", npu_status_name(st));
    npu_free(s.buf);
    npu_free(s.cores);
    return st;
}

static npu_status sink_write(void *ctx, const trc_event *e) { return trc_write(ctx, e); }
static npu_status sink_dis(void *ctx, uint64_t pc, const char *t)
{ return trc_writer_add_disasm(ctx, pc, t); }

npu_status trc_synth_write(const char *path, const trc_synth_opts *o, npu_diag *d)
{
    trc_meta m;
    trc_writer *w = trc_writer_open(path, trc_synth_meta(o, &m), d);
    if (!w)
        return d ? d->status : NPU_EIO;
    npu_status st = trc_synth_run(o, sink_write, sink_dis, w, d);
    if (st != NPU_OK) {
        trc_writer_error(w, d);
        trc_writer_discard(w);
        return st;
    }
    return trc_writer_close(w, d);
}
