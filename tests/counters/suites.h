/* suites.h — the counters part's Check suites (one runner: test_counters.c). */
#ifndef TESTS_COUNTERS_SUITES_H
#define TESTS_COUNTERS_SUITES_H

#include <check.h>

Suite *ctr_table_suite(void);     /* test_counters.c: the table, selection, metrics, formats */
Suite *ctr_run_suite(void);       /* test_stat_run.c: npusim stat on real kernels, the PMU */

/* Where the npusim binary is (NPUSIM, else beside the test runner). */
const char *ctr_test_npusim(void);
void ctr_test_set_argv0(const char *argv0);

#endif
