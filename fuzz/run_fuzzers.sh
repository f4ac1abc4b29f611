#!/bin/sh
# Runs the libFuzzer harnesses of a fuzz build (cmake -DNB_FUZZ=ON with CC=clang) for SECONDS
# each, on seeds made here from the source tree and the model cache: ONNX models (the
# realistic export set, the RNN and fake-quant fixtures, openWakeWord's heads), exeoms and
# dump files that build's nanobench writes from them, the test configs, .npy files and
# --input_shape strings. The corpus grows in BUILD/corpus/<harness> across runs; a crash or
# a timeout is kept in BUILD/artifacts/<harness>/ and fails the run (exit 1).
# usage: fuzz/run_fuzzers.sh BUILD SECONDS [HARNESS ...]   (default: all six)
set -u
B=$(cd "$1" && pwd); SECS=$2; shift 2
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- exeom onnx dump config npy input_shape
NB=$B/app/nanobench
CACHE=${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}/models
S=$B/seeds
mkdir -p "$S"
lock=$S/.made
# ---- seeds, made once per build folder (a lock folder: parallel ctest runs wait for it)
if mkdir "$S/.making" 2>/dev/null; then
    if [ ! -f "$lock" ]; then
        mkdir -p "$S/onnx" "$S/exeom" "$S/dump" "$S/config" "$S/npy" "$S/input_shape" "$S/work"
        for f in "$SRC"/tests/data/real/*.onnx "$SRC"/tests/data/rnn/*.onnx \
                 "$SRC"/tests/data/fq/*.onnx "$CACHE"/hey_rhasspy_v0.1.onnx "$CACHE"/alexa_v0.1.onnx; do
            [ -f "$f" ] && cp "$f" "$S/onnx/"
        done
        for f in "$SRC"/tests/oracle/expected/real_*/*.npy; do
            cp "$f" "$S/npy/$(basename "$(dirname "$f")")_$(basename "$f")"
        done
        printf 'batch_num: 2\nactivation_offset: true\nskip_layers: "fc"\ncommon_config {\n  arq_quantize {\n    channel_wise: true\n  }\n  ifmr_quantize {\n    search_range_start: 0.7\n    search_range_end: 1.3\n    search_step: 0.01\n    max_percentile: 0.999999\n    min_percentile: 0.999999\n    num_of_bins: 4096\n  }\n}\n' >"$S/config/common.cfg"
        printf 'override_layer_types: "Conv"\noverride_layer_configs {\n  layer_name: "conv1"\n  calibration_config {\n    arq_quantize {\n      channel_wise: false\n    }\n    kl_quantize {\n      num_of_bins: 2048\n    }\n    dst_type: INT16\n  }\n}\n' >"$S/config/override.cfg"
        printf 'x:1,3,224,224\n' >"$S/input_shape/one"
        printf 'input_1:1,76,32,1;h0:2,1,64;c:-1,4\n' >"$S/input_shape/three"
        printf '"x y":1,16,96\n' >"$S/input_shape/quoted"
        # exeoms and dumps of two models of the set, through this build's nanobench
        A="--mode=30 --framework=5 --soc_version=Ascend035A --output_type=FP16"
        W=$S/work
        "$NB" --no-record atc $A --model="$SRC/tests/data/real/qat_torch.onnx" --input_fp16_nodes=input \
            --output="$W/qat" >/dev/null 2>&1 && cp "$W/qat.exeom" "$S/exeom/"
        "$NB" --no-record atc $A --model="$SRC/tests/data/real/fifo_cnn.onnx" \
            --input_fp16_nodes="frame;fifo_in" --output="$W/fifo" >/dev/null 2>&1 &&
            cp "$W/fifo.exeom" "$S/exeom/"
        printf '{"dump": {"dump_list": [{"model_name": "qat"}], "dump_path": "%s", "dump_mode": "all"}}\n' \
            "$W/d" >"$W/acl.json"
        "$NB" --no-record run "$W/qat.exeom" --dump "$W/acl.json" --output-dir "$W/o" >/dev/null 2>&1
        "$NB" --no-record infer "$SRC/tests/data/real/qat_torch.onnx" --input random \
            --dump "$W/g" --output-dir "$W/o2" >/dev/null 2>&1
        find "$W/d" "$W/g" -type f 2>/dev/null | head -40 | while read -r f; do
            cp "$f" "$S/dump/$(basename "$f" | cut -c1-120)"
        done
        touch "$lock"
    fi
    rmdir "$S/.making"
else
    while [ ! -f "$lock" ] && [ -d "$S/.making" ]; do sleep 1; done
fi
status=0
for h in "$@"; do
    F=$B/fuzz/fuzz_$h
    [ -x "$F" ] || { echo "run_fuzzers: no $F (a build with -DNB_FUZZ=ON)"; status=1; continue; }
    C=$B/corpus/$h; A=$B/artifacts/$h
    mkdir -p "$C" "$A"
    seeds=$S/$h
    [ -d "$seeds" ] || seeds=
    # onnx, exeom: seeds of 10-60 KB; the importer's depth check bounds recursion
    max=4096
    case $h in onnx|exeom|dump) max=262144 ;; esac
    NANOBENCH_SHARE=$SRC/share "$F" "$C" $seeds -max_total_time="$SECS" -max_len=$max -timeout=20 \
        -rss_limit_mb=2048 -artifact_prefix="$A/" -print_final_stats=1 >"$B/fuzz_$h.log" 2>&1
    rc=$?
    stats=$(grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$B/fuzz_$h.log" | tr '\n' ' ')
    cov=$(grep -Eo "cov: [0-9]+ ft: [0-9]+" "$B/fuzz_$h.log" | tail -1)
    if [ $rc = 0 ]; then
        echo "fuzz_$h: ${SECS} s, $cov, $stats, 0 crashes"
    else
        echo "FAIL: fuzz_$h exit $rc; artifacts in $A; the end of $B/fuzz_$h.log:"
        grep -E "ERROR|SUMMARY|==[0-9]+==|Test unit written" "$B/fuzz_$h.log" | head -12
        status=1
    fi
done
exit $status
