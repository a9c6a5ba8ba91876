/* tm_harness.h — helpers for the timing tests: assemble a kernel from text,
 * run it on a simulator with a test machine, read the statistics. */
#ifndef TM_HARNESS_H
#define TM_HARNESS_H

#include <check.h>
#include <stdint.h>

#include "frontend/config.h"
#include "sim/npusim.h"
#include "sim/sim_int.h"
#include "sim/timing.h"

/* The round-number test machine of docs/timing.md ("the test machine"). */
void tmh_test_machine(cfg_machine *m);
/* Set key=value on m (fails the test on error). */
void tmh_set(cfg_machine *m, const char *kv);
/* Assemble src and load it into a new simulator for m with ncores cores.
 * Fails the test on any error. */
npu_sim *tmh_load(const cfg_machine *m, const char *src, int ncores);
/* Run in mode; returns the status; d gets the message. */
npu_status tmh_run(npu_sim *s, npu_mode mode, uint64_t max_cycles, npu_diag *d);
/* Run in perf mode, fail the test on error, return total cycles. */
uint64_t tmh_cycles(npu_sim *s);
/* The stats of the last timed run. */
const sim_timing_stats *tmh_stats(npu_sim *s);

#endif
