#!/bin/sh
# compare file_compare's reading speed next to cat's: about 500 MB of simulator dumps of
# embedding_model (dump_mode all, the same clip many times, one comparison per run) against
# its golden dumps;
# prints MB/s of both (warm page cache) and the ratio (target >= 0.5).
# usage: bench/compare_bench.sh [BUILD_DIR] [MB]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${1:-$root/build}" && pwd)
target_mb=${2:-500}
models=$("$root/tests/data/fetch_models.sh" | tail -n 1)
nb="$build/app/nanobench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NANOBENCH_DB="$work/runs.db"
mkdir -p "$work/data"
node -e "
const fs = require('fs'); let s = 7;
const rnd = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648 * 2 - 1; };
for (let b = 0; b < 4; b++) { const x = new Float32Array(2432).map(rnd);
  fs.writeFileSync('$work/data/' + b + '.bin', Buffer.from(x.buffer)); }"
"$nb" calibrate --model "$models/embedding_model.onnx" --save_path "$work/q" \
    --input_shape "input_1:1,76,32,1" --data_dir "$work/data" --batch_num 4 >/dev/null 2>&1
(cd "$work" && "$nb" atc --mode=30 --framework=5 --soc_version=Ascend035A --model=q_deploy_model.onnx \
    --output=emb --input_fp16_nodes=input_1 --input_shape=input_1:1,76,32,1 --output_type=FP16 >/dev/null 2>&1)
printf '{"dump": {"dump_list": [{"model_name": "emb"}], "dump_path": "%s/npu", "dump_mode": "all"}}\n' "$work" >"$work/acl.json"
"$nb" infer "$models/embedding_model.onnx" --input_shape "input_1:1,76,32,1" --input "input_1=$work/data/0.bin" \
    --output-dir "$work/gout" --dump "$work/gold" >/dev/null 2>&1
size_mb() { if [ -d "$1" ]; then du -sm "$1" | cut -f1; else echo 0; fi; }
while [ "$(size_mb "$work/npu")" -lt "$target_mb" ]; do
    "$nb" run "$work/emb.exeom" --input "input_1=$work/data/0.bin" --dump "$work/acl.json" --output-dir "$work/o" >/dev/null 2>&1
done
# one comparison per run (compare takes one run's dumps: a folder of two runs is refused), each
# against the golden dumps; cat reads the same files the same number of times
runs=$(find "$work/npu" -mindepth 1 -maxdepth 1 -type d | sort)
n=$(echo "$runs" | wc -l)
mb=$(( $(size_mb "$work/npu") + n * $(size_mb "$work/gold") ))
find "$work/npu" "$work/gold" -type f -exec cat {} + >/dev/null # warm the page cache
t0=$(date +%s.%N)
for r in $runs; do find "$r" "$work/gold" -type f -exec cat {} + >/dev/null; done
t1=$(date +%s.%N)
i=0
for r in $runs; do
    i=$((i + 1))
    "$nb" --no-record compare file_compare -m "$r" -g "$work/gold" -out "$work/res$i" >/dev/null
done
t2=$(date +%s.%N)
awk -v mb="$mb" -v a="$t0" -v b="$t1" -v c="$t2" -v n="$n" 'BEGIN {
    cat = mb / (b - a); cmp = mb / (c - b)
    printf "%d MB of dumps (%d runs, each with the golden dumps): cat %.0f MB/s, compare file_compare %.0f MB/s, ratio %.2f\n", mb, n, cat, cmp, cmp / cat }'
