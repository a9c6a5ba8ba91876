/* sim_units.h — the narrow interface between the core executor and the
 * functional models of the vector unit, the cube and the data-move engines
 * (MTE1/2/3, FIX, UB->UB).
 *
 * The executor decodes an instruction, reads the scalar registers it names
 * and calls one of sim_exec_vec / sim_exec_cube / sim_exec_dma with a
 * sim_unit_ctx that gives the unit the core's on-chip buffers, a way to
 * reach global memory, the vector mask state and an access sink. The unit
 * changes architectural state (unless ctx->nodata) and reports, in a
 * sim_work, how much work it did (for the timing model and the counters).
 * Units know nothing of time, pipes or queues (STYLE.md: functional and
 * timing models are separate). */
#ifndef SIM_UNITS_H
#define SIM_UNITS_H

#include <stdint.h>

#include "isa/isa.h"
#include "isa/npu_util.h"

/* Address spaces. Each on-chip buffer is its own space starting at 0. */
typedef enum sim_space {
    SIM_SP_GM,    /* global memory (HBM), 64-bit addresses, sparse */
    SIM_SP_L1,
    SIM_SP_L0A,
    SIM_SP_L0B,
    SIM_SP_L0C,
    SIM_SP_UB,
    SIM_SP_SB,    /* scalar data buffer */
    SIM_SP_COUNT
} sim_space;

const char *sim_space_name(sim_space s);  /* "GM", "L1", ... (sim_units.c) */

/* Access sink: called once per contiguous byte range a unit reads or writes
 * (one call per burst, per fractal row run, per vector block...), before the
 * data is touched. The checks (memcheck, racecheck, initcheck) and the
 * timing model (GM bursts -> memory requests) consume these. May be NULL. */
typedef void (*sim_access_fn)(void *user, sim_space sp, uint64_t addr, uint64_t len, int is_write);

/* Global memory, owned by the core part (sparse pages, allocations with
 * guard zones). Both return NPU_OK or NPU_EFAULT with a message in d naming
 * the address range (e.g. "GM read [0x1000, +64) outside any allocation"). */
typedef struct sim_gm_if {
    void *gm;
    npu_status (*read)(void *gm, uint64_t addr, void *dst, uint64_t len, npu_diag *d);
    npu_status (*write)(void *gm, uint64_t addr, const void *src, uint64_t len, npu_diag *d);
} sim_gm_if;

/* The vector mask (set by vmask / vmaskc, which the executor handles by
 * writing these fields directly). */
typedef struct sim_vmask {
    uint64_t bits[2];     /* normal mode: element-enable bits per repeat */
    int counter_mode;     /* 1: counter mode, count = elements in all */
    uint64_t count;
} sim_vmask;

typedef struct sim_unit_ctx {
    uint8_t *buf[SIM_SP_COUNT];     /* on-chip buffers (buf[SIM_SP_GM] unused) */
    uint64_t size[SIM_SP_COUNT];    /* their sizes in bytes */
    uint32_t align[SIM_SP_COUNT];   /* minimum alignment of operand addresses */
    sim_gm_if gm;
    sim_vmask *vmask;
    const uint64_t *x;              /* the 32 scalar registers (read-only) */
    int nodata;                     /* timing mode: check and account, do not compute */
    sim_access_fn access;
    void *access_user;
    /* UB bank geometry, for the bank-conflict count in sim_work */
    uint32_t ub_banks, ub_bank_bytes, ub_bank_groups;
    /* the host's cube kernel variant + 1, 0 until the first mmad asks
     * (CPUID, which a VM traps at ~2 us a call: once per context, not per
     * instruction) */
    int cube_variant1;
} sim_unit_ctx;

/* What an instruction did, for timing and counters. Zero what does not apply. */
typedef struct sim_work {
    uint32_t repeats;        /* vector repeats executed */
    uint64_t elems;          /* vector elements operated on (enabled by the mask) */
    uint64_t bytes;          /* data-move bytes (payload) */
    uint32_t nburst;         /* data-move bursts */
    uint64_t burst_bytes;    /* bytes per burst */
    uint64_t gm_rd, gm_wr;   /* bytes read / written in GM */
    uint64_t fractals;       /* cube: 16 x k0 x 16 fractal operations */
    uint64_t macs;           /* cube: multiply-accumulates (m*k*n, unpadded) */
    uint32_t bank_conflicts; /* vector: extra cycles from UB bank conflicts */
    uint32_t bankgroup_conflicts;
    int src_space, dst_space;/* data moves: the path */
} sim_work;

/* Execute one instruction of the unit's class. in->op tells which. Returns
 * NPU_OK, or NPU_EFAULT with a message saying what was wrong (the executor
 * adds core, pc, instruction and cycle). Registers come from ctx->x. */
npu_status sim_exec_vec(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d);
npu_status sim_exec_cube(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d);
npu_status sim_exec_dma(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d);

/* Which unit executes op: 'v' vector (incl. vmask? no: the executor handles
 * vmask/vmaskc), 'c' cube, 'd' data move (incl. img2col, fix, ub2ub), 0 other. */
int sim_unit_of(isa_op op);

#endif
