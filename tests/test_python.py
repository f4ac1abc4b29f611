"""The Python module (python/nanobench, ctypes over libnanobench.so) against the CLI on the
same data: calibrate on numpy arrays gives the CLI's record byte for byte, compile the same
exeom, run the same outputs, compare the same rows. On the conv fixture always, and on
openWakeWord's embedding_model when the model cache has it.

usage: test_python.py NANOBENCH LIBNANOBENCH MAKE_FIXTURE
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

NB, LIB, FIX = sys.argv[1:4]
os.environ["NANOBENCH_LIB"] = LIB
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import nanobench as nb  # noqa: E402

fails = 0


def check(ok, what):
    global fails
    print(("ok: " if ok else "FAIL: ") + what)
    fails += 0 if ok else 1


def cli(*args):
    r = subprocess.run([NB, "--no-record", *args], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def bring_up(tmp, name, model, inp, shape, batches, input_shape=None):
    """calibrate, compile, run, infer and compare with numpy (module) and with the CLI."""
    rng = np.random.default_rng(7)
    arrs = [rng.standard_normal(shape).astype(np.float32) for _ in range(batches)]
    # the module
    cal = nb.calibrate(model, {inp: arrs}, os.path.join(tmp, "py", name),
                       input_shape=input_shape)
    exe = nb.compile(cal["deploy_model"], os.path.join(tmp, "py", name),
                     input_shape=input_shape)
    y = nb.run(exe["exeom"], {inp: arrs[0]}, dump=os.path.join(tmp, "py_npu"))
    g = nb.infer(model, {inp: arrs[0]}, dump=os.path.join(tmp, "py_golden_" + name),
                 input_shape=input_shape)
    cmp = nb.compare(y.dump, os.path.join(tmp, "py_golden_" + name))
    # the CLI on the same arrays
    data = os.path.join(tmp, "data_" + name)
    os.makedirs(data, exist_ok=True)
    for b, a in enumerate(arrs):
        np.save(os.path.join(data, "b%03d.npy" % b), a)
    shp = ["--input_shape", input_shape] if input_shape else []
    check(nb.info(model, input_shape=input_shape) == json.loads(cli("info", model, "--json", *shp)),
          "%s: info is the CLI's info --json" % name)
    est, cest = nb.estimate(model, input_shape=input_shape), json.loads(cli("estimate", model, "--json", *shp))
    five = ["TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE", "TOTAL_NET_OP_TYPE",
            "NOT_SUPPORT_OP_TYPE"]
    check([est[k] for k in five] == [cest[k] for k in five] and est["layers"] == cest["layers"],
          "%s: estimate's five items (%d bytes of exeom) and tasks are the CLI's"
          % (name, est["TOTAL_EXEOM_SIZE"]))
    cj = json.loads(cli("calibrate", "--model", model, "--save_path", os.path.join(tmp, "cli", name),
                        "--data_dir", data, "--batch_num", str(batches), *shp, "--json"))
    check(set(cj) == set(cal) and [(l["layer"], l["scale_d"], l["scale_w"]) for l in cj["layers"]]
          == [(l["layer"], l["scale_d"], l["scale_w"]) for l in cal["layers"]],
          "%s: calibrate returns the CLI's calibrate --json (keys, every layer's scales)" % name)
    check(same_file(cal["record"], os.path.join(tmp, "cli", name + "_quant_record.txt")),
          "%s: the record from numpy arrays is the CLI's, byte for byte" % name)
    check(same_file(cal["deploy_model"], os.path.join(tmp, "cli", name + "_deploy_model.onnx")),
          "%s: the deploy model is the CLI's" % name)
    catc = json.loads(cli("atc", "--mode=30", "--framework=5", "--soc_version=Ascend035A",
                          "--model=" + os.path.join(tmp, "cli", name + "_deploy_model.onnx"),
                          "--output=" + os.path.join(tmp, "cli", name), "--input_fp16_nodes=" + inp,
                          "--output_type=FP16", *(["--input_shape=" + input_shape] if input_shape else []),
                          "--json"))
    same = ["input", "quantized_layers", "tasks", "cube_tasks", "cpu_tasks", "TOTAL_EXEOM_SIZE"]
    check(set(catc) == set(exe) and [catc[k] for k in same] == [exe[k] for k in same],
          "%s: compile returns atc --json (%d tasks, %d bytes)" % (name, exe["tasks"], exe["TOTAL_EXEOM_SIZE"]))
    check(same_file(exe["exeom"], os.path.join(tmp, "cli", name + ".exeom")),
          "%s: compile gives the CLI's exeom, byte for byte" % name)
    acl = os.path.join(tmp, "acl_%s.json" % name)
    with open(acl, "w") as f:
        json.dump({"dump": {"dump_list": [{"model_name": name}],
                            "dump_path": os.path.join(tmp, "cli_npu"), "dump_mode": "output"}}, f)
    out = json.loads(cli("run", os.path.join(tmp, "cli", name + ".exeom"), "--input",
                         "%s=%s" % (inp, os.path.join(data, "b000.npy")), "--output-dir",
                         os.path.join(tmp, "cli_out_" + name), "--dump", acl, "--json"))
    for o in out["outputs"]:
        mine = y[o["name"]]
        theirs = np.load(o["file"])
        check(mine.shape == theirs.shape and np.array_equal(mine, theirs),
              "%s: run's output '%s' %s equals the CLI's" % (name, o["name"], mine.shape))
    cinf = json.loads(cli("infer", model, "--input", "%s=%s" % (inp, os.path.join(data, "b000.npy")),
                          "--output-dir", os.path.join(tmp, "cli_io_" + name), "--dump",
                          os.path.join(tmp, "cli_golden_" + name), *shp, "--json"))
    check([(o["name"], o["shape"], o["first"]) for o in cinf["outputs"]] ==
          [(o["name"], o["shape"], o["first"]) for o in g.result["outputs"]],
          "%s: infer returns infer --json (outputs, shapes, first values)" % name)
    rep = json.loads(cli("compare", "file_compare", "-m", out["dump"]["folder"], "-g",
                         os.path.join(tmp, "cli_golden_" + name), "-out",
                         os.path.join(tmp, "cmp_" + name), "--json"))
    mine = [(r["layer"], r["cosine"]) for r in cmp["rows"]]
    theirs = [(r["layer"], r["cosine"]) for r in rep["rows"]]
    check(mine == theirs and cmp["verdict"] == rep["verdict"],
          "%s: compare: %d rows and the verdict (%s) equal the CLI's" % (name, len(mine),
                                                                          rep["verdict"]))
    last = [r for r in cmp["rows"] if r["compared"]][-1]
    print("  %s: output SQNR against float %.1f dB (calibration's fake-quant: %.1f dB), "
          "%d NPU cycles" % (name, last["sqnr_db"], cal["output_sqnr_db"], y.cycles))
    ref = np.load(os.path.join(tmp, "cli_io_" + name, sorted(
        f for f in os.listdir(os.path.join(tmp, "cli_io_" + name)) if f.endswith(".npy"))[0]))
    check(np.array_equal(g[list(g)[0]], ref), "%s: infer's output equals the CLI's" % name)


def two_inputs(tmp):
    """run takes a dict by its names: y = p - q whichever order the dict gives them in, a
    name of no input or an array of another shape raises (values exact in fp16)."""
    sub = os.path.join(tmp, "sub2.onnx")
    subprocess.run([FIX, "sub2", sub], check=True)
    exe = nb.compile(sub, os.path.join(tmp, "sub2"))
    p = np.array([[1, 2, 3, 4]], np.float32)
    q = np.array([[0.5, 0.25, 8, -1]], np.float32)
    a = nb.run(exe["exeom"], {"p": p, "q": q})["y"]
    b = nb.run(exe["exeom"], {"q": q, "p": p})["y"]
    check(np.array_equal(a, p - q) and np.array_equal(b, p - q),
          "run: a dict's names pick the inputs (p - q = %s both ways)" % a.ravel())
    # an output of infinity or NaN comes back as such (JSON has neither: sent as strings)
    big = np.array([[3e38, 1, 0, 2]], np.float32)
    y = nb.infer(sub, {"p": big, "q": -big})["y"]
    check(np.isinf(y[0, 0]) and y[0, 0] > 0 and np.array_equal(y[0, 1:], [2, 0, 4]),
          "infer: an infinite output comes back as inf (%s)" % y.ravel())
    for bad, what in (({"zz": p, "q": q}, "a name of no input"),
                      ({"p": p.reshape(4), "q": q}, "an array of another shape")):
        try:
            nb.run(exe["exeom"], bad)
            check(False, "run: %s raises" % what)
        except nb.Error as e:
            check(e.status == 2, "run: %s raises Error(status 2): %s" % (what, e))


with tempfile.TemporaryDirectory() as tmp:
    conv = os.path.join(tmp, "conv.onnx")
    subprocess.run([FIX, "conv", conv], check=True)
    bring_up(tmp, "conv", conv, "x", (1, 3, 8, 8), 4)
    two_inputs(tmp)
    conv_x = np.zeros((1, 3, 8, 8), np.float32)
    for call, what in ((lambda: nb.compare(None, tmp), "compare(None, ...)"),
                       (lambda: nb.info(None), "info(None)"),
                       (lambda: nb.run(None, []), "run(None, ...)"),
                       (lambda: nb.info(conv + "\0zzz"), "a path holding a NUL byte"),
                       (lambda: nb.run(os.path.join(tmp, "sub2.exeom"), {0: conv_x}), "an input name 0"),
                       (lambda: nb.run(os.path.join(tmp, "sub2.exeom"), None), "run(exeom, None)"),
                       (lambda: nb.infer(conv, [np.array(["a"] * 4)]), "an array of text"),
                       (lambda: nb.compile(conv, tmp + "/"), "compile into a folder")):
        try:
            call()
            check(False, "%s raises" % what)
        except nb.Error as e:
            check(e.status == 2, "%s raises Error(status 2): %s" % (what, e))
    try:
        nb.calibrate(conv, {"zz": [np.zeros((1, 3, 8, 8), np.float32)]}, os.path.join(tmp, "zz/c"))
        check(False, "calibrate: a data name of no input raises")
    except nb.Error as e:
        check(e.status == 2 and "zz" in str(e), "calibrate: a data name of no input raises: %s" % e)
    cache = os.environ.get("NANOBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "nanobench")
    emb = os.path.join(cache, "models", "embedding_model.onnx")
    if os.path.exists(emb):
        bring_up(tmp, "embedding_model", emb, "input_1", (1, 76, 32, 1), 3,
                 input_shape="input_1:1,76,32,1")
    else:
        print("skip: embedding_model not in the model cache (tests/data/fetch_models.sh)")
    # errors: the CLI's message and exit status
    try:
        nb.calibrate(conv, {"x": [np.zeros((1, 3, 4, 4), np.float32)]}, os.path.join(tmp, "bad/c"))
        check(False, "calibrate: a batch of another shape raises")
    except nb.Error as e:
        check(e.status == 2 and "FLOAT [1,3,4,4], but input 'x' is FLOAT [1,3,8,8]" in str(e),
              "calibrate: a batch of another shape raises Error(status 2): %s" % e)
        check(not os.path.exists(os.path.join(tmp, "bad")) or not os.listdir(os.path.join(tmp, "bad")),
              "calibrate: nothing written after the error")
    # AdaRound (issue 40): weight_round and bias_correction as the CLI's flags, the same record
    rng = np.random.default_rng(3)
    arrs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(4)]
    ada = nb.calibrate(conv, {"x": arrs}, os.path.join(tmp, "ada", "c"), weight_round="adaround",
                       bias_correction=False)
    check([l["weight_round"] for l in ada["layers"]] == ["adaround"] * len(ada["layers"]),
          "calibrate(weight_round='adaround') rounds every layer so")
    os.makedirs(os.path.join(tmp, "ada_data"), exist_ok=True)
    for b, a in enumerate(arrs):
        np.save(os.path.join(tmp, "ada_data", "b%03d.npy" % b), a)
    cli("calibrate", "--model", conv, "--save_path", os.path.join(tmp, "ada_cli", "c"), "--data_dir",
        os.path.join(tmp, "ada_data"), "--batch_num", "4", "--weight_round", "adaround",
        "--no_bias_correction", "--json")
    check(same_file(ada["record"], os.path.join(tmp, "ada_cli", "c_quant_record.txt")),
          "calibrate(weight_round='adaround', bias_correction=False): the CLI's record, byte for byte")
    try:
        nb.calibrate(conv, {"x": arrs}, os.path.join(tmp, "ada_bad", "c"), weight_round="up")
        check(False, "calibrate: weight_round='up' raises")
    except nb.Error as e:
        check(e.status == 2 and str(e) == "weight_round is nearest or adaround, not 'up'",
              "calibrate: weight_round='up' raises Error(status 2): %s" % e)
    try:
        nb.run(os.path.join(tmp, "nope.exeom"), [np.zeros(3, np.float32)])
        check(False, "run: a missing exeom raises")
    except nb.Error as e:
        check(e.status == 2 and "nope.exeom" in str(e), "run: a missing exeom raises: %s" % e)



# ---- bringup (issue 36): nanobench.bringup is the CLI's bringup in this process ----
def summary_numbers(s):
    """The numbers of a bringup summary that say what came up (no paths, times, run ids)."""
    cal = s["calibration"]
    return {"estimate": s["estimate"], "algorithm": cal["algorithm"], "batches": cal["batches"],
            "layers": cal["layers"], "cal_sqnr": cal["output_sqnr_db"],
            "worst_layers": cal["worst_layers"], "suggested_int16": cal["suggested_int16"],
            "exeom_bytes": s["compile"]["exeom_bytes"], "cycles": s["npu"]["cycles"],
            "ms_64mhz": s["npu"]["ms_64mhz"], "saturation": s["npu"]["saturation"]["total"],
            "eval": [s["evaluation"][k] for k in ("count", "source", "model_inputs")],
            "outputs": [(o["name"], o["shape"], o["cosine_mean"], o["cosine_worst"],
                         o["sqnr_db_mean"], o["sqnr_db_worst"], o["max_abs_error"])
                        for o in s["outputs"]],
            "worst_cosine": s["worst_cosine"],
            "compare": [s["compare"][k] for k in ("verdict", "tensors", "compared",
                                                   "over_threshold", "input")],
            "fix": s["saturation_fix"], "status": s["status"]}


def bringup_both(tmp, name, model, shape, input_shape=None):
    """The module's bringup and the CLI's on the same files: the same summary numbers."""
    rng = np.random.default_rng(11)
    data, ev = os.path.join(tmp, "bu_data_" + name), os.path.join(tmp, "bu_eval_" + name)
    os.makedirs(data, exist_ok=True)
    os.makedirs(ev, exist_ok=True)
    for b in range(6):
        np.save(os.path.join(data, "b%02d.npy" % b), (0.5 * rng.standard_normal(shape)).astype(np.float32))
    for b in range(3):
        np.save(os.path.join(ev, "e%02d.npy" % b), (0.5 * rng.standard_normal(shape)).astype(np.float32))
    db = os.path.join(tmp, "bu_runs.db")
    py = nb.bringup(model, data_dir=[data], eval_dir=ev, input_shape=input_shape,
                    out=os.path.join(tmp, "bu_py_" + name), eval_count=3, db=db)
    args = [NB, "--db", db, "bringup", model, "--data_dir", data, "--eval_dir", ev,
            "--eval_count", "3", "--out", os.path.join(tmp, "bu_cli_" + name), "--json"]
    if input_shape:
        args += ["--input_shape", input_shape]
    r = subprocess.run(args, capture_output=True, text=True)
    check(r.returncode == 0, "bringup %s: the CLI's exit 0%s" %
          (name, "" if r.returncode == 0 else " (%s)" % r.stderr[-300:]))
    cl = json.loads(r.stdout) if r.returncode == 0 else {}
    a, b = summary_numbers(py), summary_numbers(cl) if cl else None
    check(a == b, "bringup %s: the module's summary numbers are the CLI's%s" %
          (name, "" if a == b else ": %r != %r" % (a, b)))
    hist = json.loads(cli("--db", db, "history", "export", "--format", "json"))
    runs = {x["run_id"]: x for x in hist if isinstance(x, dict)} if isinstance(hist, list) else \
        {x["run_id"]: x for x in hist.get("runs", [])}
    me = runs.get(py["runs"]["bringup"])
    check(me is not None and me["kind"] == "bringup" and me["status"] == "ok" and
          runs.get(py["runs"]["estimate"], {}).get("parent_id") == py["runs"]["bringup"] and
          runs.get(py["runs"]["compare"], {}).get("parent_id") == py["runs"]["infer_dumped"],
          "bringup %s: the module's bringup recorded with its steps as children" % name)


def bringup_hostile(tmp):
    """names with ';', '=', ':', ',', spaces and 10,000 characters come up from Python"""
    model = os.path.join(tmp, "hostile.onnx")
    subprocess.run([FIX, "hostile", model], check=True)
    rng = np.random.default_rng(5)
    dirs = []
    for i in range(2):
        d = os.path.join(tmp, "hostile_%d" % i)
        os.makedirs(d, exist_ok=True)
        for b in range(4):
            np.save(os.path.join(d, "b%d.npy" % b), rng.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32))
        dirs.append(d)
    s = nb.bringup(model, data_dir=dirs, out=os.path.join(tmp, "hostile_out"), eval_count=2,
                   no_record=True)
    names = ["in;put:1=a,b c", "N" * 10000 + "=;:, x"]
    check(s["evaluation"]["model_inputs"] == names and
          sorted(o["name"] for o in s["outputs"]) == sorted(["out;put:1=a,b c", "O" * 10000 + ";=:, y"]) and
          all(o["cosine_worst"] > 0.99 for o in s["outputs"]) and s["compare"]["compared"] > 0,
          "bringup: the hostile names come up from Python")
    for call, what in ((lambda: nb.bringup(model), "bringup without data_dir"),
                       (lambda: nb.bringup(model, data_dir=dirs, nope=1), "an unknown option"),
                       (lambda: nb.bringup(model, data_dir=dirs, eval_count=0), "eval_count 0")):
        try:
            call()
            check(False, "%s raises" % what)
        except nb.Error as e:
            check(e.status == 2, "%s raises Error(status 2): %s" % (what, e))


with tempfile.TemporaryDirectory() as tmp:
    conv = os.path.join(tmp, "conv.onnx")
    subprocess.run([FIX, "conv", conv], check=True)
    bringup_both(tmp, "conv", conv, (1, 3, 8, 8))
    bringup_hostile(tmp)
    cache = os.environ.get("NANOBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "nanobench")
    hj = os.path.join(cache, "models", "hey_jarvis_v0.1.onnx")
    if os.path.exists(hj):
        bringup_both(tmp, "hey_jarvis", hj, (1, 16, 96), input_shape="x.1:1,16,96")
    else:
        print("skip: hey_jarvis not in the model cache (tests/data/fetch_models.sh)")

print("python: %d check(s) failed" % fails if fails else "python: every check passed")
sys.exit(1 if fails else 0)
