# tests/e2e/lib_kernel.sh — the shared part of the t_kernel_*.sh tests (not
# a test itself). Source it after setting
#   KERNEL  the `npusim ref` generator (and the kernel's name in messages),
#   OUTPUT  the name of the output whose check must pass,
#   MODES   the run modes to check, one run each ("" = the launch file's own
#           mode, which is perf unless the case says --mode).
# It provides $tmp (removed on exit), fail, $small (configs/small.json), $n
# (cases so far) and
#   check CORES CONFIG|default GENERATOR-OPTIONS...
# which makes a case with `npusim ref` (seed = the case number), runs it in
# each mode and requires "OUTPUT: pass: 0 of" and no synchronisation
# finding (a warning: a flag set twice, left set, never matched).
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}" "${KERNEL:?}" "${OUTPUT:?}"
MODES=${MODES:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_kernel_$KERNEL.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
small="$NPU_ROOT/configs/small.json"
n=0
check() {  # cores config|default generator-options...
    cores=$1; cfg=$2; shift 2
    n=$((n + 1)); d="$tmp/c$n"
    [ "$cfg" = default ] || set -- "$@" --config "$cfg"
    "$NPUSIM" ref "$KERNEL" "$@" --cores "$cores" --seed "$n" -o "$d" > "$tmp/ref.log" 2>&1 ||
        { cat "$tmp/ref.log"; fail "npusim ref $KERNEL $*"; }
    for mode in ${MODES:-launch}; do
        if [ "$mode" = launch ]; then mflag=""; else mflag="--mode $mode"; fi
        # shellcheck disable=SC2086 # mflag is empty or two words
        "$NPUSIM" run "$d/launch.json" $mflag > "$tmp/run.log" 2>&1 ||
            { cat "$tmp/run.log"; fail "$KERNEL $* on $cores cores ($mode)"; }
        grep -q "^$OUTPUT: pass: 0 of" "$tmp/run.log" ||
            { cat "$tmp/run.log"; fail "$KERNEL $*: no passing check of $OUTPUT ($mode)"; }
        if grep -q "warning" "$tmp/run.log"; then
            cat "$tmp/run.log"; fail "$KERNEL $*: the run has findings ($mode)"
        fi
    done
    echo "ok: $KERNEL $* ($cores cores) $(grep '^cycles:' "$tmp/run.log")"
}
