#!/bin/sh
# The assembler's messages for one error of each class (tests/data/asm/errors.s)
# match tests/data/asm/errors.expected exactly: file:line:col, message, the
# source line and the caret. Regenerate after a deliberate message change:
#   (cd tests/data/asm && npusim asm errors.s -o /dev/null 2> errors.expected)
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$NPU_ROOT/tests/data/asm" || exit 1
"$NPUSIM" asm errors.s -o "$tmp/errors.elf" 2> "$tmp/out.txt"
rc=$?
[ $rc -eq 2 ] || { echo "exit $rc, want 2"; exit 1; }
[ -e "$tmp/errors.elf" ] && { echo "an ELF was written despite errors"; exit 1; }
# the output file name is the only line that depends on the run
sed "s|$tmp/errors.elf|OUT|" "$tmp/out.txt" > "$tmp/got.txt"
cp errors.expected "$tmp/want.txt"
diff -u "$tmp/want.txt" "$tmp/got.txt" || { echo "messages differ from errors.expected"; exit 1; }
echo "t_asm_errors: ok"
