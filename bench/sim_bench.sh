#!/bin/sh
# Simulated NPU (host time of one execution) vs ONNX Runtime on the float model, one thread
# each, same input (x[i] = sin(0.1 i)): openWakeWord's embedding_model (target <= 0.5, issue
# 39) and melspectrogram (<= 1.0, in bench/run_all.sh's table). Each model is calibrated on 8
# deterministic random batches and compiled. The simulator takes the best cube path of the
# CPU (AVX-512 VNNI, AVX2, portable); NANOBENCH_SIM_CUBE=avx2 or portable caps it.
# usage: bench/sim_bench.sh [BUILD_DIR] [MIN_SECONDS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${1:-$root/build}" && pwd)
secs=${2:-2}
models=$("$root/tests/data/fetch_models.sh" --with-ort | tail -n 1)
cache=$(dirname "$models")
nb="$build/app/nanobench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NANOBENCH_DB="$work/runs.db" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
printf '%-22s %10s %10s %8s %12s %10s\n' model "sim ms" "ORT ms" ratio "NPU cycles" "ms@64MHz"
for spec in "embedding_model input_1 1,76,32,1" "melspectrogram input 1,16000"; do
    set -- $spec
    m=$1 in=$2 shape=$3
    mkdir -p "$work/$m/data"
    node -e "
const fs = require('fs'); let s = 12345;
const rnd = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 * 2 - 1; };
const n = '$shape'.split(',').map(Number).reduce((a, b) => a * b, 1);
for (let b = 0; b < 8; b++) { const x = new Float32Array(n).map(rnd);
  fs.writeFileSync('$work/$m/data/' + String(b).padStart(4, '0') + '.bin', Buffer.from(x.buffer)); }"
    "$nb" calibrate --model "$models/$m.onnx" --save_path "$work/$m/q" --input_shape "$in:$shape" \
        --data_dir "$work/$m/data" --batch_num 8 >"$work/$m/cal.log" 2>&1 || { cat "$work/$m/cal.log"; exit 1; }
    (cd "$work/$m" && "$nb" atc --mode=30 --framework=5 --soc_version=Ascend035A \
        --model=q_deploy_model.onnx --output=m --input_fp16_nodes="$in" --input_shape="$in:$shape" \
        --output_type=FP16 >atc.log 2>&1) || { cat "$work/$m/atc.log"; exit 1; }
    sim=$("$build/bench/bench_sim" "$work/$m/m.exeom" "$secs")
    ort=$(node "$here/sim_ort.js" "$models/$m.onnx" "$shape" "$cache/ort" "$secs")
    echo "$sim $ort" | awk -v m="$m" '{ printf "%-22s %10.3f %10.3f %8.2f %12d %10.3f\n", m, $2, $6, $2 / $6, $4, $4 / 64000 }'
done
