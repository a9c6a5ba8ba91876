#!/bin/sh
# kernels/gemm.s end to end: `npusim ref gemm` makes A, B, the golden C
# (plain C triple loop in double, rounded once) and a launch; `npusim run`
# must pass the check in perf and func mode. Cases: f16 -> f32/f16,
# bf16 -> f32/bf16, s8 -> s32; shapes with tails in m, n and k (not
# multiples of 16, of the 128 x 128 x 128 tile, of 32 for s8), a 1 x 1 x 1
# product, more C tiles than cores, smaller tiles through -D (--bm/--bn/--bk)
# so that one core double-buffers many k steps, a 128 x 256 tile (one L0C
# slot); 1 and 2 cores on the small
# machine, 24 on the default machine.
KERNEL=gemm OUTPUT=C MODES="perf func"
. "${NPU_ROOT:?}/tests/e2e/lib_kernel.sh"
check 1 "$small" --dtype f16 --out f32 --m 1 --n 1 --k 1
check 1 "$small" --dtype f16 --out f32 --m 128 --n 128 --k 128
check 2 "$small" --dtype f16 --out f32 --m 300 --n 200 --k 500
check 2 "$small" --dtype f16 --out f16 --m 129 --n 257 --k 300
check 1 "$small" --dtype bf16 --out f32 --m 17 --n 33 --k 45
check 2 "$small" --dtype bf16 --out bf16 --m 200 --n 130 --k 260
check 1 "$small" --dtype s8 --out s32 --m 40 --n 50 --k 70
check 2 "$small" --dtype s8 --out s32 --m 150 --n 270 --k 600
check 2 "$small" --dtype f16 --out f32 --m 100 --n 90 --k 700 --bm 32 --bn 64 --bk 64
check 2 "$small" --dtype f16 --out f32 --m 300 --n 600 --k 200 --bn 256 --bk 64
check 24 default --dtype f16 --out f32 --m 256 --n 320 --k 200
check 24 default --dtype s8 --out s32 --m 64 --n 100 --k 90

# npusim ref's tile note assumes gemm.s's default tile (GEMM_TILE in
# kernels/ref/ref_gemm.c): the default kernel is the one assembled with it
for dt in "f16 f32" "s8 s32"; do
    set -- $dt
    "$NPUSIM" ref gemm --dtype "$1" --out "$2" --m 300 --n 200 --k 64 --cores 3 -o "$tmp/td" > "$tmp/td.log" 2>&1 ||
        { cat "$tmp/td.log"; fail "ref gemm $1 (default tile)"; }
    grep -q "tiles: 6 of 128 x 128 over 3 cores: 2 each" "$tmp/td.log" || { cat "$tmp/td.log"; fail "tile note $1"; }
    "$NPUSIM" ref gemm --dtype "$1" --out "$2" --m 300 --n 200 --k 64 --cores 3 --bm 128 --bn 128 -o "$tmp/tx" \
        > /dev/null 2>&1 || fail "ref gemm $1 --bm 128 --bn 128"
    cmp -s "$tmp/td/kernel.elf" "$tmp/tx/kernel.elf" ||
        fail "$1: gemm.s's default tile is not the 128 x 128 the tile note assumes (kernels/ref/ref_gemm.c GEMM_TILE)"
done
echo "ok: the tile note's default tile is gemm.s's"

# the check is live: a wrong golden file fails the run (exit 1)
cp "$tmp/c3/A.npy" "$tmp/c3/bad.npy"
"$NPUSIM" ref gemm --m 300 --n 200 --k 500 --seed 99 -o "$tmp/other" > /dev/null 2>&1 || fail "ref for the live check"
cp "$tmp/other/C_ref.npy" "$tmp/c3/C_ref.npy"
"$NPUSIM" run "$tmp/c3/launch.json" --mode func > "$tmp/run.log" 2>&1
[ $? -eq 1 ] || fail "a wrong golden file did not fail the run"
# bad shapes and dtype pairs are refused
"$NPUSIM" ref gemm --m 0 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "--m 0 accepted"
"$NPUSIM" ref gemm --dtype s8 --out f16 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "s8 -> f16 accepted"
"$NPUSIM" ref gemm --bm 24 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "--bm 24 (not a multiple of 16) assembled"
grep -q "BM must be" "$tmp/ref.log" || { cat "$tmp/ref.log"; fail "tile error does not come from the kernel's check"; }
echo "gemm: all passed"
