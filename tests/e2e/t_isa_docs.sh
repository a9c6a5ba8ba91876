#!/bin/sh
# docs/isa.md is generated from the isa/ tables by isa-docgen; fail when the
# committed copy is stale.
set -u
: "${NPU_BUILD:?}" "${NPU_ROOT:?}"
gen="$NPU_BUILD/bin/isa-docgen"
[ -x "$gen" ] || { echo "missing $gen (make BUILD=... all)"; exit 1; }
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
"$gen" > "$tmp" || { echo "isa-docgen failed"; exit 1; }
if ! diff -u "$NPU_ROOT/docs/isa.md" "$tmp"; then
    echo "docs/isa.md is stale: run make docs (or \$NPU_BUILD/bin/isa-docgen > docs/isa.md)"
    exit 1
fi
grep -q "generated from" "$NPU_ROOT/docs/isa.md" || { echo "docs/isa.md lacks its generated-from header"; exit 1; }
echo "docs/isa.md is up to date"
