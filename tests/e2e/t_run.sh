#!/bin/sh
# npusim run end to end: an SPMD scalar kernel over an int32 tensor, run from
# flags and from a launch file; outputs written as .npy and checked against
# golden tensors (pass -> 0, mismatch -> 1 with the first multi-dimensional
# index, fault or bad input -> 2 with the report on stderr).
set -u
: "${NPUSIM:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# mknpy FILE DESCR SHAPE V... : a little-endian .npy of 4-byte values
# (integers, or float bit patterns as 0x...), written with printf alone.
mknpy() {
    f=$1 descr=$2 shape=$3; shift 3
    hdr="{'descr': '$descr', 'fortran_order': False, 'shape': $shape, }"
    # pad so that 10 + len(header) + 1 is a multiple of 64
    n=$(( ${#hdr} + 11 ))
    pad=$(( (64 - n % 64) % 64 ))
    hl=$(( ${#hdr} + pad + 1 ))
    {
        printf '\223NUMPY\001\000'
        printf "\\$(printf %03o $((hl & 255)))\\$(printf %03o $((hl >> 8)))"
        printf '%s' "$hdr"
        printf "%${pad}s" ""
        printf '\n'
        for v in "$@"; do
            v=$(( v & 0xffffffff ))
            printf "\\$(printf %03o $((v & 255)))\\$(printf %03o $(((v >> 8) & 255)))\\$(printf %03o $(((v >> 16) & 255)))\\$(printf %03o $(((v >> 24) & 255)))"
        done
    } > "$f"
}

# C[i] = A[i] * M, elements dealt round-robin to the cores (lwg/swg: scalar GM access)
cat > "$tmp/scale.s" <<'ASM'
    .text
    .globl main
# a0 = A (int32[N]), a1 = M, a2 = C (int32[N]), a3 = N
main:
    mfsr t0, coreid
    mfsr t1, corenum
loop:
    bge t0, a3, done
    slli t2, t0, 2
    add t3, a0, t2
    lwg t4, 0(t3)
    mul t4, t4, a1
    add t5, a2, t2
    swg t4, 0(t5)
    add t0, t0, t1
    j loop
done:
    halt
ASM
"$NPUSIM" asm "$tmp/scale.s" -o "$tmp/scale.elf" || fail "assemble"
mknpy "$tmp/a.npy" '<i4' '(8,)' 1 2 3 4 5 6 7 -8
mknpy "$tmp/ref.npy" '<i4' '(8,)' 3 6 9 12 15 18 21 -24
mknpy "$tmp/bad.npy" '<i4' '(8,)' 3 6 9 12 15 99 21 -24
mknpy "$tmp/a2.npy" '<i4' '(2,4)' 1 2 3 4 5 6 7 -8
mknpy "$tmp/bad2.npy" '<i4' '(2,4)' 3 6 9 12 15 99 21 -24

# pass: exit 0, per-output line, output file written
"$NPUSIM" run "$tmp/scale.elf" --mode func --cores 3 --arg A="$tmp/a.npy" --arg M=3 \
    --out C="$tmp/c.npy":int32[8] --arg N=8 --expect C="$tmp/ref.npy" > "$tmp/out.txt" 2>&1 \
    || { cat "$tmp/out.txt"; fail "passing run did not exit 0"; }
grep -q "func mode on 3 cores" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "no run summary"; }
grep -q "^C: pass: 0 of 8 elements mismatch, max abs err 0, max rel err 0" "$tmp/out.txt" \
    || { cat "$tmp/out.txt"; fail "no pass line"; }
cmp -s "$tmp/c.npy" "$tmp/ref.npy" || fail "written output differs from the reference bytes"

# mismatch: exit 1, count, errors and the first index
"$NPUSIM" run "$tmp/scale.elf" --mode func --cores 2 --arg A="$tmp/a.npy" --arg M=3 \
    --out C=int32[8] --arg N=8 --expect C="$tmp/bad.npy" > "$tmp/out.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/out.txt"; fail "mismatch exit status $rc, want 1"; }
grep -q "^C: FAIL: 1 of 8 elements mismatch, max abs err 81, max rel err 0.818, first at \[5\]: got 18, want 99" \
    "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "mismatch line"; }

# 2-D: the first mismatching index is multi-dimensional
"$NPUSIM" run "$tmp/scale.elf" --mode func --cores 4 --arg A="$tmp/a2.npy" --arg M=3 \
    --out C=int32[2,4] --arg N=8 --expect C="$tmp/bad2.npy" > "$tmp/out.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/out.txt"; fail "2-D mismatch exit status"; }
grep -q "first at \[1, 1\]" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "2-D first index"; }

# a fault: N past the end of A -> exit 2, the report names core, pc, instruction, tensor
"$NPUSIM" run "$tmp/scale.elf" --mode func --cores 2 --arg A="$tmp/a.npy" --arg M=3 \
    --out C=int32[8] --arg N=9 > "$tmp/out.txt" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] || { cat "$tmp/err.txt"; fail "fault exit status $rc, want 2"; }
grep -q "fault on core 0 at pc 0x28 (loop+0x18), cycle 0: lwg t4, 0(t3): GM read \[0x200000020, +4) is 0 bytes past the end of tensor A \[0x200000000, +32)" \
    "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "fault report"; }

# bad input: a missing file, an unknown flag, no kernel -> exit 2 with a message
"$NPUSIM" run "$tmp/scale.elf" --mode func --arg A="$tmp/nope.npy" 2> "$tmp/err.txt"
[ $? -eq 2 ] || fail "missing input file exit status"
grep -q "nope.npy" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "missing file not named"; }
"$NPUSIM" run "$tmp/scale.elf" --bogus 2> "$tmp/err.txt"
[ $? -eq 2 ] || fail "unknown flag exit status"
grep -q "unknown option '--bogus'" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "unknown flag message"; }
"$NPUSIM" run 2> /dev/null
[ $? -eq 2 ] || fail "no kernel exit status"

# the watchdog: a kernel that never ends -> exit 2 with every core's pc
printf '    .text\n    .globl main\nmain:\n    j main\n' > "$tmp/spin.s"
"$NPUSIM" asm "$tmp/spin.s" -o "$tmp/spin.elf" || fail "assemble spin"
"$NPUSIM" run "$tmp/spin.elf" --mode func --cores 2 --max-insns 1000 2> "$tmp/err.txt"
[ $? -eq 2 ] || fail "watchdog exit status"
grep -q "watchdog: 1000 instructions retired without ending" "$tmp/err.txt" \
    || { cat "$tmp/err.txt"; fail "watchdog message"; }

# the machine config reaches the run: a smaller scalar buffer moves the stack
printf '    .text\n    .globl main\nmain:\n    sd zero, -8(sp)\n    ld zero, 8184(zero)\n    halt\n' > "$tmp/sb.s"
"$NPUSIM" asm "$tmp/sb.s" -o "$tmp/sb.elf" || fail "assemble sb"
"$NPUSIM" run "$tmp/sb.elf" --mode func --cores 1 > /dev/null 2>&1 || fail "sb run on the default machine"
"$NPUSIM" run "$tmp/sb.elf" --mode func --cores 1 --set core.sdata.size=4K 2> "$tmp/err.txt"
[ $? -eq 2 ] || { cat "$tmp/err.txt"; fail "--set core.sdata.size did not shrink the scalar buffer"; }
grep -q "ld zero, 8184(zero): scalar buffer read \[0x1ff8, +8) outside the scalar buffer (4096 bytes)" \
    "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "scalar buffer fault with --set"; }
"$NPUSIM" run "$tmp/sb.elf" --mode func --set no.such.key=1 2> "$tmp/err.txt"
[ $? -eq 2 ] || fail "unknown config key exit status"
grep -q "no.such.key" "$tmp/err.txt" || { cat "$tmp/err.txt"; fail "unknown config key not named"; }

# the same run from a launch file (paths relative to the file)
cat > "$tmp/launch.json" <<'JSON'
{
  "version": 1,
  "kernel": "scale.elf",
  "cores": 4,
  "mode": "func",
  "args": [
    { "name": "A", "kind": "in", "file": "a.npy" },
    { "name": "M", "kind": "scalar", "value": 3 },
    { "name": "C", "kind": "out", "dtype": "int32", "shape": [8], "file": "c2.npy" },
    { "name": "N", "kind": "scalar", "value": 8 }
  ],
  "expect": { "C": "ref.npy" }
}
JSON
(cd / && "$NPUSIM" run "$tmp/launch.json") > "$tmp/out.txt" 2>&1 \
    || { cat "$tmp/out.txt"; fail "launch file run"; }
grep -q "^C: pass" "$tmp/out.txt" || { cat "$tmp/out.txt"; fail "launch file: no pass line"; }
cmp -s "$tmp/c2.npy" "$tmp/ref.npy" || fail "launch file output differs"
# flags override the file: a wrong reference now fails
(cd / && "$NPUSIM" run "$tmp/launch.json" --expect C="$tmp/bad.npy") > "$tmp/out.txt" 2>&1
[ $? -eq 1 ] || { cat "$tmp/out.txt"; fail "flag override of expect"; }

echo "t_run: ok"
