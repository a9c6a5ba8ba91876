#!/bin/sh
# Regenerate the generated docs from their tables (make docs).
# Usage: scripts/gendocs.sh BUILD
# Each generator is a program of the build that prints one file; a row
# below runs it into place atomically (temp file + rename). Add a row per
# generator; tests/e2e/t_*_docs.sh fail when a committed copy is stale.
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
gen() {  # output program [args...]
    out=$1; prog=$2; shift 2
    if [ ! -x "$BUILD/bin/$prog" ]; then
        echo "gendocs: $BUILD/bin/$prog is missing (make BUILD=$BUILD all)" >&2
        exit 1
    fi
    "$BUILD/bin/$prog" "$@" > "$out.tmp.$$"
    mv "$out.tmp.$$" "$out"
    echo "gendocs: $out"
}
gen docs/isa.md isa-docgen
if [ -x "$BUILD/bin/cfg-docgen" ]; then
    gen docs/config.md cfg-docgen
    gen configs/default.json cfg-docgen --default-json
fi
gen docs/counters.md ctr-docgen
