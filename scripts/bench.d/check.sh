#!/bin/sh
# npusim check cost against a perf run on the GEMM (issue 10): bench/check_bench.sh
exec sh "$NPU_ROOT/bench/check_bench.sh" "$@"
