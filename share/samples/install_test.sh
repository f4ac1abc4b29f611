#!/bin/sh
# The installed ACL library as an app sees it: cmake --install into a scratch prefix, the
# matmul sample compiled with nothing but pkg-config's flags, run on the fixture's exeom
# (its expected outputs are in the sample).
# usage: install_test.sh BUILD_DIR SAMPLE.c MODEL.exeom [EXTRA_CFLAGS]
set -eu
build=$1 src=$2 model=$3 extra=${4:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cmake --install "$build" --prefix "$T/prefix" >/dev/null
flags=$(PKG_CONFIG_PATH="$T/prefix/lib/pkgconfig" pkg-config --cflags --libs nanobench-acl)
${CC:-cc} $extra "$src" -o "$T/app" $flags
"$T/app" "$model"
