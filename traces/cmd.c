/* cmd.c — `npusim trace info|export`, the command-line face of traces/. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "traces/trc_int.h"

static const char usage_text[] =
    "usage: npusim trace info TRACE.npt\n"
    "       npusim trace export --format chrome|folded|csv [--stalls] [--core N]\n"
    "                           [--from CYCLE] [--to CYCLE] TRACE.npt -o OUT\n"
    "\n"
    "info    config summary, duration, events per kind, size, bytes per event,\n"
    "        compression ratio and any damage (with byte offsets)\n"
    "export  chrome: Chrome Trace Event JSON for ui.perfetto.dev / chrome://tracing\n"
    "        folded: folded stacks for flamegraph.pl / speedscope; weight = busy\n"
    "                cycles per pipe, or stall cycles with --stalls\n"
    "        csv:    one row per event\n"
    "        --core, --from, --to restrict chrome and csv output\n"
    "the hotspot table (by function, label, pc or opcode) as text, CSV or JSON,\n"
    "like perf report --stdio: npuview --report [--group pcs] TRACE.npt\n"
    "on a terminal, a read that takes over 2 s shows its progress on stderr\n"
    "(NPUSIM_PROGRESS=0 never, 1 also in a pipe)\n"
    "exit status: 0 ok (a damaged trace that opens: its intact chunks, with a\n"
    "warning), 2 a file that is not a readable trace or a bad command line\n";

static int usage(FILE *f, int code)
{
    fputs(usage_text, f);
    return code;
}

static void print_damage(FILE *f, trc_reader *r)
{
    const trc_damage *dl;
    size_t n = trc_reader_damage(r, &dl);
    if (!n) {
        fprintf(f, "damage:       none\n");
        return;
    }
    fprintf(f, "damage:       %zu place%s (events of intact chunks were recovered)\n", n,
            n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  offset %llu: %s\n", (unsigned long long)dl[i].offset, dl[i].what);
}

static void config_summary(const char *json)
{
    if (!json || !*json) {
        printf("config:       (none)\n");
        return;
    }
    cJSON *j = cJSON_Parse(json);
    if (!j || !cJSON_IsObject(j)) {
        printf("config:       %.*s%s\n", 200, json, strlen(json) > 200 ? "..." : "");
        cJSON_Delete(j);
        return;
    }
    printf("config:       %zu bytes of JSON;", strlen(json));
    int shown = 0;
    for (cJSON *c = j->child; c && shown < 12; c = c->next) {
        if (cJSON_IsNumber(c))
            printf(" %s=%g", c->string, c->valuedouble), shown++;
        else if (cJSON_IsString(c))
            printf(" %s=%s", c->string, c->valuestring), shown++;
        else if (cJSON_IsBool(c))
            printf(" %s=%s", c->string, cJSON_IsTrue(c) ? "true" : "false"), shown++;
    }
    printf("\n");
    cJSON_Delete(j);
}

/* The status line of a long read (on a terminal, after 2 s); user: the
 * command's name. */
static void read_progress(void *user, uint64_t done, uint64_t total)
{
    npu_tty_line("%s: %.0f %% of the trace read", (const char *)user,
                 total ? 100.0 * (double)done / (double)total : 100.0);
}

static void progress_on(trc_reader *r, const char *cmd)
{
    if (npu_tty_line_wanted()) {
        npu_tty_line_start();
        trc_reader_set_progress(r, read_progress, (void *)cmd);
    }
}

static int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout, 0);
        if (argv[i][0] == '-' || path) {
            fprintf(stderr, "npusim trace info: unexpected argument '%s'\n", argv[i]);
            return usage(stderr, 2);
        }
        path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "npusim trace info: a trace file is required\n");
        return usage(stderr, 2);
    }
    npu_diag d = { 0 };
    trc_reader *r = trc_open(path, &d);
    if (!r) {
        fprintf(stderr, "npusim trace info: %s\n", d.msg);
        return 2;
    }
    const trc_meta *m = trc_reader_meta(r);
    uint64_t per_kind[TRC_NKINDS] = { 0 }, n = 0, tmin = UINT64_MAX, tend = 0;
    progress_on(r, "npusim trace info");
    trc_iter *it = trc_iter_new(r, NULL, &d);
    trc_event e;
    while (it && trc_iter_next(it, &e)) {
        per_kind[e.kind]++;
        n++;
        if (e.t0 < tmin) tmin = e.t0;
        if (trc_event_end(&e) > tend) tend = trc_event_end(&e);
    }
    npu_status st = it ? trc_iter_error(it, &d) : NPU_ENOMEM;
    trc_iter_free(it);
    if (st == NPU_OK)
        st = trc_reader_verify(r, &d);
    npu_tty_line_end();
    if (st != NPU_OK) {
        fprintf(stderr, "npusim trace info: %s\n", d.msg);
        trc_close(r);
        return 2;
    }
    if (!n)
        tmin = 0;
    uint64_t ev, stored, raw, nch;
    trc_reader_totals(r, &ev, &stored, &raw, &nch);
    unsigned v = trc_reader_version(r);
    printf("trace:        %s (format %u.%u)\n", path, v / 100, v % 100);
    printf("kernel:       %s\n", m->kernel ? m->kernel : "(unknown)");
    printf("machine:      %u cores at %.3f GHz, seed %llu, level %s, counter interval %llu\n",
           m->n_cores, m->clock_ghz, (unsigned long long)m->seed, m->level ? m->level : "?",
           (unsigned long long)m->counter_interval);
    config_summary(m->config_json);
    size_t nfun = 0;
    for (uint32_t i = 0; i < m->n_symbols; i++)
        nfun += m->symbols[i].is_function != 0;
    printf("symbols:      %u (%zu functions); names: %u opcodes, %u stall causes, %u counters\n",
           m->n_symbols, nfun, m->opcodes.count, m->causes.count, m->counters.count);
    /* the named counter units (the memory system's, npusim record): how
     * many, and the first and last name */
    uint32_t nnamed = 0, first = 0, last = 0;
    for (uint32_t u = 0; m->units.names && u < m->units.count; u++)
        if (m->units.names[u]) {
            if (!nnamed++)
                first = u;
            last = u;
        }
    if (nnamed == 1)
        printf("units:        %u cores, unit %u named '%s'\n", m->n_cores, first, m->units.names[first]);
    else if (nnamed)
        printf("units:        %u cores, %u named units %u..%u ('%s' .. '%s')\n", m->n_cores, nnamed, first, last,
               m->units.names[first], m->units.names[last]);
    double us = m->clock_ghz > 0 ? (double)(tend - tmin) / (m->clock_ghz * 1000.0) : 0;
    printf("duration:     %llu cycles (%.3f us), cycles %llu..%llu\n",
           (unsigned long long)(tend - tmin), us, (unsigned long long)tmin, (unsigned long long)tend);
    printf("events:       %llu in %llu chunks\n", (unsigned long long)n, (unsigned long long)nch);
    for (unsigned k = 1; k < TRC_NKINDS; k++)
        if (per_kind[k])
            printf("  %-10s  %llu\n", trc_kind_name(k), (unsigned long long)per_kind[k]);
    uint64_t fsize = trc_reader_file_size(r);
    printf("size:         %llu bytes file; events %llu bytes stored, %llu raw\n",
           (unsigned long long)fsize, (unsigned long long)stored, (unsigned long long)raw);
    if (n)
        printf("per event:    %.2f bytes in the file, %.2f stored, %.2f encoded before zlib\n"
               "compression:  zlib %.2fx (encoded/stored); %.1fx smaller than %zu-byte events\n",
               (double)fsize / (double)n, (double)stored / (double)n, (double)raw / (double)n,
               stored ? (double)raw / (double)stored : 0.0,
               stored ? (double)(n * sizeof(trc_event)) / (double)stored : 0.0, sizeof(trc_event));
    print_damage(stdout, r);
    trc_close(r);
    return 0;
}

static int parse_u64(const char *opt, const char *v, uint64_t *out)
{
    if (!v || !*v || v[0] == '-') {
        fprintf(stderr, "npusim trace export: %s needs a number\n", opt);
        return -1;
    }
    if (npu_parse_u64(v, out)) {
        fprintf(stderr, "npusim trace export: %s: not a number: '%s'\n", opt, v);
        return -1;
    }
    return 0;
}

static int cmd_export(int argc, char **argv)
{
    const char *fmt = NULL, *in = NULL, *out = NULL;
    trc_export_opts o = { .filter = TRC_FILTER_ALL };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        uint64_t x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return usage(stdout, 0);
        if (!strcmp(a, "--stalls")) {
            o.stalls = 1;
        } else if (!strcmp(a, "--format") || !strcmp(a, "-o") || !strcmp(a, "--core") ||
                   !strcmp(a, "--from") || !strcmp(a, "--to")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "npusim trace export: %s needs a value\n", a);
                return usage(stderr, 2);
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--format")) fmt = v;
            else if (!strcmp(a, "-o")) out = v;
            else {
                if (parse_u64(a, v, &x) != 0)
                    return 2;
                if (!strcmp(a, "--core")) o.filter.core = (int64_t)(x & 0xffffffffu);
                else if (!strcmp(a, "--from")) o.filter.t_lo = x;
                else o.filter.t_hi = x;
            }
        } else if (!strncmp(a, "--format=", 9)) {
            fmt = a + 9;
        } else if (a[0] == '-') {
            fprintf(stderr, "npusim trace export: unknown option '%s'\n", a);
            return usage(stderr, 2);
        } else if (in) {
            fprintf(stderr, "npusim trace export: more than one trace ('%s', '%s')\n", in, a);
            return usage(stderr, 2);
        } else {
            in = a;
        }
    }
    if (!fmt || !in || !out) {
        fprintf(stderr, "npusim trace export: --format, a trace and -o OUT are required\n");
        return usage(stderr, 2);
    }
    if (strcmp(fmt, "chrome") && strcmp(fmt, "folded") && strcmp(fmt, "csv")) {
        fprintf(stderr, "npusim trace export: unknown format '%s' (chrome, folded, csv)\n", fmt);
        return 2;
    }
    npu_diag d = { 0 };
    trc_reader *r = trc_open(in, &d);
    if (!r) {
        fprintf(stderr, "npusim trace export: %s\n", d.msg);
        return 2;
    }
    progress_on(r, "npusim trace export");
    npu_status st = trc_export_file(r, fmt, &o, out, &d);
    npu_tty_line_end();
    if (st != NPU_OK) {
        fprintf(stderr, "npusim trace export: %s\n", d.msg);
        trc_close(r);
        return 2;
    }
    size_t nd = trc_reader_damage(r, NULL);
    if (nd)
        fprintf(stderr, "npusim trace export: warning: %s is damaged in %zu place%s; exported "
                "what was intact (see 'npusim trace info')\n", in, nd, nd == 1 ? "" : "s");
    trc_close(r);
    return 0;
}

int trc_cmd_trace(int argc, char **argv)
{
    /* argv[0] is "trace" */
    if (argc < 2)
        return usage(stderr, 2);
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help"))
        return usage(stdout, 0);
    if (!strcmp(sub, "info"))
        return cmd_info(argc - 2, argv + 2);
    if (!strcmp(sub, "export"))
        return cmd_export(argc - 2, argv + 2);
    fprintf(stderr, "npusim trace: unknown subcommand '%s'\n", sub);
    return usage(stderr, 2);
}
