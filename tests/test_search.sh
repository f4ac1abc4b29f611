#!/bin/sh
# The precision and placement search (issue 40): `bringup --target_sqnr`.
# A three-Conv model (the first Conv's name holds '"', '\', ';' and '=', so that the calibration
# config the search writes must escape it) on heavy-tailed inputs (Student's t, 3 degrees of
# freedom: int8 activations lose 16 dB of SQNR on them). Checked:
#  - a target met as is: no configuration tried;
#  - a target the search reaches: the chosen configuration meets it, and running its
#    reproduce.sh (calibrate, atc as they ran), then `nanobench run` on each evaluation input, gives
#    the same pooled SQNR, computed here from the .npy files (10 log10(sum ref^2 / sum
#    (npu - ref)^2) over every input), to 0.01 dB; every chosen change is needed (its
#    "without" try misses the target); no Pareto point is beaten on all three measures;
#  - a target no configuration reaches: said, with the best reached and the limiting layer;
#  - bad flags: exit 2 with one line.
#  - Python's nanobench.bringup(target_sqnr=...) chooses the same configuration with the same
#    figures as the CLI.
# usage: test_search.sh NANOBENCH [LIBNANOBENCH_PY]
NB=$1; LIB=$2
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
T=$(mktemp -d /tmp/nb_test_search.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export NANOBENCH_DB="$T/runs.db"
cd "$T" || exit 1

$PY - "$T" <<'PYEOF' || { echo "FAIL: making the model"; exit 1; }
import sys, os, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
d = sys.argv[1]
r = np.random.RandomState(1)
def w(name, shape, s): return nh.from_array((r.randn(*shape) * s).astype(np.float32), name)
inits = [w("w1", (8, 4, 3, 3), 0.3), w("w2", (8, 8, 3, 3), 0.15), w("w3", (4, 8, 1, 1), 0.3),
         nh.from_array(np.array(20.0, np.float32), "k")]
nodes = [h.make_node("Conv", ["x", "w1"], ["c1"], name='conv"1\\a;b=c', pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
         h.make_node("Mul", ["r1", "k"], ["m1"], name="mul_k"),
         h.make_node("Conv", ["m1", "w2"], ["c2"], name="conv 2", pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["c2"], ["r2"], name="relu2"),
         h.make_node("Conv", ["r2", "w3"], ["y"], name="conv3")]
g = h.make_graph(nodes, "search_net", [h.make_tensor_value_info("x", T.FLOAT, [1, 4, 12, 12])],
                 [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 12, 12])], initializer=inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
m.ir_version = 8
onnx.checker.check_model(m, full_check=True)
onnx.save(m, os.path.join(d, "net.onnx"))
for sub, n in (("calib", 16), ("eval", 6)):
    os.makedirs(os.path.join(d, sub))
    for i in range(n):
        np.save(os.path.join(d, sub, "%03d.npy" % i),
                (r.standard_t(3, (1, 4, 12, 12)) * 0.5).astype(np.float32))
PYEOF

bu() { "$NB" bringup net.onnx --data_dir calib --eval_dir eval --eval_count 6 "$@"; }

# a target met as is
bu --out lo --target_sqnr 10 --json >lo.json 2>lo.err || fail "bringup --target_sqnr 10: $(cat lo.err)"
$PY - <<'PYEOF' || fail "a target met as is"
import json
s = json.load(open("lo.json"))["search"]
assert s["result"] == "met as is" and s["reached"] and s["tries"] == 0, s
assert s["as_is_sqnr_db"] >= 10
PYEOF

# a target the search reaches
bu --out hi --target_sqnr 40 --search_baseline >hi.txt 2>hi.err || fail "bringup --target_sqnr 40: $(cat hi.err)"
grep -q "^search     target 40.0 dB pooled SQNR on every output: reached" hi.txt ||
    fail "the text summary's search line: $(cat hi.txt)"
$PY - "$NB" <<'PYEOF' || fail "the search's chosen configuration, reproduced by hand"
import json, subprocess, sys, os, numpy as np
nb = sys.argv[1]
s = json.load(open("hi/summary.json"))
se = s["search"]
assert se["reached"] and se["chosen_sqnr_db"] >= 40 > se["as_is_sqnr_db"], se
assert se["chosen"], se
# its reproduce.sh run by sh (nanobench from PATH): the chosen exeom made again
import shutil
os.makedirs("bin", exist_ok=True)
if not os.path.exists("bin/nanobench"):
    os.symlink(os.path.abspath(nb), "bin/nanobench")
os.remove("hi/search/chosen/net.exeom")
env = dict(os.environ, PATH=os.path.abspath("bin") + ":" + os.environ["PATH"])
subprocess.run(["sh", se["reproduce"]], check=True, stdout=subprocess.DEVNULL, env=env)
assert os.path.exists("hi/search/chosen/net.exeom")
num = den = 0.0
for k in range(6):
    od = "again%d" % k
    subprocess.run([nb, "run", "hi/search/chosen/net.exeom", "--input", "x=eval/%03d.npy" % k,
                    "--output-dir", od], check=True, stdout=subprocess.DEVNULL)
    npu = np.load(od + "/y.npy").astype(np.float64)
    ref = np.load("hi/reference/%d/y.npy" % k).astype(np.float64)
    num += (ref ** 2).sum()
    den += ((npu - ref) ** 2).sum()
pooled = 10 * np.log10(num / den)
assert abs(pooled - se["chosen_sqnr_db"]) < 0.01, (pooled, se["chosen_sqnr_db"])
# every chosen change is needed: without it, the target is missed
pts = se["points"]
for c in se["chosen"]:
    name = c.get("layer") or c.get("nodes")
    label = "without " + c["change"] + (" " + name if name else "")
    without = [p for p in pts if p["label"] == label]
    if len(se["chosen"]) > 1:
        assert without and not without[-1]["meets_target"], (label, without)
# the Pareto front: no point on it is beaten on SQNR, cycles and size at once
ok = [p for p in pts if "error" not in p]
for p in ok:
    if not p["pareto"]:
        continue
    for q in ok:
        assert not (q["sqnr_db"] > p["sqnr_db"] and q["cycles"] < p["cycles"] and
                    q["exeom_bytes"] < p["exeom_bytes"]), (p, q)
assert any(p["pareto"] for p in ok)
# the rule was measured too, on int16 changes only
br = se["baseline_rule"]
assert all(c["change"] == "int16" for c in br["changes"]), br
PYEOF

# the same search from Python
if [ -n "$LIB" ]; then
    # the sanitizer build: its runtimes loaded first for python3 (not instrumented)
    pre=${NB_PY_PRELOAD:+LD_PRELOAD=$NB_PY_PRELOAD ASAN_OPTIONS=detect_leaks=0}
    # shellcheck disable=SC2086 # pre: assignments or nothing
    env $pre NANOBENCH_LIB="$LIB" PYTHONPATH="$SRC/python" $PY - <<'PYEOF' || fail "the search from Python"
import json, nanobench as nb
lines = []
s = nb.bringup("net.onnx", data_dir="calib", eval_dir="eval", out="py", eval_count=6,
               target_sqnr=40.0, search_baseline=True, progress=lines.append)["search"]
# the progress lines: every step started and done, and one line per configuration measured
assert sum(l.startswith("[6/6] compare done") for l in lines) == 1, lines
tries = [l for l in lines if l.startswith("search ") and ": " in l and l.split(":")[0][7:].isdigit()]
assert len(tries) == s["tries"], (len(tries), s["tries"], lines[-5:])
c = json.load(open("hi/summary.json"))["search"]
assert s["chosen"] == c["chosen"], (s["chosen"], c["chosen"])
for k in ("chosen_sqnr_db", "chosen_cycles", "chosen_exeom_bytes", "as_is_sqnr_db", "tries"):
    assert abs(s[k] - c[k]) <= 1e-9 * max(1, abs(c[k])), (k, s[k], c[k])
for bad in ("high", True, float("nan")):
    try:
        nb.bringup("net.onnx", data_dir="calib", out="py2", target_sqnr=bad)
        raise SystemExit("a bad target_sqnr was taken: %r" % (bad,))
    except nb.Error as e:
        assert "target_sqnr" in str(e), e
# an exception of the progress function stops the bring-up and reaches the caller
class Stop(Exception):
    pass
def boom(line):
    if line.startswith("search 2:"):
        raise Stop(line)
try:
    nb.bringup("net.onnx", data_dir="calib", eval_dir="eval", out="py3", eval_count=6,
               target_sqnr=40.0, progress=boom)
    raise SystemExit("the progress function's exception was lost")
except Stop:
    pass
import os
assert not os.path.exists("py3/summary.json")
PYEOF
fi

# a target no configuration reaches
bu --out top --target_sqnr 150 --json >top.json 2>top.err || fail "bringup --target_sqnr 150: $(cat top.err)"
$PY - <<'PYEOF' || fail "a target no configuration reaches"
import json
se = json.load(open("top.json"))["search"]
assert not se["reached"] and se["result"].startswith("not reached"), se
assert se["limiting_layer"] and se["chosen_sqnr_db"] < 150, se
PYEOF

# a bad --target_outputs leaves an earlier bring-up's folder whole (it is checked first)
bu --out top --target_sqnr 40 --target_outputs nope >bad.out 2>bad.err
[ $? -eq 2 ] && [ -f top/summary.json ] && [ -f top/report.html ] ||
    fail "a bad --target_outputs replaced the folder's files: $(cat bad.err)"

# the user's config overrides a layer by name: kept, and the search still measures INT16 on
# every other layer (a second override of it was refused as "given twice")
printf 'override_layer_configs {\n  layer_name: "conv3"\n  calibration_config { ifmr_quantize { dst_type: INT16 } }\n}\n' >user.cfg
bu --out uc --target_sqnr 45 --calibration_config user.cfg --json >uc.json 2>uc.err ||
    fail "bringup --calibration_config with the search: $(tail -1 uc.err)"
$PY - <<'PYEOF' || fail "the search with the user's config"
import json
se = json.load(open("uc.json"))["search"]
refused = [p for p in se["points"] if "error" in p]
assert not refused, refused
names = [c.get("layer") for c in se["candidates"] if c["change"] == "int16"]
assert "conv3" not in names and "conv 2" in names, names
PYEOF

# bad flags
for bad in "--target_sqnr abc" "--target_sqnr 40 --target_outputs nope" "--target_outputs y" \
           "--search_baseline" "--target_sqnr 40 --search_max_cycles 1.5" \
           "--target_sqnr 40 --target_outputs y;y" "--target_sqnr 40 --target_outputs ;"; do
    # shellcheck disable=SC2086 # the flags: several words
    bu --out bad $bad >bad.out 2>bad.err
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <bad.err)" -le 3 ] && grep -q "target\|search" bad.err ||
        fail "bringup $bad: exit $rc, $(cat bad.err)"
done

[ $fails -eq 0 ] && echo "test_search: all passed"
exit $((fails > 0))
