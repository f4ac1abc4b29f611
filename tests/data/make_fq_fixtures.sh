#!/bin/sh
# Regenerates the fake-quant fixtures of the ORT agreement test (tests/oracle/recipes.tsv,
# cases rhasspy_fq8 and rhasspy_fq16): nanobench calibrate on hey_rhasspy_v0.1 with 16
# batches of uniform data in [-2, 2) (mulberry32 seeds 100..115, tests/oracle/recipes.js),
# int8 activations (IFMR) and int16 activations (dst_type INT16); and lstm_gru_fq8:
# calibrate on tests/data/rnn/lstm_gru.onnx (make_rnn_model.py) with 8 batches of x uniform
# in [-2, 2) and h0, c0 uniform in [-0.5, 0.5) (seeds 200.., 300.., 400..). Then rerun
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
mkdir -p "$tmp/r/x" "$tmp/r/h0" "$tmp/r/c0"
node -e '
const { generate } = require(process.argv[1]);
const fs = require("fs");
const put = (dir, i, v) => fs.writeFileSync(process.argv[2] + "/" + dir + "/" + i + ".bin", Buffer.from(v.buffer));
for (let i = 0; i < 8; i++) {
  put("x", i, generate("float32", 5 * 8, "uniform", [200 + i, -2, 2]));
  put("h0", i, generate("float32", 16, "uniform", [300 + i, -0.5, 0.5]));
  put("c0", i, generate("float32", 16, "uniform", [400 + i, -0.5, 0.5]));
}' "$root/tests/oracle/recipes.js" "$tmp/r"
"$nb" --no-record calibrate --model "$root/tests/data/rnn/lstm_gru.onnx" --save_path "$tmp/rnn" \
    --data_dir "$tmp/r/x;$tmp/r/h0;$tmp/r/c0" --batch_num 8 >/dev/null
cp "$tmp/rnn_fake_quant_model.onnx" "$root/tests/data/fq/lstm_gru_fq8.onnx"
cp "$tmp/fq8_fake_quant_model.onnx" "$root/tests/data/fq/rhasspy_fq8.onnx"
cp "$tmp/fq16_fake_quant_model.onnx" "$root/tests/data/fq/rhasspy_fq16.onnx"
ls -l "$root/tests/data/fq"
