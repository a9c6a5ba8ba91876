#!/bin/sh
# npusim record end to end on kernels/gemm.s (24 cores, the default machine,
# and 2 cores of the small machine), softmax.s and attention.s (2 small cores): the trace read back (CSV export) has,
# per core and pipe, the instruction counts and busy cycles of the engine's
# statistics (npusim stat --json -A); the last counter samples are the
# engine's totals; the Chrome export parses as JSON with a slice per
# instruction; folded totals per pipe equal the busy cycles; mem level has
# MEM ranges whose bytes are the GM bytes; two recordings are
# byte-identical; errors of the command line exit 2 and write nothing.
NAME=t_record
. "${NPU_ROOT:?}/tests/e2e/lib_e2e.sh"
small="$NPU_ROOT/configs/small.json"

# compare LABEL TRACE STAT.json LEVEL: the trace against the engine's statistics
compare() {
    "$NPUSIM" trace export --format csv "$2" -o "$tmp/t.csv" || fail "$1: csv export"
    "$NPUSIM" trace export --format folded "$2" -o "$tmp/t.folded" || fail "$1: folded export"
    "$NPUSIM" trace export --format chrome "$2" -o "$tmp/t.json" || fail "$1: chrome export"
    python3 - "$tmp/t.csv" "$3" "$tmp/t.folded" "$tmp/t.json" "$4" <<'PY' || fail "$1: trace does not match the engine"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
stat = json.load(open(sys.argv[2]))["events"]
pipes = ["S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"]
ncores = len(stat["insns"]["per_instance"])
busy, n = {}, {}
last = {}
memb = {0: [0] * ncores, 1: [0] * ncores}
for r in rows:
    if r["kind"] == "insn":
        k = (int(r["core"]), r["pipe"])
        busy[k] = busy.get(k, 0) + int(r["end"]) - int(r["start"])
        if not int(r["flags"]) & 1:          # dispatch slots are not S instructions
            n[k] = n.get(k, 0) + 1
        assert int(r["dispatch"]) <= int(r["start"]) <= int(r["end"]), r
    elif r["kind"] == "counter":
        k = (int(r["unit"]), r["name"])
        t = int(r["cycle"])
        assert k not in last or last[k][0] <= t, r
        assert k not in last or last[k][1] <= int(r["value"]), ("counters are cumulative", r)
        last[k] = (t, int(r["value"]))
    elif r["kind"] == "mem":
        memb[int(r["is_write"])][int(r["core"])] += int(r["bytes"])
bad = 0
for c in range(ncores):
    for p in pipes:
        key = "pipe.%s." % p.lower()
        want_b = stat[key + "busy_cycles"]["per_instance"][c]
        want_n = stat[key + "insns"]["per_instance"][c]
        got_b, got_n = busy.get((c, p), 0), n.get((c, p), 0)
        if (got_b, got_n) != (want_b, want_n):
            print("core %d %s: trace %d busy / %d insns, engine %d / %d" % (c, p, got_b, got_n, want_b, want_n))
            bad += 1
        if last.get((c, key + "busy_cycles"), (0, 0))[1] != want_b:
            print("core %d %s: last counter sample %s != busy %d" % (c, p, last.get((c, key + "busy_cycles")), want_b))
            bad += 1
    for name in ("gm.read_bytes", "gm.write_bytes"):
        want = stat[name]["per_instance"][c]
        if last.get((c, name), (0, 0))[1] != want:
            print("core %d %s: last sample %s != engine %d" % (c, name, last.get((c, name)), want))
            bad += 1
    if sys.argv[5] == "mem":
        if (memb[0][c], memb[1][c]) != (stat["gm.read_bytes"]["per_instance"][c], stat["gm.write_bytes"]["per_instance"][c]):
            print("core %d: MEM bytes %d/%d != GM bytes" % (c, memb[0][c], memb[1][c]))
            bad += 1
# the memory system's counters (unit ncores, with the HBM model: every
# machine here has it): the last samples are the L2's and HBM's totals
if sys.argv[5] == "instr":
    for name in ("l2.hits", "l2.misses", "l2.bytes", "hbm.bytes_read", "hbm.bytes_written"):
        want = stat[name]["value"]
        if last.get((ncores, name), (0, -1))[1] != want:
            print("memory %s: last sample %s != engine %d" % (name, last.get((ncores, name)), want))
            bad += 1
# folded: the weight of every stack ending in pipe P sums to P's busy cycles
fold = {}
for line in open(sys.argv[3]):
    stack, w = line.rsplit(" ", 1)
    fr = stack.split(";")
    k = (int(fr[0].split()[1]), fr[-2])
    fold[k] = fold.get(k, 0) + int(w)
for c in range(ncores):
    for p in pipes:
        want = stat["pipe.%s.busy_cycles" % p.lower()]["per_instance"][c]
        if fold.get((c, p), 0) != want:
            print("core %d %s: folded %d != busy %d" % (c, p, fold.get((c, p), 0), want))
            bad += 1
# chrome: parses; one complete slice per instruction, flows in pairs
ch = json.load(open(sys.argv[4]))
ev = ch["traceEvents"]
nx = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "insn")
ninsn = sum(1 for r in rows if r["kind"] == "insn")
if nx != ninsn:
    print("chrome: %d insn slices for %d instructions" % (nx, ninsn)); bad += 1
s = sorted(e["id"] for e in ev if e.get("ph") == "s")
f = sorted(e["id"] for e in ev if e.get("ph") == "f")
if s != f or not s:
    print("chrome: %d flow starts, %d flow ends" % (len(s), len(f))); bad += 1
nwait = sum(1 for r in rows if r["kind"] == "flag_wait")
if len(s) != nwait:
    print("chrome: %d flows for %d waits" % (len(s), nwait)); bad += 1
sys.exit(1 if bad else 0)
PY
}

# --- GEMM on 24 cores of the default machine and on 2 small cores; softmax, attention
"$NPUSIM" ref gemm --dtype f16 --out f32 --m 256 --n 320 --k 200 --cores 24 --seed 1 -o "$tmp/g24" \
    > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref gemm"; }
"$NPUSIM" ref gemm --dtype f16 --out f32 --m 100 --n 90 --k 300 --bm 32 --bn 64 --bk 64 --cores 2 \
    --config "$small" --seed 2 -o "$tmp/g2" > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref gemm small"; }
# softmax (vector pipe, bank stalls) and causal attention (every pipe) on 2 small cores
"$NPUSIM" ref softmax --dtype f16 --rows 37 --len 100 --cores 2 --config "$small" --seed 3 -o "$tmp/sm" \
    > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref softmax"; }
"$NPUSIM" ref attention --bh 3 --sq 100 --causal 1 --cores 2 --config "$small" --seed 4 -o "$tmp/att" \
    > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref attention"; }
for g in g24 g2 sm att; do
    "$NPUSIM" record -o "$tmp/$g.npt" -I 500 "$tmp/$g/launch.json" > "$tmp/rec.log" 2>&1 ||
        { cat "$tmp/rec.log"; fail "record $g"; }
    grep -q "bytes per instruction event" "$tmp/rec.log" || fail "record $g: no summary"
    grep -q "read it: npuview $tmp/$g.npt (window), npuview --report $tmp/$g.npt" "$tmp/rec.log" ||
        fail "record $g: no pointer to the viewer and the report"
    "$NPUSIM" stat --json -A -e "insns,pipe.*.busy_cycles,pipe.*.insns,gm.read_bytes,gm.write_bytes,l2.hits,l2.misses,l2.bytes,hbm.bytes_read,hbm.bytes_written" "$tmp/$g/launch.json" > "$tmp/$g.stat.json" || fail "stat $g"
    compare "$g" "$tmp/$g.npt" "$tmp/$g.stat.json" instr
    "$NPUSIM" trace info "$tmp/$g.npt" > "$tmp/info.log" || fail "trace info $g"
    grep -q "damage:       none" "$tmp/info.log" || { cat "$tmp/info.log"; fail "$g: damage"; }
    grep -q "level instr" "$tmp/info.log" || fail "$g: level"
    grep -q "symbols:" "$tmp/info.log" || fail "$g: symbols"
    # mem level: MEM ranges carry every GM byte
    "$NPUSIM" record -q --level mem -o "$tmp/$g.mem.npt" "$tmp/$g/launch.json" || fail "record --level mem $g"
    compare "$g mem" "$tmp/$g.mem.npt" "$tmp/$g.stat.json" mem
    "$NPUSIM" trace info "$tmp/$g.mem.npt" | grep -q "^  mem " || fail "$g: no mem events at level mem"
    # determinism
    "$NPUSIM" record -q -o "$tmp/$g.b.npt" -I 500 "$tmp/$g/launch.json" || fail "record $g again"
    cmp -s "$tmp/$g.npt" "$tmp/$g.b.npt" || fail "$g: two recordings differ"
    echo "ok: record $g (round trip against the engine, chrome, folded, mem, determinism)"
done
# -A: the memory counters per L2 slice and HBM channel. Each unit's last
# sample is its slice's or channel's total (npusim stat -A), the units sum
# to the summed unit at every sample, and the Chrome export has a track
# per unit and event in a process for the slices and one for the channels.
"$NPUSIM" record -q -A -o "$tmp/g24.A.npt" -I 500 "$tmp/g24/launch.json" || fail "record -A"
"$NPUSIM" trace export --format csv "$tmp/g24.A.npt" -o "$tmp/A.csv" || fail "csv -A"
"$NPUSIM" trace export --format csv "$tmp/g24.npt" -o "$tmp/S.csv" || fail "csv summed"
"$NPUSIM" trace export --format chrome "$tmp/g24.A.npt" -o "$tmp/A.json" || fail "chrome -A"
python3 - "$tmp/A.csv" "$tmp/S.csv" "$tmp/g24.stat.json" "$tmp/A.json" <<'PY' || fail "-A: per-unit memory counters"
import csv, json, sys
stat = json.load(open(sys.argv[3]))["events"]
ncores = len(stat["insns"]["per_instance"])
def samples(f):
    d = {}
    for r in csv.DictReader(open(f)):
        if r["kind"] == "counter" and int(r["unit"]) >= ncores:
            d.setdefault((int(r["unit"]), r["name"]), {})[int(r["cycle"])] = int(r["value"])
    return d
A, S = samples(sys.argv[1]), samples(sys.argv[2])
l2 = ("l2.hits", "l2.misses", "l2.bytes")
hbm = ("hbm.bytes_read", "hbm.bytes_written")
nsl = len(stat["l2.hits"]["per_instance"])
nch = len(stat["hbm.bytes_read"]["per_instance"])
bad = 0
for u in range(nsl + nch):
    names, inst = (l2, u) if u < nsl else (hbm, u - nsl)
    for n in l2 + hbm:
        k = (ncores + u, n)
        if n not in names:
            if k in A: print("unit %d carries %s" % (u, n)); bad += 1
            continue
        last = A[k][max(A[k])]
        if last != stat[n]["per_instance"][inst]:
            print("unit %d %s: last %d != stat %d" % (u, n, last, stat[n]["per_instance"][inst])); bad += 1
for n in l2 + hbm:
    tot = S[(ncores, n)]
    units = [A[(ncores + u, n)] for u in range(nsl + nch) if (ncores + u, n) in A]
    for t, v in tot.items():
        if sum(x[t] for x in units) != v:
            print("%s at %d: units sum to %d, summed unit %d" % (n, t, sum(x[t] for x in units), v)); bad += 1
# chrome: a process for the slices and one for the channels, a counter
# track per unit and event, whose last value is the unit's total
cev = json.load(open(sys.argv[4]))["traceEvents"]
pname = {e["pid"]: e["args"]["name"] for e in cev if e.get("ph") == "M" and e.get("name") == "process_name"}
if "memory (L2 + HBM)" in pname.values(): print("chrome: the summed unit is there too"); bad += 1
clast = {}
for e in cev:
    if e.get("ph") == "C" and pname.get(e["pid"]) in ("L2 slices", "HBM channels"):
        clast[(pname[e["pid"]], e["name"])] = e["args"]["value"]
for u in range(nsl + nch):
    names, inst = (l2, u) if u < nsl else (hbm, u - nsl)
    for n in names:
        key = ("L2 slices", "slice %02d %s" % (inst, n)) if u < nsl else ("HBM channels", "channel %02d %s" % (inst, n))
        if clast.get(key) != stat[n]["per_instance"][inst]:
            print("chrome: track", key, clast.get(key), "!=", stat[n]["per_instance"][inst]); bad += 1
if len(clast) != nsl * 3 + nch * 2:
    print("chrome: %d memory tracks, want %d" % (len(clast), nsl * 3 + nch * 2)); bad += 1
sys.exit(1 if bad else 0)
PY
"$NPUSIM" trace info "$tmp/g24.A.npt" | grep -q "^units: .* 64 named units 24..87 ('L2 slice 0' .. 'HBM channel 31')" ||
    fail "trace info does not list the -A units"
"$NPUSIM" trace info "$tmp/g24.npt" | grep -q "^units: .* unit 24 named 'memory (L2 + HBM)'" ||
    fail "trace info does not name the memory unit"
echo "ok: record -A (per slice and channel, against stat -A and the summed unit)"

# the disassembly of every pc is in the trace (csv disasm column never empty for insns)
"$NPUSIM" trace export --format csv "$tmp/g2.npt" -o "$tmp/g2.csv" || fail "csv"
python3 - "$tmp/g2.csv" <<'PY' || fail "an instruction without disassembly"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "insn"]
assert rows and all(r["disasm"] and r["name"] for r in rows)
PY
echo "ok: disassembly of every pc"

# full level: one HBM event per command the controllers issued, equal to the
# HBM command counters of npusim stat
"$NPUSIM" record -q --level full -o "$tmp/g2.full.npt" "$tmp/g2/launch.json" || fail "record --level full"
"$NPUSIM" stat --json -e "hbm.act,hbm.pre,hbm.rd,hbm.wr,hbm.ref" "$tmp/g2/launch.json" > "$tmp/hbm.json" || fail "stat hbm"
"$NPUSIM" trace export --format csv "$tmp/g2.full.npt" -o "$tmp/full.csv" || fail "csv full"
python3 - "$tmp/full.csv" "$tmp/hbm.json" <<'PY' || fail "full level: HBM events differ from the HBM counters"
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "hbm"]
ev = json.load(open(sys.argv[2]))["events"]
want = sum(ev[k]["value"] for k in ("hbm.act", "hbm.pre", "hbm.rd", "hbm.wr", "hbm.ref"))
assert rows and len(rows) == want, (len(rows), want)
PY
echo "ok: full level has every HBM command"

# --- command-line errors: exit 2, nothing written --------------------------
"$NPUSIM" record "$tmp/g2/launch.json" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no -o: exit 2"
"$NPUSIM" record -o "$tmp/x.npt" --level bogus "$tmp/g2/launch.json" 2> "$tmp/err.log"
[ $? -eq 2 ] && grep -q "level" "$tmp/err.log" || fail "bad --level"
"$NPUSIM" record -o "$tmp/x.npt" -I x "$tmp/g2/launch.json" > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad -I"
"$NPUSIM" record -o "$tmp/x.npt" --mode func "$tmp/g2/launch.json" > /dev/null 2>&1; [ $? -eq 2 ] || fail "func mode"
"$NPUSIM" record -o "$tmp/nodir/x.npt" "$tmp/g2/launch.json" > /dev/null 2>&1; [ $? -eq 2 ] || fail "unwritable -o"
"$NPUSIM" record -o "$tmp/x.npt" "$tmp/missing.elf" > /dev/null 2>&1; [ $? -eq 2 ] || fail "missing kernel"
"$NPUSIM" record -o "$tmp/x.npt" -A -I 0 "$tmp/g2/launch.json" 2> "$tmp/err.log"
[ $? -eq 2 ] && grep -q -- "-I 0" "$tmp/err.log" || fail "-A with -I 0"
"$NPUSIM" record -o "$tmp/x.npt" -A --set timing.memory_model=fixed "$tmp/g2/launch.json" 2> "$tmp/err.log"
[ $? -eq 2 ] && grep -q "fixed" "$tmp/err.log" || fail "-A with the fixed GM port"
[ ! -e "$tmp/x.npt" ] || fail "a failed record left a trace"
echo "ok: command-line errors"
exit 0
