#!/bin/sh
# Run every Check suite (BUILD/bin/test-*) and every end-to-end test
# (tests/e2e/t_*.sh) of one build, $NPU_TEST_JOBS at a time (default: the
# host's CPU count; 1 runs them one after another). Prints one line per test
# as it finishes, then the failures' log tails and a closing
# "N passed, N failed" line; exits non-zero if anything failed.
# Every test writes only below its own mktemp directory and its own log
# (BUILD/test-logs/NAME.log), so any two can run side by side.
# Usage: scripts/run_tests.sh BUILD [filter]
BUILD=${1:-build}
FILTER=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
export NPUSIM="$ROOT/$BUILD/bin/npusim" NPU_BUILD="$ROOT/$BUILD" NPU_ROOT="$ROOT"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
JOBS=${NPU_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$JOBS" in ''|*[!0-9]*|0) echo "run_tests: NPU_TEST_JOBS must be a positive integer, not '$JOBS'" >&2; exit 2 ;; esac
LOG="$ROOT/$BUILD/test-logs"; mkdir -p "$LOG"
export LOG

# The tests, in list order (for the summary) and slowest first (for xargs,
# so the long ones do not end the run alone on one CPU): the seconds of the
# last run of this build, else of build/, read off its status line.
list="$LOG/.list"; sched="$LOG/.sched"; : > "$list"; : > "$sched"
add() {  # name command...
    name=$1
    case "$name" in *"$FILTER"*) ;; *) return ;; esac
    secs=0
    for f in "$LOG/$name.status" "$ROOT/build/test-logs/$name.status"; do
        if [ -f "$f" ]; then secs=$(awk '{ sub(/s$/, "", $3); print $3 + 0; exit }' "$f"); break; fi
    done
    rm -f "$LOG/$name.status"
    echo "$*" >> "$list"
    echo "$secs $*" >> "$sched"
}
for t in "$BUILD"/bin/test-*; do
    [ -x "$t" ] && add "$(basename "$t")" "$t"
done
for t in tests/e2e/t_*.sh; do
    [ -f "$t" ] && add "e2e-$(basename "$t" .sh)" sh "$t"
done

# xargs runs up to JOBS of these at once; each prints its line when done
# (one short line in one write: the lines of parallel tests do not mix)
# shellcheck disable=SC2016 # expanded by the inner sh
xargs -r -P "$JOBS" -L 1 sh -c '
    name=$1; shift
    start=$(date +%s)
    if timeout 900 "$@" >"$LOG/$name.log" 2>&1; then st=PASS; else st=FAIL; fi
    line=$(printf "%-4s %-32s %3ss  %s" "$st" "$name" $(( $(date +%s) - start )) \
        "$(grep -E "^[0-9]+%: Checks" "$LOG/$name.log" | tail -1)")
    echo "$line" > "$LOG/$name.status"
    echo "$line"
' run_test <<EOF
$(sort -s -k1,1nr "$sched" | cut -d' ' -f2-)
EOF

pass=0; fail=0; failed=""
while read -r name _; do
    case "$(cat "$LOG/$name.status" 2>/dev/null)" in
    PASS*) pass=$((pass + 1)) ;;
    *)     fail=$((fail + 1)); failed="$failed $name"
           echo "FAIL $name:"; tail -25 "$LOG/$name.log" 2>/dev/null | sed 's/^/     | /' ;;
    esac
done < "$list"
echo "[$BUILD] $pass passed, $fail failed"
[ $fail -eq 0 ] || { echo "failed:$failed"; exit 1; }
