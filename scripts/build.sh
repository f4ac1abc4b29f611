#!/bin/sh
# Configures and builds nanobench. usage: scripts/build.sh [BUILD_DIR] [extra cmake args]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build}; [ $# -gt 0 ] && shift
cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
