"""nanobench from Python: each step of the bring-up on numpy arrays.

ctypes over libnanobench.so (built by CMake next to the binary: build/python/), no compiled
extension, as the vendor's tools are scripted (onnx_estimate.py, amct_onnx,
msaccucmp.py). Every function raises nanobench.Error with the one-line message the CLI
prints for the same mistake; Error.status is the CLI's exit status (2 bad input, 1
internal). Arrays are numpy float32 (float16 is widened exactly); float64, integer, complex
and object arrays are refused, not converted, as the CLI refuses a float64 .npy. Every
argument is checked against the model (the count of inputs, their names and shapes) before
the engine sees it. Calls from threads take turns (one engine call at a time).

    import numpy as np, nanobench as nb
    est = nb.estimate("m.onnx")                                  # the five sizes and the tasks
    cal = nb.calibrate("m.onnx", data={"x": [np.zeros((1, 3, 8, 8), np.float32)]},
                       save_path="out/m")                        # AMCT's three files
    exe = nb.compile(cal["deploy_model"], "out/m")               # out/m.exeom, out/m.dbg
    y = nb.run(exe["exeom"], {"x": x}, dump="npu")               # {name: array} (simulated NPU)
    g = nb.infer("m.onnx", {"x": x}, dump="golden")              # the float reference
    cmp = nb.compare(y.dump, "golden")                           # rows, verdict
"""
import ctypes
import json
import os

import numpy as np

__all__ = ["Error", "info", "inputs", "estimate", "calibrate", "compile", "run", "infer", "compare"]


class Error(Exception):
    """A step refused its input or failed: str() is the one-line message."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _find_lib():
    env = os.environ.get("NANOBENCH_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "build", "python", "libnanobench.so"),
                 os.path.join(here, "libnanobench.so")):
        if os.path.exists(cand):
            return cand
    return "libnanobench.so"


_lib = ctypes.CDLL(_find_lib())
_c = ctypes.c_char_p
_P = ctypes.POINTER
_lib.nbpy_free.argtypes = [ctypes.c_void_p]
_OUT = [_P(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_size_t]
_lib.nbpy_estimate.argtypes = [_c, _c] + _OUT
_lib.nbpy_inputs.argtypes = [_c, _c] + _OUT
_lib.nbpy_info.argtypes = [_c, _c] + _OUT
_lib.nbpy_calibrate.argtypes = [_c, _c, _c, _c, _c, _c, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                _P(_P(ctypes.c_float)), _P(ctypes.c_int), _P(ctypes.c_int64)] + _OUT
_lib.nbpy_compile.argtypes = [_c, _c, _c, _c] + _OUT
_lib.nbpy_run.argtypes = [_c, ctypes.c_int, _P(_c), _P(_P(ctypes.c_float)), _P(ctypes.c_int),
                          _P(ctypes.c_int64), _c] + _OUT
_lib.nbpy_infer.argtypes = [_c, _c, ctypes.c_int, _P(_P(ctypes.c_float)), _P(ctypes.c_int),
                            _P(ctypes.c_int64), _c] + _OUT
_lib.nbpy_compare.argtypes = [_c, _c] + _OUT


def _what(x):
    """x as a message names it: never a whole array (its dtype and shape), text shortened."""
    if isinstance(x, np.ndarray):
        return "a %s%s array of shape %s" % ("masked " if isinstance(x, np.ma.MaskedArray)
                                             else "", x.dtype, x.shape)
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        r = repr(x)
        if len(r) <= 80:
            return r
        return r[:60] + ("...' (%d characters)" % len(x) if isinstance(x, (str, bytes)) else "...")
    return "a %s" % type(x).__name__


def _b(s, what="an argument"):
    """An optional text or path argument as bytes for C (None stays None); Error (status 2)
    for anything else, or for a NUL byte, which C would take as the end."""
    if s is None:
        return None
    if not isinstance(s, (str, bytes, os.PathLike)):
        raise Error("%s: text or a path is needed, not %s" % (what, _what(s)), 2)
    try:
        b = os.fsencode(s)
    except (TypeError, ValueError) as e:  # a PathLike giving no text
        raise Error("%s: not a path (%s)" % (what, e), 2)
    if b"\0" in b:
        raise Error("%s: %s holds a NUL byte" % (what, _what(s)), 2)
    return b


def _path(what, s):
    """A required path: bytes for C, or Error (status 2) when it is missing or not a path."""
    b = _b(s, what)
    if not b:
        raise Error("%s: a path is required, not %s" % (what, _what(s)), 2)
    return b


def _call(fn, *args):
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(2048)
    rc = fn(*args, ctypes.byref(out), err, len(err))
    if rc == 130:  # a Ctrl-C stopped it (the run is recorded interrupted): Python's own way
        raise KeyboardInterrupt(err.value.decode("utf-8", "replace"))
    if rc:
        raise Error(err.value.decode("utf-8", "replace"), rc)
    try:
        return json.loads(ctypes.string_at(out.value).decode("utf-8"))
    finally:
        _lib.nbpy_free(out)


def _array(fn, label, a):
    """a as C gets it: a float32 C-contiguous array. float32 (any byte order) and float16
    (widened exactly) are taken; anything else is refused as the CLI refuses a float64 .npy,
    never converted: float64 would be rounded, integers could change, complex would lose
    its imaginary part."""
    if not isinstance(a, np.ndarray) or isinstance(a, np.ma.MaskedArray):
        raise Error("%s(): %s is %s; a numpy array of float32 is expected" % (fn, label, _what(a)),
                    2)
    if a.dtype.kind != "f" or a.dtype.itemsize not in (2, 4):
        raise Error("%s(): %s has dtype %s; float32 is expected (or float16): convert it "
                    "with .astype(np.float32) if that is what you mean" % (fn, label, a.dtype), 2)
    if a.ndim > 6:
        raise Error("%s(): %s has rank %d (at most 6)" % (fn, label, a.ndim), 2)
    return np.ascontiguousarray(a, dtype=np.float32)


def _label(name):
    """A dict key or index as a message shows it: data['x'], inputs[0]."""
    return "[%s]" % (_what(name) if isinstance(name, str) else name)


def _names(names):
    """'a', 'b' for a message (each name shortened)."""
    return ", ".join(_what(n) for n in names)


def _arrays(fn, labelled):
    """float32 C-contiguous copies of [(label, array)] (kept alive by the caller), their
    pointers, ranks, dims; Error naming the argument for anything else."""
    keep = [_array(fn, label, a) for label, a in labelled]
    ptrs = (_P(ctypes.c_float) * max(len(keep), 1))(
        *[a.ctypes.data_as(_P(ctypes.c_float)) for a in keep])
    ranks = (ctypes.c_int * max(len(keep), 1))(*[a.ndim for a in keep])
    dims = (ctypes.c_int64 * (6 * max(len(keep), 1)))()
    for i, a in enumerate(keep):
        for d, n in enumerate(a.shape):
            dims[6 * i + d] = n
    return keep, ptrs, ranks, dims


def _ordered(fn, inputs, names):
    """[(label, array)] of a dict {name: array} in the model's input order, or of a list
    (whose count the engine checks again); Error for a name of no input or one missing."""
    if isinstance(inputs, dict):
        for n in inputs:
            if not isinstance(n, str) or n not in names:
                raise Error("%s(): no model input %s; the inputs are %s"
                            % (fn, _what(n), _names(names)), 2)
        for n in names:
            if n not in inputs:
                raise Error("%s(): model input %s not given; the inputs are %s"
                            % (fn, _what(n), _names(names)), 2)
        return [("inputs" + _label(n), inputs[n]) for n in names]
    if isinstance(inputs, (list, tuple)):
        if names is not None and len(inputs) != len(names):
            raise Error("%s(): the model takes %d input%s (%s), %d given" % (
                fn, len(names), "" if len(names) == 1 else "s", _names(names), len(inputs)), 2)
        return [("inputs[%d]" % i, a) for i, a in enumerate(inputs)]
    raise Error("%s(): inputs are {name: array} or a list of arrays, not %s" % (fn, _what(inputs)),
                2)


def estimate(model, input_shape=None):
    """The estimate's JSON (nanobench estimate --json): the five size items, the per-task rows."""
    return _call(_lib.nbpy_estimate, _path("model", model), _b(input_shape, "input_shape"))


def info(model, input_shape=None):
    """The model as `nanobench info --json` gives it: producer, opset, inputs and outputs,
    node counts, the op histogram and the ops the reference cannot run."""
    return _call(_lib.nbpy_info, _path("model", model), _b(input_shape, "input_shape"))


def inputs(model, input_shape=None):
    """The model's inputs: [{"name", "dtype", "shape"}] (a dynamic dim is -1)."""
    return _call(_lib.nbpy_inputs, _path("model", model), _b(input_shape, "input_shape"))


def calibrate(model, data, save_path, config=None, algo=None, input_shape=None,
              weight_round=None, bias_correction=True):
    """Post-training calibration on numpy arrays: data is {input name: [batch arrays]} (or a
    list of lists in the model's input order). Writes save_path's record, fake-quant and
    deploy models (AMCT's names) and returns the CLI's calibrate --json: their paths, the
    per-layer scales and SQNRs, the fake-quant model's output SQNR against float and the
    INT16 and CPU placement advice. weight_round "adaround" (the CLI's --weight_round) learns
    each weight's rounding on the calibration data, except on layers whose config override
    sets weight_round itself; "nearest" or None: the config's (ARQ's nearest by default).
    bias_correction=False: the CLI's --no_bias_correction."""
    if not isinstance(bias_correction, bool):
        raise Error("calibrate(): bias_correction is True or False, not %s"
                    % _what(bias_correction), 2)
    model_b, save_b = _path("model", model), _path("save_path", save_path)
    if not isinstance(data, (dict, list, tuple)):
        raise Error("calibrate(): data is {input name: [arrays]} or a list of lists of arrays "
                    "in the model's input order, not %s" % _what(data), 2)
    # the order the engine pairs the batches in: input_shape's (AMCT's pairing) when it names
    # every input, else the model's inputs'
    model_inputs = {i["name"]: i for i in _model_inputs(model, input_shape)}
    order = list(model_inputs)
    if isinstance(input_shape, str):
        named = [p.strip().rsplit(":", 1)[0] for p in input_shape.split(";") if p.strip()]
        if sorted(named) == sorted(order):
            order = named
    if isinstance(data, dict):
        # every key an input, every input a key
        _ordered("calibrate", data, order)
        keys = [(n, "data" + _label(n)) for n in order]
        per_input = [data[n] for n in order]
    else:
        if len(data) != len(order):
            raise Error("calibrate(): the model takes %d input%s (%s), %d list%s of batches "
                        "given" % (len(order), "" if len(order) == 1 else "s", _names(order),
                                   len(data), "" if len(data) == 1 else "s"), 2)
        keys = [(n, "data[%d]" % i) for i, n in enumerate(order)]
        per_input = list(data)
    for (_, label), b in zip(keys, per_input):
        if not isinstance(b, (list, tuple)):
            raise Error("calibrate(): %s is %s; a list of batches (arrays) is expected"
                        % (label, _what(b)), 2)
    n_batches = len(per_input[0]) if per_input else 0
    for (_, label), b in zip(keys, per_input):
        if len(b) != n_batches:
            raise Error("calibrate(): %s has %d batch%s, %s %d: every input needs as many"
                        % (label, len(b), "" if len(b) == 1 else "es", keys[0][1], n_batches), 2)
    if n_batches == 0:
        raise Error("calibrate(): no batch given (%s is empty)" % keys[0][1] if keys else
                    "calibrate(): no batch given", 2)
    flat = [("%s[%d]" % (keys[i][1], b), per_input[i][b])
            for b in range(n_batches) for i in range(len(per_input))]
    keep, ptrs, _, _ = _arrays("calibrate", flat)
    for k, a in enumerate(keep):
        _fits("calibrate", flat[k][0], a, model_inputs[order[k % len(order)]])
    first = keep[:len(per_input)]
    ranks = (ctypes.c_int * max(len(first), 1))(*[a.ndim for a in first])
    dims = (ctypes.c_int64 * (6 * max(len(first), 1)))()
    for i, a in enumerate(first):
        for d, n in enumerate(a.shape):
            dims[6 * i + d] = n
    for k, a in enumerate(keep):
        if a.shape != first[k % len(first)].shape:
            raise Error("calibrate(): %s has shape %s, %s[0] %s: every batch of an input has "
                        "one shape" % (flat[k][0], a.shape, keys[k % len(first)][1],
                                       first[k % len(first)].shape), 2)
    return _call(_lib.nbpy_calibrate, model_b, save_b, _b(input_shape, "input_shape"),
                 _b(config, "config"), _b(algo, "algo"), _b(weight_round, "weight_round"),
                 int(bias_correction), len(per_input), n_batches, ptrs,
                 ranks, dims)


def _model_inputs(model, input_shape):
    """The model's inputs in order, as inputs() gives them (Error when it cannot be read)."""
    return inputs(model, input_shape)


def _fits(fn, label, a, inp):
    """Error unless array a (float32 now) fits model input inp ({"name", "dtype", "shape"},
    a dynamic dim -1): the engine's words, with the argument's name."""
    if inp["dtype"] not in ("FLOAT", "FLOAT16"):
        raise Error("%s(): input %s is %s; the Python module passes float32 arrays only (the "
                    "CLI takes a .npy of the input's type)" % (fn, _what(inp["name"]),
                                                                inp["dtype"]), 2)
    want = inp["shape"]
    if len(want) != a.ndim or any(w >= 0 and w != n for w, n in zip(want, a.shape)):
        raise Error("%s(): %s is FLOAT [%s], but input %s is %s [%s]" % (
            fn, label, ",".join(map(str, a.shape)), _what(inp["name"]), inp["dtype"],
            ",".join(str(w) if w >= 0 else "?" for w in want)), 2)


def compile(model, output, input_fp16_nodes=None, input_shape=None):
    """atc: model (a deploy or Q/DQ model) into output.exeom and output.dbg; every float
    input fp16 (None) or those input_fp16_nodes ("x;y") names. Returns the paths and sizes."""
    base = os.path.basename(os.fsdecode(_path("output", output)))
    if base in ("", ".", ".."):
        raise Error("output: %r names a folder; give FOLDER/NAME (NAME.exeom, NAME.dbg)"
                    % (output,), 2)
    return _call(_lib.nbpy_compile, _path("model", model), _path("output", output),
                 _b(input_fp16_nodes, "input_fp16_nodes"), _b(input_shape, "input_shape"))


class Outputs(dict):
    """{output name: numpy array}, with .dump (the dump folder or None), .cycles and .result
    (the CLI's run --json or infer's object: run's has the per-task profile)."""
    dump = None
    cycles = 0
    result = None


def _outputs(res):
    out = Outputs()
    for o in res["outputs"]:
        out[o["name"]] = np.array(o["values"], dtype=np.float32).reshape(o["shape"])
    d = res.get("dump")
    out.dump = d.get("folder") if isinstance(d, dict) else d
    out.cycles = res.get("cycles", 0)
    out.result = res
    return out


def run(exeom, inputs, dump=None):
    """The compiled model on the simulated NPU: inputs {name: array} (each name an input of
    the model, each array of exactly its shape) or a list in the model's order (float32,
    converted to the model's input type). With dump=FOLDER every task's output is dumped
    there as `nanobench run --dump` does; Outputs.dump is the folder. The count, the names
    and the shapes are checked against the exeom's inputs before it runs."""
    exeom_b, dump_b = _path("exeom", exeom), _b(dump, "dump")
    if isinstance(inputs, dict):
        names = list(inputs.keys())
        for n in names:
            if not isinstance(n, str) or not n:
                raise Error("run(): input names are the model's (text), not %s" % _what(n), 2)
        labelled = [("inputs" + _label(n), a) for n, a in inputs.items()]
    elif isinstance(inputs, (list, tuple)):
        names = None
        labelled = [("inputs[%d]" % i, a) for i, a in enumerate(inputs)]
    else:
        raise Error("run(): inputs are {name: array} or a list of arrays, not %s"
                    % _what(inputs), 2)
    if len(labelled) > 64:
        raise Error("run(): %d inputs given (at most 64)" % len(labelled), 2)
    keep, ptrs, ranks, dims = _arrays("run", labelled)
    cnames = (_c * max(len(keep), 1))(*[_b(n, "run(): input name") for n in names]) \
        if names else None
    return _outputs(_call(_lib.nbpy_run, exeom_b, len(keep), cnames, ptrs, ranks, dims, dump_b))


def infer(model, inputs, dump=None, input_shape=None):
    """The float reference (golden): inputs as run's; dump=FOLDER writes its golden dumps
    as `nanobench infer --dump` does."""
    model_b, shape_b, dump_b = (_path("model", model), _b(input_shape, "input_shape"),
                                _b(dump, "dump"))
    if not isinstance(inputs, (dict, list, tuple)):
        raise Error("infer(): inputs are {name: array} or a list of arrays, not %s"
                    % _what(inputs), 2)
    model_inputs = _model_inputs(model, input_shape)
    labelled = _ordered("infer", inputs, [i["name"] for i in model_inputs])
    keep, ptrs, ranks, dims = _arrays("infer", labelled)
    for (label, _), a, inp in zip(labelled, keep, model_inputs):
        _fits("infer", label, a, inp)
    return _outputs(_call(_lib.nbpy_infer, model_b, shape_b, len(keep), ptrs, ranks, dims,
                          dump_b))


def compare(npu_dump, golden_dump):
    """file_compare of two dump folders: the CLI's compare file_compare --json ("verdict",
    "first_over_threshold", "largest_sqnr_drop", "rows": [...]), without its CSV."""
    return _call(_lib.nbpy_compare, _path("npu_dump", npu_dump), _path("golden_dump", golden_dump))


# ---- the bring-up (nb_bringup, include/nb/bringup.h): the whole pipeline in one call ----
_lib.nbpy_bringup.argtypes = [_c, ctypes.c_int, _P(_c), _P(_c)] + _OUT
_LINE = ctypes.CFUNCTYPE(None, ctypes.c_char_p)
_lib.nbpy_bringup_progress.argtypes = [_c, ctypes.c_int, _P(_c), _P(_c), _LINE] + _OUT
_lib.nbpy_bringup_cancel.argtypes = []
__all__.append("bringup")
_BRINGUP_OPTIONS = ("data_types", "calibration_config", "batch_num", "algo", "soc_version",
                    "input_fp16_nodes", "output_type", "out_nodes", "cpu_nodes",
                    "nb_input_scale", "threshold", "eval_count", "auto_place",
                    "fail_under_cosine", "target_sqnr", "target_outputs", "search_baseline",
                    "search_max_cycles",
                    "db", "no_record")


def bringup(model, data_dir=None, eval_dir=None, input_shape=None, out=None, progress=None,
            **options):
    """The CLI's `nanobench bringup` in this process: estimate, calibrate, compile, run on
    the simulated NPU, the float reference, compare, the fp16 fix; returns the summary
    (DIR/summary.json, as `bringup --json` prints it) as a dict. data_dir and eval_dir: one
    folder per model input (a list, or the CLI's "dir_x;dir_y"). options are the CLI's
    flags by their names: data_types, calibration_config, batch_num, algo, soc_version,
    input_fp16_nodes, output_type, out_nodes, cpu_nodes, nb_input_scale, threshold,
    eval_count (int), auto_place (bool), fail_under_cosine (float); target_sqnr (float, dB:
    the precision and placement search, summary["search"]), target_outputs (a list of
    output names), search_max_cycles (a cycle count), search_baseline (bool); progress: a
    function called with each progress line (str, as the CLI prints them on stderr: steps,
    the search's tries, warnings); an exception it raises stops the bring-up (recorded
    interrupted) and is raised to the caller; db (the run database's
    path; default: the CLI's), no_record (bool). Recorded in the run history as the CLI's
    bringup is (a bringup run, its steps its children). Error (status 2) for bad input."""
    keys, vals = [], []

    def put(key, v):
        if v is None or v is False:
            return
        if isinstance(v, (list, tuple)):
            parts = []
            for x in v:
                if x is None:
                    raise Error("bringup(): %s holds None; a folder or name is needed" % key, 2)
                p = os.fsdecode(_b(x, key))
                if ";" in p:  # the list's separator, as the CLI's "a;b"
                    raise Error("bringup(): %s: %r holds ';', which separates the list's "
                                "entries" % (key, p[:60]), 2)
                parts.append(p)
            v = ";".join(parts)
        elif key == "target_sqnr" and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise Error("bringup(): target_sqnr is a number of dB, not %s" % _what(v), 2)
        elif key == "search_max_cycles" and (isinstance(v, bool) or not isinstance(v, int)
                                             or not 1 <= v < 10 ** 15):
            raise Error("bringup(): search_max_cycles is a whole number of cycles (1 or more), "
                        "not %s" % _what(v), 2)
        elif key in ("auto_place", "no_record", "search_baseline") and not isinstance(v, bool):
            raise Error("bringup(): %s is True or False, not %s" % (key, _what(v)), 2)
        elif v is True:
            v = "1"
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            v = repr(v)
        keys.append(key.encode())
        vals.append(_b(v, key))

    for key in options:
        if key not in _BRINGUP_OPTIONS:
            raise Error("bringup: unknown option '%s'" % key, 2)
    put("data_dir", data_dir)
    put("eval_dir", eval_dir)
    put("input_shape", input_shape)
    put("out", out)
    for key, v in options.items():
        put(key, v)
    ck = (_c * max(len(keys), 1))(*keys)
    cv = (_c * max(len(vals), 1))(*vals)
    if progress is None:
        return _call(_lib.nbpy_bringup, _path("model", model), len(keys), ck, cv)
    if not callable(progress):
        raise Error("bringup(): progress is a function of one str, not %s" % _what(progress), 2)

    raised = []

    def line(b):
        if raised:
            return
        try:
            progress(b.decode("utf-8", "replace"))
        except BaseException as e:  # noqa: B036: the bring-up stops, the caller gets it
            raised.append(e)
            _lib.nbpy_bringup_cancel()
    cb = _LINE(line)  # kept alive for the call
    try:
        return _call(_lib.nbpy_bringup_progress, _path("model", model), len(keys), ck, cv, cb)
    except (Error, KeyboardInterrupt):
        if raised:
            raise raised[0] from None
        raise
