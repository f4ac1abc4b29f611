#!/bin/sh
# The simulator's fast kernels against its plain loops (issue 22): every real model below is
# calibrated (int8, and int16 where named), compiled and run on the same input twice, once
# with the host's AVX2/F16C paths and once with NANOBENCH_SIM_SCALAR=1 (the plain loops),
# with every task's output dumped; each dump must be byte for byte the same but for its
# timestamp_us (field 6 of share/proto/dump.proto), and so must the outputs. The models:
# openWakeWord's melspectrogram (a 1-channel 512-tap filter bank, Pow, Add, Log), its
# embedding_model (3x3 convolutions, 24..96 channels, Max, MaxPool) and hey_jarvis (Gemm,
# If), silero_vad (LSTM, int64 input) and the generated models of tests/data/real.
# usage: run.sh NANOBENCH SOURCE_DIR   (the models from tests/data/fetch_models.sh)
set -u
NB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); SRC=$(cd "$2" && pwd)
PY=/usr/bin/python3
models=$("$SRC/tests/data/fetch_models.sh" | tail -n 1)
T=$(mktemp -d /tmp/nb_sim_paths.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
export NANOBENCH_DB="$T/runs.db"
fail=0 cases=0 tasks=0
# case NAME MODEL INPUT SHAPE [CONFIG_LINE]
one() {
    name=$1 model=$2 in=$3 shape=$4 cfg=${5:-}
    d=$T/$name; mkdir -p "$d/data"
    "$PY" - "$d/data" "$shape" <<'PYEOF' || { echo "sim_paths: $name: no data"; return 1; }
import sys, numpy as np
d, shape = sys.argv[1], [int(v) for v in sys.argv[2].split(",")]
r = np.random.default_rng(7)
for b in range(4):
    r.uniform(-1, 1, shape).astype(np.float32).tofile("%s/%04d.bin" % (d, b))
np.save(d + "/../eval.npy", r.uniform(-1, 1, shape).astype(np.float32))
PYEOF
    set -- --model "$model" --save_path "$d/q" --input_shape "$in:$shape" --data_dir "$d/data"
    if [ -n "$cfg" ]; then
        printf 'batch_num: 4\n%s\n' "$cfg" >"$d/cfg.txt"; set -- "$@" --calibration_config "$d/cfg.txt"
    else
        set -- "$@" --batch_num 4
    fi
    # a Q/DQ export brings its own scales (calibrate --from_qdq)
    "$NB" calibrate "$@" >"$d/log" 2>&1 ||
        { grep -q -- --from_qdq "$d/log" && "$NB" calibrate --from_qdq "$model" --save_path "$d/q" >"$d/log" 2>&1; } &&
        (cd "$d" && "$NB" atc --mode=30 --framework=5 --soc_version=Ascend035A --model=q_deploy_model.onnx \
            --output=m --input_fp16_nodes="$in" --input_shape="$in:$shape" --output_type=FP16 >>"$d/log" 2>&1) || {
        # a generated model the tool refuses on purpose (tests/test_real_exports.sh checks the
        # message) has no exeom to run
        case $name in real_*) grep -q "does not import that shape yet" "$d/log" &&
            { echo "sim_paths: $name: skipped: $(tail -n 1 "$d/log" | cut -c1-100)..."; return; } ;; esac
        echo "sim_paths: $name: $(tail -n 1 "$d/log")"; fail=$((fail + 1)); return; }
    for p in fast plain; do
        printf '{"dump": {"dump_list": [{"model_name": "m"}], "dump_path": "%s", "dump_mode": "output"}}\n' \
            "$d/dump_$p" >"$d/acl_$p.json"
        if [ $p = plain ]; then s=1; else s=; fi
        NANOBENCH_SIM_SCALAR=$s "$NB" run "$d/m.exeom" --input "$in=$d/eval.npy" --dump "$d/acl_$p.json" \
            --output-dir "$d/out_$p" >>"$d/log" 2>&1 || { echo "sim_paths: $name: run ($p) failed"; fail=$((fail + 1)); return; }
    done
    r=$("$PY" - "$d" <<'PYEOF'
import glob, os, sys
d = sys.argv[1]
def fields(b):  # the top-level protobuf fields of a dump but timestamp_us (6)
    i, out = 0, []
    def varint():
        nonlocal i
        v = s = 0
        while True:
            c = b[i]; i += 1; v |= (c & 127) << s; s += 7
            if c < 128: return v
    while i < len(b):
        start = i; key = varint(); wt = key & 7
        if wt == 0: varint()
        elif wt == 1: i += 8
        elif wt == 2: n = varint(); i += n
        elif wt == 5: i += 4
        else: raise ValueError("wire type %d" % wt)
        if key >> 3 != 6: out.append(b[start:i])
    return out
def key(p):  # {op_type}.{op_name}.{task_id}.{stream_id} of the file name
    return os.path.basename(p).rsplit(".", 1)[0]
fa = {key(p): p for p in glob.glob(d + "/dump_fast/**/*.*", recursive=True) if os.path.isfile(p)}
fb = {key(p): p for p in glob.glob(d + "/dump_plain/**/*.*", recursive=True) if os.path.isfile(p)}
bad = sorted(k for k in fa if k not in fb or fields(open(fa[k], "rb").read()) != fields(open(fb[k], "rb").read()))
for n in sorted(os.listdir(d + "/out_fast")):
    if open(d + "/out_fast/" + n, "rb").read() != open(d + "/out_plain/" + n, "rb").read():
        bad.append("output " + n)
print(len(fa), len(fb), ";".join(bad[:5]) or "-")
PYEOF
)
    set -- $r
    cases=$((cases + 1)); tasks=$((tasks + $1))
    if [ "$1" = 0 ] || [ "$1" != "$2" ] || [ "$3" != - ]; then
        echo "sim_paths: $name: $1 dumps against $2 plain, differ: $3"; fail=$((fail + 1))
    else
        echo "sim_paths: $name: $1 task dumps identical"
    fi
}
one mel_int8 "$models/melspectrogram.onnx" input 1,16000
one mel_int16 "$models/melspectrogram.onnx" input 1,16000 \
    'override_layer_configs { layer_name: "Conv_2" calibration_config { ifmr_quantize { dst_type: INT16 } } }'
one embedding "$models/embedding_model.onnx" input_1 1,76,32,1
one hey_jarvis "$models/hey_jarvis_v0.1.onnx" x.1 1,16,96
for f in "$SRC"/tests/data/real/*.onnx; do
    [ -f "$f" ] || continue
    spec=$("$NB" --no-record info "$f" --json 2>/dev/null | "$PY" -c '
import json, sys
i = json.load(sys.stdin)["inputs"]
if len(i) == 1 and all(isinstance(v, int) and v > 0 for v in i[0]["shape"]) and i[0]["dtype"] == "FLOAT":
    print(i[0]["name"], ",".join(map(str, i[0]["shape"])))' 2>/dev/null)
    [ -n "$spec" ] || continue
    set -- $spec
    one "real_$(basename "$f" .onnx)" "$f" "$1" "$2"
done
echo "sim_paths: $cases models, $tasks task dumps compared, $fail failed"
[ "$fail" = 0 ]
