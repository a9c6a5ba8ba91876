/* view.c — the view model: state, layout, hit testing, zoom / pan /
 * selection / search, and the command list of every tab. Plain C: no SDL,
 * so that tests drive it without a window.
 *
 * Every frame is built from the model's sorted arrays: a lane draws from the
 * first visible box (binary search) and, when several boxes fall inside one
 * pixel, jumps past them with one more binary search and draws a single
 * merged box. So a frame costs O(lanes x pixels x log n) whatever the zoom. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/vw.h"

/* ---- palette: calm, one hue family per pipe ---------------------------- */
static const uint32_t pipe_base[TRC_NPIPES] = {
    0x8A9BB0FF, /* S: slate */
    0x6BAF8DFF, /* V: sage green */
    0x8C7BC4FF, /* M: lavender (the cube) */
    0x5FA8B8FF, /* MTE1: teal */
    0x5C8FCCFF, /* MTE2: blue */
    0xD9A066FF, /* MTE3: apricot */
    0xC9B458FF, /* FIX: ochre */
};
#define C_BG 0x1E2127FF
#define C_PANEL 0x262A31FF
#define C_PANEL2 0x2D323AFF
#define C_GRID 0x363C46FF
#define C_TEXT 0xD8DCE3FF
#define C_DIM 0x8D95A3FF
#define C_ACCENT 0xE6C07BFF
#define C_SEL 0x61AFEF40
#define C_STALL 0xC8625EFF

uint32_t vw_pipe_base_color(unsigned pipe) { return pipe_base[pipe % TRC_NPIPES]; }

static uint32_t shade(uint32_t c, float f)  /* f > 1 lighter, < 1 darker */
{
    float r = (float)(c >> 24), g = (float)((c >> 16) & 255), b = (float)((c >> 8) & 255);
    if (f >= 1) {
        r += (255 - r) * (f - 1);
        g += (255 - g) * (f - 1);
        b += (255 - b) * (f - 1);
    } else {
        r *= f;
        g *= f;
        b *= f;
    }
    return (uint32_t)r << 24 | (uint32_t)g << 16 | (uint32_t)b << 8 | (c & 255);
}

/* src blended over an opaque dst exactly as SDL's software blend fill does
 * it (premultiplied source, x * y / 255 in integers): a translucent rect
 * over a known uniform background becomes an opaque one, which the
 * headless backend fills directly instead of blending every pixel. */
static uint32_t over(uint32_t src, uint32_t dst)
{
    unsigned a = src & 255, ia = 255 - a, out = 255;
    for (int sh = 8; sh <= 24; sh += 8) {
        unsigned sc = (src >> sh) & 255, dc = (dst >> sh) & 255;
        out |= ((ia * dc) / 255 + (sc * a) / 255) << sh;
    }
    return out;
}

uint32_t vw_pipe_color(unsigned pipe, unsigned op)
{
    static const float f[4] = { 1.0f, 1.18f, 0.86f, 1.32f };
    return shade(vw_pipe_base_color(pipe), f[(op * 7u + 3u) % 4u]);
}

static uint32_t stall_color(unsigned cause)
{
    if (cause == VW_CAUSE_FLAG)
        return 0xB9776CFF;
    if (cause == VW_CAUSE_BARRIER)
        return 0x9E6F8FFF;
    static const uint32_t c[4] = { 0xC8625EFF, 0xB98A5AFF, 0xA9577AFF, 0xC47B52FF };
    return c[cause % 4];
}

static uint32_t warm(const char *s)  /* flame colours for stack frames */
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    static const uint32_t c[6] = { 0xD08C60FF, 0xC99A5BFF, 0xD4A373FF, 0xBF8769FF, 0xCFA064FF, 0xC78F74FF };
    return c[h % 6];
}

/* ---- layout constants (logical pixels, multiplied by the scale) ---------- */
#define TOPBAR 30
#define OVERVIEW 40
#define AXIS 22
#define LABELW 128
#define CORE_H 20
#define LANE_H 17
#define CTR_H 38
#define HBM_H 9
#define STATUS 22
#define PANEL_H 200

static float S(const vw_view *v, float x) { return x * v->scale; }

static int text_w(const vw_view *v, int font, const char *s)
{
    if (v->tm.width)
        return v->tm.width(v->tm.ctx, font, s);
    return (int)(strlen(s) * (font == VW_FONT_SMALL ? 6.5f : 7.5f) * v->scale);
}
static int line_h(const vw_view *v, int font)
{
    return v->tm.line_h[font] ? v->tm.line_h[font] : (int)((font == VW_FONT_SMALL ? 13 : 15) * v->scale);
}

float vw_time_x0(const vw_view *v) { return S(v, LABELW); }
float vw_time_x1(const vw_view *v) { return (float)v->w - S(v, 10); }
double vw_x_to_t(const vw_view *v, double x)
{
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    return v->t0 + (x - x0) / (x1 - x0) * (v->t1 - v->t0);
}
double vw_t_to_x(const vw_view *v, double t)
{
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    return x0 + (t - v->t0) / (v->t1 - v->t0) * (x1 - x0);
}

static int panel_open(const vw_view *v) { return v->has_range || v->has_sel; }
static float lanes_top(const vw_view *v) { return S(v, TOPBAR + OVERVIEW + AXIS); }
static float lanes_bottom(const vw_view *v)
{
    return (float)v->h - S(v, STATUS) - (panel_open(v) ? S(v, PANEL_H) : 0);
}

/* The rows of the timeline, top to bottom (before scrolling). */
typedef enum { ROW_CTR, ROW_HEAT, ROW_CORE, ROW_LANE, ROW_HBM_HDR, ROW_HBM } row_kind;
typedef struct row { row_kind k; uint32_t core; unsigned pipe; float y, h; } row;

static size_t layout(const vw_view *v, row *rows, size_t max)
{
    const vw_model *m = v->m;
    size_t n = 0;
    float y = 0;
#define ADD(K, C, P, H) do { if (n < max) rows[n++] = (row){ K, C, P, y, S(v, H) }; y += S(v, H); } while (0)
    /* counter tracks: the bandwidth counters (names with "bytes") when the
     * trace has any, since per-core utilisation is in the core rows; else
     * every sampled counter but the cycle count; at most 8 */
    int bw = 0, nct = 0;
    for (size_t i = 0; i < m->nctr; i++)
        bw |= m->ctr[i].max_rate > 0 && strstr(m->ctr[i].name, "bytes") != NULL;
    for (size_t i = 0; i < m->nctr && nct < 8; i++)
        if (m->ctr[i].max_rate > 0 && strcmp(m->ctr[i].name, "cycles") != 0 &&
            (!bw || strstr(m->ctr[i].name, "bytes"))) {
            ADD(ROW_CTR, (uint32_t)i, 0, CTR_H);
            nct++;
        }
    /* heat maps of the per-slice / per-channel memory units (record -A):
     * 3 pixels a row, at least the height of their three label lines */
    for (uint32_t g = 0; g < VW_HEAT__N; g++)
        if (m->heat[g].n && m->heat[g].max_rate > 0)
            ADD(ROW_HEAT, g, 0, (float)NPU_MAX(m->heat[g].n * 3 + 4, CTR_H + 12));
    for (uint32_t c = 0; c < m->ncores; c++) {
        int any = 0;
        for (unsigned p = 0; p < TRC_NPIPES; p++)
            any |= vw_track_at(m, c, p)->n || vw_track_at(m, c, p)->ns;
        if (!any)
            continue;
        ADD(ROW_CORE, c, 0, CORE_H);
        if (v->collapsed[c])
            continue;
        for (unsigned p = 0; p < TRC_NPIPES; p++)
            if (vw_track_at(m, c, p)->n || vw_track_at(m, c, p)->ns)
                ADD(ROW_LANE, c, p, LANE_H);
    }
    if (m->nhbm) {
        ADD(ROW_HBM_HDR, 0, 0, CORE_H);
        for (uint32_t i = 0; i < m->nhbm; i++)
            ADD(ROW_HBM, i, 0, HBM_H);
    }
#undef ADD
    return n;
}
#define MAXROWS 20000

static float content_h(const vw_view *v)
{
    static const size_t cap = MAXROWS;
    row *rows = npu_malloc(cap * sizeof *rows);
    if (!rows)
        return 0;
    size_t n = layout(v, rows, cap);
    float h = n ? rows[n - 1].y + rows[n - 1].h : 0;
    npu_free(rows);
    return h;
}

static void clamp_view(vw_view *v)
{
    const vw_model *m = v->m;
    double span = v->t1 - v->t0, full = (double)(m->t_end - m->t_min);
    double lo = (double)m->t_min - full * 0.05, hi = (double)m->t_end + full * 0.05;
    if (span < 10)
        span = 10;
    if (span > hi - lo)
        span = hi - lo;
    if (v->t0 < lo)
        v->t0 = lo;
    if (v->t0 + span > hi)
        v->t0 = hi - span;
    v->t1 = v->t0 + span;
    float maxs = content_h(v) - (lanes_bottom(v) - lanes_top(v));
    if (v->scroll_y > maxs)
        v->scroll_y = maxs;
    if (v->scroll_y < 0)
        v->scroll_y = 0;
}

static void overview_compute(vw_view *v);

npu_status vw_view_init(vw_view *v, const vw_model *m, int w, int h, float scale, npu_diag *d)
{
    memset(v, 0, sizeof *v);
    v->m = m;
    v->w = w;
    v->h = h;
    v->scale = scale > 0 ? scale : 1;
    v->collapsed = npu_calloc(m->ncores ? m->ncores : 1, 1);
    if (!v->collapsed)
        return npu_errf(d, NPU_ENOMEM, "npuview: out of memory (view)");
    /* Many cores: start with all but the first two collapsed, so the first
     * picture shows pipes and the per-core utilisation of the rest. */
    if (m->ncores > 4)
        for (uint32_t c = 2; c < m->ncores; c++)
            v->collapsed[c] = 1;
    v->flame_icicle = 1;
    v->flame_zoom = -1;
    v->flame_dirty = v->htab_dirty = v->rtab_dirty = 1;
    v->hsort = 2;
    vw_fit(v);
    overview_compute(v);
    return NPU_OK;
}

void vw_view_free(vw_view *v)
{
    npu_free(v->collapsed);
    npu_free(v->hits);
    npu_free(v->ov);
    vw_flame_free(&v->flame);
    vw_table_free(&v->htab);
    vw_table_free(&v->rtab);
    memset(v, 0, sizeof *v);
}

void vw_view_resize(vw_view *v, int w, int h, float scale)
{
    v->w = w > 200 ? w : 200;
    v->h = h > 150 ? h : 150;
    if (scale > 0)
        v->scale = scale;
    clamp_view(v);
    overview_compute(v);    /* (a no-op when the width is the same) */
}

void vw_zoom_at(vw_view *v, double x, double factor)
{
    double t = vw_x_to_t(v, x);
    v->t0 = t - (t - v->t0) * factor;
    v->t1 = t + (v->t1 - t) * factor;
    clamp_view(v);
}

void vw_pan_px(vw_view *v, double dx)
{
    double dt = dx / (vw_time_x1(v) - vw_time_x0(v)) * (v->t1 - v->t0);
    v->t0 += dt;
    v->t1 += dt;
    clamp_view(v);
}

static const vw_box *sel_box(const vw_view *v)
{
    if (!v->has_sel || (v->sel.kind != 1 && v->sel.kind != 2))
        return NULL;
    const vw_track *t = vw_track_at(v->m, v->sel.core, v->sel.pipe);
    if (v->sel.kind == 1)
        return v->sel.index < t->n ? &t->box[v->sel.index] : NULL;
    return v->sel.index < t->ns ? &t->stall[v->sel.index] : NULL;
}

void vw_fit(vw_view *v)
{
    const vw_box *b = sel_box(v);
    double a, z;
    if (v->has_range) {
        a = (double)v->r0;
        z = (double)v->r1;
    } else if (b) {
        a = (double)b->t0;
        z = (double)b->t0 + NPU_MAX(b->dur, 1u);
    } else {
        a = (double)v->m->t_min;
        z = (double)v->m->t_end;
    }
    double pad = (z - a) * 0.02;
    v->t0 = a - pad;
    v->t1 = z + pad;
    clamp_view(v);
}

void vw_set_range(vw_view *v, uint64_t r0, uint64_t r1)
{
    if (r1 < r0) {
        uint64_t t = r0;
        r0 = r1;
        r1 = t;
    }
    v->has_range = r1 > r0;
    v->r0 = r0;
    v->r1 = r1;
    v->flame_dirty = v->rtab_dirty = v->htab_dirty = 1;
    v->flame_zoom = -1;
}

/* ---- search ------------------------------------------------------------------ */
static int cmp_hit(const void *pa, const void *pb)
{
    const vw_search_hit *a = pa, *b = pb;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    if (a->core != b->core)
        return a->core < b->core ? -1 : 1;
    return a->pipe < b->pipe ? -1 : a->pipe > b->pipe;
}

/* Merge the sorted runs of hits (track k: [run[k], run[k + 1])) into one
 * list in (start, core, pipe) order, as cmp_hit sorts: a heap of the runs'
 * heads. Returns -1 without memory (the hits are left as they were). */
static int merge_runs(vw_view *v, const size_t *run, size_t ntr)
{
    vw_search_hit *out = npu_malloc(v->nhits * sizeof *out);
    size_t *pos = npu_malloc((ntr + 1) * sizeof *pos);
    /* the heap holds (head start, track) keys, so that sifting compares
     * within one small array */
    struct hk { uint64_t t0; size_t k; } *heap = npu_malloc((ntr + 1) * sizeof *heap);
    if (!out || !pos || !heap) {
        npu_free(out);
        npu_free(pos);
        npu_free(heap);
        return -1;
    }
    size_t nh = 0;
#define HLESS(a, b) ((a).t0 < (b).t0 || ((a).t0 == (b).t0 && (a).k < (b).k))   /* track order = (core, pipe) */
    for (size_t k = 0; k < ntr; k++) {
        pos[k] = run[k];
        if (run[k] == run[k + 1])
            continue;
        size_t i = nh++;
        heap[i] = (struct hk){ v->hits[run[k]].t0, k };
        while (i > 0 && HLESS(heap[i], heap[(i - 1) / 2])) {
            struct hk t = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
    }
    for (size_t o = 0; nh; o++) {
        size_t k = heap[0].k;
        out[o] = v->hits[pos[k]++];
        if (pos[k] == run[k + 1])
            heap[0] = heap[--nh];
        else
            heap[0].t0 = v->hits[pos[k]].t0;
        for (size_t i = 0;;) {  /* sift down */
            size_t l = 2 * i + 1, r = l + 1, b = i;
            if (l < nh && HLESS(heap[l], heap[b]))
                b = l;
            if (r < nh && HLESS(heap[r], heap[b]))
                b = r;
            if (b == i)
                break;
            struct hk t = heap[i]; heap[i] = heap[b]; heap[b] = t;
            i = b;
        }
    }
#undef HLESS
    npu_free(v->hits);
    v->hits = out;
    npu_free(pos);
    npu_free(heap);
    return 0;
}

static void goto_hit(vw_view *v)
{
    if (!v->nhits)
        return;
    vw_search_hit *h = &v->hits[v->hit_cur];
    const vw_box *b = &vw_track_at(v->m, h->core, h->pipe)->box[h->index];
    v->has_sel = 1;
    v->sel = (vw_hit){ 1, h->core, h->pipe, h->index };
    double span = v->t1 - v->t0;
    if (span < b->dur * 3.0)
        span = b->dur * 3.0;
    double mid = b->t0 + b->dur / 2.0;
    v->t0 = mid - span / 2;
    v->t1 = mid + span / 2;
    v->collapsed[h->core] = 0;
    /* scroll the lane into view */
    row *rows = npu_malloc(MAXROWS * sizeof *rows);
    if (rows) {
        size_t n = layout(v, rows, MAXROWS);
        for (size_t i = 0; i < n; i++)
            if (rows[i].k == ROW_LANE && rows[i].core == h->core && rows[i].pipe == h->pipe) {
                float vis = lanes_bottom(v) - lanes_top(v);
                if (rows[i].y < v->scroll_y || rows[i].y + rows[i].h > v->scroll_y + vis)
                    v->scroll_y = rows[i].y - vis / 3;
            }
        npu_free(rows);
    }
    clamp_view(v);
    snprintf(v->status, sizeof v->status, "search \"%s\": hit %zu of %zu", v->query, v->hit_cur + 1,
             v->nhits);
}

size_t vw_search(vw_view *v, const char *q)
{
    const vw_model *m = v->m;
    snprintf(v->query, sizeof v->query, "%s", q);
    npu_free(v->hits);
    v->hits = NULL;
    v->nhits = v->hit_cur = 0;
    if (!*q)
        return 0;
    /* what matches: opcodes by name, stacks whose frames (function or
     * label) are named q, or one pc */
    uint8_t opm[65536 / 8] = {0};
    int any_op = 0;
    for (uint32_t i = 0; i < m->meta->opcodes.count && i < 65536; i++)
        if (m->meta->opcodes.names[i] && strcasecmp(m->meta->opcodes.names[i], q) == 0) {
            opm[i / 8] |= (uint8_t)(1u << (i % 8));
            any_op = 1;
        }
    uint8_t *stm = npu_calloc(m->nstacks + 1, 1);
    if (!stm)
        return 0;
    int any_st = 0;
    for (size_t s = 1; s < m->nstacks; s++) {
        for (int32_t k = (int32_t)s; k > 0; k = m->stacks[k].parent)
            if (m->stacks[k].sym && m->stacks[k].sym->name && strcasecmp(m->stacks[k].sym->name, q) == 0) {
                stm[s] = 1;
                any_st = 1;
                break;
            }
    }
    char *end = NULL;
    unsigned long long pc = strtoull(q, &end, 0);
    int is_pc = (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) && end && !*end;
    size_t cap = 0;
    const size_t limit = (size_t)1 << 21;
    /* per track, its hits are a run already sorted by start: the runs are
     * merged below instead of sorting all hits (a sort of 2 M hits, each
     * comparison two random loads, took most of a second) */
    size_t ntr = (size_t)m->ncores * TRC_NPIPES;
    size_t *run = npu_calloc(ntr + 1, sizeof *run);
    if (!run) {
        npu_free(stm);
        return 0;
    }
    /* tracks are visited in index order (core, pipe); the first `reached`
     * have their run start in run[] */
    size_t reached = 0;
#define MATCHES(x) ((any_op && (opm[(x)->op / 8] >> ((x)->op % 8) & 1)) || (any_st && stm[(x)->stack]) || \
                    (is_pc && (x)->pc == (uint32_t)pc))
    if (any_op || any_st || is_pc)
        for (uint32_t c = 0; c < m->ncores; c++)
            for (unsigned p = 0; p < TRC_NPIPES; p++) {
                const vw_track *t = vw_track_at(m, c, p);
                run[reached++] = v->nhits;
                /* a track none of whose leaves match has no hit */
                int maybe = 0;
                for (uint32_t l = 0; l < t->sb.nleaf && !maybe; l++)
                    maybe = MATCHES(&t->sb.leaf[l]);
                if (!maybe && t->sb.nleaf)
                    continue;
                for (size_t i = 0; i < t->n && v->nhits < limit; i++) {
                    const vw_box *b = &t->box[i];
                    if (!MATCHES(b))
                        continue;
                    if (v->nhits == cap) {
                        size_t nc = cap ? cap * 2 : 1024;
                        vw_search_hit *nh = npu_realloc(v->hits, nc * sizeof *nh);
                        if (!nh)
                            goto done;
                        v->hits = nh;
                        cap = nc;
                    }
                    v->hits[v->nhits++] = (vw_search_hit){ c, (uint8_t)p, i, b->t0 };
                }
            }
#undef MATCHES
done:
    npu_free(stm);
    if (v->nhits) {
        /* runs: track k's hits are [run[k], run[k + 1]); the tracks not
         * reached (after an allocation failure) are empty */
        for (size_t k = reached; k <= ntr; k++)
            run[k] = v->nhits;
        if (merge_runs(v, run, ntr) && v->nhits > 1)
            qsort(v->hits, v->nhits, sizeof *v->hits, cmp_hit);  /* no memory to merge */
        /* first hit at or after the left edge of the view */
        size_t i = 0;
        while (i < v->nhits && (double)v->hits[i].t0 < v->t0)
            i++;
        v->hit_cur = i < v->nhits ? i : 0;
        goto_hit(v);
    } else {
        snprintf(v->status, sizeof v->status, "search \"%s\": no match (opcode, label, function or 0xPC)", q);
    }
    npu_free(run);
    return v->nhits;
}

void vw_search_next(vw_view *v, int dir)
{
    if (!v->nhits)
        return;
    v->hit_cur = (v->hit_cur + v->nhits + (size_t)(dir < 0 ? -1 : 1)) % v->nhits;
    goto_hit(v);
}

/* ---- hit testing ------------------------------------------------------------ */
static const char *tab_names[VW_NTABS] = { "Timeline", "Flame graph", "Hotspots", "Counters" };

static float tab_x(const vw_view *v, int i, float *w)
{
    float x = S(v, 8);
    for (int k = 0; k < VW_NTABS; k++) {
        float tw = (float)text_w(v, VW_FONT_UI, tab_names[k]) + S(v, 24);
        if (k == i) {
            *w = tw;
            return x;
        }
        x += tw + S(v, 4);
    }
    *w = 0;
    return x;
}

/* The flame graph's geometry, shared by drawing and hit testing. */
static float flame_top(const vw_view *v) { return S(v, TOPBAR + 30); }
static float flame_row_h(const vw_view *v) { return S(v, 20); }
static float flame_y(const vw_view *v, uint32_t depth)
{
    float rh = flame_row_h(v);
    if (v->flame_icicle)
        return flame_top(v) + depth * rh;
    return (float)v->h - S(v, STATUS) - S(v, 8) - (depth + 1) * rh;
}

static void ensure_flame(vw_view *v)
{
    if (!v->flame_dirty && v->flame.stalls == v->flame_stalls)
        return;
    npu_diag d;
    if (vw_flame_build(v->m, v->has_range ? v->r0 : 0, v->has_range ? v->r1 : 0, v->flame_stalls,
                       &v->flame, &d))
        snprintf(v->status, sizeof v->status, "%.150s", d.msg);
    v->flame_dirty = 0;
    if (v->flame_zoom >= (int32_t)v->flame.count)
        v->flame_zoom = -1;
}

/* x extent of node n in the flame graph given the zoom (0 width = hidden). */
static void flame_x(const vw_view *v, int32_t n, float *x, float *w)
{
    const vw_flame *f = &v->flame;
    int32_t z = v->flame_zoom >= 0 ? v->flame_zoom : 0;
    float X0 = S(v, 8), W = (float)v->w - S(v, 16);
    /* ancestors of the zoomed node, and the node itself, span the width */
    for (int32_t k = z; k >= 0; k = f->n[k].parent)
        if (k == n) {
            *x = X0;
            *w = W;
            return;
        }
    /* others: must descend from z; place by summing siblings before */
    float off = 0;
    double scale = f->n[z].w ? W / (double)f->n[z].w : 0;
    int32_t k = n;
    float ox = 0;
    while (k >= 0 && k != z) {
        int32_t p = f->n[k].parent;
        if (p < 0) {
            *w = 0;
            return;
        }
        double before = 0;
        for (int32_t c = f->n[p].child; c >= 0 && c != k; c = f->n[c].next)
            before += (double)f->n[c].w;
        ox += (float)(before * scale);
        k = p;
    }
    if (k != z) {
        *w = 0;
        return;
    }
    (void)off;
    *x = X0 + ox;
    *w = (float)(f->n[n].w * scale);
}

vw_hit vw_hit_test(vw_view *v, int x, int y)
{
    vw_hit h = {0};
    if (y < S(v, TOPBAR)) {
        for (int i = 0; i < VW_NTABS; i++) {
            float w, tx = tab_x(v, i, &w);
            if (x >= tx && x < tx + w)
                return (vw_hit){ .kind = 5, .index = (size_t)i };
        }
        return h;
    }
    if (v->tab == VW_TAB_FLAME) {
        ensure_flame(v);
        for (size_t i = 0; i < v->flame.count; i++) {
            float fy = flame_y(v, v->flame.n[i].depth);
            if (y < fy || y >= fy + flame_row_h(v))
                continue;
            float fx, fw;
            flame_x(v, (int32_t)i, &fx, &fw);
            if (fw > 0 && x >= fx && x < fx + fw)
                return (vw_hit){ .kind = 4, .index = i };
        }
        return h;
    }
    if (v->tab == VW_TAB_HOTSPOTS) {
        float hy = S(v, TOPBAR + 34);
        if (y >= hy && y < hy + S(v, 22)) {
            /* column headers: name, count, busy, stall at fixed fractions */
            float cx[4] = { 0, 0.55f, 0.66f, 0.82f };
            int col = 0;
            for (int i = 0; i < 4; i++)
                if (x >= cx[i] * v->w)
                    col = i;
            return (vw_hit){ .kind = 6, .index = (size_t)col };
        }
        if (y >= S(v, TOPBAR + 4) && y < S(v, TOPBAR + 28))
            for (int i = 0; i < VW_HK__N; i++) {
                float bx = S(v, 8) + i * S(v, 96);
                if (x >= bx && x < bx + S(v, 92))
                    return (vw_hit){ .kind = 8, .index = (size_t)i };
            }
        return h;
    }
    if (v->tab != VW_TAB_TIMELINE)
        return h;
    if (y >= S(v, TOPBAR) && y < S(v, TOPBAR + OVERVIEW))
        return (vw_hit){ .kind = 7 };
    float top = lanes_top(v), bot = lanes_bottom(v);
    if (y < top || y >= bot)
        return h;
    row *rows = npu_malloc(MAXROWS * sizeof *rows);
    if (!rows)
        return h;
    size_t n = layout(v, rows, MAXROWS);
    float ly = (float)y - top + v->scroll_y;
    for (size_t i = 0; i < n; i++) {
        row *r = &rows[i];
        if (ly < r->y || ly >= r->y + r->h)
            continue;
        if (r->k == ROW_CORE && x < vw_time_x0(v)) {
            h = (vw_hit){ .kind = 3, .core = r->core };
        } else if (r->k == ROW_LANE && x >= vw_time_x0(v)) {
            const vw_track *t = vw_track_at(v->m, r->core, r->pipe);
            int stall = ly >= r->y + r->h * 0.62f;
            const vw_box *arr = stall ? t->stall : t->box;
            size_t na = stall ? t->ns : t->n;
            /* a box under the cursor, or the nearest within 2 px */
            double px = (v->t1 - v->t0) / (vw_time_x1(v) - vw_time_x0(v));
            double tx = vw_x_to_t(v, x), slack = 2 * px;
            size_t k = vw_track_first(stall ? t->smaxend : t->maxend, na,
                                      tx > slack ? (uint64_t)(tx - slack) : 0);
            size_t best = SIZE_MAX;
            double bd = slack + 1;
            for (; k < na && arr[k].t0 <= tx + slack; k++) {
                double a = (double)arr[k].t0, z = a + arr[k].dur;
                double dd = tx < a ? a - tx : tx > z ? tx - z : 0;
                if (dd < bd || (dd == 0 && bd == 0)) {
                    bd = dd;
                    best = k;
                }
            }
            if (best != SIZE_MAX)
                h = (vw_hit){ .kind = stall ? 2 : 1, .core = r->core, .pipe = r->pipe, .index = best };
        } else if ((r->k == ROW_CTR || r->k == ROW_HEAT) && x >= vw_time_x0(v) && x < vw_time_x1(v)) {
            /* a counter bin: the track's (core = counter id) or a heat
             * map's cell (core = map, pipe = its row) */
            double tx = vw_x_to_t(v, x);
            size_t nb = r->k == ROW_CTR ? v->m->ctr[r->core].nbins : v->m->heat[r->core].nbins;
            size_t k = tx > 0 ? (size_t)(tx / (double)v->m->ctr_width) : 0;
            if (tx >= 0 && k < nb && tx < (double)v->m->t_end) {
                if (r->k == ROW_CTR) {
                    h = (vw_hit){ .kind = 9, .core = r->core, .index = k };
                } else {
                    const vw_heat *hm = &v->m->heat[r->core];
                    float rh = (r->h - 4) / (float)hm->n, d = ly - r->y - 2;
                    if (d >= 0 && d < rh * (float)hm->n)
                        h = (vw_hit){ .kind = 10, .core = r->core, .pipe = (unsigned)(d / rh), .index = k };
                }
            }
        }
        break;
    }
    npu_free(rows);
    return h;
}

/* ---- formatting ----------------------------------------------------------------- */
static void fmt_cyc(char *b, size_t n, double c)
{
    double a = fabs(c);
    if (a < 0.5)
        c = 0;
    if (a >= 1e9)
        snprintf(b, n, "%.3gG", c / 1e9);
    else if (a >= 1e6)
        snprintf(b, n, "%.4gM", c / 1e6);
    else if (a >= 1e4)
        snprintf(b, n, "%.4gk", c / 1e3);
    else
        snprintf(b, n, "%.0f", c);
}

static void fmt_big(char *b, size_t n, uint64_t x)
{
    char t[32];
    snprintf(t, sizeof t, "%llu", (unsigned long long)x);
    size_t l = strlen(t), o = 0;
    for (size_t i = 0; i < l && o + 2 < n; i++) {
        if (i && (l - i) % 3 == 0)
            b[o++] = ',';
        b[o++] = t[i];
    }
    b[o] = 0;
}

/* ---- drawing: timeline ------------------------------------------------------------ */
static void draw_topbar(vw_view *v, vw_cmds *o)
{
    vw_rect(o, 0, 0, (float)v->w, S(v, TOPBAR), C_PANEL);
    vw_line(o, 0, S(v, TOPBAR) - 1, (float)v->w, S(v, TOPBAR) - 1, C_GRID);
    for (int i = 0; i < VW_NTABS; i++) {
        float w, x = tab_x(v, i, &w);
        if ((int)v->tab == i) {
            vw_rect(o, x, S(v, 4), w, S(v, TOPBAR - 4), C_BG);
            vw_rect(o, x, S(v, TOPBAR) - S(v, 2), w, S(v, 2), C_ACCENT);
        }
        vw_text(o, x + S(v, 12), (S(v, TOPBAR) - line_h(v, VW_FONT_UI)) / 2 + S(v, 1), VW_FONT_UI,
                (int)v->tab == i ? C_TEXT : C_DIM, tab_names[i]);
    }
    char b[256], c1[32];
    fmt_cyc(c1, sizeof c1, (double)(v->m->t_end - v->m->t_min));
    snprintf(b, sizeof b, "%s  ·  %u cores  ·  %s cycles  ·  %.1f µs @ %.2f GHz",
             v->m->meta->kernel ? v->m->meta->kernel : "trace", v->m->ncores, c1,
             (double)(v->m->t_end - v->m->t_min) / (v->m->meta->clock_ghz > 0 ? v->m->meta->clock_ghz : 1) / 1e3,
             v->m->meta->clock_ghz);
    vw_text(o, (float)v->w - text_w(v, VW_FONT_SMALL, b) - S(v, 10),
            (S(v, TOPBAR) - line_h(v, VW_FONT_SMALL)) / 2, VW_FONT_SMALL, C_DIM, b);
}

/* The overview's columns: busy cycles of M and of everything per pixel
 * column of the whole run (mean over cores and pipes). The run does not
 * change, so this is done once per width, when the view is made or resized,
 * not in a frame. */
static void overview_compute(vw_view *v)
{
    const vw_model *m = v->m;
    int W = (int)(vw_time_x1(v) - vw_time_x0(v));
    double full = (double)(m->t_end - m->t_min);
    if (v->ov_w != W) {
        npu_free(v->ov);
        v->ov = npu_calloc((size_t)(W > 0 ? W : 1) * 2, sizeof *v->ov);
        v->ov_w = v->ov ? W : 0;
        /* from the busy grid when a column spans 16 cells or more, else
         * track by track, sweeping the column edges forward: the
         * busy-before prefix at each edge, the column's cycles the difference */
        double cell = (double)((uint64_t)1 << m->grid_shift);
        int use_grid = m->ugrid && full / (W > 0 ? W : 1) >= 16 * cell;
        for (int px = 0; use_grid && v->ov && px < W; px++) {
            double ta = (double)m->t_min + full * px / W, tz = (double)m->t_min + full * (px + 1) / W;
            size_t ka = (size_t)NPU_MIN((double)m->ngrid, floor(ta / cell + 0.5));
            size_t kz = (size_t)NPU_MIN((double)m->ngrid, floor(tz / cell + 0.5));
            double all = 0, cube = 0;
            for (uint32_t c = 0; c < m->ncores; c++) {
                const uint64_t *ug = m->ugrid + (size_t)c * (m->ngrid + 1), *mg = m->mgrid + (size_t)c * (m->ngrid + 1);
                all += (double)(ug[kz] - ug[ka]);
                cube += (double)(mg[kz] - mg[ka]);
            }
            /* as the exact path below: cycles, rescaled to the column's width */
            double sc = kz > ka ? (tz - ta) / ((double)(kz - ka) * cell) : 0;
            v->ov[2 * px] = (float)(all * sc);
            v->ov[2 * px + 1] = (float)(cube * sc);
        }
        for (size_t i = 0; !use_grid && v->ov && i < (size_t)m->ncores * TRC_NPIPES; i++) {
            const vw_track *t = &m->tracks[i];
            if (!t->n)
                continue;
            size_t hnt = 0;
            uint64_t prev = vw_track_busy_to(t, m->t_min, &hnt);
            for (int px = 0; px < W; px++) {
                uint64_t z = m->t_min + (uint64_t)(full * (px + 1) / W), bz = vw_track_busy_to(t, z, &hnt);
                v->ov[2 * px] += (float)(bz - prev);
                if (i % TRC_NPIPES == TRC_PIPE_M)
                    v->ov[2 * px + 1] += (float)(bz - prev);
                prev = bz;
            }
        }
        for (int px = 0; v->ov && px < W; px++) {
            uint64_t a = m->t_min + (uint64_t)(full * px / W), z = m->t_min + (uint64_t)(full * (px + 1) / W);
            double den = (double)(z > a ? z - a : 1) * m->ncores;
            v->ov[2 * px] = (float)NPU_MIN(1.0, v->ov[2 * px] / den / 3.0);
            v->ov[2 * px + 1] = (float)NPU_MIN(1.0, v->ov[2 * px + 1] / den);
        }
    }
}

/* Chip utilisation over the whole run, one sample per pixel column. */
static void draw_overview(vw_view *v, vw_cmds *o)
{
    const vw_model *m = v->m;
    float y = S(v, TOPBAR), h = S(v, OVERVIEW), x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    vw_rect(o, 0, y, (float)v->w, h, C_BG);
    vw_text(o, S(v, 8), y + S(v, 4), VW_FONT_SMALL, C_DIM, "overview");
    vw_text(o, S(v, 8), y + S(v, 4) + line_h(v, VW_FONT_SMALL), VW_FONT_SMALL, C_DIM, "busy pipes");
    int W = (int)(x1 - x0);
    double full = (double)(m->t_end - m->t_min);
    float base = y + h - S(v, 4), hh = h - S(v, 8);
    overview_compute(v);    /* normally done already by vw_view_init / vw_view_resize */
    /* the cube bar is translucent over the all-pipes bar and the background:
     * drawn as the opaque colours those blends give, in the integer rows
     * the software fill would cover */
    const uint32_t ca = 0x4A5A70FF, cc = 0x8C7BC4C0, c_on = over(cc, ca), c_off = over(cc, C_BG);
    for (int px = 0; v->ov && px < W; px++) {
        double fa = v->ov[2 * px], fc = v->ov[2 * px + 1];
        float xx = x0 + px;
        /* rows [ya, ya + ha) and [yc, yc + hc); no grey bar: ha = 0 */
        int ya = (int)(base - (float)(fa * hh)), ha = fa > 0 ? NPU_MAX((int)(float)(fa * hh), 1) : 0;
        int yc = (int)(base - (float)(fc * hh)), hc = NPU_MAX((int)(float)(fc * hh), 1);
        if (ha)
            vw_rect(o, xx, (float)ya, 1, (float)ha, ca);
        if (fc > 0) {
            /* rows [yc, yc + hc): over the grey bar where it covers [ya, ya + ha) */
            int lo = NPU_MAX(yc, ya), hi = NPU_MIN(yc + hc, ya + ha);
            if (hi > lo) {
                if (lo > yc)
                    vw_rect(o, xx, (float)yc, 1, (float)(lo - yc), c_off);
                vw_rect(o, xx, (float)lo, 1, (float)(hi - lo), c_on);
                if (yc + hc > hi)
                    vw_rect(o, xx, (float)hi, 1, (float)(yc + hc - hi), c_off);
            } else {
                vw_rect(o, xx, (float)yc, 1, (float)hc, c_off);
            }
        }
    }
    /* the visible window */
    float wx0 = (float)(x0 + (v->t0 - m->t_min) / full * W), wx1 = (float)(x0 + (v->t1 - m->t_min) / full * W);
    wx0 = NPU_MAX(wx0, x0);
    wx1 = NPU_MIN(wx1, x1);
    vw_rect(o, wx0, y + S(v, 2), NPU_MAX(wx1 - wx0, 2.0f), h - S(v, 4), 0xE6C07B30);
    vw_line(o, wx0, y + S(v, 2), wx0, y + h - S(v, 2), C_ACCENT);
    vw_line(o, wx1, y + S(v, 2), wx1, y + h - S(v, 2), C_ACCENT);
    vw_line(o, 0, y + h - 1, (float)v->w, y + h - 1, C_GRID);
}

static double nice_step(double span, int want)
{
    double raw = span / (want > 0 ? want : 1), p = pow(10, floor(log10(raw)));
    double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void draw_axis(vw_view *v, vw_cmds *o, float grid_bottom)
{
    float y = S(v, TOPBAR + OVERVIEW), h = S(v, AXIS), x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    vw_rect(o, 0, y, (float)v->w, h, C_PANEL);
    double step = nice_step(v->t1 - v->t0, (int)((x1 - x0) / S(v, 110)));
    double first = ceil(v->t0 / step) * step;
    vw_text(o, S(v, 8), y + (h - line_h(v, VW_FONT_SMALL)) / 2, VW_FONT_SMALL, C_DIM, "cycles");
    for (double t = first; t <= v->t1; t += step) {
        float x = (float)vw_t_to_x(v, t);
        if (x < x0 || x > x1)
            continue;
        char b[32];
        fmt_cyc(b, sizeof b, t);
        vw_line(o, x, y + h - S(v, 5), x, y + h, C_DIM);
        vw_line(o, x, y + h, x, grid_bottom, 0x2E333BFF);
        vw_text(o, x + S(v, 3), y + S(v, 2), VW_FONT_SMALL, C_DIM, b);
    }
    vw_line(o, 0, y + h - 1, (float)v->w, y + h - 1, C_GRID);
}

/* One lane of boxes with sub-pixel merging: from each drawn box, skip by
 * binary search to the first box that starts in a later pixel. */
static void draw_boxes(vw_view *v, vw_cmds *o, const vw_box *b, const uint64_t *maxend, size_t n, unsigned pipe,
                       float y, float h, int stalls, int labels)
{
    if (!n)
        return;
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    double cpp = (v->t1 - v->t0) / (x1 - x0);  /* cycles per pixel */
    uint64_t lo = v->t0 > 0 ? (uint64_t)v->t0 : 0, hi = v->t1 > 0 ? (uint64_t)ceil(v->t1) : 0;
    size_t i = vw_track_first(maxend, n, lo);
    vw_strip_begin(o, y, h);
    while (i < n && b[i].t0 < hi) {
        double bx0 = vw_t_to_x(v, (double)b[i].t0);
        uint64_t end = b[i].t0 + b[i].dur;
        size_t count = 1, j = i + 1;
        for (;;) {
            double ex = vw_t_to_x(v, (double)end);
            /* first box starting at or after the pixel after the run's end */
            double tnext = v->t0 + (floor(ex - x0) + 1) * cpp;
            uint64_t tn = tnext > 0 ? (uint64_t)ceil(tnext) : 0;
            /* galloping from j: the next pixel's boxes are near, and a
             * binary search over the whole lane missed the cache at every step */
            size_t lo2 = vw_first_ge(b, n, tn, j);
            if (lo2 < j)
                lo2 = j;
            /* a box a pixel wide or more is drawn on its own, never
             * swallowed into a run (only sub-pixel boxes merge) */
            for (size_t k = j; k < lo2 && k < j + 16; k++)
                if ((double)b[k].dur >= cpp) {
                    lo2 = k;
                    break;
                }
            if (lo2 == j)
                break;
            for (size_t k = lo2 - 1; k >= j && k + 8 >= lo2; k--)
                end = NPU_MAX(end, b[k].t0 + b[k].dur);
            end = NPU_MAX(end, b[lo2 - 1].t0 + b[lo2 - 1].dur);
            count += lo2 - j;
            j = lo2;
        }
        double ex = vw_t_to_x(v, (double)end);
        float fx0 = (float)NPU_MAX(bx0, x0), fx1 = (float)NPU_MIN(ex, x1);
        if (fx1 - fx0 < 1)
            fx1 = fx0 + 1;
        uint32_t col = stalls ? stall_color(b[i].op) : vw_pipe_color(pipe, b[i].op);
        if (count > 1)
            col = shade(col, 0.82f);  /* merged: a slightly deeper tone says "many" */
        vw_strip_span(o, fx0, fx1 - fx0, col);
        if (fx1 - fx0 >= 3 && count == 1)
            vw_strip_span(o, fx1 - 1, 1, shade(col, 0.6f));  /* a seam between touching boxes */
        if (labels && count == 1 && fx1 - fx0 > S(v, 28)) {
            const char *nm = vw_op_name(v->m, b[i].op);
            int tw = text_w(v, VW_FONT_SMALL, nm);
            if (tw + S(v, 6) < fx1 - fx0) {
                vw_clip(o, fx0, y, fx1 - fx0, h);
                vw_text(o, fx0 + S(v, 3), y + (h - line_h(v, VW_FONT_SMALL)) / 2, VW_FONT_SMALL,
                        0x1A1D22FF, nm);
                vw_unclip(o);
            }
        }
        i = j;
    }
}

/* A lane zoomed out: the runs of a level of detail (vw_lod), merged
 * further per pixel as draw_boxes merges boxes. Runs are disjoint and
 * sorted, so the visible ones are one binary search and a forward walk. */
static void draw_runs(vw_view *v, vw_cmds *o, const vw_run *r, size_t n, const vw_box *b, unsigned pipe,
                      float y, float h, int stalls)
{
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    double cpp = (v->t1 - v->t0) / (x1 - x0);
    uint64_t lo = v->t0 > 0 ? (uint64_t)v->t0 : 0, hi = v->t1 > 0 ? (uint64_t)ceil(v->t1) : 0;
    size_t i = 0, z = n;
    while (i < z) {     /* first run ending after lo */
        size_t mid = i + (z - i) / 2;
        if (r[mid].end <= lo)
            i = mid + 1;
        else
            z = mid;
    }
    vw_strip_begin(o, y, h);
    while (i < n && r[i].t0 < hi) {
        double bx0 = vw_t_to_x(v, (double)r[i].t0);
        uint64_t end = r[i].end;
        size_t count = r[i].count, j = i + 1;
        for (;;) {
            double ex = vw_t_to_x(v, (double)end);
            double tnext = v->t0 + (floor(ex - x0) + 1) * cpp;
            uint64_t tn = tnext > 0 ? (uint64_t)ceil(tnext) : 0;
            /* a single box a pixel wide or more is drawn on its own */
            if (j >= n || r[j].t0 >= tn || (r[j].count == 1 && (double)(r[j].end - r[j].t0) >= cpp))
                break;
            end = NPU_MAX(end, r[j].end);
            count += r[j].count;
            j++;
        }
        double ex = vw_t_to_x(v, (double)end);
        float fx0 = (float)NPU_MAX(bx0, x0), fx1 = (float)NPU_MIN(ex, x1);
        if (fx1 - fx0 < 1)
            fx1 = fx0 + 1;
        unsigned op = b[r[i].first].op;
        uint32_t col = stalls ? stall_color(op) : vw_pipe_color(pipe, op);
        if (count > 1)
            col = shade(col, 0.82f);
        vw_strip_span(o, fx0, fx1 - fx0, col);
        if (fx1 - fx0 >= 3 && count == 1)
            vw_strip_span(o, fx1 - 1, 1, shade(col, 0.6f));
        i = j;
    }
}

/* The coarsest level of detail whose gap is at most a pixel, or NULL. */
static const vw_lod *pick_lod(const vw_view *v, const vw_lod *lod)
{
    double cpp = (v->t1 - v->t0) / (vw_time_x1(v) - vw_time_x0(v));
    const vw_lod *best = NULL;
    for (int L = 0; L < VW_NLOD; L++)
        if (lod[L].n && (double)((uint64_t)VW_LOD_GAP0 << (2 * L)) <= cpp)
            best = &lod[L];
    return best;
}

static void draw_util(vw_view *v, vw_cmds *o, uint32_t core, float y, float h, uint32_t col)
{
    /* mean busy fraction of the core's pipes per pixel column (exact
     * integrals: differences of the busy-before-t prefix, evaluated once
     * per column edge with a galloping search that sweeps forward) */
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    int W = (int)(x1 - x0);
    const int step = 2;
    size_t hint[TRC_NPIPES] = {0};
    uint64_t prev[TRC_NPIPES] = {0}, pz = 0;
    int have = 0;
    const vw_model *m = v->m;
    /* zoomed out: columns snapped to the busy grid (a cell is at most a
     * quarter of a column, so the chart is the same to the eye); runs of
     * columns of one height (in whole pixels) are one rect */
    if ((v->t1 - v->t0) / (x1 - x0) * step >= 4.0 * (double)((uint64_t)1 << m->grid_shift) && m->ugrid) {
        const uint64_t *g = m->ugrid + (size_t)core * (m->ngrid + 1);
        float run_x = 0, run_h = 0;
        int run_w = 0;
        for (int px = 0; px < W; px += step) {
            float hh = 0;
            double ta = vw_x_to_t(v, x0 + px), tz = vw_x_to_t(v, x0 + px + step);
            double cell = (double)((uint64_t)1 << m->grid_shift);
            size_t ka = (size_t)NPU_MIN((double)m->ngrid, NPU_MAX(0.0, floor(ta / cell + 0.5)));
            size_t kz = (size_t)NPU_MIN((double)m->ngrid, NPU_MAX(0.0, floor(tz / cell + 0.5)));
            if (kz > ka && tz > m->t_min && ta < m->t_end) {
                double f = NPU_MIN(1.0, (double)(g[kz] - g[ka]) / ((double)(kz - ka) * cell) / 3.0);
                hh = f > 0.005 ? roundf((float)(f * h)) : 0;
            }
            if (run_w && hh != run_h) {
                if (run_h > 0)
                    vw_rect(o, run_x, y + h - run_h, (float)run_w, run_h, col);
                run_w = 0;
            }
            if (!run_w) {
                run_x = (float)(x0 + px);
                run_h = hh;
            }
            run_w += step;
        }
        /* the last run (the loop's end is not a multiple of step when W is odd) */
        if (run_w && run_h > 0)
            vw_rect(o, run_x, y + h - run_h, (float)run_w, run_h, col);
        return;
    }
    /* integer column edges shared by neighbours: each edge's prefix is
     * computed once; neighbouring columns that fill the same pixel rows are
     * one rect */
    int run_x = 0, run_w = 0, run_y = 0, run_h = 0;
#define UTIL_FLUSH()                                                                                   \
    do {                                                                                               \
        if (run_w)                                                                                     \
            vw_rect(o, (float)run_x, (float)run_y, (float)run_w, (float)run_h, col);                   \
        run_w = 0;                                                                                     \
    } while (0)
    for (int px = 0; px < W; px += step) {
        double ta = vw_x_to_t(v, x0 + px), tz = vw_x_to_t(v, x0 + px + step);
        if (tz <= m->t_min || ta >= m->t_end) {
            have = 0;
            UTIL_FLUSH();
            continue;
        }
        uint64_t a = ta > 0 ? (uint64_t)ta : 0, z = tz > 0 ? (uint64_t)tz : 0;
        if (z <= a)
            z = a + 1;
        double busy = 0;
        for (unsigned p = 0; p < TRC_NPIPES; p++) {
            const vw_track *t = vw_track_at(m, core, p);
            uint64_t ba = have && pz == a ? prev[p] : vw_track_busy_to(t, a, &hint[p]);
            uint64_t bz = vw_track_busy_to(t, z, &hint[p]);
            busy += (double)(bz - ba);
            prev[p] = bz;
        }
        pz = z;
        have = 1;
        double f = NPU_MIN(1.0, busy / (double)(z - a) / 3.0);
        if (f <= 0.005) {
            UTIL_FLUSH();
            continue;
        }
        /* the integer rows the software fill would cover */
        float fx = (float)(x0 + px);
        int yi = (int)(y + h - (float)(f * h)), hi = NPU_MAX((int)(float)(f * h), 1);
        if (run_w && (yi != run_y || hi != run_h || (int)fx != run_x + run_w))
            UTIL_FLUSH();
        if (!run_w) {
            run_x = (int)fx;
            run_y = yi;
            run_h = hi;
        }
        run_w += step;
    }
    UTIL_FLUSH();
#undef UTIL_FLUSH
}

/* The counter bins under pixel column px of the plot (from x0): ba..bz;
 * 0 when the column is outside the bins. */
static int px_bins(const vw_view *v, double x0, int px, size_t nbins, size_t *ba, size_t *bz)
{
    double wdt = (double)v->m->ctr_width;
    double ta = vw_x_to_t(v, x0 + px), tz = vw_x_to_t(v, x0 + px + 1);
    if (tz < 0 || ta / wdt >= (double)nbins)
        return 0;
    *ba = ta > 0 ? (size_t)(ta / wdt) : 0;
    *bz = (size_t)(tz / wdt);
    if (*bz >= nbins)
        *bz = nbins - 1;
    return 1;
}

static void draw_counter(vw_view *v, vw_cmds *o, const vw_counter *c, float y, float h)
{
    /* min/max of the bins under each pixel column */
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    int W = (int)(x1 - x0);
    if (c->max_rate <= 0)
        return;
    for (int px = 0; px < W; px++) {
        size_t ba, bz;
        if (!px_bins(v, x0, px, c->nbins, &ba, &bz))
            continue;
        double mn = 1e300, mx = 0;
        for (size_t k = ba; k <= bz; k++) {
            double r = vw_counter_rate(v->m, c, k);   /* delta per cycle */
            mn = NPU_MIN(mn, r);
            mx = NPU_MAX(mx, r);
        }
        if (mx <= 0)
            continue;
        float fmx = (float)(mx / c->max_rate * (h - 4)), fmn = (float)(mn / c->max_rate * (h - 4));
        vw_rect(o, (float)(x0 + px), y + h - 2 - fmx, 1, fmx - fmn + 1, 0x7FA7D9FF);
        if (fmn > 0)
            vw_rect(o, (float)(x0 + px), y + h - 2 - fmn, 1, fmn, 0x7FA7D960);
    }
}

double vw_heat_level(double rate, double max, int log_scale)
{
    if (!(rate > 0) || !(max > 0))
        return 0;
    double f = rate / max;
    if (log_scale)
        f = log10(f * 1000.0) / 3.0;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* Heat colour of f in [0, 1]: dark blue, mid blue, warm yellow. */
static uint32_t heat_colour(double f)
{
    static const unsigned st[3][3] = { { 0x2D, 0x44, 0x66 }, { 0x4F, 0x8F, 0xCB }, { 0xF2, 0xD0, 0x6B } };
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    int i = f < 0.5 ? 0 : 1;
    double u = f < 0.5 ? f * 2 : (f - 0.5) * 2;
    uint32_t c = 0xFF;
    for (int k = 0; k < 3; k++)
        c |= (uint32_t)(st[i][k] + (st[i + 1][k] - (double)st[i][k]) * u + 0.5) << (24 - 8 * k);
    return c;
}

/* One row per slice or channel; a pixel column's colour is the largest
 * rate of the bins under it, relative to the busiest row and bin. Columns
 * of one colour are one rectangle (zoomed out, a bin spans many pixels:
 * 37 bins over the demo's 1 150-pixel plot). */
static void draw_heat(vw_view *v, vw_cmds *o, const vw_heat *hm, float y, float h)
{
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    int W = (int)(x1 - x0);
    if (hm->max_rate <= 0 || !hm->n)
        return;
    float rh = (h - 4) / (float)hm->n;
    for (uint32_t row = 0; row < hm->n; row++) {
        float ry = y + 2 + rh * (float)row, rhh = NPU_MAX(rh - 0.5f, 1.0f);
        int run0 = 0;
        uint32_t run_c = 0;          /* 0: nothing drawn */
        for (int px = 0; px <= W; px++) {
            uint32_t c = 0;
            size_t ba, bz;
            if (px < W && px_bins(v, x0, px, hm->nbins, &ba, &bz)) {
                double mx = vw_heat_max(v->m, hm, row, ba, bz);
                if (mx > 0)
                    c = heat_colour(vw_heat_level(mx, hm->max_rate, v->heat_log));
            }
            if (px < W && c == run_c)
                continue;
            if (run_c)
                vw_rect(o, (float)(x0 + run0), ry, (float)(px - run0), rhh, run_c);
            run0 = px;
            run_c = c;
        }
    }
}

static void draw_hbm(vw_view *v, vw_cmds *o, const vw_lane_hbm *l, float y, float h)
{
    static const uint32_t cmdc[5] = { 0x6BAF8DFF, 0x5C8FCCFF, 0xD9A066FF, 0x8A9BB0FF, 0xC8625EFF };
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v), cpp = (v->t1 - v->t0) / (x1 - x0);
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((double)l->v[mid].t < v->t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo;
    while (i < l->n && (double)l->v[i].t < v->t1) {
        double x = vw_t_to_x(v, (double)l->v[i].t);
        vw_rect(o, (float)x, y + 1, (float)NPU_MAX(1.0, 1.0 / cpp), h - 2, cmdc[l->v[i].cmd % 5]);
        /* next tick in a later pixel */
        double tn = v->t0 + (floor(x - x0) + 1) * cpp;
        size_t a = i + 1, z = l->n;
        while (a < z) {
            size_t mid = (a + z) / 2;
            if ((double)l->v[mid].t < tn)
                a = mid + 1;
            else
                z = mid;
        }
        i = a;
    }
}

static void lane_y(const vw_view *v, const row *rows, size_t n, uint32_t core, unsigned pipe, float *y, float *h)
{
    *h = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].core == core && ((rows[i].k == ROW_LANE && rows[i].pipe == pipe) ||
                                     (rows[i].k == ROW_CORE && v->collapsed[core]))) {
            *y = lanes_top(v) + rows[i].y - v->scroll_y;
            *h = rows[i].h;
            return;
        }
}

static void arrow(vw_view *v, vw_cmds *o, float xa, float ya, float xb, float yb, uint32_t col)
{
    vw_line(o, xa, ya, xb, yb, col);
    float dx = xb - xa, dy = yb - ya, l = sqrtf(dx * dx + dy * dy);
    if (l < 1)
        return;
    dx /= l;
    dy /= l;
    float s = S(v, 7);
    vw_line(o, xb, yb, xb - s * dx + s * 0.5f * dy, yb - s * dy - s * 0.5f * dx, col);
    vw_line(o, xb, yb, xb - s * dx - s * 0.5f * dy, yb - s * dy + s * 0.5f * dx, col);
    vw_rect(o, xa - S(v, 2), ya - S(v, 2), S(v, 4), S(v, 4), col);
}

/* The flags a selected box hands off or waits for: sets on its pipe between
 * its start and the next box, waits on its pipe released just before it. */
static void draw_flows(vw_view *v, vw_cmds *o, const row *rows, size_t nr)
{
    const vw_box *b = sel_box(v);
    if (!b || v->sel.kind != 1)
        return;
    const vw_model *m = v->m;
    const vw_track *t = vw_track_at(m, v->sel.core, v->sel.pipe);
    uint64_t a = b->t0, z = v->sel.index + 1 < t->n ? t->box[v->sel.index + 1].t0 : b->t0 + b->dur + 1;
    z = NPU_MAX(z, b->t0 + b->dur + 1);
    size_t lo = 0, hi = m->nflows;
    uint64_t back = a > 2000000 ? a - 2000000 : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->flows[mid].t_set < back)
            lo = mid + 1;
        else
            hi = mid;
    }
    int drawn = 0;
    for (size_t i = lo; i < m->nflows && m->flows[i].t_set < z && drawn < 64; i++) {
        const vw_flow *f = &m->flows[i];
        if (f->core != v->sel.core || !f->t_wait1)
            continue;
        int out = f->src == v->sel.pipe && f->t_set >= a && f->t_set < z;
        int in = f->dst == v->sel.pipe && f->t_wait1 <= b->t0 + 1 && f->t_wait1 + 4 * (uint64_t)NPU_MAX(b->dur, 64u) >= b->t0;
        if (!out && !in)
            continue;
        float ya, ha, yb, hb;
        lane_y(v, rows, nr, f->core, f->src, &ya, &ha);
        lane_y(v, rows, nr, f->core, f->dst, &yb, &hb);
        if (!ha || !hb)
            continue;
        arrow(v, o, (float)vw_t_to_x(v, (double)f->t_set), ya + ha / 2, (float)vw_t_to_x(v, (double)f->t_wait1),
              yb + hb / 2, out ? 0xF0D090FF : 0x9FD0F0FF);
        drawn++;
    }
}

static void tooltip(vw_view *v, vw_cmds *o, const char *const *lines, int n)
{
    int w = 0, lh = line_h(v, VW_FONT_MONO);
    for (int i = 0; i < n; i++)
        w = NPU_MAX(w, text_w(v, VW_FONT_MONO, lines[i]));
    float bw = (float)w + S(v, 16), bh = (float)(n * lh) + S(v, 12);
    float x = (float)v->mx + S(v, 14), y = (float)v->my + S(v, 16);
    if (x + bw > v->w)
        x = (float)v->mx - bw - S(v, 8);
    if (y + bh > v->h)
        y = (float)v->my - bh - S(v, 8);
    vw_rect(o, x + S(v, 2), y + S(v, 3), bw, bh, 0x00000060);
    vw_rect(o, x, y, bw, bh, 0x30353EF8);
    vw_rect(o, x, y, bw, 1, 0x4A515CFF);
    for (int i = 0; i < n; i++)
        vw_text(o, x + S(v, 8), y + S(v, 6) + i * lh, VW_FONT_MONO, i == 0 ? C_TEXT : C_DIM, lines[i]);
}

/* The tooltip of a counter bin (kind 9) or heat map cell (kind 10). */
void vw_bin_lines(const vw_view *v, const vw_hit *h, char buf[3][160])
{
    static const char *const unit[VW_HEAT__N] = { "L2 slice", "HBM channel" };
    static const char *const what[VW_HEAT__N] = { "l2.bytes", "hbm.bytes_read + hbm.bytes_written" };
    const vw_model *m = v->m;
    uint64_t a = (uint64_t)h->index * m->ctr_width, z = NPU_MIN(a + m->ctr_width, m->t_end);
    double rate, mx;
    if (h->kind == 9) {
        const vw_counter *c = &m->ctr[h->core];
        rate = vw_counter_rate(m, c, h->index);
        mx = c->max_rate;
        snprintf(buf[0], 160, "%s", c->name);
    } else {
        const vw_heat *hm = &m->heat[h->core];
        rate = vw_heat_rate(m, hm, h->pipe, h->index);
        mx = hm->max_rate;
        snprintf(buf[0], 160, "%s %u: %s", unit[h->core], h->pipe, what[h->core]);
    }
    char ca[32], cz[32];
    fmt_cyc(ca, sizeof ca, (double)a);
    fmt_cyc(cz, sizeof cz, (double)z);
    snprintf(buf[1], 160, "cycles %s .. %s", ca, cz);
    snprintf(buf[2], 160, "%.4g per cycle (%.0f %% of the track's maximum)", rate, mx > 0 ? 100 * rate / mx : 0.0);
}

static void box_lines(const vw_view *v, const vw_hit *h, char buf[6][160])
{
    const vw_model *m = v->m;
    const vw_track *t = vw_track_at(m, h->core, h->pipe);
    const vw_box *b = h->kind == 1 ? &t->box[h->index] : &t->stall[h->index];
    const char *dis = trc_reader_disasm(m->r, b->pc);
    const trc_symbol *lb = trc_reader_label_at(m->r, b->pc);
    if (h->kind == 1) {
        snprintf(buf[0], 160, "%s", dis ? dis : vw_op_name(m, b->op));
        snprintf(buf[1], 160, "pc 0x%x  %s%s%s", b->pc, vw_stack_name(m, b->stack), lb ? "" : "", "");
    } else {
        snprintf(buf[0], 160, "stall: %s", vw_cause_name(m, b->op));
        snprintf(buf[1], 160, "waiting: pc 0x%x  %s", b->pc, dis ? dis : "");   /* stall_owners */
    }
    snprintf(buf[2], 160, "core %u  pipe %s", h->core, trc_pipe_name(h->pipe));
    char s0[32], s1[32];
    fmt_big(s0, sizeof s0, b->t0);
    fmt_big(s1, sizeof s1, b->dur);
    snprintf(buf[3], 160, "start %s  duration %s cycles", s0, s1);
    double ns = m->meta->clock_ghz > 0 ? b->dur / m->meta->clock_ghz : 0;
    snprintf(buf[4], 160, "       %.3f µs  (%.1f ns)", b->t0 / (m->meta->clock_ghz > 0 ? m->meta->clock_ghz : 1) / 1e3, ns);
    buf[5][0] = 0;
    if (h->kind == 1) {
        /* the stall (if any) that ends where this instruction starts */
        size_t k = vw_track_first(t->smaxend, t->ns, b->t0 > 0 ? b->t0 - 1 : 0);
        for (; k < t->ns && t->stall[k].t0 <= b->t0; k++)
            if (t->stall[k].t0 + t->stall[k].dur >= b->t0 && t->stall[k].t0 + t->stall[k].dur <= b->t0 + 1) {
                snprintf(buf[5], 160, "stalled before: %s, %u cycles", vw_cause_name(m, t->stall[k].op),
                         t->stall[k].dur);
                break;
            }
    }
}

static void draw_range_panel(vw_view *v, vw_cmds *o)
{
    float y = lanes_bottom(v), h = S(v, PANEL_H);
    vw_rect(o, 0, y, (float)v->w, h, C_PANEL);
    vw_line(o, 0, y, (float)v->w, y, C_GRID);
    float lh = (float)line_h(v, VW_FONT_MONO);
    if (v->has_range) {
        if (v->rtab_dirty) {
            npu_diag d;
            if (vw_range_table(v->m, v->r0, v->r1, &v->rtab, &d))
                snprintf(v->status, sizeof v->status, "%.150s", d.msg);
            v->rtab_dirty = 0;
        }
        char b[200], a0[32], a1[32], a2[32];
        fmt_big(a0, sizeof a0, v->r0);
        fmt_big(a1, sizeof a1, v->r1);
        fmt_big(a2, sizeof a2, v->r1 - v->r0);
        snprintf(b, sizeof b, "range %s .. %s  (%s cycles)   per pipe and opcode", a0, a1, a2);
        vw_text(o, S(v, 10), y + S(v, 6), VW_FONT_UI, C_ACCENT, b);
        float ty = y + S(v, 8) + line_h(v, VW_FONT_UI);
        float cols[5] = { S(v, 10), S(v, 70), S(v, 210), S(v, 290), S(v, 400) };
        const char *hd[5] = { "pipe", "opcode", "count", "busy cycles", "% of range x cores" };
        for (int i = 0; i < 5; i++)
            vw_text(o, cols[i], ty, VW_FONT_SMALL, C_DIM, hd[i]);
        ty += lh;
        float colw = S(v, 560);
        int per_col = (int)((y + h - ty - S(v, 4)) / lh);
        double den = (double)(v->r1 - v->r0) * v->m->ncores;
        for (size_t i = 0; i < v->rtab.n && per_col > 0; i++) {
            const vw_hrow *r = &v->rtab.row[i];
            int cc = (int)(i / (size_t)per_col);
            float ox = cc * colw, ry = ty + (float)(i % (size_t)per_col) * lh;
            if (cols[4] + ox + S(v, 150) > v->w)
                break;
            char c[32], bz[32], pc[32];
            fmt_big(c, sizeof c, r->count);
            fmt_big(bz, sizeof bz, r->busy);
            double pct = den > 0 ? 100.0 * (double)r->busy / den : 0;
            snprintf(pc, sizeof pc, "%5.1f%%", pct);
            vw_rect(o, cols[0] + ox, ry + lh * 0.2f, S(v, 8), lh * 0.6f, vw_pipe_color(r->pipe, (unsigned)r->key & 0xFFFF));
            vw_text(o, cols[0] + ox + S(v, 12), ry, VW_FONT_MONO, C_TEXT, trc_pipe_name(r->pipe));
            vw_text(o, cols[1] + ox, ry, VW_FONT_MONO, C_TEXT, r->name);
            vw_text(o, cols[2] + ox, ry, VW_FONT_MONO, C_TEXT, c);
            vw_text(o, cols[3] + ox, ry, VW_FONT_MONO, C_TEXT, bz);
            vw_rect(o, cols[4] + ox + S(v, 52), ry + lh * 0.25f, (float)(pct / 100.0 * S(v, 90)), lh * 0.5f,
                    vw_pipe_base_color(r->pipe));
            vw_text(o, cols[4] + ox, ry, VW_FONT_MONO, C_TEXT, pc);
        }
    } else if (v->has_sel && (v->sel.kind == 1 || v->sel.kind == 2)) {
        char lines[6][160];
        box_lines(v, &v->sel, lines);
        vw_text(o, S(v, 10), y + S(v, 6), VW_FONT_UI, C_ACCENT, v->sel.kind == 1 ? "instruction" : "stall");
        for (int i = 0; i < 6; i++)
            vw_text(o, S(v, 10), y + S(v, 10) + line_h(v, VW_FONT_UI) + i * lh, VW_FONT_MONO,
                    i ? C_DIM : C_TEXT, lines[i]);
        vw_text(o, S(v, 10), y + h - lh - S(v, 6), VW_FONT_SMALL, C_DIM,
                "arrows: flags this instruction sets (gold) and the waits it was released by (blue)   ·   F: fit   Esc: clear");
    }
}

static void draw_timeline(vw_view *v, vw_cmds *o)
{
    const vw_model *m = v->m;
    row *rows = npu_malloc(MAXROWS * sizeof *rows);
    if (!rows)
        return;
    size_t n = layout(v, rows, MAXROWS);
    float top = lanes_top(v), bot = lanes_bottom(v), x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    draw_overview(v, o);
    draw_axis(v, o, bot);
    vw_clip(o, 0, top, (float)v->w, bot - top);
    for (size_t i = 0; i < n; i++) {
        row *r = &rows[i];
        float y = top + r->y - v->scroll_y;
        if (y + r->h < top || y > bot)
            continue;
        char b[96];
        switch (r->k) {
        case ROW_CTR: {
            const vw_counter *c = &m->ctr[r->core];
            vw_rect(o, 0, y, (float)v->w, r->h, 0x22262CFF);
            vw_text(o, S(v, 8), y + S(v, 3), VW_FONT_SMALL, C_TEXT, c->name);
            snprintf(b, sizeof b, "max %.3g /cyc", c->max_rate);
            vw_text(o, S(v, 8), y + S(v, 3) + line_h(v, VW_FONT_SMALL), VW_FONT_SMALL, C_DIM, b);
            draw_counter(v, o, c, y, r->h);
            vw_line(o, 0, y + r->h - 1, (float)v->w, y + r->h - 1, C_GRID);
            break;
        }
        case ROW_HEAT: {
            static const char *const title[VW_HEAT__N] = { "L2 slices", "HBM channels" };
            static const char *const what[VW_HEAT__N] = { "l2.bytes", "hbm.bytes_*" };
            const vw_heat *hm = &m->heat[r->core];
            vw_rect(o, 0, y, (float)v->w, r->h, 0x22262CFF);
            vw_text(o, S(v, 8), y + S(v, 3), VW_FONT_SMALL, C_TEXT, title[r->core]);
            snprintf(b, sizeof b, "%s, 0..%u", what[r->core], hm->n - 1);
            vw_text(o, S(v, 8), y + S(v, 3) + line_h(v, VW_FONT_SMALL), VW_FONT_SMALL, C_DIM, b);
            snprintf(b, sizeof b, "max %.3g B/cyc%s", hm->max_rate, v->heat_log ? ", log" : "");
            vw_text(o, S(v, 8), y + S(v, 3) + 2 * line_h(v, VW_FONT_SMALL), VW_FONT_SMALL, C_DIM, b);
            vw_clip(o, x0, NPU_MAX(y, top), x1 - x0, NPU_MIN(r->h, bot - y));
            draw_heat(v, o, hm, y, r->h);
            vw_clip(o, 0, top, (float)v->w, bot - top);
            vw_line(o, 0, y + r->h - 1, (float)v->w, y + r->h - 1, C_GRID);
            break;
        }
        case ROW_CORE: {
            vw_rect(o, 0, y, (float)v->w, r->h, C_PANEL2);
            snprintf(b, sizeof b, "%s core %u", v->collapsed[r->core] ? "▸" : "▾", r->core);
            vw_text(o, S(v, 8), y + (r->h - line_h(v, VW_FONT_UI)) / 2, VW_FONT_UI, C_TEXT, b);
            /* translucent lavender over the header's panel grey, as an opaque colour */
            draw_util(v, o, r->core, y + S(v, 2), r->h - S(v, 3), over(0x8C7BC480, C_PANEL2));
            vw_line(o, 0, y + r->h - 1, (float)v->w, y + r->h - 1, C_GRID);
            break;
        }
        case ROW_LANE: {
            const vw_track *t = vw_track_at(m, r->core, r->pipe);
            vw_rect(o, S(v, 14), y + r->h * 0.25f, S(v, 4), r->h * 0.5f, vw_pipe_base_color(r->pipe));
            vw_text(o, S(v, 24), y + (r->h - line_h(v, VW_FONT_SMALL)) / 2, VW_FONT_SMALL, C_DIM,
                    trc_pipe_name(r->pipe));
            vw_clip(o, x0, NPU_MAX(y, top), x1 - x0, NPU_MIN(r->h, bot - y));
            float bh = r->h * 0.62f - 1;
            const vw_lod *lb = pick_lod(v, t->lod), *ls = pick_lod(v, t->slod);
            if (lb)
                draw_runs(v, o, lb->r, lb->n, t->box, r->pipe, y + 1, bh, 0);
            else
                draw_boxes(v, o, t->box, t->maxend, t->n, r->pipe, y + 1, bh, 0, 1);
            if (ls)
                draw_runs(v, o, ls->r, ls->n, t->stall, r->pipe, y + 1 + bh + 1, r->h - bh - 3, 1);
            else
                draw_boxes(v, o, t->stall, t->smaxend, t->ns, r->pipe, y + 1 + bh + 1, r->h - bh - 3, 1, 0);
            vw_clip(o, 0, top, (float)v->w, bot - top);
            vw_line(o, x0, y + r->h - 1, x1, y + r->h - 1, 0x2A2F37FF);
            break;
        }
        case ROW_HBM_HDR:
            vw_rect(o, 0, y, (float)v->w, r->h, C_PANEL2);
            vw_text(o, S(v, 8), y + (r->h - line_h(v, VW_FONT_UI)) / 2, VW_FONT_UI, C_TEXT,
                    "HBM channels (ACT RD WR PRE REF)");
            break;
        case ROW_HBM:
            if (r->core % 2 == 0) {
                snprintf(b, sizeof b, "ch %u", r->core / 2);
                if (r->h >= line_h(v, VW_FONT_SMALL) * 0.5f && r->core % 8 == 0)
                    vw_text(o, S(v, 24), y - S(v, 2), VW_FONT_SMALL, C_DIM, b);
            }
            vw_clip(o, x0, NPU_MAX(y, top), x1 - x0, NPU_MIN(r->h, bot - y));
            draw_hbm(v, o, &m->hbm[r->core], y, r->h);
            vw_clip(o, 0, top, (float)v->w, bot - top);
            break;
        }
    }
    /* separator of the label column */
    vw_line(o, x0 - 1, top, x0 - 1, bot, C_GRID);
    /* selection range */
    if (v->has_range || v->drag_select) {
        double a = v->has_range ? (double)v->r0 : v->drag_t, z = v->has_range ? (double)v->r1 : vw_x_to_t(v, v->mx);
        float xa = (float)vw_t_to_x(v, NPU_MIN(a, z)), xb = (float)vw_t_to_x(v, NPU_MAX(a, z));
        xa = NPU_MAX(xa, x0);
        xb = NPU_MIN(xb, x1);
        if (xb > xa) {
            vw_rect(o, xa, top, xb - xa, bot - top, C_SEL);
            vw_line(o, xa, top, xa, bot, 0x61AFEFFF);
            vw_line(o, xb, top, xb, bot, 0x61AFEFFF);
        }
    }
    /* the selected box: outline, and its flag arrows */
    const vw_box *sb = sel_box(v);
    if (sb) {
        float ly, lh;
        lane_y(v, rows, n, v->sel.core, v->sel.pipe, &ly, &lh);
        if (lh) {
            float xa = (float)vw_t_to_x(v, (double)sb->t0), xb = (float)vw_t_to_x(v, (double)(sb->t0 + sb->dur));
            if (xb - xa < 3)
                xb = xa + 3;
            uint32_t c = 0xFFFFFFFF;
            vw_line(o, xa, ly, xb, ly, c);
            vw_line(o, xa, ly + lh - 1, xb, ly + lh - 1, c);
            vw_line(o, xa, ly, xa, ly + lh - 1, c);
            vw_line(o, xb, ly, xb, ly + lh - 1, c);
        }
        draw_flows(v, o, rows, n);
    }
    vw_unclip(o);
    if (panel_open(v))
        draw_range_panel(v, o);
    /* hover tooltip */
    if (!v->drag && !v->help) {
        vw_hit h = vw_hit_test(v, v->mx, v->my);
        if (h.kind == 1 || h.kind == 2) {
            char lines[6][160];
            box_lines(v, &h, lines);
            const char *lp[6];
            int nl = 0;
            for (int i = 0; i < 6; i++)
                if (lines[i][0])
                    lp[nl++] = lines[i];
            tooltip(v, o, lp, nl);
        } else if (h.kind == 9 || h.kind == 10) {
            char lines[3][160];
            vw_bin_lines(v, &h, lines);
            const char *lp[3] = { lines[0], lines[1], lines[2] };
            tooltip(v, o, lp, 3);
        }
    }
    npu_free(rows);
}

/* ---- flame graph ------------------------------------------------------------ */
static void draw_flame(vw_view *v, vw_cmds *o)
{
    ensure_flame(v);
    const vw_flame *f = &v->flame;
    char b[200];
    float hy = S(v, TOPBAR + 6);
    char r0[32], r1[32];
    fmt_big(r0, sizeof r0, v->has_range ? v->r0 : v->m->t_min);
    fmt_big(r1, sizeof r1, v->has_range ? v->r1 : v->m->t_end);
    snprintf(b, sizeof b, "%s flame graph (%s cycles) of %s .. %s   ·   T: busy/stalls   I: icicle/flame   click: zoom   Esc: up",
             v->flame_icicle ? "icicle" : "flame", v->flame_stalls ? "stall" : "busy", r0, r1);
    vw_text(o, S(v, 10), hy, VW_FONT_UI, C_DIM, b);
    if (!f->count || !f->n[0].w) {
        vw_text(o, S(v, 10), hy + S(v, 40), VW_FONT_UI, C_TEXT, "(nothing in this range)");
        return;
    }
    int32_t z = v->flame_zoom >= 0 ? v->flame_zoom : 0;
    double zw = (double)f->n[z].w;
    float rh = flame_row_h(v);
    int32_t hover = -1;
    vw_hit hh = vw_hit_test(v, v->mx, v->my);
    if (hh.kind == 4)
        hover = (int32_t)hh.index;
    for (size_t i = 0; i < f->count; i++) {
        const vw_fnode *n = &f->n[i];
        float x, w;
        flame_x(v, (int32_t)i, &x, &w);
        if (w < 1)
            continue;   /* frames narrower than a pixel are not drawn (their parent covers them) */
        float y = flame_y(v, n->depth);
        if (y < S(v, TOPBAR + 24) || y > v->h - S(v, STATUS))
            continue;
        uint32_t col = n->pipe >= 0 ? vw_pipe_color((unsigned)n->pipe, n->depth) : warm(n->name);
        int above = 0;
        for (int32_t k = z; k >= 0; k = f->n[k].parent)
            above |= k == (int32_t)i && k != z;
        if (above)
            col = shade(col, 0.6f);
        if ((int32_t)i == hover)
            col = shade(col, 1.25f);
        vw_rect(o, x, y, NPU_MAX(w - 1, 1.0f), rh - 1, col);
        if (w > S(v, 30)) {
            double pct = zw > 0 ? 100.0 * n->w / zw : 0;
            snprintf(b, sizeof b, "%s %.1f%%", n->name, pct > 100 ? 100 : pct);
            if (text_w(v, VW_FONT_SMALL, b) + S(v, 8) > w)
                snprintf(b, sizeof b, "%s", n->name);
            if (text_w(v, VW_FONT_SMALL, b) + S(v, 8) <= w) {
                vw_clip(o, x, y, w, rh);
                vw_text(o, x + S(v, 4), y + (rh - line_h(v, VW_FONT_SMALL)) / 2, VW_FONT_SMALL, 0x1A1D22FF, b);
                vw_unclip(o);
            }
        }
    }
    if (hover >= 0) {
        const vw_fnode *n = &f->n[hover];
        char l0[160], l1[160], l2[160];
        char wb[32];
        fmt_big(wb, sizeof wb, n->w);
        snprintf(l0, sizeof l0, "%s", n->name);
        snprintf(l1, sizeof l1, "%s %s cycles", wb, f->stalls ? "stall" : "busy");
        snprintf(l2, sizeof l2, "%.2f%% of %s, %.2f%% of all", zw ? 100.0 * n->w / zw : 0, f->n[z].name,
                 f->n[0].w ? 100.0 * n->w / f->n[0].w : 0);
        const char *lp[3] = { l0, l1, l2 };
        tooltip(v, o, lp, 3);
    }
}

/* ---- hotspots ---------------------------------------------------------------- */
static void draw_hotspots(vw_view *v, vw_cmds *o)
{
    static const char *keys[VW_HK__N] = { "Functions", "Labels", "PCs", "Opcodes" };
    if (v->htab_dirty) {
        npu_diag d;
        if (vw_hotspots(v->m, v->hkey, v->has_range ? v->r0 : 0, v->has_range ? v->r1 : 0, &v->htab, &d))
            snprintf(v->status, sizeof v->status, "%.150s", d.msg);
        vw_table_sort(&v->htab, v->hsort);
        v->htab_dirty = 0;
    }
    float y = S(v, TOPBAR + 4);
    for (int i = 0; i < VW_HK__N; i++) {
        float bx = S(v, 8) + i * S(v, 96);
        vw_rect(o, bx, y, S(v, 92), S(v, 24), (int)v->hkey == i ? 0x3A4150FF : C_PANEL);
        vw_text(o, bx + S(v, 10), y + (S(v, 24) - line_h(v, VW_FONT_UI)) / 2, VW_FONT_UI,
                (int)v->hkey == i ? C_ACCENT : C_DIM, keys[i]);
    }
    char b[200];
    snprintf(b, sizeof b, "K: next grouping   click a column to sort   %s", v->has_range ? "(selected range)" : "(whole run)");
    vw_text(o, S(v, 8) + 4 * S(v, 96) + S(v, 10), y + S(v, 4), VW_FONT_SMALL, C_DIM, b);
    float hy = S(v, TOPBAR + 34), lh = (float)line_h(v, VW_FONT_MONO) + S(v, 3);
    vw_rect(o, 0, hy, (float)v->w, S(v, 22), C_PANEL);
    float cx[4] = { 0.01f, 0.55f, 0.66f, 0.82f };
    const char *hd[4] = { v->hkey == VW_HK_PC ? "pc       pipe  disassembly" : "name", "count", "busy cycles", "stall cycles" };
    for (int i = 0; i < 4; i++) {
        snprintf(b, sizeof b, "%s%s", hd[i], v->hsort == i ? (i ? " ▼" : " ▲") : "");
        vw_text(o, cx[i] * v->w + S(v, 4), hy + (S(v, 22) - line_h(v, VW_FONT_UI)) / 2, VW_FONT_UI,
                v->hsort == i ? C_ACCENT : C_TEXT, b);
    }
    float ry = hy + S(v, 24);
    int maxr = (int)((v->h - S(v, STATUS) - ry) / lh);
    for (size_t i = 0; i < v->htab.n && (int)i < maxr; i++) {
        const vw_hrow *r = &v->htab.row[i];
        if (i % 2)
            vw_rect(o, 0, ry, (float)v->w, lh, 0x23272DFF);
        char c[32], bz[32], sz[32];
        fmt_big(c, sizeof c, r->count);
        fmt_big(bz, sizeof bz, r->busy);
        fmt_big(sz, sizeof sz, r->stall);
        double pb = v->htab.total_busy ? 100.0 * r->busy / v->htab.total_busy : 0;
        double ps = v->htab.total_stall ? 100.0 * r->stall / v->htab.total_stall : 0;
        vw_text(o, cx[0] * v->w + S(v, 4), ry + S(v, 1), VW_FONT_MONO, C_TEXT, r->name);
        vw_text(o, cx[1] * v->w + S(v, 4), ry + S(v, 1), VW_FONT_MONO, C_TEXT, c);
        float bw = 0.1f * v->w;
        vw_rect(o, cx[2] * v->w + S(v, 2), ry + 1, (float)(pb / 100 * bw), lh - 2, 0x8C7BC450);
        snprintf(b, sizeof b, "%s  %.1f%%", bz, pb);
        vw_text(o, cx[2] * v->w + S(v, 4), ry + S(v, 1), VW_FONT_MONO, C_TEXT, b);
        vw_rect(o, cx[3] * v->w + S(v, 2), ry + 1, (float)(ps / 100 * bw), lh - 2, 0xC8625E50);
        snprintf(b, sizeof b, "%s  %.1f%%", sz, ps);
        vw_text(o, cx[3] * v->w + S(v, 4), ry + S(v, 1), VW_FONT_MONO, C_TEXT, b);
        if (r->stall) {   /* the row's main stall cause, dim, after its share */
            int tw = v->tm.width ? v->tm.width(v->tm.ctx, VW_FONT_MONO, b) : (int)(strlen(b) * 0.6f * line_h(v, VW_FONT_MONO));
            vw_text(o, cx[3] * v->w + S(v, 4) + (float)tw + S(v, 10), ry + S(v, 1), VW_FONT_MONO, C_DIM,
                    vw_cause_name(v->m, vw_slot_cause(vw_hrow_top_cause(r))));
        }
        ry += lh;
    }
}

/* ---- counters: stat groups and the roofline ------------------------------------ */
static void kv(vw_view *v, vw_cmds *o, float x, float *y, const char *k, const char *val)
{
    vw_text(o, x, *y, VW_FONT_MONO, C_DIM, k);
    vw_text(o, x + S(v, 190), *y, VW_FONT_MONO, C_TEXT, val);
    *y += line_h(v, VW_FONT_MONO) + S(v, 1);
}

static double bytes_in(const vw_model *m, uint64_t a, uint64_t z)
{
    /* GM traffic: the GM byte counters (HBM ones when there are no GM
     * ones), else MEM events */
    double s = vw_bytes_counters(m, "gm", a, z);
    if (s < 0)
        s = vw_bytes_counters(m, "hbm", a, z);
    if (s >= 0)
        return s;
    if (a <= m->t_min && z >= m->t_end)
        return (double)m->mem_bytes;
    return m->mem_bytes * (double)(z - a) / (double)(m->t_end - m->t_min);
}

static void draw_counters(vw_view *v, vw_cmds *o)
{
    const vw_model *m = v->m;
    float x = S(v, 16), y = S(v, TOPBAR + 12);
    char b[128], c[64];
    uint64_t cyc = m->t_end - m->t_min;
    vw_text(o, x, y, VW_FONT_UI, C_ACCENT, "run");
    y += line_h(v, VW_FONT_UI) + S(v, 2);
    fmt_big(c, sizeof c, cyc);
    kv(v, o, x, &y, "cycles", c);
    snprintf(b, sizeof b, "%.2f µs", (double)cyc / (m->meta->clock_ghz > 0 ? m->meta->clock_ghz : 1) / 1e3);
    kv(v, o, x, &y, "time", b);
    snprintf(b, sizeof b, "%u", m->ncores);
    kv(v, o, x, &y, "cores", b);
    fmt_big(c, sizeof c, m->n_events);
    kv(v, o, x, &y, "events", c);
    fmt_big(c, sizeof c, m->n_insn);
    kv(v, o, x, &y, "instructions", c);
    y += S(v, 8);
    vw_text(o, x, y, VW_FONT_UI, C_ACCENT, "pipes (all cores)");
    y += line_h(v, VW_FONT_UI) + S(v, 2);
    snprintf(b, sizeof b, "%-6s %9s  %7s  %7s  %8s", "", "busy", "util", "insns", "stall");
    vw_text(o, x + S(v, 14), y, VW_FONT_MONO, C_DIM, b);
    y += line_h(v, VW_FONT_UI) + S(v, 2);
    const uint64_t *stall_by = m->cause_stall;
    for (unsigned p = 0; p < TRC_NPIPES; p++) {
        uint64_t busy = 0, n = 0, st = m->pipe_stall[p];
        for (uint32_t k = 0; k < m->ncores; k++) {
            const vw_track *t = vw_track_at(m, k, p);
            busy += t->cum[t->n];
            n += t->n;
        }
        char bz[32], nn[32], ss[32];
        fmt_cyc(bz, sizeof bz, (double)busy);
        fmt_cyc(nn, sizeof nn, (double)n);
        fmt_cyc(ss, sizeof ss, (double)st);
        snprintf(b, sizeof b, "%-6s %9s  %6.1f%%  %7s  %8s", trc_pipe_name(p), bz,
                 100.0 * busy / ((double)cyc * m->ncores), nn, ss);
        vw_rect(o, x, y + S(v, 3), S(v, 8), line_h(v, VW_FONT_MONO) - S(v, 6), vw_pipe_base_color(p));
        vw_text(o, x + S(v, 14), y, VW_FONT_MONO, C_TEXT, b);
        y += line_h(v, VW_FONT_MONO) + S(v, 1);
    }
    y += S(v, 8);
    vw_text(o, x, y, VW_FONT_UI, C_ACCENT, "stall cycles by cause");
    y += line_h(v, VW_FONT_UI) + S(v, 2);
    for (unsigned i = 0; i < VW_CAUSE_SLOTS; i++) {
        if (!stall_by[i])
            continue;
        fmt_big(c, sizeof c, stall_by[i]);
        kv(v, o, x, &y, vw_cause_name(m, vw_slot_cause(i)), c);
    }
    y += S(v, 8);
    if (m->nctr) {
        vw_text(o, x, y, VW_FONT_UI, C_ACCENT, "counters (sum over units)");
        y += line_h(v, VW_FONT_UI) + S(v, 2);
        for (size_t i = 0; i < m->nctr && y < v->h - S(v, 40); i++) {
            /* the total, not a sum of the samples: they are cumulative */
            fmt_big(c, sizeof c, m->ctr[i].total);
            kv(v, o, x, &y, m->ctr[i].name, c);
        }
    }
    /* roofline, log-log: ops/cycle against ops/byte */
    float rx = NPU_MAX((float)v->w * 0.48f, S(v, 520)), ry = S(v, TOPBAR + 40);
    float rw = (float)v->w - rx - S(v, 30), rh = NPU_MIN((float)v->h - ry - S(v, 70), rw * 0.75f);
    if (rw < S(v, 150) || rh < S(v, 100))
        return;
    vw_text(o, rx, ry - S(v, 26), VW_FONT_UI, C_ACCENT, "roofline (chip)");
    vw_rect(o, rx, ry, rw, rh, 0x22262CFF);
    double P = m->peak_ops_per_cycle, B = m->peak_bytes_per_cycle;
    double ridge = P / B;
    double lx0 = log10(ridge) - 3, lx1 = log10(ridge) + 2, ly1 = log10(P) + 0.5, ly0 = ly1 - 5;
#define RX(ai) (rx + (float)((log10(ai) - lx0) / (lx1 - lx0)) * rw)
#define RY(op) (ry + rh - (float)((log10(op) - ly0) / (ly1 - ly0)) * rh)
    for (int d = (int)ceil(lx0); d <= (int)floor(lx1); d++) {
        float gx = RX(pow(10, d));
        vw_line(o, gx, ry, gx, ry + rh, C_GRID);
        snprintf(b, sizeof b, "1e%d", d);
        vw_text(o, gx - S(v, 8), ry + rh + S(v, 4), VW_FONT_SMALL, C_DIM, b);
    }
    for (int d = (int)ceil(ly0); d <= (int)floor(ly1); d++) {
        float gy = RY(pow(10, d));
        vw_line(o, rx, gy, rx + rw, gy, C_GRID);
        snprintf(b, sizeof b, "1e%d", d);
        vw_text(o, rx - S(v, 34), gy - S(v, 7), VW_FONT_SMALL, C_DIM, b);
    }
    vw_text(o, rx + rw / 2 - S(v, 120), ry + rh + S(v, 22), VW_FONT_SMALL, C_DIM,
            "arithmetic intensity (ops / byte)");
    vw_text(o, rx + S(v, 130), ry - S(v, 22), VW_FONT_SMALL, C_DIM, "y: ops / cycle (log)   x: ops / byte (log)");
    /* the roofs (a hierarchical roofline, as npusim stat's verdict:
     * docs/stat.md): each memory level's bandwidth slope up to its ridge,
     * compute flat after the memory's. With an L2, GM bytes meet the L2's
     * roof and HBM bytes the HBM's. */
    double a0 = pow(10, lx0), a1 = pow(10, lx1);
    double BL = m->l2_bytes_per_cycle, ridge_l2 = BL > 0 ? P / BL : 0;
    const uint32_t c_mem = 0x5C8FCCFF, c_l2 = 0x56B6A0FF;
    vw_clip(o, rx, ry, rw, rh);
    for (int w = 0; w < 2; w++) {
        vw_line(o, RX(a0), RY(a0 * B) - w, RX(ridge), RY(P) - w, c_mem);
        if (BL > 0)
            vw_line(o, RX(a0), RY(a0 * BL) - w, RX(ridge_l2), RY(P) - w, c_l2);
        vw_line(o, RX(BL > 0 ? ridge_l2 : ridge), RY(P) - w, RX(a1), RY(P) - w, 0x8C7BC4FF);
    }
    vw_unclip(o);
    snprintf(b, sizeof b, "compute %.3g ops/cyc", P);
    vw_text(o, RX(ridge) + S(v, 6), RY(P) + S(v, 4), VW_FONT_SMALL, 0xB0A4E0FF, b);
    snprintf(b, sizeof b, "%s %.3g B/cyc", m->fixed_port ? "GM port" : "HBM", B);
    vw_text(o, RX(ridge / 30) + S(v, 4), RY(ridge / 30 * B) - S(v, 2), VW_FONT_SMALL, 0x8FB5E0FF, b);
    if (BL > 0) {
        snprintf(b, sizeof b, "L2 %.3g B/cyc", BL);
        float tw = (float)text_w(v, VW_FONT_SMALL, b);
        vw_text(o, RX(ridge_l2 / 30) - tw - S(v, 4), RY(ridge_l2 / 30 * BL) - S(v, 12), VW_FONT_SMALL, 0x7FD1BCFF, b);
    }
    /* points: the kernel, and the selected range; against the L2 roof (GM
     * bytes) and, when the trace has HBM commands, the HBM's (HBM bytes) */
    int row = 0;
    const char *hbm_how = "RD/WR commands x atom";
    for (int pass = 0; pass < 1 + v->has_range; pass++) {
        uint64_t a = pass ? v->r0 : m->t_min, z = pass ? v->r1 : m->t_end;
        double mb = 0;
        for (uint32_t k = 0; k < m->ncores; k++)
            mb += (double)vw_track_busy(vw_track_at(m, k, TRC_PIPE_M), a, z);
        double ops = mb * m->cube_ops_per_busy_cycle, cy = (double)(z - a);
        double gmb = bytes_in(m, a, z), hb = BL > 0 ? vw_hbm_bytes(m, a, z, &hbm_how) : -1;
        const char *who = pass ? "range" : m->meta->kernel ? m->meta->kernel : "kernel";
        if (ops <= 0 || gmb <= 0 || cy <= 0) {
            vw_text(o, rx + S(v, 8), ry + S(v, 8) + row++ * S(v, 16), VW_FONT_SMALL, C_DIM,
                    pass ? "range: no cube work or no GM bytes" : "kernel: no cube work or no GM bytes in the trace");
            continue;
        }
        for (int lvl = 0; lvl < 2; lvl++) {
            double bytes = lvl ? hb : gmb, roof_bw = lvl || BL <= 0 ? B : BL;
            if (bytes <= 0)
                continue;
            double ai = ops / bytes, perf = ops / cy;
            float px = RX(NPU_MAX(ai, a0)), py = RY(NPU_MAX(perf, pow(10, ly0)));
            uint32_t col = pass ? 0x61AFEFFF : lvl ? 0xE5A05AFF : C_ACCENT;
            vw_rect(o, px - S(v, 5), py - S(v, 5), S(v, 10), S(v, 10), col);
            const char *lv = BL <= 0 ? "" : lvl ? " HBM" : " L2";
            snprintf(b, sizeof b, "%s%s  AI %.3g  %.3g ops/cyc (%.1f%% of roof)", who, lv, ai, perf,
                     100 * perf / NPU_MIN(P, ai * roof_bw));
            /* a short tag at the point; the figures in the legend under the plot */
            const char *tag = BL <= 0 ? (pass ? "range" : "kernel") : lvl ? (pass ? "range HBM" : "HBM")
                                                                       : (pass ? "range L2" : "L2");
            float tw = (float)text_w(v, VW_FONT_SMALL, tag);
            float tx = px + S(v, 8) + tw > rx + rw ? px - S(v, 8) - tw : px + S(v, 8);
            vw_text(o, tx, py + (lvl ? S(v, 2) : -S(v, 18)) + pass * S(v, 14), VW_FONT_SMALL, col, tag);
            vw_rect(o, rx, ry + rh + S(v, 62) + row * S(v, 16), S(v, 8), S(v, 8), col);
            vw_text(o, rx + S(v, 14), ry + rh + S(v, 56) + row++ * S(v, 16), VW_FONT_SMALL, col, b);
        }
    }
    if (BL > 0)
        snprintf(b, sizeof b, "ops = cube busy cycles x 2 x f16 MACs/cycle; L2: GM bytes; HBM: %s", hbm_how);
    vw_text(o, rx, ry + rh + S(v, 40), VW_FONT_SMALL, C_DIM,
            BL > 0 ? b : "ops = cube busy cycles x 2 x MACs/cycle (f16 rate); bytes = GM bytes counter or MEM events");
#undef RX
#undef RY
}

/* ---- help, status, frame ------------------------------------------------------- */
static void draw_help(vw_view *v, vw_cmds *o)
{
    static const char *const k[][2] = {
        { "wheel / W S", "zoom at the cursor / at the centre" },
        { "drag / A D", "pan" },
        { "shift + drag", "select a time range (table and flame graph follow)" },
        { "click", "details of a box and the arrows of its flags" },
        { "click core name", "collapse / expand the core" },
        { "F", "fit the selection (range, box) or the whole run" },
        { "/ then Enter", "search opcode, label, function or 0xPC; Enter: next, shift+Enter: previous" },
        { "1 2 3 4 / Tab", "timeline, flame graph, hotspots, counters" },
        { "T / I", "flame: busy or stall cycles / icicle or flame" },
        { "K", "hotspots: functions, labels, pcs, opcodes" },
        { "L", "heat maps: linear or log scale (three decades)" },
        { "C", "collapse or expand all cores" },
        { "Esc", "clear selection, zoom out of the flame graph, close this help" },
        { "? / Q", "this help / quit" },
    };
    int n = (int)NPU_ARRAY_LEN(k);
    int tw = 0;
    for (int i = 0; i < n; i++)
        tw = NPU_MAX(tw, text_w(v, VW_FONT_UI, k[i][1]));
    float lh = (float)line_h(v, VW_FONT_UI) + S(v, 4), w = S(v, 170 + 24) + (float)tw, h = n * lh + S(v, 50);
    float x = ((float)v->w - w) / 2, y = ((float)v->h - h) / 2;
    vw_rect(o, 0, 0, (float)v->w, (float)v->h, 0x00000080);
    vw_rect(o, x, y, w, h, 0x2B3038FF);
    vw_rect(o, x, y, w, S(v, 2), C_ACCENT);
    vw_text(o, x + S(v, 16), y + S(v, 12), VW_FONT_UI, C_ACCENT, "npuview keys");
    for (int i = 0; i < n; i++) {
        vw_text(o, x + S(v, 16), y + S(v, 40) + i * lh, VW_FONT_MONO, C_TEXT, k[i][0]);
        vw_text(o, x + S(v, 170), y + S(v, 40) + i * lh, VW_FONT_UI, C_DIM, k[i][1]);
    }
}

void vw_draw(vw_view *v, vw_cmds *o)
{
    vw_cmds_reset(o);
    vw_rect(o, 0, 0, (float)v->w, (float)v->h, C_BG);
    switch (v->tab) {
    case VW_TAB_TIMELINE: draw_timeline(v, o); break;
    case VW_TAB_FLAME: draw_flame(v, o); break;
    case VW_TAB_HOTSPOTS: draw_hotspots(v, o); break;
    default: draw_counters(v, o); break;
    }
    draw_topbar(v, o);
    float sy = (float)v->h - S(v, STATUS);
    vw_rect(o, 0, sy, (float)v->w, S(v, STATUS), C_PANEL);
    vw_line(o, 0, sy, (float)v->w, sy, C_GRID);
    char b[256];
    if (v->searching)
        snprintf(b, sizeof b, "/%s_", v->query);
    else if (v->status[0])
        snprintf(b, sizeof b, "%s", v->status);
    else
        snprintf(b, sizeof b, "?: keys   /: search   shift+drag: select range   F: fit   wheel: zoom   drag: pan");
    vw_text(o, S(v, 8), sy + (S(v, STATUS) - line_h(v, VW_FONT_SMALL)) / 2, VW_FONT_SMALL,
            v->searching ? C_ACCENT : C_DIM, b);
    if (v->tab == VW_TAB_TIMELINE) {
        char a[32], z[32];
        fmt_cyc(a, sizeof a, v->t0);
        fmt_cyc(z, sizeof z, v->t1 - v->t0);
        snprintf(b, sizeof b, "view %s + %s cycles", a, z);
        vw_text(o, (float)v->w - text_w(v, VW_FONT_SMALL, b) - S(v, 10),
                sy + (S(v, STATUS) - line_h(v, VW_FONT_SMALL)) / 2, VW_FONT_SMALL, C_DIM, b);
    }
    if (v->help)
        draw_help(v, o);
}

/* ---- the command list ------------------------------------------------------------ */
/* Room for need elements of one of the list's arrays (doubling, first
 * elements when empty); on failure the list is marked oom and -1 returned. */
static int list_grow(vw_cmds *l, void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : first;
    while (nc < need)
        nc *= 2;
    void *q = npu_realloc(*p, nc * elem);
    if (!q) {
        l->oom = 1;
        return -1;
    }
    *p = q;
    *cap = nc;
    return 0;
}

static vw_cmd *cmd_push(vw_cmds *l)
{
    if (l->oom || list_grow(l, (void **)&l->c, &l->cap, l->n + 1, sizeof *l->c, 4096))
        return NULL;
    return &l->c[l->n++];
}

void vw_cmds_reset(vw_cmds *l) { l->n = 0; l->slen = 0; l->nsp = 0; l->strip = SIZE_MAX; l->oom = 0; }
void vw_cmds_free(vw_cmds *l) { npu_free(l->c); npu_free(l->str); npu_free(l->sp); memset(l, 0, sizeof *l); }

void vw_strip_begin(vw_cmds *l, float y, float h)
{
    vw_cmd *c = cmd_push(l);
    l->strip = SIZE_MAX;
    if (!c)
        return;
    *c = (vw_cmd){ VW_CMD_STRIP, 0, 0, 0, y, 0, h, (uint32_t)l->nsp };
    l->strip = l->n - 1;
}

void vw_strip_span(vw_cmds *l, float x, float w, uint32_t rgba)
{
    if (w <= 0 || !(rgba & 255) || l->strip >= l->n || l->oom || l->c[l->strip].kind != VW_CMD_STRIP)
        return;
    if (list_grow(l, (void **)&l->sp, &l->capsp, l->nsp + 1, sizeof *l->sp, 16384))
        return;
    l->sp[l->nsp++] = (vw_span){ x, w, rgba };
    l->c[l->strip].color++;
}

void vw_rect(vw_cmds *l, float x, float y, float w, float h, uint32_t rgba)
{
    if (w <= 0 || h <= 0 || !(rgba & 255))
        return;
    vw_cmd *c = cmd_push(l);
    if (c)
        *c = (vw_cmd){ VW_CMD_RECT, 0, rgba, x, y, w, h, 0 };
}
void vw_line(vw_cmds *l, float x0, float y0, float x1, float y1, uint32_t rgba)
{
    vw_cmd *c = cmd_push(l);
    if (c)
        *c = (vw_cmd){ VW_CMD_LINE, 0, rgba, x0, y0, x1, y1, 0 };
}
void vw_clip(vw_cmds *l, float x, float y, float w, float h)
{
    vw_cmd *c = cmd_push(l);
    if (c)
        *c = (vw_cmd){ VW_CMD_CLIP, 0, 0, x, y, w > 0 ? w : 0.001f, h > 0 ? h : 0.001f, 0 };
}
void vw_unclip(vw_cmds *l)
{
    vw_cmd *c = cmd_push(l);
    if (c)
        *c = (vw_cmd){ VW_CMD_CLIP, 0, 0, 0, 0, 0, 0, 0 };
}
void vw_text(vw_cmds *l, float x, float y, int font, uint32_t rgba, const char *s)
{
    size_t n = strlen(s) + 1;
    if (n == 1 || l->oom)
        return;
    if (list_grow(l, (void **)&l->str, &l->scap, l->slen + n, 1, 65536))
        return;
    vw_cmd *c = cmd_push(l);
    if (!c)
        return;
    memcpy(l->str + l->slen, s, n);
    *c = (vw_cmd){ VW_CMD_TEXT, (uint8_t)font, rgba, x, y, 0, 0, (uint32_t)l->slen };
    l->slen += n;
}
