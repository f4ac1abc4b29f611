#!/usr/bin/env python3
"""The per-operator suite's models (issue 19): one small model per row of share/ops.tsv, with
the attribute variants that change the lowering (axes, negative axes, broadcast shapes,
keepdims, several outputs, opset-11 attribute forms), built the way exporters build them:
x [1,8,6,6] -> Conv 1x1 -> OP -> y. Each case gets DIR/<case>/model.onnx, six calibration
batches DIR/<case>/data/b*.npy (uniform [-1, 1)) and an evaluation input eval.npy, and a row
in DIR/cases.tsv: case, op, variant, check (cos: cosine >= 0.99 against ONNX Runtime; exact:
the values equal; agree: integer or boolean outputs of quantized values, at least 97 % equal).
usage: gen.py DIR   (Debian's python3-onnx and python3-numpy)"""
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
RNG = np.random.default_rng(19)
cases = []


def const(name, arr):
    return nh.from_array(np.asarray(arr), name)


class G:
    """A graph under construction: x -> Conv 1x1 (8 -> 8) named c, nodes with exporter-like
    names (torch's /op/Op_N or none at all for every third case)."""

    def __init__(self, case, opset=13, cin=8, hw=6, unnamed=False, qat=False, per_channel=False):
        self.case, self.opset, self.nodes, self.inits, self.n = case, opset, [], [], 0
        self.unnamed = unnamed
        self.in_shape = [1, cin, hw, hw]
        if qat:  # a QAT export: x quantized first, every matrix layer on Q/DQ operands
            self.init("xs", np.array(0.01, np.float32))
            self.init("xz", np.array(0, np.int8))
            self.init("wcs", RNG.uniform(0.002, 0.006, 8).astype(np.float32) if per_channel
                      else np.array(0.004, np.float32))
            self.init("wcz", np.zeros(8, np.int8) if per_channel else np.array(0, np.int8))
            self.init("wc", RNG.integers(-100, 100, (8, cin, 1, 1)).astype(np.int8))
            self.node("QuantizeLinear", ["x", "xs", "xz"], ["xq"])
            self.node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"])
            self.node("DequantizeLinear", ["wc", "wcs", "wcz"], ["wd"],
                      **({"axis": 0} if per_channel else {}))
            self.node("Conv", ["xd", "wd"], ["c"])
            return
        w = RNG.uniform(-0.5, 0.5, (8, cin, 1, 1)).astype(np.float32)
        b = RNG.uniform(-0.2, 0.2, 8).astype(np.float32)
        self.init("conv.weight", w)
        self.init("conv.bias", b)
        self.node("Conv", ["x", "conv.weight", "conv.bias"], ["c"])

    def init(self, name, arr):
        self.inits.append(const(name, arr))
        return name

    def node(self, op, ins, outs, **attrs):
        self.n += 1
        name = "" if self.unnamed else "/%s/%s_%d" % (op.lower(), op, self.n)
        self.nodes.append(h.make_node(op, ins, outs, name=name, **attrs))
        return outs[0]

    def conv2(self):  # a second branch: another 1x1 Conv of x
        w = RNG.uniform(-0.5, 0.5, (8, self.in_shape[1], 1, 1)).astype(np.float32)
        self.init("conv2.weight", w)
        return self.node("Conv", ["x", "conv2.weight"], ["c2"])

    def save(self, op, variant, outs, check="cos", elem=TP.FLOAT):
        outs = outs if isinstance(outs, list) else [outs]
        g = h.make_graph(self.nodes, self.case,
                         [h.make_tensor_value_info("x", TP.FLOAT, self.in_shape)],
                         [h.make_tensor_value_info(o, elem, None) for o in outs], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", self.opset)],
                         producer_name="nanobench-op-suite")
        m.ir_version = 7
        m = onnx.shape_inference.infer_shapes(m)
        onnx.checker.check_model(m)
        d = os.path.join(OUT, self.case)
        os.makedirs(os.path.join(d, "data"), exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        rng = np.random.default_rng(zlib.crc32(self.case.encode()))
        for i in range(6):
            np.save(os.path.join(d, "data", "b%d.npy" % i),
                    rng.uniform(-1, 1, self.in_shape).astype(np.float32))
        np.save(os.path.join(d, "eval.npy"), rng.uniform(-1, 1, self.in_shape).astype(np.float32))
        cases.append((self.case, op, variant or "-", check))


def case(name, **kw):
    return G(name, unnamed=len(cases) % 3 == 2, **kw)


# ---- elementwise, one input ----
for op, attrs in [("Abs", {}), ("Neg", {}), ("Relu", {}), ("Sigmoid", {}), ("Tanh", {}),
                  ("Identity", {}), ("Elu", {"alpha": 0.7}), ("LeakyRelu", {"alpha": 0.1}),
                  ("Exp", {})]:
    g = case(op.lower())
    y = g.node(op, ["c"], ["y"], **attrs)
    g.save(op, "", y)
g = case("log")
a = g.node("Abs", ["c"], ["a"])
g.init("half", np.array(0.5, np.float32))
p = g.node("Add", ["a", "half"], ["p"])
g.save("Log", "of |c| + 0.5", g.node("Log", ["p"], ["y"]))
g = case("round")
g.init("four", np.array(4.0, np.float32))
g.node("Mul", ["c", "four"], ["c4"])
g.save("Round", "of 4c", g.node("Round", ["c4"], ["y"]))
g = case("prelu")
g.init("slope", RNG.uniform(0.05, 0.3, (8, 1, 1)).astype(np.float32))
g.save("PRelu", "slope per channel [8,1,1]", g.node("PRelu", ["c", "slope"], ["y"]))
g = case("clip")
g.init("lo", np.array(-0.3, np.float32))
g.init("hi", np.array(0.4, np.float32))
g.save("Clip", "min, max inputs", g.node("Clip", ["c", "lo", "hi"], ["y"]))
g = case("clip_max_only")
g.init("hi", np.array(0.4, np.float32))
g.save("Clip", "max only (min empty)", g.node("Clip", ["c", "", "hi"], ["y"]))
g = case("clip_op11", opset=11)
g.init("lo", np.array(0.0, np.float32))
g.init("hi", np.array(6.0, np.float32))
g.save("Clip", "opset 11 ReLU6", g.node("Clip", ["c", "lo", "hi"], ["y"]))
for ax, v in [(1, "axis 1"), (-1, "axis -1")]:
    g = case("softmax_ax%d" % ax if ax >= 0 else "softmax_neg")
    g.save("Softmax", v, g.node("Softmax", ["c"], ["y"], axis=ax))
g = case("softmax_op11", opset=11)
g.save("Softmax", "opset 11 axis 1 (flattened)", g.node("Softmax", ["c"], ["y"], axis=1))
g = case("pow2")
g.init("two", np.array(2.0, np.float32))
g.save("Pow", "exponent 2", g.node("Pow", ["c", "two"], ["y"]))
g = case("pow3")
g.init("three", np.array(3.0, np.float32))
g.save("Pow", "exponent 3", g.node("Pow", ["c", "three"], ["y"]))
g = case("cast_fp16")
g.save("Cast", "to float16", g.node("Cast", ["c"], ["y"], to=TP.FLOAT16), elem=TP.FLOAT16)
g = case("cast_int32")
g.init("ten", np.array(10.0, np.float32))
g.node("Mul", ["c", "ten"], ["c10"])
g.save("Cast", "to int32 of 10c", g.node("Cast", ["c10"], ["y"], to=TP.INT32), "agree", TP.INT32)

# ---- elementwise, two inputs ----
for op in ["Add", "Sub", "Mul", "Max", "Min"]:
    g = case(op.lower() + "_2act")
    g.conv2()
    g.save(op, "two activations", g.node(op, ["c", "c2"], ["y"]))
    g = case(op.lower() + "_bcast")
    g.init("k", RNG.uniform(0.5, 1.5, (8, 1, 1)).astype(np.float32))
    g.save(op, "constant [8,1,1]", g.node(op, ["c", "k"], ["y"]))
g = case("add_scalar")
g.init("k", np.array(0.25, np.float32))
g.save("Add", "scalar constant", g.node("Add", ["c", "k"], ["y"]))
g = case("mul_row")
g.init("k", RNG.uniform(0.5, 1.5, (6,)).astype(np.float32))
g.save("Mul", "constant [6] along W", g.node("Mul", ["c", "k"], ["y"]))
g = case("max_3in")
g.conv2()
g.init("k", np.array(0.1, np.float32))
g.save("Max", "three inputs", g.node("Max", ["c", "c2", "k"], ["y"]))

# ---- comparisons and logic ----
for op in ["Equal", "Greater"]:
    g = case(op.lower())
    g.init("ten", np.array(10.0, np.float32))
    g.node("Mul", ["c", "ten"], ["c10"])
    g.node("Round", ["c10"], ["r"])
    g.init("zero", np.array(0.0, np.float32))
    g.save(op, "of round(10c) and 0", g.node(op, ["r", "zero"], ["y"]), "agree", TP.BOOL)
for op in ["And", "Or"]:
    g = case(op.lower())
    g.conv2()
    g.init("zero", np.array(0.0, np.float32))
    g.node("Greater", ["c", "zero"], ["p"])
    g.node("Greater", ["c2", "zero"], ["q"])
    g.save(op, "of two Greater", g.node(op, ["p", "q"], ["y"]), "agree", TP.BOOL)
g = case("where")
g.conv2()
g.node("Greater", ["c", "c2"], ["p"])
g.save("Where", "max by Greater", g.node("Where", ["p", "c", "c2"], ["y"]))
g = case("where_const")
g.init("zero", np.array(0.0, np.float32))
g.node("Greater", ["c", "zero"], ["p"])
g.init("k", np.array(-1.0, np.float32))
g.save("Where", "constant else", g.node("Where", ["p", "c", "k"], ["y"]))

# ---- normalization, pooling ----
g = case("batchnorm")
for n, lo, hi in [("s", 0.5, 1.5), ("b", -0.2, 0.2), ("m", -0.1, 0.1), ("v", 0.5, 1.5)]:
    g.init("bn." + n, RNG.uniform(lo, hi, 8).astype(np.float32))
g.save("BatchNormalization", "after Conv",
       g.node("BatchNormalization", ["c", "bn.s", "bn.b", "bn.m", "bn.v"], ["y"]))
g = case("batchnorm_alone")
g.node("Relu", ["c"], ["r"])
for n, lo, hi in [("s", 0.5, 1.5), ("b", -0.2, 0.2), ("m", -0.1, 0.1), ("v", 0.5, 1.5)]:
    g.init("bn." + n, RNG.uniform(lo, hi, 8).astype(np.float32))
g.save("BatchNormalization", "after Relu (not folded)",
       g.node("BatchNormalization", ["r", "bn.s", "bn.b", "bn.m", "bn.v"], ["y"]))
g = case("instnorm")
g.init("in.s", RNG.uniform(0.5, 1.5, 8).astype(np.float32))
g.init("in.b", RNG.uniform(-0.2, 0.2, 8).astype(np.float32))
g.save("InstanceNormalization", "", g.node("InstanceNormalization", ["c", "in.s", "in.b"], ["y"]))
g = case("maxpool_k2s2")
g.save("MaxPool", "k2 s2", g.node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2]))
g = case("maxpool_k3p1")
g.save("MaxPool", "k3 s1 pads 1",
       g.node("MaxPool", ["c"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
g = case("gap")
g.save("GlobalAveragePool", "", g.node("GlobalAveragePool", ["c"], ["y"]))
g = case("gmp")
g.save("GlobalMaxPool", "", g.node("GlobalMaxPool", ["c"], ["y"]))

# ---- reductions ----
for op in ["ReduceMax", "ReduceMin", "ReduceMean", "ReduceL2"]:
    for axes, kd, v in [([1], 1, "axes [1] keepdims"), ([2, 3], 0, "axes [2,3] no keepdims"),
                        ([-1], 1, "axes [-1]")]:
        g = case("%s_%s" % (op.lower(), v.split()[1].strip("[]").replace(",", "")
                                        .replace("-", "neg") + ("k" if kd else "")))
        g.save(op, v, g.node(op, ["c"], ["y"], axes=axes, keepdims=kd))
for axes, kd, v in [([1], 1, "axes input [1]"), ([2, 3], 0, "axes input [2,3] no keepdims"),
                    ([-2], 1, "axes input [-2]")]:
    g = case("reducesum_" + v.split()[2].strip("[]").replace(",", "").replace("-", "neg"))
    g.init("axes", np.array(axes, np.int64))
    g.save("ReduceSum", v, g.node("ReduceSum", ["c", "axes"], ["y"], keepdims=kd))

# ---- shapes and data movement ----
g = case("reshape")
g.init("shape", np.array([1, 8, 36], np.int64))
g.save("Reshape", "[1,8,36]", g.node("Reshape", ["c", "shape"], ["y"]))
g = case("reshape_0m1")
g.init("shape", np.array([0, -1], np.int64))
g.save("Reshape", "[0,-1]", g.node("Reshape", ["c", "shape"], ["y"]))
g = case("transpose")
g.save("Transpose", "NCHW -> NHWC", g.node("Transpose", ["c"], ["y"], perm=[0, 2, 3, 1]))
g = case("transpose_hw")
g.save("Transpose", "swap H, W", g.node("Transpose", ["c"], ["y"], perm=[0, 1, 3, 2]))
g = case("squeeze")
g.node("GlobalAveragePool", ["c"], ["p"])
g.init("axes", np.array([2, 3], np.int64))
g.save("Squeeze", "axes input [2,3]", g.node("Squeeze", ["p", "axes"], ["y"]))
g = case("squeeze_op11", opset=11)
g.node("GlobalAveragePool", ["c"], ["p"])
g.save("Squeeze", "opset 11 axes [-1,-2]", g.node("Squeeze", ["p"], ["y"], axes=[-1, -2]))
g = case("unsqueeze")
g.init("axes", np.array([0], np.int64))
g.save("Unsqueeze", "axes input [0]", g.node("Unsqueeze", ["c", "axes"], ["y"]))
g = case("unsqueeze_op11", opset=11)
g.save("Unsqueeze", "opset 11 axes [-1]", g.node("Unsqueeze", ["c"], ["y"], axes=[-1]))
g = case("concat_c")
g.conv2()
g.save("Concat", "axis 1", g.node("Concat", ["c", "c2"], ["y"], axis=1))
g = case("concat_neg")
g.conv2()
g.save("Concat", "axis -1", g.node("Concat", ["c", "c2"], ["y"], axis=-1))
g = case("split_c")
g.save("Split", "axis 1, two equal outputs",
       [g.node("Split", ["c"], ["y0", "y1"], axis=1), "y1"])
g = case("split_sizes")
g.init("split", np.array([3, 5], np.int64))
g.save("Split", "axis 1 sizes [3,5] input", [g.node("Split", ["c", "split"], ["y0", "y1"], axis=1),
                                               "y1"])
g = case("split_op11", opset=11)
g.save("Split", "opset 11 axis -1 split [2,4]",
       [g.node("Split", ["c"], ["y0", "y1"], axis=-1, split=[2, 4]), "y1"])
for nm, st, en, ax, sp, v in [("slice_c", [2], [6], [1], None, "C 2:6"),
                              ("slice_w2", [0], [6], [3], [2], "W step 2"),
                              ("slice_neg", [-4], [-1], [-2], None, "negative axes, starts, ends"),
                              ("slice_hw", [1, 1], [5, 1000], [2, 3], None, "H and W, end past")]:
    g = case(nm)
    ins = ["c", g.init("starts", np.array(st, np.int64)), g.init("ends", np.array(en, np.int64)),
           g.init("axes", np.array(ax, np.int64))]
    if sp:
        ins.append(g.init("steps", np.array(sp, np.int64)))
    g.save("Slice", v, g.node("Slice", ins, ["y"]))
for nm, pads, mode, v in [("pad_hw", [0, 0, 1, 2, 0, 0, 1, 0], "constant", "H, W constant 0"),
                          ("pad_reflect", [0, 0, 1, 1, 0, 0, 1, 1], "reflect", "reflect"),
                          ("pad_edge", [0, 0, 0, 2, 0, 0, 0, 2], "edge", "edge W"),
                          ("pad_c", [0, 1, 0, 0, 0, 2, 0, 0], "constant", "C constant")]:
    g = case(nm)
    g.init("pads", np.array(pads, np.int64))
    g.save("Pad", v, g.node("Pad", ["c", "pads"], ["y"], mode=mode))
g = case("pad_value")
g.init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
g.init("value", np.array(0.5, np.float32))
g.save("Pad", "constant 0.5", g.node("Pad", ["c", "pads", "value"], ["y"]))
g = case("pad_op11", opset=11)
g.init("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
g.save("Pad", "opset 11", g.node("Pad", ["c", "pads"], ["y"]))
for nm, idx, ax, v in [("gather_c", [0, 3, 5], 1, "axis 1 [0,3,5]"),
                       ("gather_many", [7, 6, 5, 4, 3, 2, 1, 0, 1], 1, "axis 1, 9 indices"),
                       ("gather_neg", [-1, 0], -1, "axis -1, negative index"),
                       ("gather_scalar", 2, 2, "axis 2 scalar index")]:
    g = case(nm)
    g.init("idx", np.array(idx, np.int64))
    g.save("Gather", v, g.node("Gather", ["c", "idx"], ["y"], axis=ax))
g = case("gather_runtime")
g.node("GlobalMaxPool", ["c"], ["p"])
g.node("Flatten", ["p"], ["f"], axis=1)
g.node("ArgMax", ["f"], ["i"], axis=1, keepdims=0)
g.save("Gather", "indices at run time (an ArgMax's)", g.node("Gather", ["f", "i"], ["y"], axis=1))
g = case("tile")
g.init("rep", np.array([1, 1, 2, 1], np.int64))
g.save("Tile", "[1,1,2,1]", g.node("Tile", ["c", "rep"], ["y"]))
g = case("tile_cw")
g.init("rep", np.array([1, 2, 1, 3], np.int64))
g.save("Tile", "[1,2,1,3]", g.node("Tile", ["c", "rep"], ["y"]))
g = case("spacetodepth")
g.save("SpaceToDepth", "block 2", g.node("SpaceToDepth", ["c"], ["y"], blocksize=2))
g = case("shape")
g.save("Shape", "of the Conv's output", g.node("Shape", ["c"], ["y"]), "exact", TP.INT64)
g = case("constantofshape")
g.node("Shape", ["c"], ["s"])
g.node("ConstantOfShape", ["s"], ["k"], value=h.make_tensor("v", TP.FLOAT, [1], [0.5]))
g.save("ConstantOfShape", "0.5 of Shape(c), added", g.node("Add", ["c", "k"], ["y"]))
g = case("constant")
g.node("Constant", [], ["k"], value=nh.from_array(RNG.uniform(0.5, 1.5, (8, 1, 1))
                                                  .astype(np.float32), "k"))
g.save("Constant", "[8,1,1], multiplied", g.node("Mul", ["c", "k"], ["y"]))
for nm, ax, kd, last, v in [("argmax_c", 1, 1, 0, "axis 1 keepdims"),
                            ("argmax_neg", -1, 0, 0, "axis -1 no keepdims"),
                            ("argmax_last", 1, 1, 1, "select_last_index")]:
    g = case(nm)
    g.save("ArgMax", v, g.node("ArgMax", ["c"], ["y"], axis=ax, keepdims=kd,
                               select_last_index=last), "agree", TP.INT64)

# ---- rewrites: ops outside the list that the lowering writes in listed ones ----
g = case("resize_torch")  # torch's F.interpolate(scale_factor=2, mode="nearest")
g.init("roi", np.array([], np.float32))
g.init("scales", np.array([1, 1, 2, 2], np.float32))
g.save("Resize", "nearest x2, asymmetric floor (torch)",
       g.node("Resize", ["c", "roi", "scales"], ["y"], mode="nearest",
              coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
g = case("resize_sizes")  # ONNX's defaults (half_pixel, round_prefer_floor), sizes given
g.init("sizes", np.array([1, 8, 18, 12], np.int64))
g.save("Resize", "nearest x3 by x2 from sizes, half_pixel",
       g.node("Resize", ["c", "", "", "sizes"], ["y"], mode="nearest"))

# ---- quantize / dequantize: a QAT export, x quantized, the Conv on Q/DQ operands ----
g = case("qdq", qat=True)  # torch's fake-quant after every op: a pair on the output too
g.node("Relu", ["c"], ["r"])
g.init("ys", np.array(0.01, np.float32))
g.init("yz", np.array(0, np.int8))
g.node("QuantizeLinear", ["r", "ys", "yz"], ["rq"])
g.save("QuantizeLinear", "QAT Conv, per-tensor weights, Q/DQ on the output",
       g.node("DequantizeLinear", ["rq", "ys", "yz"], ["y"]))
g = case("dq_perchannel", qat=True, per_channel=True)
g.save("DequantizeLinear", "QAT Conv, per-channel weight scales (axis 0)",
       g.node("Relu", ["c"], ["y"]))

# ---- cube ----
g = case("conv_dw")
g.init("dw", RNG.uniform(-0.5, 0.5, (8, 1, 3, 3)).astype(np.float32))
g.save("Conv", "depthwise 3x3 pads 1",
       g.node("Conv", ["c", "dw"], ["y"], group=8, kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
g = case("conv_s2d2")
g.init("w3", RNG.uniform(-0.3, 0.3, (16, 8, 3, 3)).astype(np.float32))
g.save("Conv", "3x3 stride 2 dilation 2 pads 2",
       g.node("Conv", ["c", "w3"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
              dilations=[2, 2], pads=[2, 2, 2, 2]))
# channel counts across the C0 blocks (int8 32, int32 16) and the 16-channel weight blocks of
# the simulator's GEMM: 8 -> 40 (1x1) -> 33 (3x3), and 8 -> 5 with a 1x5 kernel, stride 1x2
g = case("conv_c40_co33")
g.init("w40", RNG.uniform(-0.3, 0.3, (40, 8, 1, 1)).astype(np.float32))
g.init("w33", RNG.uniform(-0.2, 0.2, (33, 40, 3, 3)).astype(np.float32))
g.init("b33", RNG.uniform(-0.2, 0.2, 33).astype(np.float32))
g.save("Conv", "40 -> 33 channels 3x3 pads 1",
       g.node("Conv", [g.node("Conv", ["c", "w40"], ["c40"]), "w33", "b33"], ["y"],
              kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
g = case("conv_k1x5_co5")
g.init("w5", RNG.uniform(-0.3, 0.3, (5, 8, 1, 5)).astype(np.float32))
g.save("Conv", "8 -> 5 channels 1x5 stride 1x2 pads 2",
       g.node("Conv", ["c", "w5"], ["y"], kernel_shape=[1, 5], strides=[1, 2],
              pads=[0, 2, 0, 2]))
g = case("convtranspose")
g.init("wt", RNG.uniform(-0.3, 0.3, (8, 4, 2, 2)).astype(np.float32))
g.save("ConvTranspose", "2x2 stride 2",
       g.node("ConvTranspose", ["c", "wt"], ["y"], kernel_shape=[2, 2], strides=[2, 2]))
g = case("matmul")
g.init("shape", np.array([1, 8, 36], np.int64))
g.node("Reshape", ["c", "shape"], ["r"])
g.init("wm", RNG.uniform(-0.3, 0.3, (36, 16)).astype(np.float32))
g.save("MatMul", "[1,8,36] x [36,16]", g.node("MatMul", ["r", "wm"], ["y"]))
g = case("matmul_act")
g.conv2()
g.init("shape", np.array([1, 8, 36], np.int64))
g.node("Reshape", ["c", "shape"], ["a"])
g.node("Reshape", ["c2", "shape"], ["b"])
g.node("Transpose", ["b"], ["bt"], perm=[0, 2, 1])
g.save("MatMul", "two activations (Q.K^T)", g.node("MatMul", ["a", "bt"], ["y"]))
g = case("gemm")
g.node("Flatten", ["c"], ["f"], axis=1)
g.init("wg", RNG.uniform(-0.2, 0.2, (10, 288)).astype(np.float32))
g.init("bg", RNG.uniform(-0.2, 0.2, 10).astype(np.float32))
g.save("Gemm", "transB 1", g.node("Gemm", ["f", "wg", "bg"], ["y"], transB=1))
for rnn, gates in [("LSTM", 4), ("GRU", 3)]:
    g = case(rnn.lower())
    g.init("shape", np.array([1, 1, 288], np.int64))
    g.node("Reshape", ["c", "shape"], ["s"])
    g.init("W", RNG.uniform(-0.1, 0.1, (1, gates * 16, 288)).astype(np.float32))
    g.init("R", RNG.uniform(-0.2, 0.2, (1, gates * 16, 16)).astype(np.float32))
    g.init("B", RNG.uniform(-0.1, 0.1, (1, 2 * gates * 16)).astype(np.float32))
    g.save(rnn, "one step, hidden 16",
           g.node(rnn, ["s", "W", "R", "B"], ["y"], hidden_size=16))
# integer cube ops as exporters write them (onnxruntime's quantize_dynamic/static): x
# quantized to uint8, int8 weights, the int32 result rescaled in float
def integer_case(name, op):
    g = case(name, qat=True)
    g.nodes, g.inits = [], []
    g.init("s", np.array(0.01, np.float32))
    g.init("z", np.array(128, np.uint8))
    g.node("QuantizeLinear", ["x", "s", "z"], ["q"])
    if op in ("MatMulInteger", "QLinearMatMul"):
        g.init("shape", np.array([1, 8, 36], np.int64))
        g.node("Reshape", ["q", "shape"], ["r"])
        src, wshape = "r", (36, 16)
    else:
        src, wshape = "q", (8, 8, 1, 1)
    g.init("wi", RNG.integers(-60, 60, wshape).astype(np.int8))
    if op in ("ConvInteger", "MatMulInteger"):
        g.node(op, [src, "wi", "z"], ["ii"])
        g.node("Cast", ["ii"], ["f"], to=TP.FLOAT)
        g.init("k", np.array(0.01 * 0.01, np.float32))
        return g, g.node("Mul", ["f", "k"], ["y"])
    for n, v, t in [("ws", 0.01, np.float32), ("wz", 0, np.int8), ("ys", 0.02, np.float32),
                    ("yz", 128, np.uint8)]:
        g.init(n, np.array(v, t))
    g.node(op, [src, "s", "z", "wi", "ws", "wz", "ys", "yz"], ["qy"])
    return g, g.node("DequantizeLinear", ["qy", "ys", "yz"], ["y"])


for nm, op in [("convinteger", "ConvInteger"), ("matmulinteger", "MatMulInteger"),
               ("qlinearconv", "QLinearConv"), ("qlinearmatmul", "QLinearMatMul")]:
    g, y = integer_case(nm, op)
    g.save(op, "u8 x s8", y)

# ---- the MCU's CPU (issue 21): ops outside the Nano's list, run by CpuOnnx tasks in float32
# with the boundary conversions; each followed by a second 1x1 Conv so that the CPU's output
# goes back to the cube (quantized by its AscendQuant) ----
def conv_after(g, src):
    w = RNG.uniform(-0.5, 0.5, (8, 8, 1, 1)).astype(np.float32)
    g.init("conv3.weight", w)
    return g.node("Conv", [src, "conv3.weight"], ["y"])


for nm, op, attrs in [("cpu_sin", "Sin", {}), ("cpu_softplus", "Softplus", {}),
                      ("cpu_hardswish", "HardSwish", {}), ("cpu_softsign", "Softsign", {})]:
    g = case(nm, opset=14)
    g.node(op, ["c"], ["u"], **attrs)
    g.save(op, "CPU task, then a Conv", conv_after(g, "u"))
g = case("cpu_cumsum")
g.init("ax", np.array(1, np.int64))
g.save("CumSum", "axis 1 (int64 constant), CPU", g.node("CumSum", ["c", "ax"], ["y"]))
g = case("cpu_reduceprod")  # of 1 + c: products of 6 values in fp16's range
g.init("one", np.array(1.0, np.float32))
g.node("Add", ["c", "one"], ["c1"])
g.save("ReduceProd", "of 1 + c, axes [3], keepdims, CPU",
       g.node("ReduceProd", ["c1"], ["y"], axes=[3], keepdims=1))
g = case("cpu_topk")
g.init("shape", np.array([1, 288], np.int64))
g.node("Reshape", ["c", "shape"], ["f"])
g.init("k", np.array([5], np.int64))
g.node("TopK", ["f", "k"], ["y", "i"], axis=1)
g.save("TopK", "k 5 of 288: values, CPU", "y")

with open(os.path.join(OUT, "cases.tsv"), "w") as f:
    f.write("case\top\tvariant\tcheck\n")
    for c in cases:
        f.write("\t".join(c) + "\n")
print("%d cases in %s" % (len(cases), OUT))
