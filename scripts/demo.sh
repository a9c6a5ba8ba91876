#!/bin/sh
# The demo (make demo): assemble the sample kernel and disassemble it.
# It grows as the simulator lands (run, stat, trace ...).
# Usage: scripts/demo.sh BUILD
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NPUSIM="$BUILD/bin/npusim"
OUT="$BUILD/demo"
mkdir -p "$OUT"
echo "== npusim asm kernels/examples/sample.s -I kernels/include -o $OUT/sample.elf"
"$NPUSIM" asm kernels/examples/sample.s -I kernels/include -o "$OUT/sample.elf"
echo "== npusim dis $OUT/sample.elf"
"$NPUSIM" dis "$OUT/sample.elf"
# The GEMM demo run, recorded: a trace for Perfetto (gemm.json) and flame graphs (gemm.folded).
echo "== npusim ref gemm (256^3 f16 -> f32, 24 cores) + npusim run + npusim record -o $OUT/gemm.npt"
"$NPUSIM" ref gemm --dtype f16 --out f32 --m 256 --n 256 --k 256 --cores 24 --seed 1 -o "$OUT/gemm" >/dev/null
"$NPUSIM" run "$OUT/gemm/launch.json"
"$NPUSIM" record -o "$OUT/gemm.npt" "$OUT/gemm/launch.json"
"$NPUSIM" trace info "$OUT/gemm.npt"
"$NPUSIM" trace export --format chrome "$OUT/gemm.npt" -o "$OUT/gemm.json"
"$NPUSIM" trace export --format folded "$OUT/gemm.npt" -o "$OUT/gemm.folded"
echo "   $OUT/gemm.json (open in https://ui.perfetto.dev), $OUT/gemm.folded (flamegraph.pl, speedscope)"
# npuview: pictures of the demo GEMM's trace (headless, 1280x800), once
# `npusim record` and npuview are built.
NPUVIEW="$BUILD/bin/npuview"
if [ -x "$NPUVIEW" ] && "$NPUSIM" record 2>&1 | grep -q "record"; then
    echo "== npusim ref gemm (512^3 f16, 24 cores) + npusim record --level mem + npuview --screenshot"
    "$NPUSIM" ref gemm --dtype f16 --out f32 --m 512 --n 512 --k 512 --cores 24 -o "$OUT/npuview-gemm" >/dev/null
    "$NPUSIM" record -o "$OUT/npuview-gemm.npt" --level mem "$OUT/npuview-gemm/launch.json"
    for v in timeline flame hotspots counters; do
        "$NPUVIEW" --screenshot "$OUT/npuview-$v.png" --view $v "$OUT/npuview-gemm.npt"
        echo "   $OUT/npuview-$v.png"
    done
fi
