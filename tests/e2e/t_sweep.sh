#!/bin/sh
# npusim sweep end to end: a 4-point sweep of a small GEMM on configs/small.json
# whose effects are known (a wider GM->L1 path lowers cycles, a slower cube
# raises them), -j 1 and -j 2 byte-identical, the job list run with sh and
# merged equal to the direct sweep, spec files, --verify pass/fail, timeouts,
# and clear errors (exit 2) for bad input.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_sweep.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp" || exit 1
cfg="$NPU_ROOT/configs/small.json"

"$NPUSIM" ref gemm --m 128 --n 128 --k 256 --dtype f16 --out f32 --cores 2 --seed 1 -o g > /dev/null 2>&1 ||
    fail "npusim ref gemm"
"$NPUSIM" ref gemm --m 64 --n 64 --k 128 --dtype f16 --out f32 --cores 2 --seed 2 -o h > /dev/null 2>&1 ||
    fail "npusim ref gemm (second kernel)"

grid="--launch g/launch.json --config $cfg --set path.gm_l1.width=72,144 --set cube.f16.cycles_per_fractal=1,2"

# ---- the direct sweep, -j 1 and -j 2 ---------------------------------------
# shellcheck disable=SC2086
"$NPUSIM" sweep $grid -j 1 -o r1.csv 2> err1 || { cat err1; fail "sweep -j 1"; }
# shellcheck disable=SC2086
"$NPUSIM" sweep $grid -j 2 -o r2.csv 2> err2 || { cat err2; fail "sweep -j 2"; }
cmp -s r1.csv r2.csv || { diff r1.csv r2.csv; fail "-j 1 and -j 2 differ"; }
[ -s err1 ] && { cat err1; fail "the sweep wrote to a non-terminal stderr (progress belongs on a tty only)"; }
[ "$(wc -l < r1.csv)" = 5 ] || { cat r1.csv; fail "expected a header and 4 rows"; }

# columns by name; rows in point order (the last --set fastest)
col() { awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next } { print $c }' "$2" | tr '\n' ' '; }
[ "$(col index r1.csv)" = "0 1 2 3 " ] || fail "index column: $(col index r1.csv)"
[ "$(col path.gm_l1.width r1.csv)" = "72 72 144 144 " ] || fail "width column: $(col path.gm_l1.width r1.csv)"
[ "$(col cube.f16.cycles_per_fractal r1.csv)" = "1 2 1 2 " ] || fail "cube column"
[ "$(col status r1.csv)" = "ok ok ok ok " ] || fail "status column: $(col status r1.csv)"
set -- $(col cycles r1.csv)
c72_1=$1 c72_2=$2 c144_1=$3 c144_2=$4
[ "$c144_1" -lt "$c72_1" ] || fail "doubling path.gm_l1.width did not lower cycles ($c72_1 -> $c144_1)"
[ "$c144_2" -lt "$c72_2" ] || fail "doubling path.gm_l1.width did not lower cycles at the slow cube ($c72_2 -> $c144_2)"
[ "$c72_2" -gt "$c72_1" ] || fail "halving the cube rate did not raise cycles ($c72_1 -> $c72_2)"
[ "$c144_2" -gt "$c144_1" ] || fail "halving the cube rate did not raise cycles ($c144_1 -> $c144_2)"
# the cube's busy cycles follow its rate exactly: twice the cycles per fractal
set -- $(col pipe.m.busy_cycles r1.csv)
[ "$1" -gt 0 ] && [ "$2" -gt "$1" ] && [ "$1" = "$3" ] && [ "$2" = "$4" ] || fail "pipe.m.busy_cycles: $*"
echo "ok: 4-point grid, cycles $c72_1 $c72_2 $c144_1 $c144_2, -j 1 = -j 2"

# the sweep's cycles are npusim stat's
"$NPUSIM" stat --json g/launch.json --config "$cfg" --set path.gm_l1.width=144 --set cube.f16.cycles_per_fractal=1 > s.json ||
    fail "npusim stat"
python3 -c "import json,sys; assert json.load(open('s.json'))['cycles'] == int(sys.argv[1])" "$c144_1" ||
    fail "point 2's cycles differ from npusim stat's"

# JSON output: same points, same numbers
# shellcheck disable=SC2086
"$NPUSIM" sweep $grid -j 2 -o r.json || fail "sweep -o r.json"
python3 - "$c72_1" "$c72_2" "$c144_1" "$c144_2" <<'PY' || fail "JSON output"
import json, sys
d = json.load(open("r.json"))["points"]
assert [p["index"] for p in d] == [0, 1, 2, 3]
assert [p["cycles"] for p in d] == [int(x) for x in sys.argv[1:]]
assert d[3]["set"] == {"path.gm_l1.width": "144", "cube.f16.cycles_per_fractal": "2"}
assert all(p["status"] == "ok" and p["exit"] == 0 and p["events"]["cube.macs.f16"] == 128 * 128 * 256 for p in d)
assert d[0]["metrics"]["roofline"] in ("compute-bound", "memory-bound", "latency-bound")
PY
echo "ok: JSON output"

# ---- job list + sh + merge = the direct sweep ------------------------------
# shellcheck disable=SC2086
"$NPUSIM" sweep $grid --emit-jobs jobs.txt --points-dir pts || fail "--emit-jobs"
[ "$(wc -l < jobs.txt)" = 4 ] || { cat jobs.txt; fail "expected 4 job lines"; }
[ -d pts ] || fail "--emit-jobs did not make the points directory"
# run from elsewhere, in reverse order, one line each (as a Slurm array task does)
mkdir elsewhere
for i in 4 3 2 1; do
    (cd elsewhere && sed -n "${i}p" ../jobs.txt | sh) || fail "job line $i"
done
[ "$(ls pts | tr '\n' ' ')" = "0000.json 0001.json 0002.json 0003.json " ] || fail "point files: $(ls pts)"
"$NPUSIM" sweep --merge pts -o m.csv || fail "--merge"
cmp -s m.csv r1.csv || { diff m.csv r1.csv; fail "merge differs from the direct sweep"; }
"$NPUSIM" sweep --merge pts -o m.json || fail "--merge -o m.json"
cmp -s m.json r.json || { diff m.json r.json; fail "merged JSON differs from the direct sweep's"; }
# a missing point: the rest are written, the gap named, exit 1
rm pts/0002.json
"$NPUSIM" sweep --merge pts -o m3.csv 2> merr; rc=$?
[ "$rc" = 1 ] || fail "merge with a missing point: exit $rc, want 1"
grep -q "1 of 4 points missing: 2" merr || { cat merr; fail "missing point not named"; }
[ "$(wc -l < m3.csv)" = 4 ] || fail "merge with a missing point did not write the other 3"
echo "ok: --emit-jobs, sh, --merge = direct"

# ---- spec file: two kernels crossed with a grid ----------------------------
cat > spec.json <<EOF
{"config": "$cfg",
 "set": {"path.gm_l1.width": [72, 144]},
 "points": [{"launch": "g/launch.json"},
            {"launch": "h/launch.json", "set": {"cube.f16.cycles_per_fractal": 2}}]}
EOF
"$NPUSIM" sweep --spec spec.json -o sp.csv || fail "--spec"
[ "$(col launch sp.csv)" = "g/launch.json g/launch.json h/launch.json h/launch.json " ] || fail "spec launches: $(col launch sp.csv)"
[ "$(col path.gm_l1.width sp.csv)" = "72 144 72 144 " ] || fail "spec grid"
[ "$(col cube.f16.cycles_per_fractal sp.csv)" = "  2 2 " ] || fail "spec point set: '$(col cube.f16.cycles_per_fractal sp.csv)'"
[ "$(sed -n 2p sp.csv | cut -d, -f1-6)" = "$(sed -n 2p r1.csv | cut -d, -f1-3),72,,ok" ] ||
    fail "spec point 0 differs from the grid's"
echo "ok: spec file"

# ---- the core count: "cores" is the launch's cores and chip.cores ----------
"$NPUSIM" ref gemm --m 256 --n 256 --k 128 --dtype f16 --out f32 --cores 2 --seed 3 -o q > /dev/null 2>&1 ||
    fail "npusim ref gemm (4 tiles)"
"$NPUSIM" sweep --launch q/launch.json --config "$cfg" --set cores=1,2,4 --verify -o c.csv || { cat c.csv; fail "cores axis"; }
[ "$(col status c.csv)" = "ok ok ok " ] || fail "cores axis: $(col status c.csv)"
set -- $(col cycles c.csv)
for n in 1 2 4; do
    "$NPUSIM" stat --json q/launch.json --config "$cfg" --cores $n --set chip.cores=$n > c$n.json || fail "stat --cores $n"
done
python3 - "$@" <<'PY' || fail "cores axis: cycles differ from npusim stat --cores N --set chip.cores=N"
import json, sys
for n, got in zip((1, 2, 4), sys.argv[1:]):
    assert json.load(open("c%d.json" % n))["cycles"] == int(got), (n, got)
PY
[ "$1" -gt "$2" ] || fail "1 core ($1 cycles) not slower than 2 ($2)"
# a chip.cores of the point's own wins for the machine: 1 of 4 cores runs
"$NPUSIM" sweep --launch q/launch.json --config "$cfg" --set cores=1 --set chip.cores=4 -o c4.csv || fail "cores + chip.cores"
[ "$(col cycles c4.csv)" = "$(col cycles c.csv | cut -d' ' -f1) " ] || fail "cores=1 on a 4-core machine: $(col cycles c4.csv)"
echo "ok: the cores axis"

# ---- --verify, failures and timeouts ---------------------------------------
"$NPUSIM" sweep --launch g/launch.json --config "$cfg" --set path.gm_l1.width=72 --verify -o v.csv || fail "--verify"
[ "$(col status v.csv)" = "ok " ] || fail "--verify: status $(col status v.csv)"
cp -r g bad
"$NPUSIM" ref gemm --m 128 --n 128 --k 256 --dtype f16 --out f32 --cores 2 --seed 9 -o g9 > /dev/null 2>&1 || fail "ref seed 9"
cp g9/C_ref.npy bad/C_ref.npy              # right shape, wrong values
"$NPUSIM" sweep --launch bad/launch.json --config "$cfg" --set path.gm_l1.width=72,144 --verify -o vf.csv 2> vferr; rc=$?
[ "$rc" = 1 ] || fail "--verify with a wrong golden: exit $rc, want 1"
[ "$(col status vf.csv)" = "fail fail " ] || { cat vf.csv; fail "--verify with a wrong golden: $(col status vf.csv)"; }
grep -q "2 of 2 points not ok" vferr || fail "no summary of failed points"
"$NPUSIM" sweep --launch g/launch.json --config "$cfg" --set memory.hbm.stacks=1,0 -o e.csv 2> /dev/null; rc=$?
[ "$rc" = 1 ] || fail "a bad config value: exit $rc, want 1"
[ "$(col status e.csv)" = "ok error " ] || fail "bad config value point: $(col status e.csv)"
grep -q "memory.hbm.stacks" e.csv || fail "the error column does not name the key"
"$NPUSIM" sweep --launch g/launch.json --config "$cfg" --set path.gm_l1.width=72 --timeout 0.001 -o t.csv 2> /dev/null; rc=$?
[ "$rc" = 1 ] && [ "$(col status t.csv)" = "timeout " ] || fail "timeout: exit $rc, status $(col status t.csv)"
echo "ok: --verify pass and fail, an erroring point, a timeout"

# ---- bad input: a message and exit 2 ---------------------------------------
bad() {  # description, then the arguments
    what=$1; shift
    "$NPUSIM" sweep "$@" > out 2> err; rc=$?
    [ "$rc" = 2 ] || fail "$what: exit $rc, want 2"
    grep -q "^npusim sweep: " err || { cat err; fail "$what: no message"; }
}
bad "no kernel" --set core.l1.size=1M
bad "no '='" --launch g/launch.json --set core.l1.size
bad "empty value" --launch g/launch.json --set core.l1.size=256K,,1M
bad "key twice" --launch g/launch.json --set core.l1.size=1M --set core.l1.size=2M
bad "unknown option" --launch g/launch.json --frobnicate
bad "missing launch" --launch nope/launch.json
bad "missing config" --launch g/launch.json --config nope.json
bad "-j 0" --launch g/launch.json -j 0
bad "bad --timeout" --launch g/launch.json --timeout soon
bad "bad --format" --launch g/launch.json --format xml
printf '{"set": [1, 2]}' > s1.json; bad "spec set not an object" --spec s1.json
printf '{"points": [{"launch": "g/launch.json", "colour": 1}]}' > s2.json; bad "spec unknown key" --spec s2.json
printf '{"points": [' > s3.json; bad "spec not JSON" --spec s3.json
bad "spec missing" --spec nope.json
bad "too many points" --launch g/launch.json --set core.l1.size=1M,2M,4M --set chip.cores=1,2,3 --max-points 8
bad "a key that is no config key" --launch g/launch.json --set core.l1.siz=1M,2M
grep -q "did you mean core.l1.size" err || fail "unknown key: no suggestion: $(cat err)"
bad "an unknown memory key" --launch g/launch.json --set memory.l2.wayz=4
mkdir empty; bad "merge of an empty dir" --merge empty
printf '{"x": 1}' > empty/0000.json; bad "merge of a non-record" --merge empty
echo "ok: bad input gives a message and exit 2"
