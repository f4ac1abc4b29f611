#!/bin/sh
# The per-operator suite (issue 19): every model of tests/op_suite/gen.py through estimate ->
# calibrate (or calibrate --from_qdq for a Q/DQ export) -> atc -> run on the simulated NPU,
# the output checked against ONNX Runtime's float output (tests/op_suite/ort.js). A case
# fails when estimate calls its ops supported and a later step refuses it, or when the
# output is off: cosine < 0.99 ("cos"), values not equal ("exact"), or under 97 % equal
# ("agree": integer or boolean outputs of quantized values), or when the simulator's plain
# loops (NANOBENCH_SIM_SCALAR=1) give other output bits than its AVX2/F16C paths ("plain_differs",
# issue 22); the cases of known_gaps.tsv are
# reported, not failed. Prints the table: case, op,
# variant, estimate, the step reached, the measure.
# usage: run.sh NANOBENCH SOURCE_DIR [ORT_DIR] [CASE_PATTERN]
set -u
NB=$1; SRC=$2
ORT=${3:-${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}/ort}
PAT=${4:-}
PY=/usr/bin/python3
T=$(mktemp -d /tmp/nb_op_suite.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -d "$ORT/node_modules/onnxruntime-node" ] ||
    { echo "op_suite: ONNX Runtime is not in $ORT (tests/data/fetch_models.sh --with-ort)"; exit 1; }
"$PY" "$SRC/tests/op_suite/gen.py" "$T" >/dev/null || { echo "op_suite: gen.py failed"; exit 1; }
node "$SRC/tests/op_suite/ort.js" "$T" "$ORT" >/dev/null || { echo "op_suite: ort.js failed"; exit 1; }
: >"$T/results.tsv"
tail -n +2 "$T/cases.tsv" | while IFS="$(printf '\t')" read -r c op variant check; do
    [ -n "$PAT" ] && case $c in $PAT) ;; *) continue ;; esac
    d=$T/$c
    step=estimate; msg=""
    est=$("$NB" --no-record estimate -m "$d/model.onnx" --json 2>"$d/err" |
          "$PY" -c 'import json,sys; print(sum(json.load(sys.stdin)["NOT_SUPPORT_OP_TYPE"].values()))' 2>/dev/null)
    [ -n "$est" ] || est=error
    if [ "$est" = 0 ]; then
        step=calibrate
        case $op in
        QuantizeLinear|DequantizeLinear|ConvInteger|MatMulInteger|QLinearConv|QLinearMatMul)
            set -- --from_qdq "$d/model.onnx" ;;
        *) set -- --model "$d/model.onnx" --data_dir "$d/data" --batch_num=all ;;
        esac
        if "$NB" --no-record calibrate "$@" --save_path "$d/q/m" >/dev/null 2>"$d/err"; then
            step=atc
            if "$NB" --no-record atc --mode=30 --framework=5 --soc_version=Ascend035A \
                --model="$d/q/m_deploy_model.onnx" --output="$d/m" --input_fp16_nodes=x --output_type=FP16 \
                >/dev/null 2>"$d/err"; then
                step=run
                if "$NB" --no-record run "$d/m.exeom" --input "x=$d/eval.npy" \
                    --output-dir "$d/out" --json >"$d/run.json" 2>"$d/err"; then
                    step=ran
                    # the simulator's plain loops give the same bits as its AVX2/F16C paths
                    NANOBENCH_SIM_SCALAR=1 "$NB" --no-record run "$d/m.exeom" --input "x=$d/eval.npy" \
                        --output-dir "$d/out_plain" >/dev/null 2>"$d/err" || step=plain_run
                    for f in "$d"/out/*.npy; do
                        [ $step = ran ] && ! cmp -s "$f" "$d/out_plain/${f##*/}" &&
                            { step=plain_differs; echo "${f##*/}: the plain loops give other bits" >"$d/err"; }
                    done
                fi
            fi
        fi
    fi
    [ "$step" = ran ] || msg=$(tail -n 1 "$d/err" | tr '\t' ' ' | cut -c1-160)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$op" "$variant" "$check" "$est" "$step" "$msg" \
        >>"$T/results.tsv"
done
"$PY" - "$T" "$SRC/tests/op_suite/known_gaps.tsv" <<'PYEOF'
import json, os, sys
import numpy as np
T = sys.argv[1]
gaps = dict(l.rstrip("\n").split("\t", 1) for l in open(sys.argv[2])
            if l.strip() and not l.startswith("#"))
bad, rows = 0, []
for line in open(os.path.join(T, "results.tsv")):
    c, op, variant, check, est, step, msg = line.rstrip("\n").split("\t")
    measure, ok = "", True
    if est != "0":
        measure = ("estimate: %s" % msg) if est == "error" else "estimate: %s unsupported" % est
        ok = False  # every op of the list must be supported in these forms
    elif step != "ran":
        measure, ok = "%s: %s" % (step, msg), False
    else:
        outs = json.load(open(os.path.join(T, c, "run.json")))["outputs"]
        ms = []
        for k, o in enumerate(outs):
            ref = np.load(os.path.join(T, c, "ort_%d.npy" % k)).astype(np.float64).ravel()
            got = np.load(o["file"]).astype(np.float64).ravel()
            if ref.size != got.size:
                ms.append("%d values against ORT's %d" % (got.size, ref.size)); ok = False
                continue
            if check == "cos":
                n = np.linalg.norm(ref) * np.linalg.norm(got)
                cos = float(ref @ got / n) if n else float(np.array_equal(ref, got))
                ms.append("cos %.5f" % cos); ok &= cos >= 0.99
            elif check == "exact":
                eq = bool(np.array_equal(ref, got)); ms.append("exact" if eq else "differs")
                ok &= eq
            else:
                share = float(np.mean(ref == got)); ms.append("%.1f%% equal" % (100 * share))
                ok &= share >= 0.97
        measure = ", ".join(ms)
    verdict = "ok" if ok else "FAIL"
    if c in gaps:  # a known gap: reported; passing now means the list is out of date
        verdict = "FAIL: passes, remove it from known_gaps.tsv" if ok else "known gap"
        ok = not ok
    bad += not ok
    rows.append((c, op, variant, "supported" if est == "0" else est, step, measure, verdict))
w = [max(len(r[i]) for r in rows + [("case", "op", "variant", "estimate", "step", "measure", "")])
     for i in range(7)]
print("  ".join(h.ljust(w[i]) for i, h in enumerate(("case", "op", "variant", "estimate", "step",
                                                     "measure", ""))))
for r in rows:
    print("  ".join(x.ljust(w[i]) for i, x in enumerate(r)))
ops = sorted({r[1] for r in rows})
print("op_suite: %d cases of %d ops, %d failed, %d known gaps" %
      (len(rows), len(ops), bad, sum(r[6] == "known gap" for r in rows)))
sys.exit(1 if bad else 0)
PYEOF
