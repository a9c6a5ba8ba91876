#!/bin/sh
# The malformed-input corpus (tests/malformed/, made by scripts/gen_malformed.py)
# through the CLI, one command per format (two for ELF and traces). Each file
# must give: a non-zero exit of the command's documented status for bad input,
# never a signal, a sanitizer report or a hang (every run under timeout); a
# first stderr line that names the file (or the file it refers to) and says
# what is wrong; and no output file, partial or temporary, left behind.
#
# Exit status for bad input: 2 for every command (docs/reliability.md; 1 is
# kept for "ran, but a check failed", e.g. an output mismatch). Bad command
# lines (tests/malformed/cli.txt) get 2 as well.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
M=$NPU_ROOT/tests/malformed
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# sanitizer reports get their own exit codes, so they cannot pass as "bad input"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}:halt_on_error=1:exitcode=87"
TO=${MALFORMED_TIMEOUT:-30}
# npuview (the trace corpus) when the build has it
NPUVIEW=${NPU_BUILD:+$NPU_BUILD/bin/npuview}; NPUVIEW=${NPUVIEW:-$(dirname "$NPUSIM")/npuview}
nfail=0; nrun=0; nfiles=0; nknown=0
# Files whose first error line may not name them (none now: npusim run names
# the launch file since this test found three messages that did not).
KNOWN_NONAME=""
"$NPUSIM" asm "$M/scale.s" -o "$tmp/scale.elf" || { echo "FAIL: cannot assemble scale.s"; exit 1; }
# a.npy: int32 [0..7], the valid input next to the malformed ones
python3 -c '
import struct, sys
h = "{\x27descr\x27: \x27<i4\x27, \x27fortran_order\x27: False, \x27shape\x27: (8,), }"
h += " " * (63 - (10 + len(h)) % 64) + "\n"
sys.stdout.buffer.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode()
                        + struct.pack("<8i", *range(8)))' > "$tmp/a.npy" || exit 1

# check FILE WANT_RC OUTPUT|- NAMES -- CMD... : run one command on one file.
# NAMES is a |-separated list of strings one of which the first stderr line
# must contain (the input's name, or a file the input names).
check() {
    f=$1 want=$2 out=$3 names=$4; shift 5
    nrun=$((nrun + 1))
    rm -f "$tmp/err"
    timeout "$TO" "$@" > /dev/null 2> "$tmp/err"
    rc=$?
    why=""
    if [ $rc -eq 124 ]; then why="hang (timeout ${TO}s)"
    elif [ $rc -gt 128 ]; then why="killed by signal $((rc - 128))"
    elif [ $rc -eq 86 ] || [ $rc -eq 87 ]; then why="sanitizer report"
    elif [ $rc -eq 0 ]; then
        # a fuzz regression may be an input the tool rightly accepts (a
        # damaged trace opens): its point is not crashing
        case $(basename "$f") in fuzz-*) rm -f "$tmp"/*.tmp.* "$out" 2>/dev/null; return 0 ;; esac
        why="accepted (exit 0)"
    elif [ $rc -ne "$want" ]; then why="exit $rc, want $want"
    fi
    line=$(head -n 1 "$tmp/err")
    if [ -z "$why" ]; then
        ok=0
        IFS='|'; for n in $names; do case "$line" in *"$n"*) ok=1 ;; esac; done; unset IFS
        if [ $ok -eq 0 ]; then
            case " $KNOWN_NONAME " in
                *" $(basename "$f") "*) nknown=$((nknown + 1))
                    echo "KNOWN: ${f#"$NPU_ROOT"/}: message does not name the launch file: '$line'" ;;
                *) why="first stderr line does not name the file: '$line'" ;;
            esac
        fi
    fi
    if [ -z "$why" ] && [ "$out" != - ] && [ -e "$out" ]; then why="output $out left behind"; fi
    if [ -z "$why" ] && ls "$tmp" | grep -q '\.tmp\.'; then why="temporary file left: $(ls "$tmp" | grep '\.tmp\.')"; fi
    if [ -n "$why" ]; then
        nfail=$((nfail + 1))
        echo "FAIL: ${f#"$NPU_ROOT"/}: $*: $why"
        sed -n '1,5s/^/   | /p' "$tmp/err"
    fi
    rm -f "$tmp"/*.tmp.* "$out" 2>/dev/null
    return 0
}

for f in "$M"/asm/*; do
    nfiles=$((nfiles + 1)); b=$(basename "$f")
    check "$f" 2 "$tmp/o.elf" "$b|no/such/file.inc" -- "$NPUSIM" asm "$f" -o "$tmp/o.elf"
done
for f in "$M"/elf/*; do
    nfiles=$((nfiles + 1)); b=$(basename "$f")
    check "$f" 2 - "$b" -- "$NPUSIM" dis "$f"
    check "$f" 2 "$tmp/c.npy" "$b" -- "$NPUSIM" run "$f" --max-cycles 100000 --arg A="$tmp/a.npy" \
        --arg M=3 --out C="$tmp/c.npy":int32[8] --arg N=8
done
for f in "$M"/config/*; do
    nfiles=$((nfiles + 1)); b=$(basename "$f")
    check "$f" 2 - "$b" -- "$NPUSIM" config --check "$f"
done
for f in "$M"/launch/*; do
    nfiles=$((nfiles + 1)); b=$(basename "$f")
    # relative paths in a launch file resolve against its folder: run it
    # from a copy next to scale.elf and a.npy
    cp "$f" "$tmp/$b"
    check "$f" 2 "$tmp/c.npy" "$b|no-such.elf|nope.npy|no-such-config.json|scale.elf|a.npy|$tmp/" -- \
        "$NPUSIM" run "$tmp/$b"
    rm -f "$tmp/$b"
done
for f in "$M"/npy/*; do
    nfiles=$((nfiles + 1)); b=$(basename "$f")
    check "$f" 2 "$tmp/c.npy" "$b" -- "$NPUSIM" run "$tmp/scale.elf" --cores 2 --arg A="$f" --arg M=3 \
        --out C="$tmp/c.npy":int32[8] --arg N=8
done
for f in "$M"/trace/*; do
    nfiles=$((nfiles + 1)); b=$(basename "$f")
    check "$f" 2 - "$b" -- "$NPUSIM" trace info "$f"
    check "$f" 2 "$tmp/o.csv" "$b" -- "$NPUSIM" trace export --format csv "$f" -o "$tmp/o.csv"
    if [ -x "$NPUVIEW" ]; then
        check "$f" 2 "$tmp/o.png" "$b" -- env SDL_VIDEODRIVER=offscreen "$NPUVIEW" --screenshot "$tmp/o.png" "$f"
        check "$f" 2 - "$b" -- "$NPUVIEW" --report --format json "$f"
    fi
done
for f in "$M"/memtrace/*; do
    nfiles=$((nfiles + 1)); b=$(basename "$f")
    check "$f" 2 - "$b" -- "$NPUSIM" memsim --config "$NPU_ROOT/configs/small.json" "$f"
done

# bad command lines: exit 2, a first stderr line from npusim, no signal, no hang
ncli=0
while IFS= read -r l; do
    case "$l" in '#'*|'') continue ;; esac
    ncli=$((ncli + 1)); nrun=$((nrun + 1))
    l=$(printf '%s' "$l" | sed "s|@ROOT@|$NPU_ROOT|g")
    eval "set -- $l"
    (cd "$tmp" && timeout "$TO" "$NPUSIM" "$@" > /dev/null 2> "$tmp/err"); rc=$?
    line=$(head -n 1 "$tmp/err")
    why=""
    if [ $rc -ne 2 ]; then why="exit $rc, want 2"
    else case "$line" in npusim*|usage:*) ;; *) why="first stderr line is not a message: '$line'" ;; esac
    fi
    if [ -n "$why" ]; then nfail=$((nfail + 1)); echo "FAIL: npusim $l: $why"; sed -n '1,3s/^/   | /p' "$tmp/err"; fi
    rm -f "$tmp/x.npt" "$tmp/o.elf" "$tmp/r.csv" "$tmp/v.npy" "$tmp/m.npy"; rm -rf "$tmp/d"
done < "$M/cli.txt"
# a malformed NPUSIM_THREADS is refused like a bad flag
for v in 0 two -1 2x; do
    nrun=$((nrun + 1))
    NPUSIM_THREADS=$v timeout "$TO" "$NPUSIM" run "$tmp/a.npy" > /dev/null 2> "$tmp/err"; rc=$?
    grep -q "NPUSIM_THREADS='$v'" "$tmp/err" && [ $rc -eq 2 ] ||
        { nfail=$((nfail + 1)); echo "FAIL: NPUSIM_THREADS=$v: exit $rc: $(head -n 1 "$tmp/err")"; }
done
[ $ncli -ge 40 ] || { echo "FAIL: only $ncli bad command lines"; nfail=$((nfail + 1)); }

[ $nfiles -ge 200 ] || { echo "FAIL: only $nfiles corpus files (want >= 200)"; nfail=$((nfail + 1)); }
echo "malformed: $nfiles files, $ncli command lines, $nrun runs, $nfail failures, $nknown known message gaps"
[ $nfail -eq 0 ]
