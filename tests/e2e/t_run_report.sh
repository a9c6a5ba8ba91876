#!/bin/sh
# The perf report of `npusim run` (sim_timing_report) against npusim stat's
# counters of the same run: total cycles and time at the clock; per core the
# busy % of each pipe and the cycle it ended at; the achieved TFLOP/s and
# GB/s; the stall cycles by cause. A GEMM whose 20 tiles leave 4 of 24
# cores without work, so the cores end at different cycles.
NAME=t_run_report
. "${NPU_ROOT:?}/tests/e2e/lib_e2e.sh"

"$NPUSIM" ref gemm --dtype f16 --out f32 --m 640 --n 512 --k 256 --cores 24 --seed 5 -o "$tmp/g" \
    > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref gemm"; }
grep -q "tiles: 20 of 128 x 128 over 24 cores: 4 cores get none" "$tmp/ref.log" ||
    { cat "$tmp/ref.log"; fail "ref's tile note"; }
"$NPUSIM" run "$tmp/g/launch.json" > "$tmp/run.txt" 2>&1 || { cat "$tmp/run.txt"; fail "run"; }
"$NPUSIM" stat --json --per-core -e 'cycles,chip.cycles,pipe.*.busy_cycles,pipe.*.stall.*,cube.macs.*,gm.read_bytes,gm.write_bytes' \
    "$tmp/g/launch.json" > "$tmp/stat.json" || fail "stat"
python3 - "$tmp/run.txt" "$tmp/stat.json" <<'PY' || { cat "$tmp/run.txt"; fail "the perf report does not match the counters"; }
import json, re, sys
txt = open(sys.argv[1]).read()
st = json.load(open(sys.argv[2]))
ev = st["events"]
def per(name): return ev[name]["per_instance"]
cycles = int(re.search(r"^cycles: (\d+)  \(([\d.]+) us at ([\d.]+) GHz\)", txt, re.M).group(1))
us = float(re.search(r"^cycles: \d+  \(([\d.]+) us", txt, re.M).group(1))
ghz = float(re.search(r"at ([\d.]+) GHz\)", txt).group(1))
assert cycles == ev["chip.cycles"]["value"], (cycles, ev["chip.cycles"])
assert abs(us - cycles / ghz / 1e3) < 1e-3 * us, (us, cycles, ghz)
tf, macs, gbs, gmb = re.search(r"^achieved: ([\d.]+) TFLOP/s \((\d+) MACs\), ([\d.]+) GB/s GM \((\d+) B\)", txt, re.M).groups()
want_macs = sum(v["value"] for k, v in ev.items() if k.startswith("cube.macs."))
assert int(macs) == want_macs, (macs, want_macs)
assert int(gmb) == ev["gm.read_bytes"]["value"] + ev["gm.write_bytes"]["value"], gmb
secs = cycles / (ghz * 1e9)
assert abs(float(tf) - 2 * want_macs / secs / 1e12) < 1e-3 * float(tf), tf
assert abs(float(gbs) - int(gmb) / secs / 1e9) < 1e-3 * float(gbs), gbs
causes = dict(re.findall(r" ([a-z_]+) (\d+)", re.search(r"^stall cycles \(all cores and pipes\):(.*)$", txt, re.M).group(1)))
for cause, n in causes.items():
    want = sum(v["value"] for k, v in ev.items() if k.startswith("pipe.") and k.endswith(".stall." + cause))
    assert int(n) == want, (cause, n, want)
hdr = re.search(r"^pipe busy %:  core(.*)ended at$", txt, re.M).group(1).split()
rows = re.findall(r"^ +(\d+)((?: +[\d.]+){%d}) +(\d+)$" % len(hdr), txt, re.M)
assert len(rows) == 24, len(rows)
ends = []
for c, busy, end in rows:
    c = int(c)
    assert int(end) == per("cycles")[c], (c, end, per("cycles")[c])
    ends.append(int(end))
    for p, b in zip(hdr, busy.split()):
        want = 100.0 * per("pipe.%s.busy_cycles" % p.lower())[c] / cycles
        assert abs(float(b) - want) < 0.051, (c, p, b, want)
assert max(ends) == cycles and min(ends) < cycles, ends
print("ok: perf report = counters (%d cycles, cores ended %d..%d)" % (cycles, min(ends), max(ends)))
PY
