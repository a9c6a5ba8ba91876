#!/bin/sh
# npusim check finds what it must: every tests/check/NAME.s (a deliberately
# broken small kernel, its launch in a "# check-args:" line) is assembled and
# checked with --tool all; the finding header lines (stable: no cycles) must
# equal NAME.expect exactly, and the exit status must be 1 (0 for the clean
# controls, whose .expect is empty). The JSON and JUnit reports of each run
# must parse and hold as many findings.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_check_corpus.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dir="$NPU_ROOT/tests/check"
n=0
for s in "$dir"/*.s; do
    name=$(basename "$s" .s)
    args=$(sed -n 's/^# check-args: //p' "$s")
    [ -f "$dir/$name.expect" ] || fail "$name: no $name.expect"
    "$NPUSIM" asm "$s" -I "$NPU_ROOT/kernels/include" -o "$tmp/$name.elf" > "$tmp/asm.log" 2>&1 ||
        { cat "$tmp/asm.log"; fail "$name: does not assemble"; }
    # shellcheck disable=SC2086
    "$NPUSIM" check --tool all --json "$tmp/$name.json" --junit "$tmp/$name.xml" \
        "$tmp/$name.elf" $args > "$tmp/$name.out" 2>&1
    rc=$?
    grep -E '^========= [a-z]+: ' "$tmp/$name.out" | sed 's/^========= //' > "$tmp/$name.got"
    if ! cmp -s "$tmp/$name.got" "$dir/$name.expect"; then
        cat "$tmp/$name.out"
        diff "$dir/$name.expect" "$tmp/$name.got"
        fail "$name: findings differ from $name.expect"
    fi
    want=1; [ -s "$dir/$name.expect" ] || want=0
    [ $rc -eq $want ] || { cat "$tmp/$name.out"; fail "$name: exit $rc, want $want"; }
    nf=$(wc -l < "$dir/$name.expect" | tr -d ' ')
    grep -q "\"findings_count\":[[:space:]]*$nf[,}]" "$tmp/$name.json" || grep -q "\"findings_count\":[[:space:]]*$nf$" "$tmp/$name.json" ||
        { cat "$tmp/$name.json"; fail "$name: JSON findings_count is not $nf"; }
    grep -q '<testsuites>' "$tmp/$name.xml" || fail "$name: no JUnit XML"
    if [ "$nf" -gt 0 ]; then
        grep -q '<failure ' "$tmp/$name.xml" || fail "$name: JUnit XML has no failure"
    else
        grep -q '<failure ' "$tmp/$name.xml" && fail "$name: JUnit XML fails a clean kernel"
    fi
    if command -v python3 > /dev/null 2>&1; then
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['findings'])==$nf" "$tmp/$name.json" ||
            fail "$name: JSON does not parse or has the wrong number of findings"
        python3 -c "import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])" "$tmp/$name.xml" ||
            fail "$name: JUnit XML does not parse"
    fi
    n=$((n + 1))
    echo "ok: $name ($nf finding(s))"
done
[ $n -ge 28 ] || fail "only $n corpus kernels"
# each class of the corpus has at least three kernels
for cls in missing_flag wrong_id wrong_pipe oob stride uninit double_set left_set xcore; do
    c=$(ls "$dir" | grep -c "^$cls.*\.s$")
    [ "$c" -ge 3 ] || fail "class $cls has $c kernels (want >= 3)"
done
# --tool selects: racecheck alone reports only the race of missing_flag_load
"$NPUSIM" check --tool racecheck "$tmp/missing_flag_load.elf" --cores 1 --out Y=f16[128] > "$tmp/o" 2>&1
[ $? -eq 1 ] || fail "racecheck alone: exit status"
grep -q '^========= racecheck: read-after-write' "$tmp/o" || { cat "$tmp/o"; fail "racecheck alone: no race"; }
"$NPUSIM" check --tool initcheck,synccheck "$tmp/missing_flag_load.elf" --cores 1 --out Y=f16[128] > "$tmp/o" 2>&1
[ $? -eq 0 ] || { cat "$tmp/o"; fail "initcheck,synccheck on a race-only kernel is not clean"; }
# fix suggestion names the flag
grep -q "fix: add set_flag(MTE2, V, 0) after pc 0x28" "$tmp/missing_flag_load.out" ||
    { cat "$tmp/missing_flag_load.out"; fail "no fix suggestion"; }
grep -q "fix: the kernel sets (MTE2, V, 0) but waits for (MTE2, V, 1): use one id" "$tmp/wrong_id_load.out" ||
    { cat "$tmp/wrong_id_load.out"; fail "no wrong-id fix suggestion"; }
# bad input: exit 2
"$NPUSIM" check --tool nosuch "$tmp/missing_flag_load.elf" > "$tmp/o" 2>&1; [ $? -eq 2 ] || fail "--tool nosuch: not exit 2"
grep -q "unknown tool 'nosuch'" "$tmp/o" || { cat "$tmp/o"; fail "--tool nosuch: message"; }
"$NPUSIM" check "$tmp/none.elf" > "$tmp/o" 2>&1; [ $? -eq 2 ] || fail "missing ELF: not exit 2"
"$NPUSIM" check > "$tmp/o" 2>&1; [ $? -eq 2 ] || fail "no kernel: not exit 2"
"$NPUSIM" check --json > "$tmp/o" 2>&1; [ $? -eq 2 ] || fail "--json without a file: not exit 2"
"$NPUSIM" check --help | grep -q "exit status: 0 clean, 1 findings" || fail "--help"
echo "check corpus: all $n passed"
