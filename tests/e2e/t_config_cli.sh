#!/bin/sh
# npusim config: the dump is configs/default.json; --check accepts the presets
# and rejects a bad file with a message naming file and key.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$NPUSIM" config --dump > "$tmp/dump.json" || fail "config --dump"
cmp -s "$tmp/dump.json" "$NPU_ROOT/configs/default.json" || fail "dump differs from configs/default.json"
for f in default small; do
    "$NPUSIM" config --check "$NPU_ROOT/configs/$f.json" >/dev/null || fail "--check $f.json"
done
"$NPUSIM" config --dump --config "$NPU_ROOT/configs/small.json" --set chip.cores=3 \
    --set core.l1.size=1M -o "$tmp/o.json" || fail "dump with overrides"
grep -q '"cores": 3' "$tmp/o.json" || fail "--set chip.cores not in dump"
grep -q '"size": 1048576' "$tmp/o.json" || fail "--set core.l1.size=1M not in dump"
"$NPUSIM" config --check "$tmp/o.json" >/dev/null || fail "a dump does not check"
printf '{"version":1,"core":{"ub":{"banks":0}}}' > "$tmp/bad.json"
"$NPUSIM" config --check "$tmp/bad.json" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "bad config: exit $rc, want 2"
grep -q "bad.json: core.ub.banks: expected an integer in 1..1024, got 0" "$tmp/err" || fail "message: $(cat "$tmp/err")"
if "$NPUSIM" config --dump --set core.l1.siz=1M 2> "$tmp/err"; then fail "bad --set accepted"; fi
grep -q "did you mean core.l1.size" "$tmp/err" || fail "message: $(cat "$tmp/err")"
echo "npusim config: ok"
