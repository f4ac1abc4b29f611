#!/bin/sh
# Every ratio the other benchmarks measure, in one table: each script is run RUNS times
# (interleaved: the first run of every script, then the second, ...) and its output lines
# parsed; a row gives the median over the runs, min..max over the runs, the target (read
# from the script's header comment) and whether the median meets it. Above the table: the
# date, git commit, core count (nproc), CPU model, and the load average at start and end.
#   reference vs ONNX Runtime   bench/run.sh, one row per case (that case's median ratio)
#   simulator vs ONNX Runtime   bench/sim_bench.sh, embedding_model and melspectrogram
#   estimate vs onnx.load       bench/estimate_bench.sh: the worst of the nine openWakeWord
#                               models in each run, and PaddleOCR's recognizer. Optional:
#                               needs python3-onnx (apt-get install python3-onnx); without
#                               it the rows say skipped and nothing is installed
#   calibration vs forward      bench/quant_bench.sh's "x 100fwd" column, default algorithm
#                               (ifmr), embedding_model and hey_jarvis, on CLIPS clips; and
#                               bench_calib (both sides interleaved in one process, 20
#                               rounds): calibration of CLIPS clips / CLIPS forward passes
#   arena vs lower bound        nanobench estimate --json (memory.arena / arena_lower_bound)
#                               on the models of tests/oracle/estimate_expected.tsv; it is
#                               deterministic, so one run: median and min..max over models
#   compare vs cat              bench/compare_bench.sh on MB megabytes of dumps
# Settings lighter than the scripts' defaults (RUNS=5 took 4.5 minutes on 2 busy cores),
# overridable from the environment: SECS=1 (run.sh and sim_bench.sh MIN_SECONDS),
# EST_RUNS=3 (estimate_bench.sh RUNS), CLIPS=20 (quant_bench.sh), MB=100 (compare_bench.sh).
# The table goes to stdout, progress to stderr.
# usage: bench/run_all.sh [BUILD_DIR] [RUNS]   (RUNS default 5)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$(cd "${1:-$root/build}" && pwd)
runs=${2:-5}
SECS=${SECS:-1} EST_RUNS=${EST_RUNS:-3} CLIPS=${CLIPS:-20} MB=${MB:-100}
PY=${PYTHON:-/usr/bin/python3}
nb="$build/app/nanobench"
if [ ! -x "$nb" ] || [ ! -x "$build/bench/bench_ref" ]; then
    echo "run_all.sh: no nanobench build in $build (scripts/build.sh $build)" >&2; exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NANOBENCH_DB="$work/runs.db" # nothing the benchmarks record lands in the user's store
start=$(date +%s)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# target OP VALUE from a script's header comment ("(target <= 2.0)", "(target >= 0.5)")
target() { sed -n '/^[^#]/q; s/.*target \([<>=]*\) *\([0-9.]*\).*/\1 \2/p' "$here/$1" | head -n 1; }
t_ref=$(target run.sh) t_sim=$(target sim_bench.sh) t_est=$(target estimate_bench.sh)
t_cal=$(target quant_bench.sh) t_cmp=$(target compare_bench.sh)

have_onnx=yes
"$PY" -c 'import onnx' 2>/dev/null || have_onnx=no

# bench NAME ARGS...: runs bench/NAME once; stdout to $work/out, a failure noted
bench() {
    name=$1; shift
    echo "run_all.sh: run $i/$runs: $name" >&2
    if ! "$here/$name" "$@" >"$work/out" 2>"$work/err"; then
        echo "$name: $(tail -n 1 "$work/err")" >>"$work/failed"
        : >"$work/out"
    fi
}
# values: KEY RATIO lines, one per measurement
vals="$work/vals"
: >"$vals"
i=0
while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    bench run.sh "$build" "$SECS"
    awk 'NR > 1 && NF == 5 { printf "ref:%s %.6f\n", $1, $3 / $4 }' "$work/out" >>"$vals"
    bench sim_bench.sh "$build" "$SECS"
    awk 'NR > 1 && NF == 6 { printf "sim:%s %.6f\n", $1, $2 / $3 }' "$work/out" >>"$vals"
    if [ $have_onnx = yes ]; then
        bench estimate_bench.sh "$build" "$EST_RUNS"
        awk 'NR > 1 && NF == 5 { r = $2 / $3
                 if ($1 ~ /^ch_PP-OCR/) printf "est:ocr %.6f\n", r
                 else { n++; if (r > w) w = r } }
             END { if (n) printf "est:oww %.6f\n", w }' "$work/out" >>"$vals"
    fi
    bench quant_bench.sh "$build" "$CLIPS"
    awk '$2 == "ifmr" && NF == 9 { printf "cal:%s %s\n", $1, $8 }' "$work/out" >>"$vals"
    data=$(dirname "$("$root/tests/data/fetch_models.sh" | tail -n 1)")/owwdata-r$CLIPS/calib
    for m in hey_jarvis embedding; do
        case $m in
            hey_jarvis) f=hey_jarvis_v0.1.onnx; set -- ;;
            embedding) f=embedding_model.onnx; set -- input_1:1,76,32,1 ;;
        esac
        echo "run_all.sh: run $i/$runs: bench_calib $m" >&2
        OPENBLAS_NUM_THREADS=1 "$build/bench/bench_calib" "$(dirname "$data")/../models/$f" "$data/$m" \
            "$CLIPS" 20 - "$@" 2>>"$work/err" | awk -v m=$m '$1 == "ratio" { printf "calin:%s %s\n", m, $2 }' >>"$vals" ||
            echo "bench_calib $m failed" >>"$work/failed"
    done
    bench compare_bench.sh "$build" "$MB"
    awk '/MB of dumps/ { printf "cmp %s\n", $NF }' "$work/out" >>"$vals"
done
echo "run_all.sh: arena" >&2
models=$("$root/tests/data/fetch_models.sh" | tail -n 1)
tail -n +2 "$root/tests/oracle/estimate_expected.tsv" | while IFS="$(printf '\t')" read -r file shape _; do
    set -- --no-record estimate -m "$models/$file" --json
    [ "$shape" != "-" ] && set -- "$@" --input_shape "$shape"
    "$nb" "$@" 2>/dev/null | node -e '
let s = ""; process.stdin.on("data", (d) => s += d).on("end", () => {
  const m = JSON.parse(s).memory;
  console.log("arena", (m.arena / m.arena_lower_bound).toFixed(6)); });' ||
        echo "arena estimate of $file failed" >>"$work/failed"
done >>"$vals"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
took=$(( $(date +%s) - start ))

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && commit="$commit (with uncommitted changes)"
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
echo "nanobench benchmarks, started $when, commit $commit"
echo "machine: $(nproc) cores, ${cpu:-CPU model unknown}; load average (1, 5, 15 min): $load0 at start, $load1 at end"
echo "runs: $runs (median, min..max over them); SECS=$SECS EST_RUNS=$EST_RUNS CLIPS=$CLIPS MB=$MB; took ${took}s"
echo

# rows: KEY|what|peer|target (OP VALUE or -)
ROWS=$(cat <<EOM
ref:mel_1s|reference mel_1s|ONNX Runtime|$t_ref
ref:mel_chunk|reference mel_chunk|ONNX Runtime|$t_ref
ref:embedding_b1|reference embedding_b1|ONNX Runtime|$t_ref
ref:jarvis_else|reference jarvis_else|ONNX Runtime|$t_ref
ref:jarvis_then|reference jarvis_then|ONNX Runtime|$t_ref
ref:vad_16k|reference vad_16k|ONNX Runtime|$t_ref
sim:embedding_model|simulator embedding_model|ONNX Runtime|$t_sim
sim:melspectrogram|simulator melspectrogram|ONNX Runtime|<= 1.0
est:oww|estimate, worst of 9 oWW models|python onnx.load|$t_est
est:ocr|estimate, PP-OCRv4 rec 10 MB|python onnx.load|$t_est
cal:embedding|calibration embedding (ifmr)|100 forward passes|$t_cal
cal:hey_jarvis|calibration hey_jarvis (ifmr)|100 forward passes|$t_cal
calin:embedding|calibration embedding, in-process|CLIPS forward passes|$t_cal
calin:hey_jarvis|calibration hey_jarvis, in-process|CLIPS forward passes|$t_cal
arena|arena, 9 oWW models (1 run)|lower bound|-
cmp|compare file_compare MB/s|cat MB/s|$t_cmp
EOM
)
sort -k1,1 -k2,2g "$vals" | ROWS=$ROWS awk -v onnx=$have_onnx '
function num(x) { return sprintf(x >= 10 ? "%.1f" : x >= 1 ? "%.2f" : "%.3f", x) }
{ n[$1]++; v[$1, n[$1]] = $2 }
END {
    fmt = "%-34s %-18s %8s %14s %8s %4s\n"
    printf fmt, "what", "peer", "median", "min..max", "target", "met"
    nr = split(ENVIRON["ROWS"], r, "\n")
    for (k = 1; k <= nr; k++) {
        split(r[k], f, "|"); key = f[1]; c = n[key]
        if (key ~ /^est:/ && onnx == "no") {
            printf "%-34s %-18s skipped: python3-onnx not installed (apt-get install python3-onnx)\n", f[2], f[3]
            continue
        }
        if (!c) { printf fmt, f[2], f[3], "failed", "-", f[4], "-"; continue }
        med = c % 2 ? v[key, (c + 1) / 2] : (v[key, c / 2] + v[key, c / 2 + 1]) / 2
        range = num(v[key, 1]) ".." num(v[key, c])
        met = "-"
        if (f[4] != "-") {
            split(f[4], t, " ")
            ok = t[1] == "<=" ? med <= t[2] : t[1] == "<" ? med < t[2] : t[1] == ">=" ? med >= t[2] : med > t[2]
            met = ok ? "yes" : "no"
        }
        printf fmt, f[2], f[3], num(med), range, f[4], met
    }
}'
echo
echo "ratio: our time / the peer's (lower is better), but compare: our MB/s / cat's (higher is"
echo "better) and arena: bytes / the lower bound; met: the median against the target of the"
echo "script's header comment (- where it names none)."
if [ -s "$work/failed" ]; then
    echo
    echo "failures:"
    sed 's/^/  /' "$work/failed"
fi
