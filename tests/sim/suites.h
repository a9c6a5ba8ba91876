/* suites.h — the Check suites of the sim core (executor, GM, runs, API).
 * main.c runs every suite in SIM_SUITES; util.c has the shared helpers. */
#ifndef TESTS_SIM_SUITES_H
#define TESTS_SIM_SUITES_H

#include <check.h>

#include "sim/sim_int.h" /* first: frontend/config.h wants the dtype enum before isa.h */
#include "frontend/asm.h"
#include "frontend/npy.h"

Suite *gm_suite(void);
Suite *scalar_suite(void);
Suite *run_suite(void);
Suite *api_suite(void);
Suite *fuzz_suite(void);

#define SIM_SUITES(S) \
    S(gm_suite)       \
    S(scalar_suite)   \
    S(run_suite)      \
    S(api_suite)      \
    S(fuzz_suite)

/* Assemble src into an ELF in memory and load it into a new simulator of
 * the default machine (or cfg) with `cores` cores. Fails the test on error. */
npu_sim *t_sim_src(const char *src, int cores);
npu_sim *t_sim_src_cfg(const char *src, int cores, const cfg_machine *cfg);
/* Load src into an existing simulator (returns the status of the load). */
npu_status t_load_src(npu_sim *s, const char *src, npu_diag *d);
/* Run in func mode; returns the status, message in d. */
npu_status t_run(npu_sim *s, npu_diag *d);
/* Run and fail the test unless it succeeds. */
void t_run_ok(npu_sim *s);
/* Register by ABI name of core 0 after the run. */
uint64_t t_reg(npu_sim *s, int core, const char *name);

#endif
