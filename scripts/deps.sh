#!/bin/sh
# Install the Debian packages the project needs, if any is missing.
# Used by `make check`, `make demo` and `make deps`; safe to run repeatedly.
set -e
PKGS="build-essential pkg-config libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev \
libcjson-dev check libsubunit-dev zlib1g-dev libopenblas-dev fonts-dejavu-core \
clang libclang-rt-dev python3 valgrind xvfb"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing missing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
    echo "deps: not root; install them with: sudo apt-get install$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
