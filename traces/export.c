/* export.c — Chrome Trace Event JSON, folded stacks and CSV.
 *
 * All three stream one iterator over the trace; what they keep is bounded
 * by the number of tracks, call paths and distinct (stack, pc) pairs, never
 * by the number of events. docs/traces.md describes the outputs. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "traces/trc_int.h"

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* ---- whose stall: the instruction that waited ------------------------------------- */
/* A STALL event carries no pc. It belongs to the instruction of its core
 * and pipe that holds its start (a data move waiting for GM inside its own
 * box), else to the next one to start past those that had already ended
 * (a wait_flag after its wait; on S, the dispatch after a full queue),
 * as npuview's loader places it (viewer/model.c, stall_owners). Events
 * come by start cycle and a pipe's instructions follow one another, so a
 * track needs its last instruction and the stalls still waiting for the
 * next one. */
typedef struct own_track {
    uint64_t pc, end;
    int has;
    trc_event *pend;
    size_t npend, cap;
} own_track;
typedef struct owners { own_track *t; size_t n; int oom; } owners;   /* t[core * 8 + pipe] */
/* emit(ctx, stall, pc): pc NULL when no instruction followed on its track */
typedef void (*own_emit)(void *ctx, const trc_event *stall, const uint64_t *pc);

/* The track of (core, pipe), NULL past 65536 cores (such a stall goes out
 * without its instruction) or when out of memory */
static own_track *own_at(owners *o, uint32_t core, unsigned pipe)
{
    size_t i = (size_t)core * 8 + (pipe & 7);
    if (i >= o->n) {
        if (core >= 65536)
            return NULL;
        size_t nn = o->n ? o->n : 64;
        while (nn <= i)
            nn *= 2;
        own_track *q = npu_realloc(o->t, nn * sizeof *q);
        if (!q) {
            o->oom = 1;
            return NULL;
        }
        memset(q + o->n, 0, (nn - o->n) * sizeof *q);
        o->t = q;
        o->n = nn;
    }
    return &o->t[i];
}

static void own_insn(owners *o, const trc_event *e, own_emit fn, void *ctx)
{
    own_track *t = own_at(o, e->core, e->pipe);
    if (!t)
        return;
    size_t k = 0;
    for (size_t i = 0; i < t->npend; i++) {
        if (e->t1 > t->pend[i].t0)
            fn(ctx, &t->pend[i], &e->addr);
        else
            t->pend[k++] = t->pend[i];  /* ran in no time at the stall's start: not the waiter */
    }
    t->npend = k;
    t->pc = e->addr;
    t->end = e->t1;
    t->has = 1;
}

static void own_stall(owners *o, const trc_event *e, own_emit fn, void *ctx)
{
    own_track *t = own_at(o, e->core, e->pipe);
    if (!t) {
        if (!o->oom)
            fn(ctx, e, NULL);
        return;
    }
    if (t->has && t->end > e->t0) {
        fn(ctx, e, &t->pc);
        return;
    }
    if (t->npend == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 4;
        trc_event *q = npu_realloc(t->pend, nc * sizeof *q);
        if (!q) {
            o->oom = 1;
            return;
        }
        t->pend = q;
        t->cap = nc;
    }
    t->pend[t->npend++] = *e;
}

/* The stalls no instruction followed, in track order: the track's last
 * instruction's (what the pipe did before it waited to the end), none on a
 * track without any; frees o. */
static void own_finish(owners *o, own_emit fn, void *ctx)
{
    for (size_t i = 0; i < o->n; i++) {
        for (size_t k = 0; fn && k < o->t[i].npend; k++)
            fn(ctx, &o->t[i].pend[k], o->t[i].has ? &o->t[i].pc : NULL);
        npu_free(o->t[i].pend);
    }
    npu_free(o->t);
    memset(o, 0, sizeof *o);
}

/* ---- Chrome ------------------------------------------------------------------------ */
#define LANES 16
/* Threads of a core: per pipe p, 1 + 48p + {0: instructions, 16: stalls,
 * 32: flag sets and waits}, each with up to LANES lanes for overlaps. */
enum { TID_PIPE = 48, TID_STALL = 16, TID_SYNC = 32, TID_MEM = 1000, TID_CALLS = 2000,
       TID_BARRIER = 2001 };
#define PID_UNIT 100000
#define PID_HBM 200000

typedef struct lane_set { uint64_t end[LANES]; } lane_set;
typedef struct pend { uint32_t pid, tid; uint64_t t; uint64_t next_free; } pend;

typedef struct chrome {
    FILE *f;
    trc_reader *r;
    const trc_meta *m;
    double cyc_per_us;
    double scale;                   /* 10^dec / cyc_per_us */
    int dec;
    int first;
    trc_map seen_pid, seen_tid;     /* metadata already written */
    trc_map lane_idx;               /* (pid, base tid) -> lanes */
    lane_set *lanes;
    size_t n_lanes, cap_lanes;
    trc_map pend_set, pend_wait;    /* flag key -> index into pends */
    pend *pends;
    size_t n_pends, cap_pends, free_pend;
    uint64_t flow_id;
    trc_map depth;                  /* core -> call depth */
    owners own;                     /* stalls waiting for their instruction */
    uint64_t last_t;
    int oom;
} chrome;

/* Microseconds with c->dec decimals, by integer arithmetic (printf's %f
 * is most of the export's time): round(cycles / cyc_per_us * 10^dec), then
 * the integer and fraction digits. Exact while the scaled value is below
 * 2^53 (over 10^9 s of trace at 6 decimals); beyond, printf. */
static void ts(chrome *c, double cycles)
{
    double v = cycles * c->scale;
    if (!(v >= 0 && v < 9007199254740992.0)) {
        fprintf(c->f, "%.*f", c->dec, cycles / c->cyc_per_us);
        return;
    }
    uint64_t q = (uint64_t)(v + 0.5);
    char buf[48], *p = buf + sizeof buf;
    *--p = 0;
    for (int i = 0; i < c->dec; i++) {
        *--p = (char)('0' + q % 10);
        q /= 10;
    }
    *--p = '.';
    do {
        *--p = (char)('0' + q % 10);
        q /= 10;
    } while (q);
    fputs(p, c->f);
}

static void sep(chrome *c)
{
    fputs(c->first ? "\n" : ",\n", c->f);
    c->first = 0;
}

static void meta_ev(chrome *c, const char *what, uint32_t pid, int64_t tid, const char *key,
                    const char *sval, long ival)
{
    sep(c);
    fprintf(c->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u", what, pid);
    if (tid >= 0)
        fprintf(c->f, ",\"tid\":%lld", (long long)tid);
    fprintf(c->f, ",\"args\":{\"%s\":", key);
    if (sval)
        json_str(c->f, sval);
    else
        fprintf(c->f, "%ld", ival);
    fputs("}}", c->f);
}

/* "L2 slice N" -> 0, "HBM channel N" -> 1 (N in *inst), the units
 * `npusim record -A` names; -1 for any other name. */
static int mem_unit_group(const char *name, int *inst)
{
    static const char *const pre[2] = { "L2 slice ", "HBM channel " };
    for (int g = 0; g < 2; g++) {
        size_t l = strlen(pre[g]);
        if (strncmp(name, pre[g], l) != 0)
            continue;
        char *end;
        long v = strtol(name + l, &end, 10);
        if (end == name + l || *end || v < 0 || v > 99999)
            return -1;
        *inst = (int)v;
        return g;
    }
    return -1;
}

static void need_process(chrome *c, uint32_t pid, const char *name, long sort)
{
    int fresh = 0;
    if (!trc_map_get(&c->seen_pid, pid, &fresh)) { c->oom = 1; return; }
    if (!fresh)
        return;
    meta_ev(c, "process_name", pid, -1, "name", name, 0);
    meta_ev(c, "process_sort_index", pid, -1, "sort_index", NULL, sort);
}

static void need_thread(chrome *c, uint32_t pid, uint32_t tid, const char *name)
{
    int fresh = 0;
    if (!trc_map_get(&c->seen_tid, (uint64_t)pid << 32 | tid, &fresh)) { c->oom = 1; return; }
    if (!fresh)
        return;
    meta_ev(c, "thread_name", pid, tid, "name", name, 0);
    meta_ev(c, "thread_sort_index", pid, tid, "sort_index", NULL, (long)tid);
}

static uint32_t core_pid(chrome *c, uint32_t core)
{
    char name[32];
    snprintf(name, sizeof name, "core %u", core);
    need_process(c, core + 1, name, (long)core);
    return core + 1;
}

/* First lane of the track whose last slice ended by start: slices of one
 * thread never overlap, so Perfetto never has to guess at nesting. */
static uint32_t lane_for(chrome *c, uint32_t pid, uint32_t base, uint64_t start, uint64_t end,
                         const char *label)
{
    int fresh = 0;
    uint64_t *v = trc_map_get(&c->lane_idx, (uint64_t)pid << 32 | base, &fresh);
    if (!v) { c->oom = 1; return base; }
    if (fresh) {
        if (c->n_lanes == c->cap_lanes) {
            size_t nc = c->cap_lanes ? c->cap_lanes * 2 : 64;
            lane_set *nl = npu_realloc(c->lanes, nc * sizeof *nl);
            if (!nl) { c->oom = 1; return base; }
            c->lanes = nl;
            c->cap_lanes = nc;
        }
        memset(&c->lanes[c->n_lanes], 0, sizeof(lane_set));
        *v = c->n_lanes++;
    }
    lane_set *ls = &c->lanes[*v];
    unsigned l = 0;
    while (l < LANES - 1 && ls->end[l] > start)
        l++;
    if (end > ls->end[l])
        ls->end[l] = end;
    char name[48];
    if (l == 0)
        snprintf(name, sizeof name, "%s", label);
    else
        snprintf(name, sizeof name, "%s #%u", label, l + 1);
    need_thread(c, pid, base + l, name);
    return base + l;
}

static void x_begin(chrome *c, const char *name, const char *cat, uint32_t pid, uint32_t tid,
                    uint64_t start, uint64_t dur)
{
    sep(c);
    fputs("{\"ph\":\"X\",\"name\":", c->f);
    json_str(c->f, name);
    fprintf(c->f, ",\"cat\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":", cat, pid, tid);
    ts(c, (double)start);
    fputs(",\"dur\":", c->f);
    ts(c, (double)dur);
}

static uint64_t flag_key(const trc_event *e)
{
    return trc_hash64(((uint64_t)e->core << 16 | (uint64_t)e->pipe << 11 | (uint64_t)e->pipe2 << 8 |
                       (e->id & 0xff)) ^ trc_hash64(e->val + 0x9E3779B97F4A7C15ull));
}

static size_t pend_new(chrome *c, uint32_t pid, uint32_t tid, uint64_t t)
{
    size_t i;
    if (c->free_pend) {
        i = c->free_pend - 1;
        c->free_pend = c->pends[i].next_free;
    } else {
        if (c->n_pends == c->cap_pends) {
            size_t nc = c->cap_pends ? c->cap_pends * 2 : 64;
            pend *np = npu_realloc(c->pends, nc * sizeof *np);
            if (!np) { c->oom = 1; return SIZE_MAX; }
            c->pends = np;
            c->cap_pends = nc;
        }
        i = c->n_pends++;
    }
    c->pends[i] = (pend){ pid, tid, t, 0 };
    return i;
}

/* Perfetto binds an "s" to the slice open on its thread at its ts and an
 * "f" with bp=e likewise, and drops an "f" it meets (in ts order) before
 * its "s". So "s" sits half a cycle into the set's one-cycle slice and "f"
 * a quarter cycle before the wait's end, which is after the set. */
static void flow(chrome *c, const pend *set, const pend *wait)
{
    uint64_t id = ++c->flow_id;
    sep(c);
    fprintf(c->f, "{\"ph\":\"s\",\"id\":%llu,\"name\":\"flag\",\"cat\":\"sync\",\"pid\":%u,"
            "\"tid\":%u,\"ts\":", (unsigned long long)id, set->pid, set->tid);
    ts(c, (double)set->t + 0.5);
    fputs("}", c->f);
    sep(c);
    fprintf(c->f, "{\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"name\":\"flag\",\"cat\":\"sync\","
            "\"pid\":%u,\"tid\":%u,\"ts\":", (unsigned long long)id, wait->pid, wait->tid);
    ts(c, (double)wait->t - 0.25);
    fputs("}", c->f);
}

/* A set or a wait arrived: pair it with its other half if that is pending. */
static void flag_pair(chrome *c, const trc_event *e, uint32_t pid, uint32_t tid, uint64_t t)
{
    int is_set = e->kind == TRC_FLAG_SET;
    uint64_t key = flag_key(e);
    trc_map *other = is_set ? &c->pend_wait : &c->pend_set, *mine = is_set ? &c->pend_set : &c->pend_wait;
    uint64_t *o = trc_map_find(other, key);
    pend me = { pid, tid, t, 0 };
    if (o) {
        size_t i = (size_t)*o;
        pend them = c->pends[i];
        trc_map_del(other, key);
        c->pends[i].next_free = c->free_pend;
        c->free_pend = i + 1;
        flow(c, is_set ? &me : &them, is_set ? &them : &me);
        return;
    }
    size_t i = pend_new(c, pid, tid, t);
    if (i == SIZE_MAX)
        return;
    uint64_t *v = trc_map_get(mine, key, NULL);
    if (!v) { c->oom = 1; return; }
    *v = i;
}

/* A stall slice, with the instruction that waited in it ("pc", "waiting")
 * when one followed on its track */
static void chrome_stall(void *ctx, const trc_event *e, const uint64_t *pc)
{
    chrome *c = ctx;
    char label[48];
    uint32_t pid = core_pid(c, e->core);
    snprintf(label, sizeof label, "%s stall", trc_pipe_name(e->pipe));
    uint32_t tid = lane_for(c, pid, 1 + (uint32_t)e->pipe * TID_PIPE + TID_STALL, e->t0, e->t1, label);
    const char *cause = trc_name(c->r, &c->m->causes, e->id);
    x_begin(c, cause, "stall", pid, tid, e->t0, e->t1 - e->t0);
    fputs(",\"args\":{\"cause\":", c->f);
    json_str(c->f, cause);
    if (pc) {
        fprintf(c->f, ",\"pc\":\"0x%llx\",\"waiting\":", (unsigned long long)*pc);
        json_str(c->f, trc_reader_disasm(c->r, *pc));
    }
    fputs("}}", c->f);
}

static void chrome_event(chrome *c, const trc_event *e)
{
    const trc_meta *m = c->m;
    char name[160], label[48];
    uint64_t end = trc_event_end(e);
    if (end > c->last_t)
        c->last_t = end;
    switch (e->kind) {
    case TRC_INSN: {
        own_insn(&c->own, e, chrome_stall, c);   /* the stalls it waited in, first */
        uint32_t pid = core_pid(c, e->core);
        uint32_t tid = lane_for(c, pid, 1 + (uint32_t)e->pipe * TID_PIPE, e->t0, e->t1,
                                trc_pipe_name(e->pipe));
        const char *op = trc_name(c->r, &m->opcodes, e->id);
        x_begin(c, op, "insn", pid, tid, e->t0, e->t1 - e->t0);
        fprintf(c->f, ",\"args\":{\"pc\":\"0x%llx\",\"disasm\":", (unsigned long long)e->addr);
        json_str(c->f, trc_reader_disasm(c->r, e->addr));
        fprintf(c->f, ",\"dispatch\":%llu,\"start\":%llu,\"end\":%llu,\"flags\":%u}}",
                (unsigned long long)e->t2, (unsigned long long)e->t0, (unsigned long long)e->t1,
                e->aux);
        break;
    }
    case TRC_STALL:
        own_stall(&c->own, e, chrome_stall, c);
        break;
    case TRC_FLAG_SET:
    case TRC_FLAG_WAIT: {
        int set = e->kind == TRC_FLAG_SET;
        uint32_t pid = core_pid(c, e->core);
        unsigned on = set ? e->pipe : e->pipe2;
        snprintf(label, sizeof label, "%s sync", trc_pipe_name(on));
        /* a set is drawn one cycle long, and so is a wait that did not block,
         * so that the flow arrows have a slice to bind to */
        uint64_t e1 = set ? e->t0 + 1 : NPU_MAX(e->t1, e->t0 + 1);
        uint32_t tid = lane_for(c, pid, 1 + on * TID_PIPE + TID_SYNC, e->t0, e1, label);
        snprintf(name, sizeof name, "%s %s->%s #%u", set ? "set_flag" : "wait_flag",
                 trc_pipe_name(e->pipe), trc_pipe_name(e->pipe2), e->id);
        x_begin(c, name, "sync", pid, tid, e->t0, e1 - e->t0);
        fprintf(c->f, ",\"args\":{\"seq\":%llu}}", (unsigned long long)e->val);
        flag_pair(c, e, pid, tid, set ? e->t0 : e1);
        break;
    }
    case TRC_CALL:
    case TRC_RET: {
        uint32_t pid = core_pid(c, e->core);
        need_thread(c, pid, TID_CALLS, "calls");
        uint64_t *dp = trc_map_get(&c->depth, e->core, NULL);
        if (!dp) { c->oom = 1; break; }
        if (e->kind == TRC_RET && *dp == 0)
            break;      /* a return from a frame the trace did not see begin */
        sep(c);
        if (e->kind == TRC_CALL) {
            const trc_symbol *s = trc_reader_symbol_exact(c->r, e->addr2);
            if (s)
                snprintf(name, sizeof name, "%s", s->name);
            else
                snprintf(name, sizeof name, "0x%llx", (unsigned long long)e->addr2);
            fputs("{\"ph\":\"B\",\"name\":", c->f);
            json_str(c->f, name);
            fprintf(c->f, ",\"cat\":\"call\",\"pid\":%u,\"tid\":%u,\"ts\":", pid, TID_CALLS);
            ts(c, (double)e->t0);
            fprintf(c->f, ",\"args\":{\"pc\":\"0x%llx\",\"target\":\"0x%llx\"}}",
                    (unsigned long long)e->addr, (unsigned long long)e->addr2);
            (*dp)++;
        } else {
            fprintf(c->f, "{\"ph\":\"E\",\"cat\":\"call\",\"pid\":%u,\"tid\":%u,\"ts\":", pid,
                    TID_CALLS);
            ts(c, (double)e->t0);
            fputs("}", c->f);
            (*dp)--;
        }
        break;
    }
    case TRC_BARRIER: {
        uint32_t pid = core_pid(c, e->core);
        uint32_t tid = lane_for(c, pid, TID_BARRIER, e->t0, e->t1, "barrier");
        x_begin(c, "barrier", "sync", pid, tid, e->t0, e->t1 - e->t0);
        fputs("}", c->f);
        break;
    }
    case TRC_MEM: {
        uint32_t pid = core_pid(c, e->core);
        snprintf(label, sizeof label, "%s mem", trc_pipe_name(e->pipe));
        uint32_t tid = lane_for(c, pid, TID_MEM + (uint32_t)e->pipe * LANES, e->t0, e->t1, label);
        x_begin(c, e->pipe2 ? "write" : "read", "mem", pid, tid, e->t0, e->t1 - e->t0);
        fprintf(c->f, ",\"args\":{\"addr\":\"0x%llx\",\"bytes\":%u}}",
                (unsigned long long)e->addr, e->aux);
        break;
    }
    case TRC_COUNTER: {
        uint32_t pid;
        const char *unit = e->core < m->units.count && m->units.names ? m->units.names[e->core] : NULL;
        int group = -1, inst = -1;
        if (unit)
            group = mem_unit_group(unit, &inst);
        if (group >= 0) {
            /* record -A's slices and channels: one process per kind, a
             * counter track per unit ("slice 03 l2.bytes") */
            pid = PID_UNIT + 99990 + (uint32_t)group;
            need_process(c, pid, group ? "HBM channels" : "L2 slices", 199990 + (long)group);
            snprintf(label, sizeof label, "%s %02d %s", group ? "channel" : "slice", inst,
                     trc_name(c->r, &m->counters, e->id));
        } else if (unit) {
            pid = PID_UNIT + (e->core % 99990);
            need_process(c, pid, unit, 100000 + (long)e->core);
        } else {
            pid = core_pid(c, e->core);
        }
        sep(c);
        fputs("{\"ph\":\"C\",\"name\":", c->f);
        json_str(c->f, group >= 0 ? label : trc_name(c->r, &m->counters, e->id));
        fprintf(c->f, ",\"pid\":%u,\"ts\":", pid);
        ts(c, (double)e->t0);
        fprintf(c->f, ",\"args\":{\"value\":%llu}}", (unsigned long long)e->val);
        break;
    }
    case TRC_HBM: {
        need_process(c, PID_HBM, "HBM", 200000);
        uint32_t tid = 1 + e->core * 8 + e->pipe;
        snprintf(label, sizeof label, "ch %u pc %u", e->core, e->pipe);
        need_thread(c, PID_HBM, tid, label);
        sep(c);
        fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":", c->f);
        json_str(c->f, trc_name(c->r, &m->hbm_commands, e->pipe2));
        fprintf(c->f, ",\"cat\":\"hbm\",\"pid\":%u,\"tid\":%u,\"ts\":", PID_HBM, tid);
        ts(c, (double)e->t0);
        fprintf(c->f, ",\"args\":{\"bank\":%u,\"row\":%llu}}", e->id, (unsigned long long)e->addr);
        break;
    }
    default:
        break;
    }
}

npu_status trc_export_chrome(trc_reader *r, FILE *out, const trc_export_opts *o, npu_diag *d)
{
    chrome c = { .f = out, .r = r, .m = trc_reader_meta(r), .first = 1 };
    double ghz = c.m->clock_ghz > 0 && isfinite(c.m->clock_ghz) ? c.m->clock_ghz : 1.0;
    c.cyc_per_us = ghz * 1000.0;
    /* enough decimals that a quarter cycle (flow binding) stays visible */
    c.dec = (int)NPU_MAX(6.0, ceil(log10(c.cyc_per_us * 4)) + 2);
    if (c.dec > 12)
        c.dec = 12;
    c.scale = pow(10.0, c.dec) / c.cyc_per_us;
    trc_iter *it = trc_iter_new(r, o ? &o->filter : NULL, d);
    if (!it)
        return d ? d->status : NPU_ENOMEM;
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"npusim trace export\","
          "\"kernel\":", out);
    json_str(out, c.m->kernel);
    fprintf(out, ",\"clock_ghz\":%.17g,\"cores\":%u},\"traceEvents\":[", ghz, c.m->n_cores);
    trc_event e;
    while (!c.oom && !c.own.oom && trc_iter_next(it, &e))
        chrome_event(&c, &e);
    c.oom |= c.own.oom;
    own_finish(&c.own, c.oom ? NULL : chrome_stall, &c);
    /* close calls left open */
    for (size_t i = 0; i < c.depth.cap; i++) {
        if (!c.depth.used[i])
            continue;
        for (uint64_t k = 0; k < c.depth.vals[i]; k++) {
            sep(&c);
            fprintf(out, "{\"ph\":\"E\",\"cat\":\"call\",\"pid\":%u,\"tid\":%u,\"ts\":",
                    (uint32_t)c.depth.keys[i] + 1, TID_CALLS);
            ts(&c, (double)c.last_t);
            fputs("}", out);
        }
    }
    fputs("\n]}\n", out);
    npu_status st = trc_iter_error(it, d);
    trc_iter_free(it);
    if (st == NPU_OK && c.oom)
        st = npu_errf(d, NPU_ENOMEM, "chrome export: out of memory");
    if (st == NPU_OK && ferror(out))
        st = npu_errf(d, NPU_EIO, "chrome export: write failed");
    trc_map_free(&c.seen_pid); trc_map_free(&c.seen_tid); trc_map_free(&c.lane_idx);
    trc_map_free(&c.pend_set); trc_map_free(&c.pend_wait); trc_map_free(&c.depth);
    npu_free(c.lanes);
    npu_free(c.pends);
    return st;
}

/* ---- folded stacks ------------------------------------------------------------------ */
#define MAX_DEPTH 64
#define HIST 1024

/* Call paths are interned as a tree: node = (parent, function address). */
typedef struct fnode { uint32_t parent; uint64_t addr; } fnode;
typedef struct fcore {
    uint32_t node;              /* current path (0 = root: no call seen) */
    uint32_t depth;
    uint32_t extra;             /* calls past MAX_DEPTH (not on the path) */
    uint64_t hist_t[HIST];      /* ring of (cycle, node) stack changes */
    uint32_t hist_n[HIST];      /* path after the change */
    uint32_t hist_prev[HIST];   /* path before it */
    uint32_t hist_len, hist_pos;
} fcore;

typedef struct fent {
    uint32_t core, node, id;
    uint8_t pipe, stall, used;
    uint64_t pc, weight;
} fent;

typedef struct folded {
    trc_reader *r;
    fnode *nodes;
    size_t n_nodes, cap_nodes;
    trc_map node_idx;
    trc_map core_idx;
    fcore **cores;
    size_t n_cores, cap_cores;
    fent *ents;
    size_t cap_ents, n_ents;
    owners own;                 /* --stalls: stalls waiting for their instruction */
    int oom;
} folded;

static uint32_t node_child(folded *f, uint32_t parent, uint64_t addr)
{
    uint64_t key = trc_hash64(addr) ^ ((uint64_t)parent * 0x9E3779B97F4A7C15ull);
    int fresh = 0;
    uint64_t *v = trc_map_get(&f->node_idx, key, &fresh);
    if (!v) { f->oom = 1; return parent; }
    if (!fresh && f->nodes[*v].parent == parent && f->nodes[*v].addr == addr)
        return (uint32_t)*v;
    if (!fresh) {
        /* a hash collision: search the nodes (rare) */
        for (size_t i = 1; i < f->n_nodes; i++)
            if (f->nodes[i].parent == parent && f->nodes[i].addr == addr)
                return (uint32_t)i;
    }
    if (f->n_nodes == f->cap_nodes) {
        size_t nc = f->cap_nodes * 2;
        fnode *nn = npu_realloc(f->nodes, nc * sizeof *nn);
        if (!nn) { f->oom = 1; return parent; }
        f->nodes = nn;
        f->cap_nodes = nc;
    }
    f->nodes[f->n_nodes] = (fnode){ parent, addr };
    if (fresh)
        *v = f->n_nodes;
    return (uint32_t)f->n_nodes++;
}

static fcore *core_of(folded *f, uint32_t core)
{
    int fresh = 0;
    uint64_t *v = trc_map_get(&f->core_idx, core, &fresh);
    if (!v) { f->oom = 1; return NULL; }
    if (fresh) {
        if (f->n_cores == f->cap_cores) {
            size_t nc = f->cap_cores ? f->cap_cores * 2 : 32;
            fcore **n = npu_realloc(f->cores, nc * sizeof *n);
            if (!n) { f->oom = 1; trc_map_del(&f->core_idx, core); return NULL; }
            f->cores = n;
            f->cap_cores = nc;
        }
        fcore *c = npu_calloc(1, sizeof *c);
        if (!c) { f->oom = 1; trc_map_del(&f->core_idx, core); return NULL; }
        f->cores[f->n_cores] = c;
        *v = f->n_cores++;
    }
    return f->cores[*v];
}

static void hist_push(fcore *c, uint64_t t, uint32_t prev)
{
    c->hist_t[c->hist_pos] = t;
    c->hist_n[c->hist_pos] = c->node;
    c->hist_prev[c->hist_pos] = prev;
    c->hist_pos = (c->hist_pos + 1) % HIST;
    if (c->hist_len < HIST)
        c->hist_len++;
}

/* The call path of an instruction dispatched at cycle t: the latest change
 * before t. An instruction runs after the scalar unit dispatched it,
 * perhaps after a later call or return, so its stack is the one at its
 * dispatch. A CALL or RET at cycle t applies to dispatches after t: the
 * call instruction itself belongs to the caller, the ret to the callee. */
static uint32_t node_at(const fcore *c, uint64_t t)
{
    uint32_t i = 0;
    for (uint32_t k = 0; k < c->hist_len; k++) {
        i = (c->hist_pos + HIST - 1 - k) % HIST;
        if (c->hist_t[i] < t)
            return c->hist_n[i];
    }
    return c->hist_len ? c->hist_prev[i] : c->node;
}

static void fold_call(folded *f, const trc_event *e)
{
    fcore *c = core_of(f, e->core);
    if (!c)
        return;
    uint32_t prev = c->node;
    if (e->kind == TRC_CALL) {
        if (c->depth >= MAX_DEPTH) {
            c->extra++;
            return;
        }
        if (c->depth == 0 && c->node == 0) {
            /* the first call: root the path at the function it is made
             * from (the kernel), which has no CALL of its own */
            const trc_symbol *fn = trc_reader_function_at(f->r, e->addr);
            if (fn)
                c->node = node_child(f, 0, fn->addr);
        }
        c->node = node_child(f, c->node, e->addr2);
        c->depth++;
    } else {
        if (c->extra) {
            c->extra--;
            return;
        }
        if (c->depth == 0)
            return;     /* a return from a frame the trace did not see begin */
        c->node = f->nodes[c->node].parent;
        c->depth--;
    }
    hist_push(c, e->t0, prev);
}

static int ent_grow(folded *f)
{
    size_t nc = f->cap_ents ? f->cap_ents * 2 : 4096;
    fent *ne = npu_calloc(nc, sizeof *ne);
    if (!ne)
        return -1;
    for (size_t i = 0; i < f->cap_ents; i++) {
        if (!f->ents[i].used)
            continue;
        const fent *x = &f->ents[i];
        uint64_t h = trc_hash64(x->pc ^ ((uint64_t)x->core << 40) ^ ((uint64_t)x->node << 8) ^
                                ((uint64_t)x->id << 20) ^ x->pipe ^ ((uint64_t)x->stall << 63));
        size_t j = h & (nc - 1);
        while (ne[j].used)
            j = (j + 1) & (nc - 1);
        ne[j] = *x;
    }
    npu_free(f->ents);
    f->ents = ne;
    f->cap_ents = nc;
    return 0;
}

static void fold_add(folded *f, uint32_t core, uint32_t node, uint64_t pc, uint8_t pipe, uint32_t id,
                     int stall, uint64_t w)
{
    if ((f->n_ents + 1) * 2 > f->cap_ents && ent_grow(f) != 0) {
        f->oom = 1;
        return;
    }
    uint64_t h = trc_hash64(pc ^ ((uint64_t)core << 40) ^ ((uint64_t)node << 8) ^
                            ((uint64_t)id << 20) ^ pipe ^ ((uint64_t)(stall != 0) << 63));
    size_t j = h & (f->cap_ents - 1);
    while (f->ents[j].used) {
        fent *x = &f->ents[j];
        if (x->core == core && x->node == node && x->pc == pc && x->pipe == pipe && x->id == id &&
            x->stall == (stall != 0)) {
            x->weight += w;
            return;
        }
        j = (j + 1) & (f->cap_ents - 1);
    }
    f->ents[j] = (fent){ core, node, id, pipe, (uint8_t)(stall != 0), 1, pc, w };
    f->n_ents++;
}

/* Append ";name" to b: a ';' or line break inside a name would split the
 * frame, so those become '_'. */
static void add_frame(npu_buf *b, const char *name)
{
    npu_buf_append(b, ";", 1);
    for (const char *p = name; *p; p++) {
        char ch = (*p == ';' || *p == '\n' || *p == '\r') ? '_' : *p;
        npu_buf_append(b, &ch, 1);
    }
}

/* Append the frames of node (root first) to b. */
static void path_str(folded *f, npu_buf *b, uint32_t node, uint64_t *top_addr)
{
    uint32_t chain[MAX_DEPTH];
    int n = 0;
    for (uint32_t x = node; x && n < MAX_DEPTH; x = f->nodes[x].parent)
        chain[n++] = x;
    *top_addr = UINT64_MAX;
    for (int i = n - 1; i >= 0; i--) {
        uint64_t a = f->nodes[chain[i]].addr;
        const trc_symbol *s = trc_reader_symbol_exact(f->r, a);
        if (!s)
            s = trc_reader_function_at(f->r, a);
        if (s) {
            add_frame(b, s->name);
        } else {
            char hex[24];
            snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)a);
            add_frame(b, hex);
        }
        const trc_symbol *fn = trc_reader_function_at(f->r, a);
        *top_addr = fn ? fn->addr : a;
    }
}

typedef struct fline { char *s; uint64_t w; } fline;
static int cmp_fline(const void *a, const void *b)
{
    return strcmp(((const fline *)a)->s, ((const fline *)b)->s);
}

/* --stalls: a stall under its call path at its start, with its waiting
 * instruction's pc for the label frame (UINT64_MAX: none followed) */
static void fold_stall(void *ctx, const trc_event *e, const uint64_t *pc)
{
    folded *f = ctx;
    fcore *c = core_of(f, e->core);
    if (c && e->t1 > e->t0)
        fold_add(f, e->core, node_at(c, e->t0), pc ? *pc : UINT64_MAX, e->pipe, e->id, 1, e->t1 - e->t0);
}

npu_status trc_export_folded(trc_reader *r, FILE *out, int stalls, npu_diag *d)
{
    folded f = { .r = r };
    f.cap_nodes = 64;
    f.nodes = npu_calloc(f.cap_nodes, sizeof *f.nodes);
    if (!f.nodes)
        return npu_errf(d, NPU_ENOMEM, "folded export: out of memory");
    f.n_nodes = 1;  /* node 0 = the root */
    trc_filter filt = TRC_FILTER_ALL;
    /* stalls need the instructions too: a stall is its waiting one's */
    filt.kind_mask = 1u << TRC_CALL | 1u << TRC_RET | 1u << TRC_INSN | (stalls ? 1u << TRC_STALL : 0);
    trc_iter *it = trc_iter_new(r, &filt, d);
    if (!it) {
        npu_free(f.nodes);
        return d ? d->status : NPU_ENOMEM;
    }
    trc_event e;
    while (!f.oom && trc_iter_next(it, &e)) {
        if (e.kind == TRC_CALL || e.kind == TRC_RET) {
            fold_call(&f, &e);
            continue;
        }
        if (e.t1 <= e.t0 && !(stalls && e.kind == TRC_INSN))   /* a zero-cycle instruction may still end a stall's owner search */
            continue;
        fcore *c = core_of(&f, e.core);
        if (!c)
            break;
        if (e.kind == TRC_INSN && stalls)
            own_insn(&f.own, &e, fold_stall, &f);
        else if (e.kind == TRC_INSN)
            fold_add(&f, e.core, node_at(c, e.t2), e.addr, e.pipe, e.id, 0, e.t1 - e.t0);
        else
            own_stall(&f.own, &e, fold_stall, &f);
    }
    f.oom |= f.own.oom;
    own_finish(&f.own, f.oom ? NULL : fold_stall, &f);
    npu_status st = trc_iter_error(it, d);
    trc_iter_free(it);
    const trc_meta *m = trc_reader_meta(r);
    fline *lines = NULL;
    size_t nl = 0;
    if (st == NPU_OK && !f.oom) {
        lines = npu_calloc(f.n_ents ? f.n_ents : 1, sizeof *lines);
        if (!lines)
            f.oom = 1;
    }
    /* Strings per aggregated entry; entries that print the same (several
     * pcs of one label) are merged after sorting. */
    for (size_t i = 0; lines && i < f.cap_ents && !f.oom; i++) {
        const fent *x = &f.ents[i];
        if (!x->used)
            continue;
        npu_buf b = { 0 };
        npu_buf_printf(&b, "core %u", x->core);
        uint64_t top;
        path_str(&f, &b, x->node, &top);
        if (!x->stall) {
            const trc_symbol *fn = trc_reader_function_at(r, x->pc);
            if (fn && fn->addr != top)
                add_frame(&b, fn->name);
            else if (!fn && top == UINT64_MAX)
                npu_buf_printf(&b, ";0x%llx", (unsigned long long)x->pc);
            const trc_symbol *lb = trc_reader_label_at(r, x->pc);
            if (lb)
                add_frame(&b, lb->name);
            add_frame(&b, trc_pipe_name(x->pipe));
            add_frame(&b, trc_name(r, &m->opcodes, x->id));
        } else {
            /* the waiting instruction's function and label, as for its busy cycles */
            if (x->pc != UINT64_MAX) {
                const trc_symbol *fn = trc_reader_function_at(r, x->pc);
                if (fn && fn->addr != top)
                    add_frame(&b, fn->name);
                const trc_symbol *lb = trc_reader_label_at(r, x->pc);
                if (lb)
                    add_frame(&b, lb->name);
            }
            add_frame(&b, trc_pipe_name(x->pipe));
            add_frame(&b, trc_name(r, &m->causes, x->id));
        }
        npu_buf_append(&b, "", 1);
        if (b.oom) {
            npu_buf_free(&b);
            f.oom = 1;
            break;
        }
        lines[nl++] = (fline){ (char *)b.data, x->weight };
    }
    if (lines && !f.oom) {
        qsort(lines, nl, sizeof *lines, cmp_fline);
        for (size_t i = 0; i < nl;) {
            uint64_t w = 0;
            size_t j = i;
            while (j < nl && strcmp(lines[j].s, lines[i].s) == 0)
                w += lines[j++].w;
            fprintf(out, "%s %llu\n", lines[i].s, (unsigned long long)w);
            i = j;
        }
    }
    for (size_t i = 0; i < nl; i++)
        npu_free(lines[i].s);
    npu_free(lines);
    if (st == NPU_OK && f.oom)
        st = npu_errf(d, NPU_ENOMEM, "folded export: out of memory");
    if (st == NPU_OK && ferror(out))
        st = npu_errf(d, NPU_EIO, "folded export: write failed");
    for (size_t i = 0; i < f.n_cores; i++)
        npu_free(f.cores[i]);
    npu_free(f.cores);
    npu_free(f.nodes);
    npu_free(f.ents);
    trc_map_free(&f.node_idx);
    trc_map_free(&f.core_idx);
    return st;
}

/* ---- CSV ------------------------------------------------------------------------------ */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int is_pipe_col(const char *n)
{
    return !strcmp(n, "pipe") || !strcmp(n, "src_pipe") || !strcmp(n, "dst_pipe");
}
static int is_addr_col(const char *n)
{
    return !strcmp(n, "pc") || !strcmp(n, "addr") || !strcmp(n, "target") || !strcmp(n, "return_pc");
}

npu_status trc_export_csv(trc_reader *r, FILE *out, const trc_export_opts *o, npu_diag *d)
{
    /* Columns: every distinct slot name of events.def, in table order. */
    const char *cols[TRC_NKINDS * TRC_NSLOTS];
    size_t nc = 0;
    for (unsigned k = 1; k < TRC_NKINDS; k++)
        for (unsigned s = 0; s < TRC_NSLOTS; s++) {
            const char *n = trc_slot_name(k, (trc_slot)s);
            if (!n[0])
                continue;
            size_t j = 0;
            while (j < nc && strcmp(cols[j], n) != 0)
                j++;
            if (j == nc)
                cols[nc++] = n;
        }
    trc_iter *it = trc_iter_new(r, o ? &o->filter : NULL, d);
    if (!it)
        return d ? d->status : NPU_ENOMEM;
    const trc_meta *m = trc_reader_meta(r);
    fputs("kind", out);
    for (size_t j = 0; j < nc; j++)
        fprintf(out, ",%s", cols[j]);
    fputs(",name,disasm\n", out);
    trc_event e;
    while (trc_iter_next(it, &e)) {
        fputs(trc_kind_name(e.kind), out);
        for (size_t j = 0; j < nc; j++) {
            fputc(',', out);
            for (unsigned s = 0; s < TRC_NSLOTS; s++) {
                if (strcmp(trc_slot_name(e.kind, (trc_slot)s), cols[j]) != 0)
                    continue;
                uint64_t v;
                switch ((trc_slot)s) {
                case TRC_SLOT_CORE: v = e.core; break;
                case TRC_SLOT_PIPE: v = e.pipe; break;
                case TRC_SLOT_PIPE2: v = e.pipe2; break;
                case TRC_SLOT_ID: v = e.id; break;
                case TRC_SLOT_AUX: v = e.aux; break;
                case TRC_SLOT_ADDR: v = e.addr; break;
                case TRC_SLOT_ADDR2: v = e.addr2; break;
                case TRC_SLOT_T0: v = e.t0; break;
                case TRC_SLOT_T1: v = e.t1; break;
                case TRC_SLOT_T2: v = e.t2; break;
                default: v = e.val; break;
                }
                if (is_pipe_col(cols[j]) && e.kind != TRC_HBM)
                    fputs(trc_pipe_name((unsigned)v), out);
                else if (is_addr_col(cols[j]))
                    fprintf(out, "0x%llx", (unsigned long long)v);
                else
                    fprintf(out, "%llu", (unsigned long long)v);
                break;
            }
        }
        fputc(',', out);
        const char *name = "";
        switch (e.kind) {
        case TRC_INSN: name = trc_name(r, &m->opcodes, e.id); break;
        case TRC_STALL: name = trc_name(r, &m->causes, e.id); break;
        case TRC_COUNTER: name = trc_name(r, &m->counters, e.id); break;
        case TRC_HBM: name = trc_name(r, &m->hbm_commands, e.pipe2); break;
        default: break;
        }
        csv_field(out, name);
        fputc(',', out);
        const char *dis = e.kind == TRC_INSN ? trc_reader_disasm(r, e.addr) : NULL;
        csv_field(out, dis ? dis : "");
        fputc('\n', out);
    }
    npu_status st = trc_iter_error(it, d);
    trc_iter_free(it);
    if (st == NPU_OK && ferror(out))
        st = npu_errf(d, NPU_EIO, "csv export: write failed");
    return st;
}

/* ---- to a file -------------------------------------------------------------------------- */
npu_status trc_export_file(trc_reader *r, const char *fmt, const trc_export_opts *o,
                           const char *path, npu_diag *d)
{
    int kind = !strcmp(fmt, "chrome") ? 0 : !strcmp(fmt, "folded") ? 1 : !strcmp(fmt, "csv") ? 2 : -1;
    if (kind < 0)
        return npu_errf(d, NPU_EINVAL, "unknown export format '%s' (chrome, folded, csv)", fmt);
    size_t pl = strlen(path);
    char *tmp = npu_malloc(pl + 32);
    if (!tmp)
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        npu_free(tmp);
        return npu_errf(d, NPU_EIO, "%s: cannot create the output", path);
    }
    npu_status st = kind == 0 ? trc_export_chrome(r, f, o, d)
                  : kind == 1 ? trc_export_folded(r, f, o ? o->stalls : 0, d)
                              : trc_export_csv(r, f, o, d);
    if (fclose(f) != 0 && st == NPU_OK)
        st = npu_errf(d, NPU_EIO, "%s: write failed", tmp);
    if (st == NPU_OK && rename(tmp, path) != 0)
        st = npu_errf(d, NPU_EIO, "%s: cannot rename the output into place", path);
    if (st != NPU_OK)
        remove(tmp);
    npu_free(tmp);
    return st;
}
