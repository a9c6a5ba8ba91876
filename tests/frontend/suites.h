/* suites.h — the Check suites of the frontend part. main.c runs every
 * suite named in SUITES below; to add one, declare it here and add a line
 * to the list. */
#ifndef TESTS_FRONTEND_SUITES_H
#define TESTS_FRONTEND_SUITES_H

#include <check.h>

Suite *fp_suite(void);
Suite *npy_suite(void);
Suite *config_suite(void);
Suite *launch_suite(void);
Suite *asm_suite(void);
Suite *elf_suite(void);

/* X-list of suites, expanded by main.c: S(fn) per suite. */
#define FRONTEND_SUITES(S) \
    S(fp_suite)            \
    S(npy_suite)           \
    S(config_suite)        \
    S(launch_suite)        \
    S(asm_suite)           \
    S(elf_suite)

#endif
