/* main.c — the npuview command: options, then a window, a PNG or a benchmark. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "viewer/vw.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: npuview [options] trace.npt\n"
            "  (no option)              open a window (--view, --group, --heat, --range and\n"
            "                           --size set how it starts)\n"
            "  --screenshot out.png     render one frame headless and save it as PNG\n"
            "  --view V                 timeline | flame | hotspots | counters (default timeline)\n"
            "  --group G                the hotspot table's rows: functions | labels | pcs |\n"
            "                           opcodes (default functions; K in the window)\n"
            "  --range START:END        select a time range (cycles)\n"
            "  --heat linear|log        the heat maps' scale (default linear; L in the window)\n"
            "  --size WxH               picture / window size (default 1280x800)\n"
            "  --scale S                UI scale for the picture (HiDPI, default 1)\n"
            "  --bench                  load time and frame-time percentiles as JSON\n"
            "  --report                 print the hotspot table (rows by --group, over\n"
            "                           --range) on stdout, like perf report --stdio; no display\n"
            "  --format F               the report as text | csv | json (default text)\n"
            "  --sort K                 the report's order: busy | stall | count (largest\n"
            "                           first; default busy) | name | addr (program order:\n"
            "                           with --group pcs, an annotated listing)\n"
            "  --core N                 the report of one core's pipes only\n"
            "  --diff BASE.npt          the report of trace.npt against BASE.npt, row by\n"
            "                           row (as perf diff): base and new cycles, the change\n"
            "  --top N                  the report's first N rows only (default all)\n"
            "  -h, --help, --version    this text; the version\n"
            "loading a trace that takes over 2 s shows its progress on stderr on a terminal\n"
            "(NPUSIM_PROGRESS=0 never, 1 also in a pipe)\n"
            "exit status: 0 ok; 2 a file that is not a viewable trace, a bad option, or a\n"
            "failure of the run (display, PNG, out of memory), with a one-line message\n");
}

/* A load failure, in one line naming the trace (the reader's messages
 * start with the path already). Exit 2, as for every other failure
 * (npusim's convention: docs/reliability.md). */
static int load_failed(const char *trace, const npu_diag *d)
{
    size_t n = strlen(trace);
    if (!strncmp(d->msg, trace, n) && d->msg[n] == ':')
        fprintf(stderr, "npuview: %s\n", d->msg);
    else
        fprintf(stderr, "npuview: %s: %s\n", trace, d->msg[0] ? d->msg : "cannot load the trace");
    return 2;
}

/* The status line of a long load (on a terminal, after 2 s, as npusim's
 * trace commands show theirs; NPUSIM_PROGRESS=0 never, 1 also in a pipe).
 * The reader may call it from its decoding threads: one at a time. */
static pthread_mutex_t progress_mu = PTHREAD_MUTEX_INITIALIZER;
static void load_progress(void *user, uint64_t done, uint64_t total)
{
    pthread_mutex_lock(&progress_mu);
    npu_tty_line("npuview: %s: %.0f %% of the trace read", (const char *)user,
                 total ? 100.0 * (double)done / (double)total : 100.0);
    pthread_mutex_unlock(&progress_mu);
}

static npu_status load_model(vw_model *m, const char *trace, npu_diag *d)
{
    memset(m, 0, sizeof *m);
    trc_reader *r = trc_open(trace, d);
    if (!r)
        return d->status ? d->status : NPU_EIO;
    if (npu_tty_line_wanted()) {
        npu_tty_line_start();
        trc_reader_set_progress(r, load_progress, (void *)trace);
    }
    npu_status st = vw_model_load_reader(m, r, d);   /* takes r */
    if (st == NPU_OK)
        trc_reader_set_progress(m->r, NULL, NULL);   /* the window's later reads show nothing */
    pthread_mutex_lock(&progress_mu);
    npu_tty_line_end();
    pthread_mutex_unlock(&progress_mu);
    if (st == NPU_OK) {
        /* damage is not an error (the intact chunks load): a warning each */
        const trc_damage *dl;
        size_t nd = trc_reader_damage(m->r, &dl);
        for (size_t i = 0; i < nd && i < 5; i++)
            fprintf(stderr, "npuview: %s: warning: damage at byte %llu: %s\n", trace,
                    (unsigned long long)dl[i].offset, dl[i].what);
    }
    return st;
}

/* The index of val among names, else -1 after a message listing them
 * ("--view nope: expected timeline, flame, hotspots or counters"). */
static int pick(const char *opt, const char *val, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(val, names[i]))
            return i;
    fprintf(stderr, "npuview: %s %s: expected ", opt, val);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "%s%s", names[i], i == n - 1 ? "\n" : i == n - 2 ? " or " : ", ");
    return -1;
}

int main(int argc, char **argv)
{
    const char *shot = NULL, *trace = NULL;
    int bench = 0, report = 0;
    const char *report_only = NULL;   /* a report option given, for the check below */
    const char *diff = NULL;          /* --diff BASE */
    vw_report_opts ro = { .key = VW_HK_FUNC, .sort_col = 2, .fmt = VW_RF_TEXT, .core = -1 };
    vw_shot_opts o = { 1280, 800, VW_TAB_TIMELINE, 0, 0, 0, 1, VW_HK_FUNC };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("npuview %s\n", NPU_VERSION);
            return 0;
        } else if (!strcmp(a, "--bench")) {
            bench = 1;
        } else if (!strcmp(a, "--report")) {
            report = 1;
        } else if (!strcmp(a, "--format") || !strcmp(a, "--sort") || !strcmp(a, "--top") ||
                   !strcmp(a, "--core") || !strcmp(a, "--diff")) {
            if (!val) {
                fprintf(stderr, "npuview: %s needs a value\n", a);
                return 2;
            }
            i++;
            report_only = a;
            if (!strcmp(a, "--format")) {
                static const char *const names[3] = { "text", "csv", "json" };
                int k = pick(a, val, names, 3);
                if (k < 0)
                    return 2;
                ro.fmt = (vw_rfmt)k;
            } else if (!strcmp(a, "--sort")) {
                int k = pick(a, val, vw_sort_names, VW_SORT__N);
                if (k < 0)
                    return 2;
                ro.sort_col = k;
            } else if (!strcmp(a, "--diff")) {
                diff = val;
            } else if (!strcmp(a, "--core")) {
                char *e;
                long n = strtol(val, &e, 10);
                if (!*val || *e || n < 0 || n > 65535) {
                    fprintf(stderr, "npuview: --core %s: expected a core number from 0\n", val);
                    return 2;
                }
                ro.core = (int)n;
            } else {
                char *e;
                unsigned long long n = strtoull(val, &e, 10);
                if (!*val || *e || val[0] == '-' || n < 1 || n > 1000000000ull) {
                    fprintf(stderr, "npuview: --top %s: expected a number of rows from 1 to 1000000000\n", val);
                    return 2;
                }
                ro.top = (size_t)n;
            }
        } else if (!strcmp(a, "--screenshot") || !strcmp(a, "--view") || !strcmp(a, "--range") ||
                   !strcmp(a, "--group") || !strcmp(a, "--heat") ||
                   !strcmp(a, "--size") || !strcmp(a, "--scale")) {
            if (!val) {
                fprintf(stderr, "npuview: %s needs a value\n", a);
                return 2;
            }
            i++;
            if (!strcmp(a, "--screenshot")) {
                shot = val;
            } else if (!strcmp(a, "--view")) {
                static const char *const names[VW_NTABS] = { "timeline", "flame", "hotspots", "counters" };
                int k = pick(a, val, names, VW_NTABS);
                if (k < 0)
                    return 2;
                o.tab = (vw_tab)k;
            } else if (!strcmp(a, "--group")) {
                int k = pick(a, val, vw_hkey_names, VW_HK__N);
                if (k < 0)
                    return 2;
                o.hkey = (vw_hkey)k;
            } else if (!strcmp(a, "--heat")) {
                static const char *const names[2] = { "linear", "log" };
                int k = pick(a, val, names, 2);
                if (k < 0)
                    return 2;
                o.heat_log = k;
            } else if (!strcmp(a, "--range")) {
                char *e1, *e2;
                unsigned long long r0 = strtoull(val, &e1, 0), r1 = 0;
                if (*e1 == ':')
                    r1 = strtoull(e1 + 1, &e2, 0);
                if (*e1 != ':' || *e2 || r1 <= r0) {
                    fprintf(stderr, "npuview: --range %s: expected START:END with END > START (cycles)\n", val);
                    return 2;
                }
                o.has_range = 1;
                o.r0 = r0;
                o.r1 = r1;
            } else if (!strcmp(a, "--size")) {
                int w, h;
                char x;
                if (sscanf(val, "%d%c%d", &w, &x, &h) != 3 || (x != 'x' && x != 'X') || w < 320 || h < 200 ||
                    w > 16384 || h > 16384) {
                    fprintf(stderr, "npuview: --size %s: expected WxH between 320x200 and 16384x16384\n", val);
                    return 2;
                }
                o.w = w;
                o.h = h;
            } else {
                char *e;
                double s = strtod(val, &e);
                if (*e || s < 0.5 || s > 4) {
                    fprintf(stderr, "npuview: --scale %s: expected a number from 0.5 to 4\n", val);
                    return 2;
                }
                o.scale = (float)s;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npuview: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (trace) {
            fprintf(stderr, "npuview: one trace at a time (%s and %s)\n", trace, a);
            return 2;
        } else {
            trace = a;
        }
    }
    if (!trace) {
        usage(stderr);
        return 2;
    }
    if (report_only && !report) {
        fprintf(stderr, "npuview: %s is an option of --report\n", report_only);
        return 2;
    }
    if (report && (bench || shot)) {
        fprintf(stderr, "npuview: --report prints a table: not with %s\n", bench ? "--bench" : "--screenshot");
        return 2;
    }
    if (report) {
        /* no SDL at all: a report needs no display */
        vw_model m;
        npu_diag d = {0};
        if (load_model(&m, trace, &d) != NPU_OK)
            return load_failed(trace, &d);
        ro.key = o.hkey;
        ro.has_range = o.has_range;
        ro.r0 = o.r0;
        ro.r1 = o.r1;
        ro.trace = trace;
        npu_buf b = {0};
        int rc = 0;
        vw_model base;
        if (diff && load_model(&base, diff, &d) != NPU_OK) {
            vw_model_free(&m);
            return load_failed(diff, &d);
        }
        if ((diff ? vw_report_diff(&base, &m, &ro, diff, &b, &d) : vw_report(&m, &ro, &b, &d)) != NPU_OK) {
            fprintf(stderr, "%s\n", d.msg);
            rc = 2;
        } else if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
            fprintf(stderr, "npuview: writing the report: %s\n", strerror(errno));
            rc = 2;
        }
        npu_buf_free(&b);
        if (diff)
            vw_model_free(&base);
        vw_model_free(&m);
        return rc;
    }
    if (SDL_Init(0) != 0) {
        fprintf(stderr, "npuview: SDL_Init: %s\n", SDL_GetError());
        return 2;
    }
    npu_diag d = {0};
    int rc = 0;
    if (bench) {
        /* a trace that cannot be opened or loaded (vw_bench loads it first)
         * gets the same message as without --bench */
        npu_buf b = {0};
        if (vw_bench(trace, o.w, o.h, &b, &d) == NPU_OK)
            fwrite(b.data, 1, b.len, stdout);
        else
            rc = d.status == NPU_EFORMAT || d.status == NPU_EIO ? load_failed(trace, &d)
                                                                 : (fprintf(stderr, "npuview: %s\n", d.msg), 2);
        npu_buf_free(&b);
    } else {
        vw_model m;
        if (load_model(&m, trace, &d) != NPU_OK) {
            rc = load_failed(trace, &d);
        } else {
            npu_status st = shot ? vw_screenshot(&m, &o, shot, &d) : vw_run_window(&m, &o, &d);
            if (st) {
                fprintf(stderr, "%s\n", d.msg);
                rc = 2;
            }
            vw_model_free(&m);
        }
    }
    if (TTF_WasInit())
        TTF_Quit();
    SDL_Quit();
    return rc;
}
