#!/bin/sh
# tests/fuzz/run.sh TOOLBUILD SECONDS [TARGET...] — build the libFuzzer
# targets with clang (ASan+UBSan) into build-fuzz/, make the seed corpora
# from the project's own files with TOOLBUILD's npusim, and run each target
# SECONDS seconds, one after the other. `make fuzz FUZZ_SECONDS=N` calls it.
#
# Targets: fuzz_asm fuzz_elf fuzz_json fuzz_npy fuzz_exec fuzz_view
# (tests/fuzz/; fuzz_view also compiles npuview's model and views) and
# npt-fuzz (the trace reader's target, traces/tools/npt-fuzz.c).
# Findings land in build-fuzz/artifacts/; logs in build-fuzz/logs/; the
# grown corpus in build-fuzz/corpus/TARGET (kept between runs).
# Exit status: 0 no finding, 1 a target found something, 2 build failure.
set -u
TOOLS=${1:-build}; SECS=${2:-60}; shift 2 2>/dev/null || shift $#
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
FB=build-fuzz
NPUSIM=$ROOT/$TOOLS/bin/npusim
MAKE=${MAKE:-make}
SANF="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
LIBS="$(pkg-config --libs libcjson zlib 2>/dev/null || echo -lcjson -lz) -lm -lpthread"
CFL="-std=c11 -D_GNU_SOURCE -O1 -g -I. $(pkg-config --cflags libcjson zlib 2>/dev/null)"
TARGETS=${*:-"fuzz_asm fuzz_elf fuzz_json fuzz_npy npt-fuzz fuzz_view fuzz_exec"}

# The library, compiled for coverage (fuzzer-no-link) and sanitizers. clang
# warns about things gcc does not; -Wno-error keeps those from blocking.
$MAKE --no-print-directory BUILD=$FB CC=clang SAN=1 OPT=-O1 \
    EXTRA_CFLAGS="-fsanitize=fuzzer-no-link -Wno-error" $FB/lib/libnpusim.a >$FB.make.log 2>&1 ||
    { tail -30 $FB.make.log; echo "fuzz: library build failed ($FB.make.log)"; exit 2; }
mkdir -p $FB/bin $FB/logs $FB/artifacts $FB/seeds $FB/corpus
for t in $TARGETS; do
    src=tests/fuzz/$t.c; [ "$t" = npt-fuzz ] && src=traces/tools/npt-fuzz.c
    # the viewer is not in libnpusim: its model and views (no SDL) come along
    [ "$t" = fuzz_view ] && src="$src viewer/model.c viewer/view.c viewer/report.c"
    clang $CFL -DNPT_LIBFUZZER -fsanitize=fuzzer $SANF $src $FB/lib/libnpusim.a $LIBS \
        -o $FB/bin/$t || { echo "fuzz: building $t failed"; exit 2; }
done

# Seeds, made fresh each time from the tree (nothing binary is committed).
S=$FB/seeds; rm -rf "$S"; mkdir -p "$S/asm" "$S/elf" "$S/json" "$S/npy" "$S/trace" "$S/exec" "$S/ref" "$S/view"
cp kernels/*.s kernels/examples/*.s tests/check/*.s "$S/asm/" 2>/dev/null
find tests/data/asm -name '*.s' -exec cp {} "$S/asm/" \; 2>/dev/null
cp configs/*.json "$S/json/"
for k in kernels/*.s kernels/examples/*.s; do
    "$NPUSIM" asm -I kernels/include "$k" -o "$S/elf/$(basename "$k" .s).elf" >/dev/null 2>&1
done
for g in elementwise softmax gemm layernorm; do
    "$NPUSIM" ref $g -o "$S/ref/$g" >/dev/null 2>&1 || continue
    cp "$S/ref/$g"/*.npy "$S/npy/" 2>/dev/null
    for f in "$S/ref/$g"/*.json; do [ -f "$f" ] && cp "$f" "$S/json/$g-$(basename "$f")"; done
    for f in "$S/ref/$g"/*.elf; do [ -f "$f" ] && cp "$f" "$S/elf/$g-$(basename "$f")"; done
done
# small .npy files keep runs fast: keep the big ones out of the seeds, and
# add one small tensor of each dtype and a few shapes (format 1.0 and 2.0)
find "$S/npy" -size +64k -delete
python3 - "$S/npy" <<'PY'
import struct, sys
for i, (d, sz) in enumerate([('<f4', 4), ('<f2', 2), ('<i4', 4), ('<i2', 2), ('|i1', 1), ('|u1', 1),
                             ('<u2', 2), ('<u4', 4), ('<i8', 8), ('<V2', 2), ('<V1', 1), ('<f1', 1)]):
    for shape in ['()', '(5,)', '(2, 3)', '(0, 4)', '(1, 2, 1, 2)']:
        n = eval('(1,)*0+' + shape) if shape != '()' else ()
        cnt = 1
        for x in n: cnt *= x
        h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (d, shape)
        major = 2 if i % 5 == 0 and shape == '(5,)' else 1
        pre = 10 if major == 1 else 12
        h += ' ' * (63 - (pre + len(h)) % 64) + '\n'
        size = struct.pack('<H' if major == 1 else '<I', len(h))
        body = bytes((j * 7) & 255 for j in range(cnt * sz))
        open('%s/t%d-%s.npy' % (sys.argv[1], i, shape.strip('()').replace(', ', 'x') or 's'), 'wb').write(
            b'\x93NUMPY' + bytes([major, 0]) + size + h.encode() + body)
PY
if [ -x "$TOOLS/bin/npt-synth" ]; then
    for n in 50 400 3000; do
        "$TOOLS/bin/npt-synth" --events $n --cores 2 --seed $n -o "$S/trace/s$n.npt" >/dev/null 2>&1 ||
        "$TOOLS/bin/npt-synth" -n $n -o "$S/trace/s$n.npt" >/dev/null 2>&1
    done
fi
python3 tests/fuzz/seed_exec.py "$S"/elf/*.elf "$S/exec" 2>/dev/null
# the viewer's seeds: small recorded traces (level instr with -A's memory
# units, level full with HBM commands) and the synthetic ones
"$NPUSIM" ref softmax --rows 8 --len 64 --cores 2 -o "$S/ref/vsm" >/dev/null 2>&1 &&
    "$NPUSIM" record -q -A -I 100 -o "$S/view/softmax-A.npt" "$S/ref/vsm/launch.json" >/dev/null 2>&1
"$NPUSIM" ref gemm --m 64 --n 64 --k 64 --cores 2 -o "$S/ref/vg" >/dev/null 2>&1 &&
    "$NPUSIM" record -q --level full -I 200 -o "$S/view/gemm-full.npt" "$S/ref/vg/launch.json" >/dev/null 2>&1
cp "$S"/trace/*.npt "$S/view/" 2>/dev/null

rc=0
for t in $TARGETS; do
    case $t in
        fuzz_asm) seeds=asm; ml=16384 ;; fuzz_elf) seeds=elf; ml=65536 ;;
        fuzz_json) seeds=json; ml=16384 ;; fuzz_npy) seeds=npy; ml=65536 ;;
        npt-fuzz) seeds=trace; ml=65536 ;; fuzz_exec) seeds=exec; ml=2304 ;;
        fuzz_view) seeds=view; ml=65536 ;;
    esac
    # per-input time limit: fuzz_exec runs up to 4096 instructions per core
    # twice (func and perf); 4096 vector instructions of 255 repeats take
    # about 5 s of CPU under ASan+UBSan and coverage, 20 s or more on a busy
    # machine, which is slow, not a hang
    to=20; [ "$t" = fuzz_exec ] && to=90
    mkdir -p "$FB/corpus/$t"
    echo "fuzz: $t for ${SECS}s (seeds: $(ls "$S/$seeds" | wc -l) files)"
    # A finding stops libFuzzer; the target is restarted for the rest of its
    # time (the finding is kept in artifacts/), so one crash does not end
    # the run. Each session's "Done N runs in S second(s)" line is printed.
    start=$(date +%s); left=$SECS; session=0; : >"$FB/logs/$t.log"
    while [ "$left" -gt 0 ]; do
        session=$((session + 1))
        NPU_ROOT=$ROOT ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
            $FB/bin/$t -max_total_time="$left" -max_len=$ml -timeout="$to" -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$FB/artifacts/$t-" \
            "$FB/corpus/$t" "$S/$seeds" >"$FB/logs/$t.$session.log" 2>&1
        st=$?
        cat "$FB/logs/$t.$session.log" >>"$FB/logs/$t.log"
        grep -E '^Done [0-9]+ runs' "$FB/logs/$t.$session.log" | sed "s/^/fuzz: $t: /"
        if [ $st -ne 0 ]; then
            rc=1; echo "fuzz: $t FOUND SOMETHING (exit $st): see $FB/logs/$t.$session.log, $FB/artifacts/"
            grep -E 'ERROR|SUMMARY|runtime error' "$FB/logs/$t.$session.log" | head -5
            grep -E '^Test unit written' "$FB/logs/$t.$session.log"
        fi
        [ $st -eq 0 ] && break
        left=$((SECS - ($(date +%s) - start)))
    done
done
exit $rc
