#!/bin/sh
# Determinism: the same kernel, inputs and config run twenty times give
# byte-identical outputs (.npy, func and perf mode), stat JSON and traces
# (npusim record). With a second npusim built at another optimisation level
# (NPU_DET_OTHER=path; `make check-determinism` builds -O0 into build-O0/
# and sets it) its results must be byte-identical too.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
RUNS=${DET_RUNS:-20}
OTHER=${NPU_DET_OTHER:-}

# kernels: GEMM on 2 cores (cube, DMA, flags), softmax (vector, exp), elementwise
"$NPUSIM" ref gemm --m 64 --n 64 --k 64 --cores 2 --seed 3 -o "$tmp/gemm" > /dev/null || fail "ref gemm"
"$NPUSIM" ref softmax --rows 8 --len 256 --cores 2 --seed 4 -o "$tmp/softmax" > /dev/null 2>&1 ||
    "$NPUSIM" ref softmax --cores 2 --seed 4 -o "$tmp/softmax" > /dev/null || fail "ref softmax"
"$NPUSIM" ref elementwise --len 5000 --op gelu --cores 2 --seed 5 -o "$tmp/ew" > /dev/null || fail "ref elementwise"

# one round of every artifact for kernel dir $1 with npusim $2 into $3
round() {
    sim=$2 out=$3
    # a fresh copy of the kernel dir per round, so a run that wrote
    # nothing cannot pass with the last round's output
    mkdir -p "$out"; rm -rf "$tmp/w"; cp -r "$1" "$tmp/w"; rk=$tmp/w
    "$sim" run "$rk/launch.json" --mode func > "$out/run-func.txt" 2>&1 || fail "$1: run func: $(tail -1 "$out/run-func.txt")"
    for f in "$rk"/*.npy; do [ -f "$1/$(basename "$f")" ] || mv "$f" "$out/func-$(basename "$f")"; done
    "$sim" run "$rk/launch.json" --mode perf > "$out/run-perf.txt" 2>&1 || fail "$1: run perf"
    for f in "$rk"/*.npy; do [ -f "$1/$(basename "$f")" ] || mv "$f" "$out/perf-$(basename "$f")"; done
    ls "$out"/func-*.npy > /dev/null 2>&1 || fail "$1: no output written"
    # stat and record name the kernel path: run them from the same place
    (cd "$tmp" && "$sim" stat --json w/launch.json) > "$out/stat.json" 2> "$out/stat.err" ||
        fail "$1: stat --json: $(cat "$out/stat.err")"
    (cd "$tmp" && "$sim" record -q -o "$out/run.npt" w/launch.json) > /dev/null 2>&1 || fail "$1: record"
}

# perf mode on one host thread (no data worker, sim/defer.c) must give
# the same bytes as the default
printf '#!/bin/sh\nNPUSIM_THREADS=1 exec "%s" "$@"\n' "$NPUSIM" > "$tmp/one-thread"
chmod +x "$tmp/one-thread"

n_cmp=0
for k in gemm softmax ew; do
    kd=$tmp/$k
    round "$kd" "$NPUSIM" "$tmp/r-$k-1"
    i=2
    while [ $i -le "$RUNS" ]; do
        round "$kd" "$NPUSIM" "$tmp/r-$k-$i"
        for f in "$tmp/r-$k-1"/*; do
            cmp -s "$f" "$tmp/r-$k-$i/$(basename "$f")" || fail "$k: run $i: $(basename "$f") differs from run 1"
            n_cmp=$((n_cmp + 1))
        done
        rm -rf "$tmp/r-$k-$i"
        i=$((i + 1))
    done
    round "$kd" "$tmp/one-thread" "$tmp/t-$k"
    for f in "$tmp/r-$k-1"/*; do
        cmp -s "$f" "$tmp/t-$k/$(basename "$f")" ||
            fail "$k: $(basename "$f") differs with NPUSIM_THREADS=1"
        n_cmp=$((n_cmp + 1))
    done
    if [ -n "$OTHER" ]; then
        round "$kd" "$OTHER" "$tmp/o-$k"
        for f in "$tmp/r-$k-1"/*; do
            case $f in *.txt) continue ;; esac   # summaries name the binary's build? compare data only
            cmp -s "$f" "$tmp/o-$k/$(basename "$f")" ||
                fail "$k: $(basename "$f") differs between $NPUSIM and $OTHER"
            n_cmp=$((n_cmp + 1))
        done
    fi
done
[ -n "$OTHER" ] && o="; one host thread against two; and against $OTHER" || o="; one host thread against two; no second build (make check-determinism compares -O0 with -O2)"
echo "t_determinism: ok ($RUNS runs of 3 kernels, $n_cmp byte comparisons$o)"
