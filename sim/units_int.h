/* units_int.h — helpers shared by the functional unit models (vec.c,
 * cube.c, dma.c): operand range checks and the access-report coalescer.
 * Internal to those files; the executor sees only sim_units.h. */
#ifndef SIM_UNITS_INT_H
#define SIM_UNITS_INT_H

#include "sim/sim_units.h"

/* One operand's stream of byte ranges. Each range is bounds-checked against
 * the space (on-chip: ctx->size; GM: left to the GM interface) and reported
 * to ctx->access; adjacent ranges are merged into one report, so a
 * contiguous operand costs one call however many blocks it has. */
typedef struct sim_rng {
    sim_unit_ctx *ctx;
    sim_space sp;
    int is_write;
    const char *who;      /* mnemonic, for messages */
    uint64_t a, len;      /* the pending (unreported) range */
    int have;
    uint64_t total;       /* bytes added */
} sim_rng;

void sim_rng_init(sim_rng *r, sim_unit_ctx *ctx, sim_space sp, int is_write, const char *who);
/* Queue [addr, addr+len); a range that does not extend the pending one
 * first flushes it. Flushing checks the (merged) range, then reports it,
 * so a message names the whole contiguous span. Call flush at the end. */
npu_status sim_rng_add(sim_rng *r, uint64_t addr, uint64_t len, npu_diag *d);
npu_status sim_rng_flush(sim_rng *r, npu_diag *d);

/* Bounds check alone ("UB write [0x2ff00, +512) outside UB (196608 bytes)"). */
npu_status sim_chk_range(const sim_unit_ctx *ctx, sim_space sp, int is_write, uint64_t addr,
                         uint64_t len, const char *who, npu_diag *d);
/* Alignment of an operand address to ctx->align[sp]. */
npu_status sim_chk_align(const sim_unit_ctx *ctx, sim_space sp, uint64_t addr, const char *what,
                         const char *who, npu_diag *d);

/* Cube kernel variants (cube.c). All give bit-identical results; the
 * executor's path picks the best the host supports. */
enum { SIM_CUBE_PORTABLE = 0, SIM_CUBE_AVX2 = 1, SIM_CUBE_AVX512 = 2 };
int sim_cube_variant_supported(int variant);
/* sim_exec_cube with a chosen variant (-1: the host's best); tests and the
 * benchmark use it to compare variants. */
npu_status sim_cube_exec_variant(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d, int variant);

static inline const char *sim_mn(const isa_insn *in)
{
    const isa_info *i = isa_info_of(in->op);
    return i ? i->mnemonic : "?";
}

#endif
