#!/bin/sh
# The embedding sample on openWakeWord's embedding_model (fetched by tests/data/fetch_models.sh
# into $NANOBENCH_CACHE/models; exit 77, ctest's skip, when it is not there): calibrates it
# on 4 batches (the speech features of owwdata-r20/calib/embedding when the cache has them,
# else the sample's deterministic inputs), compiles it, computes the float model's output
# (nanobench infer, the golden) for one input, and runs embedding_sample on that input
# (which must give 96 finite values close to the golden: cosine >= MIN_COSINE) and on its
# own generated input.
# usage: run_test.sh NANOBENCH EMBEDDING_SAMPLE
set -u
NB=$1
SAMPLE=$2
MIN_COSINE=0.99
CACHE=${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}
MODEL=$CACHE/models/embedding_model.onnx
if [ ! -f "$MODEL" ]; then
    echo "skip: $MODEL is not there (tests/data/fetch_models.sh fetches it)"
    exit 77
fi
T=$(mktemp -d /tmp/nb_sample_embedding.XXXXXX)
trap 'rm -rf "$T"' EXIT
export NANOBENCH_DB="$T/runs.db" NANOBENCH_DB_TIMEOUT_MS=300 # never the user's database
SHAPE="input_1:1,76,32,1"

fail() { echo "FAIL: $*"; exit 1; }

# calibration data: 4 batches of float32 [1,76,32,1]
FEAT=$CACHE/owwdata-r20
if [ "$(ls "$FEAT/calib/embedding" 2>/dev/null | grep -c '\.bin$')" -ge 4 ]; then
    CAL=$FEAT/calib/embedding
    echo "calibration data: $CAL (speech features)"
else
    CAL=$T/cal
    mkdir -p "$CAL"
    for s in 1 2 3 4; do
        "$SAMPLE" --write-input "$CAL/000$s.bin" "$s" || fail "embedding_sample --write-input"
    done
    echo "calibration data: 4 generated inputs"
fi
"$NB" calibrate --model "$MODEL" --save_path "$T/out/emb" --data_dir "$CAL" \
    --input_shape "$SHAPE" --batch_num 4 >"$T/calib.log" 2>&1 ||
    { cat "$T/calib.log"; fail "nanobench calibrate"; }
"$NB" atc --mode=30 --framework=5 --soc_version=Ascend035A \
    --model="$T/out/emb_deploy_model.onnx" --output="$T/out/embedding_model" \
    --input_fp16_nodes="input_1" --input_shape="$SHAPE" --output_type=FP16 >"$T/atc.log" 2>&1 ||
    { cat "$T/atc.log"; fail "nanobench atc"; }

# one input the calibration did not see, and the float model's output for it
if [ -f "$FEAT/eval/embedding/0000.bin" ]; then
    IN=$FEAT/eval/embedding/0000.bin
else
    IN=$T/input.bin
    "$SAMPLE" --write-input "$IN" 100 || fail "embedding_sample --write-input"
fi
"$NB" infer "$MODEL" --input_shape "$SHAPE" --input "input_1=$IN" --output-dir "$T/golden" \
    >"$T/infer.log" 2>&1 || { cat "$T/infer.log"; fail "nanobench infer"; }

# prints N finite values: the sample's own summary line, checked here too
check_run() {
    grep -q "^output: 96 values, 96 finite;" "$T/run.log" || { cat "$T/run.log"; fail "$1: not 96 finite values"; }
    grep -q "^partitions add up to \([0-9]*\) bytes; the file has \1\$" "$T/run.log" ||
        { cat "$T/run.log"; fail "$1: exeom partitions"; }
    echo "ok: $1"
}
"$SAMPLE" "$T/out/embedding_model.exeom" "$IN" --golden "$T/golden/conv2d_19.npy" \
    --min-cosine "$MIN_COSINE" >"$T/run.log" 2>&1 || { cat "$T/run.log"; fail "embedding_sample on $IN"; }
cat "$T/run.log"
check_run "embedding_sample on $IN against the float model"
"$SAMPLE" "$T/out/embedding_model.exeom" >"$T/run.log" 2>&1 ||
    { cat "$T/run.log"; fail "embedding_sample on its generated input"; }
check_run "embedding_sample on its generated input"
echo "ok: sample_embedding"
