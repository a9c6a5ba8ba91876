/* cube.c — the cube unit (mmad, mmad.sp). Not yet implemented. */
#include "sim/units_int.h"

npu_status sim_exec_cube(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d)
{
    (void)ctx; (void)w;
    return npu_errf(d, NPU_EUNSUPP, "%s: the cube is not implemented yet", sim_mn(in));
}
