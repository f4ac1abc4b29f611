#!/bin/sh
# Regenerates the fake-quant fixtures of the ORT agreement test (tests/oracle/recipes.tsv,
# cases rhasspy_fq8 and rhasspy_fq16): nanobench calibrate on hey_rhasspy_v0.1 with 16
# batches of uniform data in [-2, 2) (mulberry32 seeds 100..115, tests/oracle/recipes.js),
# int8 activations (IFMR) and int16 activations (dst_type INT16). Then rerun
# `node tests/oracle/ort_expected.js MODELS_DIR ORT_DIR` for their expected outputs.
# usage: tests/data/make_fq_fixtures.sh [BUILD_DIR]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
models=$("$root/tests/data/fetch_models.sh" | tail -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/x"
node -e '
const { generate } = require(process.argv[1]);
const fs = require("fs");
for (let i = 0; i < 16; i++) {
  const v = generate("float32", 16 * 96, "uniform", [100 + i, -2, 2]);
  fs.writeFileSync(process.argv[2] + "/" + String(i).padStart(2, "0") + ".bin", Buffer.from(v.buffer));
}' "$root/tests/oracle/recipes.js" "$tmp/x"
printf 'batch_num: 16\ncommon_config { ifmr_quantize { dst_type: INT16 } }\n' >"$tmp/s16.cfg"
nb="$build/app/nanobench"
"$nb" --no-record calibrate --model "$models/hey_rhasspy_v0.1.onnx" --save_path "$tmp/fq8" \
    --data_dir "$tmp/x" --batch_num 16 >/dev/null
"$nb" --no-record calibrate --model "$models/hey_rhasspy_v0.1.onnx" --save_path "$tmp/fq16" \
    --data_dir "$tmp/x" --calibration_config "$tmp/s16.cfg" >/dev/null
cp "$tmp/fq8_fake_quant_model.onnx" "$root/tests/data/fq/rhasspy_fq8.onnx"
cp "$tmp/fq16_fake_quant_model.onnx" "$root/tests/data/fq/rhasspy_fq16.onnx"
ls -l "$root/tests/data/fq"
