#!/usr/bin/env node
// ort_bench: median time per inference of ONNX Runtime (onnxruntime-node, one intra-op
// thread, default graph optimisations) on a recipe case of tests/oracle/recipes.tsv, with
// the inputs bench_ref gives nanobench's reference. Each timing is one await session.run().
// usage: node ort_bench.js RECIPES.tsv MODELS_DIR ORT_DIR CASE [MIN_SECONDS]
'use strict';
const fs = require('fs');
const path = require('path');
const [recipes, modelsDir, ortDir, caseName, minS] = process.argv.slice(2);
const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));

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
  if (gen === 'const') { for (let i = 0; i < n; i++) out[i] = dtype === 'int64' ? BigInt(args[0]) : Number(args[0]); return out; }
  const r = mulberry32(Number(args[0]));
  for (let i = 0; i < n; i++) {
    const u = r();
    if (gen === 'uniform') out[i] = Number(args[1]) + (Number(args[2]) - Number(args[1])) * u;
    else { const [f, amp, sr, noise] = args.slice(1).map(Number); out[i] = amp * Math.sin(2 * Math.PI * f * i / sr) + noise * (2 * u - 1); }
  }
  return out;
}

(async () => {
  const inputs = [];
  let model = null;
  for (const line of fs.readFileSync(recipes, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [name, m, input, dtype, shape, gen, ...args] = line.trim().split(/\s+/);
    if (name !== caseName) continue;
    model = m;
    inputs.push({ input, dtype, shape: shape === '-' ? [] : shape.split(',').map(Number), gen, args });
  }
  if (!model) { console.error('ort_bench: no case ' + caseName); process.exit(2); }
  const sess = await ort.InferenceSession.create(path.join(modelsDir, model),
    { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' });
  const feeds = {};
  for (const i of inputs) feeds[i.input] = new ort.Tensor(i.dtype, generate(i.dtype, i.shape.reduce((a, b) => a * b, 1), i.gen, i.args), i.shape);
  for (let w = 0; w < 5; w++) await sess.run(feeds);
  const times = [];
  const start = process.hrtime.bigint();
  const limit = BigInt(Math.round(Number(minS || 2) * 1e9));
  while (process.hrtime.bigint() - start < limit || times.length < 20) {
    const t0 = process.hrtime.bigint();
    await sess.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`${caseName} ${times[times.length >> 1].toFixed(4)} ${times.length}`);
})().catch((e) => { console.error(e); process.exit(1); });
