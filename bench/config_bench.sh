#!/bin/sh
# The calibration config parser's growth (issue 25): calibrate with 10k, 40k and 200k
# override_layer_configs entries (the config is refused after parsing, for its names are
# not layers of the model, so the time is the parse and the check). Prints each time, the
# time per entry and its ratio to the 10k run's (1 when linear; the quadratic parser gave
# 3.5 at 40k and over 20 at 200k: 0.22 s, 2.8 s, > 60 s).
# usage: bench/config_bench.sh BUILD_DIR
set -eu
B=$(cd "$1" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/tests/make_fixture" conv "$T/c.onnx"
mkdir -p "$T/x"
node -e 'const h = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (1, 3, 8, 8), }";
  const pad = " ".repeat((64 - (10 + h.length + 1) % 64) % 64) + "\n", hb = Buffer.from(h + pad, "latin1");
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, hb.length & 255, hb.length >> 8]);
  require("fs").writeFileSync(process.argv[1], Buffer.concat([pre, hb, Buffer.alloc(768)]));' "$T/x/b.npy"
base=""
for n in 10000 40000 200000; do
    awk -v n="$n" 'BEGIN { print "batch_num: 1"; for (i = 0; i < n; i++)
        printf "override_layer_configs { layer_name: \"layer_%d\" calibration_config { arq_quantize { channel_wise: true } } }\n", i }' >"$T/c$n.cfg"
    s=$(date +%s.%N)
    "$B/app/nanobench" --no-record calibrate --model "$T/c.onnx" --save_path "$T/q/c" --data_dir "$T/x" \
        --calibration_config "$T/c$n.cfg" >/dev/null 2>&1 || true
    e=$(date +%s.%N)
    per=$(awk -v s="$s" -v e="$e" -v n="$n" 'BEGIN { print (e - s) * 1e6 / n }')
    [ -n "$base" ] || base=$per
    awk -v s="$s" -v e="$e" -v n="$n" -v per="$per" -v base="$base" 'BEGIN {
        printf "%7d overrides: %6.3f s, %5.2f us per entry, x%.2f the 10k run\x27s\n", n, e - s, per, per / base }'
done
