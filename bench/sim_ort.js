#!/usr/bin/env node
// sim_ort: median time per inference of ONNX Runtime (onnxruntime-node, one thread) on a
// float model, input x[i] = sin(0.1 i) as bench_sim feeds the simulator.
// usage: node sim_ort.js MODEL.onnx SHAPE(1,76,32,1) ORT_DIR [MIN_SECONDS]
'use strict';
const path = require('path');
const [model, shape, ortDir, minS] = process.argv.slice(2);
const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));
(async () => {
  const dims = shape.split(',').map(Number);
  const s = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1,
    executionMode: 'sequential' });
  const n = dims.reduce((a, b) => a * b, 1);
  const x = new Float32Array(n).map((_, i) => Math.sin(0.1 * i));
  const f = { [s.inputNames[0]]: new ort.Tensor('float32', x, dims) };
  for (let w = 0; w < 5; w++) await s.run(f);
  const times = [];
  const start = process.hrtime.bigint();
  const limit = BigInt(Math.round(Number(minS || 2) * 1e9));
  while (process.hrtime.bigint() - start < limit || times.length < 20) {
    const t0 = process.hrtime.bigint();
    await s.run(f);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`${path.basename(model)} ${times[times.length >> 1].toFixed(4)} ${times.length}`);
})().catch((e) => { console.error(e); process.exit(1); });
