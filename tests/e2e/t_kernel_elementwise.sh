#!/bin/sh
# kernels/elementwise.s end to end: `npusim ref elementwise` makes inputs,
# golden outputs (plain C, double) and a launch; `npusim run` must pass the
# check (exit 0) in perf and func mode. Cases: add / gelu / silu, fp16 and
# fp32, lengths that are not multiples of the tile, the block or the cores
# (1, 31, 8193, ...), more tiles than cores (so each core double-buffers),
# 1 and 2 cores on the small machine, 24 cores on the default machine.
KERNEL=elementwise OUTPUT=z MODES="perf func"
. "${NPU_ROOT:?}/tests/e2e/lib_kernel.sh"
check 1 "$small" --op add --dtype f16 --len 1
check 1 "$small" --op add --dtype f32 --len 31
check 2 "$small" --op add --dtype f16 --len 50001
check 2 "$small" --op add --dtype f32 --len 40000 --tile 4096
check 1 "$small" --op gelu --dtype f16 --len 8193
check 2 "$small" --op gelu --dtype f32 --len 33333
check 2 "$small" --op silu --dtype f16 --len 30000 --tile 2048
check 1 "$small" --op silu --dtype f32 --len 129
check 24 default --op gelu --dtype f16 --len 100000
check 24 default --op add --dtype f32 --len 777

# the check is live: a wrong golden file fails the run (exit 1)
cp "$tmp/c3/x.npy" "$tmp/c3/z_ref.npy"
"$NPUSIM" run "$tmp/c3/launch.json" > "$tmp/run.log" 2>&1
[ $? -eq 1 ] || fail "a wrong golden file did not fail the run"
# bad options are refused with a message naming them
"$NPUSIM" ref elementwise --op tanh -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "--op tanh accepted"
grep -q "op" "$tmp/ref.log" || fail "op error does not name the option"
"$NPUSIM" ref elementwise --tile 100 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "--tile 100 accepted"
"$NPUSIM" ref elementwise --dtype bf16 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "--dtype bf16 accepted"
"$NPUSIM" ref elementwise --bogus 1 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "--bogus accepted"
grep -q "unknown option --bogus" "$tmp/ref.log" || fail "unknown option message"
echo "elementwise: all passed"
