#!/usr/bin/env python3
"""Writes the realistic export set of tests/data/real: small models built the way exporters
and people build them (issue 20), each a class of the seed's (CNN, CNN+RNN, CNN+FIFO) with one
exporter habit each. The files are committed (each < 200 KB), with ONNX Runtime's outputs in
tests/oracle/expected (recipes.tsv, ort_expected.js); tests/test_real_exports.sh brings each
up. Needs python3-onnx and python3-numpy (Debian); the tests do not run this.
  helper_unnamed   onnx.helper with no node names (names are optional in ONNX)
  torch_names      PyTorch 2.x names ("/block.0/conv/Conv", "onnx::Conv_47"), Constant nodes
                   for the Reshape target, Conv -> BatchNormalization, a 200-character name
  torch_dynamic    torch_names exported with dynamic_axes: batch "batch_size", Reshape to -1
  tf2onnx_nhwc     tf2onnx: NHWC input, Transpose to NCHW and back, "StatefulPartitionedCall/
                   model/conv2d/Conv2D" names, MatMul + Add for Dense
  qat_torch        a QAT export (torch.ao): uint8 activations with zero points, per-channel
                   int8 weights (Conv axis 0, Gemm transB axis 0), Q/DQ before MaxPool and
                   Flatten, not right before the layer
  lstm_gru_state   LSTM (4 steps) -> GRU with the state in and out, as streaming KWS exports
  fifo_cnn         CNN+FIFO: one frame and the FIFO of the previous ones in, Concat -> Conv
                   over time, the new FIFO out through a Slice
  paddle_op11      opset 11 as paddle2onnx writes it by default: Squeeze, Unsqueeze, ReduceSum
                   and Split with attribute axes/split, a Softmax over a flattened 3-D tensor
                   (opset 11's axis meaning), Conv + BatchNormalization
  torch_op12       opset 12 as torch 1.x writes it: Clip with min/max inputs, Dropout with a
                   ratio input, attribute axes, LogSoftmax over a 3-D tensor (flattened)
  transformer_block an encoder block as torch exports it (opset 14): LayerNorm written out,
                   multi-head attention (two MatMuls of two activations), GELU (tanh form)
  kwt              a KWT-style keyword model: patch embedding, class token, the block, a head
  dscnn_gelu       DS-CNN as torch exports it: depthwise-separable Convs with BatchNorm, an
                   AveragePool over the whole map, Erf GELU (nn.GELU's default) and Mish
  qat_fp16_input   a Q/DQ model whose input is float16 (Cast -> Q/DQ -> Conv): evaluated on
                   random fp16 values, not zeros
  qat_shared_chain a Q/DQ pair before a Reshape whose output is also a graph output: removing
                   the pair would unclamp that output, so the import refuses it
  if_untyped       an If whose branch outputs declare no type (ORT infers them), on a
                   condition from the input's shape
usage: tests/data/real/make_models.py [OUT_DIR]"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def save(m, name, opset, producer="", ir=8):
    m.opset_import[0].version = opset
    m.ir_version = ir
    m.producer_name = producer
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def model(nodes, name, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def vi(name, shape):
    return helper.make_tensor_value_info(name, T.FLOAT, shape)


def helper_unnamed():
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.3, (8, 1, 3, 3)).astype(np.float32), "w1"),
        (rng.normal(0, 0.1, (8,)).astype(np.float32), "b1"),
        (rng.normal(0, 0.2, (8, 8, 3, 3)).astype(np.float32), "w2"),
        (rng.normal(0, 0.2, (8, 4)).astype(np.float32), "g"),
        (rng.normal(0, 0.1, (4,)).astype(np.float32), "gb")]]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "g", "gb"], ["y"])]
    save(model(nodes, "g", [vi("x", [1, 1, 16, 16])], [vi("y", [1, 4])], inits),
         "helper_unnamed", 13)


def torch_names():
    rng = np.random.default_rng(2)
    long = "/backbone/stage_0/" + "residual_block_with_a_very_descriptive_module_path/" * 3 + "Conv"
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.3, (16, 1, 3, 3)).astype(np.float32), "onnx::Conv_47"),
        (rng.uniform(0.5, 1.5, (16,)).astype(np.float32), "block.0.bn.weight"),
        (rng.normal(0, 0.1, (16,)).astype(np.float32), "block.0.bn.bias"),
        (rng.normal(0, 0.2, (16,)).astype(np.float32), "block.0.bn.running_mean"),
        (rng.uniform(0.5, 2.0, (16,)).astype(np.float32), "block.0.bn.running_var"),
        (rng.normal(0, 0.15, (16, 16, 3, 3)).astype(np.float32), "onnx::Conv_50"),
        (rng.normal(0, 0.1, (16,)).astype(np.float32), "onnx::Conv_51"),
        (rng.normal(0, 0.05, (10, 16 * 4 * 4)).astype(np.float32), "classifier.weight"),
        (rng.normal(0, 0.1, (10,)).astype(np.float32), "classifier.bias")]]
    shape = helper.make_tensor("value", T.INT64, [2], [1, 256])
    nodes = [
        helper.make_node("Conv", ["input", "onnx::Conv_47"], ["/block.0/conv/Conv_output_0"],
                         name="/block.0/conv/Conv", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["/block.0/conv/Conv_output_0", "block.0.bn.weight",
                         "block.0.bn.bias", "block.0.bn.running_mean", "block.0.bn.running_var"],
                         ["/block.0/bn/BatchNormalization_output_0"],
                         name="/block.0/bn/BatchNormalization", epsilon=1e-5),
        helper.make_node("Relu", ["/block.0/bn/BatchNormalization_output_0"],
                         ["/block.0/act/Relu_output_0"], name="/block.0/act/Relu"),
        helper.make_node("Conv", ["/block.0/act/Relu_output_0", "onnx::Conv_50", "onnx::Conv_51"],
                         [long + "_output_0"], name=long, pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", [long + "_output_0"], ["/block.1/act/Relu_output_0"],
                         name="/block.1/act/Relu"),
        helper.make_node("Constant", [], ["/Constant_output_0"], name="/Constant", value=shape),
        helper.make_node("Reshape", ["/block.1/act/Relu_output_0", "/Constant_output_0"],
                         ["/Reshape_output_0"], name="/Reshape"),
        helper.make_node("Gemm", ["/Reshape_output_0", "classifier.weight", "classifier.bias"],
                         ["output"], name="/classifier/Gemm", transB=1)]
    save(model(nodes, "main_graph", [vi("input", [1, 1, 16, 16])], [vi("output", [1, 10])],
               inits), "torch_names", 17, "pytorch")


def torch_dynamic():
    m = onnx.load(os.path.join(OUT, "torch_names.onnx"))
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch_size"
    m.graph.output[0].type.tensor_type.shape.dim[0].dim_param = "batch_size"
    for n in m.graph.node:
        if n.op_type == "Constant":
            n.attribute[0].t.CopyFrom(numpy_helper.from_array(np.array([-1, 256], np.int64),
                                                              "value"))
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, "torch_dynamic.onnx"))


def tf2onnx_nhwc():
    rng = np.random.default_rng(3)
    p = "StatefulPartitionedCall/model/"
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.3, (12, 3, 3, 3)).astype(np.float32), p + "conv2d/Conv2D/ReadVariableOp:0"),
        (rng.normal(0, 0.1, (12,)).astype(np.float32), p + "conv2d/BiasAdd/ReadVariableOp:0"),
        (np.array([-1, 12 * 8 * 8], np.int64), "const_fold_opt__12"),
        (rng.normal(0, 0.05, (12 * 8 * 8, 5)).astype(np.float32), p + "dense/MatMul/ReadVariableOp:0"),
        (rng.normal(0, 0.1, (5,)).astype(np.float32), p + "dense/BiasAdd/ReadVariableOp:0")]]
    nodes = [
        helper.make_node("Transpose", ["input_1"], [p + "conv2d/Conv2D__6:0"],
                         name=p + "conv2d/Conv2D__6", perm=[0, 3, 1, 2]),
        helper.make_node("Conv", [p + "conv2d/Conv2D__6:0", p + "conv2d/Conv2D/ReadVariableOp:0",
                                  p + "conv2d/BiasAdd/ReadVariableOp:0"], [p + "conv2d/BiasAdd:0"],
                         name=p + "conv2d/BiasAdd", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", [p + "conv2d/BiasAdd:0"], [p + "conv2d/Relu:0"],
                         name=p + "conv2d/Relu"),
        helper.make_node("Transpose", [p + "conv2d/Relu:0"], [p + "conv2d/Relu__8:0"],
                         name=p + "conv2d/Relu__8", perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", [p + "conv2d/Relu__8:0", "const_fold_opt__12"],
                         [p + "flatten/Reshape:0"], name=p + "flatten/Reshape"),
        helper.make_node("MatMul", [p + "flatten/Reshape:0", p + "dense/MatMul/ReadVariableOp:0"],
                         [p + "dense/MatMul:0"], name=p + "dense/MatMul"),
        helper.make_node("Add", [p + "dense/MatMul:0", p + "dense/BiasAdd/ReadVariableOp:0"],
                         ["dense"], name=p + "dense/BiasAdd")]
    save(model(nodes, "tf2onnx", [vi("input_1", [1, 16, 16, 3])], [vi("dense", [1, 5])], inits),
         "tf2onnx_nhwc", 13, "tf2onnx")


def qat_torch():
    rng = np.random.default_rng(4)
    inits, nodes = [], []

    def init(a, n):
        inits.append(numpy_helper.from_array(a, n))
        return n

    def qdq_act(x, scale, zp, name):
        s = init(np.array(scale, np.float32), name + ".scale")
        z = init(np.array(zp, np.uint8), name + ".zero_point")
        nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [name + "_q"],
                                      name=name + "/QuantizeLinear"))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s, z], [name + "_dq"],
                                      name=name + "/DequantizeLinear"))
        return name + "_dq"

    def qweight(w, axis, name):
        red = tuple(i for i in range(w.ndim) if i != axis)
        sc = (np.abs(w).max(axis=red) / 127).astype(np.float32)
        shp = [1] * w.ndim
        shp[axis] = -1
        wq = np.clip(np.round(w / sc.reshape(shp)), -127, 127).astype(np.int8)
        a = init(wq, name + ".weight_int8")
        s = init(sc, name + ".weight_scale")
        z = init(np.zeros_like(sc, dtype=np.int8), name + ".weight_zp")
        nodes.append(helper.make_node("DequantizeLinear", [a, s, z], [name + ".weight_dq"],
                                      name=name + "/weight/DequantizeLinear", axis=axis))
        return name + ".weight_dq"

    x = qdq_act("input", 1 / 64, 128, "/quant")
    w1 = qweight(rng.normal(0, 0.3, (8, 1, 3, 3)).astype(np.float32), 0, "/conv1")
    b1 = init(rng.normal(0, 0.1, (8,)).astype(np.float32), "conv1.bias")
    nodes.append(helper.make_node("Conv", [x, w1, b1], ["/conv1/Conv_output_0"], name="/conv1/Conv",
                                  pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["/conv1/Conv_output_0"], ["/relu1/Relu_output_0"],
                                  name="/relu1/Relu"))
    a1 = qdq_act("/relu1/Relu_output_0", 1 / 40, 0, "/relu1/act")
    nodes.append(helper.make_node("MaxPool", [a1], ["/pool/MaxPool_output_0"], name="/pool/MaxPool",
                                  kernel_shape=[2, 2], strides=[2, 2]))
    w2 = qweight(rng.normal(0, 0.2, (16, 8, 3, 3)).astype(np.float32), 0, "/conv2")
    b2 = init(rng.normal(0, 0.1, (16,)).astype(np.float32), "conv2.bias")
    nodes.append(helper.make_node("Conv", ["/pool/MaxPool_output_0", w2, b2],
                                  ["/conv2/Conv_output_0"], name="/conv2/Conv", pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["/conv2/Conv_output_0"], ["/relu2/Relu_output_0"],
                                  name="/relu2/Relu"))
    a2 = qdq_act("/relu2/Relu_output_0", 1 / 30, 0, "/relu2/act")
    nodes.append(helper.make_node("Flatten", [a2], ["/Flatten_output_0"], name="/Flatten", axis=1))
    w3 = qweight(rng.normal(0, 0.05, (10, 16 * 8 * 8)).astype(np.float32), 0, "/fc")
    b3 = init(rng.normal(0, 0.1, (10,)).astype(np.float32), "fc.bias")
    nodes.append(helper.make_node("Gemm", ["/Flatten_output_0", w3, b3], ["logits"], name="/fc/Gemm",
                                  transB=1))
    save(model(nodes, "torch_jit", [vi("input", [1, 1, 16, 16])], [vi("logits", [1, 10])], inits),
         "qat_torch", 13, "pytorch", 7)


def lstm_gru_state():
    rng = np.random.default_rng(5)
    S, B, I, H, H2 = 4, 1, 20, 32, 24
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.25, (1, 4 * H, I)).astype(np.float32), "onnx::LSTM_W"),
        (rng.normal(0, 0.25, (1, 4 * H, H)).astype(np.float32), "onnx::LSTM_R"),
        (rng.normal(0, 0.1, (1, 8 * H)).astype(np.float32), "onnx::LSTM_B"),
        (rng.normal(0, 0.25, (1, 3 * H2, H)).astype(np.float32), "onnx::GRU_W"),
        (rng.normal(0, 0.25, (1, 3 * H2, H2)).astype(np.float32), "onnx::GRU_R"),
        (rng.normal(0, 0.1, (1, 6 * H2)).astype(np.float32), "onnx::GRU_B"),
        (np.array([1], np.int64), "axes1"),
        (rng.normal(0, 0.3, (6, H2)).astype(np.float32), "fc.weight"),
        (rng.normal(0, 0.1, (6,)).astype(np.float32), "fc.bias"),
        (np.array([1, H2], np.int64), "shape_bh")]]
    nodes = [
        helper.make_node("LSTM", ["x", "onnx::LSTM_W", "onnx::LSTM_R", "onnx::LSTM_B", "", "h0", "c0"],
                         ["/lstm/LSTM_output_0", "h_n", "c_n"], name="/lstm/LSTM", hidden_size=H),
        helper.make_node("Squeeze", ["/lstm/LSTM_output_0", "axes1"], ["/lstm/Squeeze_output_0"],
                         name="/lstm/Squeeze"),
        helper.make_node("GRU", ["/lstm/Squeeze_output_0", "onnx::GRU_W", "onnx::GRU_R", "onnx::GRU_B"],
                         ["", "/gru/GRU_output_1"], name="/gru/GRU", hidden_size=H2,
                         linear_before_reset=1),
        helper.make_node("Reshape", ["/gru/GRU_output_1", "shape_bh"], ["/Reshape_output_0"],
                         name="/Reshape"),
        helper.make_node("Gemm", ["/Reshape_output_0", "fc.weight", "fc.bias"], ["logits"],
                         name="/fc/Gemm", transB=1)]
    save(model(nodes, "torch_jit", [vi("x", [S, B, I]), vi("h0", [1, B, H]), vi("c0", [1, B, H])],
               [vi("logits", [1, 6]), vi("h_n", [1, B, H]), vi("c_n", [1, B, H])], inits),
         "lstm_gru_state", 14, "pytorch", 7)


def fifo_cnn():
    rng = np.random.default_rng(9)
    C, F, K, C2 = 8, 16, 3, 16
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.2, (C2, C, K, 3)).astype(np.float32), "conv.weight"),
        (rng.normal(0, 0.1, (C2,)).astype(np.float32), "conv.bias"),
        (np.array([1], np.int64), "/Constant_output_0"),
        (np.array([K], np.int64), "/Constant_1_output_0"),
        (np.array([2], np.int64), "/Constant_2_output_0"),
        (np.array([1], np.int64), "/Constant_3_output_0"),
        (rng.normal(0, 0.2, (4, C2)).astype(np.float32), "head.weight"),
        (rng.normal(0, 0.1, (4,)).astype(np.float32), "head.bias")]]
    nodes = [
        helper.make_node("Concat", ["fifo_in", "frame"], ["/Concat_output_0"], name="/Concat", axis=2),
        helper.make_node("Conv", ["/Concat_output_0", "conv.weight", "conv.bias"], ["/conv/Conv_output_0"],
                         name="/conv/Conv", pads=[0, 1, 0, 1]),
        helper.make_node("Relu", ["/conv/Conv_output_0"], ["/relu/Relu_output_0"], name="/relu/Relu"),
        helper.make_node("GlobalAveragePool", ["/relu/Relu_output_0"], ["/pool/GlobalAveragePool_output_0"],
                         name="/pool/GlobalAveragePool"),
        helper.make_node("Flatten", ["/pool/GlobalAveragePool_output_0"], ["/Flatten_output_0"],
                         name="/Flatten"),
        helper.make_node("Gemm", ["/Flatten_output_0", "head.weight", "head.bias"], ["logits"],
                         name="/head/Gemm", transB=1),
        helper.make_node("Slice", ["/Concat_output_0", "/Constant_output_0", "/Constant_1_output_0",
                                   "/Constant_2_output_0", "/Constant_3_output_0"], ["fifo_out"],
                         name="/Slice")]
    save(model(nodes, "torch_jit", [vi("frame", [1, C, 1, F]), vi("fifo_in", [1, C, K - 1, F])],
               [vi("logits", [1, 4]), vi("fifo_out", [1, C, K - 1, F])], inits),
         "fifo_cnn", 13, "pytorch", 7)


def paddle_op11():
    rng = np.random.default_rng(13)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "conv2d_0.w_0"),
        (rng.uniform(0.5, 1.5, (8,)).astype(np.float32), "batch_norm_0.w_0"),
        (rng.normal(0, 0.1, (8,)).astype(np.float32), "batch_norm_0.b_0"),
        (rng.normal(0, 0.1, (8,)).astype(np.float32), "batch_norm_0.w_1"),
        (rng.uniform(0.5, 1.5, (8,)).astype(np.float32), "batch_norm_0.w_2"),
        (rng.normal(0, 0.2, (16 * 3, 6)).astype(np.float32), "linear_0.w_0"),
        (rng.normal(0, 0.1, (6,)).astype(np.float32), "linear_0.b_0")]]
    nodes = [
        helper.make_node("Conv", ["x", "conv2d_0.w_0"], ["conv2d_1.tmp_0"], name="p2o.Conv.0",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["conv2d_1.tmp_0", "batch_norm_0.w_0",
                         "batch_norm_0.b_0", "batch_norm_0.w_1", "batch_norm_0.w_2"],
                         ["batch_norm_0.tmp_2"], name="p2o.BatchNormalization.0", epsilon=1e-5),
        helper.make_node("Relu", ["batch_norm_0.tmp_2"], ["relu_0.tmp_0"], name="p2o.Relu.0"),
        helper.make_node("ReduceSum", ["relu_0.tmp_0"], ["reduce_sum_0.tmp_0"],
                         name="p2o.ReduceSum.0", axes=[3], keepdims=0),          # [1, 8, 8]
        helper.make_node("Softmax", ["reduce_sum_0.tmp_0"], ["softmax_0.tmp_0"],
                         name="p2o.Softmax.0", axis=1),                          # over 64
        helper.make_node("Unsqueeze", ["softmax_0.tmp_0"], ["unsqueeze2_0.tmp_0"],
                         name="p2o.Unsqueeze.0", axes=[1]),                      # [1, 1, 8, 8]
        helper.make_node("Squeeze", ["unsqueeze2_0.tmp_0"], ["squeeze2_0.tmp_0"],
                         name="p2o.Squeeze.0", axes=[1]),                        # [1, 8, 8]
        helper.make_node("Split", ["squeeze2_0.tmp_0"], ["split_0.tmp_0", "split_0.tmp_1"],
                         name="p2o.Split.0", axis=1, split=[2, 6]),
        helper.make_node("Concat", ["split_0.tmp_1", "split_0.tmp_0"], ["concat_0.tmp_0"],
                         name="p2o.Concat.0", axis=1),
        helper.make_node("Flatten", ["concat_0.tmp_0"], ["flatten_0.tmp_0"], name="p2o.Flatten.0",
                         axis=1),                                                # [1, 64]
        helper.make_node("Slice", ["flatten_0.tmp_0", "st", "en", "ax"], ["slice_0.tmp_0"],
                         name="p2o.Slice.0"),                                    # [1, 48]
        helper.make_node("MatMul", ["slice_0.tmp_0", "linear_0.w_0"], ["linear_1.tmp_0"],
                         name="p2o.MatMul.0"),
        helper.make_node("Add", ["linear_1.tmp_0", "linear_0.b_0"], ["linear_1.tmp_1"],
                         name="p2o.Add.0")]
    inits += [numpy_helper.from_array(np.array([8], np.int64), "st"),
              numpy_helper.from_array(np.array([56], np.int64), "en"),
              numpy_helper.from_array(np.array([1], np.int64), "ax")]
    save(model(nodes, "paddle", [vi("x", [1, 3, 16, 16])], [vi("linear_1.tmp_1", [1, 6])],
               inits), "paddle_op11", 11, "PaddlePaddle", 6)


def torch_op12():
    """opset 12 as torch 1.x writes it: Clip with min/max inputs (ReLU6), Dropout with its ratio
    input, ReduceMean and Unsqueeze with attribute axes, LogSoftmax over a 3-D tensor with
    axis 1 (opset 12 flattens [1, 4, 6] to [1, 24])."""
    rng = np.random.default_rng(17)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.3, (4, 2, 3, 3)).astype(np.float32), "conv.weight"),
        (rng.normal(0, 0.1, (4,)).astype(np.float32), "conv.bias"),
        (np.array(0, np.float32), "onnx::Clip_10"),
        (np.array(6, np.float32), "onnx::Clip_11"),
        (np.array(0.1, np.float32), "onnx::Dropout_12"),
        (rng.normal(0, 0.3, (6, 6)).astype(np.float32), "fc.weight"),
        (rng.normal(0, 0.1, (6,)).astype(np.float32), "fc.bias")]]
    nodes = [
        helper.make_node("Conv", ["input.1", "conv.weight", "conv.bias"], ["input.4"],
                         name="Conv_0", pads=[1, 1, 1, 1]),                    # [1, 4, 6, 6]
        helper.make_node("Clip", ["input.4", "onnx::Clip_10", "onnx::Clip_11"], ["input.8"],
                         name="Clip_1"),
        helper.make_node("ReduceMean", ["input.8"], ["onnx::Gemm_14"], name="ReduceMean_2",
                         axes=[3], keepdims=0),                                # [1, 4, 6]
        helper.make_node("Dropout", ["onnx::Gemm_14", "onnx::Dropout_12"], ["input.12"],
                         name="Dropout_3"),
        helper.make_node("MatMul", ["input.12", "fc.weight"], ["onnx::Add_16"], name="MatMul_4"),
        helper.make_node("Add", ["onnx::Add_16", "fc.bias"], ["onnx::LogSoftmax_17"],
                         name="Add_5"),                                        # [1, 4, 6]
        helper.make_node("LogSoftmax", ["onnx::LogSoftmax_17"], ["onnx::Unsqueeze_18"],
                         name="LogSoftmax_6", axis=1),                         # over 24
        helper.make_node("Unsqueeze", ["onnx::Unsqueeze_18"], ["19"], name="Unsqueeze_7",
                         axes=[1])]                                            # [1, 1, 4, 6]
    save(model(nodes, "torch-jit-export", [vi("input.1", [1, 2, 6, 6])],
               [vi("19", [1, 1, 4, 6])], inits), "torch_op12", 12, "pytorch", 7)


def transformer_block(name="transformer_block", kwt=False):
    """A Transformer encoder block as torch 1.13 exports it at opset 14: LayerNorm written out
    (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), Q/K/V as MatMul + Add, heads
    split by Reshape + Transpose, Q.K^T as a MatMul of two activations, Div by sqrt(d),
    Softmax, weights.V the second such MatMul, heads merged, the output projection, residual
    Adds, an MLP with GELU in its tanh form. kwt: a KWT-style keyword model around it (a
    linear patch embedding of [1, 16, 20] mel frames, a class token Concat, a positional Add,
    the block, the class token taken by Gather, a Gemm head of 12 keywords)."""
    rng = np.random.default_rng(21 if kwt else 19)
    T_, D, H, F = (17 if kwt else 16), 32, 4, 64
    dh = D // H
    inits = []

    def w(name, shape, sd):
        inits.append(numpy_helper.from_array(rng.normal(0, sd, shape).astype(np.float32), name))
        return name

    def c(name, arr):
        inits.append(numpy_helper.from_array(np.array(arr), name))
        return name

    nodes = []
    cnt = [0]

    def node(op, ins, attrs=None, n_out=1):
        cnt[0] += 1
        outs = ["onnx::%s_%d" % (op, 100 + cnt[0] * 2 + i) for i in range(n_out)]
        nodes.append(helper.make_node(op, ins, outs, name="/%s_%d" % (op, cnt[0]), **(attrs or {})))
        return outs[0] if n_out == 1 else outs

    def layernorm(x, p):
        m = node("ReduceMean", [x], {"axes": [-1]})
        d = node("Sub", [x, m])
        pw = node("Pow", [d, c(p + ".two", np.float32(2))])
        v = node("ReduceMean", [pw], {"axes": [-1]})
        e = node("Add", [v, c(p + ".eps", np.float32(1e-5))])
        s = node("Sqrt", [e])
        n = node("Div", [d, s])
        g = node("Mul", [n, c(p + ".weight", (1 + rng.normal(0, 0.1, D)).astype(np.float32))])
        return node("Add", [g, c(p + ".bias", rng.normal(0, 0.1, D).astype(np.float32))])

    def linear(x, p, i, o):
        y = node("MatMul", [x, w(p + ".weight", (i, o), 1 / np.sqrt(i))])
        return node("Add", [y, w(p + ".bias", (o,), 0.05)])

    x_in = "input"
    if kwt:
        x = linear(x_in, "patch", 20, D)                                  # [1, 16, 32]
        cls = w("cls_token", (1, 1, D), 0.5)
        x = node("Concat", [cls, x], {"axis": 1})                         # [1, 17, 32]
        x = node("Add", [x, w("pos_embedding", (1, T_, D), 0.2)])
    else:
        x = x_in
    h = layernorm(x, "norm1")
    q = linear(h, "attn.q", D, D)
    k = linear(h, "attn.k", D, D)
    v = linear(h, "attn.v", D, D)
    shp = c("heads_shape", np.array([1, T_, H, dh], np.int64))

    def heads(t, perm):
        r = node("Reshape", [t, shp])
        return node("Transpose", [r], {"perm": perm})
    qh = heads(q, [0, 2, 1, 3])                                           # [1, 4, T, 8]
    kt = heads(k, [0, 2, 3, 1])                                           # [1, 4, 8, T]
    vh = heads(v, [0, 2, 1, 3])                                           # [1, 4, T, 8]
    sc = node("MatMul", [qh, kt])                                         # [1, 4, T, T]
    sc = node("Div", [sc, c("attn.scale", np.float32(np.sqrt(dh)))])
    a = node("Softmax", [sc], {"axis": -1})
    o = node("MatMul", [a, vh])                                           # [1, 4, T, 8]
    o = node("Transpose", [o], {"perm": [0, 2, 1, 3]})
    o = node("Reshape", [o, c("merge_shape", np.array([1, T_, D], np.int64))])
    o = linear(o, "attn.proj", D, D)
    x = node("Add", [x, o])
    h = layernorm(x, "norm2")
    h = linear(h, "mlp.fc1", D, F)
    # GELU, tanh form: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    p3 = node("Pow", [h, c("gelu.three", np.float32(3))])
    t = node("Mul", [p3, c("gelu.k", np.float32(0.044715))])
    t = node("Add", [h, t])
    t = node("Mul", [t, c("gelu.s", np.float32(np.sqrt(2 / np.pi)))])
    t = node("Tanh", [t])
    t = node("Add", [t, c("gelu.one", np.float32(1))])
    t = node("Mul", [h, t])
    h = node("Mul", [t, c("gelu.half", np.float32(0.5))])
    h = linear(h, "mlp.fc2", F, D)
    x = node("Add", [x, h])
    if kwt:
        x = layernorm(x, "norm")
        x = node("Gather", [x, c("cls_index", np.int64(0))], {"axis": 1})   # [1, 32]
        nodes.append(helper.make_node("Gemm", [x, w("head.weight", (12, D), 0.2),
                                               w("head.bias", (12,), 0.05)], ["logits"],
                                      name="/head/Gemm", transB=1))
        out = vi("logits", [1, 12])
        inp = vi(x_in, [1, 16, 20])
    else:
        nodes[-1].output[0] = "output"
        out = vi("output", [1, T_, D])
        inp = vi(x_in, [1, T_, D])
    save(model(nodes, "torch_jit", [inp], [out], inits), name, 14, "pytorch", 8)


def dscnn_gelu():
    """A DS-CNN keyword model as torch exports it (opset 13): a Conv stem, a depthwise-separable
    block (group = channels, then 1x1), each Conv -> BatchNormalization -> Relu, AvgPool2d over
    the whole feature map (AveragePool, not GlobalAveragePool), Flatten, a Linear with torch's
    default nn.GELU (Div by sqrt(2), Erf, Add 1, Mul x, Mul 0.5) and one with Mish
    (x tanh(Softplus(x))), the classifier."""
    rng = np.random.default_rng(23)
    C, F = 16, 24
    inits = []

    def t(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def bn(p):
        return [t(p + ".weight", rng.uniform(0.5, 1.5, C).astype(np.float32)),
                t(p + ".bias", rng.normal(0, 0.1, C).astype(np.float32)),
                t(p + ".running_mean", rng.normal(0, 0.1, C).astype(np.float32)),
                t(p + ".running_var", rng.uniform(0.5, 1.5, C).astype(np.float32))]
    nodes = []

    def add(op, ins, out, name, **kw):
        nodes.append(helper.make_node(op, ins, [out], name=name, **kw))
        return out
    x = add("Conv", ["input", t("stem.weight", rng.normal(0, 0.3, (C, 1, 3, 3)).astype(np.float32))],
            "/stem/Conv_output_0", "/stem/Conv", pads=[1, 1, 1, 1], strides=[2, 2])   # [1,16,8,5]
    x = add("BatchNormalization", [x] + bn("stem_bn"), "/stem_bn/BatchNormalization_output_0",
            "/stem_bn/BatchNormalization", epsilon=1e-5)
    x = add("Relu", [x], "/Relu_output_0", "/Relu")
    x = add("Conv", [x, t("dw.weight", rng.normal(0, 0.3, (C, 1, 3, 3)).astype(np.float32))],
            "/dw/Conv_output_0", "/dw/Conv", pads=[1, 1, 1, 1], group=C)
    x = add("BatchNormalization", [x] + bn("dw_bn"), "/dw_bn/BatchNormalization_output_0",
            "/dw_bn/BatchNormalization", epsilon=1e-5)
    x = add("Relu", [x], "/Relu_1_output_0", "/Relu_1")
    x = add("Conv", [x, t("pw.weight", rng.normal(0, 0.25, (C, C, 1, 1)).astype(np.float32))],
            "/pw/Conv_output_0", "/pw/Conv")
    x = add("BatchNormalization", [x] + bn("pw_bn"), "/pw_bn/BatchNormalization_output_0",
            "/pw_bn/BatchNormalization", epsilon=1e-5)
    x = add("Relu", [x], "/Relu_2_output_0", "/Relu_2")
    x = add("AveragePool", [x], "/avg/AveragePool_output_0", "/avg/AveragePool",
            kernel_shape=[8, 5], strides=[8, 5])                                      # [1,16,1,1]
    x = add("Flatten", [x], "/Flatten_output_0", "/Flatten", axis=1)
    x = add("Gemm", [x, t("fc1.weight", rng.normal(0, 0.3, (F, C)).astype(np.float32)),
                     t("fc1.bias", rng.normal(0, 0.1, F).astype(np.float32))],
            "/fc1/Gemm_output_0", "/fc1/Gemm", transB=1)
    h = x
    x = add("Div", [h, t("/gelu/Constant_output_0", np.float32(np.sqrt(2)))], "/gelu/Div_output_0",
            "/gelu/Div")
    x = add("Erf", [x], "/gelu/Erf_output_0", "/gelu/Erf")
    x = add("Add", [x, t("/gelu/Constant_1_output_0", np.float32(1))], "/gelu/Add_output_0",
            "/gelu/Add")
    x = add("Mul", [h, x], "/gelu/Mul_output_0", "/gelu/Mul")
    x = add("Mul", [x, t("/gelu/Constant_2_output_0", np.float32(0.5))], "/gelu/Mul_1_output_0",
            "/gelu/Mul_1")
    x = add("Gemm", [x, t("fc2.weight", rng.normal(0, 0.3, (F, F)).astype(np.float32)),
                     t("fc2.bias", rng.normal(0, 0.1, F).astype(np.float32))],
            "/fc2/Gemm_output_0", "/fc2/Gemm", transB=1)
    h = x
    x = add("Softplus", [h], "/mish/Softplus_output_0", "/mish/Softplus")
    x = add("Tanh", [x], "/mish/Tanh_output_0", "/mish/Tanh")
    x = add("Mul", [h, x], "/mish/Mul_output_0", "/mish/Mul")
    add("Gemm", [x, t("head.weight", rng.normal(0, 0.3, (12, F)).astype(np.float32)),
                 t("head.bias", rng.normal(0, 0.1, 12).astype(np.float32))], "logits", "/head/Gemm",
        transB=1)
    save(model(nodes, "main_graph", [vi("input", [1, 1, 16, 10])], [vi("logits", [1, 12])], inits),
         "dscnn_gelu", 13, "pytorch", 8)


def kwt():
    transformer_block("kwt", kwt=True)


def qat_edge_cases():
    rng = np.random.default_rng(0)
    w = rng.normal(0, .3, (8, 1, 3, 3)).astype(np.float32)
    ws = (abs(w).max((1, 2, 3)) / 127).astype(np.float32)

    def inits():
        return [numpy_helper.from_array(np.float32(1 / 64), "s"),
                numpy_helper.from_array(np.uint8(0), "z"),
                numpy_helper.from_array(np.array([1, 1, 16, 16], np.int64), "shp"),
                numpy_helper.from_array(np.round(w / ws[:, None, None, None]).astype(np.int8), "wq"),
                numpy_helper.from_array(ws, "ws"),
                numpy_helper.from_array(np.zeros(8, np.int8), "wz")]
    qdq = [helper.make_node("QuantizeLinear", ["xf", "s", "z"], ["xq"], name="q"),
           helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="dq"),
           helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], name="wdq", axis=0)]
    nodes = [helper.make_node("Cast", ["x"], ["xf"], name="cast", to=T.FLOAT)] + qdq + [
        helper.make_node("Conv", ["xd", "wd"], ["y"], name="conv1", pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT16, [1, 1, 16, 16])],
                          [vi("y", [1, 8, 16, 16])], inits()[:2] + inits()[3:])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "qat_fp16_input", 13)
    nodes = [helper.make_node("Identity", ["x"], ["xf"], name="id")] + qdq + [
        helper.make_node("Reshape", ["xd", "shp"], ["r"], name="rs"),
        helper.make_node("Conv", ["r", "wd"], ["y"], name="conv1", pads=[1, 1, 1, 1])]
    g = helper.make_graph(nodes, "g", [vi("x", [1, 256])], [vi("y", [1, 8, 16, 16]),
                          vi("r", [1, 1, 16, 16])], inits())
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "qat_shared_chain", 13)


def if_untyped():
    rng = np.random.default_rng(2)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (rng.normal(0, 0.3, (16, 4)).astype(np.float32), "W"),
        (np.array(2.0, np.float32), "two"), (np.array(0.5, np.float32), "half"),
        (np.array(16, np.int64), "k16"), (np.array(2, np.int64), "ax2")]]
    untyped = onnx.TypeProto()  # a type with no value: allowed for a branch output
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t_out"], name="then_mul")],
                               "then", [], [helper.make_value_info("t_out", untyped)])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "half"], ["e_out"], name="else_mul")],
                               "else", [], [onnx.ValueInfoProto(name="e_out")])
    nodes = [helper.make_node("Shape", ["x"], ["xs"], name="shape"),
             helper.make_node("Gather", ["xs", "ax2"], ["feat"], name="gather", axis=0),
             helper.make_node("Equal", ["feat", "k16"], ["is16"], name="eq"),
             helper.make_node("If", ["is16"], ["scaled"], name="If_features", then_branch=then_g,
                              else_branch=else_g),
             helper.make_node("Relu", ["scaled"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "W"], ["y"], name="proj")]
    save(model(nodes, "g", [vi("x", [1, 8, 16])], [vi("y", [1, 8, 4])], inits), "if_untyped", 13)


for f in (helper_unnamed, torch_names, torch_dynamic, tf2onnx_nhwc, qat_torch, lstm_gru_state, fifo_cnn, paddle_op11, torch_op12, if_untyped,
          qat_edge_cases, transformer_block, kwt, dscnn_gelu):
    f()
    print("wrote", f.__name__)
