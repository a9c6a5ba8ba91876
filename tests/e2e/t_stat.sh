#!/bin/sh
# npusim stat end to end: every output mode on kernels from the library
# (softmax on 1 and 24 cores, a GEMM), --list, intervals, --check, and clear
# errors for bad options. Values against hand counts are in tests/counters.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_stat.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$NPUSIM" ref softmax --dtype f16 --rows 50 --len 200 --cores 24 --seed 1 -o "$tmp/sm" > /dev/null 2>&1 ||
    fail "npusim ref softmax"
"$NPUSIM" ref gemm --m 64 --n 64 --k 128 --dtype f16 --out f32 --cores 2 --seed 2 -o "$tmp/g" > /dev/null 2>&1 ||
    fail "npusim ref gemm"
cd "$tmp/sm" || exit 1

# --list: every event of the docs table and every group
"$NPUSIM" stat --list > "$tmp/list" || fail "stat --list"
for ev in $(sed -n 's/^| [0-9]* | `\([^`]*\)`.*/\1/p' "$NPU_ROOT/docs/counters.md"); do
    grep -q "^  $ev " "$tmp/list" || fail "--list lacks $ev"
done
for g in pipe_utilization arithmetic_utilization memory memory_l0_ub resource_conflicts l2_cache; do
    grep -q "^  $g " "$tmp/list" || fail "--list lacks group $g"
done
echo "ok: --list names $(grep -c '^  [a-z]' "$tmp/list") events, groups and metrics"

# text: perf stat's header, right-aligned counts with separators, # metrics
"$NPUSIM" stat --check launch.json > "$tmp/text" 2> "$tmp/err" || { cat "$tmp/err"; fail "stat --check (24 cores)"; }
grep -q "counters consistent" "$tmp/err" || fail "--check did not report"
grep -q "^ Performance counter stats for 'kernel.elf' (perf mode, 24 cores):" "$tmp/text" || fail "no perf-stat header"
grep -Eq '^ {2,}[0-9]{1,3}(,[0-9]{3})+      cycles$' "$tmp/text" || { cat "$tmp/text"; fail "cycles not right-aligned with separators"; }
grep -Eq 'pipe\.v\.busy_cycles +# +[0-9.]+ % utilization$' "$tmp/text" || fail "no utilisation comment"
grep -q "us time elapsed" "$tmp/text" || fail "no elapsed time"
grep -Eq '(compute|memory|latency)-bound +roofline' "$tmp/text" || fail "no roofline verdict"
# every count ends in the same column
awk '/      [a-z][a-z0-9._]*( |$)/ && $1 ~ /^[0-9,]+$/ { print index($0, $1) + length($1) }' "$tmp/text" | sort -u > "$tmp/cols"
[ "$(wc -l < "$tmp/cols")" = 1 ] || { cat "$tmp/text"; fail "counts are not right-aligned"; }
echo "ok: text layout"

# CSV: 7 fields a row; values equal the JSON's
"$NPUSIM" stat -x , -M memory launch.json > "$tmp/csv" || fail "stat -x ,"
awk -F, 'NF != 7 { bad = 1; print } END { exit bad }' "$tmp/csv" || fail "a CSV row has not 7 fields"
"$NPUSIM" stat --json -M memory launch.json > "$tmp/json" || fail "stat --json"
python3 - "$tmp/csv" "$tmp/json" <<'PY' || fail "CSV and JSON disagree or JSON is invalid"
import json, sys
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[1])]
j = json.load(open(sys.argv[2]))
ev = j["events"]
n = 0
for inst, val, kind, name, mv, mu, mn in rows:
    if inst == "summary":
        assert mn in j["metrics"], mn
        continue
    assert int(val) == ev[name]["value"], name
    assert kind == ev[name]["kind"], name
    n += 1
assert n == len(ev) and n > 5
assert list(ev) == [r[3] for r in rows if r[0] != "summary"]   # table order
assert j["metrics"]["roofline"] in ("compute-bound", "memory-bound", "latency-bound")
PY
"$NPUSIM" stat --json -M memory launch.json | cmp -s - "$tmp/json" || fail "JSON is not deterministic"
echo "ok: CSV ($(wc -l < "$tmp/csv") rows) and JSON agree"

# --per-core and -A
"$NPUSIM" stat --per-core -e pipe.v.busy_cycles launch.json > "$tmp/pc" || fail "--per-core"
[ "$(grep -c '^core[0-9]* ' "$tmp/pc")" = 24 ] || { cat "$tmp/pc"; fail "--per-core: not 24 rows"; }
"$NPUSIM" stat -A -x , -e l2.hits,hbm.act launch.json > "$tmp/a" || fail "-A"
grep -q '^slice0,' "$tmp/a" && grep -q '^chan0,' "$tmp/a" || fail "-A lacks slices or channels"
echo "ok: per-core and per-instance rows"

# intervals: increasing end cycles, deltas summing to the total
cd "$tmp/g" || exit 1
"$NPUSIM" stat -I 200 -x , -e cycles,pipe.mte2.busy_cycles launch.json > "$tmp/iv" || fail "-I"
awk -F, 'NR > 1 && $1 < prev { exit 1 } { prev = $1 }' "$tmp/iv" || fail "interval cycles go backwards"
tot=$("$NPUSIM" stat -x , -e pipe.mte2.busy_cycles launch.json | awk -F, '$1 == "total" { print $2 }')
sum=$(awk -F, '$5 == "pipe.mte2.busy_cycles" { s += $3 } END { print s }' "$tmp/iv")
[ "$tot" = "$sum" ] || fail "interval deltas sum to $sum, the total is $tot"
"$NPUSIM" stat -I 200 -e cycles launch.json | head -1 | grep -q '^# *cycle' || fail "interval text header"
echo "ok: intervals ($(wc -l < "$tmp/iv") rows) add up to $tot"

# errors: exit 2 and a message naming the problem
expect_err() {  # pattern args...
    pat=$1; shift
    "$NPUSIM" stat "$@" > /dev/null 2> "$tmp/e"; rc=$?
    [ $rc = 2 ] || fail "stat $*: exit $rc, want 2"
    grep -q "$pat" "$tmp/e" || { cat "$tmp/e"; fail "stat $*: message lacks '$pat'"; }
}
expect_err "did you mean cycles" -e cycels launch.json
expect_err "no such group" -M nosuch launch.json
expect_err "positive number" -I x launch.json
expect_err "exclusive" --json -x , launch.json
expect_err "no kernel" -e cycles
expect_err "needs a value" -e
echo "ok: errors"

# GM and HBM utilisation (docs/stat.md): on a streaming kernel (elementwise
# add, 3 x 4 MiB of f32 through 24 cores) both are <= 100 % and equal the
# bytes over (elapsed time x peak) computed here from the config: the GM
# port is the L2 (slices x slice_bytes_per_cycle x clock), the HBM's peak is
# stacks x channels x pseudo-channels x width x data rate; with the L2 off,
# GM requests go to the HBM and the two peaks coincide.
"$NPUSIM" ref elementwise --op add --dtype f32 --len 1048576 --cores 24 --seed 3 -o "$tmp/ew" > /dev/null 2>&1 ||
    fail "npusim ref elementwise"
"$NPUSIM" config --dump > "$tmp/cfg.json" || fail "config --dump"
for l2 in true false; do
    "$NPUSIM" stat --json -M all --set memory.l2.enabled=$l2 "$tmp/ew/launch.json" > "$tmp/ew.json" ||
        fail "stat elementwise (l2 $l2)"
    python3 - "$tmp/cfg.json" "$tmp/ew.json" $l2 <<'PY' || fail "bandwidth utilisation (l2 $l2)"
import json, sys
c = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2])); l2on = sys.argv[3] == "true"
ev, m = s["events"], s["metrics"]
ghz = c["chip"]["clock_ghz"]; h = c["memory"]["hbm"]; l2 = c["memory"]["l2"]
secs = s["cycles"] / (ghz * 1e9)
hbm_peak = h["stacks"] * h["channels"] * h["pseudo_channels"] * h["width_bits"] * h["data_rate_mbps"] * 1e6 / 8
port_peak = l2["slices"] * l2["slice_bytes_per_cycle"] * ghz * 1e9 if l2on else hbm_peak
gm = ev["gm.read_bytes"]["value"] + ev["gm.write_bytes"]["value"]
assert gm == 3 * 4 * 1048576, gm
hbm = ev["hbm.bytes_read"]["value"] + ev["hbm.bytes_written"]["value"]
want_gm, want_hbm = 100 * gm / secs / port_peak, 100 * hbm / secs / hbm_peak
got_gm, got_hbm = m["gm_bandwidth_utilization"], m["hbm_bandwidth_utilization"]
for name, got, want in (("gm", got_gm, want_gm), ("hbm", got_hbm, want_hbm)):
    assert abs(got - want) <= 1e-4 * want, (name, got, want)
    assert 0 < got <= 100, (name, got)
print("ok: l2 %s: gm %.1f %%, hbm %.1f %% of peak" % (sys.argv[3], got_gm, got_hbm))
PY
done

# the roofline: no kernel above its roof. The 1024^3 GEMM on 24 cores of the
# default machine: achieved ops <= attainable = min(peak ops, GM intensity
# x the L2's peak, HBM intensity x the HBM's peak), and roofline_roof names
# the lowest (docs/stat.md); peaks recomputed here from the config dump
"$NPUSIM" ref gemm --m 1024 --n 1024 --k 1024 --dtype f16 --out f32 --cores 24 --seed 4 -o "$tmp/g24" > /dev/null 2>&1 ||
    fail "npusim ref gemm (24 cores)"
"$NPUSIM" config --dump -o "$tmp/def.json" || fail "config --dump"
"$NPUSIM" stat --json -M roofline "$tmp/g24/launch.json" > "$tmp/roof.json" || fail "stat -M roofline"
python3 - "$tmp/def.json" "$tmp/roof.json" <<'PY' || fail "roofline"
import json, sys
c, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
m, ev = r["metrics"], r["events"]
ghz, cores = c["chip"]["clock_ghz"], 24
f16 = c["cube"]["f16"]
peak_ops = 2 * f16["m"] * f16["k"] * f16["n"] / f16["cycles_per_fractal"] * cores * ghz * 1e9
h, l2 = c["memory"]["hbm"], c["memory"]["l2"]
hbm_bw = h["stacks"] * h["channels"] * h["pseudo_channels"] * h["width_bits"] / 8 * h["data_rate_mbps"] * 1e6
l2_bw = l2["slices"] * l2["slice_bytes_per_cycle"] * ghz * 1e9
def val(name):
    v = ev[name]
    return v["value"] if isinstance(v, dict) else v
ops = 2 * val("cube.macs.f16")
gm = val("gm.read_bytes") + val("gm.write_bytes")
hbm = val("hbm.bytes_read") + val("hbm.bytes_written")
secs = r["cycles"] / (ghz * 1e9)
roofs = {"compute": peak_ops, "l2": ops / gm * l2_bw, "hbm": ops / hbm * hbm_bw if hbm else float("inf")}
lowest = min(roofs, key=roofs.get)
assert m["roofline_roof"] == lowest, (m["roofline_roof"], roofs)
assert ops / secs <= roofs[lowest] * 1.000001, ("above the roof", ops / secs, roofs)
assert abs(m["l2_ridge_point"] - peak_ops / l2_bw) < 1e-6 * m["l2_ridge_point"]
assert abs(m["arithmetic_intensity"] - ops / gm) < 1e-6 * m["arithmetic_intensity"]
print("ok: roofline: %.1f TFLOP/s under the %s roof of %.1f (%s)" %
      (ops / secs / 1e12, lowest, roofs[lowest] / 1e12, m["roofline"]))
PY
