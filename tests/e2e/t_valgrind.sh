#!/bin/sh
# valgrind memcheck on the end-to-end paths: a representative set of npusim
# commands (assemble, disassemble, config check, run func and perf with
# outputs written, stat --json, record, trace info/export, memsim, and a
# malformed input of each kind) must run with no memcheck error and no
# definite/possible leak (--error-exitcode, --leak-check=full).
# Skipped when valgrind is missing or npusim is a sanitizer build (ASan and
# valgrind cannot run together; that build has LeakSanitizer instead).
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
command -v valgrind > /dev/null 2>&1 || { echo "t_valgrind: SKIP (no valgrind)"; exit 0; }
if ldd "$NPUSIM" 2>/dev/null | grep -q 'libasan\|libubsan'; then
    echo "t_valgrind: SKIP (sanitizer build)"; exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
M=$NPU_ROOT/tests/malformed
n=0; nfail=0
# vg EXPECT_RC CMD... : run npusim under memcheck; the command's own exit
# status must be EXPECT_RC, and memcheck must find nothing (its exit code 99)
vg() {
    want=$1; shift
    n=$((n + 1))
    timeout 600 valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,possible \
        --errors-for-leak-kinds=definite,possible --track-origins=no --log-file="$tmp/vg.log" \
        "$NPUSIM" "$@" > "$tmp/out.txt" 2>&1
    rc=$?
    if [ $rc -ne "$want" ]; then
        nfail=$((nfail + 1))
        echo "FAIL: npusim $*: exit $rc, want $want"
        sed -n '1,30s/^/   | /p' "$tmp/vg.log"; tail -3 "$tmp/out.txt" | sed 's/^/   > /'
    fi
}
"$NPUSIM" ref gemm --m 64 --n 64 --k 64 --cores 2 --seed 1 -o "$tmp/g" > /dev/null || { echo "FAIL: ref"; exit 1; }
"$NPUSIM" ref softmax --rows 4 --len 256 --cores 2 --seed 2 -o "$tmp/s" > /dev/null || { echo "FAIL: ref"; exit 1; }

vg 0 asm -I "$NPU_ROOT/kernels/include" "$NPU_ROOT/kernels/examples/sample.s" -o "$tmp/sample.elf"
vg 0 dis "$tmp/sample.elf"
vg 0 config --check "$NPU_ROOT/configs/small.json"
vg 0 config --dump --config "$NPU_ROOT/configs/small.json"
vg 0 run "$tmp/g/launch.json" --mode func
vg 0 run "$tmp/g/launch.json" --mode perf
vg 0 run "$tmp/s/launch.json" --mode perf --config "$NPU_ROOT/configs/small.json"
vg 0 stat --json "$tmp/g/launch.json"
vg 0 record -q -o "$tmp/g.npt" "$tmp/g/launch.json"
vg 0 trace info "$tmp/g.npt"
vg 0 trace export --format chrome "$tmp/g.npt" -o "$tmp/g.json"
vg 0 trace export --format folded "$tmp/g.npt" -o "$tmp/g.folded"
vg 0 check "$tmp/s/launch.json"
printf '0x1000 READ 0\n0x2000 WRITE 4\n0x1040 READ 9\n' > "$tmp/m.trace"
vg 0 memsim --config "$NPU_ROOT/configs/small.json" "$tmp/m.trace"
# bad input: the error paths free what they allocated, too
vg 2 asm "$M/asm/undefined-label.s" -o "$tmp/x.elf"
vg 2 dis "$M/elf/e_shoff-max.elf"
vg 2 config --check "$M/config/cores-string.json"
vg 2 run "$tmp/g/kernel.elf" --arg A="$M/npy/shape-negative.npy"
vg 2 trace info "$M/trace/trunc8.npt"
vg 2 memsim --config "$NPU_ROOT/configs/small.json" "$M/memtrace/op-unknown.trace"
echo "t_valgrind: $n commands under memcheck, $nfail failures"
[ $nfail -eq 0 ]
