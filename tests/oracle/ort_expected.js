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

function mulberry32(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(dtype, n, gen, args) {
  const out = dtype === 'int64' ? new BigInt64Array(n) : new Float32Array(n);
  if (gen === 'const') {
    for (let i = 0; i < n; i++) out[i] = dtype === 'int64' ? BigInt(args[0]) : Number(args[0]);
    return out;
  }
  const r = mulberry32(Number(args[0]));
  for (let i = 0; i < n; i++) {
    const u = r();
    if (gen === 'uniform') {
      const lo = Number(args[1]), hi = Number(args[2]);
      out[i] = lo + (hi - lo) * u;
    } else if (gen === 'tone') {
      const [f, amp, sr, noise] = args.slice(1).map(Number);
      out[i] = amp * Math.sin(2 * Math.PI * f * i / sr) + noise * (2 * u - 1);
    } else throw new Error('unknown generator ' + gen);
  }
  return out;
}

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
  const cases = new Map();
  for (const line of fs.readFileSync(path.join(here, 'recipes.tsv'), 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [name, model, input, dtype, shape, gen, ...args] = line.trim().split(/\s+/);
    if (!cases.has(name)) cases.set(name, { model, inputs: [] });
    cases.get(name).inputs.push({ input, dtype, shape: shape === '-' ? [] : shape.split(',').map(Number), gen, args });
  }
  for (const [name, c] of cases) {
    const sess = await ort.InferenceSession.create(path.join(modelsDir, c.model),
      { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
    const feeds = {};
    for (const i of c.inputs) {
      const n = i.shape.reduce((a, b) => a * b, 1);
      feeds[i.input] = new ort.Tensor(i.dtype, generate(i.dtype, n, i.gen, i.args), i.shape);
    }
    const out = await sess.run(feeds);
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
