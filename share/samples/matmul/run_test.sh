#!/bin/sh
# The cascaded-MatMul sample, end to end: writes the ONNX model (make_fixture matmul_sample)
# and two calibration batches, quantizes (nanobench calibrate, MinMax), checks the record's
# scales the sample's expected values were worked out with, compiles (nanobench atc), and
# runs matmul_sample on the exeom, which must exit 0 (every output as worked by hand).
# usage: run_test.sh NANOBENCH MAKE_FIXTURE MATMUL_SAMPLE
#        run_test.sh --model-only DIR NANOBENCH MAKE_FIXTURE
#   --model-only: no sample run; matmul_sample.exeom and .dbg are copied into DIR (the
#   ctest fixture acl_model of tests/test_acl.c).
set -u
KEEP=
if [ "${1:-}" = "--model-only" ]; then
    KEEP=$2
    shift 2
fi
[ $# -ge 2 ] || { echo "usage: run_test.sh [--model-only DIR] NANOBENCH MAKE_FIXTURE [MATMUL_SAMPLE]" >&2; exit 2; }
NB=$1
FIX=$2
SAMPLE=${3:-}
[ -n "$KEEP" ] || [ -n "$SAMPLE" ] || { echo "run_test.sh: no MATMUL_SAMPLE" >&2; exit 2; }
T=$(mktemp -d /tmp/nb_sample_matmul.XXXXXX)
trap 'rm -rf "$T"' EXIT
export NANOBENCH_DB="$T/runs.db" NANOBENCH_DB_TIMEOUT_MS=300 # never the user's database

fail() { echo "FAIL: $*"; exit 1; }

"$FIX" matmul_sample "$T/matmul_sample.onnx" || fail "make_fixture matmul_sample"
# float32 [1,4] batches, little-endian: b0 = [-128, 127, 0, 0], b1 = [0, 0, 4, -4]
# (-128 = 0xC3000000, 127 = 0x42FE0000, 4 = 0x40800000, -4 = 0xC0800000)
mkdir -p "$T/data" "$T/out"
printf '\000\000\000\303\000\000\376\102\000\000\000\000\000\000\000\000' >"$T/data/b0.bin"
printf '\000\000\000\000\000\000\000\000\000\000\200\100\000\000\200\300' >"$T/data/b1.bin"

"$NB" calibrate --model "$T/matmul_sample.onnx" --save_path "$T/out/matmul" \
    --data_dir "$T/data" --batch_num 2 --algo minmax >"$T/calib.log" 2>&1 ||
    { cat "$T/calib.log"; fail "nanobench calibrate"; }
# the scales the expected values assume: matmul_1 scale_d 1, matmul_2 scale_d 4, offsets 0,
# every scale_w 1 (record order: matmul_1, matmul_2)
rec=$(tr -d ' \n' <"$T/out/matmul_quant_record.txt")
want='record{key:"matmul_1"value{scale_d:1offset_d:0scale_w:1scale_w:1scale_w:1scale_w:1offset_w:0offset_w:0offset_w:0offset_w:0act_type:"INT8"wts_type:"INT8"}}record{key:"matmul_2"value{scale_d:4offset_d:0scale_w:1scale_w:1offset_w:0offset_w:0act_type:"INT8"wts_type:"INT8"}}'
[ "$rec" = "$want" ] || { cat "$T/out/matmul_quant_record.txt"; fail "the quant record is not the one the sample was worked out with"; }

"$NB" atc --mode=30 --framework=5 --soc_version=Ascend035A \
    --model="$T/out/matmul_deploy_model.onnx" --output="$T/out/matmul_sample" \
    --input_fp16_nodes="x" --output_type=FP16 >"$T/atc.log" 2>&1 ||
    { cat "$T/atc.log"; fail "nanobench atc"; }
[ -s "$T/out/matmul_sample.exeom" ] && [ -s "$T/out/matmul_sample.dbg" ] || fail "atc wrote no exeom/dbg"

if [ -n "$KEEP" ]; then
    rm -f "$KEEP/matmul_sample.exeom" "$KEEP/matmul_sample.dbg"
    mkdir -p "$KEEP" && cp "$T/out/matmul_sample.exeom" "$T/out/matmul_sample.dbg" "$KEEP"/ ||
        fail "cannot copy the exeom to $KEEP"
    echo "ok: $KEEP/matmul_sample.exeom"
    exit 0
fi
"$SAMPLE" "$T/out/matmul_sample.exeom" || fail "matmul_sample exited $?"
echo "ok: sample_matmul"
