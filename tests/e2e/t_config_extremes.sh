#!/bin/sh
# Every numeric or boolean config key at both ends of its documented range
# (docs/config.md, which t_config_docs keeps equal to the key table), on a
# small GEMM and a small softmax in perf mode: each run ends with exit 0
# (ran; a value the kernel tolerates), 1 (ran, outputs differ: a cost key
# cannot do that, so 1 is a failure too) or 2 with a one-line message
# starting "npusim run:" (a value the machine cannot build or the kernel
# faults on). Never a signal, a sanitizer report, a hang or an exit 2 in
# silence. Buffers of 1 TiB per core fail their allocation: under ASan
# that must be a message too (allocator_may_return_null).
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export NPUSIM_PROGRESS=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:allocator_may_return_null=1:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}:halt_on_error=1:exitcode=87"
"$NPUSIM" ref gemm --dtype f16 --out f32 --m 128 --n 128 --k 256 --cores 2 --seed 1 -o "$tmp/g" >/dev/null ||
    fail "ref gemm"
"$NPUSIM" ref softmax --rows 64 --len 256 --dtype f16 --cores 2 --seed 1 -o "$tmp/s" >/dev/null ||
    fail "ref softmax"
# key and range from the tables: | `key` | type | default | lo..hi | ...
awk -F'|' '/^\| `/ {
    key = $2; gsub(/[ `]/, "", key); type = $3; gsub(/ /, "", type); r = $5; gsub(/ /, "", r)
    if (type == "bool") { print key, "true"; print key, "false" }
    else if ((type == "integer" || type == "number" || type == "size") && r ~ /\.\./) {
        split(r, a, /\.\./); print key, a[1]; print key, a[2] }
}' "$NPU_ROOT/docs/config.md" > "$tmp/cases"
n=$(wc -l < "$tmp/cases")
[ "$n" -ge 400 ] || fail "only $n cases from docs/config.md"
runs=0; ok=0; refused=0
while read -r key val; do
    for k in g s; do
        runs=$((runs + 1))
        timeout 60 "$NPUSIM" run "$tmp/$k/launch.json" -q --set "$key=$val" --max-cycles 3000000 \
            > /dev/null 2> "$tmp/err" < /dev/null
        rc=$?
        case $rc in
        0) ok=$((ok + 1)) ;;
        2) # (ASan warns of the refused 1 TiB allocation on a line of its own)
           grep -v "^==[0-9]*==WARNING: AddressSanitizer failed to allocate" "$tmp/err" | head -n 1 |
               grep -q "^npusim run: " ||
               fail "$key=$val on $k: exit 2 without a message: $(head -c 300 "$tmp/err")"
           ! grep -q "ERROR: AddressSanitizer\|runtime error" "$tmp/err" ||
               fail "$key=$val on $k: sanitizer report: $(grep -m1 "ERROR\|runtime error" "$tmp/err")"
           refused=$((refused + 1)) ;;
        *) fail "$key=$val on $k: exit $rc: $(head -c 300 "$tmp/err")" ;;
        esac
    done
done < "$tmp/cases"
echo "t_config_extremes: ok ($runs runs of $n values: $ok ran, $refused refused with a message)"
