#!/usr/bin/env node
// ONNX Runtime's outputs for the per-operator suite (tests/op_suite/gen.py): for each case of
// DIR/cases.tsv, the model run on DIR/<case>/eval.npy (input "x", float32), each output
// written as DIR/<case>/ort_<k>.npy in the graph's output order.
// usage: node ort.js DIR ORT_DIR   (ORT_DIR holds node_modules/onnxruntime-node)
'use strict';
const fs = require('fs');
const path = require('path');
const [dir, ortDir] = process.argv.slice(2);
if (!dir || !ortDir) {
  console.error('usage: node ort.js DIR ORT_DIR');
  process.exit(2);
}
const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));

function readNpyF32(file) {
  const b = fs.readFileSync(file);
  const hl = b.readUInt16LE(8);
  const head = b.toString('latin1', 10, 10 + hl);
  if (!head.includes("'<f4'")) throw new Error(file + ': not float32');
  const shape = head.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim())
    .map((s) => parseInt(s, 10));
  const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length));
  return new ort.Tensor('float32', data, shape);
}

function npy(t) {
  const descr = { float32: '<f4', float16: '<f2', int64: '<i8', int32: '<i4', bool: '|b1',
                  uint8: '|u1', int8: '|i1' }[t.type];
  if (!descr) throw new Error('dtype ' + t.type);
  const shape = t.dims.length === 1 ? `(${t.dims[0]},)` : `(${t.dims.join(', ')})`;
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  h += ' '.repeat((64 - ((10 + h.length + 1) % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head, 0);
  head[6] = 1; head[7] = 0; head.writeUInt16LE(h.length, 8);
  const data = t.type === 'bool' ? Buffer.from(t.data.map((v) => (v ? 1 : 0)))
                                 : Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return Buffer.concat([head, Buffer.from(h, 'latin1'), data]);
}

async function main() {
  const rows = fs.readFileSync(path.join(dir, 'cases.tsv'), 'utf8').trim().split('\n').slice(1);
  for (const row of rows) {
    const name = row.split('\t')[0];
    const d = path.join(dir, name);
    const sess = await ort.InferenceSession.create(path.join(d, 'model.onnx'),
      { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
    const out = await sess.run({ x: readNpyF32(path.join(d, 'eval.npy')) });
    sess.outputNames.forEach((o, k) => fs.writeFileSync(path.join(d, `ort_${k}.npy`), npy(out[o])));
  }
  console.log(`ort: ${rows.length} cases`);
}
main().catch((e) => { console.error(e.message || e); process.exit(1); });
