#!/bin/sh
# Activation calibration algorithms on every openWakeWord model that takes embedding
# features (issue 26): embedding_model and each wake-word head of the model cache,
# calibrated on real-speech features (share/examples/openwakeword/make_data.js: espeak-ng +
# sox, through the float melspectrogram and embedding models) with each algorithm, and the
# fake-quant model evaluated against float on the separate evaluation set. Prints one row per
# model: the network output's SQNR (dB) per algorithm, and KL's gap to IFMR.
# The heads read N frames of 96 features, N from the model (nanobench info): the 16-frame
# windows of make_data.js fit hey_jarvis, alexa, hey_mycroft and hey_rhasspy; for timer (34)
# and weather (22) consecutive windows of the same set are joined and cut to N frames.
# usage: bench/calib_algos.sh [BUILD_DIR] [CLIPS]   (needs espeak-ng, sox, node)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
clips=${2:-30}
nb="$build/app/nanobench"
for t in espeak-ng sox node; do
    command -v "$t" >/dev/null || { echo "calib_algos.sh: needs $t (apt-get install espeak-ng sox nodejs)" >&2; exit 2; }
done
models=$("$root/tests/data/fetch_models.sh" | tail -n 1)
data="$(dirname "$models")/owwdata-r$clips"
[ -d "$data/eval/hey_jarvis" ] || node "$root/share/examples/openwakeword/make_data.js" "$nb" "$models" "$data" "$clips" >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
algos="ifmr hfmg minmax percentile kl auto"
# N-frame windows: file k joins windows k, k+1, k+2 of the 16-frame set, cut to N x 96 floats
frames() { # SET N -> folder
    dir="$out/f$2/$1" nfr=$2
    mkdir -p "$dir"
    set -- "$data/$1/hey_jarvis"/*.bin
    n=$#
    i=0
    for f in "$@"; do
        j=$(( (i + 1) % n )); k=$(( (i + 2) % n ))
        eval "g=\${$((j + 1))}; h=\${$((k + 1))}"
        # shellcheck disable=SC2154
        cat "$f" "$g" "$h" | head -c $(( nfr * 96 * 4 )) >"$dir/$(basename "$f")"
        i=$((i + 1))
    done
    echo "$dir"
}
printf '%-22s' model
for a in $algos; do printf ' %10s' "$a"; done
printf ' %12s\n' "KL - IFMR"
for m in embedding_model hey_jarvis_v0.1 alexa_v0.1 hey_mycroft_v0.1 hey_rhasspy_v0.1 timer_v0.1 weather_v0.1; do
    [ -f "$models/$m.onnx" ] || continue
    if [ "$m" = embedding_model ]; then
        shape="--input_shape input_1:1,76,32,1"
        cal="$data/calib/embedding" ev="$data/eval/embedding"
    else
        # the input's name and frame count from the model
        line=$("$nb" --no-record info "$models/$m.onnx" --json | node -e '
const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
const i = j.inputs[0]; console.log(i.name + " " + i.shape[1]);')
        name=${line% *} n=${line#* }
        shape="--input_shape $name:1,$n,96"
        if [ "$n" = 16 ]; then
            cal="$data/calib/hey_jarvis" ev="$data/eval/hey_jarvis"
        else
            cal=$(frames calib "$n") ev=$(frames eval "$n")
        fi
    fi
    printf '%-22s' "$m"
    ifmr=""
    kl=""
    for a in $algos; do
        # shellcheck disable=SC2086
        if "$nb" --no-record calibrate --model "$models/$m.onnx" $shape --save_path "$out/$m-$a" \
            --data_dir "$cal" --batch_num "$clips" --algo "$a" --eval_dir "$ev" --json \
            >"$out/r.json" 2>"$out/err"; then
            v=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).output_sqnr_db.toFixed(1))' "$out/r.json")
        else
            v=error
            sed 's/^/  /' "$out/err" >&2
        fi
        [ "$a" = ifmr ] && ifmr=$v
        [ "$a" = kl ] && kl=$v
        printf ' %10s' "$v"
    done
    echo "$kl $ifmr" | awk '$1 ~ /^-?[0-9.]+$/ && $2 ~ /^-?[0-9.]+$/ { printf " %12.1f\n", $1 - $2; next } { printf " %12s\n", "-" }'
done
