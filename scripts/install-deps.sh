#!/bin/sh
# Installs the Debian 12 packages nanobench needs to build and test (idempotent: apt runs
# only when something is missing). Uses sudo when not root.
set -eu
pkgs="build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev libonnx-dev
libonnx-testdata python3-onnx libopenblas-dev libcmocka-dev ca-certificates libsqlite3-dev libjansson-dev
nettle-dev libcsv-dev zlib1g-dev espeak-ng sox libncurses-dev tmux python3 python3-numpy
clang libclang-rt-14-dev gnuplot-nox chromium"
missing=""
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    echo "install-deps: installing$missing"
    $SUDO apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi
