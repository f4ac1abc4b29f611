"""nanobench from Python: each step of the bring-up on numpy arrays.

ctypes over libnanobench.so (built by CMake next to the binary: build/python/), no compiled
extension, as the vendor's tools are scripted (onnx_estimate.py, amct_onnx,
msaccucmp.py). Every function raises nanobench.Error with the one-line message the CLI
prints for the same mistake; Error.status is the CLI's exit status (2 bad input, 1
internal).

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
_lib.nbpy_calibrate.argtypes = [_c, _c, _c, _c, _c, ctypes.c_int, ctypes.c_int,
                                _P(_P(ctypes.c_float)), _P(ctypes.c_int), _P(ctypes.c_int64)] + _OUT
_lib.nbpy_compile.argtypes = [_c, _c, _c, _c] + _OUT
_lib.nbpy_run.argtypes = [_c, ctypes.c_int, _P(_c), _P(_P(ctypes.c_float)), _P(ctypes.c_int),
                          _P(ctypes.c_int64), _c] + _OUT
_lib.nbpy_infer.argtypes = [_c, _c, ctypes.c_int, _P(_P(ctypes.c_float)), _P(ctypes.c_int),
                            _P(ctypes.c_int64), _c] + _OUT
_lib.nbpy_compare.argtypes = [_c, _c] + _OUT


def _b(s, what="an argument"):
    """An optional text or path argument as bytes for C (None stays None); Error (status 2)
    for anything else, or for a NUL byte, which C would take as the end."""
    if s is None:
        return None
    if not isinstance(s, (str, bytes, os.PathLike)):
        raise Error("%s: text or a path is needed, not %r" % (what, s), 2)
    b = os.fsencode(s)
    if b"\0" in b:
        raise Error("%s: %r holds a NUL byte" % (what, s), 2)
    return b


def _path(what, s):
    """A required path: bytes for C, or Error (status 2) when it is missing or not a path."""
    b = _b(s, what)
    if not b:
        raise Error("%s: a path is required, not %r" % (what, s), 2)
    return b


def _call(fn, *args):
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(2048)
    rc = fn(*args, ctypes.byref(out), err, len(err))
    if rc:
        raise Error(err.value.decode("utf-8", "replace"), rc)
    try:
        return json.loads(ctypes.string_at(out.value).decode("utf-8"))
    finally:
        _lib.nbpy_free(out)


def _arrays(arrs):
    """float32 C-contiguous copies (kept alive by the caller), their pointers, ranks, dims."""
    keep = []
    for i, a in enumerate(arrs):
        try:
            keep.append(np.ascontiguousarray(a, dtype=np.float32))
        except (TypeError, ValueError) as e:
            raise Error("array %d: not numbers numpy turns into float32 (%s)" % (i, e), 2)
    for a in keep:
        if a.ndim > 6:
            raise Error("an array of rank %d (at most 6)" % a.ndim, 2)
    ptrs = (_P(ctypes.c_float) * max(len(keep), 1))(
        *[a.ctypes.data_as(_P(ctypes.c_float)) for a in keep])
    ranks = (ctypes.c_int * max(len(keep), 1))(*[a.ndim for a in keep])
    dims = (ctypes.c_int64 * (6 * max(len(keep), 1)))()
    for i, a in enumerate(keep):
        for d, n in enumerate(a.shape):
            dims[6 * i + d] = n
    return keep, ptrs, ranks, dims


def _ordered(inputs, names):
    """The arrays of a dict {name: array} in the model's input order (a list passes as is)."""
    if isinstance(inputs, dict):
        missing = [n for n in names if n not in inputs]
        if missing or len(inputs) != len(names):
            raise Error("inputs %s given; the model takes %s" % (sorted(inputs), names), 2)
        return [inputs[n] for n in names]
    return list(inputs)


def estimate(model, input_shape=None):
    """The estimate's JSON (nanobench estimate --json): the five size items, the per-task rows."""
    return _call(_lib.nbpy_estimate, _path("model", model), _b(input_shape))


def info(model, input_shape=None):
    """The model as `nanobench info --json` gives it: producer, opset, inputs and outputs,
    node counts, the op histogram and the ops the reference cannot run."""
    return _call(_lib.nbpy_info, _path("model", model), _b(input_shape))


def inputs(model, input_shape=None):
    """The model's inputs: [{"name", "dtype", "shape"}] (a dynamic dim is -1)."""
    return _call(_lib.nbpy_inputs, _path("model", model), _b(input_shape))


def calibrate(model, data, save_path, config=None, algo=None, input_shape=None):
    """Post-training calibration on numpy arrays: data is {input name: [batch arrays]} (or a
    list of lists in the model's input order). Writes save_path's record, fake-quant and
    deploy models (AMCT's names) and returns the CLI's calibrate --json: their paths, the
    per-layer scales and SQNRs, the fake-quant model's output SQNR against float and the
    INT16 and CPU placement advice."""
    if isinstance(data, dict):
        # the order the engine pairs the batches in: input_shape's (AMCT's pairing), else
        # the model's inputs'; every key an input, every input a key
        # (input_shape's order when it names every input, as the engine pairs them)
        order = _model_inputs(model)
        if isinstance(input_shape, str):
            named = [p.strip().rsplit(":", 1)[0] for p in input_shape.split(";") if p.strip()]
            if order and sorted(named) == sorted(order):
                order = named
        if order:
            if sorted(order) != sorted(data, key=str):
                raise Error("data names %s; the model's inputs are %s" % (
                    sorted(map(str, data)), order), 2)
            per_input = [data[n] for n in order]
        else:
            per_input = list(data.values())
    else:
        per_input = list(data)
    n_batches = len(per_input[0]) if per_input else 0
    if any(len(b) != n_batches for b in per_input):
        raise Error("every input needs the same number of batches", 2)
    flat = [per_input[i][b] for b in range(n_batches) for i in range(len(per_input))]
    keep, ptrs, _, _ = _arrays(flat)
    first = keep[:len(per_input)]
    ranks = (ctypes.c_int * max(len(first), 1))(*[a.ndim for a in first])
    dims = (ctypes.c_int64 * (6 * max(len(first), 1)))()
    for i, a in enumerate(first):
        for d, n in enumerate(a.shape):
            dims[6 * i + d] = n
    for k, a in enumerate(keep):
        if a.shape != first[k % len(first)].shape:
            raise Error("batch %d of input %d has shape %s, its first batch %s"
                        % (k // len(first), k % len(first), a.shape,
                           first[k % len(first)].shape), 2)
    return _call(_lib.nbpy_calibrate, _path("model", model), _path("save_path", save_path),
                 _b(input_shape), _b(config),
                 _b(algo), len(per_input), n_batches, ptrs, ranks, dims)


def _model_inputs(model):
    try:
        return [i["name"] for i in inputs(model)] or None
    except Error:
        return None


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
    there as `nanobench run --dump` does; Outputs.dump is the folder."""
    if isinstance(inputs, dict):
        names, arrs = list(inputs.keys()), list(inputs.values())
        for n in names:
            if not isinstance(n, str) or not n:
                raise Error("run: input names are the model's (text), not %r" % (n,), 2)
    elif isinstance(inputs, (list, tuple)):
        names, arrs = None, list(inputs)
    else:
        raise Error("run: inputs are {name: array} or a list of arrays, not %r" % (inputs,), 2)
    keep, ptrs, ranks, dims = _arrays(arrs)
    cnames = (_c * max(len(keep), 1))(*[_b(n, "input name") for n in names]) if names else None
    return _outputs(_call(_lib.nbpy_run, _path("exeom", exeom), len(keep), cnames, ptrs, ranks, dims,
                          _b(dump, "dump")))


def infer(model, inputs, dump=None, input_shape=None):
    """The float reference (golden): inputs as run's; dump=FOLDER writes its golden dumps
    as `nanobench infer --dump` does."""
    if isinstance(inputs, dict):
        names = _model_inputs(model) or list(inputs)
        arrs = _ordered(inputs, names)
    elif isinstance(inputs, (list, tuple)):
        arrs = list(inputs)
    else:
        raise Error("infer: inputs are {name: array} or a list of arrays, not %r" % (inputs,), 2)
    keep, ptrs, ranks, dims = _arrays(arrs)
    return _outputs(_call(_lib.nbpy_infer, _path("model", model), _b(input_shape, "input_shape"),
                          len(keep), ptrs, ranks, dims, _b(dump, "dump")))


def compare(npu_dump, golden_dump):
    """file_compare of two dump folders: the CLI's compare file_compare --json ("verdict",
    "first_over_threshold", "largest_sqnr_drop", "rows": [...]), without its CSV."""
    return _call(_lib.nbpy_compare, _path("npu_dump", npu_dump), _path("golden_dump", golden_dump))


# ---- the bring-up (nb_bringup, include/nb/bringup.h): the whole pipeline in one call ----
_lib.nbpy_bringup.argtypes = [_c, ctypes.c_int, _P(_c), _P(_c)] + _OUT
__all__.append("bringup")
_BRINGUP_OPTIONS = ("data_types", "calibration_config", "batch_num", "algo", "soc_version",
                    "input_fp16_nodes", "output_type", "out_nodes", "cpu_nodes",
                    "nb_input_scale", "threshold", "eval_count", "auto_place",
                    "fail_under_cosine", "db", "no_record")


def bringup(model, data_dir=None, eval_dir=None, input_shape=None, out=None, **options):
    """The CLI's `nanobench bringup` in this process: estimate, calibrate, compile, run on
    the simulated NPU, the float reference, compare, the fp16 fix; returns the summary
    (DIR/summary.json, as `bringup --json` prints it) as a dict. data_dir and eval_dir: one
    folder per model input (a list, or the CLI's "dir_x;dir_y"). options are the CLI's
    flags by their names: data_types, calibration_config, batch_num, algo, soc_version,
    input_fp16_nodes, output_type, out_nodes, cpu_nodes, nb_input_scale, threshold,
    eval_count (int), auto_place (bool), fail_under_cosine (float); db (the run database's
    path; default: the CLI's), no_record (bool). Recorded in the run history as the CLI's
    bringup is (a bringup run, its steps its children). Error (status 2) for bad input."""
    keys, vals = [], []

    def put(key, v):
        if v is None or v is False:
            return
        if isinstance(v, (list, tuple)):
            v = ";".join(os.fsdecode(_b(x, key)) for x in v)
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
    return _call(_lib.nbpy_bringup, _path("model", model), len(keys), ck, cv)
