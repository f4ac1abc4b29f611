"""The Python module (python/nanobench over libnanobench.so) against hostile arguments: every
bad argument raises nanobench.Error (status 2) naming it, never TypeError from ctypes, a
silent conversion or a crash; each such call runs in a child process, so that a segfault
fails its check instead of killing the test. Then the arguments that must work (arrays not
contiguous, float16, big-endian float32, calibrate's three forms against the CLI's record),
100 concurrent run() calls from 8 threads against a sequential one (itself the CLI's run),
and a model whose input name is a payload (';', '=', quotes, ESC sequences, 1000 bytes)
through info, estimate and infer.

usage: test_python_hostile.py NANOBENCH LIBNANOBENCH MAKE_FIXTURE
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

NB, LIB, FIX = sys.argv[1:4]
os.environ["NANOBENCH_LIB"] = LIB
PYDIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
sys.path.insert(0, PYDIR)
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


# The child's prelude: the module, the fixtures (T: the folder) and arrays; the case's code
# is one expression; its outcome one line on stdout.
PRELUDE = r'''
import ctypes, os, sys
import numpy as np
sys.path.insert(0, %(pydir)r)
import nanobench as nb
T = %(tmp)r
CONV, SUB2, CA2, PL = (os.path.join(T, f) for f in ("conv.onnx", "sub2.onnx", "conv_add2.onnx",
                                                    "payload.onnx"))
EXE = os.path.join(T, "sub2.exeom")
x = np.zeros((1, 3, 8, 8), np.float32)
z = np.zeros((1, 8, 6, 6), np.float32)
p = np.array([[1, 2, 3, 4]], np.float32)
q = np.array([[0.5, 0.25, 8, -1]], np.float32)

def c_args(arrs):
    """what the C side takes: pointers, ranks, dims (6 a slot)"""
    P = ctypes.POINTER
    ptrs = (P(ctypes.c_float) * len(arrs))(*[a.ctypes.data_as(P(ctypes.c_float)) for a in arrs])
    ranks = (ctypes.c_int * len(arrs))(*[a.ndim for a in arrs])
    dims = (ctypes.c_int64 * (6 * len(arrs)))()
    for i, a in enumerate(arrs):
        for d, n in enumerate(a.shape):
            dims[6 * i + d] = n
    return ptrs, ranks, dims

def c_call(fn, *args):
    """a C function of nbpy.c called directly (as a C caller would): RAISED as Error"""
    out, err = ctypes.c_void_p(), ctypes.create_string_buffer(2048)
    rc = fn(*args, ctypes.byref(out), err, len(err))
    if rc:
        raise nb.Error(err.value.decode("utf-8", "replace"), rc)
    nb._lib.nbpy_free(out)

try:
    r = (%(code)s)
    print("NO-RAISE", type(r).__name__)
except nb.Error as e:
    print("RAISED", e.status, str(e).encode("unicode_escape").decode("ascii"))
except BaseException as e:
    print("OTHER", type(e).__name__, str(e)[:300].encode("unicode_escape").decode("ascii"))
'''


def hostile(tmp, code, what, *want):
    """code run in a child: it must raise nanobench.Error (status 2) whose message holds
    every string of want, is one short line and has no raw control byte."""
    r = subprocess.run([sys.executable, "-c", PRELUDE % {"pydir": PYDIR, "tmp": tmp, "code": code}],
                       capture_output=True, text=True, timeout=300)
    line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    msg = line.split(" ", 2)[2] if line.startswith("RAISED ") else ""
    # the child wrote the message with its control bytes escaped: a raw one shows as \x1b
    ok = (r.returncode == 0 and line.startswith("RAISED 2 ") and all(w in msg for w in want)
          and len(msg) < 1200 and "\\n" not in msg)
    detail = msg if ok else "exit %d, %s%s" % (r.returncode, line or "(no output)",
                                                 (" / " + r.stderr.strip()[-300:]) if r.returncode
                                                 else "")
    check(ok, "%s: nanobench.Error: %s" % (what, detail))
    return msg


def hostile_cases(tmp):
    # calibrate's list form: fewer lists than the model has inputs read past the batches
    # (the SIGSEGV in run_batch); more of them became other batches
    hostile(tmp, "nb.calibrate(CA2, [[x]], T + '/h/a')", "calibrate: 1 list for 2 inputs",
            "takes 2 inputs ('x', 'z')", "1 list of batches given")
    hostile(tmp, "nb.calibrate(CONV, [[x], [x]], T + '/h/b')", "calibrate: 2 lists for 1 input",
            "takes 1 input ('x')", "2 lists of batches given")
    hostile(tmp, "nb.calibrate(CONV, [[x, x], [x, x]], T + '/h/b')",
            "calibrate: 2 lists of 2 batches for 1 input (formerly batches of the extra list)",
            "2 lists of batches given")
    # nbpy.c itself, called as a C caller would, without the module's checks
    hostile(tmp, "c_call(nb._lib.nbpy_calibrate, CA2.encode(), (T + '/h/c').encode(), None, None, "
                 "None, None, 1, 1, 1, *c_args([x]))",
            "nbpy_calibrate (C) with 1 input array for 2 inputs", "takes 2 inputs ('x', 'z')")
    hostile(tmp, "c_call(nb._lib.nbpy_calibrate, CONV.encode(), (T + '/h/c').encode(), None, "
                 "None, None, None, 1, 2, 1, *c_args([x, x]))",
            "nbpy_calibrate (C) with 2 input arrays for 1 input", "takes 1 input ('x')")
    hostile(tmp, "c_call(nb._lib.nbpy_calibrate, CONV.encode(), (T + '/h/c').encode(), None, "
                 "None, None, None, 1, 1, 1, None, None, None)",
            "nbpy_calibrate (C) with NULL data", "no data")
    hostile(tmp, "c_call(nb._lib.nbpy_calibrate, CONV.encode(), (T + '/h/c').encode(), None, "
                 "None, None, b'sideways', 1, 1, 1, *c_args([x]))",
            "nbpy_calibrate (C) with weight_round 'sideways'",
            "weight_round is nearest or adaround, not 'sideways'")
    hostile(tmp, "c_call(nb._lib.nbpy_run, EXE.encode(), 1, None, *c_args([p]), None)",
            "nbpy_run (C) with 1 array for 2 inputs", "run(): the model takes 2 inputs ('p', 'q'), "
            "1 given")
    hostile(tmp, "c_call(nb._lib.nbpy_run, None, 0, None, None, None, None, None)",
            "nbpy_run (C) with a NULL exeom", "exeom is required")
    hostile(tmp, "c_call(nb._lib.nbpy_run, EXE.encode(), 2, None, *(lambda a: (a[0], "
                 "(ctypes.c_int * 2)(7, 2), a[2]))(c_args([p, q])), None)",
            "nbpy_run (C) with a rank of 7", "rank 7")
    # wrong types and None
    hostile(tmp, "nb.calibrate(CONV, None, T + '/h/d')", "calibrate(M, None, p)",
            "calibrate(): data is", "not None")
    hostile(tmp, "nb.calibrate(CONV, {'x': x}, T + '/h/d')", "calibrate: an array, not a list",
            "data['x'] is a float32 array of shape (1, 3, 8, 8)", "list of batches")
    hostile(tmp, "nb.calibrate(CONV, {'x': [x, None]}, T + '/h/d')", "calibrate: a batch None",
            "data['x'][1] is None")
    hostile(tmp, "nb.calibrate(CONV, {'x': []}, T + '/h/d')", "calibrate: no batch",
            "no batch given")
    hostile(tmp, "nb.calibrate(CA2, {'x': [x, x], 'z': [z]}, T + '/h/d')",
            "calibrate: 2 batches of x, 1 of z", "data['z'] has 1 batch")
    hostile(tmp, "nb.calibrate(CA2, {'x': [x], 'zz': [z]}, T + '/h/d')",
            "calibrate: a name of no input", "no model input 'zz'; the inputs are 'x', 'z'")
    hostile(tmp, "nb.calibrate(CONV, {'x': [x]}, None)", "calibrate: save_path None",
            "save_path: a path is required")
    hostile(tmp, "nb.calibrate(CONV, {'x': [x]}, T + '/h/e', algo=5)", "calibrate: algo 5",
            "algo: text or a path is needed, not 5")
    hostile(tmp, "nb.run(EXE, None)", "run(exeom, None)", "run(): inputs are")
    hostile(tmp, "nb.run(EXE, 5)", "run(exeom, 5)", "not 5")
    hostile(tmp, "nb.run(EXE, {'p': None, 'q': q})", "run: an input None", "inputs['p'] is None")
    hostile(tmp, "nb.run(EXE, [p, None])", "run: a list holding None", "inputs[1] is None")
    hostile(tmp, "nb.run(EXE, {'p': [[1, 2, 3, 4]], 'q': q})", "run: a Python list for an array",
            "inputs['p'] is a list")
    hostile(tmp, "nb.run(EXE, {'p': np.ma.masked_array(p), 'q': q})", "run: a masked array",
            "masked")
    hostile(tmp, "nb.infer(SUB2, None)", "infer(model, None)", "infer(): inputs are")
    hostile(tmp, "nb.info(5)", "info(5)", "model: text or a path is needed, not 5")
    hostile(tmp, "nb.estimate(None)", "estimate(None)", "model: a path is required")
    hostile(tmp, "nb.infer(SUB2, [p, q], input_shape=5)", "infer(M, [p, q], input_shape=5)",
            "input_shape: text or a path is needed, not 5")
    hostile(tmp, "nb.calibrate(CONV, {'x': [x]}, T + '/h/d', input_shape=['x'])",
            "calibrate(..., input_shape=['x'])", "input_shape: text or a path is needed, not a list")
    hostile(tmp, "nb.compile(SUB2, 5)", "compile(M, 5)", "output")
    hostile(tmp, "nb.compare(1, 2)", "compare(1, 2)", "npu_dump")
    # counts, names, shapes against the model
    hostile(tmp, "nb.run(EXE, [p])", "run: 1 array for 2 inputs",
            "run(): the model takes 2 inputs ('p', 'q'), 1 given")
    hostile(tmp, "nb.run(EXE, [p, q, p])", "run: 3 arrays for 2 inputs", "3 given")
    hostile(tmp, "nb.run(EXE, {'x': p, 'q': q})", "run: a name of no input",
            "run(): no model input 'x'; the inputs are 'p', 'q'")
    hostile(tmp, "nb.run(EXE, {'p': p, '0': q})", "run: an input given twice (by name and index)",
            "given twice")
    hostile(tmp, "nb.run(EXE, {'p': p.T, 'q': q})", "run: another shape",
            "input 'p' is [1,4]; the array given has shape [4,1]")
    hostile(tmp, "nb.run(EXE, {'p': p.reshape(1, 1, 1, 1, 1, 1, 1, 4), 'q': q})", "run: rank 8",
            "inputs['p'] has rank 8")
    hostile(tmp, "nb.infer(SUB2, {'p': p})", "infer: an input missing",
            "infer(): model input 'q' not given; the inputs are 'p', 'q'")
    hostile(tmp, "nb.infer(SUB2, {'p': p, 'q': q, 'r': q})", "infer: a name of no input",
            "no model input 'r'; the inputs are 'p', 'q'")
    hostile(tmp, "nb.infer(SUB2, [p])", "infer: 1 array for 2 inputs",
            "infer(): the model takes 2 inputs ('p', 'q'), 1 given")
    hostile(tmp, "nb.infer(SUB2, {'p': p, 'q': q.reshape(4)})", "infer: another shape",
            "infer(): inputs['q'] is FLOAT [4], but input 'q' is FLOAT [1,4]")
    hostile(tmp, "nb.calibrate(CA2, {'x': [x], 'z': [x]}, T + '/h/g')", "calibrate: another shape",
            "calibrate(): data['z'][0] is FLOAT [1,3,8,8], but input 'z' is FLOAT [1,8,6,6]")
    cache = os.environ.get("NANOBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "nanobench")
    silero = os.path.join(cache, "models", "silero_vad.onnx")
    if os.path.exists(silero):  # an INT64 input (sr): the module passes float32 only
        hostile(tmp, "nb.infer(%r, [np.zeros((1, 512), np.float32), np.array(16000, np.float32), "
                     "np.zeros((2, 1, 64), np.float32), np.zeros((2, 1, 64), np.float32)], "
                     "input_shape='input:1,512;h:2,1,64;c:2,1,64')" % silero,
                "infer: silero_vad's INT64 input sr", "input 'sr' is INT64")
    else:
        print("skip: silero_vad not in the model cache (tests/data/fetch_models.sh)")
    # dtypes: float32 (and float16) only; the rest refused as the CLI refuses a float64 .npy
    for dt in ("np.float64", "np.int8", "np.int64", "np.complex64", "np.bool_", "object",
               "np.longdouble"):
        hostile(tmp, "nb.run(EXE, {'p': p.astype(%s), 'q': q})" % dt, "run: a %s array" % dt,
                "inputs['p'] has dtype", "float32 is expected")
        hostile(tmp, "nb.infer(SUB2, [p, q.astype(%s)])" % dt, "infer: a %s array" % dt,
                "inputs[1] has dtype", "float32 is expected")
        hostile(tmp, "nb.calibrate(CONV, {'x': [x, x.astype(%s)]}, T + '/h/f')" % dt,
                "calibrate: a %s batch" % dt, "data['x'][1] has dtype", "float32 is expected")
    hostile(tmp, "nb.calibrate(CONV, [[x.astype(np.float64)]], T + '/h/f')",
            "calibrate: a float64 batch, list form", "data[0][0] has dtype float64")
    hostile(tmp, "nb.run(EXE, {'p': np.array(['a'] * 4).reshape(1, 4), 'q': q})",
            "run: an array of text", "has dtype <U1")
    # a message names an array by dtype and shape, never prints it
    msg = hostile(tmp, "nb.run(EXE, {'p': np.full((1, 4), 123.25), 'q': q})",
                  "run: a float64 array in the message", "has dtype float64")
    check("123.25" not in msg, "run: the float64 array's values are not in the message")
    msg = hostile(tmp, "nb.info(np.full((30, 30), 7.5))", "info(an array)",
                  "a float64 array of shape (30, 30)")
    check("7.5" not in msg, "info(an array): the array's values are not in the message")


def working_cases(tmp):
    """What must keep working, with values worked by hand (p - q is exact in fp16)."""
    exe = os.path.join(tmp, "sub2.exeom")
    p = np.array([[1, 2, 3, 4]], np.float32)
    q = np.array([[0.5, 0.25, 8, -1]], np.float32)
    want = np.array([[0.5, 1.75, -5, 5]], np.float32)  # by hand
    wide = np.array([[9, 1, 9, 2, 9, 3, 9, 4]], np.float32)
    pf = np.asfortranarray(np.array([[1, 5], [2, 6], [3, 7], [4, 8]], np.float32)).T[:1]
    for what, pp, qq in (("a strided view", wide[:, 1::2], q), ("a Fortran-order transpose", pf, q),
                         ("float16", p.astype(np.float16), q.astype(np.float16)),
                         ("big-endian float32", p.astype(">f4"), q)):
        assert not np.shares_memory(pp, p)
        y = nb.run(exe, {"p": pp, "q": qq})["y"]
        check(np.array_equal(y, want), "run: %s is taken as its values (%s)" % (what, y.ravel()))
        y = nb.infer(os.path.join(tmp, "sub2.onnx"), [pp, qq])["y"]
        check(np.array_equal(y, want), "infer: %s is taken as its values" % what)
    # calibrate's three forms on the two-input model pair the batches alike, as the CLI does
    ca2 = os.path.join(tmp, "conv_add2.onnx")
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(3)]
    zs = [rng.standard_normal((1, 8, 6, 6)).astype(np.float32) for _ in range(3)]
    for d, arrs in (("x", xs), ("z", zs)):
        os.makedirs(os.path.join(tmp, "cal_" + d), exist_ok=True)
        for b, a in enumerate(arrs):
            np.save(os.path.join(tmp, "cal_" + d, "b%03d.npy" % b), a)
    cli("calibrate", "--model", ca2, "--save_path", os.path.join(tmp, "cli", "ca2"), "--data_dir",
        os.path.join(tmp, "cal_x") + ";" + os.path.join(tmp, "cal_z"), "--batch_num", "3")
    with open(os.path.join(tmp, "cli", "ca2_quant_record.txt"), "rb") as f:
        theirs = f.read()
    for form, data in (("a dict", {"x": xs, "z": zs}), ("a dict in the other order",
                                                         {"z": zs, "x": xs}),
                       ("a list of lists", [xs, zs]),
                       ("a tuple of tuples", (tuple(xs), tuple(zs)))):
        cal = nb.calibrate(ca2, data, os.path.join(tmp, "py", "ca2"))
        with open(cal["record"], "rb") as f:
            mine = f.read()
        check(mine == theirs and cal["batches"] == 3,
              "calibrate: %s of 3 batches of x and z gives the CLI's record byte for byte" % form)


def threads(tmp):
    """100 run() calls from 8 threads at once: all succeed, each output the sequential one's,
    which is the CLI's run on the same input."""
    conv = os.path.join(tmp, "conv.onnx")
    rng = np.random.default_rng(11)
    xs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(4)]
    cal = nb.calibrate(conv, {"x": xs}, os.path.join(tmp, "th", "conv"))
    exe = nb.compile(cal["deploy_model"], os.path.join(tmp, "th", "conv"))["exeom"]
    np.save(os.path.join(tmp, "th", "x0.npy"), xs[0])
    out = json.loads(cli("run", exe, "--input", "x=" + os.path.join(tmp, "th", "x0.npy"),
                         "--output-dir", os.path.join(tmp, "th", "out"), "--json"))
    theirs = np.load(out["outputs"][0]["file"])
    seq = [nb.run(exe, {"x": a})["y"] for a in xs]
    check(np.array_equal(seq[0], theirs), "threads: the sequential run() is the CLI's run %s"
          % (theirs.shape,))
    results, lock = [], threading.Lock()
    start = threading.Barrier(8)

    def worker(t, n):
        start.wait()
        for i in range(n):
            k = (t + i) % len(xs)
            try:
                y = nb.run(exe, {"x": xs[k]})["y"]
                r = "ok" if np.array_equal(y, seq[k]) else "other values"
            except nb.Error as e:
                r = str(e)
            with lock:
                results.append(r)

    ts = [threading.Thread(target=worker, args=(t, 13 if t < 4 else 12)) for t in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    good = results.count("ok")
    bad = sorted(set(r for r in results if r != "ok"))
    check(len(results) == 100 and good == 100,
          "threads: %d/100 concurrent run() calls from 8 threads equal the sequential ones%s"
          % (good, (": " + "; ".join(bad[:3])) if bad else ""))


def payload(tmp):
    """An input name of ';', '=', quotes, ESC sequences and BEL, 1000 bytes, through info,
    estimate and infer."""
    pl = os.path.join(tmp, "payload.onnx")
    info = nb.info(pl)
    name = info["inputs"][0]["name"]
    head = "a;b=c\"d'e\x1b[31mred\x1b]0;title\x07"
    check(name == head + "n" * (1000 - len(head)) and len(name) == 1000,
          "payload: info gives the 1000-byte name as the model holds it")
    check(info == json.loads(cli("info", pl, "--json")), "payload: info is the CLI's info --json")
    est, cest = nb.estimate(pl), json.loads(cli("estimate", pl, "--json"))
    five = ["TOTAL_WEIGHT_SIZE", "TOTAL_MEM_SIZE", "TOTAL_EXEOM_SIZE", "TOTAL_NET_OP_TYPE",
            "NOT_SUPPORT_OP_TYPE"]
    check([est[k] for k in five] == [cest[k] for k in five],
          "payload: estimate's five items are the CLI's")
    check([i["name"] for i in nb.inputs(pl)] == [name, "q"], "payload: inputs() names it")
    p = np.array([[1, 2, 3, 4]], np.float32)
    q = np.array([[0.5, 0.25, 8, -1]], np.float32)
    want = np.array([[0.5, 1.75, -5, 5]], np.float32)  # by hand
    y1 = nb.infer(pl, {name: p, "q": q})["y"]
    y2 = nb.infer(pl, {"q": q, name: p})["y"]
    y3 = nb.infer(pl, [p, q])["y"]
    check(all(np.array_equal(y, want) for y in (y1, y2, y3)),
          "payload: infer by the payload name (both dict orders) and by position gives p - q = %s"
          % y1.ravel())
    for bad, what in (({name[:-1]: p, "q": q}, "the name less its last byte"),
                      ({name + ";q": p, "q": q}, "the name and ';q'")):
        try:
            nb.infer(pl, bad)
            check(False, "payload: %s raises" % what)
        except nb.Error as e:
            m = str(e)
            check(e.status == 2 and "\x1b" not in m and "\x07" not in m and len(m) < 600
                  and "the inputs are" in m,
                  "payload: %s raises a short Error without raw control bytes (%d characters)"
                  % (what, len(m)))


def ctrl_c(tmp):
    """A SIGINT to a process in nb.bringup (melspectrogram: 2-3 s) stops the bring-up:
    KeyboardInterrupt, the bringup run recorded 'interrupted' (a new user's find: the signal
    was lost, the call ran to its end and returned)."""
    cache = os.environ.get("NANOBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "nanobench")
    mel = os.path.join(cache, "models", "melspectrogram.onnx")
    if not os.path.exists(mel):
        print("skip: melspectrogram not in the model cache (tests/data/fetch_models.sh)")
        return
    d = os.path.join(tmp, "mel")
    os.makedirs(d)
    rng = np.random.RandomState(9)
    for i in range(12):
        (rng.standard_normal(1760) * 3000).astype(np.float32).tofile(os.path.join(d, "b%02d.bin" % i))
    out, db = os.path.join(tmp, "melbu"), os.path.join(tmp, "mel.db")
    code = ("import sys, os\nsys.path.insert(0, %r)\nos.environ['NANOBENCH_LIB'] = %r\n"
            "import nanobench as nb\ntry:\n    nb.bringup(%r, data_dir=%r, eval_dir=%r, "
            "input_shape='input:1,1760', out=%r, db=%r)\n    print('returned')\n"
            "except KeyboardInterrupt:\n    print('KeyboardInterrupt')\n"
            % (PYDIR, LIB, mel, d, d, out, db))
    pr = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    for _ in range(3000):  # the bring-up under way: its calibration's folder made
        if os.path.isdir(os.path.join(out, "quant")) or pr.poll() is not None:
            break
        time.sleep(0.01)
    pr.send_signal(2)
    said = pr.communicate(timeout=600)[0].strip()
    hist = subprocess.run([NB, "--db", db, "history", "list", "--kind", "bringup"],
                          capture_output=True, text=True).stdout
    check(said == "KeyboardInterrupt" and " interrupted " in hist,
          "Ctrl-C in nb.bringup: %s; history: %s" % (said, hist.strip().splitlines()[-1:]))


with tempfile.TemporaryDirectory() as tmp:
    ctrl_c(tmp)
    for kind, f in (("conv", "conv.onnx"), ("sub2", "sub2.onnx"), ("conv_add2", "conv_add2.onnx"),
                    ("payload_name", "payload.onnx")):
        subprocess.run([FIX, kind, os.path.join(tmp, f)], check=True)
    nb.compile(os.path.join(tmp, "sub2.onnx"), os.path.join(tmp, "sub2"))
    hostile_cases(tmp)
    working_cases(tmp)
    threads(tmp)
    payload(tmp)
    check(not os.path.exists(os.path.join(tmp, "h")) or not any(
        files for _, _, files in os.walk(os.path.join(tmp, "h"))),
        "nothing written by the refused calls")

print("python_hostile: %d check(s) failed" % fails if fails
      else "python_hostile: every check passed")
sys.exit(1 if fails else 0)
