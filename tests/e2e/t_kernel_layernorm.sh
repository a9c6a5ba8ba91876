#!/bin/sh
# kernels/layernorm.s end to end: `npusim ref layernorm` makes inputs, golden
# outputs (plain C, double) and a launch; `npusim run` runs the kernel and
# must pass the check (exit 0). Shapes cover tails (len not a multiple of
# 8/16/64, rows not a multiple of the tile or of the cores), a single
# element, the longest row, a large eps, fp32 and fp16, 1 and 2 cores on the small
# machine and 24 cores on the default machine.
KERNEL=layernorm OUTPUT=y MODES=""
. "${NPU_ROOT:?}/tests/e2e/lib_kernel.sh"
check 1 "$small" --dtype f32 --rows 8 --len 64
check 1 "$small" --dtype f32 --rows 5 --len 1
check 2 "$small" --dtype f32 --rows 37 --len 100
check 2 "$small" --dtype f32 --rows 3 --len 8192 --eps_e9 1000000
check 2 "$small" --dtype f32 --rows 500 --len 33
check 1 "$small" --dtype f16 --rows 19 --len 250
check 2 "$small" --dtype f16 --rows 301 --len 17
check 2 "$small" --dtype f16 --rows 9 --len 8191
check 24 default --dtype f16 --rows 50 --len 768
check 24 default --dtype f32 --rows 7 --len 300

# the race, memory, init and sync checkers find nothing (a few of the cases
# above; \`npusim check\` exits 1 on any finding or output mismatch)
for c in c1 c2 c3 c5; do
    "$NPUSIM" check -q "$tmp/$c/launch.json" > "$tmp/check.log" 2>&1 ||
        { cat "$tmp/check.log"; fail "npusim check finds something in case $c"; }
    grep -q "ERROR SUMMARY: 0 findings" "$tmp/check.log" || { cat "$tmp/check.log"; fail "check summary ($c)"; }
done
echo "ok: npusim check clean on cases 1 2 3 5"

# func mode (no timing) gives the same pass
"$NPUSIM" run "$tmp/c3/launch.json" --mode func > "$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; fail "func mode (case 3)"; }
grep -q "func mode" "$tmp/run.log" || fail "func mode not used"

# the check is live: a wrong golden file makes the run fail (exit 1)
cp "$tmp/c3/x.npy" "$tmp/c3/y_ref.npy"
"$NPUSIM" run "$tmp/c3/launch.json" > "$tmp/run.log" 2>&1
[ $? -eq 1 ] || fail "a wrong golden file did not fail the run"
# a row longer than the kernel supports is refused by the generator
"$NPUSIM" ref layernorm --len 8193 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "len 8193 accepted"
grep -q "len" "$tmp/ref.log" || fail "len error does not name the option"
echo "layernorm: all passed"
