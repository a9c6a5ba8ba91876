#!/bin/sh
# equiv.sh BUILD OUT — the results of a fixed set of runs, for checking that
# a host-side optimisation changed nothing (docs/dev.md, "Speeding up the
# models"):
#
#     sh scripts/equiv.sh build /tmp/before      # at the base revision
#     ... change, rebuild ...
#     sh scripts/equiv.sh build /tmp/after
#     diff -r /tmp/before /tmp/after && echo identical
#
# For each library kernel (24 cores, sizes that take a second or two):
# `npusim stat --json -e '*'` (every counter: cycles, pipes, stalls, L2, HBM)
# in perf and timing mode on the default machine and on three memory
# variants (DRAMSim3's controller structure, every channel ticked every
# cycle, no L2), the output tensors of the perf run, and a full trace of the
# default perf run. Then memsim JSON for the reference memory traces on the
# default HBM and DRAMSim3's HBM2. Nothing here is timed: host seconds are
# not results.
set -eu
B=${1:?usage: equiv.sh BUILD OUT}
O=${2:?usage: equiv.sh BUILD OUT}
NPU=$(cd "$B/bin" && pwd)/npusim
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REF=$ROOT/../shared/reference/memtraces
export NPUSIM_PROGRESS=0
rm -rf "$O"
mkdir -p "$O"
O=$(cd "$O" && pwd)

# name | ref arguments
KERNELS='gemm|gemm --m 1024 --n 1024 --k 1024
gemm2k|gemm --m 2048 --n 2048 --k 2048
gemm_bf16|gemm --m 512 --n 384 --k 640 --dtype bf16 --out bf16
gemm_s8|gemm --m 256 --n 512 --k 512 --dtype s8 --out s32
gemm_fp8|gemm_fp8 --m 256 --n 256 --k 512
gemm_sparse|gemm_sparse --m 256 --n 256 --k 512
conv2d|conv2d
attention|attention
softmax|softmax
layernorm|layernorm
elementwise|elementwise --op gelu --dtype f16 --len 1048576'

# (dramsim: the controller of tests/memmodel/test_hbm.c's DRAMSim3 structure)
VARIANTS='default|
dramsim|--set memory.controller.cmd_queue=8 --set memory.controller.active_buffer=0 --set memory.controller.row_hit_cap=4
noskip|--set memory.controller.skip_idle=false
nol2|--set memory.l2.enabled=false'

echo "$KERNELS" | while IFS='|' read -r name args; do
    d=$O/$name
    mkdir -p "$d/ref"
    cd "$d"   # (relative paths: the outputs name the kernel file)
    # shellcheck disable=SC2086
    "$NPU" ref $args --cores 24 -o ref >/dev/null
    echo "$VARIANTS" | while IFS='|' read -r var sets; do
        for mode in perf timing; do
            # shellcheck disable=SC2086
            "$NPU" stat --json -e '*' --mode $mode $sets ref/launch.json \
                > "stat-$var-$mode.json" 2> "stat-$var-$mode.err" || echo "exit $?" >> "stat-$var-$mode.err"
        done
    done
    # the perf run writes its outputs beside the launch file (the inputs are
    # kept with them: generated data, they show a changed generator too)
    "$NPU" run --mode perf ref/launch.json > run.txt 2>&1 || echo "exit $?" >> run.txt
    mkdir -p out
    for f in ref/*.npy; do
        case $f in *_ref.npy) ;; *) cp "$f" out/ ;; esac
    done
    "$NPU" record --level full -o trace.npt ref/launch.json > /dev/null 2> record.err ||
        echo "exit $?" >> record.err
    rm -rf ref
    echo "equiv: $name" >&2
done

for t in "$REF"/*.trace.gz; do
    [ -e "$t" ] || { echo "equiv: no reference traces in $REF: memsim not compared" >&2; break; }
    n=$(basename "$t" .trace.gz)
    "$NPU" memsim --json "$t" > "$O/memsim-$n-default.json"
    "$NPU" memsim --json --config "$ROOT/configs/hbm2-dramsim3.json" "$t" > "$O/memsim-$n-dramsim3.json"
done
echo "equiv: results in $O" >&2
