#!/bin/sh
# check_bench.sh — the cost of `npusim check --tool all` against a perf-mode
# `npusim run` of the GEMM kernel (kernels/gemm.s, f16 -> f32, N x N x N on
# the default machine, 24 cores; issue 10 sets the goal: at most 3x).
#
#   sh bench/check_bench.sh [N [cores]]     (default 1024 24)
#
# Prints one JSON object (for scripts/bench.sh via scripts/bench.d/check.sh):
# CPU seconds of each command (children's user+sys, so a loaded host does not
# inflate them), wall seconds, and the ratios. Both commands load the same
# launch (inputs from npusim ref) and check C against the golden output.
set -u
: "${NPUSIM:?}"
n=${1:-1024}; cores=${2:-24}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
"$NPUSIM" ref gemm --m "$n" --n "$n" --k "$n" --cores "$cores" -o "$tmp/g" > "$tmp/ref.log" 2>&1 ||
    { cat "$tmp/ref.log" >&2; exit 1; }
python3 - "$NPUSIM" "$tmp/g/launch.json" "$n" "$cores" <<'PY'
import json, resource, subprocess, sys, time
npusim, launch, n, cores = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def timed(args, want_rc):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.monotonic()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    w = time.monotonic() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != want_rc:
        sys.stderr.write(p.stdout.decode(errors="replace"))
        sys.exit("%s: exit %d" % (" ".join(args), p.returncode))
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), w
best = {}
for name, args in (("perf", [npusim, "run", "-q", launch]),
                   ("check", [npusim, "check", "-q", "--tool", "all", launch])):
    runs = [timed(args, 0) for _ in range(3)]
    best[name] = (min(r[0] for r in runs), min(r[1] for r in runs))
print(json.dumps({
    "gemm_n": n, "cores": cores,
    "perf_run_cpu_s": round(best["perf"][0], 3), "check_all_cpu_s": round(best["check"][0], 3),
    "perf_run_wall_s": round(best["perf"][1], 3), "check_all_wall_s": round(best["check"][1], 3),
    "check_over_perf_cpu": round(best["check"][0] / best["perf"][0], 3),
    "check_over_perf_wall": round(best["check"][1] / best["perf"][1], 3),
    "goal_check_over_perf_max": 3.0}))
PY
