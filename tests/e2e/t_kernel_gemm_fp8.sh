#!/bin/sh
# kernels/gemm_fp8.s end to end (e4m3 with DeepGEMM-style per-128-block
# scales): `npusim ref gemm_fp8` makes A, B, SA, SB, the golden C (double)
# and a launch; `npusim run` must pass in perf and func mode. Cases: f32,
# bf16 and f16 outputs; tails in m (not a multiple of the 64-row tile), n
# (not a multiple of 128 or 32) and k (not a multiple of the 128 scale
# block); many k blocks; 1 and 2 cores on the small machine, 24 on the
# default machine.
KERNEL=gemm_fp8 OUTPUT=C MODES="perf func"
. "${NPU_ROOT:?}/tests/e2e/lib_kernel.sh"
check 1 "$small" --out f32 --m 1 --n 1 --k 1
check 1 "$small" --out f32 --m 64 --n 128 --k 128
check 2 "$small" --out f32 --m 300 --n 200 --k 500
check 2 "$small" --out bf16 --m 65 --n 129 --k 129
check 1 "$small" --out f16 --m 17 --n 33 --k 45
check 2 "$small" --out bf16 --m 64 --n 40 --k 1000
check 24 default --out bf16 --m 200 --n 300 --k 300

# the scales matter: the run fails (exit 1) with SB replaced by other scales
cp "$tmp/c3/SA.npy" "$tmp/sa.npy"
"$NPUSIM" ref gemm_fp8 --m 300 --n 200 --k 500 --seed 77 -o "$tmp/other" > /dev/null 2>&1 || fail "ref for the live check"
cp "$tmp/other/SB.npy" "$tmp/c3/SB.npy"
"$NPUSIM" run "$tmp/c3/launch.json" --mode func > "$tmp/run.log" 2>&1
[ $? -eq 1 ] || fail "other block scales did not fail the run"
echo "gemm_fp8: all passed"
