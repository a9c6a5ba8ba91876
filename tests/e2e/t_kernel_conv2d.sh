#!/bin/sh
# kernels/conv2d.s end to end: `npusim ref conv2d` makes inputs, golden
# outputs (plain C, double) and a launch; `npusim run` runs the kernel and
# must pass the check (exit 0). Shapes cover stride, padding, dilation, row blocks,
# channel counts that are not multiples of 16, pixel/channel/k tails, fp16
# and fp32 output, 1 and 2 cores on the small machine and 24 cores on the
# default machine.
KERNEL=conv2d OUTPUT=y MODES=""
. "${NPU_ROOT:?}/tests/e2e/lib_kernel.sh"
# 3x3 same-padding, cin/cout not multiples of 16, two images, 2 cores
check 2 "$small" --n 2 --cin 20 --h 13 --w 11 --cout 40 --pt 1 --pb 1 --pl 1 --pr 1
# stride 2x1, dilation 2x3, asymmetric padding, fp32 output
check 2 "$small" --n 3 --cin 48 --h 17 --w 9 --cout 24 --kh 3 --kw 2 --sh 2 --dh 2 --dw 3 --pt 2 --pl 1 --out f32
# several pixel tiles, channel tiles and k-steps with tails (tm 64, tn 32, kc 5)
check 2 "$small" --cin 64 --h 20 --w 20 --cout 64 --pt 1 --pb 1 --pl 1 --pr 1 --tm 64 --tn 32 --kc 5
# 5x5 stride 2, 3 input channels, one core
check 1 "$small" --cin 3 --h 16 --w 16 --cout 16 --kh 5 --kw 5 --sh 2 --sw 2 --pt 2 --pb 2 --pl 2 --pr 2
check 1 "$small" --n 2 --cin 16 --h 7 --w 5 --cout 17 --kh 2 --kw 3 --out f32
# row blocks: forced small (--rb), with the kernel halo and padding clipped
# per block; an image too big for L1 whole (auto row blocks); 256 -> 256
# channels (1.2 MB of weights, streamed GM -> L0B)
check 2 "$small" --n 2 --cin 20 --h 13 --w 11 --cout 40 --pt 1 --pb 1 --pl 1 --pr 1 --rb 2
check 2 "$small" --n 2 --cin 20 --h 13 --w 11 --cout 40 --kh 5 --kw 3 --sh 2 --dh 2 --pt 3 --pb 4 --pl 1 --pr 1 --rb 1 --tm 16
check 2 "$small" --cin 64 --h 56 --w 56 --cout 32 --sh 2 --sw 2 --pt 1 --pb 1 --pl 1 --pr 1
check 2 "$small" --cin 256 --h 6 --w 6 --cout 256 --pt 1 --pb 1 --pl 1 --pr 1
# 1x1 on the 24-core default machine (fewer units than cores on some)
check 24 default --n 4 --cin 32 --h 8 --w 8 --cout 32 --kh 1 --kw 1

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
"$NPUSIM" ref conv2d --cin 64 --h 20 --w 20 --cout 64 --pt 1 --pb 1 --pl 1 --pr 1 --tm 64 --tn 32 --kc 5 \
    --config "$small" --cores 2 --seed 99 -o "$tmp/alt" > "$tmp/ref.log" 2>&1 || fail "ref (other seed)"
cp "$tmp/alt/y_ref.npy" "$tmp/c3/y_ref.npy"
"$NPUSIM" run "$tmp/c3/launch.json" > "$tmp/run.log" 2>&1
[ $? -eq 1 ] || fail "a wrong golden file did not fail the run"
# a row longer than the kernel supports is refused by the generator
"$NPUSIM" ref conv2d --kh 3 --pt 3 -o "$tmp/bad" > "$tmp/ref.log" 2>&1 && fail "padding 3 with a 3-tap kernel accepted"
grep -q "padding" "$tmp/ref.log" || fail "padding error not explained"
echo "conv2d: all passed"
