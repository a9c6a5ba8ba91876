#!/bin/sh
# npuview --report end to end on recorded kernels (GEMM on 24 cores of the
# default machine, causal attention on 2 small cores: every pipe), for
# every grouping:
# - the busy total is the sum of the engine's pipe.*.busy_cycles (npusim
#   stat) and of the rows; the count is the instructions run (stat's insns:
#   the trace's INSN events less the dispatch slots on S); the stall total is the trace's stall cycles, and each pc's
#   stalls are those of the instruction that waited (recomputed from the
#   trace); pcs rows name their pipe as the trace does;
# - text, CSV and JSON list the same rows in the same order; --top cuts,
#   --range narrows; --core N gives core N's busy cycles and stalls; --sort
#   addr lists pcs in program order under their labels;
# - the Chrome export's stall slices and the folded --stalls stacks name the
#   same waiting instructions;
# - --diff matches two runs' rows; no display is needed; two reports are
#   identical; bad options exit 2 with a message.
NAME=t_npuview_report
. "${NPU_ROOT:?}/tests/e2e/lib_e2e.sh"
V="${NPU_BUILD:?}/bin/npuview"
[ -x "$V" ] || fail "no $V"
small="$NPU_ROOT/configs/small.json"

"$NPUSIM" ref gemm --dtype f16 --out f32 --m 256 --n 320 --k 200 --cores 24 --seed 1 -o "$tmp/g24" \
    > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref gemm"; }
"$NPUSIM" ref attention --bh 3 --sq 100 --causal 1 --cores 2 --config "$small" --seed 4 -o "$tmp/att" \
    > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref attention"; }
for k in g24 att; do
    "$NPUSIM" record -q -o "$tmp/$k.npt" "$tmp/$k/launch.json" || fail "record $k"
    "$NPUSIM" stat --json -A -e 'pipe.*.busy_cycles' "$tmp/$k/launch.json" > "$tmp/$k.stat.json" 2>/dev/null ||
        fail "stat $k"
    "$NPUSIM" trace export --format csv "$tmp/$k.npt" -o "$tmp/$k.csv" || fail "csv $k"
    "$NPUSIM" stat --json -e insns "$tmp/$k/launch.json" > "$tmp/$k.insns.json" 2>/dev/null || fail "stat insns $k"
    for g in functions labels pcs opcodes; do
        # no display: a report opens no window and needs no video driver
        env -u DISPLAY -u WAYLAND_DISPLAY SDL_VIDEODRIVER=none "$V" --report --format json --group $g \
            "$tmp/$k.npt" > "$tmp/$k.$g.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "$k: --report json $g"; }
        "$V" --report --group $g "$tmp/$k.npt" > "$tmp/$k.$g.txt" || fail "$k: --report $g"
        "$V" --report --format csv --group $g "$tmp/$k.npt" > "$tmp/$k.$g.csv" || fail "$k: --report csv $g"
        "$V" --report --format csv --group $g "$tmp/$k.npt" | cmp -s - "$tmp/$k.$g.csv" ||
            fail "$k: two reports differ"
    done
    "$V" --report --format json --group pcs --top 5 --sort stall "$tmp/$k.npt" > "$tmp/$k.top.json" ||
        fail "$k: --top"
    "$V" --report --format json --group labels --range 1000:3000 "$tmp/$k.npt" > "$tmp/$k.range.json" ||
        fail "$k: --range"
    ncores=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cores"])' "$tmp/$k.stat.json")
    c=0
    while [ $c -lt "$ncores" ]; do
        "$V" --report --format json --group opcodes --core $c "$tmp/$k.npt" > "$tmp/$k.core$c.json" ||
            fail "$k: --core $c"
        c=$((c + 1))
    done
    "$V" --report --group pcs --sort addr "$tmp/$k.npt" > "$tmp/$k.annotate.txt" || fail "$k: --sort addr"
    # the exports name the same waiting instruction: chrome's stall args,
    # folded --stalls' label frames
    "$NPUSIM" trace export --format chrome "$tmp/$k.npt" -o "$tmp/$k.chrome.json" || fail "$k: chrome"
    "$NPUSIM" trace export --format folded --stalls "$tmp/$k.npt" -o "$tmp/$k.stalls.folded" || fail "$k: folded"
    python3 - "$tmp" "$k" <<'PY' || fail "$k: the report does not match the engine and the trace"
import csv, json, sys
d, k = sys.argv[1], sys.argv[2]
stat = json.load(open(f"{d}/{k}.stat.json"))["events"]
busy = sum(v["value"] for n, v in stat.items() if n.endswith(".busy_cycles"))
rows = list(csv.DictReader(open(f"{d}/{k}.csv")))
# instructions: the trace's INSN events less the dispatch slots on S (flag 1), = stat's insns
boxes = sum(1 for r in rows if r["kind"] == "insn" and not int(r["flags"]) & 1)
insns = json.load(open(f"{d}/{k}.insns.json"))["events"]["insns"]["value"]
if boxes != insns:
    bad.append(("trace instructions", boxes, "stat insns", insns))
stalls = sum(int(r["end"]) - int(r["start"]) for r in rows if r["kind"] == "stall")
pipe_of = {}
for r in rows:
    if r["kind"] == "insn" and not int(r["flags"]) & 1:     # not a dispatch slot on S
        pipe_of.setdefault(int(r["pc"], 16), set()).add(r["pipe"])
bad = []
for g in ("functions", "labels", "pcs", "opcodes"):
    j = json.load(open(f"{d}/{k}.{g}.json"))
    if j["group"] != g or j["rows_total"] != len(j["rows"]):
        bad.append((g, "header"))
    if j["total_busy"] != busy or sum(r["busy"] for r in j["rows"]) != busy:
        bad.append((g, "busy", j["total_busy"], busy))
    if j["total_count"] != boxes or sum(r["count"] for r in j["rows"]) != boxes:
        bad.append((g, "count", j["total_count"], boxes))
    if j["total_stall"] != stalls or sum(r["stall"] for r in j["rows"]) != stalls:
        bad.append((g, "stall", j["total_stall"], stalls))
    for r in j["rows"]:
        if sum(r["stall_by_cause"].values()) != r["stall"]:
            bad.append((g, "stall_by_cause", r["name"], r["stall_by_cause"], r["stall"]))
            break
    b = [r["busy"] for r in j["rows"]]
    if b != sorted(b, reverse=True):
        bad.append((g, "not sorted by busy"))
    if g == "pcs":
        for r in j["rows"]:
            if r["count"] and r["pipe"] not in pipe_of.get(r["key"], {r["pipe"]}):
                bad.append((g, "pipe", hex(r["key"]), r["pipe"], pipe_of[r["key"]]))
    # the text and CSV reports: the same rows, in the same order
    txt = [l for l in open(f"{d}/{k}.{g}.txt") if not l.startswith("#")]
    cs = list(csv.DictReader(open(f"{d}/{k}.{g}.csv")))
    if len(txt) != len(j["rows"]) or len(cs) != len(j["rows"]):
        bad.append((g, "row counts", len(txt), len(cs), len(j["rows"])))
    for t, c, r in zip(txt, cs, j["rows"]):
        f = t.split()
        if int(f[2]) != r["busy"] or int(f[3]) != r["stall"] or int(f[4]) != r["count"] or \
           int(c["busy"]) != r["busy"] or c["name"] != r["name"] or not t.rstrip("\n").endswith(r["name"]):
            bad.append((g, "row", t, c, r))
            break
# stalls by pc, recomputed from the trace: a stall belongs to the box of
# its (core, pipe) that holds its start, else the next box to start after
# the ones that ended, else the lane's last one (docs/viewer.md); on a lane
# with no instruction, the core's last one, which the loader knows and this
# does not
boxes_of, stalls_of = {}, {}
for r in rows:
    key = (r["core"], r["pipe"])
    if r["kind"] == "insn":
        boxes_of.setdefault(key, []).append((int(r["start"]), int(r["end"]), int(r["pc"], 16)))
    elif r["kind"] == "stall":
        stalls_of.setdefault(key, []).append((int(r["start"]), int(r["end"])))
want, unowned = {}, 0
for key, ss in stalls_of.items():
    bx = sorted(boxes_of.get(key, []))
    j = 0
    for s0, s1 in sorted(ss):
        while j < len(bx) and bx[j][1] <= s0:
            j += 1
        if not bx:
            unowned += s1 - s0      # no instruction on the lane: the core's last one (the loader's)
        else:
            o = bx[j] if j < len(bx) else bx[-1]    # nothing after it: the lane's last
            want[o[2]] = want.get(o[2], 0) + s1 - s0
got = {r["key"]: r["stall"] for r in json.load(open(f"{d}/{k}.pcs.json"))["rows"]}
short = [(hex(pc), got.get(pc, 0), w) for pc, w in want.items() if got.get(pc, 0) < w]
if short or sum(got.values()) - sum(want.values()) != unowned:
    bad.append(("stall owners", short[:5], sum(got.values()), sum(want.values()), unowned))
top = json.load(open(f"{d}/{k}.top.json"))
s = [r["stall"] for r in top["rows"]]
if len(s) != min(5, top["rows_total"]) or s != sorted(s, reverse=True) or top["sort"] != "stall":
    bad.append(("top", s))
full = json.load(open(f"{d}/{k}.pcs.json"))
if sorted(r["stall"] for r in full["rows"])[::-1][:len(s)] != s:
    bad.append(("top: not the largest stalls", s))
rg = json.load(open(f"{d}/{k}.range.json"))
if (rg["from"], rg["to"]) != (1000, 3000) or not 0 < rg["total_busy"] < busy:
    bad.append(("range", rg["from"], rg["to"], rg["total_busy"]))
# --core: each core's busy is that core's pipe.*.busy_cycles (stat -A)
ncores = json.load(open(f"{d}/{k}.stat.json"))["cores"]
for c in range(ncores):
    j = json.load(open(f"{d}/{k}.core{c}.json"))
    want = sum(v["per_instance"][c] for n, v in stat.items() if n.endswith(".busy_cycles"))
    cs = sum(int(r["end"]) - int(r["start"]) for r in rows if r["kind"] == "stall" and int(r["core"]) == c)
    if j.get("core") != c or j["total_busy"] != want or j["total_stall"] != cs:
        bad.append(("core", c, j["total_busy"], want, j["total_stall"], cs))
# --sort addr on pcs: program order, every executed pc once, a heading
# ("# label:") before the first pc of each label that ran
ann = [l for l in open(f"{d}/{k}.annotate.txt")]
pcs_in_order = [int(next(w for w in l.split() if w.startswith("0x")), 16) for l in ann if not l.startswith("#")]
if pcs_in_order != sorted(pcs_in_order) or len(pcs_in_order) != json.load(open(f"{d}/{k}.pcs.json"))["rows_total"]:
    bad.append(("annotate: not in program order", pcs_in_order[:5]))
heads = [l[2:].rstrip(":\n") for l in ann if l.startswith("# ") and l.rstrip().endswith(":")]
funcs = {r["name"] for r in json.load(open(f"{d}/{k}.functions.json"))["rows"]}
if not heads or heads[0] not in funcs:
    bad.append(("annotate: headings", heads[:3]))
# chrome: every stall slice's "pc" and "waiting", summed per pc, are the
# report's stalls by pc; folded --stalls per label, the report's by label
cj = json.load(open(f"{d}/{k}.chrome.json"))
cpu = cj["otherData"]["clock_ghz"] * 1000
bypc = {}
for ev in cj["traceEvents"]:
    if ev.get("cat") == "stall":
        a = ev["args"]
        if "pc" not in a or "waiting" not in a:
            bad.append(("chrome stall without its instruction", ev))
            break
        bypc[int(a["pc"], 16)] = bypc.get(int(a["pc"], 16), 0) + round(ev["dur"] * cpu)
rep = {r["key"]: r["stall"] for r in json.load(open(f"{d}/{k}.pcs.json"))["rows"] if r["stall"]}
if bypc != rep:
    bad.append(("chrome stalls by pc", sorted(set(bypc.items()) ^ set(rep.items()))[:4]))
bylab = {}
for l in open(f"{d}/{k}.stalls.folded"):
    path, w = l.rsplit(" ", 1)
    fr = path.split(";")
    # core N;function[;label];pipe;cause (no label: before the function's first)
    lab = fr[-3] if len(fr) > 4 else fr[1] + " (before its first label)"
    bylab[lab] = bylab.get(lab, 0) + int(w)
rep = {r["name"]: r["stall"] for r in json.load(open(f"{d}/{k}.labels.json"))["rows"] if r["stall"]}
if bylab != rep:
    bad.append(("folded stalls by label", sorted(set(bylab.items()) ^ set(rep.items()))[:4]))
for b in bad:
    print("report:", b)
sys.exit(1 if bad else 0)
PY
    echo "ok: npuview --report $k (busy = stat, count and stalls = the trace, four groupings, text = csv = json)"
done

# --diff: the GEMM at another tiling against the first; each side of every
# row is that run's own report row, the totals each run's
"$NPUSIM" ref gemm --dtype f16 --out f32 --m 256 --n 320 --k 200 --bm 64 --bn 64 --bk 64 --cores 24 --seed 1 \
    -o "$tmp/g24b" > "$tmp/ref.log" 2>&1 || { cat "$tmp/ref.log"; fail "npusim ref gemm (64 x 64 x 64)"; }
"$NPUSIM" record -q -o "$tmp/g24b.npt" "$tmp/g24b/launch.json" || fail "record g24b"
for g in labels pcs; do
    "$V" --report --format json --group $g "$tmp/g24b.npt" > "$tmp/b.$g.json" || fail "report g24b $g"
    "$V" --report --format json --group $g --diff "$tmp/g24.npt" "$tmp/g24b.npt" > "$tmp/diff.$g.json" ||
        fail "--diff $g"
done
"$V" --report --group labels --diff "$tmp/g24.npt" "$tmp/g24b.npt" > "$tmp/diff.txt" || fail "--diff text"
grep -q "^# cycles [0-9]* -> [0-9]* ([-+][0-9.]* %); busy" "$tmp/diff.txt" || fail "--diff text header: $(head -3 "$tmp/diff.txt")"
python3 - "$tmp" <<'PY' || fail "--diff does not match the two runs' reports"
import json, sys
d = sys.argv[1]
bad = []
for g, key in (("labels", "name"), ("pcs", "key")):
    base = {r[key]: r for r in json.load(open(f"{d}/g24.{g}.json"))["rows"]}
    new = {r[key]: r for r in json.load(open(f"{d}/b.{g}.json"))["rows"]}
    j = json.load(open(f"{d}/diff.{g}.json"))
    got = {}
    for r in j["rows"]:
        k = r["name"] if key == "name" else r["pc"]
        got[k] = r
        for side, want in (("base", base.get(k)), ("new", new.get(k))):
            have = r[side]
            if (have is None) != (want is None) or (have and any(have[f] != want[f] for f in ("count", "busy", "stall"))):
                bad.append((g, k, side, have, want))
    if set(got) != set(base) | set(new) or j["rows_total"] != len(got):
        bad.append((g, "rows", len(got), len(set(base) | set(new))))
    b0 = json.load(open(f"{d}/g24.{g}.json"))
    b1 = json.load(open(f"{d}/b.{g}.json"))
    if (j["base_busy"], j["new_busy"], j["base_stall"], j["new_stall"]) != \
       (b0["total_busy"], b1["total_busy"], b0["total_stall"], b1["total_stall"]):
        bad.append((g, "totals"))
for b in bad[:8]:
    print("diff:", b)
sys.exit(1 if bad else 0)
PY
echo "ok: npuview --report --diff (rows and totals = the two runs' reports)"

# bad options and inputs: exit 2, a message, nothing on stdout
t="$tmp/g24.npt"
check_bad() {  # WHAT MESSAGE ARGS...
    what=$1 msg=$2
    shift 2
    "$V" "$@" > "$tmp/out" 2> "$tmp/err"
    st=$?
    [ $st -eq 2 ] || fail "$what: exit $st, not 2"
    grep -q -- "$msg" "$tmp/err" || { cat "$tmp/err"; fail "$what: message"; }
    [ -s "$tmp/out" ] && fail "$what: wrote to stdout"
    return 0
}
check_bad "--format xml" "expected text, csv or json" --report --format xml "$t"
check_bad "--sort size" "expected name, count, busy, stall or addr" --report --sort size "$t"
check_bad "--top 0" "expected a number of rows" --report --top 0 "$t"
check_bad "--top x" "expected a number of rows" --report --top x "$t"
check_bad "--top without --report" "is an option of --report" --top 3 "$t"
check_bad "--core 24" "the trace has 24 cores (0..23)" --report --core 24 "$t"
check_bad "--core -1" "expected a core number" --report --core -1 "$t"
check_bad "--report --screenshot" "not with --screenshot" --report --screenshot "$tmp/x.png" "$t"
check_bad "--report --bench" "not with --bench" --report --bench "$t"
check_bad "not a trace" "not an npusim trace" --report "$tmp/g24.stat.json"
check_bad "missing trace" "nope.npt" --report "$tmp/nope.npt"
check_bad "--diff missing" "nope.npt" --report --diff "$tmp/nope.npt" "$t"
check_bad "--diff without --report" "is an option of --report" --diff "$t" "$t"
if [ -w /dev/full ]; then
    "$V" --report "$t" > /dev/full 2> "$tmp/err"
    [ $? -eq 2 ] && grep -q "writing the report" "$tmp/err" || fail "a full disk: not reported"
fi
"$V" --help | grep -q -- "--report" || fail "--help has no --report"
echo "ok: npuview --report errors"
