#!/bin/sh
# Pipeline check: does openWakeWord's hey_jarvis pipeline (melspectrogram -> embedding_model ->
# hey_jarvis_v0.1 first stage) still detect the wake word once it runs on the simulated Nano NPU?
#   1. synthesizes clips with espeak-ng and sox (16 kHz mono s16le, 1 s of lead-in and 0.8 s of
#      tail, a microphone-like noise floor): evaluation clips, "hey jarvis" in 10 voice/speed
#      combinations (2 of them in noise) and 8 negatives (other phrases, a near miss, noise,
#      silence), and calibration clips in other voices and phrases;
#   2. runs the float pipeline (oww_float.js, ONNX Runtime) over the calibration clips and keeps
#      inputs in each model's streaming shape (mel [1,1760], embedding [1,76,32,1],
#      hey_jarvis [1,16,96]) as calibration data;
#   3. brings up each model (bring_up below: calibrate + atc with scripts/demo.sh's flags; the
#      mel model compiled for [1,1760], hey_jarvis cut at its first-stage score Sigmoid_28);
#   4. runs every evaluation clip through the float pipeline and through the NPU pipeline
#      (oww_npu: the three exeoms chained through the ACL API), 80 ms frames, and prints per
#      clip the peak first-stage score of both and the detections at 0.5, then the detection
#      agreement, the largest score difference and the NPU cycles per 80 ms frame at 64 MHz.
# Both sides score hey_jarvis's first stage (tensor p1.1, Sigmoid_28): the NPU runs only that
# (the If that runs the second stage is CPU-only); the float model's full output is shown too.
#
# usage: share/examples/openwakeword/run.sh
# env:   NANOBENCH_CACHE  models in $NANOBENCH_CACHE/models, ONNX Runtime in .../ort
#                         (tests/data/fetch_models.sh --with-ort)
#        NANOBENCH_BUILD  the build folder (default: the repository's build/)
#        OWW_WORK         the work folder (default ${TMPDIR:-/tmp}/nanobench-oww), rebuilt
#        OWW_BRINGUP=1    bring the models up with `nanobench bringup` (when it exists)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${NANOBENCH_BUILD:-$root/build}
nb=$build/app/nanobench
npu=$build/share/examples/openwakeword/oww_npu
cache=${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}
models=$cache/models
ort=$cache/ort
work=${OWW_WORK:-${TMPDIR:-/tmp}/nanobench-oww}
ncal=32 # calibration inputs per model
t_start=$(date +%s)

die() { echo "run.sh: $*" >&2; exit 2; }
for t in espeak-ng sox soxi node; do
    command -v $t >/dev/null 2>&1 || die "$t is needed (apt-get install espeak-ng sox nodejs)"
done
if [ ! -x "$nb" ] || [ ! -x "$npu" ]; then die "build first: scripts/build.sh $build (needs $nb and $npu)"; fi
for m in melspectrogram embedding_model hey_jarvis_v0.1; do
    [ -f "$models/$m.onnx" ] || die "$models/$m.onnx is missing: tests/data/fetch_models.sh --with-ort"
done
[ -d "$ort/node_modules/onnxruntime-node" ] || die "no ONNX Runtime in $ort: tests/data/fetch_models.sh --with-ort"
case $work in /|"$HOME"|"$root") die "OWW_WORK=$work: not a work folder" ;; esac
case $work in *[[:space:]]*) die "OWW_WORK=$work: a folder without spaces, please" ;; esac
rm -rf "$work"
mkdir -p "$work/clips/calib" "$work/clips/eval" "$work/tmp"
tmp=$work/tmp

# ---- 1. clips -------------------------------------------------------------------------------
# IN.wav (16 kHz) plus white noise at amplitude VOL (0.0005 of full scale: a microphone's noise
# floor) -> OUT.raw (s16le). sox -R: repeatable (the same bytes on every run).
with_noise() {
    sox -R -n -r 16000 -c 1 -b 16 -e signed-integer "$tmp/n.wav" synth "$(soxi -D "$1")" whitenoise vol "$2"
    sox -R -m -v 1 "$1" -v 1 "$tmp/n.wav" -t raw -e signed-integer -b 16 "$3"
}
# speech OUT.raw VOICE SPEED NOISE_VOL TEXT...: an espeak-ng utterance, 1 s before, 0.8 s after
speech() {
    out=$1 voice=$2 speed=$3 vol=$4
    shift 4
    espeak-ng -v "$voice" -s "$speed" -w "$tmp/u.wav" "$*"
    sox -R "$tmp/u.wav" -r 16000 -c 1 -b 16 -e signed-integer "$tmp/s.wav" pad 1.0 0.8
    with_noise "$tmp/s.wav" "$vol" "$out"
}
# noise OUT.raw KIND VOL: 3 s of KIND noise (white, pink, brown) or silence (VOL 0)
noise() {
    sox -R -n -r 16000 -c 1 -b 16 -e signed-integer "$tmp/s.wav" synth 3 "$2noise" vol "$3"
    with_noise "$tmp/s.wav" 0.0005 "$1"
}
floor=0.0005 loud=0.02
c=$work/clips/eval
list=$work/clips/eval.tsv # clip, expected
: >"$list"
pos() { speech "$c/$1.raw" "$2" "$3" "$4" hey jarvis; printf '%s\tpositive\n' "$1" >>"$list"; }
neg() { n=$1; shift; speech "$c/$n.raw" "$@"; printf '%s\tnegative\n' "$n" >>"$list"; }
pos p01_scotland_130 en-gb-scotland 130 $floor
pos p02_us-f2_160 en-us+f2 160 $floor
pos p03_caribbean_190 en-029 190 $floor
pos p04_us-m7_145 en-us+m7 145 $floor
pos p05_rp_175 en-gb-x-rp 175 $floor
pos p06_nyc-f4_130 en-us-nyc+f4 130 $floor
pos p07_lancaster_160 en-gb-x-gbclan 160 $floor
pos p08_midlands-f5_190 en-gb-x-gbcwmd+f5 190 $floor
pos p09_us-f2_130_noisy en-us+f2 130 $loud
pos p10_caribbean_160_noisy en-029 160 $loud
neg n01_hey_travis en-gb-scotland 160 $floor hey travis
neg n02_timer en-us+f2 160 $floor set a timer for ten minutes
neg n03_call_mother en-029 160 $floor call my mother
neg n04_weather en-us+m7 160 $floor what is the weather
neg n05_lights_off en-gb-x-rp 160 $floor turn off the lights
neg n06_jasmine en-us-nyc+f4 145 $floor hey jasmine
noise "$c/n07_pink_noise.raw" pink 0.05; printf 'n07_pink_noise\tnegative\n' >>"$list"
noise "$c/n08_silence.raw" white 0; printf 'n08_silence\tnegative\n' >>"$list"
# calibration: other voices (and mostly other phrases) than the evaluation's
c=$work/clips/calib
speech "$c/c01.raw" en-us 130 $floor hey jarvis
speech "$c/c02.raw" en-gb 160 $floor hey jarvis
speech "$c/c03.raw" en-us+f3 190 $floor hey jarvis
speech "$c/c04.raw" en-gb+m3 145 $loud hey jarvis
speech "$c/c05.raw" en-us+m1 160 $floor hey jarvis turn on the lights
speech "$c/c06.raw" en-gb+f1 130 $floor what time is it
speech "$c/c07.raw" en-us 175 $loud play some music
speech "$c/c08.raw" en-gb 145 $floor hey there
speech "$c/c09.raw" en-us+f3 160 $floor good morning jarvis
speech "$c/c10.raw" en-gb+m3 190 $floor open the garage door
noise "$c/c11.raw" brown 0.1
noise "$c/c12.raw" white 0.01
echo "== clips: $(wc -l <"$list") for evaluation (10 \"hey jarvis\", 8 negatives), 12 for calibration (other voices), in $work/clips"

# ---- 2. calibration data in the streaming shapes ---------------------------------------------
node "$here/oww_float.js" "$ort" "$models" --calib "$work/calib" --calib-n $ncal "$work/clips/calib"/*.raw \
    >"$work/calib.log" 2>&1 || { cat "$work/calib.log"; die "oww_float.js --calib failed"; }
echo "== calibration data: $ncal inputs per model from the float pipeline on the calibration clips"

# ---- 3. bring-up ---------------------------------------------------------------------------
# bring_up NAME MODEL DATA INPUT SHAPE [ATC FLAGS...]: MODEL calibrated on the inputs in folder
# DATA and compiled to $work/npu/NAME/NAME.exeom. The one place that turns into `nanobench bringup`.
bring_up() {
    name=$1 model=$2 data=$3 input=$4 shape=$5
    shift 5
    dir=$work/npu/$name
    mkdir -p "$dir"
    if [ "${OWW_BRINGUP:-0}" = 1 ]; then # issue 10's command (not in nanobench yet)
        "$nb" bringup "$model" --data_dir "$data" --input_shape "$shape" --out "$dir" \
            --batch_num $ncal --output="$dir/$name" --input_fp16_nodes="$input" --output_type=FP16 "$@" \
            >"$dir/bringup.log" 2>&1 || { cat "$dir/bringup.log"; die "nanobench bringup $model failed"; }
    else
        "$nb" calibrate --model "$model" --save_path "$dir/$name" --data_dir "$data" \
            --input_shape "$shape" --batch_num $ncal >"$dir/calibrate.log" 2>&1 ||
            { cat "$dir/calibrate.log"; die "nanobench calibrate $model failed"; }
        cal_run=$(sed -n 's/^recorded as run \([0-9]*\) .*/\1/p' "$dir/calibrate.log")
        "$nb" ${cal_run:+--parent $cal_run} atc --mode=30 --framework=5 --soc_version=Ascend035A \
            --model="$dir/${name}_deploy_model.onnx" --output="$dir/$name" --input_fp16_nodes="$input" \
            --input_shape="$shape" --output_type=FP16 "$@" >"$dir/atc.log" 2>&1 ||
            { cat "$dir/atc.log"; die "nanobench atc $model failed"; }
    fi
    [ -f "$dir/$name.exeom" ] || die "no $dir/$name.exeom"
    printf '   %-11s %s: %s bytes; calibration: %s\n' "$name" "$dir/$name.exeom" \
        "$(wc -c <"$dir/$name.exeom" | tr -d ' ')" \
        "$(sed -n 's/^network output[^:]*: *//p' "$dir/calibrate.log" "$dir/bringup.log" 2>/dev/null | head -n 1)"
}
echo "== bring-up (calibrate + atc) of the three models"
bring_up mel "$models/melspectrogram.onnx" "$work/calib/mel" input "input:1,1760"
bring_up embedding "$models/embedding_model.onnx" "$work/calib/embedding" input_1 "input_1:1,76,32,1"
bring_up hey_jarvis "$models/hey_jarvis_v0.1.onnx" "$work/calib/wakeword" x.1 "x.1:1,16,96" --out_nodes="Sigmoid_28:0"

# ---- 4. both pipelines on the evaluation clips ---------------------------------------------
clips=$(cut -f 1 "$list" | sed "s|.*|$work/clips/eval/&.raw|")
# shellcheck disable=SC2086 # the clip paths have no spaces (names above, $work checked above)
node "$here/oww_float.js" "$ort" "$models" --scores --mel-out "$work/float_mel" $clips >"$work/float.txt" 2>"$work/float.err" ||
    { cat "$work/float.err"; die "oww_float.js failed"; }
# shellcheck disable=SC2086
"$npu" --scores "$work/npu/mel/mel.exeom" "$work/npu/embedding/embedding.exeom" \
    "$work/npu/hey_jarvis/hey_jarvis.exeom" $clips >"$work/npu.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu failed"; }
# the same with the float pipeline's mel frames: the embedding and hey_jarvis exeoms alone
# shellcheck disable=SC2086
"$npu" --scores --mel-from "$work/float_mel" "$work/npu/mel/mel.exeom" "$work/npu/embedding/embedding.exeom" \
    "$work/npu/hey_jarvis/hey_jarvis.exeom" $clips >"$work/npu_float_mel.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu --mel-from failed"; }

echo "== per clip: peak first-stage score (hey_jarvis Sigmoid_28) over the clip's 80 ms frames"
echo "   (NPU: the three exeoms; NPU/float mel: embedding and hey_jarvis exeoms on the float pipeline's"
echo "    mel frames; max|diff|: the largest |float - NPU| over the clip's frames; fp16 sat.: results"
echo "    clamped at +-65504 over the clip in each exeom; float full: the model's own output, with its"
echo "    CPU-only second stage)"
awk -v list="$list" -v fl="$work/float.txt" -v np="$work/npu.txt" -v nm="$work/npu_float_mel.txt" '
# scores FILE TAG: the "score FRAME S" lines into sc[TAG, clip, frame], the "clip" lines into
# peak[TAG, clip] (and the line`s fields k, v after "scored" into ex[TAG, clip, k] = v)
function scores(file, tag,    line, a, na, k, j) {
    k = 1
    while ((getline line < file) > 0) {
        na = split(line, a, " ")
        if (a[1] == "score") sc[tag, k, a[2]] = a[3]
        else if (a[1] == "clip") {
            peak[tag, k] = a[8]
            for (j = 9; j < na; j += 2) ex[tag, k, a[j]] = a[j + 1]
            k++
        } else if (a[1] == "npu:") budget[tag] = substr(line, 6)
    }
    close(file)
}
# the largest |float - TAG| over clip i`s frames
function maxdiff(tag, i,    key, p, d, m) {
    m = 0
    for (key in sc) {
        split(key, p, SUBSEP)
        if (p[1] != "f" || p[2] != i || !(("" tag, i, p[3]) in sc)) continue
        d = sc["f", i, p[3]] - sc[tag, i, p[3]]
        if (d < 0) d = -d
        if (d > m) m = d
    }
    return m
}
function yn(x) { return x >= 0.5 ? "yes" : "no" }
BEGIN {
    n = 0
    while ((getline line < list) > 0) { split(line, a, "\t"); n++; name[n] = a[1]; want[n] = a[2] == "positive" ? "yes" : "no"; lab[n] = a[2] }
    scores(fl, "f"); scores(np, "n"); scores(nm, "m")
    printf "%-24s %-8s %8s %8s %8s %9s %6s %6s %8s  %s\n", "clip", "expected", "float", "NPU", "NPU/", "max|diff|", "float", "NPU", "float", "NPU fp16 sat."
    printf "%-24s %-8s %8s %8s %8s %9s %6s %6s %8s  %s\n", "", "", "peak", "peak", "float mel", "frames", "@0.5", "@0.5", "full", "mel/emb/hj"
    for (i = 1; i <= n; i++) {
        d = maxdiff("n", i); dm = maxdiff("m", i)
        fd = yn(peak["f", i]); nd = yn(peak["n", i]); md = yn(peak["m", i])
        agree += fd == nd; agree_m += fd == md
        fok += fd == want[i]; nok += nd == want[i]; mok += md == want[i]
        if (d >= maxd) { maxd = d; maxc = name[i] }
        if (dm >= maxdm) { maxdm = dm; maxcm = name[i] }
        printf "%-24s %-8s %8.4f %8.4f %8.4f %9.4f %6s %6s %8.4f  %s\n", name[i], lab[i], peak["f", i], peak["n", i], peak["m", i], d, fd, nd, ex["f", i, "full_peak"], ex["n", i, "sat"]
    }
    printf "detection agreement with float at 0.5: NPU %d of %d clips; NPU on float mel %d of %d\n", agree, n, agree_m, n
    printf "right against the label: float %d of %d, NPU %d of %d, NPU on float mel %d of %d\n", fok, n, nok, n, mok, n
    printf "max |score difference| over all frames: NPU %.4f (%s); NPU on float mel %.4f (%s)\n", maxd, maxc, maxdm, maxcm
    printf "NPU budget: %s\n", budget["n"]
}'
echo "== took $(( $(date +%s) - t_start )) s; outputs in $work (float.txt, npu.txt, npu_float_mel.txt: per-frame scores)"
