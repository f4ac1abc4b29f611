#!/usr/bin/env python3
"""A small realistic model (Conv-Relu-Conv and a pooled Sigmoid score: two outputs) whose
every string a model can carry holds one payload: the input, output, tensor, initializer and
node names, the graph name, producer_name, doc_string. Used by tests/hostile/run.sh (issue 35).
usage: make_hostile.py PAYLOAD_KEY OUT.onnx     (keys: see PAYLOADS; 'list' prints them)
Weights from a fixed seed; the model checks with onnx.checker (the non-UTF-8 variant is
written by replacing a marker of the same length in the serialized bytes)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PAYLOADS = {
    "html": '<img src=x onerror=alert(1)><script>alert(2)</script>"\'&amp;',
    "gnuplot": 'b`touch PWNED_gp`\'"@x\\n',
    "shell": '$(touch PWNED_sh);`touch PWNED_bq`|&>x',
    "csv": '=HYPERLINK("http://x"),"q",\r\n@SUM(1)',
    "terminal": "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31m\u009b31m\x07\x7f",
    "sql": "x'); DROP TABLE runs;--\"",
    "path": "../../../../tmp/PWNED_path/..\\evil/.",
    "separators": "a;b:c=d,e f\ttab",
    "long": "L" * 9990 + "/tail",
    "name200": "model/stage_3/block_12/" + "x" * 170 + "/",  # an exporter's deep path
    "nonutf8": "NONUTF8_",  # replaced by 8 bytes that are not UTF-8 after serialization
}
NONUTF8 = b"\xff\xfe\xc0\x9bN\x80\xfeX"


def build(p):
    rng = np.random.RandomState(7)
    w1 = (rng.randn(8, 3, 3, 3) * 0.3).astype(np.float32)
    b1 = (rng.randn(8) * 0.1).astype(np.float32)
    w2 = (rng.randn(4, 8, 3, 3) * 0.2).astype(np.float32)
    b2 = (rng.randn(4) * 0.1).astype(np.float32)
    n = lambda s: p + s  # every name carries the payload, kept unique by a suffix
    inits = [numpy_helper.from_array(a, n(k)) for a, k in
             ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    nodes = [
        helper.make_node("Conv", [n("in"), n("w1"), n("b1")], [n("t1")], name=n("conv1"),
                         pads=[1, 1, 1, 1], doc_string=p),
        helper.make_node("Relu", [n("t1")], [n("t2")], name=n("relu1")),
        helper.make_node("Conv", [n("t2"), n("w2"), n("b2")], [n("out")], name=n("conv2"),
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", [n("t2")], [n("t3")], name=n("gap")),
        helper.make_node("Flatten", [n("t3")], [n("t4")], name=n("flat")),
        helper.make_node("ReduceMean", [n("t4")], [n("t5")], name=n("mean"), axes=[1],
                         keepdims=1),
        helper.make_node("Sigmoid", [n("t5")], [n("score")], name=n("sigmoid")),
    ]
    g = helper.make_graph(
        nodes, p or "g",
        [helper.make_tensor_value_info(n("in"), TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info(n("out"), TensorProto.FLOAT, [1, 4, 4, 4]),
         helper.make_tensor_value_info(n("score"), TensorProto.FLOAT, [1, 1])],
        initializer=inits, doc_string=p)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name=p or "nanobench-tests", doc_string=p)
    m.ir_version = 8
    return m


def main():
    if sys.argv[1] == "list":
        print(" ".join(PAYLOADS))
        return
    key, out = sys.argv[1], sys.argv[2]
    m = build(PAYLOADS[key])
    if key != "nonutf8":
        onnx.checker.check_model(m, full_check=True)
    data = m.SerializeToString()
    if key == "nonutf8":
        data = data.replace(PAYLOADS[key].encode(), NONUTF8)
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
