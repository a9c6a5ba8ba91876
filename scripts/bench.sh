#!/bin/sh
# make bench: run every benchmark of one build and gather their JSON into
# bench/results.json (one object, a key per benchmark, in this order).
# Each benchmark prints one JSON object on stdout; its log goes to
# BUILD/bench-logs/NAME.log. A benchmark that fails is recorded as
# {"error": "..."} and the script goes on, so one broken bench does not hide
# the others; the exit status is non-zero if any failed.
# Usage: scripts/bench.sh BUILD
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
B="$ROOT/$BUILD/bin"
export NPUSIM="$B/npusim" NPU_BUILD="$ROOT/$BUILD" NPU_ROOT="$ROOT"
LOG="$ROOT/$BUILD/bench-logs"; mkdir -p "$LOG" bench
TMP=$(mktemp -d "${TMPDIR:-/tmp}/npubench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failed=0
: > "$TMP/list"
bench() {  # name command...
    name=$1; shift
    printf 'bench %-22s ... ' "$name"
    if "$@" > "$TMP/$name.json" 2> "$LOG/$name.log"; then
        echo ok
    else
        st=$?
        echo "FAILED (see $LOG/$name.log)"; failed=1
        printf '{"error": "exit status %s; see %s"}\n' "$st" "$LOG/$name.log" > "$TMP/$name.json"
    fi
    echo "$name" >> "$TMP/list"
}
# Issue 3: scalar and cube functional throughput.
[ -x "$B/bench-scalar_bench" ] && bench scalar "$B/bench-scalar_bench"
[ -x "$B/bench-cube_bench" ] && bench cube "$B/bench-cube_bench"
# Issue 6: the HBM model on the reference traces.
[ -x "$B/bench-memsim_bench" ] && bench memsim "$B/bench-memsim_bench"
# Issue 5: calibration against the measured per-instruction tables.
# Further benchmarks: every scripts/bench.d/*.sh prints one JSON object.
for f in scripts/bench.d/*.sh; do
    [ -f "$f" ] || continue
    bench "$(basename "$f" .sh)" sh "$f"
done
python3 - "$TMP" > bench/results.json <<'PY'
import json, sys, os
d = sys.argv[1]
out = {}
for name in open(os.path.join(d, "list")).read().split():
    txt = open(os.path.join(d, name + ".json")).read().strip()
    try:
        out[name] = json.loads(txt)
    except ValueError:
        out[name] = {"error": "not JSON", "output": txt[:2000]}
print(json.dumps(out, indent=2, sort_keys=False))
PY
echo "bench: wrote bench/results.json"
exit $failed
