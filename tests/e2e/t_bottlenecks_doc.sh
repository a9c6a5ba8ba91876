#!/bin/sh
# docs/bottlenecks.md quotes real runs: its tiling table (cycles and L2
# bytes per tile), the default run's per-core spread and the balanced
# tiling's. Re-run them and fail when the page no longer matches the model.
NAME=t_bottlenecks
. "${NPU_ROOT:?}/tests/e2e/lib_e2e.sh"
doc="$NPU_ROOT/docs/bottlenecks.md"

# the table's rows: "| BM x BN x BK ... | tiles | cycles ... | L2 MB |"
python3 - "$doc" > "$tmp/rows" <<'PY' || fail "no tiling table in $doc"
import re, sys
n = 0
for line in open(sys.argv[1]):
    m = re.match(r"\| (\d+) x (\d+) x (\d+)[^|]*\| (\d+) \| \**([\d ]+)[^|]*\| ([\d.]+) MB \|", line)
    if m:
        bm, bn, bk, tiles, cyc, mb = m.groups()
        print(bm, bn, bk, cyc.replace(" ", ""), mb)
        n += 1
sys.exit(0 if n >= 5 else 1)
PY
while read -r bm bn bk cyc mb; do
    d="$tmp/g$bm.$bn.$bk"
    "$NPUSIM" ref gemm --m 1024 --n 1024 --k 1024 --dtype f16 --out f32 --cores 24 --seed 1 \
        --bm "$bm" --bn "$bn" --bk "$bk" -o "$d" > "$tmp/ref.log" 2>&1 ||
        { cat "$tmp/ref.log"; fail "ref gemm $bm x $bn x $bk"; }
    "$NPUSIM" stat -x, -e chip.cycles,l2.bytes "$d/launch.json" > "$tmp/stat.csv" 2>&1 ||
        { cat "$tmp/stat.csv"; fail "stat $bm x $bn x $bk"; }
    got=$(awk -F, '$4 == "chip.cycles" { print $2 }' "$tmp/stat.csv")
    gb=$(awk -F, '$4 == "l2.bytes" { printf "%.1f", $2 / 1e6 }' "$tmp/stat.csv")
    [ "$got" = "$cyc" ] || fail "$bm x $bn x $bk: $got cycles, docs/bottlenecks.md says $cyc"
    [ "$gb" = "$mb" ] || fail "$bm x $bn x $bk: $gb MB through the L2, docs/bottlenecks.md says $mb"
    echo "ok: $bm x $bn x $bk: $got cycles, $gb MB"
done < "$tmp/rows"

# the per-core spreads the text quotes: the default's shortest core, the
# balanced tiling's range
spread() {
    "$NPUSIM" stat --per-core -x, -e cycles "$1/launch.json" 2>/dev/null |
        awk -F, '$4 == "cycles" { print $2 }' | sort -n | sed -n '1p;$p' | tr '\n' ' '
}
set -- $(spread "$tmp/g128.128.128")
grep -q "core18,$1" "$doc" || fail "default tiling's shortest core: $1 cycles, not in the page"
set -- $(spread "$tmp/g176.128.64")
want=$(python3 -c 'import sys; print("(%s to %s)" % tuple(format(int(v), ",").replace(",", " ") for v in sys.argv[1:3]))' "$1" "$2")
grep -qF "$want" "$doc" || fail "176 x 128 x 64 spread $want, not in the page"
# every output the page quotes under a `$ npusim run|stat ...` line is the
# output of that command now (a quoted line is a prefix of an output line:
# the page cuts comments and tails, "..." and "   (annotation)")
ln -s g128.128.128 "$tmp/g1k"
ln -s g176.128.64 "$tmp/g176"
python3 - "$doc" "$NPUSIM" "$tmp" "${NPU_BUILD:?}/bin/npuview" <<'PY' || fail "docs/bottlenecks.md quotes output the commands no longer print"
import re, shlex, subprocess, sys
doc, npusim, cwd, npuview = sys.argv[1:5]
blocks, cur = [], None
for line in open(doc):
    line = line.rstrip("\n")
    if line.startswith("```"):
        if cur is not None:
            blocks.append(cur)
        cur = [] if cur is None else None
    elif cur is not None:
        cur.append(line)
bad = checked = 0
for b in blocks:
    i = 0
    while i < len(b):
        m = re.match(r"\$ (npusim|npuview) ((?:run |stat |record |--report ).*?)(?:\s{2,}\(.*\))?$", b[i])
        if not m:
            i += 1
            continue
        tool = npusim if m.group(1) == "npusim" else npuview
        out = subprocess.run([tool] + shlex.split(m.group(2)), cwd=cwd, capture_output=True, text=True).stdout
        outl = [o.rstrip() for o in out.splitlines()]
        i += 1
        while i < len(b) and not b[i].startswith("$ "):
            q = re.sub(r"\s{2,}\(.*\)$", "", b[i]).rstrip()
            q = q[:-3] if q.endswith("...") else q
            if q.strip() and q.strip() != "..." and not any(o.startswith(q) for o in outl):
                print("%s %s: the page says %r" % (m.group(1), m.group(2), b[i]))
                bad += 1
            checked += 1
            i += 1
print("checked %d quoted lines" % checked)
sys.exit(1 if bad or checked < 30 else 0)
PY
echo "ok: docs/bottlenecks.md matches the runs"

# step 5's HBM stacks: the windows whose reads all went to one stack, and
# the xor_map experiment's latency, cycles and L2 stalls
"$NPUSIM" stat -I 1000 -A -x, -e hbm.bytes_read "$tmp/g1k/launch.json" > "$tmp/stacks.csv" 2>/dev/null ||
    fail "stat -I 1000 -A"
python3 - "$tmp/stacks.csv" "$doc" <<'PY' || fail "step 5's stack figures differ from the run"
import collections, re, sys
w = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    f = l.strip().split(",")
    if len(f) > 4 and f[4] == "hbm.bytes_read":
        w[int(f[0])][int(f[1][len("chan"):])] = int(f[2])
one = [t for t, d in w.items() if len({c // 8 for c, v in d.items() if v}) == 1]
tot = sum(sum(d.values()) for d in w.values())
doc = re.sub(r"\s+", " ", open(sys.argv[2]).read())
want = ["in %d of the run's %d windows" % (len(one), len(w)),
        "(%.2f of the %.2f MB read)" % (sum(sum(w[t].values()) for t in one) / 1e6, tot / 1e6)]
missing = [x for x in want if x not in doc]
if missing:
    print("not in the page:", missing)
sys.exit(1 if missing else 0)
PY
"$NPUSIM" stat -x, -e chip.cycles,hbm.read_latency,l2.stall_cycles --set 'memory.hbm.xor_map=g*^r* b*^r* k0^h0 k1^h1' \
    "$tmp/g1k/launch.json" > "$tmp/xor.csv" 2>/dev/null || fail "stat with the stack xor"
"$NPUSIM" stat -x, -e hbm.read_latency,l2.stall_cycles "$tmp/g1k/launch.json" > "$tmp/base.csv" 2>/dev/null ||
    fail "stat hbm.read_latency"
for f in "$tmp/xor.csv" "$tmp/base.csv"; do
    lat=$(awk -F, '$4 == "hbm.read_latency" { printf "%.2f tCK", $5 }' "$f")
    st=$(awk -F, '$4 == "l2.stall_cycles" { printf "%.2f M", $2 / 1e6 }' "$f")
    grep -qF "${lat% tCK}" "$doc" || fail "mean read latency $lat not in the page"
    grep -qF "$st" "$doc" || fail "l2.stall_cycles $st not in the page"
done
cyc=$(awk -F, '$4 == "chip.cycles" { print $2 }' "$tmp/xor.csv" | python3 -c 'import sys; print(format(int(sys.stdin.read()), ",").replace(",", " "))')
grep -qF "takes $cyc cycles" "$doc" || fail "the stack xor's $cyc cycles not in the page"
echo "ok: step 5's stacks and the xor experiment"
