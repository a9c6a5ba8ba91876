/* check_out.c — the reports of `npusim check`: text (read like
 * compute-sanitizer's), JSON (cJSON) and JUnit XML for CI. Deterministic:
 * findings in the order found, no wall-clock time, no pointers. */
#include "sim/check.h"

#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *acc_word(const sim_chk_finding *f, int i)
{
    switch (f->kind) {
    case SIM_CHK_K_RAW: case SIM_CHK_K_WAR: case SIM_CHK_K_WAW: case SIM_CHK_K_OVERWRITE:
    case SIM_CHK_K_UNINIT:
        return f->at[i].is_write ? "write" : "read";
    case SIM_CHK_K_SET_TWICE: case SIM_CHK_K_LEFT_SET: return "set";
    case SIM_CHK_K_WAIT_UNMATCHED: case SIM_CHK_K_DEADLOCK: return "wait";
    default: return "at";
    }
}

static void site_short(const npu_sim *s, const sim_chk_site *a, char *buf, size_t n)
{
    char sym[128];
    sim_symbolize(s, a->pc, sym, sizeof sym);
    snprintf(buf, n, "core %d %s pc 0x%" PRIx64 " (%s)", a->core, isa_pipe_name(a->pipe), a->pc,
             sym);
}

void sim_chk_header(const sim_chk *c, const sim_chk_finding *f, char *buf, size_t n)
{
    const npu_sim *s = sim_chk_sim(c);
    char rng[200] = "", a0[200] = "", a1[200] = "", cnt[40] = "";
    if (f->has_range)
        snprintf(rng, sizeof rng, " on %s [0x%" PRIx64 ", +%" PRIu64 ")%s%s%s",
                 sim_space_name((sim_space)f->space), f->addr, f->len, f->what[0] ? " (" : "",
                 f->what, f->what[0] ? ")" : "");
    if (f->nat >= 1)
        site_short(s, &f->at[0], a0, sizeof a0);
    if (f->nat >= 2)
        site_short(s, &f->at[1], a1, sizeof a1);
    if (f->count > 1)
        snprintf(cnt, sizeof cnt, " [%" PRIu64 " times]", f->count);
    const char *tool = sim_chk_kind_tool(f->kind), *title = sim_chk_kind_title(f->kind);
    if (f->nat == 2 && f->has_range)
        snprintf(buf, n, "%s: %s%s: %s %s -> %s %s%s", tool, title, rng, a0, acc_word(f, 0), a1,
                 acc_word(f, 1), cnt);
    else if (f->nat == 2)
        snprintf(buf, n, "%s: %s: %s -> %s: %s%s", tool, title, a0, a1, f->what, cnt);
    else if (f->has_range)
        snprintf(buf, n, "%s: %s%s: %s %s%s", tool, title, rng, a0, acc_word(f, 0), cnt);
    else if (f->nat == 1)
        snprintf(buf, n, "%s: %s: %s: %s%s", tool, title, a0, f->what, cnt);
    else
        snprintf(buf, n, "%s: %s: %s%s", tool, title, f->what, cnt);
}

static void site_long(const npu_sim *s, const sim_chk_finding *f, int i, npu_buf *b)
{
    const sim_chk_site *a = &f->at[i];
    char sym[128], dis[160];
    sim_symbolize(s, a->pc, sym, sizeof sym);
    sim_disasm_at(s, a->pc, dis, sizeof dis);
    npu_buf_printf(b, "=========     %-5s by core %d pipe %-4s at pc 0x%" PRIx64 " (%s), cycle %" PRIu64
                   ": %s\n",
                   acc_word(f, i), a->core, isa_pipe_name(a->pipe), a->pc, sym, a->cycle, dis);
}

void sim_chk_report_text(const sim_chk *c, npu_buf *b)
{
    const npu_sim *s = sim_chk_sim(c);
    size_t per[SIM_CHK_K__COUNT] = {0};
    npu_buf_printf(b, "========= NPUSIM CHECK %s (%d core%s)\n", s->kname, s->ncores,
                   s->ncores == 1 ? "" : "s");
    for (size_t i = 0; i < sim_chk_nfindings(c); i++) {
        const sim_chk_finding *f = sim_chk_get(c, i);
        char h[1024];
        sim_chk_header(c, f, h, sizeof h);
        npu_buf_printf(b, "========= %s\n", h);
        for (int k = 0; k < f->nat; k++)
            site_long(s, f, k, b);
        if (f->fix[0])
            npu_buf_printf(b, "=========     fix: %s\n", f->fix);
        if (f->msg[0]) {
            /* multi-line reports (deadlock) keep their lines, indented */
            const char *p = f->msg;
            while (*p) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                while (len && *p == ' ') {
                    p++;
                    len--;
                }
                npu_buf_printf(b, "=========     %.*s\n", (int)len, p);
                p += len;
                if (*p == '\n')
                    p++;
            }
        }
        npu_buf_printf(b, "=========\n");
        per[f->kind]++;
    }
    size_t n = sim_chk_nfindings(c);
    npu_buf_printf(b, "========= ERROR SUMMARY: %zu finding%s", n, n == 1 ? "" : "s");
    const char *tools[] = {"numerics", "memcheck", "racecheck", "initcheck", "synccheck"};
    int first = 1;
    for (size_t t = 0; t < sizeof tools / sizeof tools[0]; t++) {
        size_t cnt = 0;
        for (int k = 0; k < SIM_CHK_K__COUNT; k++)
            if (!strcmp(sim_chk_kind_tool((sim_chk_kind)k), tools[t]))
                cnt += per[k];
        if (cnt) {
            npu_buf_printf(b, "%s%zu %s", first ? " (" : ", ", cnt, tools[t]);
            first = 0;
        }
    }
    npu_buf_printf(b, "%s\n", first ? "" : ")");
    if (sim_chk_dropped(c))
        npu_buf_printf(b, "========= %" PRIu64 " more distinct findings not kept (limit reached)\n",
                       sim_chk_dropped(c));
}

/* ---- JSON ------------------------------------------------------------------- */

static cJSON *site_json(const npu_sim *s, const sim_chk_finding *f, int i)
{
    const sim_chk_site *a = &f->at[i];
    char sym[128], dis[160];
    sim_symbolize(s, a->pc, sym, sizeof sym);
    sim_disasm_at(s, a->pc, dis, sizeof dis);
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "core", a->core);
    cJSON_AddStringToObject(o, "pipe", isa_pipe_name(a->pipe));
    cJSON_AddNumberToObject(o, "pc", (double)a->pc);
    cJSON_AddStringToObject(o, "symbol", sym);
    cJSON_AddStringToObject(o, "instruction", dis);
    cJSON_AddNumberToObject(o, "cycle", (double)a->cycle);
    cJSON_AddStringToObject(o, "access", acc_word(f, i));
    return o;
}

static const char *tool_names[] = {"memcheck", "racecheck", "initcheck", "synccheck"};

npu_status sim_chk_write_json(const sim_chk *c, const char *path, npu_diag *d)
{
    const npu_sim *s = sim_chk_sim(c);
    cJSON *root = cJSON_CreateObject();
    cJSON *tools = root ? cJSON_AddArrayToObject(root, "tools") : NULL;
    cJSON *arr = NULL;
    if (!tools)
        goto oom;
    cJSON_AddStringToObject(root, "kernel", s->kname);
    cJSON_AddNumberToObject(root, "cores", s->ncores);
    for (int t = 0; t < 4; t++)
        if (sim_chk_tools(c) & (1u << t))
            cJSON_AddItemToArray(tools, cJSON_CreateString(tool_names[t]));
    cJSON_AddNumberToObject(root, "findings_count", (double)sim_chk_nfindings(c));
    arr = cJSON_AddArrayToObject(root, "findings");
    if (!arr)
        goto oom;
    for (size_t i = 0; i < sim_chk_nfindings(c); i++) {
        const sim_chk_finding *f = sim_chk_get(c, i);
        cJSON *o = cJSON_CreateObject();
        if (!o)
            goto oom;
        cJSON_AddItemToArray(arr, o);
        char h[1024];
        sim_chk_header(c, f, h, sizeof h);
        cJSON_AddStringToObject(o, "tool", sim_chk_kind_tool(f->kind));
        cJSON_AddStringToObject(o, "kind", sim_chk_kind_title(f->kind));
        cJSON_AddStringToObject(o, "summary", h);
        cJSON_AddNumberToObject(o, "count", (double)f->count);
        if (f->has_range) {
            cJSON_AddStringToObject(o, "space", sim_space_name((sim_space)f->space));
            cJSON_AddNumberToObject(o, "addr", (double)f->addr);
            cJSON_AddNumberToObject(o, "len", (double)f->len);
        }
        cJSON *sites = cJSON_AddArrayToObject(o, "sites");
        for (int k = 0; sites && k < f->nat; k++)
            cJSON_AddItemToArray(sites, site_json(s, f, k));
        if (f->what[0])
            cJSON_AddStringToObject(o, "what", f->what);
        if (f->fix[0])
            cJSON_AddStringToObject(o, "fix", f->fix);
        if (f->msg[0])
            cJSON_AddStringToObject(o, "details", f->msg);
    }
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    if (!txt)
        return npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
    size_t len = strlen(txt);
    npu_buf b = {0};
    npu_buf_append(&b, txt, len);
    npu_buf_append(&b, "\n", 1);
    cJSON_free(txt);
    npu_status st = b.oom ? npu_errf(d, NPU_ENOMEM, "%s: out of memory", path)
                          : npu_write_file_atomic(path, b.data, b.len, d);
    npu_buf_free(&b);
    return st;
oom:
    cJSON_Delete(root);
    return npu_errf(d, NPU_ENOMEM, "%s: out of memory", path);
}

/* ---- JUnit XML ---------------------------------------------------------------- */

static void xml_esc(npu_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': npu_buf_printf(b, "&lt;"); break;
        case '>': npu_buf_printf(b, "&gt;"); break;
        case '&': npu_buf_printf(b, "&amp;"); break;
        case '"': npu_buf_printf(b, "&quot;"); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
                npu_buf_printf(b, " ");
            else
                npu_buf_append(b, s, 1);
        }
    }
}

/* One testcase per tool that ran (and numerics), each failing with its
 * findings: what Jenkins / GitLab show per kernel. */
npu_status sim_chk_write_junit(const sim_chk *c, const char *path, npu_diag *d)
{
    const npu_sim *s = sim_chk_sim(c);
    const char *names[5] = {"numerics", "memcheck", "racecheck", "initcheck", "synccheck"};
    int on[5] = {1, 0, 0, 0, 0};
    size_t nfail[5] = {0};
    for (int t = 0; t < 4; t++)
        on[t + 1] = (sim_chk_tools(c) >> t) & 1;
    for (size_t i = 0; i < sim_chk_nfindings(c); i++) {
        const char *tool = sim_chk_kind_tool(sim_chk_get(c, i)->kind);
        for (int t = 0; t < 5; t++)
            if (!strcmp(tool, names[t])) {
                nfail[t]++;
                on[t] = 1;
            }
    }
    int ntests = 0, nfailed = 0;
    for (int t = 0; t < 5; t++) {
        ntests += on[t];
        nfailed += nfail[t] > 0;
    }
    npu_buf b = {0};
    npu_buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    npu_buf_printf(&b, "  <testsuite name=\"npusim check ");
    xml_esc(&b, s->kname);
    npu_buf_printf(&b, "\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", ntests, nfailed);
    for (int t = 0; t < 5; t++) {
        if (!on[t])
            continue;
        npu_buf_printf(&b, "    <testcase classname=\"npusim.check\" name=\"%s: ", names[t]);
        xml_esc(&b, s->kname);
        npu_buf_printf(&b, "\"");
        if (!nfail[t]) {
            npu_buf_printf(&b, "/>\n");
            continue;
        }
        npu_buf_printf(&b, ">\n      <failure message=\"%zu finding%s\" type=\"%s\">", nfail[t],
                       nfail[t] == 1 ? "" : "s", names[t]);
        for (size_t i = 0; i < sim_chk_nfindings(c); i++) {
            const sim_chk_finding *f = sim_chk_get(c, i);
            if (strcmp(sim_chk_kind_tool(f->kind), names[t]))
                continue;
            char h[1024];
            sim_chk_header(c, f, h, sizeof h);
            xml_esc(&b, h);
            npu_buf_printf(&b, "\n");
            if (f->fix[0]) {
                npu_buf_printf(&b, "  fix: ");
                xml_esc(&b, f->fix);
                npu_buf_printf(&b, "\n");
            }
        }
        npu_buf_printf(&b, "</failure>\n    </testcase>\n");
    }
    npu_buf_printf(&b, "  </testsuite>\n</testsuites>\n");
    npu_status st = b.oom ? npu_errf(d, NPU_ENOMEM, "%s: out of memory", path)
                          : npu_write_file_atomic(path, b.data, b.len, d);
    npu_buf_free(&b);
    return st;
}
