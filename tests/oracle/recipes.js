// Input recipes of recipes.tsv for node scripts (ort_expected.js, bench/ort_bench.js):
// the same generators as tests/recipe.c, so that C and ONNX Runtime get identical inputs.
'use strict';
const fs = require('fs');

// mulberry32 with 32-bit wrap-around arithmetic (nb_mulberry32 in engine/ir/tensor.c).
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

// Values of one recipe input, in a Float32Array or BigInt64Array.
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
      out[i] = Number(args[1]) + (Number(args[2]) - Number(args[1])) * u;
    } else if (gen === 'tone') {
      const [f, amp, sr, noise] = args.slice(1).map(Number);
      out[i] = amp * Math.sin(2 * Math.PI * f * i / sr) + noise * (2 * u - 1);
    } else throw new Error('unknown generator ' + gen);
  }
  return out;
}

// Map case name -> { model, inputs: [{ input, dtype, shape, gen, args }] }.
function loadRecipes(path) {
  const cases = new Map();
  for (const line of fs.readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [name, model, input, dtype, shape, gen, ...args] = line.trim().split(/\s+/);
    if (!cases.has(name)) cases.set(name, { model, inputs: [] });
    cases.get(name).inputs.push({ input, dtype, shape: shape === '-' ? [] : shape.split(',').map(Number), gen, args });
  }
  return cases;
}

// ONNX Runtime feeds of a case.
function feeds(ort, c) {
  const f = {};
  for (const i of c.inputs) {
    const n = i.shape.reduce((a, b) => a * b, 1);
    f[i.input] = new ort.Tensor(i.dtype, generate(i.dtype, n, i.gen, i.args), i.shape);
  }
  return f;
}

module.exports = { mulberry32, generate, loadRecipes, feeds };
