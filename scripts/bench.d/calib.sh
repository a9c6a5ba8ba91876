#!/bin/sh
# Issue 5: the timing model against ../shared/reference/ascend910b-measured.json
# (bench-calib runs each measured sweep through the engine); prints the
# summary lines as JSON: per class, points judged, within bound, worst error.
# the references live beside the checkout ($NPU_REFERENCE moves them, as
# for bench-memsim_bench and the calibration tests): without them the
# benchmark is skipped, as those are, not failed
ref="${NPU_REFERENCE:-$NPU_ROOT/../shared/reference}/ascend910b-measured.json"
if [ ! -r "$ref" ]; then
    printf '{"command": "build/bin/bench-calib", "skipped": "%s not found (set NPU_REFERENCE)"}\n' "$ref"
    exit 0
fi
"$NPU_BUILD/bin/bench-calib" > "$NPU_BUILD/bench-logs/calib.txt" || exit 1
python3 - "$NPU_BUILD/bench-logs/calib.txt" <<'PY'
import json, re, sys
out = {"command": "build/bin/bench-calib", "reference": "ascend910b-measured.json"}
for line in open(sys.argv[1]):
    m = re.match(r"\s*(\w+)\s+judged (\d+), within bound (\d+) \((\d+) %\), worst ([-+0-9.]+) %", line)
    if m:
        out[m.group(1)] = {"judged": int(m.group(2)), "within": int(m.group(3)),
                           "bound_pct": int(m.group(4)), "worst_pct": float(m.group(5))}
print(json.dumps(out))
PY
