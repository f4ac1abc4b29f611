#!/bin/sh
# Malformed models and interrupted outputs (issue 25): every command that reads a model
# refuses one with a field cleared with one line and exit 2, never a signal, and leaves no
# partial output; atc writes its two files as a pair; dump folders are whole or absent.
# The models are built here from fixtures (and openWakeWord's alexa when the cache has
# it) by clearing one field with fuzz/mutate_onnx, not committed.
# usage: test_malformed.sh NANOBENCH MAKE_FIXTURE MUTATE_ONNX
set -u
NB=$1; FIX=$2; MUT=$3
T=$(mktemp -d /tmp/nb_test_malformed.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
export NANOBENCH_DB="$T/runs.db" NANOBENCH_DB_TIMEOUT_MS=300 TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=1"

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# the mutator leaves its shared message tree to the process's end: no leak report for it
mut() { ASAN_OPTIONS=detect_leaks=0 "$MUT" "$@"; }
# expect STATUS DESCRIPTION -- command...   (stderr in $T/err, stdout in $T/out)
expect() {
    want=$1; what=$2; shift 3
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" != "$want" ]; then
        fail "$what: exit $got, expected $want"; sed 's/^/  stderr: /' "$T/err" | head -n 20
        return 1
    fi
    if [ "$want" = 2 ] && [ "$(grep -vc '^recorded as run' "$T/err")" != 1 ]; then
        fail "$what: not one line on stderr"; cat "$T/err"; return 1
    fi
    echo "ok: $what"
}
mentions() { grep -q -- "$1" "$T/err" || fail "stderr does not mention '$1': $(cat "$T/err")"; }
nothing_in() { # nothing_in DIR DESCRIPTION: DIR is absent or empty
    [ -z "$(ls -A "$1" 2>/dev/null)" ] || fail "$2: left $(ls -A "$1" | tr '\n' ' ')"
}
# a .npy of float32 zeros: npy FILE SHAPE_TUPLE NBYTES
npy() {
    hdr="{'descr': '<f4', 'fortran_order': False, 'shape': $2, }"
    len=$(( ${#hdr} + 1 )); pad=$(( (64 - (10 + len) % 64) % 64 )); len=$((len + pad))
    { printf '\223NUMPY\001\000'; printf "$(printf '\\%03o\\%03o' $((len % 256)) $((len / 256)))";
      printf '%s' "$hdr"; printf "%${pad}s\n" ""; head -c "$3" /dev/zero; } >"$1"
}

"$FIX" conv "$T/conv.onnx" && "$FIX" if_gemm "$T/if_gemm.onnx" || { fail "make_fixture"; exit 1; }
mkdir -p "$T/x" "$T/ifx"
npy "$T/x/b0.npy" "(1, 3, 8, 8)" 768
printf '\000\000\200\077\000\000\000\300' >"$T/ifx/0.bin" # 1, -2: the If takes the Gemm

ATC="--mode=30 --framework=5 --soc_version=Ascend035A --output_type=FP16 --input_fp16_nodes=x"

# ---- the crashes of the issue, each built by clearing one field
# atc read a node without op_type through its own reader before any check (SIGSEGV)
mut "$T/conv.onnx" "$T/no_op.onnx" clear:graph.node[0].op_type >/dev/null || fail "mutate"
expect 2 "atc: a node without op_type" -- "$NB" atc $ATC --model="$T/no_op.onnx" --output="$T/atc/no_op"
mentions "no_op.onnx: node 'Conv_0' has no op_type"
nothing_in "$T/atc" "atc on a node without op_type"
nothing_in "$TMPDIR" "atc on a node without op_type (scratch folder)"
# calibrate wrote its files, then met the Gemm's attribute without name (SIGSEGV, .part left)
mut "$T/if_gemm.onnx" "$T/no_attr_name.onnx" \
    clear:graph.node[2].attribute[0].g.node[0].attribute[0].name >/dev/null || fail "mutate"
expect 2 "calibrate: a Gemm attribute without name (in an If branch)" -- "$NB" calibrate \
    --model "$T/no_attr_name.onnx" --save_path "$T/cal/g" --data_dir "$T/ifx"
mentions "attribute 0 has no name"
nothing_in "$T/cal" "calibrate on an attribute without name"

# ---- one field cleared, each command: exit 0 or 2, one line, no signal, nothing partial
# (the fields of the issue: a node's op_type, an attribute's name or type, one node input,
# an initializer's data_type, name or raw_data, the graph input's element type or shape)
run_all() { # run_all MODEL DATA_DIR INPUT_NAME DESCRIPTION
    m=$1; data=$2; in=$3; what=$4
    for c in info estimate infer calibrate atc bringup; do
        rm -rf "$T/o"; mkdir -p "$T/o"
        case $c in
        info) set -- "$NB" info "$m" ;;
        estimate) set -- "$NB" estimate -m "$m" ;;
        infer) set -- "$NB" infer "$m" --input "$(ls "$data"/* | head -n 1)" --output-dir "$T/o/i" --dump "$T/o/d" ;;
        calibrate) set -- "$NB" calibrate --model "$m" --save_path "$T/o/q/m" --data_dir "$data" ;;
        atc) set -- "$NB" atc --mode=30 --framework=5 --soc_version=Ascend035A --output_type=FP16 \
                 --input_fp16_nodes="$in" --model="$m" --output="$T/o/a/m" ;;
        bringup) set -- "$NB" bringup "$m" --data_dir "$data" --out "$T/o/b" --eval_count 1 ;;
        esac
        "$@" >"$T/out" 2>"$T/err"
        rc=$?
        if [ $rc -gt 128 ] || grep -qE 'runtime error|Sanitizer' "$T/err"; then
            fail "$c on $what: exit $rc"; head -n 5 "$T/err"
        elif [ $rc = 2 ] && [ "$(grep -vc '^recorded as run\|^nanobench: warning' "$T/err")" != 1 ] &&
             [ "$c" != bringup ]; then
            fail "$c on $what: exit 2 without one line"; cat "$T/err"
        elif [ $rc != 0 ] && [ -n "$(find "$T/o" -name '*.part' -o -name '*.tmp*' -o -name '*.exeom' 2>/dev/null)" ]; then
            fail "$c on $what: exit $rc, left $(find "$T/o" -type f | tr '\n' ' ')"
        elif [ -n "$(ls -A "$TMPDIR")" ]; then
            fail "$c on $what: left $(ls -A "$TMPDIR") in TMPDIR"; rm -rf "${TMPDIR:?}"/*
        fi
    done
}
n=0
for spec in clear:graph.node[0].op_type empty:graph.node[0].op_type empty:graph.node[0].input[0] \
            empty:graph.node[0].input[1] drop:graph.node[0].input[1] clear:graph.initializer[0].data_type \
            clear:graph.initializer[0].name clear:graph.initializer[0].raw_data \
            clear:graph.input[0].type.tensor_type.elem_type clear:graph.input[0].type.tensor_type.shape \
            clear:graph.input[0].type clear:graph.output[0].name clear:graph.node[0].output; do
    mut "$T/conv.onnx" "$T/m.onnx" "$spec" >/dev/null || { fail "mutate conv $spec"; continue; }
    run_all "$T/m.onnx" "$T/x" x "conv, $spec"
    n=$((n + 1))
done
for spec in clear:graph.node[2].attribute[0].g.node[0].attribute[0].name \
            clear:graph.node[2].attribute[0].g.node[0].attribute[0].type \
            clear:graph.node[2].attribute[0].g.node[0].attribute[0].i \
            dup:graph.node[2].attribute[0].g.node[0].attribute[0] \
            clear:graph.node[2].attribute[0].g clear:graph.node[2].attribute[0].type \
            clear:graph.node[2].attribute[0].g.output[0].type; do
    mut "$T/if_gemm.onnx" "$T/m.onnx" "$spec" >/dev/null || { fail "mutate if_gemm $spec"; continue; }
    run_all "$T/m.onnx" "$T/ifx" x "if_gemm, $spec"
    n=$((n + 1))
done
# openWakeWord's alexa, as in the issue, when the model cache has it
cache=${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}/models
if [ -f "$cache/alexa_v0.1.onnx" ]; then
    mkdir -p "$T/ax"; npy "$T/ax/b0.npy" "(1, 16, 96)" 6144
    for spec in clear:graph.node[0].op_type clear:graph.node[1].attribute[0].name \
                clear:graph.node[1].attribute[2].type empty:graph.node[1].input[1] \
                clear:graph.initializer[0].data_type clear:graph.initializer[1].raw_data \
                clear:graph.input[0].type.tensor_type.elem_type; do
        mut "$cache/alexa_v0.1.onnx" "$T/m.onnx" "$spec" >/dev/null || { fail "mutate alexa $spec"; continue; }
        run_all "$T/m.onnx" "$T/ax" "onnx::Flatten_0" "alexa, $spec"
        n=$((n + 1))
    done
fi
echo "ok: $n models with one field cleared through info, estimate, infer, calibrate, atc, bringup"

# ---- the calibration config: a value that fails is never stored (UBSan: an invalid
# _Bool was loaded), and the override list is read in linear time (a hash of the names)
mkdir -p "$T/cfg"
printf 'common_config { ifmr_quantize { asymmetric: e } }\n' >"$T/cfg/asym.cfg"
expect 2 "calibrate: asymmetric: e" -- "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cfg/o/c" --data_dir "$T/x" --calibration_config "$T/cfg/asym.cfg"
mentions "asym.cfg:1:45: 'asymmetric' is true or false, not 'e'"
printf 'common_config { hfmg_quantize { num_of_bins: x } }\n' >"$T/cfg/bins.cfg"
expect 2 "calibrate: num_of_bins: x" -- "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cfg/o/c" --data_dir "$T/x" --calibration_config "$T/cfg/bins.cfg"
mentions "'num_of_bins' is an integer"
printf 'batch_num: x\n' >"$T/cfg/batch.cfg"
expect 2 "calibrate: batch_num: x" -- "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cfg/o/c" --data_dir "$T/x" --calibration_config "$T/cfg/batch.cfg"
# 50000 overrides, the last one naming the first's layer again: found by the hash, with
# the first one's line (line 2: batch_num is line 1)
awk 'BEGIN { print "batch_num: 1";
             for (i = 0; i < 50000; i++)
                 printf "override_layer_configs { layer_name: \"layer_%d\" calibration_config { arq_quantize { channel_wise: true } } }\n", i;
             print "override_layer_configs { layer_name: \"layer_0\" calibration_config { } }" }' >"$T/cfg/big.cfg"
expect 2 "calibrate: 50001 overrides, one name twice" -- "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cfg/o/c" --data_dir "$T/x" --calibration_config "$T/cfg/big.cfg"
mentions "big.cfg:50002:1: layer_name \"layer_0\" is given twice (first at line 2)"
nothing_in "$T/cfg/o" "calibrate with a bad config"

# ---- atc's two files as a pair, under interrupts
# two different deploy models compiled in turn to the same NAME: after any interrupt the
# folder holds A's pair or B's pair whole (compared byte for byte), no temporary, and the
# previous good output is never removed
"$FIX" conv_bn "$T/bn.onnx" || fail "make_fixture conv_bn"
mkdir -p "$T/bnx"; npy "$T/bnx/b0.npy" "(1, 2, 4, 4)" 128
"$NB" calibrate --model "$T/conv.onnx" --save_path "$T/pq/a" --data_dir "$T/x" >/dev/null 2>&1 &&
"$NB" calibrate --model "$T/bn.onnx" --save_path "$T/pq/b" --data_dir "$T/bnx" >/dev/null 2>&1 ||
    fail "calibrate the two deploy models"
A=$T/pq/a_deploy_model.onnx; B=$T/pq/b_deploy_model.onnx
mkdir -p "$T/ref"
"$NB" atc $ATC --model="$A" --output="$T/ref/a" >/dev/null 2>&1 &&
"$NB" atc $ATC --model="$B" --output="$T/ref/b" >/dev/null 2>&1 || fail "atc of the two models"
mkdir -p "$T/pair"
"$NB" atc $ATC --model="$A" --output="$T/pair/m" >/dev/null 2>&1 || fail "atc to the pair"
pair_is() { cmp -s "$T/pair/m.exeom" "$T/ref/$1.exeom" && cmp -s "$T/pair/m.dbg" "$T/ref/$1.dbg"; }
kills=0; mixed=0; lost=0; left=0; new=0
for sig in INT TERM HUP; do
    for k in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 22 25 30 40 60; do
        if pair_is a; then src=$B; else src=$A; fi
        "$NB" atc $ATC --model="$src" --output="$T/pair/m" >/dev/null 2>&1 &
        pid=$!
        sleep "0.$(printf '%03d' "$k")"
        kill -s "$sig" "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        kills=$((kills + 1))
        if [ ! -f "$T/pair/m.exeom" ] || [ ! -f "$T/pair/m.dbg" ]; then lost=$((lost + 1))
        elif ! pair_is a && ! pair_is b; then mixed=$((mixed + 1))
        elif { [ "$src" = "$A" ] && pair_is a; } || { [ "$src" = "$B" ] && pair_is b; }; then new=$((new + 1))
        fi
        [ -n "$(ls "$T/pair" | grep -v '^m\.exeom$\|^m\.dbg$')" ] && left=$((left + 1))
    done
done
if [ $lost = 0 ] && [ $mixed = 0 ] && [ $left = 0 ]; then
    echo "ok: atc: $kills interrupts (SIGINT, SIGTERM, SIGHUP at 0-60 ms): every pair whole, $new new, $((kills - new)) previous, no temporary left"
else
    fail "atc: $kills interrupts: $lost lost the previous output, $mixed mixed pairs, $left left temporaries: $(ls "$T/pair")"
fi
# SIGKILL: no handler runs; the next atc to the same NAME removes the killed run's
# temporaries, and the pair it writes is whole
stale=0
for k in 0 2 4 6 8 10 12 15 20; do
    "$NB" atc $ATC --model="$B" --output="$T/pair/m" >/dev/null 2>&1 &
    pid=$!
    sleep "0.$(printf '%03d' "$k")"
    kill -s KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    [ -n "$(ls "$T/pair" | grep '\.tmp\.')" ] && stale=$((stale + 1))
done
# a temporary of a process that is gone, as a crash leaves it
sleep 30 & gone=$!; kill "$gone"; wait "$gone" 2>/dev/null
echo partial >"$T/pair/m.exeom.tmp.$gone"; echo partial >"$T/pair/m.dbg.tmp.$gone"
expect 0 "atc after SIGKILLs" -- "$NB" atc $ATC --model="$A" --output="$T/pair/m"
if pair_is a && [ -z "$(ls "$T/pair" | grep '\.tmp\.')" ]; then
    echo "ok: atc removes the temporaries of killed runs ($stale of 9 SIGKILLs left some)"
else
    fail "atc after SIGKILL: $(ls "$T/pair")"
fi
# a mismatched pair (a new NAME.dbg beside an old NAME.exeom): the runtime tells
cp "$T/ref/b.dbg" "$T/pair/m.dbg"
expect 0 "run: an exeom whose NAME.dbg is another's" -- "$NB" run "$T/pair/m.exeom" --output-dir "$T/pair_o"
mentions "written for another exeom (size or CRC-32 differs)"
rm -rf "$T/pair_o"

# ---- dump folders whole: interrupted, or on a full disk (a file size limit: writes fail
# with EFBIG, as ENOSPC does)
printf '{"dump": {"dump_list": [{"model_name": "e"}], "dump_path": "%s", "dump_mode": "all"}}\n' "$T/rd" >"$T/rd.json"
# embedding_model (88 tasks) when the cache has it: interrupts fall inside the execution
cache=${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}/models
E=$B; EATC=$ATC
if [ -f "$cache/embedding_model.onnx" ]; then
    mkdir -p "$T/ex"; npy "$T/ex/b0.npy" "(1, 76, 32, 1)" 9728
    "$NB" calibrate --model "$cache/embedding_model.onnx" --input_shape "input_1:1,76,32,1" \
        --save_path "$T/pq/e" --data_dir "$T/ex" >/dev/null 2>&1 || fail "calibrate embedding_model"
    E=$T/pq/e_deploy_model.onnx
    EATC="--mode=30 --framework=5 --soc_version=Ascend035A --output_type=FP16 --input_fp16_nodes=input_1 --input_shape=input_1:1,76,32,1"
fi
"$NB" atc $EATC --model="$E" --output="$T/rda/e" >/dev/null 2>&1 || fail "atc for the dump"
expect 0 "run --dump" -- "$NB" run "$T/rda/e.exeom" --output-dir "$T/rdo" --dump "$T/rd.json"
whole=$(find "$T/rd" -type f | wc -l)
[ "$whole" -gt 0 ] || fail "run --dump wrote no file"
rm -rf "$T/rd"
bad=0; cut=0; seen=
for k in 0 3 6 9 12 15 20 25 30 35 40 45 50 60 70 80 100 120 150; do
    "$NB" run "$T/rda/e.exeom" --output-dir "$T/rdo" --dump "$T/rd.json" >/dev/null 2>&1 &
    pid=$!
    sleep "0.$(printf '%03d' "$k")"
    kill -s INT "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    [ $? = 130 ] && cut=$((cut + 1))
    for dir in $(find "$T/rd" -mindepth 5 -maxdepth 5 -type d 2>/dev/null); do
        n=$(find "$dir" -type f | wc -l)
        case $dir in
        *.tmp.*) bad=$((bad + 1)); seen="$seen; after ${k} ms: temporary $dir ($n files)" ;;
        *) [ "$n" = "$whole" ] || { bad=$((bad + 1)); seen="$seen; after ${k} ms: $dir has $n files"; } ;;
        esac
    done
done
[ $bad = 0 ] && echo "ok: run --dump: 19 interrupts ($cut took effect), every dump folder whole ($whole files) or absent" ||
    fail "run --dump under interrupts: $bad partial or temporary folders (a whole one has $whole files)$seen"
rm -rf "$T/rd"
# files over 1 block (512 bytes) fail; the run database is left alone (--no-record)
limited() { (trap '' XFSZ; ulimit -f 1; nb=$1; shift; "$nb" --no-record "$@"); }
# sum_sat: y [1,1] = ReduceSum(x [1,256]): its output file is under the limit, the golden
# dump of its input x (1 KB) over it
"$FIX" sum_sat "$T/sum.onnx" || fail "make_fixture sum_sat"
mkdir -p "$T/sx"; npy "$T/sx/b0.npy" "(1, 256)" 1024
"$NB" infer "$T/sum.onnx" --input "$T/sx/b0.npy" --output-dir "$T/io" --dump "$T/gd0" >/dev/null 2>&1 ||
    fail "infer --dump"
expect 2 "run --dump on a full disk" -- limited "$NB" run "$T/rda/e.exeom" --output-dir "$T/rdo2" --dump "$T/rd.json"
[ -z "$(find "$T/rd" -mindepth 1 2>/dev/null)" ] || fail "run --dump on a full disk left $(find "$T/rd")"
expect 2 "infer --dump on a full disk" -- limited "$NB" infer "$T/sum.onnx" --input "$T/sx/b0.npy" --output-dir "$T/io2" --dump "$T/gd"
[ ! -e "$T/gd" ] && [ -z "$(ls "$T" | grep '^gd\.tmp')" ] || fail "infer --dump on a full disk left $(ls "$T"/gd*)"
# a new golden dump over an earlier one: the earlier one stays whole when the new one fails
cp -r "$T/gd0" "$T/gd_keep"
expect 2 "infer --dump on a full disk over an earlier dump" -- limited "$NB" infer "$T/sum.onnx" --input "$T/sx/b0.npy" --output-dir "$T/io3" --dump "$T/gd0"
diff -r "$T/gd0" "$T/gd_keep" >/dev/null || fail "infer --dump on a full disk changed the earlier dump"
expect 2 "compare convert on a full disk" -- limited "$NB" compare convert -d "$T/gd0" --out "$T/cv"
[ ! -e "$T/cv" ] && [ -z "$(ls "$T" | grep '^cv\.tmp')" ] || fail "compare convert on a full disk left $(ls -d "$T"/cv*)"
expect 0 "compare convert" -- "$NB" compare convert -d "$T/gd0" --out "$T/cv"
[ "$(ls "$T/cv" | wc -l)" -gt 0 ] || fail "compare convert wrote nothing"

# the long fuzz run's one finding: a graph output's declared dim -1 leaked the symbol read
# before it (LeakSanitizer in the sanitizer build)
# (dyn_time: y [1,T,16], T a symbol)
"$FIX" dyn_time "$T/dyn.onnx" || fail "make_fixture dyn_time"
mut "$T/dyn.onnx" "$T/negdim.onnx" "set:graph.output[0].type.tensor_type.shape.dim[2].dim_value=-1" >/dev/null || fail "mutate set"
expect 2 "info: a graph output's dim of -1 after a symbol" -- "$NB" info "$T/negdim.onnx"
mentions "graph output 'y' has negative dim 2 (-1)"

# ---- from the breaker's report (each reproduced as it was found)
gone_pid() { sleep 30 & g=$!; kill "$g"; wait "$g" 2>/dev/null; echo "$g"; }
# a killed run --dump's folder ({iter}.tmp.PID): compare does not read it as a dump, and the
# next run --dump to the dump path removes it (it is under another timestamp)
npu=$(find "$T/rd" -mindepth 5 -maxdepth 5 -type d 2>/dev/null | head -n 1)
[ -n "$npu" ] || { "$NB" run "$T/rda/e.exeom" --output-dir "$T/rdo" --dump "$T/rd.json" >/dev/null 2>&1; npu=$(find "$T/rd" -mindepth 5 -maxdepth 5 -type d | head -n 1); }
dead=$(gone_pid)
mkdir -p "$T/rd/19990101000000/0/e/1/0.tmp.$dead"
cp "$(find "$npu" -type f | head -n 1)" "$T/rd/19990101000000/0/e/1/0.tmp.$dead/"
if [ "$E" = "$B" ]; then
    "$NB" infer "$T/bn.onnx" --input "$T/bnx/b0.npy" --output-dir "$T/eo" --dump "$T/egold" >/dev/null 2>&1
else
    "$NB" infer "$cache/embedding_model.onnx" --input_shape input_1:1,76,32,1 --input "$T/ex/b0.npy" \
        --output-dir "$T/eo" --dump "$T/egold" >/dev/null 2>&1
fi || fail "infer --dump of the float model"
mkdir -p "$T/kd/1"; cp -r "$npu" "$T/kd/1/0"; cp -r "$T/rd/19990101000000/0/e/1/0.tmp.$dead" "$T/kd/1/"
expect 0 "compare: one whole dump" -- "$NB" compare file_compare -m "$T/kd/1/0" -g "$T/egold" -out "$T/ecmp" --json
whole_rows=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).tensors)' "$T/out")
expect 0 "compare: a killed run's dump folder beside a whole one is not read" -- "$NB" compare file_compare -m "$T/kd/1" -g "$T/egold" -out "$T/ecmp" --json
n_rows=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).tensors)' "$T/out")
[ "$n_rows" = "$whole_rows" ] || fail "compare read the killed run's folder ($n_rows rows, $whole_rows whole)"
expect 0 "run --dump after a killed one" -- "$NB" run "$T/rda/e.exeom" --output-dir "$T/rdo" --dump "$T/rd.json"
[ ! -e "$T/rd/19990101000000/0/e/1/0.tmp.$dead" ] || fail "run --dump left a killed run's dump folder"
# a dump file cut short: refused by convert and file_compare, naming it
cp -r "$npu" "$T/cut"
f=$(ls "$T/cut" | head -n 1); truncate -s 10 "$T/cut/$f"
expect 2 "compare convert: a dump cut short" -- "$NB" compare convert -d "$T/cut" --out "$T/cutcv"
mentions "$f: \(a damaged dump\|not a nanobench dump\)"
[ ! -e "$T/cutcv" ] || fail "convert of a cut dump left $T/cutcv"
expect 2 "compare file_compare: a dump cut short" -- "$NB" compare file_compare -m "$T/cut" -g "$T/egold" -out "$T/cutcmp"
mentions "$f: \(a damaged dump\|not a nanobench dump\)"
: >"$T/cut/$f"
expect 2 "compare convert: an empty dump file" -- "$NB" compare convert -d "$T/cut/$f"
mentions "damaged dump"
# calibrate: a folder in the way of one of the three files keeps the earlier good ones
"$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cw/c" --data_dir "$T/x" >/dev/null 2>&1 || fail "calibrate to cw"
cp "$T/cw/c_quant_record.txt" "$T/cw_rec"
rm "$T/cw/c_deploy_model.onnx"; mkdir -p "$T/cw/c_deploy_model.onnx/keep"
expect 2 "calibrate: a folder in the way of the deploy model" -- "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cw/c" --data_dir "$T/x"
mentions "a folder is in the way"
cmp -s "$T/cw/c_quant_record.txt" "$T/cw_rec" && [ -f "$T/cw/c_fake_quant_model.onnx" ] ||
    fail "calibrate removed the earlier record or fake-quant model"
[ -z "$(ls "$T/cw" | grep '\.part$')" ] || fail "calibrate left parts: $(ls "$T/cw")"
# two calibrations to one prefix at once: each its own parts, both succeed
ok2=0
for k in 1 2 3; do
    "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cc/c" --data_dir "$T/x" >"$T/cc1.out" 2>&1 & p1=$!
    "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cc/c" --data_dir "$T/x" --algo minmax >"$T/cc2.out" 2>&1 & p2=$!
    wait $p1; r1=$?; wait $p2; r2=$?
    [ $r1 = 0 ] && [ $r2 = 0 ] && ok2=$((ok2 + 1))
done
[ $ok2 = 3 ] && [ -z "$(ls "$T/cc" | grep '\.part$')" ] && echo "ok: calibrate: two runs to one prefix at once, 3 of 3 both succeed" ||
    fail "calibrate: concurrent runs: $ok2 of 3 ($(cat "$T/cc1.out" "$T/cc2.out" | grep nanobench: | head -n 2))"
# stale temporaries removed by the next run to the name even when it fails
dead=$(gone_pid)
echo part >"$T/cw/c_quant_record.txt.$dead.part"
expect 2 "calibrate that fails removes a killed run's parts" -- "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cw/c" --data_dir "$T/nonexistent"
[ ! -e "$T/cw/c_quant_record.txt.$dead.part" ] || fail "a killed run's part stayed"
echo tmp >"$T/pair/m.exeom.tmp.$dead"
expect 2 "atc that fails removes a killed run's temporaries" -- "$NB" atc $ATC --model="$T/no_op.onnx" --output="$T/pair/m"
[ ! -e "$T/pair/m.exeom.tmp.$dead" ] || fail "a killed atc's temporary stayed"
# a config value the float cannot hold: refused, not a zero clip range
printf 'common_config { ifmr_quantize { search_range_start: 1e-50 search_range_end: 1e-50 } }\n' >"$T/cfg/tiny.cfg"
expect 2 "calibrate: search_range_start 1e-50" -- "$NB" calibrate --model "$T/conv.onnx" --save_path "$T/cfg/o/c" --data_dir "$T/x" --calibration_config "$T/cfg/tiny.cfg"
mentions "search_range_start' is a number in (0, 100]"
# an output name whose temporary would pass NAME_MAX
long=$(printf 'a%.0s' $(seq 230))
expect 0 "atc: a 230-character output name" -- "$NB" atc $ATC --model="$A" --output="$T/long/$long"
[ -f "$T/long/$long.exeom" ] && [ -f "$T/long/$long.dbg" ] && [ "$(ls "$T/long" | wc -l)" = 2 ] ||
    fail "atc with a long name: $(ls "$T/long")"

echo "$fails failure(s)"
[ "$fails" = 0 ]
