#!/bin/bash
# nanobench estimate against loading the model with python3-onnx (the peer named by the
# estimate issue: python3 -c 'import onnx; onnx.load(M)'), on the openWakeWord models and
# PaddleOCR's 10 MB recognizer. Prints the median wall time of each over RUNS runs (whole
# commands, process start included), the ratio ours/peer (target <= 0.05, issue 22), and the peer's
# onnx.load time alone, measured inside python. The two sides run interleaved (ours, peer,
# ours, peer...), each timed by bash's EPOCHREALTIME (no clock process forked inside the
# interval: a forked `date` had added about 1 ms to each side).
# usage: bench/estimate_bench.sh [BUILD_DIR] [RUNS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
runs=${2:-7}
PY=${PYTHON:-/usr/bin/python3}   # Debian's, with python3-onnx
"$PY" -c 'import onnx' 2>/dev/null || { echo "estimate_bench.sh: needs python3-onnx (apt-get install python3-onnx)" >&2; exit 2; }
models=$("$root/tests/data/fetch_models.sh" --with-ocr | tail -n 1)
ocr="$(dirname "$models")/ocr"
nb="$build/app/nanobench"
tmp=$(mktemp); trap 'rm -f "$tmp" "$tmp.a" "$tmp.b"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-34s %12s %12s %8s %14s\n' model "estimate ms" "peer ms" ratio "onnx.load ms"
while IFS='|' read -r file shape; do
    [ -f "$file" ] || continue
    set -- --no-record estimate -m "$file"
    [ -n "$shape" ] && set -- "$@" --input_shape "$shape"
    : >"$tmp.a"; : >"$tmp.b"
    for i in $(seq "$runs"); do
        t0=${EPOCHREALTIME/./}; "$nb" "$@" >/dev/null; t1=${EPOCHREALTIME/./}
        echo $((t1 - t0)) >>"$tmp.a"
        t0=${EPOCHREALTIME/./}; "$PY" -c 'import onnx, sys; onnx.load(sys.argv[1])' "$file"; t1=${EPOCHREALTIME/./}
        echo $((t1 - t0)) >>"$tmp.b"
    done
    ours=$(median <"$tmp.a") peer=$(median <"$tmp.b")
    load=$("$PY" -c 'import onnx, sys, time
ts = []
for i in range(5):
    t = time.perf_counter(); onnx.load(sys.argv[1]); ts.append(time.perf_counter() - t)
print(sorted(ts)[2] * 1e6)' "$file")
    awk -v m="$(basename "$file")" -v a="$ours" -v b="$peer" -v l="$load" 'BEGIN {
        printf "%-34s %12.1f %12.1f %8.3f %14.1f\n", m, a / 1000, b / 1000, a / b, l / 1000 }'
done <<EOM
$models/melspectrogram.onnx|input:1,16000
$models/embedding_model.onnx|input_1:1,76,32,1
$models/hey_jarvis_v0.1.onnx|
$models/alexa_v0.1.onnx|
$models/hey_mycroft_v0.1.onnx|
$models/hey_rhasspy_v0.1.onnx|
$models/timer_v0.1.onnx|
$models/weather_v0.1.onnx|
$models/silero_vad.onnx|input:1,512;h:2,1,64;c:2,1,64
$ocr/ch_PP-OCRv4_rec_infer.opset11.onnx|x:1,3,48,320
EOM
