/* cost.h — the cost model of the timing engine: how many cycles an
 * instruction occupies its pipe, from the machine config and the work the
 * functional unit reported (sim_work). Pure functions of (config, insn,
 * work): no state, no time, no memory system — GM time is the engine's
 * (sim/timing.c), which adds the memory system's answer to the on-chip part
 * computed here. Every number comes from the config (docs/timing.md lists
 * which key feeds which formula). */
#ifndef SIM_COST_H
#define SIM_COST_H

#include <stdint.h>

#include "frontend/config.h"
#include "isa/isa.h"
#include "sim/sim_units.h"

/* The vector op class (row of vector.cpr) an opcode is costed as, or -1 for
 * opcodes that are not repeat-driven vector ops (vmask, non-vector). */
int sim_cost_vop(isa_op op);

/* The config column a dtype is costed under: the cpr table has columns for
 * f32, f16, bf16, s32, s16 and s8; unsigned types use their signed twin and
 * fp8 the s8 column (same bytes per element, same lanes). */
int sim_cost_dt_column(int dt);

/* The data-move path of a data-move opcode (CFG_PATH_*), or -1. */
int sim_cost_path(isa_op op);

/* Vector instruction: max(vector.startup_cycles, ceil(repeats x cpr))
 * (+ vector.mask_partial_block_cycles for a compare whose bit mask ends in
 * a partly written block),
 * plus conflicts: bank_conflicts x vector.bank_conflict_cycles +
 * bankgroup_conflicts x vector.bank_group_conflict_cycles (when
 * vector.model_bank_conflicts). *conflict_cycles (may be NULL) receives the
 * conflict part. */
uint64_t sim_cost_vec(const cfg_machine *m, const isa_insn *in, const sim_work *w,
                      uint64_t *conflict_cycles);

/* Cube: max(cube.min_cycles, cube.startup_cycles + ceil(F x cycles_per_fractal / s))
 * with F = w->fractals and s = cube.sparse_speedup for mmad.sp (1 dense). */
uint64_t sim_cost_cube(const cfg_machine *m, const isa_insn *in, const sim_work *w);

/* On-chip part of a data move over path p: path latency + ceil(bytes / width),
 * at least path.NAME.min_cycles. For GM paths the engine adds memory time. */
uint64_t sim_cost_dma(const cfg_machine *m, int path, uint64_t bytes);
/* The streaming part alone: ceil(bytes / width). */
uint64_t sim_cost_dma_stream(const cfg_machine *m, int path, uint64_t bytes);

/* Scalar-unit occupancy of a scalar instruction (the scalar unit is in
 * order without a scoreboard: a long-latency op holds it): ALU issue, mul,
 * div, scalar-buffer load latencies; branches add the taken penalty; GM
 * scalar loads add the memory system's time in the engine. */
uint64_t sim_cost_scalar(const cfg_machine *m, const isa_insn *in, isa_cost cost, int taken);

/* Scalar-unit cycles to hand a non-scalar instruction to its pipe's queue. */
uint64_t sim_cost_dispatch(const cfg_machine *m);

#endif
