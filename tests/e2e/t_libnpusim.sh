#!/bin/sh
# libnpusim as a compiler's test suite uses it: a program outside the tree,
# compiled against the one public header (sim/npusim.h, with frontend/npy.h
# for tensors) and linked with build/lib/libnpusim.a and the Debian
# libraries docs/api.md names. It runs the elementwise-add kernel of
# `npusim ref` in func and perf mode, checks the output against the golden
# tensor, reads counters (npu_sim_run_counted) and writes a trace
# (npu_sim_record) and runs the checkers (npu_sim_run_checked) on it and on
# a racy corpus kernel; the figures are compared with `npusim stat`,
# `npusim trace info` and `npusim check` on the same kernels. Bad calls return clear errors.
NAME=t_libnpusim
. "${NPU_ROOT:?}/tests/e2e/lib_e2e.sh"
bdir=$(cd "$(dirname "$NPUSIM")/.." && pwd)
lib="$bdir/lib/libnpusim.a"
[ -f "$lib" ] || fail "no $lib (make lib)"
CC=${CC:-cc}
# a sanitizer build's archive needs the sanitizers' runtimes at link time
san=""
nm "$lib" 2>/dev/null | grep -q "__asan_" && san="-fsanitize=address,undefined"

cat > "$tmp/user.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/npusim.h"
#include "frontend/npy.h"

#define DIE(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6)
        DIE("usage: user DIR CORES TRACE [RACY.elf JUNIT.xml]");
    char p[4096];
    npu_diag d;
    npu_sim *s;
    if (npu_sim_new(&s, NULL, &d))
        DIE("new: %s", d.msg);
    snprintf(p, sizeof p, "%s/kernel.elf", argv[1]);
    if (npu_sim_load_elf(s, p, &d) || npu_sim_set_cores(s, atoi(argv[2]), &d))
        DIE("load: %s", d.msg);
    npy_tensor x, y, ref, z;
    snprintf(p, sizeof p, "%s/x.npy", argv[1]);
    if (npy_load(p, &x, &d)) DIE("%s", d.msg);
    snprintf(p, sizeof p, "%s/y.npy", argv[1]);
    if (npy_load(p, &y, &d)) DIE("%s", d.msg);
    snprintf(p, sizeof p, "%s/z_ref.npy", argv[1]);
    if (npy_load(p, &ref, &d)) DIE("%s", d.msg);
    int64_t shape[1] = { ref.shape[0] };
    if (npu_sim_bind_tensor(s, "x", &x, NPU_IN, &d) || npu_sim_bind_tensor(s, "y", &y, NPU_IN, &d) ||
        npu_sim_bind_output(s, "z", ISA_DT_F32, 1, shape, &d) || npu_sim_bind_int(s, "n", shape[0], &d))
        DIE("bind: %s", d.msg);
    npu_cmp_result r;
    char line[512];
    /* func, then perf with counters: the same output, checked */
    for (int m = 0; m < 2; m++) {
        npu_counters *c = NULL;
        npu_run_opts o = { m ? NPU_MODE_PERF : NPU_MODE_FUNC, 0, 0 };
        if (m ? npu_sim_run_counted(s, &o, &c, &d) : npu_sim_run(s, &o, &d))
            DIE("run: %s", d.msg);
        if (npu_sim_get_output(s, "z", &z, &d) || npu_compare(&z, &ref, 0, 0, &r, &d))
            DIE("output: %s", d.msg);
        npu_compare_format(&r, line, sizeof line);
        printf("%s: %s\n", m ? "perf" : "func", line);
        npy_free(&z);
        if (!r.pass)
            return 1;
        if (!c)
            continue;
        static const char *const names[] = { "chip.cycles", "insns", "pipe.v.busy_cycles", "pipe.mte2.busy_cycles",
                                             "gm.read_bytes", "l2.hits", "l2.misses", "hbm.bytes_read" };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            uint64_t v;
            if (npu_counters_get(c, names[i], -1, &v, &d))
                DIE("counter: %s", d.msg);
            printf("counter %s %llu\n", names[i], (unsigned long long)v);
        }
        int n = npu_counters_instances(c, "pipe.v.busy_cycles");
        for (int k = 0; k < n; k++) {
            uint64_t v;
            if (npu_counters_get(c, "pipe.v.busy_cycles", k, &v, &d))
                DIE("counter: %s", d.msg);
            printf("core %d pipe.v.busy_cycles %llu\n", k, (unsigned long long)v);
        }
        printf("instances l2.hits %d hbm.bytes_read %d\n", npu_counters_instances(c, "l2.hits"),
               npu_counters_instances(c, "hbm.bytes_read"));
        printf("cycles %llu\n", (unsigned long long)npu_sim_cycles(s));
        /* what a caller gets wrong */
        uint64_t v;
        printf("bad name: %d %s\n", npu_counters_get(c, "pipe.v.busy", -1, &v, &d), d.msg);
        printf("bad instance: %d %s\n", npu_counters_get(c, "l2.hits", 999, &v, &d), d.msg);
        printf("unknown: %d\n", npu_counters_instances(c, "nope"));
        npu_counters_free(c);
    }
    /* per window, as npusim stat -I 500 */
    npu_counters *w = NULL;
    if (npu_sim_run_counted_every(s, NULL, 500, &w, &d))
        DIE("run_counted_every: %s", d.msg);
    for (size_t k = 0; k < npu_counters_windows(w); k++) {
        uint64_t v0, v1;
        if (npu_counters_get_window(w, k, "pipe.mte2.busy_cycles", -1, &v0, &d) ||
            npu_counters_get_window(w, k, "l2.hits", 3, &v1, &d))
            DIE("window: %s", d.msg);
        printf("window %llu %llu %llu\n", (unsigned long long)npu_counters_window_end(w, k),
               (unsigned long long)v0, (unsigned long long)v1);
    }
    npu_counters_free(w);
    npu_counters *c = NULL;
    npu_run_opts fo = { NPU_MODE_FUNC, 0, 0 };
    printf("func counted: %d %s\n", npu_sim_run_counted(s, &fo, &c, &d), d.msg);
    /* a trace of a perf run, memory counters per slice and channel */
    npu_record_opts ro = { NPU_MODE_PERF, 1, 200, 1, 0, 0 };
    if (npu_sim_record(s, argv[3], &ro, &d))
        DIE("record: %s", d.msg);
    printf("recorded %s\n", argv[3]);
    ro.level = 7;
    printf("bad level: %d %s\n", npu_sim_record(s, argv[3], &ro, &d), d.msg);
    /* the checkers: a clean run of this kernel, then a racy kernel */
    npu_check_result *k = NULL;
    if (npu_sim_run_checked(s, NULL, &k, &d))
        DIE("check: %s", d.msg);
    printf("clean: %zu findings, ran to end %d\n", npu_check_nfindings(k), npu_check_ran_to_end(k));
    npu_check_free(k);
    npy_free(&x);
    npy_free(&y);
    npy_free(&ref);
    npu_sim_free(s);
    if (argc > 4) {
        if (npu_sim_new(&s, NULL, &d) || npu_sim_load_elf(s, argv[4], &d) || npu_sim_set_cores(s, 1, &d))
            DIE("racy: %s", d.msg);
        int64_t ys[1] = { 128 };
        if (npu_sim_bind_output(s, "Y", ISA_DT_F16, 1, ys, &d))
            DIE("bind: %s", d.msg);
        npu_check_opts co = { NPU_CHECK_ALL, NPU_MODE_PERF, 0, 0, NULL, argv[5] };
        if (npu_sim_run_checked(s, &co, &k, &d))
            DIE("check: %s", d.msg);
        npu_sim_free(s);                /* the result outlives the simulator */
        for (size_t i = 0; i < npu_check_nfindings(k); i++)
            printf("finding %s | %s\n", npu_check_tool(k, i), npu_check_header(k, i));
        printf("report: %s", npu_check_report(k));
        npu_check_free(k);
    }
    return 0;
}
C
$CC -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $san -I"$NPU_ROOT" $(pkg-config --cflags libcjson 2>/dev/null) \
    "$tmp/user.c" -o "$tmp/user" "$lib" -lcjson -lz -lm -lpthread > "$tmp/cc.log" 2>&1 ||
    { cat "$tmp/cc.log"; fail "a program using only sim/npusim.h and libnpusim.a does not build"; }
echo "ok: a program outside the tree builds against sim/npusim.h and libnpusim.a"

"$NPUSIM" ref elementwise --op add --dtype f32 --len 40000 --cores 4 --seed 7 -o "$tmp/ew" > /dev/null 2>&1 ||
    fail "npusim ref elementwise"
"$NPUSIM" asm -I "$NPU_ROOT/kernels/include" "$NPU_ROOT/tests/check/missing_flag_load.s" -o "$tmp/racy.elf" ||
    fail "npusim asm missing_flag_load.s"
"$tmp/user" "$tmp/ew" 4 "$tmp/t.npt" "$tmp/racy.elf" "$tmp/junit.xml" > "$tmp/out.txt" 2> "$tmp/err.txt" ||
    { cat "$tmp/out.txt" "$tmp/err.txt"; fail "the program failed"; }
"$NPUSIM" stat --json -A -e "chip.cycles,insns,pipe.v.busy_cycles,pipe.mte2.busy_cycles,gm.read_bytes,l2.hits,l2.misses,hbm.bytes_read" \
    "$tmp/ew/launch.json" > "$tmp/stat.json" 2>/dev/null || fail "npusim stat"
"$NPUSIM" trace info "$tmp/t.npt" > "$tmp/info.txt" || fail "trace info of the library's trace"
"$NPUSIM" stat -I 500 -A -x, -e pipe.mte2.busy_cycles,l2.hits "$tmp/ew/launch.json" > "$tmp/stat_i.csv" 2>/dev/null ||
    fail "npusim stat -I 500"
python3 - "$tmp/out.txt" "$tmp/stat_i.csv" <<'PY' || fail "the library's windows differ from npusim stat -I"
import sys
got = [tuple(int(x) for x in l.split()[1:]) for l in open(sys.argv[1]) if l.startswith("window ")]
w = {}
for l in open(sys.argv[2]):
    f = l.strip().split(",")    # end cycle, instance, value, unit, event, ...
    if len(f) > 4 and f[4] == "pipe.mte2.busy_cycles":
        w.setdefault(int(f[0]), [0, 0])[0] += int(f[2])
    elif len(f) > 4 and f[4] == "l2.hits" and f[1] == "slice3":
        w.setdefault(int(f[0]), [0, 0])[1] = int(f[2])
want = [(t, v[0], v[1]) for t, v in sorted(w.items())]
if not got or got != want:
    print("library:", got[:4], "stat -I:", want[:4], len(got), len(want))
    sys.exit(1)
PY
python3 - "$tmp/out.txt" "$tmp/stat.json" "$tmp/info.txt" <<'PY' || { cat "$tmp/out.txt"; fail "the library's figures differ from npusim's"; }
import json, sys
out = open(sys.argv[1]).read().splitlines()
ev = json.load(open(sys.argv[2]))["events"]
info = open(sys.argv[3]).read()
got = {l.split()[1]: int(l.split()[2]) for l in out if l.startswith("counter ")}
bad = 0
for k, v in got.items():
    if v != ev[k]["value"]:
        print("%s: library %d, npusim stat %d" % (k, v, ev[k]["value"])); bad += 1
per = [int(l.split()[3]) for l in out if l.startswith("core ")]
if per != ev["pipe.v.busy_cycles"]["per_instance"]:
    print("per core:", per, ev["pipe.v.busy_cycles"]["per_instance"]); bad += 1
cyc = [int(l.split()[1]) for l in out if l.startswith("cycles ")]
if cyc != [ev["chip.cycles"]["value"]]:
    print("npu_sim_cycles", cyc); bad += 1
want = ["func: pass: 0 of 40000 elements mismatch", "perf: pass: 0 of 40000 elements mismatch",
        "instances l2.hits 32 hbm.bytes_read 32",
        "bad name: %d no counter named 'pipe.v.busy' (docs/counters.md lists them)",
        "bad instance: %d l2.hits: no instance 999 (its unit, l2_slice, has 32: 0..31, or -1 for the sum)",
        "unknown: -1",
        "func counted: %d run: counters need perf or timing mode (func mode has no time)",
        "bad level: %d record: level 7 (0 instr, 1 mem, 2 full)"]
for w in want:
    w = w.replace("%d", "1")   # NPU_EINVAL (isa/status.def)
    if not any(l.startswith(w) for l in out):
        print("missing:", w); bad += 1
for w in ("4 cores", "level mem", "counter interval 200", "64 named units"):
    if w not in info:
        print("trace info lacks", w); bad += 1
sys.exit(1 if bad else 0)
PY
# the checkers: none on the clean kernel; the corpus's expected finding on the racy one, as npusim check says
grep -q "^clean: 0 findings, ran to end 1" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "findings on a clean kernel"; }
want=$(cat "$NPU_ROOT/tests/check/missing_flag_load.expect")
grep -qxF "finding racecheck | $want" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "the racy kernel's finding: want $want"; }
[ "$(grep -c "^finding " "$tmp/out.txt")" = 1 ] || fail "more findings than the corpus expects"
"$NPUSIM" check --tool all --mode perf --cores 1 --out Y=f16[128] "$tmp/racy.elf" > "$tmp/cli.txt" 2>&1
python3 - "$tmp/out.txt" "$tmp/cli.txt" <<'PY' || fail "the library's report differs from npusim check's"
import sys
out = open(sys.argv[1]).read()
rep = out[out.index("report: ") + len("report: "):]
cli = open(sys.argv[2]).read()
# npusim check prints a run line first, then the same report
sys.exit(0 if cli.endswith(rep) and len(rep) > 40 else 1)
PY
grep -q "<testsuite" "$tmp/junit.xml" || fail "no JUnit file from npu_check_opts.junit"
grep -q "^  insn " "$tmp/info.txt" && grep -q "^  mem " "$tmp/info.txt" || fail "the trace has no instructions or GM ranges"
echo "ok: outputs, counters (= npusim stat), a trace (level mem, -A) and the checkers (= npusim check) through the library"
exit 0
