/* units_stub.c — weak stand-ins for the timing engine (sim/timing*.c),
 * so that func mode links and runs before it lands; perf/timing mode then
 * say they are not available. The unit stubs this file first held are gone:
 * vec.c, cube.c and dma.c are in the tree (in a static archive a weak
 * definition in an earlier member can keep the linker from pulling in the
 * real one, so a stub must go as soon as its real file exists). Delete this
 * file once timing.c defines these. */
#include <string.h>

#include "sim/sim_int.h"
#include "sim/timing.h"

__attribute__((weak)) npu_status sim_timing_run(npu_sim *s, const sim_timing_opts *opts,
                                                sim_timing_stats *stats, npu_diag *d)
{
    (void)s;
    memset(stats, 0, sizeof *stats);
    return npu_errf(d, NPU_EUNSUPP, "--mode %s is not available yet (the timing engine has not "
                    "landed); use --mode func",
                    opts->nodata ? "timing" : "perf");
}

__attribute__((weak)) void sim_timing_stats_free(sim_timing_stats *st)
{
    npu_free(st->core);
    st->core = NULL;
}

__attribute__((weak)) void sim_timing_report(const sim_timing_stats *st, npu_buf *b)
{
    (void)st;
    (void)b;
}
