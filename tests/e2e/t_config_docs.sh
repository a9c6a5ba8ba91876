#!/bin/sh
# docs/config.md and configs/default.json are generated from
# frontend/config_keys.def by cfg-docgen; fail when a committed copy is stale.
set -u
: "${NPU_BUILD:?}" "${NPU_ROOT:?}"
gen="$NPU_BUILD/bin/cfg-docgen"
[ -x "$gen" ] || { echo "missing $gen (make BUILD=... all)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
rc=0
"$gen" > "$tmp/config.md" || { echo "cfg-docgen failed"; exit 1; }
if ! diff -u "$NPU_ROOT/docs/config.md" "$tmp/config.md"; then
    echo "docs/config.md is stale: run \$NPU_BUILD/bin/cfg-docgen > docs/config.md"
    rc=1
fi
"$gen" --default-json > "$tmp/default.json" || { echo "cfg-docgen --default-json failed"; exit 1; }
if ! diff -u "$NPU_ROOT/configs/default.json" "$tmp/default.json"; then
    echo "configs/default.json is stale: run \$NPU_BUILD/bin/cfg-docgen --default-json > configs/default.json"
    rc=1
fi
[ $rc -eq 0 ] && echo "config docs and default.json are up to date"
exit $rc
