#!/bin/sh
# npusim asm / dis end to end: the sample kernel assembles, readelf reads it
# without a warning, dis shows addresses, symbols and encodings; errors name
# file:line:col with a caret and leave no output file; CLI flags are checked.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$NPU_ROOT" || exit 1

"$NPUSIM" asm kernels/examples/sample.s -I kernels/include -o "$tmp/k.elf" || fail "sample did not assemble"
[ -s "$tmp/k.elf" ] || fail "no ELF written"

# readelf reads it without a warning or an error
if command -v readelf >/dev/null 2>&1; then
    readelf -a -W "$tmp/k.elf" > "$tmp/readelf.txt" 2>&1 || fail "readelf failed"
    if grep -qiE "warning|error" "$tmp/readelf.txt"; then
        grep -iE "warning|error" "$tmp/readelf.txt"; fail "readelf complains"
    fi
    grep -q "ELF64" "$tmp/readelf.txt" || fail "not ELF64"
    grep -q "little endian" "$tmp/readelf.txt" || fail "not little endian"
    grep -q "EXEC" "$tmp/readelf.txt" || fail "not ET_EXEC"
    grep -q "0x4e50" "$tmp/readelf.txt" || fail "e_machine is not 0x4e50"
    for s in .text .rodata .data .bss .symtab .strtab; do
        grep -q " $s " "$tmp/readelf.txt" || fail "section $s missing"
    done
    grep -qE "FUNC +GLOBAL +DEFAULT +1 main" "$tmp/readelf.txt" || fail "main is not a global function"
    grep -qE "FUNC +LOCAL +DEFAULT +1 count_down" "$tmp/readelf.txt" || fail "count_down is not a local function"
    grep -qE "NOTYPE +LOCAL +DEFAULT +1 \.Ldone" "$tmp/readelf.txt" || fail "local label .Ldone missing"
    grep -qE "OBJECT +GLOBAL +DEFAULT +2 scale" "$tmp/readelf.txt" || fail "scale is not a global object"
    grep -q "LOAD" "$tmp/readelf.txt" || fail "no PT_LOAD"
    grep -q "Entry point address: *0x0" "$tmp/readelf.txt" || fail "entry point"
else
    echo "readelf not installed: skipping its checks"
fi

# dis: addresses, raw words, symbols as labels, data as hex
"$NPUSIM" dis "$tmp/k.elf" > "$tmp/dis.txt" || fail "dis failed"
grep -q "^main:" "$tmp/dis.txt" || fail "dis lacks the main label"
grep -qE "^ +0:  [0-9a-f]{16}  mfsr s0, coreid" "$tmp/dis.txt" || fail "dis lacks address/raw/text"
grep -q "jal ra, count_down" "$tmp/dis.txt" || fail "dis does not name call targets"
grep -q "^.rodata: 0x100000000" "$tmp/dis.txt" || fail "dis lacks .rodata"
grep -q "100000000:  00 00 00 3f" "$tmp/dis.txt" || fail "dis lacks the data bytes"

# -D changes the kernel; a bad -D value is an error
"$NPUSIM" asm kernels/examples/sample.s -I kernels/include -D N=64 -o "$tmp/k64.elf" || fail "-D N=64"
cmp -s "$tmp/k.elf" "$tmp/k64.elf" && fail "-D N=64 made no difference"
"$NPUSIM" asm kernels/examples/sample.s -I kernels/include -D N=17 -o "$tmp/k17.elf" 2> "$tmp/err17.txt" && fail "N=17 accepted"
grep -q "N must be a multiple of 16" "$tmp/err17.txt" || fail "the .error message is missing"
[ -e "$tmp/k17.elf" ] && fail "an ELF was written despite errors"

# deterministic output
"$NPUSIM" asm kernels/examples/sample.s -I kernels/include -o "$tmp/k2.elf" || fail "second run"
cmp -s "$tmp/k.elf" "$tmp/k2.elf" || fail "two runs differ"

# errors: all of them, file:line:col, the line and a caret; nothing written
printf '    .text\nmain:\n    addi a0, a1, 70000000000\n    frob a0\n    j nowhere\n' > "$tmp/bad.s"
"$NPUSIM" asm "$tmp/bad.s" -o "$tmp/bad.elf" 2> "$tmp/bad.txt"
rc=$?
[ $rc -eq 2 ] || fail "bad source: exit $rc, want 2"
[ -e "$tmp/bad.elf" ] && fail "an ELF was written despite errors"
grep -q "bad.s:3:18: error: immediate 70000000000 out of range -2147483648..2147483647" "$tmp/bad.txt" || fail "range error"
grep -q "bad.s:4:5: error: unknown mnemonic 'frob'" "$tmp/bad.txt" || fail "mnemonic error"
grep -q "bad.s:5:7: error: undefined symbol 'nowhere'" "$tmp/bad.txt" || fail "undefined symbol error"
grep -qx "      addi a0, a1, 70000000000" "$tmp/bad.txt" || fail "source line not shown"
grep -qx "                   ^" "$tmp/bad.txt" || fail "caret not under the column"
grep -q "3 errors" "$tmp/bad.txt" || fail "error count"

# CLI: help, version, bad flags exit 2 naming the flag
"$NPUSIM" --help > "$tmp/help.txt" || fail "--help"
grep -q "^  asm " "$tmp/help.txt" && grep -q "^  dis " "$tmp/help.txt" || fail "--help lacks commands"
"$NPUSIM" help asm | grep -q "usage: npusim asm" || fail "help asm"
"$NPUSIM" asm --help | grep -q "usage: npusim asm" || fail "asm --help"
"$NPUSIM" dis --help | grep -q "usage: npusim dis" || fail "dis --help"
"$NPUSIM" --version | grep -qE "^npusim [0-9]" || fail "--version"
"$NPUSIM" asm --bogus 2> "$tmp/e.txt"; [ $? -eq 2 ] || fail "asm --bogus exit"
grep -q "'--bogus'" "$tmp/e.txt" || fail "bad flag not named"
"$NPUSIM" dis --frob x 2> "$tmp/e.txt"; [ $? -eq 2 ] || fail "dis --frob exit"
"$NPUSIM" --frob 2> /dev/null; [ $? -eq 2 ] || fail "--frob exit"
"$NPUSIM" nosuchcmd 2> /dev/null; [ $? -eq 2 ] || fail "unknown command exit"
"$NPUSIM" asm kernels/examples/sample.s 2> /dev/null; [ $? -eq 2 ] || fail "missing -o exit"
"$NPUSIM" asm kernels/examples/sample.s -o 2> /dev/null; [ $? -eq 2 ] || fail "-o without value exit"

# dis of a corrupt file: exit 2 with a message
head -c 100 "$tmp/k.elf" > "$tmp/trunc.elf"
"$NPUSIM" dis "$tmp/trunc.elf" 2> "$tmp/e.txt"; [ $? -eq 2 ] || fail "dis of a truncated file"
grep -q "trunc.elf" "$tmp/e.txt" || fail "dis error does not name the file"
echo "t_asm: ok"
