#!/bin/sh
# No false positives: every kernel of kernels/ is clean under
# `npusim check --tool all` (exit 0, no finding, numerics pass) at several
# shapes (tails, multi-tile, double-buffered k loops, causal masks) and core
# counts (1 and 2 on the small machine, 24 on the default), from golden data
# made by `npusim ref`. Perf mode (the default: findings carry cycles), and
# func mode for a few. Then the check is live on a real kernel: a wrong
# golden file is a numerics finding (exit 1).
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_check_kernels.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
small="$NPU_ROOT/configs/small.json"
n=0
clean() {  # mode cores config|default kernel generator-options...
    mode=$1; cores=$2; cfg=$3; kern=$4; shift 4
    n=$((n + 1)); d="$tmp/c$n"
    [ "$cfg" = default ] || set -- "$@" --config "$cfg"
    "$NPUSIM" ref "$kern" "$@" --cores "$cores" --seed "$n" -o "$d" > "$tmp/ref.log" 2>&1 ||
        { cat "$tmp/ref.log"; fail "npusim ref $kern $*"; }
    "$NPUSIM" check --tool all --mode "$mode" "$d/launch.json" > "$tmp/check.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/check.log"; fail "$kern $* on $cores cores ($mode): exit $rc"; }
    grep -q "ERROR SUMMARY: 0 findings" "$tmp/check.log" || { cat "$tmp/check.log"; fail "$kern $*: findings"; }
    grep -q ": pass against" "$tmp/check.log" || { cat "$tmp/check.log"; fail "$kern $*: no numerics check"; }
    echo "ok: $kern $* ($cores cores, $mode)"
}
clean perf 1 "$small" elementwise --op add --dtype f16 --len 1
clean perf 2 "$small" elementwise --op gelu --dtype f32 --len 5000
clean perf 2 "$small" elementwise --op silu --dtype f16 --len 70001
clean perf 1 "$small" gemm --dtype f16 --out f32 --m 1 --n 1 --k 1
clean perf 2 "$small" gemm --dtype f16 --out f16 --m 129 --n 257 --k 300
clean perf 2 "$small" gemm --dtype bf16 --out bf16 --m 200 --n 130 --k 260
clean perf 2 "$small" gemm --dtype s8 --out s32 --m 150 --n 270 --k 600
clean perf 2 "$small" gemm --dtype f16 --out f32 --m 100 --n 90 --k 700 --bm 32 --bn 64 --bk 64
clean func 2 "$small" gemm --dtype f16 --out f32 --m 300 --n 200 --k 500
clean perf 24 default gemm --dtype f16 --out f32 --m 256 --n 320 --k 200
clean perf 2 "$small" gemm_fp8 --m 200 --n 256 --k 384
clean perf 1 "$small" gemm_fp8 --m 17 --n 100 --k 128 --out bf16
clean perf 2 "$small" gemm_sparse --m 128 --n 128 --k 256
clean perf 2 "$small" gemm_sparse --m 70 --n 33 --k 100
clean perf 1 "$small" softmax --dtype f32 --rows 5 --len 1
clean perf 2 "$small" softmax --dtype f16 --rows 301 --len 17
clean perf 2 "$small" softmax --dtype f32 --rows 3 --len 8192
clean perf 24 default softmax --dtype f16 --rows 50 --len 200
clean perf 2 "$small" layernorm --dtype f32 --rows 37 --len 100
clean perf 2 "$small" layernorm --dtype f16 --rows 9 --len 4095
clean func 1 "$small" layernorm --dtype f16 --rows 19 --len 250
clean perf 1 "$small" attention --bh 1 --sq 64 --sk 64
clean perf 2 "$small" attention --bh 2 --sq 17 --sk 5 --hd 16
clean perf 2 "$small" attention --bh 3 --sq 100 --causal 1
clean perf 2 "$small" attention --bh 2 --sq 191 --causal 1 --hd 32 --out f32
clean perf 2 "$small" conv2d --n 2 --cin 20 --h 13 --w 11 --cout 40 --pt 1 --pb 1 --pl 1 --pr 1
clean perf 1 "$small" conv2d --cin 3 --h 16 --w 16 --cout 16 --kh 5 --kw 5 --sh 2 --sw 2 --pt 2 --pb 2 --pl 2 --pr 2
clean perf 2 "$small" conv2d --n 2 --cin 20 --h 13 --w 11 --cout 40 --kh 5 --kw 3 --sh 2 --dh 2 --pt 3 --pb 4 --pl 1 --pr 1 --rb 1 --tm 16
clean perf 24 default conv2d --n 4 --cin 32 --h 8 --w 8 --cout 32 --kh 1 --kw 1
# every kernel of kernels/ was covered
for k in "$NPU_ROOT"/kernels/*.s; do
    b=$(basename "$k" .s)
    grep -q "^clean [a-z]* [0-9]* [^ ]* $b " "$0" || fail "kernels/$b.s is not checked here"
done
# live: a wrong golden file is a numerics finding
"$NPUSIM" ref gemm --m 64 --n 64 --k 64 --seed 99 -o "$tmp/other" --config "$small" > /dev/null 2>&1 || fail "ref"
cp "$tmp/other/C_ref.npy" "$tmp/c5/C_ref.npy" 2> /dev/null
"$NPUSIM" ref gemm --m 64 --n 64 --k 64 --seed 98 -o "$tmp/live" --config "$small" > /dev/null 2>&1 || fail "ref"
cp "$tmp/other/C_ref.npy" "$tmp/live/C_ref.npy"
"$NPUSIM" check "$tmp/live/launch.json" > "$tmp/check.log" 2>&1
[ $? -eq 1 ] || { cat "$tmp/check.log"; fail "a wrong golden file is not a finding"; }
grep -q "^========= numerics: output mismatch: C: " "$tmp/check.log" || { cat "$tmp/check.log"; fail "no numerics finding"; }
echo "check kernels: all $n clean"
