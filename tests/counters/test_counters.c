/* test_counters.c — the counters part without the simulator: the table
 * checks itself (STYLE.md 3), selection and its errors, derived metrics and
 * the roofline verdict on hand-made values, the report layouts, interval
 * windows, allocation failures. Also the runner's main. */
#include "tests/counters/suites.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters/ctr.h"
#include "isa/isa.h"

static char npusim_path[PATH_MAX];

void ctr_test_set_argv0(const char *argv0)
{
    const char *env = getenv("NPUSIM");
    if (env && *env) {
        snprintf(npusim_path, sizeof npusim_path, "%s", env);
        return;
    }
    const char *slash = strrchr(argv0, '/');
    int n = slash ? (int)(slash - argv0) : 1;
    snprintf(npusim_path, sizeof npusim_path, "%.*s/npusim", n, slash ? argv0 : ".");
    /* absolute: some tests cd into a kernel's folder first */
    char abs[PATH_MAX];
    if (realpath(npusim_path, abs))
        snprintf(npusim_path, sizeof npusim_path, "%s", abs);
}

const char *ctr_test_npusim(void) { return npusim_path; }

/* ---- the table -------------------------------------------------------- */

START_TEST(events_are_well_formed)
{
    ck_assert_str_eq(ctr_event(0)->name, "insns");    /* PMU event 0: the executor's own */
    ck_assert_ptr_null(ctr_event(CTR_EV__COUNT));
    ck_assert_ptr_null(ctr_event(-1));
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        const ctr_event_info *i = ctr_event(e);
        ck_assert_msg(i->name[0] && strlen(i->desc) > 8, "row %d", e);
        for (const char *p = i->name; *p; p++)
            ck_assert_msg(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '.' || *p == '_',
                          "%s: JSON keys and labels are [a-z0-9._]", i->name);
        ck_assert_int_eq(ctr_event_find(i->name), e);     /* unique */
        ck_assert_int_lt(i->unit, CTR_UNIT__COUNT);
        ck_assert_int_lt(i->kind, CTR_KIND__COUNT);
    }
    ck_assert_int_eq(ctr_event_find("no.such"), -1);
    ck_assert_int_eq(ctr_event_find(NULL), -1);
}
END_TEST

/* Every family the issue asks for is in the table. */
START_TEST(required_events_exist)
{
    static const char *const need[] = {
        "cycles", "pipe.*.busy_cycles", "pipe.*.insns", "pipe.*.stall.flag", "pipe.s.stall.queue_full",
        "pipe.v.stall.bank", "pipe.mte2.stall.memory", "pipe.s.stall.barrier", "class.*", "cube.macs.*",
        "vec.elems.*", "path.*.bytes", "ub.bank_conflicts", "ub.bankgroup_conflicts", "l2.hits",
        "l2.misses", "l2.evictions", "l2.writebacks", "hbm.act", "hbm.pre", "hbm.rd", "hbm.wr", "hbm.ref",
        "hbm.row_hits", "hbm.row_misses", "hbm.row_conflicts", "hbm.bytes_read", "hbm.read_latency",
        "scalar.branches", "scalar.loads", "scalar.stores"};
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
        int hits = 0;
        for (int e = 0; e < CTR_EV__COUNT; e++)
            hits += !fnmatch(need[k], ctr_event(e)->name, 0);
        ck_assert_msg(hits > 0, "no event %s", need[k]);
    }
    int busy = 0;
    for (int e = 0; e < CTR_EV__COUNT; e++)
        busy += !fnmatch("pipe.*.busy_cycles", ctr_event(e)->name, 0);
    ck_assert_int_eq(busy, 7);
    ck_assert_int_eq(ctr_event(ctr_event_find("hbm.read_latency"))->kind, CTR_KIND_HIST);
}
END_TEST

START_TEST(groups_and_metrics_resolve)
{
    for (int g = 0; g < CTR_GROUP__COUNT; g++) {
        ctr_sel s;
        npu_diag d;
        ck_assert_int_eq(ctr_select(&s, NULL, ctr_group(g)->name, &d), NPU_OK);
        int n = 0;
        for (int e = 0; e < CTR_EV__COUNT; e++)
            n += s.on[e];
        ck_assert_msg(n > 0, "group %s selects nothing", ctr_group(g)->name);
        /* every item of the group's list matches something */
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", ctr_group(g)->events);
        for (char *it = strtok(buf, ","); it; it = strtok(NULL, ",")) {
            int hit = 0;
            for (int e = 0; e < CTR_EV__COUNT; e++)
                hit |= !fnmatch(it, ctr_event(e)->name, 0);
            ck_assert_msg(hit, "group %s: %s matches no event", ctr_group(g)->name, it);
        }
        ck_assert_int_eq(ctr_group_find(ctr_group(g)->name), g);
    }
    for (int m = 0; m < CTR_M__COUNT; m++) {
        const ctr_metric_info *mi = ctr_metric(m);
        if (!mi->anchor[0])
            continue;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", mi->anchor);
        for (char *it = strtok(buf, ","); it; it = strtok(NULL, ",")) {
            int hit = 0;
            for (int e = 0; e < CTR_EV__COUNT; e++)
                hit |= !fnmatch(it, ctr_event(e)->name, 0);
            ck_assert_msg(hit, "metric %s: anchor %s matches no event", mi->name, it);
        }
    }
    /* the msprof-style groups the issue names */
    static const char *const g[] = {"pipe_utilization", "arithmetic_utilization", "memory", "memory_l0_ub",
                                    "resource_conflicts", "l2_cache"};
    for (size_t k = 0; k < sizeof g / sizeof g[0]; k++)
        ck_assert_int_ge(ctr_group_find(g[k]), 0);
}
END_TEST

START_TEST(selection_errors_are_clear)
{
    ctr_sel s;
    npu_diag d;
    ck_assert_int_eq(ctr_select(&s, "pipe.*.busy_cycles", NULL, &d), NPU_OK);
    int n = 0;
    for (int e = 0; e < CTR_EV__COUNT; e++)
        n += s.on[e];
    ck_assert_int_eq(n, 7);
    ck_assert_int_eq(ctr_select(&s, "cycles,pipe.v.busy_cycle", NULL, &d), NPU_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "did you mean pipe.v.busy_cycles"));
    ck_assert_int_eq(ctr_select(&s, "zzzzzzzzzzzzzzzz", NULL, &d), NPU_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "unknown event 'zzzzzzzzzzzzzzzz'"));
    ck_assert_int_eq(ctr_select(&s, "cycles,", NULL, &d), NPU_EINVAL);
    ck_assert_int_eq(ctr_select(&s, ",cycles", NULL, &d), NPU_EINVAL);
    ck_assert_int_eq(ctr_select(&s, NULL, "nosuch", &d), NPU_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "l2_cache"));   /* lists the groups */
    ck_assert_int_eq(ctr_select(&s, NULL, NULL, &d), NPU_OK);
    ck_assert(s.on[CTR_EV_CYCLES]);
}
END_TEST

START_TEST(thousands_separators)
{
    char b[40];
    ctr_thousands(0, b, sizeof b);
    ck_assert_str_eq(b, "0");
    ctr_thousands(999, b, sizeof b);
    ck_assert_str_eq(b, "999");
    ctr_thousands(1000, b, sizeof b);
    ck_assert_str_eq(b, "1,000");
    ctr_thousands(1234567, b, sizeof b);
    ck_assert_str_eq(b, "1,234,567");
    ctr_thousands(UINT64_MAX, b, sizeof b);
    ck_assert_str_eq(b, "18,446,744,073,709,551,615");
}
END_TEST

/* ---- hand-made values --------------------------------------------------- */

static void one_core(ctr_values *cv, uint64_t cycles)
{
    ck_assert_int_eq(ctr_values_init(cv, 1, 0, 0, NULL), NPU_OK);
    for (int e = 0; e < CTR_EV__COUNT; e++)
        cv->have[e] = ctr_event(e)->unit == CTR_UNIT_CORE || ctr_event(e)->unit == CTR_UNIT_PIPE ||
                      ctr_event(e)->unit == CTR_UNIT_CHIP;
    cv->v[CTR_EV_CYCLES][0] = cycles;
    cv->v[CTR_EV_CHIP_CYCLES][0] = cycles;
}

/* 1 GHz, 1 core, 4096 f16 MACs per cycle, 1000 B per cycle of GM:
 * ridge = 2 * 4096 / 1000 = 8.192 op/B. */
static ctr_machine mach(void)
{
    ctr_machine m = {0};
    m.clock_ghz = 1.0;
    m.ncores = 1;
    m.cube_macs_per_cycle[ISA_DT_F16] = 4096;
    m.vec_elems_per_cycle[ISA_DT_F32] = 64;
    m.gm_peak_Bps = 1e12;
    return m;
}

static const char *verdict(uint64_t macs, uint64_t gm)
{
    ctr_values cv;
    one_core(&cv, 1000);
    cv.v[CTR_EV_MACS_F16][0] = macs;
    cv.v[CTR_EV_GM_RD][0] = gm;
    ctr_machine m = mach();
    ctr_summary s;
    ctr_summarize(&cv, &m, &s);
    ctr_values_free(&cv);
    ck_assert(s.have[CTR_M_VERDICT]);
    ck_assert_double_eq_tol(s.val[CTR_M_RIDGE], 8.192, 1e-9);
    ck_assert(!s.have[CTR_M_L2_RIDGE] && !s.have[CTR_M_HBM_AI]);   /* one level: no L2 */
    /* one memory roof, the HBM's: it or the compute roof bounds, by the ridge */
    ck_assert_str_eq(s.roof, 2.0 * (double)macs / (double)gm >= 8.192 ? "compute" : "hbm");
    return s.verdict;
}

START_TEST(roofline_verdicts)
{
    /* 90 % of the MAC peak, little traffic: compute-bound */
    ck_assert_str_eq(verdict(4096ull * 900, 1000), "compute-bound");
    /* low intensity and 90 % of the bandwidth: memory-bound */
    ck_assert_str_eq(verdict(1000, 900000), "memory-bound");
    /* neither roof approached: latency-bound */
    ck_assert_str_eq(verdict(1000, 1000), "latency-bound");
    ck_assert_str_eq(verdict(4096ull * 100, 1000), "latency-bound");   /* 10 % of peak */
}
END_TEST

/* The hierarchical roofline: with an L2 (2000 B/cycle here) GM bytes meet
 * the L2's roof and HBM bytes the HBM's (1000 B/cycle); the lowest roof
 * bounds. 1 core at 1 GHz for 1000 cycles, 4.096e6 ops = half the peak. */
static ctr_summary two_level(uint64_t macs, uint64_t gm, uint64_t hbm)
{
    ctr_values cv;
    ck_assert_int_eq(ctr_values_init(&cv, 1, 1, 1, NULL), NPU_OK);
    for (int e = 0; e < CTR_EV__COUNT; e++)
        cv.have[e] = ctr_event(e)->unit != CTR_UNIT_L2;
    cv.v[CTR_EV_CYCLES][0] = 1000;
    cv.v[CTR_EV_CHIP_CYCLES][0] = 1000;
    cv.v[CTR_EV_MACS_F16][0] = macs;
    cv.v[CTR_EV_GM_RD][0] = gm;
    cv.v[CTR_EV_HBM_BYTES_READ][0] = hbm;
    ctr_machine m = mach();
    m.l2_peak_Bps = 2e12;
    ctr_summary s;
    ctr_summarize(&cv, &m, &s);
    ctr_values_free(&cv);
    ck_assert(s.have[CTR_M_VERDICT] && s.have[CTR_M_ROOF]);
    ck_assert_double_eq_tol(s.val[CTR_M_L2_RIDGE], 4.096, 1e-9);
    ck_assert_double_eq_tol(s.val[CTR_M_RIDGE], 8.192, 1e-9);
    return s;
}

START_TEST(roofline_levels)
{
    /* GM intensity 2.56: the L2 roof allows 5.12e12 ops/s, the HBM's
     * (intensity 40.96) 4.1e13: L2-bound at 80 % of its roof. Against the
     * HBM's peak with GM bytes (the one-level rule) the kernel would sit at
     * 160 % of a roof, which a roofline cannot show. */
    ctr_summary s = two_level(4096ull * 500, 1600000, 100000);
    ck_assert_str_eq(s.verdict, "memory-bound");
    ck_assert_str_eq(s.roof, "l2");
    ck_assert_double_eq_tol(s.val[CTR_M_AI], 2.56, 1e-9);
    ck_assert_double_eq_tol(s.val[CTR_M_HBM_AI], 40.96, 1e-9);
    /* few GM bytes, many reach the HBM (misses): HBM-bound */
    s = two_level(4096ull * 500, 100000, 800000);
    ck_assert_str_eq(s.verdict, "memory-bound");
    ck_assert_str_eq(s.roof, "hbm");
    /* both intensities high: compute-bound */
    s = two_level(4096ull * 900, 1000, 1000);
    ck_assert_str_eq(s.verdict, "compute-bound");
    ck_assert_str_eq(s.roof, "compute");
    /* the L2 roof bounds (intensity 1.64), but the kernel reaches a
     * quarter of it (the L2 at 25 % of its peak): latency-bound, and the
     * roof still says which */
    s = two_level(4096ull * 100, 500000, 100000);
    ck_assert_str_eq(s.verdict, "latency-bound");
    ck_assert_str_eq(s.roof, "l2");
}
END_TEST

START_TEST(row_metrics)
{
    ctr_values cv;
    one_core(&cv, 2000);
    cv.v[CTR_EV_P_V_BUSY][0] = 500;
    cv.v[CTR_EV_INSNS][0] = 3000;
    cv.v[CTR_EV_MACS_F16][0] = 1000000;
    cv.v[CTR_EV_PATH_GM_L1][0] = 4000;
    ctr_machine m = mach();
    double v;
    ck_assert_int_eq(ctr_metric_row(&cv, &m, 2000, CTR_EV_P_V_BUSY, 0, &v), CTR_M_PIPE_UTIL);
    ck_assert_double_eq_tol(v, 25.0, 1e-9);
    ck_assert_int_eq(ctr_metric_row(&cv, &m, 2000, CTR_EV_INSNS, -1, &v), CTR_M_IPC);
    ck_assert_double_eq_tol(v, 1.5, 1e-9);
    /* 2e6 flop in 2 us = 1 TFLOP/s */
    ck_assert_int_eq(ctr_metric_row(&cv, &m, 2000, CTR_EV_MACS_F16, -1, &v), CTR_M_MAC_RATE);
    ck_assert_double_eq_tol(v, 1.0, 1e-9);
    /* 4000 B in 2 us = 2 GB/s */
    ck_assert_int_eq(ctr_metric_row(&cv, &m, 2000, CTR_EV_PATH_GM_L1, -1, &v), CTR_M_BW);
    ck_assert_double_eq_tol(v, 2.0, 1e-9);
    ck_assert_int_eq(ctr_metric_row(&cv, &m, 2000, CTR_EV_CL_VEC, -1, &v), -1);
    ctr_values_free(&cv);
}
END_TEST

START_TEST(check_finds_overlap)
{
    ctr_values cv;
    one_core(&cv, 100);
    npu_diag d;
    cv.v[CTR_EV_P_V_BUSY][0] = 60;
    cv.v[CTR_EV_P_V_ST_BANK][0] = 50;      /* inside busy: no violation */
    ck_assert_int_eq(ctr_check(&cv, &d), NPU_OK);
    cv.v[CTR_EV_P_V_ST_FLAG][0] = 41;      /* outside busy: 101 > 100 */
    ck_assert_int_eq(ctr_check(&cv, &d), NPU_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "pipe.v."));
    cv.v[CTR_EV_P_V_ST_FLAG][0] = 40;
    ck_assert_int_eq(ctr_check(&cv, &d), NPU_OK);
    cv.v[CTR_EV_CHIP_CYCLES][0] = 99;      /* chip cycles must be the max of the cores' */
    ck_assert_int_eq(ctr_check(&cv, &d), NPU_EINVAL);
    ctr_values_free(&cv);
}
END_TEST

static char *report(const ctr_values *cv, const char *events, ctr_aggr aggr, const char *sep, int json)
{
    ctr_sel s;
    ck_assert_int_eq(ctr_select(&s, events, NULL, NULL), NPU_OK);
    ctr_machine m = mach();
    ctr_report_opts o = {aggr, sep, json, "k.elf", "perf"};
    npu_buf b = {0};
    ctr_report(cv, &m, &s, &o, &b);
    ck_assert(!b.oom);
    npu_buf_append(&b, "", 1);
    return (char *)b.data;
}

START_TEST(text_layout_is_perf_stat)
{
    ctr_values cv;
    one_core(&cv, 1234567);
    cv.v[CTR_EV_P_V_BUSY][0] = 617283;
    char *t = report(&cv, "cycles,pipe.v.busy_cycles,l2.hits", CTR_AGGR_ALL, NULL, 0);
    ck_assert_ptr_nonnull(strstr(t, " Performance counter stats for 'k.elf' (perf mode, 1 core):"));
    /* right-aligned counts (20 wide), 6 spaces, the name, then # metric */
    ck_assert_ptr_nonnull(strstr(t, "\n           1,234,567      cycles\n"));
    ck_assert_ptr_nonnull(strstr(t, "\n             617,283      pipe.v.busy_cycles               #       50.00 % utilization\n"));
    ck_assert_ptr_nonnull(strstr(t, "<not counted>      l2.hits"));
    ck_assert_ptr_nonnull(strstr(t, "us time elapsed (1,234,567 cycles at 1.000 GHz, simulated)"));
    free(t);
    ctr_values_free(&cv);
}
END_TEST

START_TEST(csv_fields)
{
    ctr_values cv;
    one_core(&cv, 1000);
    cv.v[CTR_EV_P_V_BUSY][0] = 250;
    char *t = report(&cv, "cycles,pipe.v.busy_cycles", CTR_AGGR_ALL, ";", 0);
    ck_assert_ptr_nonnull(strstr(t, "total;1000;cycles;cycles;;;\n"));
    ck_assert_ptr_nonnull(strstr(t, "total;250;cycles;pipe.v.busy_cycles;25.0000;%;utilization\n"));
    for (char *line = t; *line;) {
        char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        int seps = 0;
        for (char *p = line; p < nl; p++)
            seps += *p == ';';
        ck_assert_int_eq(seps, 6);     /* 7 fields, every row */
        line = nl + 1;
    }
    free(t);
    ctr_values_free(&cv);
}
END_TEST

START_TEST(json_is_valid_and_in_table_order)
{
    ctr_values cv;
    one_core(&cv, 1000);
    cv.v[CTR_EV_MACS_F16][0] = 5;
    char *t = report(&cv, "*", CTR_AGGR_PER_CORE, NULL, 1);
    cJSON *j = cJSON_Parse(t);
    ck_assert_msg(j != NULL, "%s", t);
    cJSON *ev = cJSON_GetObjectItemCaseSensitive(j, "events");
    int last = -1, n = 0;
    for (cJSON *it = ev->child; it; it = it->next, n++) {
        int e = ctr_event_find(it->string);
        ck_assert_int_gt(e, last);
        last = e;
    }
    ck_assert_int_gt(n, 50);    /* core, pipe and chip rows (no L2/HBM: not counted) */
    cJSON *mc = cJSON_GetObjectItemCaseSensitive(ev, "cube.macs.f16");
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(mc, "value")->valuedouble, 5);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(mc, "per_instance")), 1);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(ev, "l2.hits"));
    cJSON_Delete(j);
    free(t);
    ctr_values_free(&cv);
}
END_TEST

START_TEST(interval_windows)
{
    ctr_intervals iv = {0};
    iv.width = 10;
    iv.ncores = 2;
    npu_diag d;
    ck_assert_int_eq(ctr_intervals_grow(&iv, 2, 100, &d), NPU_OK);
    ctr_intervals_add_span(&iv, CTR_EV_P_V_BUSY, 1, 5, 27);
    ctr_intervals_add(&iv, CTR_EV_INSNS, 0, 19, 3);
#define IV(b, e, c) iv.v[((b) * CTR_EV__COUNT + (e)) * 2 + (c)]
    ck_assert_uint_eq(IV(0, CTR_EV_P_V_BUSY, 1), 5);
    ck_assert_uint_eq(IV(1, CTR_EV_P_V_BUSY, 1), 10);
    ck_assert_uint_eq(IV(2, CTR_EV_P_V_BUSY, 1), 7);
    ck_assert_uint_eq(IV(1, CTR_EV_INSNS, 0), 3);
    ck_assert_uint_eq(IV(0, CTR_EV_P_V_BUSY, 0), 0);
#undef IV
    ck_assert_int_eq(ctr_intervals_grow(&iv, 100, 100, &d), NPU_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "larger interval"));
    ctr_intervals_free(&iv);
}
END_TEST

START_TEST(allocation_failures)
{
    for (long n = 1; n < 400; n++) {
        ctr_values cv;
        npu_alloc_fail_after(n);
        npu_status st = ctr_values_init(&cv, 4, 8, 32, NULL);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (!failed) {
            ck_assert_int_eq(st, NPU_OK);
            ctr_values_free(&cv);
            return;
        }
        ck_assert_int_eq(st, NPU_ENOMEM);   /* and nothing leaks (ASan) */
    }
    ck_abort_msg("ctr_values_init never succeeded");
}
END_TEST

START_TEST(list_and_docs_name_everything)
{
    npu_buf l = {0}, m = {0};
    ctr_list(&l);
    ctr_doc_markdown(&m);
    npu_buf_append(&l, "", 1);
    npu_buf_append(&m, "", 1);
    for (int e = 0; e < CTR_EV__COUNT; e++) {
        char pat[80];
        snprintf(pat, sizeof pat, "| `%s` |", ctr_event(e)->name);
        ck_assert_ptr_nonnull(strstr((char *)m.data, pat));
        snprintf(pat, sizeof pat, "  %s ", ctr_event(e)->name);
        ck_assert_ptr_nonnull(strstr((char *)l.data, pat));
    }
    for (int g = 0; g < CTR_GROUP__COUNT; g++)
        ck_assert_ptr_nonnull(strstr((char *)l.data, ctr_group(g)->name));
    ck_assert_ptr_nonnull(strstr((char *)m.data, "generated from counters/events.def"));
    npu_buf_free(&l);
    npu_buf_free(&m);
}
END_TEST

Suite *ctr_table_suite(void)
{
    Suite *s = suite_create("counters");
    TCase *t = tcase_create("table");
    tcase_add_test(t, events_are_well_formed);
    tcase_add_test(t, required_events_exist);
    tcase_add_test(t, groups_and_metrics_resolve);
    tcase_add_test(t, selection_errors_are_clear);
    tcase_add_test(t, thousands_separators);
    tcase_add_test(t, list_and_docs_name_everything);
    suite_add_tcase(s, t);
    TCase *m = tcase_create("metrics");
    tcase_add_test(m, roofline_verdicts);
    tcase_add_test(m, roofline_levels);
    tcase_add_test(m, row_metrics);
    tcase_add_test(m, check_finds_overlap);
    suite_add_tcase(s, m);
    TCase *f = tcase_create("formats");
    tcase_add_test(f, text_layout_is_perf_stat);
    tcase_add_test(f, csv_fields);
    tcase_add_test(f, json_is_valid_and_in_table_order);
    tcase_add_test(f, interval_windows);
    tcase_add_test(f, allocation_failures);
    suite_add_tcase(s, f);
    return s;
}

int main(int argc, char **argv)
{
    (void)argc;
    ctr_test_set_argv0(argv[0]);
    SRunner *sr = srunner_create(ctr_table_suite());
    srunner_add_suite(sr, ctr_run_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
