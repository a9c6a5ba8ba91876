#!/bin/sh
# docs/counters.md is generated from counters/events.def (and groups.def, metrics.def) by ctr-docgen; fail when the
# committed copy is stale.
set -u
: "${NPU_BUILD:?}" "${NPU_ROOT:?}"
gen="$NPU_BUILD/bin/ctr-docgen"
[ -x "$gen" ] || { echo "missing $gen (make BUILD=... all)"; exit 1; }
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
"$gen" > "$tmp" || { echo "ctr-docgen failed"; exit 1; }
if ! diff -u "$NPU_ROOT/docs/counters.md" "$tmp"; then
    echo "docs/counters.md is stale: run make docs (or \$NPU_BUILD/bin/ctr-docgen > docs/counters.md)"
    exit 1
fi
grep -q "generated from" "$NPU_ROOT/docs/counters.md" || { echo "docs/counters.md lacks its generated-from header"; exit 1; }
echo "docs/counters.md is up to date"
