#!/usr/bin/env node
// Writes ONNX Runtime's outputs for the cases of recipes.tsv into expected/<case>/:
// one .npy per graph output (file-safe name) and outputs.tsv mapping output name -> file.
// usage: node ort_expected.js MODELS_DIR ORT_DIR   (ORT_DIR holds node_modules/onnxruntime-node)
'use strict';
const fs = require('fs');
const path = require('path');
const [modelsDir, ortDir] = process.argv.slice(2);
if (!modelsDir || !ortDir) {
  console.error('usage: node ort_expected.js MODELS_DIR ORT_DIR');
  process.exit(2);
}
const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));
const here = __dirname;

const { loadRecipes, feeds } = require('./recipes.js');

function npy(tensor) {
  const descr = { float32: '<f4', int64: '<i8', bool: '|b1', int32: '<i4' }[tensor.type];
  if (!descr) throw new Error('dtype ' + tensor.type);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = (64 - ((10 + h.length + 1) % 64)) % 64;
  h = h + ' '.repeat(pad) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head, 0);
  head[6] = 1; head[7] = 0; head.writeUInt16LE(h.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  return Buffer.concat([head, Buffer.from(h, 'latin1'), data]);
}

function safeName(s) {
  let o = '';
  for (const c of s) o += /[A-Za-z0-9_\-]/.test(c) || (c === '.' && o.length) ? c : '_';
  return o || '_';
}

async function main() {
  const cases = loadRecipes(path.join(here, 'recipes.tsv'));
  for (const [name, c] of cases) {
    const model = c.model.startsWith('@') ? path.join(here, '..', '..', c.model.slice(1))
                                           : path.join(modelsDir, c.model);
    const sess = await ort.InferenceSession.create(model,
      { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
    const out = await sess.run(feeds(ort, c));
    const dir = path.join(here, 'expected', name);
    fs.mkdirSync(dir, { recursive: true });
    let index = 'output\tfile\n';
    for (const o of sess.outputNames) {
      const file = safeName(o) + '.npy';
      fs.writeFileSync(path.join(dir, file), npy(out[o]));
      index += `${o}\t${file}\n`;
      const d = out[o].data;
      console.log(`${name}: ${o} [${out[o].dims}] first=${d[0]}`);
    }
    fs.writeFileSync(path.join(dir, 'outputs.tsv'), index);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
