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
