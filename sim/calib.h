/* calib.h — calibration of the timing model against per-instruction
 * hardware measurements (the msKPP tables in
 * ../shared/reference/ascend910b-measured.json, see docs/fidelity.md).
 *
 * For every measured point the sweep builds a one-core kernel that issues the
 * same instruction back to back (the assembler makes it), runs it through
 * the timing engine in perf mode on the given machine and takes the
 * steady-state cycles per instruction (the difference of a long and a short
 * run, so the prologue and the pipeline fill cancel). Tables of the chip the
 * default machine models (910B1) are judged against the bounds; mmad and
 * vector kernels (no GM traffic) run with the fixed GM port, data moves on
 * the machine as given; tables of
 * other chips (910B3, 910-95) and instructions the ISA lacks are reported,
 * not judged. */
#ifndef SIM_CALIB_H
#define SIM_CALIB_H

#include <stddef.h>

#include "frontend/config.h"
#include "isa/npu_util.h"

typedef enum sim_calib_class { SIM_CAL_MMAD, SIM_CAL_VEC, SIM_CAL_MOV, SIM_CAL__COUNT } sim_calib_class;

typedef struct sim_calib_point {
    char table[64];        /* the reference table's key */
    sim_calib_class cls;
    int judged;            /* 1: a 910B1 table the bounds apply to */
    char x[48];            /* the point: "r=4", "m=32 k=16 n=48", "16 KiB" */
    double measured;       /* cycles per instruction, from the table */
    double model;          /* cycles per instruction, from the engine */
    double err;            /* (model - measured) / measured */
} sim_calib_point;

typedef struct sim_calib_skip {
    char table[64];
    char why[128];
} sim_calib_skip;

typedef struct sim_calib_result {
    sim_calib_point *p;
    size_t n, cap;
    sim_calib_skip *skip;
    size_t nskip, capskip;
} sim_calib_result;

/* Run the sweeps of the classes in `classes` (a mask of 1 << sim_calib_class;
 * 0 = all) of the reference file at ref_path on machine m. Errors: the file
 * missing or malformed (EIO/EFORMAT), a kernel failing to run. */
npu_status sim_calib_run(const cfg_machine *m, const char *ref_path, unsigned classes,
                         sim_calib_result *out, npu_diag *d);
void sim_calib_free(sim_calib_result *r);

/* The bound the issue sets for a class: mmad 5 %, vector and data moves 10 %. */
double sim_calib_bound(sim_calib_class c);
const char *sim_calib_class_name(sim_calib_class c);

#endif
