#!/bin/sh
# The structural fuzzer (issue 25): message-level mutants of real and fixture models, each
# driven through the commands that read a model, under whatever build BUILD is (the test
# suite and the long run use the AddressSanitizer + UndefinedBehaviorSanitizer build).
#
# usage: fuzz/structural.sh BUILD N [OUT] [FIRST]
#   BUILD  a build folder with app/nanobench, fuzz/mutate_onnx and tests/make_fixture
#   N      mutants in all (spread over the seeds in turn); FIRST: the first mutant's seed
#          number (default 1), so that runs can be split and repeated
#   OUT    where mutants that failed are kept (default: a temporary folder, removed)
#
# Seeds: the fixtures of tests/make_fixture (conv, conv_bn, if_gemm, stft_db, lstm_bidir,
# matmul_sample, conv_unnamed), the QAT exports of tests/data/fq, openWakeWord's models
# when tests/data/fetch_models.sh has fetched them (NANOBENCH_CACHE), and the deploy model
# that calibrate makes of each float seed (atc's and QAT's readers). Mutant i is
# fuzz/mutate_onnx SEED_MODEL M.onnx i. Each mutant goes through
#   atc (its own model), calibrate (one batch of the seed's random data), infer --dump,
#   run --dump of what atc wrote, compare file_compare of the two dumps when both exist,
#   and every 8th mutant bringup,
# each under `timeout 60`. A command fails the run when it ends by a signal, by the
# time-out, or with a sanitizer report on stderr; or when it fails and leaves a partial
# output (a .part, an exeom or dbg beside a failed atc, a scratch folder in TMPDIR). Prints
# a table per command (runs, exit codes, failures) and "N passed, M failed" (mutants),
# exit 1 when a command failed.
set -u
BUILD=$(cd "$1" && pwd); N=$2; OUT=${3:-}; FIRST=${4:-1}
NB=$BUILD/app/nanobench; MUT=$BUILD/fuzz/mutate_onnx; FIX=$BUILD/tests/make_fixture
root=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/nb_structural.XXXXXX")
keep_out=1; [ -n "$OUT" ] || { OUT=$W/failed; keep_out=0; }
mkdir -p "$OUT" "$W/tmp"
trap 'rm -rf "$W"' EXIT
export TMPDIR=$W/tmp NANOBENCH_DB=$W/runs.db NANOBENCH_DB_TIMEOUT_MS=300
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# input_args DIRS: --input flags for the b0.npy of each folder (by index; bare with one)
input_args() {
    n=0; a=""
    for x in $(echo "$1" | tr ';' ' '); do a="$a --input $n=$x/b0.npy"; n=$((n + 1)); done
    [ "$n" -eq 1 ] && a="--input $1/b0.npy"
    echo "$a"
}

# ---- seeds and their data
mkdir -p "$W/seeds"
for k in conv conv_bn if_gemm stft_db lstm_bidir matmul_sample conv_unnamed; do
    "$FIX" "$k" "$W/seeds/$k.onnx" || exit 2
done
cp "$root"/tests/data/fq/*.onnx "$W/seeds/" 2>/dev/null
cache=${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}/models
for m in alexa_v0.1 hey_rhasspy_v0.1 embedding_model melspectrogram hey_mycroft_v0.1; do
    [ -f "$cache/$m.onnx" ] && cp "$cache/$m.onnx" "$W/seeds/"
done
# one random .npy per input of each seed (its declared shape, dynamic dims 1)
for s in "$W"/seeds/*.onnx; do
    b=$(basename "$s" .onnx)
    "$NB" info "$s" --json >"$W/info.json" 2>/dev/null || continue
    node -e '
      const fs = require("fs"), j = JSON.parse(fs.readFileSync(process.argv[1]));
      const dir = process.argv[2]; let names = [];
      j.inputs.forEach((inp, k) => {
        const shape = inp.shape.map(d => (typeof d === "number" && d > 0) ? d : 1);
        const n = shape.reduce((a, b) => a * b, 1);
        let hdr = "{\x27descr\x27: \x27<f4\x27, \x27fortran_order\x27: False, \x27shape\x27: (" +
                  shape.join(", ") + (shape.length === 1 ? "," : "") + "), }";
        const pad = 64 - ((10 + hdr.length + 1) % 64);
        hdr += " ".repeat(pad % 64) + "\n";
        const h = Buffer.alloc(10); h.write("\x93NUMPY", 0, "latin1"); h[6] = 1; h[7] = 0;
        h.writeUInt16LE(hdr.length, 8);
        const data = Buffer.alloc(4 * n); let x = 12345 + k;
        for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) % 2147483648;
                                      data.writeFloatLE(x / 1073741824 - 1, 4 * i); }
        fs.mkdirSync(dir + "/in" + k, {recursive: true});
        fs.writeFileSync(dir + "/in" + k + "/b0.npy", Buffer.concat([h, Buffer.from(hdr, "latin1"), data]));
        names.push(dir + "/in" + k);
      });
      fs.writeFileSync(dir + "/dirs", names.join(";"));
      fs.writeFileSync(dir + "/fp16", j.inputs.filter(i => i.dtype === "FLOAT").map(i => i.name).join(";"));' "$W/info.json" "$W/data/$b" || continue
    # the golden dump of a float seed (compared with its deploy mutants' NPU dumps)
    case $b in *_fq*) continue ;; esac
    "$NB" infer "$s" $(input_args "$(cat "$W/data/$b/dirs")") --output-dir "$W/gio" \
        --dump "$W/golden/$b" >/dev/null 2>&1
    # the deploy model of a float seed: a seed of atc's deploy reader
    "$NB" calibrate --model "$s" --save_path "$W/dq/$b" --data_dir "$(cat "$W/data/$b/dirs")" \
        >/dev/null 2>&1 && cp "$W/dq/${b}_deploy_model.onnx" "$W/seeds/${b}_deploy.onnx" &&
        cp -r "$W/data/$b" "$W/data/${b}_deploy"
done
set -- "$W"/seeds/*.onnx
n_seeds=$#
[ "$n_seeds" -gt 0 ] || { echo "structural.sh: no seeds"; exit 2; }

# ---- one command on one mutant
: >"$W/results"   # command exit verdict
failed_mutants=0; passed_mutants=0
# check CMD DESCRIPTION -- argv...: runs it, classifies, appends to results
check() {
    cmd=$1; shift 3
    timeout -s KILL 60 "$@" >"$W/out" 2>"$W/err"
    rc=$?
    verdict=ok
    if [ $rc -eq 137 ] && ! grep -q . "$W/err"; then verdict=timeout
    elif [ $rc -gt 128 ]; then verdict=signal
    elif grep -qE 'runtime error:|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer' "$W/err"; then verdict=sanitizer
    fi
    echo "$cmd $rc $verdict" >>"$W/results"
    if [ "$verdict" != ok ]; then
        mutant_failed=1
        { echo "== $cmd exit $rc ($verdict): $*"; head -c 4000 "$W/err"; } >>"$W/why"
    fi
    return $rc
}
leftover() { # leftover CMD WHAT: a partial output after a failed command
    mutant_failed=1
    echo "$1 - leftover" >>"$W/results"
    echo "== $1 left $2" >>"$W/why"
}

i=$FIRST; last=$((FIRST + N - 1))
while [ "$i" -le "$last" ]; do
    k=$(( (i - FIRST) % n_seeds + 1 ))
    eval "seed=\${$k}"
    b=$(basename "$seed" .onnx)
    d=$W/m; rm -rf "$d"; mkdir -p "$d"
    if ! how=$(ASAN_OPTIONS=detect_leaks=0 "$MUT" "$seed" "$d/m.onnx" "$i" 2>/dev/null); then
        i=$((i + 1)); continue
    fi
    mutant_failed=0; : >"$W/why"
    dirs=$(cat "$W/data/$b/dirs" 2>/dev/null || echo "$W/none")
    fp16=$(cat "$W/data/$b/fp16" 2>/dev/null)
    check atc "" -- "$NB" atc --mode=30 --framework=5 --soc_version=Ascend035A --model="$d/m.onnx" \
        --output="$d/atc/m" --input_fp16_nodes="$fp16" --output_type=FP16
    atc_rc=$?
    if [ $atc_rc -ne 0 ]; then
        ls "$d/atc/"* >/dev/null 2>&1 && leftover atc "$(ls "$d/atc")"
    fi
    [ -n "$(ls -A "$TMPDIR")" ] && { leftover atc "scratch in TMPDIR: $(ls "$TMPDIR")"; rm -rf "${TMPDIR:?}"/*; }
    check calibrate "" -- "$NB" calibrate --model "$d/m.onnx" --save_path "$d/q/m" --data_dir "$dirs"
    if [ $? -ne 0 ] && ls "$d/q/"* >/dev/null 2>&1; then leftover calibrate "$(ls "$d/q")"; fi
    ins=$(input_args "$dirs")
    # shellcheck disable=SC2086
    check infer "" -- "$NB" infer "$d/m.onnx" $ins --output-dir "$d/io" --dump "$d/golden"
    infer_rc=$?
    [ $infer_rc -ne 0 ] && [ -e "$d/golden" ] && leftover infer "a dump folder"
    if [ $atc_rc -eq 0 ]; then
        printf '{"dump": {"dump_list": [{"model_name": "m"}], "dump_path": "%s", "dump_mode": "all"}}\n' \
            "$d/npu" >"$d/acl.json"
        # shellcheck disable=SC2086
        check run "" -- "$NB" run "$d/atc/m.exeom" $ins --output-dir "$d/ro" --dump "$d/acl.json"
        run_rc=$?
        golden=$d/golden
        [ $infer_rc -eq 0 ] || golden=$W/golden/${b%_deploy}
        npu=$(find "$d/npu" -mindepth 5 -maxdepth 5 -type d 2>/dev/null | head -n 1)
        if [ $run_rc -eq 0 ] && [ -d "$golden" ] && [ -n "$npu" ]; then
            check compare "" -- "$NB" compare file_compare -m "$npu" -g "$golden" -out "$d/cmp"
        fi
    fi
    if [ $(( (i - FIRST) % 8 )) -eq 0 ]; then
        check bringup "" -- "$NB" bringup "$d/m.onnx" --data_dir "$dirs" --out "$d/bu" --eval_count 1
        [ -n "$(find "$d/bu" -name '*.part' 2>/dev/null)" ] && leftover bringup ".part files"
    fi
    if [ $mutant_failed -ne 0 ]; then
        failed_mutants=$((failed_mutants + 1))
        cp "$d/m.onnx" "$OUT/mutant_$i.onnx"
        { echo "seed: $b"; echo "mutation: $how"; cat "$W/why"; } >"$OUT/mutant_$i.txt"
        echo "FAIL: mutant $i ($b: $how)"; sed 's/^/  /' "$W/why" | head -n 8
    else
        passed_mutants=$((passed_mutants + 1))
    fi
    i=$((i + 1))
done

echo "exit codes per command; other: any other exit status; signal, sanitizer, timeout: the"
echo "failures; leftover: a partial output after a failed command (a .part, an exeom, a"
echo "scratch folder); leftover rows are not runs"
echo "command    runs  exit0  exit1  exit2  other  signal  sanitizer  timeout  leftover"
for c in atc calibrate infer run compare bringup; do
    awk -v c="$c" '$1 == c { runs += ($3 != "leftover"); e0 += ($2 == "0"); e1 += ($2 == "1");
        e2 += ($2 == "2"); oth += ($2 != "0" && $2 != "1" && $2 != "2" && $2 != "-");
        sig += ($3 == "signal"); san += ($3 == "sanitizer"); to += ($3 == "timeout");
        lo += ($3 == "leftover") }
        END { printf "%-9s %5d  %5d  %5d  %5d  %5d  %6d  %9d  %7d  %8d\n", c, runs, e0, e1, e2,
              oth, sig, san, to, lo }' "$W/results"
done
[ "$keep_out" -eq 1 ] && [ "$failed_mutants" -gt 0 ] && echo "failed mutants kept in $OUT"
echo "structural: $passed_mutants passed, $failed_mutants failed"
[ "$failed_mutants" -eq 0 ]
