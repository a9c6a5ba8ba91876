/* ut.h — shared fixture of the unit suites: a minimal sim_unit_ctx with
 * malloc'd buffers of the default machine's sizes, an array-backed GM and
 * an access log, plus small helpers to run one instruction. */
#ifndef TESTS_UNITS_UT_H
#define TESTS_UNITS_UT_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "isa/isa.h"
#include "isa/isa_fp.h"
#include "sim/sim_units.h"

#define UT_GM_BASE 0x10000000ull
#define UT_GM_SIZE (4u << 20)
#define UT_MAXLOG 4096

typedef struct ut_acc { int sp; uint64_t a, len; int w; } ut_acc;

typedef struct ut {
    sim_unit_ctx ctx;
    sim_vmask vm;
    uint64_t x[32];
    uint8_t *gm;            /* UT_GM_SIZE bytes at UT_GM_BASE */
    ut_acc log[UT_MAXLOG];
    int nlog;
    sim_work w;
    npu_diag d;
} ut;

ut *ut_new(void);
void ut_free(ut *u);
/* Run one instruction (by its unit) with the registers in u->x. */
npu_status ut_run(ut *u, const isa_insn *in);
isa_insn ut_insn(isa_op op, int dt, int dt2, int mod);
uint8_t *ut_ub(ut *u, uint64_t a);
/* Element helpers. */
void ut_put_f32(uint8_t *p, float v);
float ut_get_f32(const uint8_t *p);
void ut_put_f16(uint8_t *p, float v);
float ut_get_f16(const uint8_t *p);

/* Registers used by convention in the suites. */
enum { R_D = 1, R_S0 = 2, R_S1 = 3, R_CFG = 4, R_R4 = 5 };

Suite *vec_suite(void);
Suite *cube_suite(void);
Suite *dma_suite(void);
Suite *robust_suite(void);

#define UNITS_SUITES(S) S(vec_suite) S(cube_suite) S(dma_suite) S(robust_suite)

#endif
