#!/bin/sh
# Issue 9: npuview at scale. A synthetic 10-million-event trace (24 cores,
# npt-synth) is loaded and drawn over a scripted zoom / pan / scroll / tab
# sequence of 240 frames at 1280x800 (`npuview --bench`, software renderer on
# a surface: no display). Prints its JSON: load_s (goal < 2 s), build_ms_*
# (the UI building the frame's draw commands, goal < 16 ms), frame_ms_*
# (build + software rasterisation), and the CPU seconds of the whole run.
# NPUVIEW_BENCH_EVENTS overrides the event count.
set -eu
N=${NPUVIEW_BENCH_EVENTS:-10000000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuview-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$NPU_BUILD/bin/npt-synth" -o "$tmp/big.npt" --events "$N" --cores 24 >&2
python3 - "$NPU_BUILD/bin/npuview" "$tmp/big.npt" <<'PY'
import json, resource, subprocess, sys
p = subprocess.run([sys.argv[1], "--bench", sys.argv[2]], stdout=subprocess.PIPE, text=True)
if p.returncode:
    raise SystemExit("npuview --bench: exit %d" % p.returncode)
r = json.loads(p.stdout)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
r["cpu_s"] = round(ru.ru_utime + ru.ru_stime, 3)
r["trace"] = "synthetic, 24 cores"
r["command"] = "npt-synth -o big.npt --events N --cores 24; npuview --bench big.npt"
print(json.dumps(r))
PY
