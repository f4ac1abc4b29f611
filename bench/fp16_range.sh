#!/bin/sh
# fp16 range on the simulated NPU (docs/fp16-range.md): openWakeWord's hey_jarvis_v0.1
# calibrated on 20 speech clips (make_data.js; IFMR) and compiled with the vendor's ATC flags
# (cut at its first-stage score Sigmoid_28), then run on the evaluation clips: per clip the
# float model's score, the NPU's, and the fp16 results the NPU clamped at 65504; over the
# clips the cosine and SQNR of the NPU's scores against the float ones. Then melspectrogram
# calibrated on those 20 audio clips and compiled without and with --nb_input_scale
# (the value atc advises, and 2^-15), run on the evaluation clips: per clip the cosine and
# SQNR of its output against the float model's, for the fake-quant model (the quantization's
# own error) and the NPU, and the fp16 results the NPU clamped.
# usage: bench/fp16_range.sh [BUILD_DIR] [CLIPS]   (needs node; the clips, or espeak-ng
# and sox to make it)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${1:-$root/build}" && pwd)
clips=${2:-20}
nb="$build/app/nanobench"
models=$("$root/tests/data/fetch_models.sh" | tail -n 1)
data="$(dirname "$models")/owwdata-r20" # made here when missing (make_data.js)
[ -d "$data/eval/hey_jarvis" ] || node "$root/share/examples/openwakeword/make_data.js" "$nb" "$models" "$data" 20 >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1
# cosine and SQNR (10 log10(sum y^2 / sum (x - y)^2), share/doc/metrics.md) of float32 .npy
# or of "ref npu" number pairs on stdin (--pairs)
cat >"$work/metrics.js" <<'EOF'
const fs = require('fs');
function npy(f) {
  const b = fs.readFileSync(f), hl = b.readUInt16LE(8);
  return new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length));
}
function metrics(y, x) {
  let xy = 0, xx = 0, yy = 0, ee = 0, bad = 0;
  for (let i = 0; i < y.length; i++) {
    if (!isFinite(x[i]) || !isFinite(y[i])) { bad++; continue; }
    xy += x[i] * y[i]; xx += x[i] * x[i]; yy += y[i] * y[i]; ee += (x[i] - y[i]) ** 2;
  }
  const cos = xx > 0 && yy > 0 ? xy / Math.sqrt(xx * yy) : NaN;
  const sqnr = ee > 0 ? 10 * Math.log10(yy / ee) : 999;
  return cos.toFixed(6) + ' ' + sqnr.toFixed(1) + (bad ? ' (' + bad + ' non-finite)' : '');
}
const a = process.argv.slice(2);
if (a[0] === '--pairs') {
  const rows = fs.readFileSync(0, 'utf8').trim().split('\n').map(l => l.trim().split(/\s+/).map(Number));
  console.log(metrics(rows.map(r => r[0]), rows.map(r => r[1])));
} else if (a[0] === '--first') {
  console.log(npy(a[1])[0].toFixed(4));
} else {
  console.log(metrics(npy(a[0]), npy(a[1])));
}
EOF
sat() { sed -n 's/.*fp16 saturation: \([0-9]*\) result.* in \([0-9]*\) task.*/\1 in \2 tasks/p' "$1"; }

echo "== hey_jarvis_v0.1 first stage (Sigmoid_28) on $clips evaluation clips"
"$nb" --no-record calibrate --model "$models/hey_jarvis_v0.1.onnx" --save_path "$work/hj/q" \
    --data_dir "$data/calib/hey_jarvis" --batch_num 20 >"$work/hj.cal" 2>&1 || { cat "$work/hj.cal"; exit 1; }
(cd "$work/hj" && "$nb" --no-record atc --mode=30 --framework=5 --soc_version=Ascend035A \
    --model=q_deploy_model.onnx --output=hj --input_fp16_nodes="x.1" --output_type=FP16 \
    --out_nodes="Sigmoid_28:0" >atc.log 2>&1) || { cat "$work/hj/atc.log"; exit 1; }
printf '%-6s %10s %10s %s\n' clip float NPU "clamped at 65504"
: >"$work/hj.pairs"
for f in $(ls "$data/eval/hey_jarvis" | head -n "$clips"); do
    c=${f%.bin}
    "$nb" --no-record infer "$models/hey_jarvis_v0.1.onnx" --input "x.1=$data/eval/hey_jarvis/$f" \
        --output-dir "$work/hj/ref_$c" --dump-all >/dev/null
    "$nb" --no-record run "$work/hj/hj.exeom" --input "x.1=$data/eval/hey_jarvis/$f" \
        --output-dir "$work/hj/npu_$c" >"$work/hj/run_$c.log" 2>&1
    r=$(node "$work/metrics.js" --first "$work/hj/ref_$c/p1.1.npy")
    x=$(node "$work/metrics.js" --first "$work/hj/npu_$c/p1.1.npy")
    echo "$r $x" >>"$work/hj.pairs"
    s=$(sat "$work/hj/run_$c.log")
    printf '%-6s %10s %10s %s\n' "$c" "$r" "$x" "${s:-0}"
done
echo "scores, NPU against float over the clips: cosine SQNR dB = $(node "$work/metrics.js" --pairs <"$work/hj.pairs")"

echo
echo "== melspectrogram (input [1,16000], int16-scaled audio) on $clips evaluation clips"
"$nb" --no-record calibrate --model "$models/melspectrogram.onnx" --input_shape "input:1,16000" \
    --save_path "$work/mel/q" --data_dir "$data/calib/mel" --batch_num 20 >"$work/mel.cal" 2>&1 ||
    { cat "$work/mel.cal"; exit 1; }
atc_mel() { # NAME [--nb_input_scale=...]
    (cd "$work/mel" && "$nb" --no-record atc --mode=30 --framework=5 --soc_version=Ascend035A \
        --model=q_deploy_model.onnx --output="$1" --input_fp16_nodes="input" \
        --input_shape="input:1,16000" --output_type=FP16 ${2:+"$2"} >"$1.atc" 2>&1) ||
        { cat "$work/mel/$1.atc"; exit 1; }
}
atc_mel plain
grep "fp16 range" "$work/mel/plain.atc" || true
advised=$(sed -n 's/.*--nb_input_scale="input:\(2^-[0-9]*\)".*/\1/p' "$work/mel/plain.atc" | head -n 1)
scales="${advised:-2^-12} 2^-15"
for s in $scales; do atc_mel "s${s#2^-}" "--nb_input_scale=input:$s"; done
printf '%-6s %-26s' clip "fake-quant vs float"
printf ' %-40s' "NPU unscaled vs float"
for s in $scales; do printf ' %-40s' "NPU x $s vs float"; done
printf ' %s\n' "NPU x ${scales%% *} vs fake-quant"
for f in $(ls "$data/eval/mel" | head -n "$clips"); do
    c=${f%.bin}
    "$nb" --no-record infer "$models/melspectrogram.onnx" --input_shape "input:1,16000" \
        --input "input=$data/eval/mel/$f" --output-dir "$work/mel/ref_$c" >/dev/null
    "$nb" --no-record infer "$work/mel/q_fake_quant_model.onnx" --input_shape "input:1,16000" \
        --input "input=$data/eval/mel/$f" --output-dir "$work/mel/fq_$c" >/dev/null
    printf '%-6s %-26s' "$c" "$(node "$work/metrics.js" "$work/mel/ref_$c/output.npy" "$work/mel/fq_$c/output.npy")"
    for e in plain $(for s in $scales; do echo "s${s#2^-}"; done); do
        "$nb" --no-record run "$work/mel/$e.exeom" --input "input=$data/eval/mel/$f" \
            --output-dir "$work/mel/${e}_$c" >"$work/mel/${e}_$c.log" 2>&1
        s=$(sat "$work/mel/${e}_$c.log")
        printf ' %-40s' "$(node "$work/metrics.js" "$work/mel/ref_$c/output.npy" "$work/mel/${e}_$c/output.npy"), clamped ${s:-0}"
    done
    first=${scales%% *}
    printf ' %s\n' "$(node "$work/metrics.js" "$work/mel/fq_$c/output.npy" "$work/mel/s${first#2^-}_$c/output.npy")"
done
echo "(cosine, SQNR dB of the output [1,1,97,32] against the float model; clamped: fp16 results at 65504 in the run)"
