/* test_stat_run.c — `npusim stat` on real kernels (a subprocess of the
 * built npusim): counters against what a kernel must have done, counted by
 * hand (the PMU kernel tests/data/counters/pmu_region.s, a GEMM made by
 * `npusim ref`), consistency (busy + stalls + idle = cycles; the interval
 * windows add up to the totals; the observer agrees with the engine), and
 * the PMU values the kernel stores about itself. */
#include "tests/counters/suites.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counters/ctr.h"

#define CORES 2
#define NV 5

static char tmpdir[256];

/* Run a shell command; its stdout into *out (malloc'd, NUL-terminated). */
static int sh(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(char **out, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    ck_assert_ptr_nonnull(b);
    size_t k;
    while ((k = fread(b + n, 1, cap - n - 1, p)) > 0) {
        n += k;
        if (n + 1 == cap) {
            cap *= 2;
            b = realloc(b, cap);
            ck_assert_ptr_nonnull(b);
        }
    }
    b[n] = 0;
    int st = pclose(p);
    if (out)
        *out = b;
    else
        free(b);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* The PMU number of an event, from `npusim stat --list` (not hard-coded). */
static int pmu_number(const char *ev)
{
    char *o;
    ck_assert_int_eq(sh(&o, "'%s' stat --list", ctr_test_npusim()), 0);
    char pat[80];
    snprintf(pat, sizeof pat, "\n  %s ", ev);
    char *p = strstr(o, pat);
    ck_assert_ptr_nonnull(p);
    int n = atoi(p + strlen(pat));
    free(o);
    ck_assert_int_eq(n, ctr_event_find(ev));   /* the binary's table is this one */
    return n;
}

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/ctr_test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    const char *root = getenv("NPU_ROOT") ? getenv("NPU_ROOT") : ".";
    int rc = sh(NULL,
                "'%s' asm '%s/tests/data/counters/pmu_region.s' -I '%s/kernels/include' -D NV=%d "
                "-D EV0=%d -D EV1=%d -D EV2=%d -D EV3=%d -o '%s/pmu.elf' >&2",
                ctr_test_npusim(), root, root, NV, pmu_number("class.vector"),
                pmu_number("path.gm_ub.bytes"), pmu_number("vec.elems.f32"), pmu_number("cycles"),
                tmpdir);
    ck_assert_int_eq(rc, 0);
}

static void teardown(void)
{
    char *o;
    sh(&o, "rm -rf '%s'", tmpdir);
    free(o);
}

#define PMU_ARGS "'%s/pmu.elf' --cores %d --out x=f32[%d] --out y=f32[%d] --out r='%s/r.npy':s64[%d]"
#define PMU_VALS tmpdir, CORES, 1024 * CORES, 1024 * CORES, tmpdir, 8 * CORES

static cJSON *stat_json(const char *opts)
{
    char *o;
    int rc = sh(&o, "'%s' stat --json %s " PMU_ARGS, ctr_test_npusim(), opts, PMU_VALS);
    ck_assert_msg(rc == 0, "npusim stat %s: exit %d\n%s", opts, rc, o);
    cJSON *j = cJSON_Parse(o);
    ck_assert_msg(j != NULL, "not JSON: %s", o);
    free(o);
    return j;
}

static double jval(cJSON *j, const char *ev)
{
    cJSON *e = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "events"), ev);
    ck_assert_msg(e != NULL, "no event %s", ev);
    return cJSON_GetObjectItemCaseSensitive(e, "value")->valuedouble;
}

/* Every data move of the kernel, counted by hand: per core one 4096-byte
 * GM -> UB and one 4096-byte UB -> GM; NV + 4 vadd.f32 of 1024 elements;
 * six 8-byte sdg stores and three 8-byte argument loads (ldg); a closing
 * loop of four conditional branches, three taken. */
START_TEST(hand_counted_kernel)
{
    cJSON *j = stat_json("-M all");
    ck_assert_double_eq(jval(j, "path.gm_ub.bytes"), 4096.0 * CORES);
    ck_assert_double_eq(jval(j, "path.ub_gm.bytes"), 4096.0 * CORES);
    double other = 0;
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        const char *n = ctr_event(e)->name;
        if (!strncmp(n, "path.", 5) && strcmp(n, "path.gm_ub.bytes") && strcmp(n, "path.ub_gm.bytes"))
            other += jval(j, n);
    }
    ck_assert_double_eq(other, 0);
    ck_assert_double_eq(jval(j, "class.vector"), (NV + 4.0) * CORES);
    ck_assert_double_eq(jval(j, "pipe.v.insns"), (NV + 4.0 + 3.0) * CORES);   /* + 3 flag ops on V */
    ck_assert_double_eq(jval(j, "vec.elems.f32"), (NV + 4.0) * 1024 * CORES);
    ck_assert_double_eq(jval(j, "scalar.stores"), 6.0 * CORES);
    ck_assert_double_eq(jval(j, "gm.write_bytes"), (4096.0 + 48) * CORES);
    ck_assert_double_eq(jval(j, "gm.read_bytes"), (4096.0 + 24) * CORES);
    ck_assert_double_eq(jval(j, "cube.macs.f16"), 0);
    ck_assert_double_eq(jval(j, "scalar.branches"), 4.0 * CORES);        /* the closing loop */
    ck_assert_double_eq(jval(j, "scalar.branches_taken"), 3.0 * CORES);
    ck_assert_double_eq(jval(j, "class.control"), 4.0 * CORES);
    ck_assert_double_eq(jval(j, "class.cube") + jval(j, "class.datamove"), 2.0 * CORES);
    ck_assert_double_eq(jval(j, "sync.flag_sets"), 3.0 * CORES);
    ck_assert_double_eq(jval(j, "sync.flag_waits"), 3.0 * CORES);
    ck_assert_double_eq(jval(j, "l2.reads") + jval(j, "l2.writes"), jval(j, "gm.requests"));
    ck_assert_double_eq(jval(j, "hbm.bytes_read") > 0, 1);
    cJSON_Delete(j);
}
END_TEST

/* Per core and pipe: busy + stalls outside busy + idle = cycles, with idle
 * from the engine's figures; and the interval windows (from the observer's
 * spans and dispatches) add up to the engine's totals. */
START_TEST(cycles_add_up)
{
    cJSON *j = stat_json("--per-core -M all");
    cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "events");
    cJSON *cyc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "cycles"), "per_instance");
    static const char *const pipes[] = {"s", "v", "m", "mte1", "mte2", "mte3", "fix"};
    for (int c = 0; c < CORES; c++) {
        double cycles = cJSON_GetArrayItem(cyc, c)->valuedouble;
        ck_assert_double_gt(cycles, 0);
        for (size_t p = 0; p < 7; p++) {
            double sum = 0;
            for (cJSON *it = ev->child; it; it = it->next) {
                char pre[32];
                snprintf(pre, sizeof pre, "pipe.%s.", pipes[p]);
                if (strncmp(it->string, pre, strlen(pre)) || strstr(it->string, ".insns"))
                    continue;
                int inside = strstr(it->string, ".stall.bank") ||
                             (strstr(it->string, ".stall.memory") && p != 0);
                if (inside)
                    continue;
                sum += cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "per_instance"), c)->valuedouble;
            }
            ck_assert_msg(sum == cycles, "core %d pipe %s: busy + stalls + idle = %.0f, cycles %.0f", c,
                          pipes[p], sum, cycles);
        }
    }
    /* windows of 64 cycles */
    cJSON *iv = stat_json("-I 64 -M all");
    cJSON *w = cJSON_GetObjectItemCaseSensitive(iv, "intervals");
    ck_assert_int_gt(cJSON_GetArraySize(w), 4);
    int checked = 0, mem_checked = 0;
    for (cJSON *it = ev->child; it; it = it->next) {
        double total = 0;
        int seen = 0;
        for (cJSON *win = w->child; win; win = win->next) {
            cJSON *e = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(win, "events"),
                                                        it->string);
            if (e) {
                total += cJSON_GetObjectItemCaseSensitive(e, "value")->valuedouble;
                seen = 1;
            }
        }
        if (!seen)
            continue;
        double want = cJSON_GetObjectItemCaseSensitive(it, "value")->valuedouble;
        ck_assert_msg(total == want, "%s: windows sum to %.0f, total %.0f", it->string, total, want);
        checked++;
        if (!strncmp(it->string, "l2.", 3) || !strncmp(it->string, "hbm.", 4))
            mem_checked++;
    }
    ck_assert_int_gt(checked, 40);
    /* the memory side has windows too (every L2 and HBM event, the read
     * latency histogram by its count), and they add up as well */
    ck_assert_int_eq(mem_checked, 9 + 11);
    /* the read latency's windows: count x mean adds up to the samples' sum */
    {
        double wsum = 0;
        for (cJSON *win = w->child; win; win = win->next) {
            cJSON *e = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(win, "events"),
                                                        "hbm.read_latency");
            cJSON *mt = e ? cJSON_GetObjectItemCaseSensitive(e, "metric") : NULL;
            if (mt)
                wsum += cJSON_GetObjectItemCaseSensitive(e, "value")->valuedouble *
                        cJSON_GetObjectItemCaseSensitive(mt, "value")->valuedouble;
        }
        cJSON *tot = stat_json("-e hbm.read_latency");
        cJSON *h = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tot, "events"), "hbm.read_latency"),
            "histogram");
        double want = cJSON_GetObjectItemCaseSensitive(h, "sum")->valuedouble;
        ck_assert_double_gt(want, 0);
        ck_assert_double_eq_tol(wsum, want, want * 1e-5);
        cJSON_Delete(tot);
    }
    double last = 0;
    for (cJSON *win = w->child; win; win = win->next) {
        double e = cJSON_GetObjectItemCaseSensitive(win, "end_cycle")->valuedouble;
        ck_assert_double_gt(e, last);
        last = e;
    }
    ck_assert_double_eq(last, jval(j, "chip.cycles"));
    cJSON_Delete(iv);
    cJSON_Delete(j);
    /* and the command's own check (observer vs engine, idle >= 0) */
    ck_assert_int_eq(sh(NULL, "'%s' stat --check " PMU_ARGS " >/dev/null 2>&1", ctr_test_npusim(), PMU_VALS), 0);
}
END_TEST

/* The values the kernel read from its own PMU (r.npy, s64). */
START_TEST(pmu_reads_its_own_counters)
{
    cJSON *j = stat_json("-e cycles");
    double total_cycles = jval(j, "cycles") / CORES;
    cJSON_Delete(j);
    char path[300];
    snprintf(path, sizeof path, "%s/r.npy", tmpdir);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char hdr[10];
    ck_assert_int_eq(fread(hdr, 1, 10, f), 10);
    ck_assert(!memcmp(hdr, "\x93NUMPY", 6));
    long hlen = hdr[8] | hdr[9] << 8;
    fseek(f, 10 + hlen, SEEK_SET);
    int64_t r[8 * CORES];
    ck_assert_int_eq(fread(r, sizeof r[0], 8 * CORES, f), 8 * CORES);
    fclose(f);
    for (int c = 0; c < CORES; c++) {
        const int64_t *v = r + 8 * c;
        ck_assert_int_eq(v[0], NV);               /* class.vector in region 1 */
        ck_assert_int_eq(v[1], 4096);             /* path.gm_ub.bytes */
        ck_assert_int_eq(v[2], NV * 1024);        /* vec.elems.f32 */
        ck_assert_int_gt(v[3], 0);                /* cycles of the region: some, */
        ck_assert_int_lt(v[3], (int64_t)total_cycles);   /* not the whole run */
        ck_assert_int_eq(v[4], NV);               /* disabled: the two vadds not counted */
        ck_assert_int_eq(v[5], 2);                /* zeroed, then region 2's two vadds */
    }
}
END_TEST

/* A GEMM from the kernel library: MACs = m * n * k; C written once. */
START_TEST(gemm_macs)
{
    const int m = 48, n = 40, k = 72;
    char *o;
    int rc = sh(&o, "'%s' ref gemm --m %d --n %d --k %d --dtype f16 --out f32 --cores 2 --seed 3 -o '%s/g' 2>&1",
                ctr_test_npusim(), m, n, k, tmpdir);
    ck_assert_msg(rc == 0, "%s", o);
    free(o);
    rc = sh(&o, "cd '%s/g' && '%s' stat --json --check -M all launch.json", tmpdir, ctr_test_npusim());
    ck_assert_msg(rc == 0, "%s", o);
    cJSON *j = cJSON_Parse(o);
    ck_assert_ptr_nonnull(j);
    free(o);
    ck_assert_double_eq(jval(j, "cube.macs.f16"), (double)m * n * k);
    ck_assert_double_eq(jval(j, "cube.macs.bf16") + jval(j, "cube.macs.s8"), 0);
    ck_assert_double_eq(jval(j, "path.l0c_gm.bytes"), (double)m * n * 4);
    ck_assert_double_gt(jval(j, "pipe.m.busy_cycles"), 0);
    cJSON *metrics = cJSON_GetObjectItemCaseSensitive(j, "metrics");
    const char *v = cJSON_GetObjectItemCaseSensitive(metrics, "roofline")->valuestring;
    ck_assert(!strcmp(v, "compute-bound") || !strcmp(v, "memory-bound") || !strcmp(v, "latency-bound"));
    cJSON_Delete(j);
}
END_TEST

/* Layouts of the command itself (the library's are in test_counters.c). */
START_TEST(command_formats_and_errors)
{
    char *o;
    ck_assert_int_eq(sh(&o, "'%s' stat -e vec.elems.f32,cycles " PMU_ARGS, ctr_test_npusim(), PMU_VALS), 0);
    char want[128];
    snprintf(want, sizeof want, "%20s      vec.elems.f32", "18,432");
    ck_assert_msg(strstr(o, want) != NULL, "%s", o);
    ck_assert_ptr_nonnull(strstr(o, " Performance counter stats for"));
    ck_assert_ptr_nonnull(strstr(o, "roofline"));
    free(o);
    ck_assert_int_eq(sh(&o, "'%s' stat -x, -e vec.elems.f32 " PMU_ARGS, ctr_test_npusim(), PMU_VALS), 0);
    ck_assert_msg(strstr(o, "total,18432,count,vec.elems.f32,") == o, "%s", o);
    free(o);
    ck_assert_int_eq(sh(&o, "'%s' stat -A -x, -e vec.elems.f32 " PMU_ARGS, ctr_test_npusim(), PMU_VALS), 0);
    ck_assert_ptr_nonnull(strstr(o, "core0,9216,count,vec.elems.f32,"));
    ck_assert_ptr_nonnull(strstr(o, "core1,9216,count,vec.elems.f32,"));
    free(o);
    /* bad input: exit 2 with a message naming the problem */
    ck_assert_int_eq(sh(&o, "'%s' stat -e pipe.v.busy_cycle " PMU_ARGS " 2>&1", ctr_test_npusim(), PMU_VALS), 2);
    ck_assert_ptr_nonnull(strstr(o, "did you mean pipe.v.busy_cycles"));
    free(o);
    ck_assert_int_eq(sh(&o, "'%s' stat -M nosuch " PMU_ARGS " 2>&1", ctr_test_npusim(), PMU_VALS), 2);
    free(o);
    ck_assert_int_eq(sh(&o, "'%s' stat -I 0 " PMU_ARGS " 2>&1", ctr_test_npusim(), PMU_VALS), 2);
    free(o);
    ck_assert_int_eq(sh(&o, "'%s' stat -I 1 " PMU_ARGS " 2>&1", ctr_test_npusim(), PMU_VALS), 0);
    free(o);
    ck_assert_int_eq(sh(&o, "'%s' stat --mode func " PMU_ARGS " 2>&1", ctr_test_npusim(), PMU_VALS), 2);
    ck_assert_ptr_nonnull(strstr(o, "func"));
    free(o);
    ck_assert_int_eq(sh(&o, "'%s' stat 2>&1", ctr_test_npusim()), 2);
    free(o);
}
END_TEST

Suite *ctr_run_suite(void)
{
    Suite *s = suite_create("stat");
    TCase *t = tcase_create("runs");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, hand_counted_kernel);
    tcase_add_test(t, cycles_add_up);
    tcase_add_test(t, pmu_reads_its_own_counters);
    tcase_add_test(t, gemm_macs);
    tcase_add_test(t, command_formats_and_errors);
    suite_add_tcase(s, t);
    return s;
}
