# tests/e2e/lib_e2e.sh — the prologue of the e2e tests that run npusim and
# check its output with python3 (not a test itself). Source it after
# setting NAME (the test's name, for its scratch directory). It needs
# $NPUSIM and $NPU_ROOT (scripts/run_tests.sh exports them) and provides
# $tmp (a scratch directory, removed on exit) and fail MESSAGE.
set -u
: "${NPUSIM:?}" "${NPU_ROOT:?}" "${NAME:?}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 >/dev/null || fail "python3 is needed"
