/* cmd_sweep.c — `npusim sweep`: the architect's tool (docs/sweep.md). Runs
 * the points of a sweep (a cartesian product of --set value lists and/or a
 * spec file's points) in parallel on the local cores, each point a one-point
 * worker process (`npusim sweep --point I ...`, re-executing this binary),
 * which runs `npusim stat --json` with a timeout and prints the point's
 * record. The same worker command lines make the cluster job list
 * (--emit-jobs); --merge gathers their files. Results come out in point
 * order whatever the completion order. Exit status: 0 every point ok,
 * 1 some point failed (its row says how), 2 bad input. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/config.h"
#include "sim/sweep.h"

#include "sim/npusim.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: npusim sweep [--launch LAUNCH.json] [--config F] [--set KEY=V1,V2,...]...\n"
        "                    [--spec SPEC.json] [-j N] [-o OUT.csv|OUT.json|-] [options]\n"
        "       npusim sweep ... --emit-jobs JOBS.txt [--points-dir DIR]\n"
        "       npusim sweep --merge DIR [-o OUT.csv|OUT.json|-]\n"
        "\n"
        "Runs every point of the cartesian product of the --set value lists (crossed\n"
        "with the points of a spec file, if given) as its own `npusim stat --json`\n"
        "process, -j at a time, and writes one row per point in point order: the\n"
        "overrides, status, cycles, time and the stat counters. docs/sweep.md.\n"
        "\n"
        "options:\n"
        "  --launch FILE      the kernel: a launch file (npusim ref ... -o DIR) or ELF\n"
        "  --config FILE      machine config of every point (default: the embedded one)\n"
        "  --set KEY=V1,V2    an axis of the grid (repeatable; the last varies fastest);\n"
            "                     cores=N,..: the kernel on every core of an N-core machine\n"
        "  --spec FILE        a spec file: {\"launch\", \"config\", \"set\": {K: [..]}, \"points\": [..]}\n"
        "  -j N               points run at once (default: the host's cores)\n"
        "  -o FILE            results: .json gives JSON, else CSV; - or none: CSV on stdout\n"
        "  --format csv|json  override the format chosen from the file name\n"
        "  --timeout SEC      per-point limit (stat and verify together; default 3600, 0 none)\n"
        "  --verify           also `npusim run -q` each point: status fail if an --expect fails\n"
        "  -e LIST, -M GROUP  the counters collected (npusim stat's; default group 'default')\n"
        "  --cores N, --mode perf|timing, --max-cycles N   passed to every point\n"
        "  --max-points N     refuse larger sweeps (default 100000)\n"
        "  --emit-jobs FILE   write one shell command per point instead of running them;\n"
        "                     each writes DIR/NNNN.json (GNU parallel, Slurm arrays)\n"
        "  --points-dir DIR   where the job lines write (default: points)\n"
        "  --merge DIR        gather DIR/*.json (from the job lines) into one table\n"
        "  --point I --of N   the one-point worker (what each job line runs)\n"
        "  -h, --help         this help\n"
        "\n"
        "exit status: 0 every point ok, 1 some point failed or is missing, 2 bad input\n");
}

typedef struct sw_args {
    sweep_spec spec;
    sweep_opts opts;
    const char *out, *format, *emit, *points_dir, *merge;
    long jobs;
    size_t max_points;
    long point, of;
} sw_args;

static int bad(const char *fmt, const char *a)
{
    fprintf(stderr, "npusim sweep: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (npusim sweep --help)\n");
    return 2;
}

static int parse_long(const char *s, long lo, long *v)
{
    char *e;
    errno = 0;
    long x = s && *s ? strtol(s, &e, 10) : 0;
    if (!s || !*s || *e || errno || x < lo)
        return -1;
    *v = x;
    return 0;
}

static int diag_fail(const npu_diag *d)
{
    fprintf(stderr, "npusim sweep: %s\n", d->msg);
    return 2;
}

static int write_out(const sw_args *a, cJSON *const *recs, size_t n)
{
    const char *fmt = a->format;
    if (!fmt) {
        size_t l = a->out ? strlen(a->out) : 0;
        fmt = l >= 5 && !strcmp(a->out + l - 5, ".json") ? "json" : "csv";
    }
    npu_buf b = { 0 };
    npu_diag d = { 0 };
    npu_status st = !strcmp(fmt, "json") ? sweep_write_json(recs, n, &b, &d)
                                         : sweep_write_csv(recs, n, &b, &d);
    if (st) {
        npu_buf_free(&b);
        return diag_fail(&d);
    }
    int rc = 0;
    if (!a->out || !strcmp(a->out, "-")) {
        if (fwrite(b.data, 1, b.len, stdout) != b.len || fflush(stdout))
            rc = bad("%s", "cannot write the results to stdout");
    } else if (npu_write_file_atomic(a->out, b.data, b.len, &d)) {
        rc = diag_fail(&d);
    }
    npu_buf_free(&b);
    return rc;
}

/* Progress on a terminal only: a pipe or file gets nothing but results. */
static void progress(int tty, size_t done, size_t n, size_t running, size_t notok, int last)
{
    if (!tty)
        return;
    fprintf(stderr, "\rsweep: %zu/%zu points done, %zu running, %zu not ok   %s", done, n, running,
            notok, last ? "\n" : "");
    fflush(stderr);
}

static int self_exe(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return 0;
}

/* ---- the one-point worker ---------------------------------------------- */
static int run_worker(sw_args *a, const char *exe)
{
    npu_diag d = { 0 };
    sweep_point *pts;
    size_t n;
    if (sweep_expand(&a->spec, 1, &pts, &n, &d))
        return diag_fail(&d);
    if (a->point >= a->of)
        return bad("%s", "--point I needs --of N with I < N");
    cJSON *rec;
    npu_status st = sweep_run_point(exe, &pts[0], (size_t)a->point, (size_t)a->of, &a->opts, &rec, &d);
    sweep_points_free(pts, n);
    if (st)
        return diag_fail(&d);
    char *s = cJSON_PrintUnformatted(rec);
    int ok = sweep_record_ok(rec);
    cJSON_Delete(rec);
    if (!s)
        return bad("%s", "out of memory");
    size_t l = strlen(s);
    s[l] = '\n'; /* cJSON's buffer has room: replace the NUL, write l + 1 */
    int rc = 0;
    if (!a->out || !strcmp(a->out, "-")) {
        if (fwrite(s, 1, l + 1, stdout) != l + 1 || fflush(stdout))
            rc = 2;
    } else if (npu_write_file_atomic(a->out, s, l + 1, &d)) {
        rc = diag_fail(&d);
    }
    cJSON_free(s);
    return rc ? rc : ok;
}

/* ---- the direct sweep -------------------------------------------------- */
typedef struct slot { pid_t pid; int fd; size_t point; npu_buf out; } slot;

static int run_direct(sw_args *a, const char *exe, sweep_point *pts, size_t n)
{
    cJSON **recs = npu_calloc(n ? n : 1, sizeof *recs);
    long j = a->jobs > 0 ? a->jobs : sysconf(_SC_NPROCESSORS_ONLN);
    if (j < 1)
        j = 1;
    if ((size_t)j > n)
        j = (long)(n ? n : 1);
    slot *sl = npu_calloc((size_t)j, sizeof *sl);
    struct pollfd *pf = npu_calloc((size_t)j, sizeof *pf);
    if (!recs || !sl || !pf) {
        npu_free(recs);
        npu_free(sl);
        npu_free(pf);
        return bad("%s", "out of memory");
    }
    int tty = isatty(2), rc = 0;
    size_t next = 0, done = 0, running = 0, notok = 0;
    /* the points' own status lines would land in the stderr we read their
     * messages from: the sweep's line is the one to show */
    setenv("NPUSIM_PROGRESS", "0", 1);
    npu_diag d = { 0 };
    for (long i = 0; i < j; i++)
        sl[i].pid = 0;
    while (done < n) {
        for (long i = 0; i < j && next < n; i++) {
            if (sl[i].pid)
                continue;
            char **argv = NULL;
            if (sweep_worker_argv(exe, &pts[next], next, n, &a->opts, "-", &argv, &d) ||
                sweep_spawn(argv, &sl[i].pid, &sl[i].fd, NULL, &d)) {
                sweep_argv_free(argv);
                rc = diag_fail(&d);
                goto out;
            }
            sweep_argv_free(argv);
            sl[i].point = next++;
            memset(&sl[i].out, 0, sizeof sl[i].out);
            running++;
        }
        progress(tty, done, n, running, notok, 0);
        nfds_t np = 0;
        for (long i = 0; i < j; i++)
            if (sl[i].pid)
                pf[np++] = (struct pollfd){ sl[i].fd, POLLIN, 0 };
        if (poll(pf, np, -1) < 0 && errno != EINTR) {
            rc = bad("poll: %s", strerror(errno));
            goto out;
        }
        for (long i = 0; i < j; i++) {
            if (!sl[i].pid)
                continue;
            char buf[65536];
            ssize_t r;
            while ((r = read(sl[i].fd, buf, sizeof buf)) > 0)
                npu_buf_append(&sl[i].out, buf, (size_t)r);
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            /* EOF: the worker is done */
            close(sl[i].fd);
            int ws;
            while (waitpid(sl[i].pid, &ws, 0) < 0 && errno == EINTR)
                ;
            sl[i].pid = 0;
            running--;
            done++;
            npu_buf_append(&sl[i].out, "", 1);
            size_t p = sl[i].point;
            char where[64];
            snprintf(where, sizeof where, "point %zu", p);
            if (sl[i].out.oom ||
                sweep_parse_record((const char *)sl[i].out.data, where, &recs[p], &d)) {
                /* the worker died before printing a record: say so in its row */
                recs[p] = cJSON_CreateObject();
                cJSON_AddNumberToObject(recs[p], "index", (double)p);
                cJSON_AddNumberToObject(recs[p], "of", (double)n);
                cJSON_AddStringToObject(recs[p], "launch", pts[p].launch);
                cJSON_AddStringToObject(recs[p], "status", "error");
                cJSON_AddNumberToObject(recs[p], "exit", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
                cJSON_AddStringToObject(recs[p], "error", "the sweep worker printed no record");
            }
            npu_buf_free(&sl[i].out);
            if (sweep_record_ok(recs[p]))
                notok++;
        }
    }
    progress(tty, done, n, running, notok, 1);
    rc = write_out(a, recs, n);
    if (!rc && notok) {
        fprintf(stderr, "npusim sweep: %zu of %zu points not ok (see their status and error columns)\n",
                notok, n);
        rc = 1;
    }
out:
    for (long i = 0; i < j; i++)
        if (sl[i].pid) { /* only on an error above: stop our own workers */
            kill(sl[i].pid, SIGKILL);
            close(sl[i].fd);
            waitpid(sl[i].pid, NULL, 0);
            npu_buf_free(&sl[i].out);
        }
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(recs[i]);
    npu_free(recs);
    npu_free(sl);
    npu_free(pf);
    return rc;
}

/* ---- the job list ------------------------------------------------------ */
static int emit_jobs(sw_args *a, const char *exe, sweep_point *pts, size_t n)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return bad("getcwd: %s", strerror(errno));
    const char *dir = a->points_dir ? a->points_dir : "points";
    if (mkdir(dir, 0777) && errno != EEXIST)
        return bad("cannot make the points directory: %s", strerror(errno));
    int width = 4;
    for (size_t m = n ? n - 1 : 0; m >= 10000; m /= 10)
        width++;
    npu_buf b = { 0 };
    npu_diag d = { 0 };
    for (size_t i = 0; i < n; i++) {
        npu_buf ob = { 0 };
        npu_buf_printf(&ob, "%s/%0*zu.json", dir, width, i);
        npu_buf_append(&ob, "", 1);
        if (ob.oom) {
            npu_buf_free(&b);
            return bad("%s", "out of memory");
        }
        const char *out = (const char *)ob.data;
        char **argv;
        npu_status st = sweep_worker_argv(exe, &pts[i], i, n, &a->opts, out, &argv, &d);
        npu_buf_free(&ob);
        if (st) {
            npu_buf_free(&b);
            return diag_fail(&d);
        }
        /* each line runs from the sweep's directory, so relative paths hold */
        npu_buf_printf(&b, "cd ");
        sweep_shell_quote(&b, cwd);
        npu_buf_printf(&b, " &&");
        for (char **p = argv; *p; p++) {
            npu_buf_append(&b, " ", 1);
            sweep_shell_quote(&b, *p);
        }
        npu_buf_append(&b, "\n", 1);
        sweep_argv_free(argv);
    }
    if (b.oom) {
        npu_buf_free(&b);
        return bad("%s", "out of memory");
    }
    int rc = npu_write_file_atomic(a->emit, b.data, b.len, &d) ? diag_fail(&d) : 0;
    npu_buf_free(&b);
    if (!rc && isatty(2))
        fprintf(stderr, "sweep: %zu jobs in %s, results to %s/; then npusim sweep --merge %s -o ...\n",
                n, a->emit, dir, dir);
    return rc;
}

/* ---- merge ------------------------------------------------------------- */
static int cmp_rec(const void *x, const void *y)
{
    double a = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)x, "index")->valuedouble;
    double b = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)y, "index")->valuedouble;
    return a < b ? -1 : a > b;
}

static int merge(sw_args *a)
{
    DIR *dir = opendir(a->merge);
    if (!dir)
        return bad("--merge: cannot open the directory (%s)", strerror(errno));
    cJSON **recs = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    npu_diag d = { 0 };
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") || e->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", a->merge, e->d_name);
        uint8_t *data;
        size_t len;
        cJSON *r;
        if (npu_read_file(path, 0, 64u << 20, &data, &len, &d)) {
            rc = diag_fail(&d);
            break;
        }
        npu_status st = sweep_parse_record((const char *)data, path, &r, &d);
        npu_free(data);
        if (st) {
            rc = diag_fail(&d);
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            cJSON **nr = npu_realloc(recs, cap * sizeof *nr);
            if (!nr) {
                cJSON_Delete(r);
                rc = bad("%s", "out of memory");
                break;
            }
            recs = nr;
        }
        recs[n++] = r;
    }
    closedir(dir);
    if (!rc && n == 0)
        rc = bad("--merge: no point files (*.json) in %s", a->merge);
    if (!rc) {
        qsort(recs, n, sizeof *recs, cmp_rec);
        double of = cJSON_GetObjectItemCaseSensitive(recs[0], "of")->valuedouble;
        for (size_t i = 0; i < n && !rc; i++) {
            const cJSON *r = recs[i];
            double idx = cJSON_GetObjectItemCaseSensitive(r, "index")->valuedouble;
            if (cJSON_GetObjectItemCaseSensitive(r, "of")->valuedouble != of)
                rc = bad("--merge: the point files are of different sweeps (\"of\" differs in %s)", a->merge);
            else if (i && cJSON_GetObjectItemCaseSensitive(recs[i - 1], "index")->valuedouble == idx) {
                fprintf(stderr, "npusim sweep: --merge: point %.0f appears twice in %s\n", idx, a->merge);
                rc = 2;
            }
        }
        if (!rc) {
            rc = write_out(a, recs, n);
            size_t notok = 0;
            for (size_t i = 0; i < n; i++)
                notok += (size_t)sweep_record_ok(recs[i]);
            if (!rc && (double)n < of) {
                fprintf(stderr, "npusim sweep: --merge: %.0f of %.0f points missing:", of - (double)n, of);
                size_t k = 0, shown = 0;
                for (double i = 0; i < of && shown < 20; i++) {
                    if (k < n && cJSON_GetObjectItemCaseSensitive(recs[k], "index")->valuedouble == i)
                        k++;
                    else {
                        fprintf(stderr, " %.0f", i);
                        shown++;
                    }
                }
                fprintf(stderr, "%s\n", (double)n + (double)shown < of ? " ..." : "");
                rc = 1;
            }
            if (!rc && notok) {
                fprintf(stderr, "npusim sweep: %zu of %zu points not ok\n", notok, n);
                rc = 1;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(recs[i]);
    npu_free(recs);
    return rc;
}

int sim_cmd_sweep(int argc, char **argv)
{
    sw_args a;
    memset(&a, 0, sizeof a);
    a.opts.timeout_s = 3600;
    a.max_points = 100000;
    a.point = -1;
    a.of = -1;
    npu_diag d = { 0 };
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                        \
    do {                                                               \
        if (!v) {                                                      \
            rc = bad("%s needs a value", o);                           \
            goto out;                                                  \
        }                                                              \
        i++;                                                           \
    } while (0)
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(o, "--launch")) {
            NEEDV();
            npu_free(a.spec.launch);
            a.spec.launch = npu_strdup(v);
        } else if (!strcmp(o, "--config")) {
            NEEDV();
            npu_free(a.spec.config);
            a.spec.config = npu_strdup(v);
        } else if (!strcmp(o, "--set")) {
            NEEDV();
            /* the worker gets one value per key and must not split on commas */
            if (sweep_add_axis(&a.spec, v, a.point < 0, &d)) {
                rc = diag_fail(&d);
                goto out;
            }
        } else if (!strcmp(o, "--spec")) {
            NEEDV();
            if (sweep_load_spec(&a.spec, v, &d)) {
                rc = diag_fail(&d);
                goto out;
            }
        } else if (!strcmp(o, "-j")) {
            NEEDV();
            if (parse_long(v, 1, &a.jobs)) {
                rc = bad("-j '%s': expected a positive integer", v);
                goto out;
            }
        } else if (!strncmp(o, "-j", 2) && o[2]) {
            if (parse_long(o + 2, 1, &a.jobs)) {
                rc = bad("'%s': expected -jN with N a positive integer", o);
                goto out;
            }
        } else if (!strcmp(o, "-o")) {
            NEEDV();
            a.out = v;
        } else if (!strcmp(o, "--format")) {
            NEEDV();
            if (strcmp(v, "csv") && strcmp(v, "json")) {
                rc = bad("--format '%s': expected csv or json", v);
                goto out;
            }
            a.format = v;
        } else if (!strcmp(o, "--timeout")) {
            NEEDV();
            char *e;
            a.opts.timeout_s = strtod(v, &e);
            if (!*v || *e || !(a.opts.timeout_s >= 0) || a.opts.timeout_s > 1e7) {
                rc = bad("--timeout '%s': expected seconds (0: none)", v);
                goto out;
            }
        } else if (!strcmp(o, "--verify")) {
            a.opts.verify = 1;
        } else if (!strcmp(o, "-e")) {
            NEEDV();
            a.opts.events = v;
        } else if (!strcmp(o, "-M")) {
            NEEDV();
            a.opts.group = v;
        } else if (!strcmp(o, "--cores")) {
            NEEDV();
            long c;
            if (parse_long(v, 1, &c)) {
                rc = bad("--cores '%s': expected a positive integer", v);
                goto out;
            }
            a.opts.cores = v;
        } else if (!strcmp(o, "--mode")) {
            NEEDV();
            if (strcmp(v, "perf") && strcmp(v, "timing")) {
                rc = bad("--mode '%s': expected perf or timing (a sweep collects counters)", v);
                goto out;
            }
            a.opts.mode = v;
        } else if (!strcmp(o, "--max-cycles")) {
            NEEDV();
            long c;
            if (parse_long(v, 1, &c)) {
                rc = bad("--max-cycles '%s': expected a positive integer", v);
                goto out;
            }
            a.opts.max_cycles = v;
        } else if (!strcmp(o, "--max-points")) {
            NEEDV();
            long c;
            if (parse_long(v, 1, &c)) {
                rc = bad("--max-points '%s': expected a positive integer", v);
                goto out;
            }
            a.max_points = (size_t)c;
        } else if (!strcmp(o, "--emit-jobs")) {
            NEEDV();
            a.emit = v;
        } else if (!strcmp(o, "--points-dir")) {
            NEEDV();
            a.points_dir = v;
        } else if (!strcmp(o, "--merge")) {
            NEEDV();
            a.merge = v;
        } else if (!strcmp(o, "--point")) {
            NEEDV();
            if (parse_long(v, 0, &a.point)) {
                rc = bad("--point '%s': expected an index", v);
                goto out;
            }
            if (a.spec.naxes) {
                rc = bad("%s", "--point must come before --set");
                goto out;
            }
        } else if (!strcmp(o, "--of")) {
            NEEDV();
            if (parse_long(v, 1, &a.of)) {
                rc = bad("--of '%s': expected a point count", v);
                goto out;
            }
        } else if (o[0] == '-') {
            rc = bad("unknown option '%s'", o);
            goto out;
        } else if (!a.spec.launch) {
            a.spec.launch = npu_strdup(o); /* npusim sweep LAUNCH.json --set ... */
        } else {
            rc = bad("unexpected argument '%s' (the kernel is given once, with --launch)", o);
            goto out;
        }
#undef NEEDV
    }
    if (a.merge) {
        if (a.spec.launch || a.spec.naxes || a.spec.npts || a.emit || a.point >= 0) {
            rc = bad("%s", "--merge DIR takes only -o and --format");
            goto out;
        }
        rc = merge(&a);
        goto out;
    }
    char exe[PATH_MAX];
    if (self_exe(exe, sizeof exe)) {
        rc = bad("%s", "cannot find the npusim binary (/proc/self/exe)");
        goto out;
    }
    if (a.point >= 0 || a.of >= 0) {
        if (a.point < 0 || a.of < 0) {
            rc = bad("%s", "--point I and --of N go together");
            goto out;
        }
        if (a.emit || a.spec.npts) {
            rc = bad("%s", "--point runs one point: no --emit-jobs or --spec");
            goto out;
        }
        rc = run_worker(&a, exe);
        goto out;
    }
    sweep_point *pts;
    size_t n;
    if (sweep_expand(&a.spec, a.max_points, &pts, &n, &d)) {
        rc = diag_fail(&d);
        goto out;
    }
    /* bad paths fail fast here rather than as N identical error rows */
    for (size_t i = 0; i < n; i++) {
        const char *f[2] = { pts[i].launch, pts[i].config };
        for (int k = 0; k < 2; k++)
            if (f[k] && access(f[k], R_OK)) {
                fprintf(stderr, "npusim sweep: point %zu: cannot read %s: %s\n", i, f[k], strerror(errno));
                sweep_points_free(pts, n);
                rc = 2;
                goto out;
            }
    }
    /* and so do keys that are no config key (a typo would give N error rows) */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < pts[i].nset; j++) {
            const char *k = pts[i].set[j].key;
            if (!strcmp(k, SWEEP_CORES_KEY) || cfg_check_key(k, &d) == NPU_OK)
                continue;
            fprintf(stderr, "npusim sweep: --set %s=...: %s%s\n", k, d.msg,
                    strstr(d.msg, "did you mean") ? "" : " (a sweep also takes " SWEEP_CORES_KEY ", the core count)");
            sweep_points_free(pts, n);
            rc = 2;
            goto out;
        }
    rc = a.emit ? emit_jobs(&a, exe, pts, n) : run_direct(&a, exe, pts, n);
    sweep_points_free(pts, n);
out:
    sweep_spec_free(&a.spec);
    return rc;
}
