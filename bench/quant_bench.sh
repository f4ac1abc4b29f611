#!/bin/sh
# Quantization quality and speed (issue 4): calibrate embedding_model and hey_jarvis_v0.1 on
# real-speech features (share/examples/openwakeword/make_data.js: espeak-ng + sox, run
# through the float melspectrogram and embedding models), with each activation algorithm,
# and evaluate the fake-quant model against float on a separate evaluation set (other
# voices and phrases). Prints, per model and algorithm: network-output cosine, SQNR, the
# worst clip's cosine, the largest output difference (hey_jarvis: the score), and the
# calibration time against 100 float forward passes of the same model (target <= 2x).
# usage: bench/quant_bench.sh [BUILD_DIR] [CLIPS]   (needs espeak-ng, sox, node)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
clips=${2:-100}
nb="$build/app/nanobench"
for t in espeak-ng sox node; do
    command -v "$t" >/dev/null || { echo "quant_bench.sh: needs $t (apt-get install espeak-ng sox nodejs)" >&2; exit 2; }
done
models=$("$root/tests/data/fetch_models.sh" | tail -n 1)
data="$(dirname "$models")/owwdata-r$clips" # r: made with sox -R (repeatable)
[ -d "$data/eval/hey_jarvis" ] || node "$root/share/examples/openwakeword/make_data.js" "$nb" "$models" "$data" "$clips" >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
now() { date +%s%N; }
# float forward time per inference (bench_ref, the same cases as bench/run.sh)
fwd_emb=$("$build/bench/bench_ref" "$root/tests/oracle/recipes.tsv" "$models" embedding_b1 2 | awk '{print $2}')
fwd_jar=$("$build/bench/bench_ref" "$root/tests/oracle/recipes.tsv" "$models" jarvis_else 2 | awk '{print $2}')
printf '%-16s %-10s %10s %9s %11s %12s %10s %8s %10s\n' model algorithm cosine "SQNR dB" "worst cos" "max |diff|" "calib ms" "x 100fwd" "command ms"
for m in embedding hey_jarvis; do
    case $m in
        embedding) file=embedding_model.onnx; shape="--input_shape input_1:1,76,32,1"; fwd=$fwd_emb ;;
        hey_jarvis) file=hey_jarvis_v0.1.onnx; shape=""; fwd=$fwd_jar ;;
    esac
    for algo in ifmr hfmg minmax percentile kl auto ifmr-s16 ifmr-nobc; do
        # ifmr-s16: every activation int16 (the cube's s16 x s8 mode, AMCT's dst_type INT16);
        # ifmr-nobc: without the bias correction
        case $algo in
            ifmr-s16) printf 'batch_num: %s\ncommon_config { ifmr_quantize { dst_type: INT16 } }\n' "$clips" >"$out/s16.cfg"
                      set -- --calibration_config "$out/s16.cfg" ;;
            ifmr-nobc) set -- --batch_num "$clips" --algo ifmr --no_bias_correction ;;
            *) set -- --batch_num "$clips" --algo "$algo" ;;
        esac
        t0=$(now)
        # shellcheck disable=SC2086
        "$nb" --no-record calibrate --model "$models/$file" $shape --save_path "$out/$m-$algo" \
            --data_dir "$data/calib/$m" "$@" --eval_dir "$data/eval/$m" --json >"$out/$m-$algo.json"
        t1=$(now)
        node -e '
const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const [m, a, ms, fwd] = process.argv.slice(2);
const f = (v, d) => v === null ? "-" : v.toFixed(d);
console.log(m.padEnd(16), a.padEnd(10), f(j.output_cosine, 6).padStart(10),
            f(j.output_sqnr_db, 1).padStart(9), f(j.output_worst_cosine, 6).padStart(11),
            f(j.output_max_abs_diff, 4).padStart(12), j.calibration_ms.toFixed(0).padStart(10),
            (j.calibration_ms * 100 / Number(process.argv[6]) / (100 * Number(fwd))).toFixed(2).padStart(8),
            ms.padStart(10));
' "$out/$m-$algo.json" "$m" "$algo" "$(( (t1 - t0) / 1000000 ))" "$fwd" "$clips"
    done
done
echo "calibration: $clips clips of $data/calib, evaluation: $data/eval (other voices and phrases);"
echo "calib ms: $clips forward passes with histograms and channel means, the algorithm's search, ARQ and bias"
echo "correction (the command's own clock); x 100fwd: that time per 100 clips over 100 float forward passes"
echo "(bench_ref: embedding $fwd_emb ms, hey_jarvis $fwd_jar ms); command ms: the whole command with"
echo "process start, loading, the three files and the evaluation on the $clips evaluation clips"
