#!/bin/sh
# Issue 5 "Benchmark": host CPU seconds of the fp16 GEMM kernel (kernels/gemm.s,
# fp32 out) at N x N x N on the 24-core default machine in func, perf and
# timing mode, and the ratios perf/func (goal <= 1.5) and perf/timing (goal:
# timing-only >= 10x faster than perf), then timing mode with the fixed GM
# port (the floor under timing mode's cost). bench/gemm_modes.c does the runs in
# one process (zero inputs bound directly, so no golden tensor is computed:
# the kernel's timing does not depend on data) and prints one JSON object.
# GEMM_MODES_N overrides N (default 4096, the size).
N=${GEMM_MODES_N:-4096}
exec "$NPU_BUILD/bin/bench-gemm_modes" "$N" 24
