#!/bin/sh
# Issue 9: npuview at scale. A synthetic 10-million-event trace (24 cores,
# npt-synth) is loaded and drawn over a scripted session of 390 frames at
# 1280x800 covering every view (`npuview --bench`, software renderer on a
# surface: no display). Prints its JSON: load_s (goal < 2 s) with its CPU
# split, build_ms_* (the UI building the frame's draw commands), frame_ms_*
# (goal: every frame < 16 ms; the whole frame: build + software
# rasterisation + present), frame_cpu_ms_*
# (the same frames in thread CPU time), per-phase maxima, best of 3 runs.
# NPUVIEW_BENCH_EVENTS overrides the event count. Then the heat maps: a
# 2048^3 GEMM recorded with `npusim record -A -I 10` (64 memory units x
# 22 600 counter bins) under the same session: heat_* figures.
set -eu
N=${NPUVIEW_BENCH_EVENTS:-10000000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuview-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$NPU_BUILD/bin/npt-synth" -o "$tmp/big.npt" --events "$N" --cores 24 >&2
NPUSIM_PROGRESS=0 "$NPU_BUILD/bin/npusim" ref gemm --dtype f16 --out f32 --m 2048 --n 2048 --k 2048 --cores 24 \
    --seed 1 --mode timing -o "$tmp/g2k" >&2
NPUSIM_PROGRESS=0 "$NPU_BUILD/bin/npusim" record -q -A -I 10 --mode timing -o "$tmp/heat.npt" "$tmp/g2k/launch.json" >&2
python3 - "$NPU_BUILD/bin/npuview" "$tmp/big.npt" "$tmp/heat.npt" <<'PY'
# Best of 3 runs (the host is shared and noisy): the run with the lowest
# load wall time gives the load figures, the run with the lowest p99 frame
# CPU time the frame figures; CPU times (thread / process clocks) are what
# an idle machine would show, wall times what this one did.
import json, subprocess, sys

def bench3(trace):
    """three `npuview --bench` runs of trace"""
    out = []
    for _ in range(3):
        p = subprocess.run([sys.argv[1], "--bench", trace], stdout=subprocess.PIPE, text=True)
        if p.returncode:
            raise SystemExit("npuview --bench %s: exit %d" % (trace, p.returncode))
        out.append(json.loads(p.stdout))
    return out

runs = bench3(sys.argv[2])
ld = min(runs, key=lambda r: r["load_s"])
fr = min(runs, key=lambda r: r["frame_cpu_ms_p99"])
r = {k: ld[k] for k in ld if k.startswith("load")}
r.update({k: fr[k] for k in fr if not k.startswith("load") and k != "trace"})
r["runs"] = len(runs)
r["load_s_all"] = [x["load_s"] for x in runs]
r["frame_ms_max_all"] = [x["frame_ms_max"] for x in runs]
r["frame_cpu_ms_max_all"] = [x["frame_cpu_ms_max"] for x in runs]
r["trace"] = "synthetic, 24 cores"
r["command"] = "npt-synth -o big.npt --events N --cores 24; npuview --bench big.npt (best of 3)"
h = min(bench3(sys.argv[3]), key=lambda x: x["frame_cpu_ms_p99"])
for k in ("load_s", "frame_ms_p50", "frame_ms_p99", "frame_ms_max", "frame_cpu_ms_p99", "max_draw_commands"):
    r["heat_" + k] = h[k]
r["heat_trace"] = "npusim record -A -I 10 of a 2048^3 f16 GEMM on 24 cores (timing mode)"
print(json.dumps(r))
PY
