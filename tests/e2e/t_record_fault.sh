#!/bin/sh
# npusim record on runs that do not end well: a fault, a deadlock and the
# cycle watchdog each exit 1 and still leave a valid trace of what ran
# (it opens without damage, its events are those before the stop, and the
# calls of the kernel are in it); a recording killed mid-run leaves nothing
# under the requested name.
set -u
: "${NPUSIM:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_record_fault.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 100 calls of a function, then a GM read outside any allocation
cat > "$tmp/fault.s" <<'ASM'
    .text
    .globl main
main:
    li t0, 100
loop:
    call work
    addi t0, t0, -1
    bnez t0, loop
    li t1, 0x7fffffff0
    lwg t2, 0(t1)
    halt
    .globl work
    .type work, @function
work:
    addi t3, t3, 1
    ret
ASM
# a wait on a flag nobody sets
cat > "$tmp/dead.s" <<'ASM'
    .text
    .globl main
main:
    li t0, 5
    wait_flag V, S, 3
    halt
ASM
# an endless loop
cat > "$tmp/spin.s" <<'ASM'
    .text
    .globl main
main:
    addi t0, t0, 1
    j main
ASM
for k in fault dead spin; do
    "$NPUSIM" asm "$tmp/$k.s" -o "$tmp/$k.elf" || fail "assemble $k"
done

# check_stopped NAME WHAT-IN-STDERR args...
check_stopped() {
    name=$1 what=$2; shift 2
    "$NPUSIM" record -o "$tmp/$name.npt" "$@" > "$tmp/out.log" 2> "$tmp/err.log"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/out.log" "$tmp/err.log"; fail "$name: exit $rc, want 1"; }
    grep -q "$what" "$tmp/err.log" || { cat "$tmp/err.log"; fail "$name: no '$what' report"; }
    grep -q "stopped after" "$tmp/out.log" || { cat "$tmp/out.log"; fail "$name: no summary"; }
    "$NPUSIM" trace info "$tmp/$name.npt" > "$tmp/info.log" 2>&1 || { cat "$tmp/info.log"; fail "$name: trace does not open"; }
    grep -q "damage:       none" "$tmp/info.log" || { cat "$tmp/info.log"; fail "$name: damaged trace"; }
    grep -q "^  insn " "$tmp/info.log" || { cat "$tmp/info.log"; fail "$name: no instructions recorded"; }
    ls "$tmp" | grep -q "$name.npt.tmp" && fail "$name: temp file left"
    echo "ok: $name stops with exit 1 and a valid trace"
}
check_stopped fault "outside any allocation" "$tmp/fault.elf" --cores 2
grep -q "^  call        200" "$tmp/info.log" || { cat "$tmp/info.log"; fail "fault: not 200 calls (2 cores x 100)"; }
"$NPUSIM" trace export --format folded "$tmp/fault.npt" -o "$tmp/fault.folded" || fail "folded export"
grep -q "^core 0;main;work;S;addi " "$tmp/fault.folded" || { cat "$tmp/fault.folded"; fail "no stack main;work"; }
check_stopped dead "deadlock" "$tmp/dead.elf" --cores 1
check_stopped spin "watchdog\|max_cycles\|cycle limit" "$tmp/spin.elf" --cores 1 --max-cycles 5000

# killed mid-run: nothing under the name (the writer renames only at close)
"$NPUSIM" record -o "$tmp/killed.npt" "$tmp/spin.elf" --cores 1 --max-cycles 1000000000000 \
    > /dev/null 2>&1 &
pid=$!
sleep 1
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
[ ! -e "$tmp/killed.npt" ] || fail "a killed recording left a file under the name"
for f in "$tmp"/killed.npt.tmp.*; do
    [ -e "$f" ] || continue
    # what the killed writer left is read as a truncated trace, never a crash
    "$NPUSIM" trace info "$f" > "$tmp/info.log" 2>&1
    [ $? -le 2 ] || fail "trace info crashed on the killed recording's temp file"
done
echo "ok: a killed recording leaves nothing under its name"
exit 0
