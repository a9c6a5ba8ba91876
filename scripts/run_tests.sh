#!/bin/sh
# Run every Check suite (BUILD/bin/test-*) and every end-to-end test
# (tests/e2e/t_*.sh) of one build. Prints one line per test and a closing
# "N passed, N failed" line; exits non-zero if anything failed.
# Usage: scripts/run_tests.sh BUILD [filter]
BUILD=${1:-build}
FILTER=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
export NPUSIM="$ROOT/$BUILD/bin/npusim" NPU_BUILD="$ROOT/$BUILD" NPU_ROOT="$ROOT"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0; fail=0; failed=""
LOG="$ROOT/$BUILD/test-logs"; mkdir -p "$LOG"
run() {  # name command...
    name=$1; shift
    case "$name" in *"$FILTER"*) ;; *) return ;; esac
    start=$(date +%s)
    if timeout 900 "$@" >"$LOG/$name.log" 2>&1; then
        pass=$((pass + 1)); st=PASS
    else
        fail=$((fail + 1)); st=FAIL; failed="$failed $name"
    fi
    printf '%-4s %-32s %3ss  %s\n' "$st" "$name" $(( $(date +%s) - start )) \
        "$(grep -E '^[0-9]+%: Checks' "$LOG/$name.log" | tail -1)"
    if [ $st = FAIL ]; then tail -25 "$LOG/$name.log" | sed 's/^/     | /'; fi
}
for t in "$BUILD"/bin/test-*; do
    [ -x "$t" ] || continue
    run "$(basename "$t")" "$t"
done
for t in tests/e2e/t_*.sh; do
    [ -f "$t" ] || continue
    run "e2e-$(basename "$t" .sh)" sh "$t"
done
echo "[$BUILD] $pass passed, $fail failed"
[ $fail -eq 0 ] || { echo "failed:$failed"; exit 1; }
