/* cube_bench.c — functional cube throughput: simulated MACs per host second
 * on a large f16 GEMM made of full-L0 mmad tiles (m=128, k=256, n=128:
 * A and B fill L0A and L0B, 64 KB each; C is 64 KB of L0C), next to the
 * host's single-thread OpenBLAS SGEMM measured in the same run.
 *
 *   build/bin/bench-cube_bench [seconds]      (default 2.0 per side)
 *
 * Prints one JSON object:
 *   {"cube_macs_per_s":..., "openblas_sgemm_macs_per_s":..., "ratio":...,
 *    "cube_variant":"avx2", "tile":"128x256x128"} */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isa/isa.h"
#include "isa/isa_fp.h"
#include "sim/sim_units.h"
#include "sim/units_int.h"

void openblas_set_num_threads(int n);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    if (secs <= 0)
        secs = 2.0;
    enum { M = 128, K = 256, N = 128 };
    sim_unit_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    uint64_t x[32] = {0};
    static const uint64_t sizes[SIM_SP_COUNT] = {0, 512 << 10, 64 << 10, 64 << 10, 128 << 10, 192 << 10, 16 << 10};
    static const uint32_t al[SIM_SP_COUNT] = {1, 32, 512, 512, 64, 32, 1};
    for (int s = 1; s < SIM_SP_COUNT; s++) {
        ctx.buf[s] = npu_calloc(1, sizes[s]);
        if (!ctx.buf[s])
            return 1;
        ctx.size[s] = sizes[s];
        ctx.align[s] = al[s];
    }
    ctx.x = x;
    npu_rng r = {1};
    for (int i = 0; i < 32768; i++) {
        uint16_t a = isa_fp_f32_to_f16((float)((int)(npu_rng_next(&r) % 2001) - 1000) / 1000.0f);
        uint16_t b = isa_fp_f32_to_f16((float)((int)(npu_rng_next(&r) % 2001) - 1000) / 1000.0f);
        memcpy(ctx.buf[SIM_SP_L0A] + 2 * i, &a, 2);
        memcpy(ctx.buf[SIM_SP_L0B] + 2 * i, &b, 2);
    }
    isa_insn in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_MMAD;
    in.dt = ISA_DT_F16;
    in.dt2 = ISA_DT_F32;
    in.rd = 1; in.rs1 = 2; in.rs2 = 3; in.rs3 = 4;
    x[1] = 0; x[2] = 0; x[3] = 0;
    npu_diag d;
    sim_work w;
    openblas_set_num_threads(1);
    enum { S = 512 };
    float *A = malloc(sizeof(float) * S * S), *B = malloc(sizeof(float) * S * S), *C = malloc(sizeof(float) * S * S);
    if (!A || !B || !C)
        return 1;
    for (int i = 0; i < S * S; i++) {
        A[i] = (float)(i % 7) * 0.25f;
        B[i] = (float)(i % 5) * 0.5f;
        C[i] = 0;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, S, S, 1.0f, A, S, B, S, 0.0f, C, S);   /* warm up */

    /* The two sides alternate in 20 slices each, so that frequency changes
     * and noisy neighbours hit both alike. The cube side is a GEMM of many
     * K-steps: every 64th tile initialises C, the others accumulate. */
    uint64_t macs = 0, bmacs = 0;
    long calls = 0;
    double tc = 0, tb = 0, slice = secs / 20;
    for (int round = 0; round < 20; round++) {
        double t0 = now(), t1;
        do {
            x[4] = ISA_MM_CFG(M, K, N, calls % 64 == 0);
            memset(&w, 0, sizeof w);
            if (sim_exec_cube(&ctx, &in, &w, &d) != NPU_OK) {
                fprintf(stderr, "cube_bench: %s\n", d.msg);
                return 1;
            }
            macs += w.macs;
            calls++;
            t1 = now();
        } while (t1 - t0 < slice);
        tc += t1 - t0;
        t0 = now();
        do {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, S, S, 1.0f, A, S, B, S, 1.0f, C, S);
            bmacs += (uint64_t)S * S * S;
            t1 = now();
        } while (t1 - t0 < slice);
        tb += t1 - t0;
    }
    double cube = (double)macs / tc, blas = (double)bmacs / tb;
    int variant = sim_cube_variant_supported(SIM_CUBE_AVX512) ? 2 : sim_cube_variant_supported(SIM_CUBE_AVX2) ? 1 : 0;
    printf("{\"cube_macs_per_s\": %.4g, \"openblas_sgemm_macs_per_s\": %.4g, \"ratio\": %.3f, "
           "\"cube_variant\": \"%s\", \"tile\": \"%dx%dx%d\", \"mmad_calls\": %ld}\n",
           cube, blas, cube / blas, variant == 2 ? "avx512" : variant == 1 ? "avx2" : "portable", M, K, N, calls);
    free(A); free(B); free(C);
    for (int s = 1; s < SIM_SP_COUNT; s++)
        npu_free(ctx.buf[s]);
    return 0;
}
