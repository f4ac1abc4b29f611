#!/usr/bin/env node
// ort_bench: median time per inference of ONNX Runtime (onnxruntime-node, one intra-op
// thread, default graph optimisations) on a recipe case of tests/oracle/recipes.tsv, with
// the inputs bench_ref gives nanobench's reference. Each timing is one await session.run().
// usage: node ort_bench.js RECIPES.tsv MODELS_DIR ORT_DIR CASE [MIN_SECONDS]
'use strict';
const path = require('path');
const [recipes, modelsDir, ortDir, caseName, minS] = process.argv.slice(2);
const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));

const { loadRecipes, feeds } = require(path.join(__dirname, '..', 'tests', 'oracle', 'recipes.js'));

(async () => {
  const c = loadRecipes(recipes).get(caseName);
  if (!c) { console.error('ort_bench: no case ' + caseName); process.exit(2); }
  const sess = await ort.InferenceSession.create(path.join(modelsDir, c.model),
    { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' });
  const f = feeds(ort, c);
  for (let w = 0; w < 5; w++) await sess.run(f);
  const times = [];
  const start = process.hrtime.bigint();
  const limit = BigInt(Math.round(Number(minS || 2) * 1e9));
  while (process.hrtime.bigint() - start < limit || times.length < 20) {
    const t0 = process.hrtime.bigint();
    await sess.run(f);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`${caseName} ${times[times.length >> 1].toFixed(4)} ${times.length}`);
})().catch((e) => { console.error(e); process.exit(1); });
