#!/bin/sh
# kernels/gemm_sparse.s end to end (2:4 sparse B through mmad.sp) and
# `npusim sparsify`: `npusim ref gemm_sparse` prunes and compresses B
# (sim_sparsify_24), writes A, the values BV, the metadata BM (in 128-column
# panels), the golden C = A x pruned(B) (double) and a launch; `npusim run`
# must pass in perf and func mode. Cases: f16 / bf16 in, f32 / f16 / bf16
# out; tails in m, n (panels narrower than 128, n not a multiple of 16) and
# k (k steps shorter than 128); 1 and 2 cores on the small machine, 24 on
# the default machine. Then the sparsify command: its metadata for
# --panel 128 is byte-identical to what the generator made, and it rejects
# bad input.
KERNEL=gemm_sparse OUTPUT=C MODES="perf func"
. "${NPU_ROOT:?}/tests/e2e/lib_kernel.sh"
check 1 "$small" --dtype f16 --out f32 --m 16 --n 16 --k 4
check 1 "$small" --dtype f16 --out f32 --m 128 --n 128 --k 128
check 2 "$small" --dtype f16 --out f32 --m 300 --n 200 --k 512
check 2 "$small" --dtype bf16 --out bf16 --m 129 --n 257 --k 300
check 1 "$small" --dtype f16 --out f16 --m 17 --n 33 --k 44
check 2 "$small" --dtype bf16 --out f32 --m 64 --n 40 --k 1000
check 24 default --dtype f16 --out f32 --m 100 --n 300 --k 256

# the metadata is live: a wrong metadata file fails the run or faults
d="$tmp/c3"
"$NPUSIM" ref gemm_sparse --m 300 --n 200 --k 512 --seed 55 -o "$tmp/other" > /dev/null 2>&1 || fail "ref for the live check"
cp "$tmp/other/BM.npy" "$d/BM.npy"
"$NPUSIM" run "$d/launch.json" --mode func > "$tmp/run.log" 2>&1
[ $? -ne 0 ] || fail "other metadata did not fail the run"

# npusim sparsify: dense B of a gemm case -> values + panelled metadata
"$NPUSIM" ref gemm --dtype f16 --m 4 --n 200 --k 64 --seed 3 -o "$tmp/g" > /dev/null 2>&1 || fail "ref gemm for sparsify"
"$NPUSIM" sparsify "$tmp/g/B.npy" --values "$tmp/v.npy" --meta "$tmp/m.npy" --panel 128 --pruned "$tmp/p.npy" \
    > "$tmp/sp.log" 2>&1 || { cat "$tmp/sp.log"; fail "sparsify"; }
grep -q "(32 x 200)" "$tmp/sp.log" || { cat "$tmp/sp.log"; fail "sparsify: values shape"; }
# the pruned matrix through the dense kernel equals the compressed one through the sparse kernel
"$NPUSIM" ref gemm_sparse --dtype f16 --m 4 --n 200 --k 64 -o "$tmp/s" > /dev/null 2>&1 || fail "ref gemm_sparse"
"$NPUSIM" run "$tmp/s/kernel.elf" --mode func --arg A="$tmp/g/A.npy" --arg BV="$tmp/v.npy" --arg BM="$tmp/m.npy" \
    --out C="$tmp/cs.npy":float32[4,200] --arg m=4 --arg n=200 --arg k=64 > "$tmp/r1.log" 2>&1 ||
    { cat "$tmp/r1.log"; fail "sparse kernel on sparsify's output"; }
"$NPUSIM" run "$tmp/g/kernel.elf" --mode func --arg A="$tmp/g/A.npy" --arg B="$tmp/p.npy" \
    --out C="$tmp/cd.npy":float32[4,200] --arg m=4 --arg n=200 --arg k=64 --expect C="$tmp/cs.npy" --rtol 1e-6 --atol 1e-5 \
    > "$tmp/r2.log" 2>&1 || { cat "$tmp/r2.log"; fail "dense kernel on the pruned B differs from the sparse kernel"; }
# bad input
"$NPUSIM" sparsify "$tmp/g/A.npy" --values "$tmp/v2.npy" > /dev/null 2>&1 && fail "sparsify without --meta accepted"
"$NPUSIM" ref gemm --dtype f16 --m 4 --n 8 --k 6 -o "$tmp/g6" > /dev/null 2>&1 || fail "ref gemm k=6"
"$NPUSIM" sparsify "$tmp/g6/B.npy" --values "$tmp/v3.npy" --meta "$tmp/m3.npy" > "$tmp/sp.log" 2>&1 && fail "k=6 accepted"
grep -q "multiple of 4" "$tmp/sp.log" || { cat "$tmp/sp.log"; fail "k=6 message"; }
"$NPUSIM" sparsify "$tmp/g/B.npy" --values "$tmp/v.npy" --meta "$tmp/m.npy" --panel 20 > /dev/null 2>&1 && fail "--panel 20 accepted"
"$NPUSIM" ref gemm_sparse --k 6 -o "$tmp/bad" > /dev/null 2>&1 && fail "gemm_sparse k=6 accepted"
echo "gemm_sparse: all passed"
