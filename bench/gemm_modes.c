/* gemm_modes.c — host seconds of the GEMM kernel (kernels/gemm.s, fp16 in,
 * fp32 out) at N x N x N on the default machine in each mode, and the ratios
 * issue 5 sets goals for: perf / func (timing should add at most 50 % to
 * functional time) and func / timing (timing-only at least 10x faster than
 * perf... i.e. timing mode much cheaper than the data it skips).
 *
 *   bench-gemm_modes [N [cores [KEY=VALUE...]]]   (default 4096 24; $NPU_ROOT
 *                                                   finds kernels/; KEY=VALUE
 *                                                   are config overrides, e.g.
 *                                                   timing.memory_model=fixed)
 *
 * Then timing mode once more with the fixed GM port ("fixed"): the floor
 * under timing mode's host time that no cheaper memory model could beat.
 *
 * $NPU_BENCH_MODES (e.g. "timing" or "perf,timing,fixed") runs only those
 * modes, for profiling one of them; the others then report 0 s.
 *
 * Prints one JSON object on stdout for scripts/bench.sh: seconds per mode
 * (CPU time of the process, so a loaded host does not inflate them; wall
 * time too, which perf mode's data worker, sim/defer.c, makes the
 * smaller), simulated cycles, the ratios. Inputs are zero tensors: the
 * timing of this kernel does not depend on data. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/config.h"
#include "frontend/asm.h"
#include "frontend/elf.h"
#include "sim/npusim.h"
#include "sim/sim_int.h"
#include "sim/timing.h"

static double clk(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* a / b, or 0 when a mode was not run (keeps the output valid JSON) */
static double ratio(double a, double b)
{
    return a > 0 && b > 0 ? a / b : 0;
}

static int fail(const char *what, const npu_diag *d)
{
    fprintf(stderr, "bench-gemm_modes: %s: %s\n", what, d->msg);
    return 2;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 4096;
    int cores = argc > 2 ? atoi(argv[2]) : 24;
    if (n < 16 || cores < 1) {
        fprintf(stderr, "usage: bench-gemm_modes [N [cores [KEY=VALUE...]]]\n");
        return 2;
    }
    const char *root = getenv("NPU_ROOT");
    char path[4096], inc[4096];
    snprintf(path, sizeof path, "%s/kernels/gemm.s", root ? root : ".");
    snprintf(inc, sizeof inc, "%s/kernels/include", root ? root : ".");
    const char *incs[1] = { inc };
    asm_define defs[2] = { { "DT", 1 }, { "ODT", 0 } };
    asm_opts ao = { incs, 1, defs, 2, 0 };
    asm_output o;
    memset(&o, 0, sizeof o);
    npu_diag d = { 0 };
    if (asm_assemble_file(path, &ao, &o, &d))
        return fail(path, &d);
    npu_buf elf = { 0 };
    if (elf_write_mem(&o, &elf, &d))
        return fail("elf", &d);
    asm_output_free(&o);

    cfg_machine m;
    cfg_default(&m);
    for (int i = 3; i < argc; i++)
        if (cfg_set_kv(&m, argv[i], &d))
            return fail(argv[i], &d);
    if (cfg_validate(&m, &d))
        return fail("config", &d);
    npu_sim *s = NULL;
    if (npu_sim_new(&s, &m, &d) || npu_sim_load_elf_mem(s, elf.data, elf.len, "gemm.elf", &d) ||
        npu_sim_set_cores(s, cores, &d))
        return fail("setup", &d);
    int64_t shape[2] = { n, n };
    if (npu_sim_bind_output(s, "A", ISA_DT_F16, 2, shape, &d) ||
        npu_sim_bind_output(s, "B", ISA_DT_F16, 2, shape, &d) ||
        npu_sim_bind_output(s, "C", ISA_DT_F32, 2, shape, &d) || npu_sim_bind_int(s, "m", n, &d) ||
        npu_sim_bind_int(s, "n", n, &d) || npu_sim_bind_int(s, "k", n, &d))
        return fail("bind", &d);

    static const char *const names[3] = { "func", "perf", "timing" };
    double cpu[3], wall[3];
    uint64_t cycles[3], events = 0, reqs = 0;
    const char *only = getenv("NPU_BENCH_MODES");
    for (int i = 0; i < 3; i++) {
        cpu[i] = wall[i] = 0;
        cycles[i] = 0;
        if (only && !strstr(only, names[i]))
            continue;
        npu_run_opts ro = { (npu_mode)i, 0, 0 };
        double c0 = clk(CLOCK_PROCESS_CPUTIME_ID), w0 = clk(CLOCK_MONOTONIC);
        if (npu_sim_run(s, &ro, &d))
            return fail(names[i], &d);
        cpu[i] = clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
        wall[i] = clk(CLOCK_MONOTONIC) - w0;
        cycles[i] = npu_sim_cycles(s);
        if (i == 2 && s->tstats) {
            /* host-cost drivers of the timing engine, for docs/timing.md */
            events = s->tstats->events;
            for (int c = 0; c < s->tstats->ncores; c++)
                reqs += s->tstats->core[c].gm_requests;
        }
    }
    npu_sim_free(s);

    /* Timing mode once more with the fixed GM port (timing.memory_model =
     * fixed): the engine and the executor's front end with the cheapest
     * memory model there is, i.e. the floor under timing mode's host time
     * that no faster L2/HBM model could go below (docs/timing.md). */
    double fixed_cpu = 0;
    uint64_t fixed_cycles = 0;
    if (!only || strstr(only, "fixed")) {
        m.timing.memory_model = CFG_MEM_FIXED;
        if (npu_sim_new(&s, &m, &d) || npu_sim_load_elf_mem(s, elf.data, elf.len, "gemm.elf", &d) ||
            npu_sim_set_cores(s, cores, &d))
            return fail("setup (fixed port)", &d);
        if (npu_sim_bind_output(s, "A", ISA_DT_F16, 2, shape, &d) ||
            npu_sim_bind_output(s, "B", ISA_DT_F16, 2, shape, &d) ||
            npu_sim_bind_output(s, "C", ISA_DT_F32, 2, shape, &d) || npu_sim_bind_int(s, "m", n, &d) ||
            npu_sim_bind_int(s, "n", n, &d) || npu_sim_bind_int(s, "k", n, &d))
            return fail("bind (fixed port)", &d);
        npu_run_opts ro = { NPU_MODE_TIMING, 0, 0 };
        double c0 = clk(CLOCK_PROCESS_CPUTIME_ID);
        if (npu_sim_run(s, &ro, &d))
            return fail("timing (fixed port)", &d);
        fixed_cpu = clk(CLOCK_PROCESS_CPUTIME_ID) - c0;
        fixed_cycles = npu_sim_cycles(s);
        npu_sim_free(s);
    }
    npu_buf_free(&elf);
    printf("{\"gemm_n\": %" PRId64 ", \"gemm_cores\": %d, "
           "\"gemm_func_s\": %.3f, \"gemm_perf_s\": %.3f, \"gemm_timing_s\": %.3f, "
           "\"gemm_func_wall_s\": %.3f, \"gemm_perf_wall_s\": %.3f, \"gemm_timing_wall_s\": %.3f, "
           "\"gemm_cycles\": %" PRIu64 ", \"gemm_timing_cycles\": %" PRIu64 ", "
           "\"gemm_timing_events\": %" PRIu64 ", \"gemm_timing_gm_requests\": %" PRIu64 ", "
           "\"perf_over_func\": %.3f, \"func_over_timing\": %.3f, \"perf_over_timing\": %.3f, "
           "\"perf_over_func_wall\": %.3f, \"perf_over_timing_wall\": %.3f, "
           "\"gemm_timing_fixed_port_s\": %.3f, \"gemm_timing_fixed_port_cycles\": %" PRIu64 ", "
           "\"func_over_timing_fixed_port\": %.3f}\n",
           n, cores, cpu[0], cpu[1], cpu[2], wall[0], wall[1], wall[2], cycles[1], cycles[2], events, reqs,
           ratio(cpu[1], cpu[0]), ratio(cpu[0], cpu[2]), ratio(cpu[1], cpu[2]), ratio(wall[1], wall[0]),
           ratio(wall[1], wall[2]), fixed_cpu, fixed_cycles, ratio(cpu[0], fixed_cpu));
    return 0;
}
