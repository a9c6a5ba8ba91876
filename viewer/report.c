/* report.c — the hotspot table as text, CSV or JSON (`npuview --report`):
 * what the hotspots tab shows, for a terminal, a script or a CI log, in
 * the manner of `perf report --stdio`. No window and no SDL: the rows come
 * from vw_hotspots over the loaded model, so the report and the tab agree
 * by construction. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "viewer/vw.h"

static const char *const col_names[VW_HK__N] = { "function", "label", "instruction", "opcode" };

/* A row's name in full: the table's names are cut to 63 bytes for the tab,
 * a report has room for a long symbol or a whole disassembly */
static void full_name(const vw_model *m, vw_hkey key, const vw_hrow *r, char *buf, size_t n)
{
    snprintf(buf, n, "%s", r->name);
    if (r->key == UINT64_MAX)
        return;
    if (key == VW_HK_PC) {
        const char *dis = trc_reader_disasm(m->r, r->key);
        snprintf(buf, n, "%s", dis ? dis : vw_op_name(m, r->pipe >> 8));
    } else if (key == VW_HK_FUNC || key == VW_HK_LABEL) {
        const trc_symbol *s = trc_reader_symbol_exact(m->r, r->key);
        if (s && s->name && s->addr == r->key)
            snprintf(buf, n, "%s", s->name);
    }
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The row's main stall cause and its share of the row's stall cycles
 * ("queue_full 100%"), or "" without stalls */
static void top_cause(const vw_model *m, const vw_hrow *r, char *buf, size_t n)
{
    unsigned best = vw_hrow_top_cause(r);
    if (!r->stall)
        snprintf(buf, n, "%s", "");
    else
        snprintf(buf, n, "%s %.0f%%", vw_cause_name(m, vw_slot_cause(best)), pct(r->stall_by[best], r->stall));
}

/* CSV field: quoted when it holds a comma, a quote or a line break */
static int csv_field(npu_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n"))
        return npu_buf_printf(b, "%s", s);
    int e = npu_buf_printf(b, "\"");
    for (; *s && !e; s++)
        e = *s == '"' ? npu_buf_printf(b, "\"\"") : npu_buf_append(b, s, 1);
    return e ? e : npu_buf_printf(b, "\"");
}

static int text_report(const vw_model *m, const vw_report_opts *o, const vw_table *t, size_t rows,
                       uint64_t t0, uint64_t t1, npu_buf *b)
{
    const char *kern = m->meta->kernel && *m->meta->kernel ? m->meta->kernel : "kernel";
    uint64_t count = 0;
    for (size_t i = 0; i < t->n; i++)
        count += t->row[i].count;
    int e = 0;
    e |= npu_buf_printf(b, "# npuview report of %s: %s on %" PRIu32 " core%s, cycles %" PRIu64 " to %" PRIu64
                        "%s\n", o->trace ? o->trace : "the trace", kern, m->ncores, m->ncores == 1 ? "" : "s",
                        t0, t1, o->has_range ? " (--range)" : " (the whole run)");
    if (o->core >= 0)
        e |= npu_buf_printf(b, "# core %d only (--core)\n", o->core);
    e |= npu_buf_printf(b, "# rows: %s, sorted by %s; busy and stall are pipe cycles summed over pipes and cores\n",
                        vw_hkey_names[o->key], vw_sort_names[o->sort_col]);
    e |= npu_buf_printf(b, "# busy %" PRIu64 " cycles in %" PRIu64 " instructions; stall %" PRIu64 " cycles\n",
                        t->total_busy, count, t->total_stall);
    e |= npu_buf_printf(b, "# count: instructions run; one of a pipe other than S counts on its pipe, its "
                           "dispatch slot on S adds busy cycles only\n");
    if (!o->has_range && o->core < 0) {
        uint64_t all = 0;
        for (unsigned s = 0; s < VW_CAUSE_SLOTS; s++)
            all += m->cause_stall[s];
        if (all) {
            e |= npu_buf_printf(b, "# stall by cause:");
            int k = 0;
            for (unsigned s = 0; s < VW_CAUSE_SLOTS; s++)
                if (m->cause_stall[s])
                    e |= npu_buf_printf(b, "%s %s %.1f %%", k++ ? "," : "", vw_cause_name(m, vw_slot_cause(s)),
                                        pct(m->cause_stall[s], all));
            e |= npu_buf_printf(b, "\n");
        }
    }
    if (rows < t->n)
        e |= npu_buf_printf(b, "# the first %zu of %zu rows (--top)\n", rows, t->n);
    if (!t->n)
        return e | npu_buf_printf(b, "# no instruction ran in this range\n");
    int pcs = o->key == VW_HK_PC;
    e |= npu_buf_printf(b, "#\n#  busy %%  stall %%          busy         stall       count  stalled on       %s%s\n",
                        pcs ? "pc       pipe  " : "", col_names[o->key]);
    char name[1024];
    const trc_symbol *cur = NULL;
    for (size_t i = 0; i < rows && !e; i++) {
        const vw_hrow *r = &t->row[i];
        if (pcs && o->sort_col == 4) {
            /* program order: a heading at each label or function, as perf
             * annotate shows the source around the instructions */
            const trc_symbol *l = trc_reader_label_at(m->r, r->key);
            const trc_symbol *f = trc_reader_function_at(m->r, r->key);
            const trc_symbol *h = l && (!f || l->addr >= f->addr) ? l : f;
            if (h && h != cur)
                e |= npu_buf_printf(b, "# %s:\n", h->name ? h->name : "?");
            cur = h;
        }
        full_name(m, o->key, r, name, sizeof name);
        char cause[48];
        top_cause(m, r, cause, sizeof cause);
        e |= npu_buf_printf(b, "  %7.2f  %7.2f  %12" PRIu64 "  %12" PRIu64 "  %10" PRIu64 "  %-15s  ",
                            pct(r->busy, t->total_busy), pct(r->stall, t->total_stall), r->busy, r->stall,
                            r->count, cause);
        if (pcs)
            e |= npu_buf_printf(b, "0x%05" PRIx64 "  %-4s  ", r->key, trc_pipe_name(r->pipe & 0xFF));
        e |= npu_buf_printf(b, "%s\n", name);
    }
    return e;
}

static int csv_report(const vw_model *m, const vw_report_opts *o, const vw_table *t, size_t rows, npu_buf *b)
{
    int pcs = o->key == VW_HK_PC;
    int e = npu_buf_printf(b, "%s,name,%scount,busy,stall,busy_pct,stall_pct,stalled_on\n",
                           o->key == VW_HK_OPCODE ? "opcode" : pcs ? "pc" : "address", pcs ? "pipe," : "");
    char name[1024];
    for (size_t i = 0; i < rows && !e; i++) {
        const vw_hrow *r = &t->row[i];
        full_name(m, o->key, r, name, sizeof name);
        if (r->key == UINT64_MAX)
            e |= npu_buf_printf(b, ",");
        else if (o->key == VW_HK_OPCODE)
            e |= npu_buf_printf(b, "%" PRIu64 ",", r->key);
        else
            e |= npu_buf_printf(b, "0x%" PRIx64 ",", r->key & ~((uint64_t)1 << 63));
        e |= csv_field(b, name);
        if (pcs)
            e |= npu_buf_printf(b, ",%s", trc_pipe_name(r->pipe & 0xFF));
        char cause[48];
        top_cause(m, r, cause, sizeof cause);
        e |= npu_buf_printf(b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.4f,%.4f,%s\n", r->count, r->busy, r->stall,
                            pct(r->busy, t->total_busy), pct(r->stall, t->total_stall), cause);
    }
    return e;
}

static int json_report(const vw_model *m, const vw_report_opts *o, const vw_table *t, size_t rows,
                       uint64_t t0, uint64_t t1, npu_buf *b)
{
    cJSON *j = cJSON_CreateObject(), *arr = NULL;
    int e = j == NULL;
    if (!e) {
        uint64_t count = 0;
        for (size_t i = 0; i < t->n; i++)
            count += t->row[i].count;
        e |= !cJSON_AddStringToObject(j, "trace", o->trace ? o->trace : "");
        e |= !cJSON_AddStringToObject(j, "kernel", m->meta->kernel ? m->meta->kernel : "");
        e |= !cJSON_AddNumberToObject(j, "cores", m->ncores);
        e |= !cJSON_AddNumberToObject(j, "from", (double)t0);
        e |= !cJSON_AddNumberToObject(j, "to", (double)t1);
        e |= !cJSON_AddStringToObject(j, "group", vw_hkey_names[o->key]);
        e |= !cJSON_AddStringToObject(j, "sort", vw_sort_names[o->sort_col]);
        if (o->core >= 0)
            e |= !cJSON_AddNumberToObject(j, "core", o->core);
        e |= !cJSON_AddNumberToObject(j, "total_busy", (double)t->total_busy);
        e |= !cJSON_AddNumberToObject(j, "total_stall", (double)t->total_stall);
        e |= !cJSON_AddNumberToObject(j, "total_count", (double)count);
        e |= !cJSON_AddNumberToObject(j, "rows_total", (double)t->n);
        e |= !(arr = cJSON_AddArrayToObject(j, "rows"));
    }
    char name[1024];
    for (size_t i = 0; i < rows && !e; i++) {
        const vw_hrow *r = &t->row[i];
        cJSON *x = cJSON_CreateObject();
        if (!x || !cJSON_AddItemToArray(arr, x)) {
            cJSON_Delete(x);
            e = 1;
            break;
        }
        full_name(m, o->key, r, name, sizeof name);
        if (r->key == UINT64_MAX)
            e |= !cJSON_AddNullToObject(x, "key");
        else
            e |= !cJSON_AddNumberToObject(x, "key", (double)(r->key & ~((uint64_t)1 << 63)));
        e |= !cJSON_AddStringToObject(x, "name", name);
        if (o->key == VW_HK_PC)
            e |= !cJSON_AddStringToObject(x, "pipe", trc_pipe_name(r->pipe & 0xFF));
        e |= !cJSON_AddNumberToObject(x, "count", (double)r->count);
        e |= !cJSON_AddNumberToObject(x, "busy", (double)r->busy);
        e |= !cJSON_AddNumberToObject(x, "stall", (double)r->stall);
        cJSON *bc = cJSON_AddObjectToObject(x, "stall_by_cause");
        e |= !bc;
        for (unsigned sl = 0; bc && sl < VW_CAUSE_SLOTS; sl++)
            if (r->stall_by[sl])
                e |= !cJSON_AddNumberToObject(bc, vw_cause_name(m, vw_slot_cause(sl)), (double)r->stall_by[sl]);
    }
    char *s = e ? NULL : cJSON_Print(j);
    cJSON_Delete(j);
    if (!s)
        return 1;
    e = npu_buf_printf(b, "%s\n", s);
    cJSON_free(s);
    return e;
}

/* The options valid for a report of m (named `name` in the message) */
static npu_status check_opts(const vw_model *m, const vw_report_opts *o, const char *name, npu_diag *d)
{
    if ((unsigned)o->key >= VW_HK__N || o->sort_col < 0 || o->sort_col >= VW_SORT__N || (unsigned)o->fmt > VW_RF_JSON)
        return npu_errf(d, NPU_EINVAL, "npuview: report: bad options");
    if (o->core >= 0 && (uint32_t)o->core >= m->ncores)
        return npu_errf(d, NPU_EINVAL, "npuview: --core %d: %s has %" PRIu32 " core%s (0..%" PRIu32 ")", o->core,
                        name, m->ncores, m->ncores == 1 ? "" : "s", m->ncores - 1);
    return NPU_OK;
}

npu_status vw_report(const vw_model *m, const vw_report_opts *o, npu_buf *out, npu_diag *d)
{
    npu_status st0 = check_opts(m, o, "the trace", d);
    if (st0)
        return st0;
    uint64_t t0 = o->has_range ? o->r0 : m->t_min, t1 = o->has_range ? o->r1 : m->t_end;
    vw_table t = { 0 };
    npu_status st = vw_hotspots_core(m, o->key, o->has_range ? o->r0 : 0, o->has_range ? o->r1 : 0, o->core, &t, d);
    if (st)
        return st;
    vw_table_sort(&t, o->sort_col);
    size_t rows = o->top && o->top < t.n ? o->top : t.n;
    int e = o->fmt == VW_RF_CSV ? csv_report(m, o, &t, rows, out)
          : o->fmt == VW_RF_JSON ? json_report(m, o, &t, rows, t0, t1, out)
                                 : text_report(m, o, &t, rows, t0, t1, out);
    vw_table_free(&t);
    return e ? npu_errf(d, NPU_ENOMEM, "npuview: out of memory writing the report") : NPU_OK;
}

/* ---- two runs side by side: --diff (perf diff) ------------------------------------ */

/* A row of either run: matched by pc for --group pcs (the same kernel at
 * other settings keeps its code), else by name (a function, label or
 * opcode may move). */
typedef struct drow {
    char name[1024];
    uint64_t key;           /* pcs: the pc */
    const vw_hrow *a, *b;   /* base, new (NULL: not in that run) */
} drow;

static int cmp_dmatch(const void *x, const void *y, void *ctx)
{
    const drow *p = x, *q = y;
    if (*(const int *)ctx)
        return p->key < q->key ? -1 : p->key > q->key;
    return strcmp(p->name, q->name);
}

static uint64_t dv(const vw_hrow *r, int col)
{
    return !r ? 0 : col == 1 ? r->count : col == 3 ? r->stall : r->busy;
}

static int cmp_dsort(const void *x, const void *y, void *ctx)
{
    const drow *p = x, *q = y;
    int col = *(const int *)ctx;
    if (col == 0)
        return strcmp(p->name, q->name);
    if (col == 4)
        return p->key < q->key ? -1 : p->key > q->key;
    /* the larger of the two runs first, so a row that vanished still
     * sorts where it mattered */
    uint64_t a = NPU_MAX(dv(p->a, col), dv(p->b, col)), b = NPU_MAX(dv(q->a, col), dv(q->b, col));
    if (a != b)
        return a < b ? 1 : -1;
    return strcmp(p->name, q->name);
}

/* "+12.3 %", "new" (not in the base), "gone", or "" when both are 0 */
static void delta(char *buf, size_t n, uint64_t a, uint64_t b)
{
    if (!a && !b)
        snprintf(buf, n, "%s", "");
    else if (!a)
        snprintf(buf, n, "%s", "new");
    else if (!b)
        snprintf(buf, n, "%s", "gone");
    else
        snprintf(buf, n, "%+.1f %%", 100.0 * ((double)b - (double)a) / (double)a);
}

npu_status vw_report_diff(const vw_model *base, const vw_model *m, const vw_report_opts *o, const char *base_name,
                          npu_buf *out, npu_diag *d)
{
    npu_status st0 = check_opts(base, o, base_name, d);
    if (!st0)
        st0 = check_opts(m, o, o->trace ? o->trace : "the trace", d);
    if (st0)
        return st0;
    uint64_t r0 = o->has_range ? o->r0 : 0, r1 = o->has_range ? o->r1 : 0;
    vw_table ta = { 0 }, tb = { 0 };
    npu_status st = vw_hotspots_core(base, o->key, r0, r1, o->core, &ta, d);
    if (!st)
        st = vw_hotspots_core(m, o->key, r0, r1, o->core, &tb, d);
    drow *rows = st ? NULL : npu_calloc(ta.n + tb.n + 1, sizeof *rows);
    if (!st && !rows)
        st = npu_errf(d, NPU_ENOMEM, "npuview: out of memory writing the report");
    if (st) {
        vw_table_free(&ta);
        vw_table_free(&tb);
        return st;
    }
    /* both runs' rows, sorted by their match key, then merged */
    int bypc = o->key == VW_HK_PC;
    size_t na = ta.n, n = 0;
    for (size_t i = 0; i < ta.n + tb.n; i++) {
        const vw_model *x = i < na ? base : m;
        const vw_hrow *r = i < na ? &ta.row[i] : &tb.row[i - na];
        drow *w = &rows[i];
        full_name(x, o->key, r, w->name, sizeof w->name);
        w->key = r->key & ~((uint64_t)1 << 63);
        if (i < na)
            w->a = r;
        else
            w->b = r;
    }
    qsort_r(rows, ta.n + tb.n, sizeof *rows, cmp_dmatch, &bypc);
    for (size_t i = 0; i < ta.n + tb.n; i++) {
        if (n && !cmp_dmatch(&rows[n - 1], &rows[i], &bypc) &&
            !(rows[n - 1].a && rows[i].a) && !(rows[n - 1].b && rows[i].b)) {
            if (rows[i].a)
                rows[n - 1].a = rows[i].a;
            if (rows[i].b)
                rows[n - 1].b = rows[i].b;
            continue;
        }
        rows[n++] = rows[i];
    }
    int col = o->sort_col;
    qsort_r(rows, n, sizeof *rows, cmp_dsort, &col);
    size_t shown = o->top && o->top < n ? o->top : n;
    uint64_t ca = 0, cb = 0;
    for (size_t i = 0; i < ta.n; i++)
        ca += ta.row[i].count;
    for (size_t i = 0; i < tb.n; i++)
        cb += tb.row[i].count;
    const char *nn = o->trace ? o->trace : "the trace";
    int e = 0;
    char d1[32], d2[32], d3[32];
    if (o->fmt == VW_RF_TEXT) {
        e |= npu_buf_printf(out, "# npuview report: %s against %s (--diff), %s\n", nn, base_name,
                            o->has_range ? "over --range" : "the whole runs");
        if (o->core >= 0)
            e |= npu_buf_printf(out, "# core %d only (--core)\n", o->core);
        delta(d1, sizeof d1, base->t_end - base->t_min, m->t_end - m->t_min);
        delta(d2, sizeof d2, ta.total_busy, tb.total_busy);
        delta(d3, sizeof d3, ta.total_stall, tb.total_stall);
        e |= npu_buf_printf(out, "# cycles %" PRIu64 " -> %" PRIu64 " (%s); busy %" PRIu64 " -> %" PRIu64
                            " (%s); stall %" PRIu64 " -> %" PRIu64 " (%s)\n",
                            base->t_end - base->t_min, m->t_end - m->t_min, d1, ta.total_busy, tb.total_busy, d2,
                            ta.total_stall, tb.total_stall, d3);
        e |= npu_buf_printf(out, "# rows: %s, matched by %s, sorted by %s; base -> new pipe cycles, summed over "
                                 "pipes and cores\n",
                            vw_hkey_names[o->key], bypc ? "pc" : "name", vw_sort_names[o->sort_col]);
        if (shown < n)
            e |= npu_buf_printf(out, "# the first %zu of %zu rows (--top)\n", shown, n);
        e |= npu_buf_printf(out, "#\n#   busy base     busy new    Δ busy    stall base    stall new   Δ stall  %s\n",
                            bypc ? "pc       instruction" : col_names[o->key]);
        for (size_t i = 0; i < shown && !e; i++) {
            const drow *w = &rows[i];
            delta(d1, sizeof d1, dv(w->a, 2), dv(w->b, 2));
            delta(d2, sizeof d2, dv(w->a, 3), dv(w->b, 3));
            e |= npu_buf_printf(out, "  %12" PRIu64 " %12" PRIu64 " %9s  %12" PRIu64 " %12" PRIu64 " %9s  ",
                                dv(w->a, 2), dv(w->b, 2), d1, dv(w->a, 3), dv(w->b, 3), d2);
            if (bypc)
                e |= npu_buf_printf(out, "0x%05" PRIx64 "  ", w->key);
            e |= npu_buf_printf(out, "%s\n", w->name);
        }
    } else if (o->fmt == VW_RF_CSV) {
        e |= npu_buf_printf(out, "%s,name,base_count,base_busy,base_stall,new_count,new_busy,new_stall\n",
                            bypc ? "pc" : "key");
        for (size_t i = 0; i < shown && !e; i++) {
            const drow *w = &rows[i];
            if (bypc)
                e |= npu_buf_printf(out, "0x%" PRIx64 ",", w->key);
            else
                e |= npu_buf_printf(out, ",");
            e |= csv_field(out, w->name);
            e |= npu_buf_printf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                                dv(w->a, 1), dv(w->a, 2), dv(w->a, 3), dv(w->b, 1), dv(w->b, 2), dv(w->b, 3));
        }
    } else {
        cJSON *j = cJSON_CreateObject(), *arr = NULL;
        e = !j;
        if (!e) {
            e |= !cJSON_AddStringToObject(j, "base", base_name);
            e |= !cJSON_AddStringToObject(j, "trace", nn);
            e |= !cJSON_AddStringToObject(j, "group", vw_hkey_names[o->key]);
            e |= !cJSON_AddStringToObject(j, "sort", vw_sort_names[o->sort_col]);
            if (o->core >= 0)
                e |= !cJSON_AddNumberToObject(j, "core", o->core);
            e |= !cJSON_AddNumberToObject(j, "base_cycles", (double)(base->t_end - base->t_min));
            e |= !cJSON_AddNumberToObject(j, "new_cycles", (double)(m->t_end - m->t_min));
            e |= !cJSON_AddNumberToObject(j, "base_busy", (double)ta.total_busy);
            e |= !cJSON_AddNumberToObject(j, "new_busy", (double)tb.total_busy);
            e |= !cJSON_AddNumberToObject(j, "base_stall", (double)ta.total_stall);
            e |= !cJSON_AddNumberToObject(j, "new_stall", (double)tb.total_stall);
            e |= !cJSON_AddNumberToObject(j, "base_count", (double)ca);
            e |= !cJSON_AddNumberToObject(j, "new_count", (double)cb);
            e |= !cJSON_AddNumberToObject(j, "rows_total", (double)n);
            e |= !(arr = cJSON_AddArrayToObject(j, "rows"));
        }
        for (size_t i = 0; i < shown && !e; i++) {
            const drow *w = &rows[i];
            cJSON *x = cJSON_CreateObject();
            if (!x || !cJSON_AddItemToArray(arr, x)) {
                cJSON_Delete(x);
                e = 1;
                break;
            }
            e |= !cJSON_AddStringToObject(x, "name", w->name);
            if (bypc)
                e |= !cJSON_AddNumberToObject(x, "pc", (double)w->key);
            static const char *const side[2] = { "base", "new" };
            for (int k = 0; k < 2; k++) {
                const vw_hrow *r = k ? w->b : w->a;
                cJSON *y = r ? cJSON_AddObjectToObject(x, side[k]) : cJSON_AddNullToObject(x, side[k]);
                e |= !y;
                if (r && y) {
                    e |= !cJSON_AddNumberToObject(y, "count", (double)r->count);
                    e |= !cJSON_AddNumberToObject(y, "busy", (double)r->busy);
                    e |= !cJSON_AddNumberToObject(y, "stall", (double)r->stall);
                }
            }
        }
        char *s = e ? NULL : cJSON_Print(j);
        cJSON_Delete(j);
        e = !s || npu_buf_printf(out, "%s\n", s);
        cJSON_free(s);
    }
    npu_free(rows);
    vw_table_free(&ta);
    vw_table_free(&tb);
    return e ? npu_errf(d, NPU_ENOMEM, "npuview: out of memory writing the report") : NPU_OK;
}
