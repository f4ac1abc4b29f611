#!/bin/sh
# Reference executor vs ONNX Runtime, one thread each, same inputs (tests/oracle/recipes.tsv).
# Prints the median time per inference and the ratio ours/ORT (target <= 1.0, issue 22).
# usage: bench/run.sh [BUILD_DIR] [MIN_SECONDS] [CASE...]
#   default cases: mel_1s mel_chunk embedding_b1 jarvis_else jarvis_then vad_16k
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}; [ $# -gt 0 ] && shift
secs=${1:-2}; [ $# -gt 0 ] && shift
cases=${*:-"mel_1s mel_chunk embedding_b1 jarvis_else jarvis_then vad_16k"}
models=$("$root/tests/data/fetch_models.sh" --with-ort | tail -n 1)
cache=$(dirname "$models")
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
printf '%-14s %-22s %12s %12s %8s\n' case model "ours ms" "ORT ms" ratio
for c in $cases; do
    model=$(awk -v c="$c" '$1 == c { print $2; exit }' "$root/tests/oracle/recipes.tsv")
    ours=$("$build/bench/bench_ref" "$root/tests/oracle/recipes.tsv" "$models" "$c" "$secs" | awk '{print $2}')
    ort=$(node "$here/ort_bench.js" "$root/tests/oracle/recipes.tsv" "$models" "$cache/ort" "$c" "$secs" | awk '{print $2}')
    ratio=$(awk -v a="$ours" -v b="$ort" 'BEGIN { printf "%.2f", a / b }')
    printf '%-14s %-22s %12s %12s %8s\n' "$c" "$model" "$ours" "$ort" "$ratio"
done
