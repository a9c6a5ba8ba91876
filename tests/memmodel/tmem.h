/* tests/memmodel/tmem.h — the memmodel suites and shared helpers. */
#ifndef TMEM_H
#define TMEM_H
#include <check.h>
#include "memmodel/mem.h"

Suite *tmem_config_suite(void);
Suite *tmem_hbm_suite(void);
Suite *tmem_sys_suite(void);
Suite *tmem_calib_suite(void);
Suite *tmem_ub_suite(void);
Suite *tmem_hbm2_suite(void);
Suite *tmem_robust_suite(void);
/* One stack, one channel, no refresh; DRAMSim3's controller structure if asked. */
void tmem_small(mem_config *c, int dramsim_structure);
/* Feed the checker a log with a known violation and assert it is caught. */
void tmem_check_bad_log(const mem_config *c);
#endif
