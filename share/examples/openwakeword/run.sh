#!/bin/sh
# Pipeline check: does openWakeWord's hey_jarvis pipeline (melspectrogram -> embedding_model ->
# hey_jarvis_v0.1, whole) still detect the wake word once it runs on the simulated Nano NPU,
# and if not, which layer breaks it?
#   1. synthesizes clips with espeak-ng and sox (16 kHz mono s16le, 1 s of lead-in and 0.8 s of
#      tail, a microphone-like noise floor): 108 evaluation clips, "hey jarvis" in 12 voices x 5
#      conditions (speeds, pitches, loud noise, a whisper's level, a shout with reverb) and 48
#      negatives (near misses such as "hey travis" and "hey marvin", other phrases, noises,
#      silence), and calibration clips in other voices and phrases;
#   2. runs the float pipeline (oww_float.js, ONNX Runtime) over the calibration clips and keeps
#      inputs in each model's streaming shape (mel [1,1760], embedding [1,76,32,1],
#      hey_jarvis [1,16,96]) as calibration data, and over the evaluation clips: their float
#      scores, and 12 evaluation inputs per model for the bring-ups (evenly spaced over their
#      frames, the loudest first: each bring-up compares every layer on its first);
#   3. brings up each model with `nanobench bringup` (estimate -> calibrate -> atc -> run on the
#      simulated NPU -> infer -> compare, one summary each): melspectrogram first as is (the
#      summary names the layer that saturates fp16 and atc's advice), then (b) with the
#      --nb_input_scale that atc suggested (read from that bring-up's summary.json), then (c)
#      with it and the layers calibrate suggested at INT16 (a config written from (b)'s
#      summary.json: calibration.suggested_int16), then (d) as the tool places it (--auto_place:
#      the power spectrum's chain on the MCU's CPU in float32, the INT16 layers, and the
#      --nb_input_scale its own fp16 check finds), the effect of (a) to (d) side by side;
#      embedding_model; hey_jarvis whole (its If picks the second stage on the MCU's CPU);
#   4. runs every evaluation clip through the NPU pipeline (oww_npu: the three exeoms chained
#      through the ACL API), 80 ms frames: with the NPU-only melspectrogram (c), as placed (d)
#      (NPU + CPU), with the float
#      melspectrogram's frames (the front end on the host), with the melspectrogram as is (a)
#      and with the scale alone (b);
#      prints per clip the peak score of float and NPU and the detections at 0.5,
#      then the pipeline summary: detection agreement, the largest score difference, the NPU
#      cycles per 80 ms frame at 64 MHz and the real-time margin, and where NPU and float
#      disagree, what the bring-ups' compare and calibration name (report.js).
# Both sides score hey_jarvis's own output (tensor 53): the NPU runs the whole model.
# Every bring-up is recorded in the run history (nanobench history; --db / NANOBENCH_DB).
#
# usage: share/examples/openwakeword/run.sh
# env:   NANOBENCH_CACHE  models in $NANOBENCH_CACHE/models, ONNX Runtime in .../ort
#                         (tests/data/fetch_models.sh --with-ort)
#        NANOBENCH_BUILD  the build folder (default: the repository's build/)
#        OWW_WORK         the work folder (default ${TMPDIR:-/tmp}/nanobench-oww), rebuilt
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
neval=12 # evaluation inputs per model for the bring-ups (from the evaluation clips, loudest first)
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
    sox -V1 -R -n -r 16000 -c 1 -b 16 -e signed-integer "$tmp/n.wav" synth "$(soxi -D "$1")" whitenoise vol "$2"
    sox -V1 -R -m -v 1 "$1" -v 1 "$tmp/n.wav" -t raw -e signed-integer -b 16 "$3"
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
# say OUT.raw VOICE SPEED PITCH NOISE GAIN REVERB TEXT...: an espeak-ng utterance at PITCH
# (0-99), scaled by GAIN (0.15: a whisper's level; 3: a shout, clipped where it passes full
# scale), with sox's reverb at REVERB (0: none), 1 s before and 0.8 s after, in NOISE
say() {
    out=$1 voice=$2 speed=$3 pitch=$4 vol=$5 gain=$6 rev=$7
    shift 7
    espeak-ng -v "$voice" -s "$speed" -p "$pitch" -w "$tmp/u.wav" "$*"
    fx=""
    [ "$rev" = 0 ] || fx="reverb $rev"
    # shellcheck disable=SC2086 # fx: no effect, or "reverb N"
    sox -V1 -R "$tmp/u.wav" -r 16000 -c 1 -b 16 -e signed-integer "$tmp/s.wav" vol "$gain" $fx pad 1.0 0.8
    with_noise "$tmp/s.wav" "$vol" "$out"
}
# the evaluation: "hey jarvis" in 12 voices x 5 conditions (speed 130 to 175 words a minute,
# pitch 30 to 70, the noise floor or loud white noise, a whisper's level, a shout with reverb),
# and 48 negatives: near misses and other phrases in 7 of the voices, noises and silence
voices="en-gb-scotland en-us+f2 en-029 en-us+m7 en-gb-x-rp en-us-nyc+f4 en-gb-x-gbclan en-gb-x-gbcwmd+f5 en-us+m4 en-gb-scotland+f4 en-029+m2 en-us-nyc+m6"
conds="130:50:$floor:1:0 175:30:$floor:1:0 155:70:$loud:1:0 145:50:$floor:0.15:0 165:45:$floor:3:50"
i=0
for v in $voices; do
    k=0
    for cond in $conds; do
        i=$((i + 1)) k=$((k + 1))
        IFS=: read -r sp pi no ga re <<EOF_COND
$cond
EOF_COND
        name=$(printf 'p%03d_%s_c%d' "$i" "$(echo "$v" | tr '+' '-')" "$k")
        say "$c/$name.raw" "$v" "$sp" "$pi" "$no" "$ga" "$re" hey jarvis
        printf '%s\tpositive\n' "$name" >>"$list"
    done
done
i=0
for phrase in "hey travis" "hey jasmine" "hey marvin" "harvest moon" "hey service" "turn off the lights"; do
    j=0
    for v in $voices; do
        j=$((j + 1))
        [ $j -le 7 ] || break
        i=$((i + 1))
        name=$(printf 'n%03d_%s' "$i" "$(echo "$phrase" | tr ' ' '_')")
        # shellcheck disable=SC2086 # the phrase's words as espeak-ng's text
        say "$c/$name.raw" "$v" $((130 + 8 * j)) $((35 + 5 * j)) $floor 1 0 $phrase
        printf '%s\tnegative\n' "$name" >>"$list"
    done
done
for nz in pink:0.05 brown:0.1 white:0.01 white:0 pink:0.2 white:0.05; do
    i=$((i + 1))
    name=$(printf 'n%03d_%s_noise_%s' "$i" "${nz%%:*}" "${nz#*:}")
    noise "$c/$name.raw" "${nz%%:*}" "${nz#*:}"
    printf '%s\tnegative\n' "$name" >>"$list"
done
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
echo "== clips: $(wc -l <"$list") for evaluation ($(grep -c positive "$list") \"hey jarvis\", $(grep -c negative "$list") negatives), 12 for calibration"
echo "   (other voices), in $work/clips"

# ---- 2. the float pipeline: calibration data in the streaming shapes, the evaluation clips ----
node "$here/oww_float.js" "$ort" "$models" --calib "$work/calib" --calib-n $ncal "$work/clips/calib"/*.raw \
    >"$work/calib.log" 2>&1 || { cat "$work/calib.log"; die "oww_float.js --calib failed"; }
clips=$(cut -f 1 "$list" | sed "s|.*|$work/clips/eval/&.raw|")
# shellcheck disable=SC2086 # the clip paths have no spaces (names above, $work checked above)
node "$here/oww_float.js" "$ort" "$models" --scores --mel-out "$work/float_mel" --calib "$work/evalin" \
    --calib-n $neval --loud-first $clips >"$work/float.txt" 2>"$work/float.err" || { cat "$work/float.err"; die "oww_float.js failed"; }
# the floor of every placement: float32 compute with each model's input rounded to fp16 (the
# chip's model I/O)
# shellcheck disable=SC2086
node "$here/oww_float.js" "$ort" "$models" --scores --fp16-inputs $clips >"$work/float_fp16io.txt" 2>"$work/float.err" ||
    { cat "$work/float.err"; die "oww_float.js --fp16-inputs failed"; }
echo "== float pipeline (ONNX Runtime): $ncal calibration inputs per model in its streaming shape"
echo "   from the calibration clips; the evaluation clips scored, $neval evaluation inputs per model"

# ---- 3. bring-up ---------------------------------------------------------------------------
# bring_up NAME MODEL DATA SHAPE [FLAGS...]: `nanobench bringup` of MODEL on the calibration
# inputs in $work/calib/DATA, evaluated on $work/evalin/DATA, into $work/npu/NAME (the exeom,
# summary.json, log/); its text summary in $work/npu/NAME.txt, its progress in NAME.err
bring_up() {
    name=$1 model=$2 data=$3 shape=$4
    shift 4
    echo "== nanobench bringup $(basename "$model") --input_shape $shape${*:+ $*}"
    "$nb" bringup "$model" --data_dir "$work/calib/$data" --eval_dir "$work/evalin/$data" \
        --eval_count $neval --input_shape "$shape" --out "$work/npu/$name" "$@" \
        >"$work/npu/$name.txt" 2>"$work/npu/$name.err" ||
        { cat "$work/npu/$name.txt" "$work/npu/$name.err"; die "nanobench bringup $model failed"; }
}
# the summary's key lines: the estimate, the run ids and the folder left out
key_lines() { awk '/^[^ ]/ { lab = $1 } lab != "estimate" && lab != "runs" && lab != "out"' "$1"; }
exeom() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).compile.exeom)' "$1"; }
mkdir -p "$work/npu"
# melspectrogram's values are int16-scaled audio and a power spectrum up to 1e11: compare's
# thresholds that grow with the values' scale (RMSE 1, max relative error 1) flag every layer,
# its input's fp16 rounding included; cosine, relative Euclidean distance and KL stay
mel_thr="--threshold=rmse=1e30,mre=1e30"
bring_up mel_as_is "$models/melspectrogram.onnx" mel "input:1,1760" "$mel_thr"
cat "$work/npu/mel_as_is.txt"
scale=$(node "$here/report.js" suggest "$work/npu/mel_as_is/summary.json")
if [ -n "$scale" ]; then
    echo "== atc's advice, read from that summary (compile.suggested_nb_input_scale): --nb_input_scale=\"$scale\""
    bring_up mel_scaled "$models/melspectrogram.onnx" mel "input:1,1760" "$mel_thr" --nb_input_scale="$scale"
    key_lines "$work/npu/mel_scaled.txt"
    scale_flag="--nb_input_scale=$scale"
else
    echo "== atc suggested no --nb_input_scale: melspectrogram stays as it is"
    cp -r "$work/npu/mel_as_is" "$work/npu/mel_scaled"
    scale_flag=
fi
# calibrate's advice (the same calibration in both: the scale is atc's): the layers whose int8
# input rounds its small values to 0, each with its config line; a config of them, batch_num
# the calibration files (bringup's default without a config: every file)
node "$here/report.js" suggest-int16 "$work/npu/mel_scaled/summary.json" >"$work/npu/mel_int16.lines"
if [ -s "$work/npu/mel_int16.lines" ]; then
    { echo "batch_num: $(find "$work/calib/mel" -maxdepth 1 -type f | wc -l)"; cat "$work/npu/mel_int16.lines"; } >"$work/npu/mel_int16.cfg"
    echo "== calibrate's advice, read from that summary (calibration.suggested_int16): $work/npu/mel_int16.cfg"
    sed 's/^/   /' "$work/npu/mel_int16.cfg"
    # shellcheck disable=SC2086 # scale_flag: one word or none
    bring_up mel "$models/melspectrogram.onnx" mel "input:1,1760" "$mel_thr" $scale_flag \
        --calibration_config="$work/npu/mel_int16.cfg"
    key_lines "$work/npu/mel.txt"
    int16_flag="--calibration_config=$work/npu/mel_int16.cfg"
else
    echo "== calibrate suggested no INT16 layer: melspectrogram stays int8"
    cp -r "$work/npu/mel_scaled" "$work/npu/mel"
    int16_flag=
fi
# (d) as the tool places it: --auto_place (calibrate's advice: the layer whose input no int16
# step holds on some calibration input, and the ops around it beyond fp16, run on the MCU's
# CPU in float32), calibrate's INT16 layers, and the --nb_input_scale that the bring-up's own
# fp16 check then finds and measures (its saturation fix), in a second bring-up
# shellcheck disable=SC2086 # int16_flag: one word or none
bring_up mel_placed_try "$models/melspectrogram.onnx" mel "input:1,1760" "$mel_thr" --auto_place $int16_flag
fix=$(node "$here/report.js" fix "$work/npu/mel_placed_try/summary.json")
echo "== placed: the bring-up's own fp16 fix: ${fix:-none needed}"
# shellcheck disable=SC2086
bring_up mel_placed "$models/melspectrogram.onnx" mel "input:1,1760" "$mel_thr" --auto_place $int16_flag \
    ${fix:+--nb_input_scale=$fix}
key_lines "$work/npu/mel_placed.txt"
node "$here/report.js" effect "$work/npu/mel_as_is/summary.json" "$work/npu/mel_scaled/summary.json" \
    "$work/npu/mel/summary.json" "$work/npu/mel_placed/summary.json"
bring_up embedding "$models/embedding_model.onnx" embedding "input_1:1,76,32,1"
key_lines "$work/npu/embedding.txt"
bring_up hey_jarvis "$models/hey_jarvis_v0.1.onnx" wakeword "x.1:1,16,96"
key_lines "$work/npu/hey_jarvis.txt"
# (e) as searched (issue 40): each model brought up with the precision and placement search,
# every configuration calibrated, compiled and run on the simulator. Targets: the pooled output
# SQNR over the evaluation inputs (measured here: with the embedding at 36.6 dB and hey_jarvis
# at 42.2 dB on the float melspectrogram's frames, no clip's peak moves by 0.1); the cycle
# budgets keep the pipeline within the 80 ms frame at 64 MHz (5,120,000 cycles: the
# melspectrogram as placed about 940,000, the embedding up to 3,200,000, hey_jarvis up to
# 900,000)
# shellcheck disable=SC2086
bring_up mel_searched "$models/melspectrogram.onnx" mel "input:1,1760" "$mel_thr" --auto_place $int16_flag \
    ${fix:+--nb_input_scale=$fix} --target_sqnr "${MEL_TARGET:-40}" --search_max_cycles 1180000
bring_up embedding_searched "$models/embedding_model.onnx" embedding "input_1:1,76,32,1" \
    --target_sqnr "${EMB_TARGET:-36}" --search_max_cycles 3200000
bring_up hey_jarvis_searched "$models/hey_jarvis_v0.1.onnx" wakeword "x.1:1,16,96" \
    --target_sqnr "${WW_TARGET:-40}" --search_max_cycles 900000
for m in mel embedding hey_jarvis; do sed -n '/^search/,/^runs/p' "$work/npu/${m}_searched.txt" | sed '$d'; done
mels_x=$(node "$here/report.js" searched-exeom "$work/npu/mel_searched/summary.json")
embs_x=$(node "$here/report.js" searched-exeom "$work/npu/embedding_searched/summary.json")
wws_x=$(node "$here/report.js" searched-exeom "$work/npu/hey_jarvis_searched/summary.json")
mel_x=$(exeom "$work/npu/mel/summary.json")
mel0_x=$(exeom "$work/npu/mel_as_is/summary.json")
mel1_x=$(exeom "$work/npu/mel_scaled/summary.json")
melp_x=$(exeom "$work/npu/mel_placed/summary.json")
emb_x=$(exeom "$work/npu/embedding/summary.json")
ww_x=$(exeom "$work/npu/hey_jarvis/summary.json")
# shellcheck disable=SC2016 # JavaScript, not the shell
node -e 'const fs = require("fs");
    const ids = [...new Set(process.argv.slice(1).map(f => JSON.parse(fs.readFileSync(f, "utf8")).runs.bringup).filter(Boolean))];
    console.log(ids.length ? `== recorded in the run history: bringup runs ${ids.join(", ")} (nanobench history show RUN: its steps)`
                           : "== not recorded in the run history");' \
    "$work/npu/mel_as_is/summary.json" "$work/npu/mel_scaled/summary.json" "$work/npu/mel/summary.json" \
    "$work/npu/mel_placed/summary.json" "$work/npu/embedding/summary.json" "$work/npu/hey_jarvis/summary.json"

# ---- 4. the NPU pipeline on the evaluation clips --------------------------------------------
# shellcheck disable=SC2086
"$npu" --scores "$mel_x" "$emb_x" "$ww_x" $clips >"$work/npu.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu failed"; }
# the melspectrogram as the tool places it (NPU + the MCU's CPU)
# shellcheck disable=SC2086
"$npu" --scores "$melp_x" "$emb_x" "$ww_x" $clips >"$work/npu_placed.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu (melspectrogram as placed) failed"; }
# the three as searched
# shellcheck disable=SC2086
"$npu" --scores "$mels_x" "$embs_x" "$wws_x" $clips >"$work/npu_searched.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu (as searched) failed"; }
# the embedding and hey_jarvis exeoms on the float pipeline's mel frames
# shellcheck disable=SC2086
"$npu" --scores --mel-from "$work/float_mel" "$mel_x" "$emb_x" "$ww_x" $clips >"$work/npu_float_mel.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu --mel-from failed"; }
# the melspectrogram as is (before atc's advice)
# shellcheck disable=SC2086
"$npu" --scores "$mel0_x" "$emb_x" "$ww_x" $clips >"$work/npu_before.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu (melspectrogram as is) failed"; }
# the melspectrogram with the input scale alone (int8 throughout)
# shellcheck disable=SC2086
"$npu" --scores "$mel1_x" "$emb_x" "$ww_x" $clips >"$work/npu_scaled.txt" 2>"$work/npu.err" ||
    { cat "$work/npu.err"; die "oww_npu (melspectrogram with the scale alone) failed"; }

echo "== streaming check: $(wc -l <"$list") clips, 80 ms frames, peak score (hey_jarvis whole: its output 53)"
PIPELINE_JSON="$work/pipeline.json" node "$here/report.js" pipeline "$list" "$work/float.txt" "$work/npu.txt" "$work/npu_float_mel.txt" \
    "$work/npu_before.txt" "$work/npu/mel/summary.json" "$work/npu/embedding/summary.json" \
    "$work/npu/hey_jarvis/summary.json" "$work/npu_scaled.txt" "$work/npu_placed.txt" "$work/float_fp16io.txt" "$work/npu_searched.txt" ||
    die "report.js pipeline failed"
# the page to hand on: melspectrogram as is against as advised, and the pipeline table
"$nb" report "$work/npu/mel_as_is" "$work/npu/mel_placed" --pipeline "$work/pipeline.json" \
    -o "$work/report.html" >/dev/null || die "nanobench report failed"
echo "== report: $work/report.html (open it in a browser: the melspectrogram as is and as placed side by side,"
echo "   every clip's scores; each bring-up also wrote its own, npu/NAME/report.html)"
echo "== took $(( $(date +%s) - t_start )) s; outputs in $work (npu/*.txt: the bring-ups' summaries;"
echo "   float.txt, npu*.txt: per-frame scores)"
