#!/bin/sh
# Models of opset 7 to 10 (issue 37, item 8): each op whose form changed before opset 11 and
# that the importer converts (engine/ir/onnx_legacy.c) is written at its legacy opset with
# Debian's python3-onnx, run by nanobench's reference (`nanobench infer`) and by ONNX
# Runtime, which runs opsets 7-10 natively: every output agrees within 1e-5 (max |diff|).
# The ops it cannot convert are refused with one line naming the node and the opset; opset 6
# is refused with the converter hint; calibrate's fake-quant model of a legacy model passes
# onnx.checker and ONNX Runtime; a Conv + Upsample + Pad model at opset 9 goes through
# `nanobench bringup` (estimate, calibrate, atc, run, compare).
# usage: test_legacy_opset.sh NANOBENCH [ORT_DIR]
NB=$1
ORT=${2:-${NANOBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nanobench}/ort}
PY=/usr/bin/python3
T=$(mktemp -d /tmp/nb_test_legacy.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ -d "$ORT/node_modules/onnxruntime-node" ] ||
    { echo "FAIL: ONNX Runtime is not in $ORT (tests/data/fetch_models.sh --with-ort)"; exit 1; }
export NANOBENCH_DB="$T/runs.db"

# one model per converted op (name, opset): the input x of the shape given, saved as x.npy
$PY - "$T" <<'EOF' || { echo "FAIL: making the models"; exit 1; }
import sys, os, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
d = sys.argv[1]
r = np.random.RandomState(1)
def save(name, opset, nodes, xshape, outs, inits=(), checker=False):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, xshape)],
                     [h.make_tensor_value_info(o, T.FLOAT if o != "idx" else T.INT64, None)
                      for o in outs], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 4 if opset < 9 else 5
    if checker:
        onnx.checker.check_model(m)
    os.makedirs(f"{d}/{name}", exist_ok=True)
    onnx.save(m, f"{d}/{name}/model.onnx")
    np.save(f"{d}/{name}/x.npy", r.uniform(-2, 2, xshape).astype(np.float32))
f32 = lambda a, n: nh.from_array(np.array(a, np.float32), n)
# Upsample-7: scales attribute, nearest x2 (H) x3 (W) and linear x2
save("upsample7_nearest", 7, [h.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest",
                                           scales=[1.0, 1.0, 2.0, 3.0])], [1, 2, 3, 4], ["y"])
save("upsample8_linear", 8, [h.make_node("Upsample", ["x"], ["y"], name="up", mode="linear",
                                          scales=[1.0, 1.0, 2.0, 2.0])], [1, 2, 3, 4], ["y"])
# Upsample-9: scales input, an initializer (nearest, x1.5: non-integer, floor rounding) and a
# Constant node (linear)
save("upsample9_nearest", 9, [h.make_node("Upsample", ["x", "s"], ["y"], name="up")],
     [1, 2, 4, 4], ["y"], [f32([1, 1, 1.5, 2], "s")])
save("upsample9_linear", 9,
     [h.make_node("Constant", [], ["s"], name="sc", value=f32([1, 1, 2, 2.5], "sv")),
      h.make_node("Upsample", ["x", "s"], ["y"], name="up", mode="linear")], [1, 2, 3, 4], ["y"])
# Resize-10: nearest downsampling (ceil rounding before opset 11) and linear upsampling
save("resize10_nearest_down", 10, [h.make_node("Resize", ["x", "s"], ["y"], name="rs")],
     [1, 2, 7, 9], ["y"], [f32([1, 1, 0.5, 0.6], "s")])
save("resize10_linear", 10, [h.make_node("Resize", ["x", "s"], ["y"], name="rs", mode="linear")],
     [1, 2, 3, 5], ["y"], [f32([1, 1, 2, 1.6], "s")])
# Slice-1: attributes, negative and past-the-end values, with and without axes
save("slice9", 9, [h.make_node("Slice", ["x"], ["a"], name="s1", starts=[1, -3], ends=[100, -1],
                               axes=[1, 3]),
                   h.make_node("Slice", ["x"], ["b"], name="s2", starts=[0, 1, 0, 2],
                               ends=[1, 3, 2, 5])], [1, 4, 3, 6], ["a", "b"])
# Pad-2: constant with a value, reflect, edge
save("pad7", 7, [h.make_node("Pad", ["x"], ["a"], name="p1", pads=[0, 0, 1, 2, 0, 1, 2, 0],
                             value=1.5),
                 h.make_node("Pad", ["x"], ["b"], name="p2", mode="reflect",
                             pads=[0, 0, 2, 1, 0, 0, 1, 2]),
                 h.make_node("Pad", ["x"], ["c"], name="p3", mode="edge",
                             pads=[0, 1, 1, 0, 0, 0, 2, 1])], [1, 2, 4, 5], ["a", "b", "c"])
# Clip-6: min and max, max alone, min alone
save("clip10", 10, [h.make_node("Clip", ["x"], ["a"], name="c1", min=-0.5, max=1.0),
                    h.make_node("Clip", ["x"], ["b"], name="c2", max=0.25),
                    h.make_node("Clip", ["x"], ["c"], name="c3", min=-1.25)], [2, 3, 4],
     ["a", "b", "c"])
# TopK-1: k attribute, along the last axis and axis 1
save("topk9", 9, [h.make_node("TopK", ["x"], ["y", "idx"], name="tk", k=3),
                  h.make_node("TopK", ["x"], ["y2", "idx2"], name="tk2", k=2, axis=1),
                  h.make_node("Cast", ["idx2"], ["i2"], name="cast", to=T.FLOAT)],
     [2, 4, 6], ["y", "idx", "y2", "i2"])
# BatchNormalization-7 spatial=1 given, then Dropout-7 whose mask nothing reads
C = 3
bn = [f32(r.uniform(0.5, 1.5, C), "sc"), f32(r.uniform(-1, 1, C), "b"),
      f32(r.uniform(-0.5, 0.5, C), "mean"), f32(r.uniform(0.5, 2, C), "var")]
save("bn7_dropout", 7, [h.make_node("BatchNormalization", ["x", "sc", "b", "mean", "var"], ["n"],
                                    name="bn", spatial=1, epsilon=1e-3),
                        h.make_node("Dropout", ["n"], ["y", "mask"], name="drop", ratio=0.3)],
     [2, C, 4, 4], ["y"], bn)
# an If whose branches hold opset-9 Upsamples and a Slice (subgraphs are converted too):
# then: nearest x2, the first 3 columns; else: linear x2 along H; both [1, 1, 4, 3]
def br(nm, nodes, sc):
    return h.make_graph(nodes, nm, [], [h.make_tensor_value_info(nm + "_y", T.FLOAT, [1, 1, 4, 3])],
                        initializer=[f32(sc, nm + "_s")])
then = br("t", [h.make_node("Upsample", ["x", "t_s"], ["t_u"], name="t_up"),
                h.make_node("Slice", ["t_u"], ["t_y"], name="t_sl", starts=[0], ends=[3], axes=[3])],
          [1, 1, 2, 2])
els = br("e", [h.make_node("Upsample", ["x", "e_s"], ["e_y"], name="e_up", mode="linear")],
         [1, 1, 2, 1])
for z, nm in ((-10.0, "if9_then"), (10.0, "if9_else")):
    save(nm, 9, [h.make_node("ReduceMean", ["x"], ["m"], keepdims=0, name="mean"),
                 h.make_node("Greater", ["m", "z"], ["c"], name="gt"),
                 h.make_node("If", ["c"], ["y"], name="sw", then_branch=then, else_branch=els)],
         [1, 1, 2, 3], ["y"], [f32(z, "z")])

# refused: BatchNormalization spatial=0, a Dropout mask that is read, nearest Upsample that
# up- and downsamples, nearest Resize-10 with computed scales, opset 6
save("bad_bn_spatial0", 7, [h.make_node("BatchNormalization", ["x", "sc", "b", "mean", "var"],
                                        ["y"], name="bn0", spatial=0)], [2, C], ["y"], bn)
save("bad_dropout_mask", 9, [h.make_node("Dropout", ["x"], ["d", "mask"], name="drop9"),
                             h.make_node("Add", ["d", "mask"], ["y"], name="add")], [2, 3], ["y"])
save("bad_upsample_mixed", 9, [h.make_node("Upsample", ["x", "s"], ["y"], name="upmix")],
     [1, 1, 4, 4], ["y"], [f32([1, 1, 2, 0.5], "s")])
save("bad_resize10_computed", 10,
     [h.make_node("Shape", ["x"], ["sh"], name="shape"),
      h.make_node("Cast", ["sh"], ["shf"], name="tof", to=T.FLOAT),
      h.make_node("Div", ["shf", "shf"], ["s"], name="one"),
      h.make_node("Resize", ["x", "s"], ["y"], name="rscomp")], [1, 1, 2, 2], ["y"])
save("bad_opset6", 6, [h.make_node("Relu", ["x"], ["y"], name="relu")], [2, 2], ["y"])
EOF

# ONNX Runtime's outputs of model.onnx on x.npy against nanobench's (manifest.tsv of infer)
cat >"$T/ort_cmp.js" <<'EOF'
const [ortDir, dir, tol] = process.argv.slice(2);
const path = require("path"), fs = require("fs");
const ort = require(path.join(path.resolve(ortDir), "node_modules", "onnxruntime-node"));
function npy(file) {
  const b = fs.readFileSync(file), hl = b.readUInt16LE(8);
  const head = b.toString("latin1", 10, 10 + hl);
  const shape = head.match(/shape.: \(([^)]*)\)/)[1].split(",").filter((s) => s.trim()).map(Number);
  const descr = head.match(/descr.: '([^']*)'/)[1];
  const raw = b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length);
  const a = descr === "<i8" ? Array.from(new BigInt64Array(raw), Number) : new Float32Array(raw);
  return [a, shape];
}
(async () => {
  const s = await ort.InferenceSession.create(path.join(dir, "model.onnx"));
  const [xa, xs] = npy(path.join(dir, "x.npy"));
  const out = await s.run({ x: new ort.Tensor("float32", xa, xs) });
  const man = fs.readFileSync(path.join(dir, "ref", "manifest.tsv"), "utf8").trim().split("\n")
    .map((l) => l.split("\t"));
  for (const o of s.outputNames) {
    const row = man.find((r) => r[0] === o);
    if (!row) throw new Error(`nanobench wrote no output '${o}'`);
    const [r, rs] = npy(path.join(dir, "ref", row[1]));
    const y = Array.from(out[o].data, Number), ys = out[o].dims.map(Number);
    if (JSON.stringify(ys) !== JSON.stringify(rs))
      throw new Error(`'${o}': shape ${JSON.stringify(rs)}, ONNX Runtime ${JSON.stringify(ys)}`);
    let d = 0;
    for (let i = 0; i < y.length; i++) d = Math.max(d, Math.abs(y[i] - r[i]));
    if (!(d <= Number(tol))) throw new Error(`'${o}': max |ort - nanobench| ${d}`);
  }
})().catch((e) => { console.error(String(e.message || e).split("\n")[0]); process.exit(1); });
EOF

for m in upsample7_nearest upsample8_linear upsample9_nearest upsample9_linear \
         resize10_nearest_down resize10_linear slice9 pad7 clip10 topk9 bn7_dropout if9_then \
         if9_else; do
    "$NB" infer "$T/$m/model.onnx" --input "$T/$m/x.npy" --output-dir "$T/$m/ref" \
        >"$T/$m/out" 2>"$T/$m/err" || { fail "$m: infer: $(tail -1 "$T/$m/err")"; continue; }
    node "$T/ort_cmp.js" "$ORT" "$T/$m" 1e-5 2>"$T/err" || fail "$m: $(cat "$T/err")"
done
# the conversion is said once, with what was converted
"$NB" info "$T/upsample9_nearest/model.onnx" >"$T/info" 2>&1
grep -q "opset 9 model imported as opset 11, converted: 1 Upsample -> Resize$" "$T/info" ||
    fail "info of an opset-9 Upsample model: $(grep -i opset "$T/info" | tr '\n' ' ')"

# refusals: exit status 2, one line naming the node and the opset
refused() { # model, what the line must hold
    "$NB" infer "$T/$1/model.onnx" --input "$T/$1/x.npy" --output-dir "$T/$1/ref" \
        >/dev/null 2>"$T/err"
    rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$2" "$T/err" ||
        fail "$1: exit $rc, wanted 2 and one line with '$2': $(cat "$T/err")"
}
refused bad_bn_spatial0 "node 'bn0' (BatchNormalization, opset 7): spatial=0"
refused bad_dropout_mask "node 'drop9' (Dropout, opset 9): its mask output is read"
refused bad_upsample_mixed "node 'upmix' (Upsample, opset 9): nearest that upsamples one axis"
refused bad_resize10_computed "node 'rscomp' (Resize, opset 10): nearest with scales that are not"
refused bad_opset6 "opset 6 of the default domain is not supported (nanobench and the Nano take opset 7 to 18)"

# calibrate's fake-quant and deploy models of a legacy model are valid ONNX, and ONNX Runtime
# agrees with nanobench's reference on the fake-quant one; a Conv + Upsample + Pad model at
# opset 9 through bringup, every evaluation input's output within cosine 0.999 of float (Resize
# and Pad on the NPU: measured 0.99997)
$PY - "$T" <<'EOF' || { echo "FAIL: making the Conv + Upsample + Pad model"; exit 1; }
import sys, os, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
d = sys.argv[1]
r = np.random.RandomState(2)
w = nh.from_array((r.randn(8, 3, 3, 3) * 0.3).astype(np.float32), "w")
b = nh.from_array((r.randn(8) * 0.1).astype(np.float32), "b")
w2 = nh.from_array((r.randn(4, 8, 3, 3) * 0.2).astype(np.float32), "w2")
s = nh.from_array(np.array([1, 1, 2, 2], np.float32), "s")
g = h.make_graph(
    [h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
     h.make_node("Relu", ["c"], ["r"], name="relu"),
     h.make_node("Upsample", ["r", "s"], ["u"], name="up", mode="nearest"),
     h.make_node("Pad", ["u"], ["p"], name="pad", pads=[0, 0, 1, 1, 0, 0, 1, 1]),
     h.make_node("Conv", ["p", "w2"], ["y"], name="conv2")],
    "cup", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 8, 8])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 16, 16])], initializer=[w, b, w2, s])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 9)])
m.ir_version = 4
onnx.checker.check_model(m)
os.makedirs(f"{d}/cup/data", exist_ok=True)
onnx.save(m, f"{d}/cup/model.onnx")
for i in range(4):
    r.uniform(-1, 1, 192).astype(np.float32).tofile(f"{d}/cup/data/b{i}.bin")
np.save(f"{d}/cup/x.npy", r.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32))
EOF
"$NB" calibrate --model "$T/cup/model.onnx" --save_path "$T/cup/q/q" --data_dir "$T/cup/data" \
    --batch_num 4 >/dev/null 2>"$T/err" || fail "calibrate of the opset-9 model: $(tail -1 "$T/err")"
for kind in fake_quant deploy; do
    $PY -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' \
        "$T/cup/q/q_${kind}_model.onnx" 2>"$T/err" ||
        fail "opset-9 model, $kind: onnx.checker: $(tail -1 "$T/err")"
done
mkdir -p "$T/fq"
cp "$T/cup/q/q_fake_quant_model.onnx" "$T/fq/model.onnx" && cp "$T/cup/x.npy" "$T/fq/x.npy"
"$NB" infer "$T/fq/model.onnx" --input "$T/fq/x.npy" --output-dir "$T/fq/ref" >/dev/null \
    2>"$T/err" || fail "infer on the fake-quant model: $(tail -1 "$T/err")"
node "$T/ort_cmp.js" "$ORT" "$T/fq" 1e-4 2>"$T/err" ||
    fail "ONNX Runtime on the fake-quant model of the opset-9 model: $(cat "$T/err")"
"$NB" bringup "$T/cup/model.onnx" --data_dir "$T/cup/data" --eval_dir "$T/cup/data" \
    --batch_num 4 --out "$T/bu" --json >"$T/bu.json" 2>"$T/err" ||
    fail "bringup of the opset-9 Conv + Upsample + Pad model: $(tail -1 "$T/err")"
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
const per = s.outputs[0].per_input;
if (per.length < 4 || per.some((p) => !(p.cosine >= 0.999))) {
  console.error(JSON.stringify(per.map((p) => p.cosine))); process.exit(1);
}' "$T/bu.json" 2>"$T/err" || fail "bringup of the opset-9 model: per-input cosines $(cat "$T/err")"

[ "$fails" = 0 ] && echo "legacy opset: all passed"
[ "$fails" = 0 ]
