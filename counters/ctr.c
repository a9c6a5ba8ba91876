/* ctr.c — the counter table's expansions, values, selection, derived
 * metrics and the stat reports. Pure: no simulator, no I/O; reports are
 * appended to a caller's npu_buf so that the command prints and tests read. */
#include "counters/ctr.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "isa/isa.h"

_Static_assert(ISA_DT_COUNT <= 16, "ctr_machine's per-dtype arrays hold 16 dtypes");

/* ---- the tables -------------------------------------------------------- */

static const ctr_event_info events[CTR_EV__COUNT] = {
#define EV(id, name, unit, kind, src, a1, a2, desc) {name, CTR_UNIT_##unit, CTR_KIND_##kind, desc},
#include "counters/events.def"
#undef EV
};

/* The dtype of the MACS / VELEMS rows (their a1 column), -1 for others. */
static const int ev_dtype[CTR_EV__COUNT] = {
#define EV(id, name, unit, kind, src, a1, a2, desc) [CTR_EV_##id] = DT_##src(a1),
#define DT_MACS(a) ISA_DT_##a
#define DT_VELEMS(a) ISA_DT_##a
#define DT_INSNS(a) -1
#define DT_CYCLES(a) -1
#define DT_CHIP_CYCLES(a) -1
#define DT_BUSY(a) -1
#define DT_PIPE_INSNS(a) -1
#define DT_IDLE(a) -1
#define DT_STALL(a) -1
#define DT_CLASS(a) -1
#define DT_PATH(a) -1
#define DT_GM_RD(a) -1
#define DT_GM_WR(a) -1
#define DT_GM_REQ(a) -1
#define DT_UB_BANK(a) -1
#define DT_UB_BG(a) -1
#define DT_BR(a) -1
#define DT_BR_TAKEN(a) -1
#define DT_SLOAD(a) -1
#define DT_SSTORE(a) -1
#define DT_FLAG_SET(a) -1
#define DT_FLAG_WAIT(a) -1
#define DT_L2(a) -1
#define DT_HBM(a) -1
#include "counters/events.def"
#undef EV
};

static const ctr_group_info groups[CTR_GROUP__COUNT] = {
#define GROUP(id, name, evs, desc) {name, evs, desc},
#include "counters/groups.def"
#undef GROUP
};

static const ctr_metric_info metrics[CTR_M__COUNT] = {
#define METRIC(id, name, anchor, unit, desc) {name, anchor, unit, desc},
#include "counters/metrics.def"
#undef METRIC
};

const ctr_event_info *ctr_event(int id)
{
    return id >= 0 && id < CTR_EV__COUNT ? &events[id] : NULL;
}

int ctr_event_find(const char *name)
{
    for (int i = 0; name && i < CTR_EV__COUNT; i++)
        if (!strcmp(events[i].name, name))
            return i;
    return -1;
}

const char *ctr_unit_name(ctr_unit u)
{
    static const char *const n[] = {"core", "pipe", "l2_slice", "hbm_channel", "chip"};
    return u < CTR_UNIT__COUNT ? n[u] : "?";
}

const char *ctr_kind_name(ctr_kind k)
{
    static const char *const n[] = {"count", "cycles", "bytes", "histogram"};
    return k < CTR_KIND__COUNT ? n[k] : "?";
}

const ctr_group_info *ctr_group(int id)
{
    return id >= 0 && id < CTR_GROUP__COUNT ? &groups[id] : NULL;
}

int ctr_group_find(const char *name)
{
    for (int i = 0; name && i < CTR_GROUP__COUNT; i++)
        if (!strcmp(groups[i].name, name))
            return i;
    return -1;
}

const ctr_metric_info *ctr_metric(int id)
{
    return id >= 0 && id < CTR_M__COUNT ? &metrics[id] : NULL;
}

/* ---- values ------------------------------------------------------------ */

static int unit_inst(const ctr_values *cv, ctr_unit u) { return cv->ninst[u]; }

npu_status ctr_values_init(ctr_values *cv, int ncores, int nslices, int nchans, npu_diag *d)
{
    memset(cv, 0, sizeof *cv);
    if (ncores < 0 || nslices < 0 || nchans < 0)
        return npu_errf(d, NPU_EINVAL, "counters: negative instance count");
    cv->ninst[CTR_UNIT_CORE] = ncores;
    cv->ninst[CTR_UNIT_PIPE] = ncores;
    cv->ninst[CTR_UNIT_L2] = nslices;
    cv->ninst[CTR_UNIT_HBM] = nchans;
    cv->ninst[CTR_UNIT_CHIP] = 1;
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        int n = unit_inst(cv, events[e].unit);
        if (n == 0)
            continue;
        cv->v[e] = npu_calloc((size_t)n, sizeof *cv->v[e]);
        if (events[e].kind == CTR_KIND_HIST)
            cv->h[e] = npu_calloc((size_t)n, sizeof *cv->h[e]);
        if (!cv->v[e] || (events[e].kind == CTR_KIND_HIST && !cv->h[e])) {
            ctr_values_free(cv);
            return npu_errf(d, NPU_ENOMEM, "counters: out of memory for %d instances", n);
        }
    }
    return NPU_OK;
}

void ctr_values_free(ctr_values *cv)
{
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        npu_free(cv->v[e]);
        npu_free(cv->h[e]);
        cv->v[e] = NULL;
        cv->h[e] = NULL;
    }
}

int ctr_ninst(const ctr_values *cv, int ev)
{
    return ev >= 0 && ev < CTR_EV__COUNT && cv->v[ev] ? unit_inst(cv, events[ev].unit) : 0;
}

uint64_t ctr_get(const ctr_values *cv, int ev, int inst)
{
    int n = ctr_ninst(cv, ev);
    if (inst >= 0)
        return inst < n ? cv->v[ev][inst] : 0;
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += cv->v[ev][i];
    return s;
}

/* The src, a1 and a2 columns of each row, as written in events.def: the
 * checks and summaries below select rows by these columns (src family,
 * pipe, stall cause), never by the shape of an event's name. */
typedef struct ev_cols_t { const char *src, *a1, *a2; } ev_cols_t;
static const ev_cols_t ev_cols[CTR_EV__COUNT] = {
#define EV(id, name, unit, kind, src, a1, a2, desc) [CTR_EV_##id] = {#src, #a1, #a2},
#include "counters/events.def"
#undef EV
};

static int ev_src_is(int ev, const char *src) { return !strcmp(ev_cols[ev].src, src); }

/* Stalls a pipe spends outside its busy time: bank and (off S) memory
 * stalls stretch an executing instruction, so they are part of busy. */
static int stall_outside_busy(int ev)
{
    const ev_cols_t *c = &ev_cols[ev];
    if (!ev_src_is(ev, "STALL") || !strcmp(c->a2, "BANK"))
        return 0;
    if (!strcmp(c->a2, "MEMORY"))
        return !strcmp(c->a1, "S");
    return 1;
}

npu_status ctr_check(const ctr_values *cv, npu_diag *d)
{
    int nc = cv->ninst[CTR_UNIT_CORE];
    uint64_t maxc = 0;
    for (int c = 0; c < nc; c++) {
        uint64_t cyc = ctr_get(cv, CTR_EV_CYCLES, c);
        if (cyc > maxc)
            maxc = cyc;
        for (int e = 0; e < CTR_EV__COUNT; e++) {
            if (!ev_src_is(e, "BUSY"))
                continue;
            uint64_t used = ctr_get(cv, e, c);
            for (int f = 0; f < CTR_EV__COUNT; f++)
                if (stall_outside_busy(f) && !strcmp(ev_cols[f].a1, ev_cols[e].a1))
                    used += ctr_get(cv, f, c);
            if (used > cyc)
                return npu_errf(d, NPU_EINVAL,
                                "counters: core %d %s + stalls outside busy = %" PRIu64
                                " > %" PRIu64 " cycles",
                                c, events[e].name, used, cyc);
        }
    }
    if (cv->have[CTR_EV_CHIP_CYCLES] && nc && ctr_get(cv, CTR_EV_CHIP_CYCLES, 0) != maxc)
        return npu_errf(d, NPU_EINVAL, "counters: chip.cycles %" PRIu64 " != max core cycles %" PRIu64,
                        ctr_get(cv, CTR_EV_CHIP_CYCLES, 0), maxc);
    return NPU_OK;
}

/* ---- selection --------------------------------------------------------- */

static const char *event_name(size_t i, void *ctx)
{
    (void)ctx;
    return events[i].name;
}

/* Turn on every event matching one comma-separated item list; 0 or the
 * index in list of the first item matching nothing (+1), in *bad. */
static int select_list(ctr_sel *s, const char *list, char *bad, size_t nbad)
{
    const char *p = list;
    while (*p) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        char item[128];
        if (len == 0 || len >= sizeof item) {
            snprintf(bad, nbad, "%.*s", (int)NPU_MIN(len, 100), p);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = 0;
        int hit = 0;
        for (int e = 0; e < CTR_EV__COUNT; e++)
            if (!fnmatch(item, events[e].name, 0)) {
                s->on[e] = 1;
                hit = 1;
            }
        if (!hit) {
            snprintf(bad, nbad, "%s", item);
            return -1;
        }
        p += len + (q ? 1 : 0);
        if (q && !*p) {
            snprintf(bad, nbad, "%s", "");
            return -1;
        }
    }
    return 0;
}

npu_status ctr_select(ctr_sel *s, const char *evs, const char *group, npu_diag *d)
{
    memset(s, 0, sizeof *s);
    if (group) {
        int g = ctr_group_find(group);
        if (g < 0) {
            npu_buf b = {0};
            for (int i = 0; i < CTR_GROUP__COUNT; i++)
                npu_buf_printf(&b, "%s%s", i ? ", " : "", groups[i].name);
            npu_status st = npu_errf(d, NPU_EINVAL, "-M %s: no such group (groups: %s)", group,
                                     b.data ? (const char *)b.data : "");
            npu_buf_free(&b);
            return st;
        }
        char bad[128];
        select_list(s, groups[g].events, bad, sizeof bad);
    }
    if (evs) {
        char bad[128];
        if (select_list(s, evs, bad, sizeof bad)) {
            if (!*bad)
                return npu_errf(d, NPU_EINVAL, "-e '%s': empty event name", evs);
            char sug[256];
            npu_suggest(bad, CTR_EV__COUNT, event_name, NULL, NULL, sug, sizeof sug);
            return npu_errf(d, NPU_EINVAL, "-e: unknown event '%s'%s (see npusim stat --list)", bad, sug);
        }
    }
    if (!evs && !group) {
        char bad[128];
        select_list(s, groups[CTR_GROUP_DEFAULT].events, bad, sizeof bad);
    }
    return NPU_OK;
}

/* ---- derived metrics ---------------------------------------------------- */

static int matches_any(const char *globs, const char *name)
{
    const char *p = globs;
    while (*p) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        char item[128];
        if (len && len < sizeof item) {
            memcpy(item, p, len);
            item[len] = 0;
            if (!fnmatch(item, name, 0))
                return 1;
        }
        p += len + (q ? 1 : 0);
    }
    return 0;
}

static double secs_of(const ctr_machine *m, uint64_t cycles)
{
    double ghz = m && m->clock_ghz > 0 ? m->clock_ghz : 1.0;
    return (double)cycles / (ghz * 1e9);
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

/* The histogram mean over instances (inst -1) or of one. */
static double hist_mean(const ctr_values *cv, int ev, int inst)
{
    uint64_t n = 0, s = 0;
    int ni = ctr_ninst(cv, ev);
    for (int i = 0; i < ni && cv->h[ev]; i++)
        if (inst < 0 || inst == i) {
            n += cv->h[ev][i].n;
            s += cv->h[ev][i].sum;
        }
    return ratio((double)s, (double)n);
}

int ctr_metric_row(const ctr_values *cv, const ctr_machine *m, uint64_t cycles, int ev, int inst,
                   double *val)
{
    if (ev < 0 || ev >= CTR_EV__COUNT || !cv->have[ev])
        return -1;
    const char *name = events[ev].name;
    int id = -1;
    for (int k = 0; k < CTR_M__COUNT && id < 0; k++)
        if (metrics[k].anchor[0] && matches_any(metrics[k].anchor, name))
            id = k;
    if (id < 0)
        return -1;
    double v = (double)ctr_get(cv, ev, inst);
    /* the core's own cycles for core/pipe rows (-1: summed like the value) */
    double ccyc = (double)ctr_get(cv, CTR_EV_CYCLES, inst);
    double secs = secs_of(m, cycles);
    switch (id) {
    case CTR_M_IPC: *val = ratio(v, ccyc); break;
    case CTR_M_PIPE_UTIL: case CTR_M_STALL_PCT: *val = 100.0 * ratio(v, ccyc); break;
    case CTR_M_MAC_RATE: *val = ratio(2.0 * v, secs) / 1e12; break;
    case CTR_M_VEC_RATE: *val = ratio(v, secs) / 1e9; break;
    case CTR_M_BW: *val = ratio(v, secs) / 1e9; break;
    case CTR_M_BR_TAKEN: *val = 100.0 * ratio(v, (double)ctr_get(cv, CTR_EV_BR, inst)); break;
    case CTR_M_L2_HIT:
        *val = 100.0 * ratio(v, v + (double)ctr_get(cv, CTR_EV_L2_MISSES, inst));
        break;
    case CTR_M_L2_MERGE:
        *val = 100.0 * ratio(v, (double)ctr_get(cv, CTR_EV_L2_MISSES, inst));
        break;
    case CTR_M_ROW_HIT:
        *val = 100.0 * ratio(v, v + (double)ctr_get(cv, CTR_EV_HBM_ROW_MISSES, inst) +
                                    (double)ctr_get(cv, CTR_EV_HBM_ROW_CONFLICTS, inst));
        break;
    case CTR_M_HBM_LAT: *val = hist_mean(cv, ev, inst); break;
    default: return -1;
    }
    return id;
}

/* Peak of one rate table at the dtype that did the most work. */
static double dominant_peak(const ctr_values *cv, const double *rate, int macs, int *dt_out)
{
    uint64_t best = 0;
    int bdt = -1;
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        int dt = ev_dtype[e];
        if (dt < 0 || !cv->have[e])
            continue;
        if (!ev_src_is(e, macs ? "MACS" : "VELEMS"))
            continue;
        uint64_t v = ctr_get(cv, e, -1);
        if (v > best) {
            best = v;
            bdt = dt;
        }
    }
    if (dt_out)
        *dt_out = bdt;
    return bdt >= 0 ? rate[bdt] : 0.0;
}

void ctr_summarize(const ctr_values *cv, const ctr_machine *m, ctr_summary *o)
{
    memset(o, 0, sizeof *o);
    uint64_t cycles = ctr_get(cv, CTR_EV_CHIP_CYCLES, -1);
    double secs = secs_of(m, cycles);
    double macs = 0, velems = 0;
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        if (ev_dtype[e] < 0 || !cv->have[e])
            continue;
        if (ev_src_is(e, "MACS"))
            macs += (double)ctr_get(cv, e, -1);
        else
            velems += (double)ctr_get(cv, e, -1);
    }
    double gm = (double)(ctr_get(cv, CTR_EV_GM_RD, -1) + ctr_get(cv, CTR_EV_GM_WR, -1));
    double ops = 2.0 * macs + velems;
    int nc = m && m->ncores > 0 ? m->ncores : 1;
    double ghz = m && m->clock_ghz > 0 ? m->clock_ghz : 1.0;
#define SET(id, x) (o->val[CTR_M_##id] = (x), o->have[CTR_M_##id] = 1)
    SET(TIME, secs * 1e6);
    SET(TFLOPS, ratio(2.0 * macs, secs) / 1e12);
    SET(GOPS, ratio(velems, secs) / 1e9);
    SET(GM_BW, ratio(gm, secs) / 1e9);
    /* peak ops of the launch: the cube at its dominant dtype when the kernel
     * used the cube, else the vector unit at its dominant dtype */
    double peak_ops = 0;
    if (m && macs > 0) {
        double r = dominant_peak(cv, m->cube_macs_per_cycle, 1, NULL);
        peak_ops = 2.0 * r * nc * ghz * 1e9;
        SET(CUBE_UTIL, 100.0 * ratio(2.0 * macs / secs, peak_ops));
    } else if (m && velems > 0) {
        double r = dominant_peak(cv, m->vec_elems_per_cycle, 0, NULL);
        peak_ops = r * nc * ghz * 1e9;
    }
    /* GM utilisation is against the port every GM request goes through:
     * with an L2 that is the L2 (hits never reach the HBM, so GM bytes can
     * exceed the HBM's peak); without one, the HBM or the fixed port. The
     * HBM's own utilisation counts only the bytes that reached it. */
    double peak_bw = m ? m->gm_peak_Bps : 0;
    double port_bw = m && m->l2_peak_Bps > 0 ? m->l2_peak_Bps : peak_bw;
    if (port_bw > 0)
        SET(GM_UTIL, 100.0 * ratio(gm / (secs > 0 ? secs : 1), port_bw));
    int have_hbm = cv->have[CTR_EV_HBM_BYTES_READ] && cv->have[CTR_EV_HBM_BYTES_WRITTEN];
    double hbm = have_hbm ? (double)(ctr_get(cv, CTR_EV_HBM_BYTES_READ, -1) +
                                     ctr_get(cv, CTR_EV_HBM_BYTES_WRITTEN, -1))
                          : 0;
    if (peak_bw > 0 && have_hbm)
        SET(HBM_UTIL, 100.0 * ratio(hbm / (secs > 0 ? secs : 1), peak_bw));
    /* The roofs (docs/stat.md), a hierarchical roofline as Nsight Compute
     * draws one: each memory level a roof of its own bytes over its own
     * peak. With an L2 (the HBM model), every GM byte goes through the L2
     * and only its misses and write-backs reach the HBM: GM bytes against
     * the L2's peak, HBM bytes against the HBM's. Without one, GM bytes
     * against the HBM's or the fixed port's peak. */
    struct roof_level { const char *name; double bytes, bw; } lv[2];
    int nlv = 0;
    if (m && m->l2_peak_Bps > 0) {
        lv[nlv++] = (struct roof_level){ "l2", gm, m->l2_peak_Bps };
        if (have_hbm && peak_bw > 0) lv[nlv++] = (struct roof_level){ "hbm", hbm, peak_bw };
    } else if (peak_bw > 0) {
        lv[nlv++] = (struct roof_level){ m && m->fixed_port ? "port" : "hbm", gm, peak_bw };
    }
    if (gm > 0)
        SET(AI, ops / gm);
    if (m && m->l2_peak_Bps > 0 && have_hbm && hbm > 0 && ops > 0)
        SET(HBM_AI, ops / hbm);
    if (peak_ops > 0 && peak_bw > 0)
        SET(RIDGE, peak_ops / peak_bw);
    if (peak_ops > 0 && m && m->l2_peak_Bps > 0)
        SET(L2_RIDGE, peak_ops / m->l2_peak_Bps);
    /* the verdict: attainable = min(peak ops, each level's intensity x its
     * peak); under half of it, no roof limits the kernel: latency-bound;
     * else the lowest roof decides (compute or memory, and which memory).
     * A kernel with no ops is memory-bound if some level runs at half its
     * peak or more. */
    if (secs > 0 && (ops > 0 || gm > 0) && nlv > 0) {
        const char *v, *roof = NULL;
        if (ops <= 0 || peak_ops <= 0) {
            double best = -1;
            for (int i = 0; i < nlv; i++) {
                double u = lv[i].bytes / secs / lv[i].bw;
                if (u > best) { best = u; roof = lv[i].name; }
            }
            v = best >= 0.5 ? "memory-bound" : "latency-bound";
        } else {
            double achieved_ops = ops / secs, attainable = peak_ops;
            roof = "compute";
            for (int i = 0; i < nlv; i++) {
                double a = lv[i].bytes > 0 ? ops / lv[i].bytes * lv[i].bw : INFINITY;
                if (a < attainable) { attainable = a; roof = lv[i].name; }
            }
            if (achieved_ops < 0.5 * attainable) v = "latency-bound";
            else v = !strcmp(roof, "compute") ? "compute-bound" : "memory-bound";
        }
        o->verdict = v;
        o->have[CTR_M_VERDICT] = 1;
        o->roof = roof;
        o->have[CTR_M_ROOF] = 1;
    }
#undef SET
}

/* The text of a metric that is a word (the verdict, the roof), else NULL. */
static const char *metric_str(const ctr_summary *s, int k)
{
    return k == CTR_M_VERDICT ? s->verdict : k == CTR_M_ROOF ? s->roof : NULL;
}

/* ---- formatting helpers -------------------------------------------------- */

void ctr_thousands(uint64_t v, char *buf, size_t n)
{
    char raw[32];
    snprintf(raw, sizeof raw, "%" PRIu64, v);
    size_t len = strlen(raw), o = 0;
    for (size_t i = 0; i < len && o + 2 < n; i++) {
        if (i && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = 0;
}

static void json_str(npu_buf *b, const char *s)
{
    npu_buf_append(b, "\"", 1);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            npu_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            npu_buf_printf(b, "\\u%04x", c);
        else
            npu_buf_append(b, s, 1);
    }
    npu_buf_append(b, "\"", 1);
}

/* A JSON number that parses back exactly and prints the same everywhere. */
static void json_num(npu_buf *b, double v)
{
    if (!isfinite(v))
        v = 0;
    npu_buf_printf(b, "%.6g", v);
}

static const char *inst_word(ctr_unit u)
{
    switch (u) {
    case CTR_UNIT_L2: return "slice";
    case CTR_UNIT_HBM: return "chan";
    case CTR_UNIT_CHIP: return "chip";
    default: return "core";
    }
}

/* Which instances a row set of event e prints: -1 (the sum) or each. */
static int per_instance(const ctr_report_opts *o, int e)
{
    if (o->aggr == CTR_AGGR_NONE)
        return events[e].unit != CTR_UNIT_CHIP;
    if (o->aggr == CTR_AGGR_PER_CORE)
        return events[e].unit == CTR_UNIT_CORE || events[e].unit == CTR_UNIT_PIPE;
    return 0;
}

/* One row: text or CSV. */
static void row(npu_buf *b, const ctr_values *cv, const ctr_machine *m, uint64_t cycles, int e,
                int inst, const ctr_report_opts *o, const char *tprefix)
{
    char inst_s[32];
    if (inst < 0)
        snprintf(inst_s, sizeof inst_s, "%s", events[e].unit == CTR_UNIT_CHIP ? "chip" : "total");
    else
        snprintf(inst_s, sizeof inst_s, "%s%d", inst_word(events[e].unit), inst);
    double mv = 0;
    int mid = cv->have[e] ? ctr_metric_row(cv, m, cycles, e, inst, &mv) : -1;
    if (o->sep) {
        const char *s = o->sep;
        if (tprefix)
            npu_buf_printf(b, "%s%s", tprefix, s);
        npu_buf_printf(b, "%s%s", inst_s, s);
        if (cv->have[e])
            npu_buf_printf(b, "%" PRIu64, ctr_get(cv, e, inst));
        else
            npu_buf_printf(b, "<not counted>");
        npu_buf_printf(b, "%s%s%s%s%s", s, ctr_kind_name(events[e].kind), s, events[e].name, s);
        if (mid >= 0)
            npu_buf_printf(b, "%.4f%s%s%s%s\n", mv, s, metrics[mid].unit, s, metrics[mid].name);
        else
            npu_buf_printf(b, "%s%s\n", s, s);
        return;
    }
    if (tprefix)
        npu_buf_printf(b, "%14s ", tprefix);
    if (per_instance(o, e))
        npu_buf_printf(b, "%-9s", inst_s);
    else if (o->aggr != CTR_AGGR_ALL)
        npu_buf_printf(b, "%-9s", "");
    char num[40];
    if (cv->have[e])
        ctr_thousands(ctr_get(cv, e, inst), num, sizeof num);
    else
        snprintf(num, sizeof num, "<not counted>");
    if (mid >= 0 && !strcmp(metrics[mid].unit, "%"))
        npu_buf_printf(b, "%20s      %-32s #  %10.2f %% %s\n", num, events[e].name, mv,
                       metrics[mid].name);
    else if (mid >= 0)
        npu_buf_printf(b, "%20s      %-32s #  %10.2f %s\n", num, events[e].name, mv,
                       metrics[mid].unit);
    else
        npu_buf_printf(b, "%20s      %s\n", num, events[e].name);
}

static void rows(npu_buf *b, const ctr_values *cv, const ctr_machine *m, uint64_t cycles,
                 const ctr_sel *sel, const ctr_report_opts *o, const char *tprefix)
{
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        if (!sel->on[e])
            continue;
        int ni = ctr_ninst(cv, e);
        if (per_instance(o, e) && ni > 0 && cv->have[e]) {
            for (int i = 0; i < ni; i++)
                row(b, cv, m, cycles, e, i, o, tprefix);
        } else {
            row(b, cv, m, cycles, e, -1, o, tprefix);
        }
    }
}

static void json_event(npu_buf *b, const ctr_values *cv, const ctr_machine *m, uint64_t cycles,
                       int e, const ctr_report_opts *o, int extra)
{
    json_str(b, events[e].name);
    npu_buf_printf(b, ": {");
    if (extra)
        npu_buf_printf(b, "\"unit\": \"%s\", \"kind\": \"%s\", ", ctr_unit_name(events[e].unit),
                       ctr_kind_name(events[e].kind));
    npu_buf_printf(b, "\"value\": %" PRIu64, ctr_get(cv, e, -1));
    int ni = ctr_ninst(cv, e);
    if (per_instance(o, e) && ni > 0) {
        npu_buf_printf(b, ", \"per_instance\": [");
        for (int i = 0; i < ni; i++)
            npu_buf_printf(b, "%s%" PRIu64, i ? ", " : "", cv->v[e][i]);
        npu_buf_printf(b, "]");
    }
    if (extra && cv->h[e]) {
        ctr_hist_sum t = {0};
        t.min = UINT64_MAX;
        for (int i = 0; i < ni; i++) {
            const ctr_hist_sum *h = &cv->h[e][i];
            if (!h->n)
                continue;
            t.n += h->n;
            t.sum += h->sum;
            t.min = NPU_MIN(t.min, h->min);
            t.max = NPU_MAX(t.max, h->max);
            /* percentiles of the union are not the max of the parts; the
             * worst channel's is what a reader looks for */
            t.p50 = NPU_MAX(t.p50, h->p50);
            t.p90 = NPU_MAX(t.p90, h->p90);
            t.p99 = NPU_MAX(t.p99, h->p99);
        }
        if (!t.n)
            t.min = 0;
        npu_buf_printf(b, ", \"histogram\": {\"n\": %" PRIu64 ", \"sum\": %" PRIu64 ", \"min\": %" PRIu64
                          ", \"max\": %" PRIu64 ", \"p50_worst\": %" PRIu64 ", \"p90_worst\": %" PRIu64
                          ", \"p99_worst\": %" PRIu64 "}",
                       t.n, t.sum, t.min, t.max, t.p50, t.p90, t.p99);
    }
    double mv;
    int mid = ctr_metric_row(cv, m, cycles, e, -1, &mv);
    if (mid >= 0) {
        npu_buf_printf(b, ", \"metric\": {\"name\": \"%s\", \"value\": ", metrics[mid].name);
        json_num(b, mv);
        npu_buf_printf(b, ", \"unit\": \"%s\"}", metrics[mid].unit);
    }
    npu_buf_printf(b, "}");
}

void ctr_report(const ctr_values *cv, const ctr_machine *m, const ctr_sel *sel,
                const ctr_report_opts *o, npu_buf *b)
{
    uint64_t cycles = ctr_get(cv, CTR_EV_CHIP_CYCLES, -1);
    ctr_summary sum;
    ctr_summarize(cv, m, &sum);
    int ncores = cv->ninst[CTR_UNIT_CORE];
    double ghz = m && m->clock_ghz > 0 ? m->clock_ghz : 1.0;
    if (o->json) {
        npu_buf_printf(b, "{\"kernel\": ");
        json_str(b, o->title ? o->title : "");
        npu_buf_printf(b, ", \"mode\": \"%s\", \"cores\": %d, \"clock_ghz\": ", o->mode ? o->mode : "perf",
                       ncores);
        json_num(b, ghz);
        npu_buf_printf(b, ", \"cycles\": %" PRIu64 ",\n \"events\": {", cycles);
        int first = 1;
        for (int e = 0; e < CTR_EV__COUNT; e++) {
            if (!sel->on[e] || !cv->have[e])
                continue;
            npu_buf_printf(b, "%s\n  ", first ? "" : ",");
            first = 0;
            json_event(b, cv, m, cycles, e, o, 1);
        }
        npu_buf_printf(b, "},\n \"metrics\": {");
        first = 1;
        for (int k = 0; k < CTR_M__COUNT; k++) {
            if (!sum.have[k])
                continue;
            npu_buf_printf(b, "%s\n  \"%s\": ", first ? "" : ",", metrics[k].name);
            first = 0;
            if (metric_str(&sum, k))
                json_str(b, metric_str(&sum, k));
            else
                json_num(b, sum.val[k]);
        }
        npu_buf_printf(b, "}}\n");
        return;
    }
    if (o->sep) {
        rows(b, cv, m, cycles, sel, o, NULL);
        for (int k = 0; k < CTR_M__COUNT; k++) {
            if (!sum.have[k])
                continue;
            const char *s = o->sep;
            if (metric_str(&sum, k))
                npu_buf_printf(b, "summary%s%s%s%s%s%s%s%s\n", s, s, s, s, metric_str(&sum, k), s, s,
                               metrics[k].name);
            else
                npu_buf_printf(b, "summary%s%s%s%s%.4f%s%s%s%s\n", s, s, s, s, sum.val[k], s,
                               metrics[k].unit, s, metrics[k].name);
        }
        return;
    }
    npu_buf_printf(b, "\n Performance counter stats for '%s' (%s mode, %d core%s):\n\n",
                   o->title ? o->title : "?", o->mode ? o->mode : "perf", ncores,
                   ncores == 1 ? "" : "s");
    rows(b, cv, m, cycles, sel, o, NULL);
    char cyc[40];
    ctr_thousands(cycles, cyc, sizeof cyc);
    npu_buf_printf(b, "\n %20.3f us time elapsed (%s cycles at %.3f GHz, simulated)\n\n",
                   sum.val[CTR_M_TIME], cyc, ghz);
    for (int k = 0; k < CTR_M__COUNT; k++) {
        if (!sum.have[k] || k == CTR_M_TIME)
            continue;
        if (metric_str(&sum, k))
            npu_buf_printf(b, " %20s      %s  # %s\n", metric_str(&sum, k), metrics[k].name, metrics[k].desc);
        else
            npu_buf_printf(b, " %20.3f      %s %s\n", sum.val[k], metrics[k].unit, metrics[k].name);
    }
    npu_buf_printf(b, "\n");
}

/* ---- intervals ------------------------------------------------------------ */

npu_status ctr_intervals_grow(ctr_intervals *iv, size_t bin, size_t max_bins, npu_diag *d)
{
    if (bin < iv->nbins)
        return NPU_OK;
    if (bin >= max_bins)
        return npu_errf(d, NPU_EINVAL,
                        "-I %" PRIu64 ": the run needs more than %zu intervals; choose a larger interval",
                        iv->width, max_bins);
    size_t nb = iv->nbins ? iv->nbins : 16;
    while (nb <= bin)
        nb *= 2;
    if (nb > max_bins)
        nb = max_bins;
    size_t per = (size_t)CTR_EV__COUNT * (size_t)iv->ncores;
    uint64_t *v = npu_realloc(iv->v, nb * per * sizeof *v);
    if (!v)
        return npu_errf(d, NPU_ENOMEM, "-I: out of memory for %zu intervals", nb);
    memset(v + iv->nbins * per, 0, (nb - iv->nbins) * per * sizeof *v);
    iv->v = v;
    if (iv->mv) {
        size_t mper = (size_t)iv->nmslot * (size_t)iv->nmem;
        uint64_t *mv = npu_realloc(iv->mv, nb * mper * sizeof *mv);
        if (!mv)
            return npu_errf(d, NPU_ENOMEM, "-I: out of memory for %zu intervals", nb);
        memset(mv + iv->nbins * mper, 0, (nb - iv->nbins) * mper * sizeof *mv);
        iv->mv = mv;
    }
    iv->nbins = nb;
    return NPU_OK;
}

void ctr_intervals_add(ctr_intervals *iv, int ev, int core, uint64_t cycle, uint64_t n)
{
    size_t bin = (size_t)(cycle / iv->width);
    if (!n || bin >= iv->nbins || core < 0 || core >= iv->ncores)
        return;
    iv->v[(bin * CTR_EV__COUNT + (size_t)ev) * (size_t)iv->ncores + (size_t)core] += n;
}

void ctr_intervals_add_span(ctr_intervals *iv, int ev, int core, uint64_t start, uint64_t end)
{
    while (start < end) {
        uint64_t wend = (start / iv->width + 1) * iv->width;
        uint64_t e = NPU_MIN(end, wend);
        ctr_intervals_add(iv, ev, core, start, e - start);
        start = e;
    }
}

void ctr_intervals_free(ctr_intervals *iv)
{
    npu_free(iv->v);
    npu_free(iv->mv);
    iv->v = iv->mv = NULL;
    iv->nbins = 0;
}

npu_status ctr_intervals_mem_init(ctr_intervals *iv, int nslices, int nchans, npu_diag *d)
{
    if (iv->mv)
        return NPU_OK;
    iv->nslices = NPU_MAX(nslices, 0);
    iv->nchans = NPU_MAX(nchans, 0);
    iv->nmem = NPU_MAX(1, NPU_MAX(iv->nslices, iv->nchans));
    iv->nmslot = 0;
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        int mem = (events[e].unit == CTR_UNIT_L2 && iv->nslices) ||
                  (events[e].unit == CTR_UNIT_HBM && iv->nchans);
        iv->mslot[e] = (int8_t)(mem ? iv->nmslot : -1);
        if (mem) {
            iv->nmslot += events[e].kind == CTR_KIND_HIST ? 2 : 1;
            iv->binned[e] = 1;
        }
    }
    size_t n = NPU_MAX(iv->nbins, (size_t)1) * (size_t)iv->nmslot * (size_t)iv->nmem;
    iv->mv = npu_calloc(n, sizeof *iv->mv);
    if (!iv->mv)
        return npu_errf(d, NPU_ENOMEM, "-I: out of memory for the L2 and HBM windows");
    return NPU_OK;
}

void ctr_intervals_add_mem_slot(ctr_intervals *iv, int ev, int slot, int inst, size_t bin, uint64_t n)
{
    if (!n || !iv->mv || bin >= iv->nbins || ev < 0 || ev >= CTR_EV__COUNT || iv->mslot[ev] < 0 ||
        inst < 0 || inst >= iv->nmem || slot < 0 || slot > (events[ev].kind == CTR_KIND_HIST))
        return;
    iv->mv[(bin * (size_t)iv->nmslot + (size_t)iv->mslot[ev] + (size_t)slot) * (size_t)iv->nmem +
           (size_t)inst] += n;
}

size_t ctr_intervals_used(const ctr_intervals *iv)
{
    /* windows past the last core's end are empty: stop at the last one used */
    size_t used = 0;
    for (size_t k = 0; k < iv->nbins; k++)
        for (int c = 0; c < iv->ncores; c++)
            if (iv->v[(k * CTR_EV__COUNT + CTR_EV_CYCLES) * (size_t)iv->ncores + (size_t)c])
                used = k + 1;
    return used;
}

int ctr_intervals_values_init(const ctr_intervals *iv, ctr_values *cv)
{
    return ctr_values_init(cv, iv->ncores, iv->mv ? iv->nslices : 0, iv->mv ? iv->nchans : 0, NULL) != NPU_OK;
}

uint64_t ctr_intervals_window_len(const ctr_intervals *iv, size_t k)
{
    uint64_t wlen = 0;
    if (k < iv->nbins)
        for (int c = 0; c < iv->ncores; c++)
            wlen = NPU_MAX(wlen, iv->v[(k * CTR_EV__COUNT + CTR_EV_CYCLES) * (size_t)iv->ncores + (size_t)c]);
    return wlen;
}

uint64_t ctr_intervals_window(const ctr_intervals *iv, size_t k, ctr_values *cv)
{
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        cv->have[e] = iv->binned[e];
        if (iv->mv && iv->mslot[e] >= 0) {
            int ni = ctr_ninst(cv, e);
            const uint64_t *row = iv->mv + (k * (size_t)iv->nmslot + (size_t)iv->mslot[e]) * (size_t)iv->nmem;
            for (int i = 0; i < ni; i++) {
                cv->v[e][i] = row[i];
                if (cv->h[e])   /* count and sum only: the window's mean */
                    cv->h[e][i] = (ctr_hist_sum){ .n = row[i], .sum = row[(size_t)iv->nmem + (size_t)i] };
            }
            continue;
        }
        if (events[e].unit != CTR_UNIT_CORE && events[e].unit != CTR_UNIT_PIPE)
            continue;
        for (int c = 0; c < iv->ncores; c++)
            cv->v[e][c] = iv->v[(k * CTR_EV__COUNT + (size_t)e) * (size_t)iv->ncores + (size_t)c];
    }
    uint64_t wlen = ctr_intervals_window_len(iv, k);
    cv->v[CTR_EV_CHIP_CYCLES][0] = wlen;
    cv->have[CTR_EV_CHIP_CYCLES] = 1;
    return wlen;
}

void ctr_report_intervals(const ctr_intervals *iv, const ctr_machine *m, const ctr_sel *sel,
                          const ctr_report_opts *o, npu_buf *b)
{
    ctr_values cv;
    if (ctr_intervals_values_init(iv, &cv)) {
        b->oom = 1;
        return;
    }
    size_t used = ctr_intervals_used(iv);
    ctr_sel s2 = *sel;
    s2.on[CTR_EV_CHIP_CYCLES] = 0;   /* the window's length: the time column */
    if (o->json)
        npu_buf_printf(b, "{\"interval_cycles\": %" PRIu64 ", \"intervals\": [", iv->width);
    else if (!o->sep)
        npu_buf_printf(b, "#%13s %s%20s      %s\n", "cycle", o->aggr != CTR_AGGR_ALL ? "instance " : "",
                       "counts", "event");
    for (size_t k = 0; k < used; k++) {
        uint64_t wlen = ctr_intervals_window(iv, k, &cv);
        uint64_t endc = k * iv->width + wlen;
        if (o->json) {
            npu_buf_printf(b, "%s\n  {\"end_cycle\": %" PRIu64 ", \"events\": {", k ? "," : "", endc);
            int first = 1;
            for (int e = 0; e < CTR_EV__COUNT; e++) {
                if (!s2.on[e] || !cv.have[e])
                    continue;
                npu_buf_printf(b, "%s", first ? "" : ", ");
                first = 0;
                json_event(b, &cv, m, wlen, e, o, 0);
            }
            npu_buf_printf(b, "}}");
            continue;
        }
        char t[32];
        snprintf(t, sizeof t, "%" PRIu64, endc);
        rows(b, &cv, m, wlen, &s2, o, t);
    }
    if (o->json)
        npu_buf_printf(b, "]}\n");
    ctr_values_free(&cv);
}

/* ---- listing and docs ------------------------------------------------------ */

void ctr_list(npu_buf *b)
{
    npu_buf_printf(b, "events (%d): name, PMU event number (pmusel), unit, kind, description\n",
                   CTR_EV__COUNT);
    for (int e = 0; e < CTR_EV__COUNT; e++)
        npu_buf_printf(b, "  %-30s %4d  %-11s %-9s %s\n", events[e].name, e, ctr_unit_name(events[e].unit),
                       ctr_kind_name(events[e].kind), events[e].desc);
    npu_buf_printf(b, "\ngroups (-M NAME):\n");
    for (int g = 0; g < CTR_GROUP__COUNT; g++)
        npu_buf_printf(b, "  %-24s %s\n  %-24s   events: %s\n", groups[g].name, groups[g].desc, "",
                       groups[g].events);
    npu_buf_printf(b, "\nderived metrics:\n");
    for (int k = 0; k < CTR_M__COUNT; k++)
        npu_buf_printf(b, "  %-26s %-10s %s%s%s\n", metrics[k].name, metrics[k].unit, metrics[k].desc,
                       metrics[k].anchor[0] ? "; on rows of " : " (summary)", metrics[k].anchor);
}

void ctr_doc_markdown(npu_buf *b)
{
    npu_buf_printf(b,
        "<!-- generated from counters/events.def, groups.def and metrics.def by ctr-docgen"
        " — do not edit -->\n"
        "# Counters\n\n"
        "Every counter `npusim stat` prints, the PMU can select and the viewer labels, one\n"
        "row per event of `counters/events.def`. The number is the PMU event number a\n"
        "kernel writes to `pmusel0..3` (docs/stat.md). Units: `core` and `pipe` events\n"
        "have one instance per core, `l2_slice` one per L2 slice, `hbm_channel` one per\n"
        "HBM channel, `chip` one. Stall cycles of the `bank` cause and, off pipe S, the\n"
        "`memory` cause lie inside the pipe's busy cycles (the instruction is stretched);\n"
        "the other causes lie outside, so busy + stalls outside busy + idle = cycles.\n\n"
        "| # | event | unit | kind | description |\n|---|---|---|---|---|\n");
    for (int e = 0; e < CTR_EV__COUNT; e++)
        npu_buf_printf(b, "| %d | `%s` | %s | %s | %s |\n", e, events[e].name,
                       ctr_unit_name(events[e].unit), ctr_kind_name(events[e].kind), events[e].desc);
    npu_buf_printf(b, "\n## Groups (`npusim stat -M NAME`)\n\n| group | events | description |\n|---|---|---|\n");
    for (int g = 0; g < CTR_GROUP__COUNT; g++)
        npu_buf_printf(b, "| `%s` | `%s` | %s |\n", groups[g].name, groups[g].events, groups[g].desc);
    npu_buf_printf(b, "\n## Derived metrics\n\n| metric | unit | shown on | definition |\n|---|---|---|---|\n");
    for (int k = 0; k < CTR_M__COUNT; k++)
        npu_buf_printf(b, "| `%s` | %s | %s | %s |\n", metrics[k].name, metrics[k].unit[0] ? metrics[k].unit : "-",
                       metrics[k].anchor[0] ? metrics[k].anchor : "summary", metrics[k].desc);
}
