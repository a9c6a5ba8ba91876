/* scalar_bench.c — simulated scalar instructions per host second, func
 * mode, on a scalar loop kernel (ALU, a scalar-buffer load/store pair and a
 * branch per iteration: address arithmetic as kernels do it). Prints
 * {"scalar_insns_per_s": N, ...} on stdout for scripts/bench.sh.
 * Usage: bench-scalar_bench [iterations [func|perf|step]] (default 20000000
 * func). perf runs the timing engine; step drives sim_core_step alone (the
 * executor's cost per instruction as the timing engine sees it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_int.h"
#include "frontend/asm.h"
#include "frontend/elf.h"

static const char *src =
    ".text\n.globl main\nmain:\n"
    "  li t0, 0\n"
    "  li t1, 0\n"
    "  li t2, 0x100\n"
    "loop:\n"
    "  addi t0, t0, 1\n"
    "  add t1, t1, t0\n"
    "  xor t3, t1, t0\n"
    "  slli t4, t3, 3\n"
    "  sd t4, 0(t2)\n"
    "  ld t5, 0(t2)\n"
    "  sub t6, t5, t3\n"
    "  blt t0, a0, loop\n"
    "  halt\n";

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000000L;
    const char *mode = argc > 2 ? argv[2] : "func";
    if (iters <= 0 || (strcmp(mode, "func") && strcmp(mode, "perf") && strcmp(mode, "step"))) {
        fprintf(stderr, "usage: bench-scalar_bench [iterations [func|perf|step]]\n");
        return 2;
    }
    npu_diag d;
    asm_output o;
    if (asm_assemble_mem(src, strlen(src), "scalar_bench.s", NULL, &o, &d)) {
        fprintf(stderr, "scalar_bench: %s\n", d.msg);
        return 2;
    }
    npu_buf b = {0};
    npu_sim *s = NULL;
    if (elf_write_mem(&o, &b, &d) || npu_sim_new(&s, NULL, &d) ||
        npu_sim_load_elf_mem(s, b.data, b.len, "scalar_bench.elf", &d) ||
        npu_sim_set_cores(s, 1, &d) || npu_sim_bind_int(s, "n", iters, &d)) {
        fprintf(stderr, "scalar_bench: %s\n", d.msg);
        return 2;
    }
    asm_output_free(&o);
    npu_buf_free(&b);
    npu_run_opts ro = {NPU_MODE_FUNC, 0, (uint64_t)iters * 10 + 100};
    /* best of 3 runs, by process CPU time: the host may be shared, and CPU
     * time is what the simulator costs (wall time is reported too) */
    double best = 0, wall = 0;
    uint64_t n = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        npu_status st = NPU_OK;
        if (!strcmp(mode, "step")) {
            st = sim_place_args(s, &d);
            if (!st)
                st = sim_cores_reset(s, &d);
            sim_op op;
            while (!st && s->cores[0].state == SIM_CORE_RUNNING)
                st = sim_core_step(s, 0, &op, &d);
        } else {
            ro.mode = !strcmp(mode, "perf") ? NPU_MODE_PERF : NPU_MODE_FUNC;
            st = npu_sim_run(s, &ro, &d);
        }
        if (st) {
            fprintf(stderr, "scalar_bench: %s\n", d.msg);
            return 2;
        }
        double dt = now(CLOCK_PROCESS_CPUTIME_ID) - t0, dw = now(CLOCK_MONOTONIC) - w0;
        n = npu_sim_insns(s, -1);
        if (rep == 0 || dt < best) {
            best = dt;
            wall = dw;
        }
    }
    printf("{\"scalar_insns_per_s\": %.0f, \"mode\": \"%s\", \"scalar_insns\": %llu, "
           "\"cpu_seconds\": %.3f, \"wall_seconds\": %.3f}\n",
           (double)n / best, mode, (unsigned long long)n, best, wall);
    npu_sim_free(s);
    return 0;
}
