#!/usr/bin/env python3
"""Writes tests/data/rnn/lstm_gru.onnx, the LSTM/GRU calibration fixture: x [5, 1, 8] ->
LSTM (hidden 16, initial_h and initial_c as graph inputs, bias) -> Y [5, 1, 1, 16] ->
Squeeze -> GRU (hidden 12, linear_before_reset 0, bias) -> Y_h [1, 1, 12] and the LSTM's
Y_h. Weights: numpy's default_rng(7) normal(0, 0.3), except R row 0 of the LSTM, which
holds the values -0.5 .. 0.5 (max |.| 0.5: its ARQ scale is 0.5 / 127, checked by
tests/test_cli.sh). Needs python3-onnx and python3-numpy (Debian); the file is committed,
so the tests do not run this.
usage: tests/data/make_rnn_model.py [OUT.onnx]"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/rnn/lstm_gru.onnx"
rng = np.random.default_rng(7)
T, B, I, H1, H2 = 5, 1, 8, 16, 12
w1 = rng.normal(0, 0.3, (1, 4 * H1, I)).astype(np.float32)
r1 = rng.normal(0, 0.3, (1, 4 * H1, H1)).astype(np.float32)
r1[0, 0, :] = np.linspace(-0.5, 0.5, H1, dtype=np.float32)
b1 = rng.normal(0, 0.1, (1, 8 * H1)).astype(np.float32)
w2 = rng.normal(0, 0.3, (1, 3 * H2, H1)).astype(np.float32)
r2 = rng.normal(0, 0.3, (1, 3 * H2, H2)).astype(np.float32)
b2 = rng.normal(0, 0.1, (1, 6 * H2)).astype(np.float32)
inits = [numpy_helper.from_array(a, n) for a, n in
         [(w1, "W1"), (r1, "R1"), (b1, "B1"), (w2, "W2"), (r2, "R2"), (b2, "B2"),
          (np.array([1], np.int64), "axis1")]]
nodes = [
    helper.make_node("LSTM", ["x", "W1", "R1", "B1", "", "h0", "c0"], ["y1", "y1_h", ""],
                     name="lstm", hidden_size=H1),
    helper.make_node("Squeeze", ["y1", "axis1"], ["y1s"], name="squeeze"),
    helper.make_node("GRU", ["y1s", "W2", "R2", "B2"], ["", "y2_h"], name="gru",
                     hidden_size=H2, linear_before_reset=0),
]
g = helper.make_graph(
    nodes, "lstm_gru",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I]),
     helper.make_tensor_value_info("h0", TensorProto.FLOAT, [1, B, H1]),
     helper.make_tensor_value_info("c0", TensorProto.FLOAT, [1, B, H1])],
    [helper.make_tensor_value_info("y2_h", TensorProto.FLOAT, [1, B, H2]),
     helper.make_tensor_value_info("y1_h", TensorProto.FLOAT, [1, B, H1])],
    inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="nanobench")
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, out)
