#!/bin/sh
# The demo (make demo), on the embedded default machine (24 cores, HBM2E):
#   1. make the GEMM's golden inputs and outputs (plain-C reference)
#   2. assemble the GEMM kernel and show its first instructions
#   3. run it in perf mode and check it against the golden output
#   4. npusim stat: the counters, perf-stat style
#   5. npusim check: memcheck, racecheck, initcheck, synccheck
#   6. npusim record: a trace, with exports for Perfetto and flame graphs
#   7. npuview: headless pictures of the trace's four views
# Every file lands in BUILD/demo/. Usage: scripts/demo.sh BUILD
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
NPUSIM="$BUILD/bin/npusim"
NPUVIEW="$BUILD/bin/npuview"
OUT="$BUILD/demo"
M=${DEMO_M:-1024} N=${DEMO_N:-1024} K=${DEMO_K:-1024}
rm -rf "$OUT"
mkdir -p "$OUT"
step=0
STEPS=8
say() {  # the step header; on a terminal it also says how far the demo is
    step=$((step + 1))
    if [ -t 1 ]; then
        printf '\n\033[1m[%d/%d] %s\033[0m\n' "$step" "$STEPS" "$*"
    else
        printf '\n== [%d/%d] %s\n' "$step" "$STEPS" "$*"
    fi
}
show() { echo "\$ $*"; "$@"; }

say "golden data: GEMM ${M}x${N}x${K}, f16 inputs, f32 output, 24 cores"
show "$NPUSIM" ref gemm --dtype f16 --out f32 --m "$M" --n "$N" --k "$K" --cores 24 --seed 1 \
    -o "$OUT/gemm"

say "assemble the GEMM kernel (the same -D values npusim ref used)"
show "$NPUSIM" asm kernels/gemm.s -I kernels/include -D DT=1 -D ODT=0 -o "$OUT/gemm/kernel.elf"
readelf -h "$OUT/gemm/kernel.elf" | grep -E "Class|Machine|Type|Entry" || true
"$NPUSIM" dis "$OUT/gemm/kernel.elf" | head -24
echo "   ... ($("$NPUSIM" dis "$OUT/gemm/kernel.elf" | wc -l) lines: $NPUSIM dis $OUT/gemm/kernel.elf)"

say "run on the default machine (perf mode) against the golden output"
show "$NPUSIM" run "$OUT/gemm/launch.json"

say "counters"
show "$NPUSIM" stat "$OUT/gemm/launch.json"

say "counters over time: every 10 000 cycles, the memory system's too"
show "$NPUSIM" stat -I 10000 -e pipe.mte2.busy_cycles,l2.hits,hbm.bytes_read "$OUT/gemm/launch.json"

say "sanitizers (every tool)"
show "$NPUSIM" check --tool all "$OUT/gemm/launch.json"

say "record a trace and export it"
show "$NPUSIM" record -o "$OUT/gemm.npt" --level full -A "$OUT/gemm/launch.json"
show "$NPUSIM" trace info "$OUT/gemm.npt"
show "$NPUSIM" trace export --format chrome "$OUT/gemm.npt" -o "$OUT/gemm.json"
show "$NPUSIM" trace export --format folded "$OUT/gemm.npt" -o "$OUT/gemm.folded"
echo "   $OUT/gemm.json opens in Perfetto (ui.perfetto.dev) or chrome://tracing;"
echo "   $OUT/gemm.folded in flamegraph.pl or speedscope"

say "npuview pictures (headless, 1280x800) and the hotspot table as text"
# the hotspot table by label: the kernel is one function (main), its loops
# are labels
for v in timeline flame hotspots counters; do
    SDL_VIDEODRIVER=offscreen "$NPUVIEW" --screenshot "$OUT/npuview-$v.png" --view "$v" \
        --group labels --size 1280x800 "$OUT/gemm.npt"
    echo "   $OUT/npuview-$v.png"
done
echo "   the hotspot table as text (the tab's rows; --format csv|json for scripts):"
show "$NPUVIEW" --report --group pcs --sort stall --top 8 "$OUT/gemm.npt"
echo
echo "demo: done; open the trace with: $NPUVIEW $OUT/gemm.npt"
