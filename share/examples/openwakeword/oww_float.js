#!/usr/bin/env node
// oww_float: openWakeWord's streaming pipeline in float32 with ONNX Runtime (onnxruntime-node),
// the reference for oww_npu.c (the same pipeline on the simulated NPU). The framing, shared
// by both and taken from openWakeWord's AudioFeatures (utils.py):
//   - audio: 16 kHz mono, int16 values as float (raw s16le files);
//   - one frame per 1280 samples (80 ms); frame f runs the melspectrogram on the 1760 samples
//     [1280 f, 1280 f + 1760) (its 1280 new samples and 480 of history), which gives 8 new
//     mel frames, transformed mel / 10 + 2 and appended to the mel buffer (which starts as 76
//     rows of ones, as openWakeWord's);
//   - the embedding model on the last 76 mel frames [1,76,32,1], every frame: one new
//     96-value embedding;
//   - the wake-word model on the last 16 embeddings [1,16,96], from the 16th frame on
//     (openWakeWord pre-fills its feature buffer with embeddings of random noise and zeroes
//     the first 5 predictions instead; here nothing is scored before 16 real embeddings).
// The wake-word score is the model's own output (hey_jarvis: tensor 53, the second stage's
// score when the first, Sigmoid_28, is >= its threshold, else the first's), the whole model
// the NPU runs (its If on the MCU's CPU); --stage1 TENSOR scores an inner tensor instead
// (p1.1: the first stage, for a model cut with atc --out_nodes="Sigmoid_28:0").
//
// usage: node oww_float.js ORT_DIR MODELS_DIR [--wakeword NAME] [--stage1 TENSOR] [--scores]
//                          [--calib DIR --calib-n N [--loud-first]] [--mel-out DIR]
//                          [--fp16-inputs] CLIP.raw ...
// prints, per clip:
//   clip PATH frames F scored S peak P at FRAME full_peak Q
// with --scores, one line per scored frame before it: `score FRAME P Q`.
// --calib DIR writes calibration inputs in the streaming shapes, N of each evenly spaced over
// all the clips' frames, as raw float32 .bin: DIR/mel/NNNN.bin [1,1760],
// DIR/embedding/NNNN.bin [1,76,32,1], DIR/wakeword/NNNN.bin [1,16,96]. --loud-first writes each
// model's N in the order of their frame's audio energy, loudest first (a bring-up compares
// every layer on its first evaluation input: speech rather than a quiet lead-in).
// --fp16-inputs rounds each model's input to fp16 (nearest, ties to even; +-65504 at most)
// before running it in float32: the chip's model I/O (atc: every float input in
// --input_fp16_nodes) with exact compute, the floor of any placement's score difference.
// --mel-out DIR writes each clip's new mel frames, transformed (mel / 10 + 2), 8 x 32 per frame,
// as raw float32 DIR/CLIP.mel (CLIP: the clip's file name without .raw): oww_npu --mel-from
// DIR runs the NPU pipeline on them instead of its melspectrogram exeom's.
'use strict';
const fs = require('fs');
const path = require('path');

const FRAME = 1280, HISTORY = 480, WIN = FRAME + HISTORY;
const MEL_BANDS = 32, MEL_NEW = 8, EMB_FRAMES = 76, EMB = 96, WW_FRAMES = 16;

function usage() {
  console.error('usage: node oww_float.js ORT_DIR MODELS_DIR [--wakeword NAME] [--stage1 TENSOR]' +
                ' [--scores] [--calib DIR --calib-n N [--loud-first]] [--mel-out DIR] [--fp16-inputs]' +
                ' CLIP.raw ...');
  process.exit(2);
}

const argv = process.argv.slice(2);
if (argv.length < 3) usage();
const [ortDir, modelsDir] = argv;
let wakeword = 'hey_jarvis_v0.1', stage1 = null, scores = false, calibDir = null, calibN = 0;
let melOut = null, loudFirst = false, fp16In = false;
const clips = [];
for (let i = 2; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--wakeword' && i + 1 < argv.length) wakeword = argv[++i];
  else if (a === '--stage1' && i + 1 < argv.length) stage1 = argv[++i];
  else if (a === '--scores') scores = true;
  else if (a === '--calib' && i + 1 < argv.length) calibDir = argv[++i];
  else if (a === '--calib-n' && i + 1 < argv.length) calibN = Number(argv[++i]);
  else if (a === '--loud-first') loudFirst = true;
  else if (a === '--fp16-inputs') fp16In = true;
  else if (a === '--mel-out' && i + 1 < argv.length) melOut = argv[++i];
  else if (a.startsWith('--')) usage();
  else clips.push(a);
}
if (!clips.length || (calibDir && !(calibN > 0))) usage();
const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));

// x (a float32) rounded to the nearest fp16 value, ties to even, clamped to +-65504 (as the
// simulated NPU's input conversion, share/doc/numerics.md)
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
function f16round(x) {
  f32[0] = x;
  const u = u32[0], sign = u >>> 31 ? -1 : 1, exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff, e = exp - 127 + 15;
  if (exp === 0xff) return x; // NaN, infinities
  if (e <= 0) { // an fp16 subnormal: steps of 2^-24
    if (e < -10) return sign * 0;
    mant |= 0x800000;
    const shift = 14 - e, half = 2 ** (shift - 1), rem = mant % (2 ** shift);
    let m = Math.floor(mant / 2 ** shift);
    if (rem > half || (rem === half && m % 2 === 1)) m++;
    return sign * m * 2 ** -24;
  }
  let m = mant >>> 13;
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (m & 1))) { m++; if (m === 0x400) { m = 0; e++; } }
  if (e >= 31) return sign * 65504;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}
const modelIn = (a) => (fp16In ? Float32Array.from(a, f16round) : a);

// ---- the model's first-stage tensor as an extra graph output (a few protobuf fields) ----
function readVarint(b, pos) {
  let v = 0, mul = 1, byte;
  do {
    if (pos >= b.length) throw new Error('truncated varint');
    byte = b[pos++];
    v += (byte & 0x7f) * mul;
    mul *= 128;
  } while (byte & 0x80);
  return [v, pos];
}
function varint(v) {
  const out = [];
  while (v >= 0x80) { out.push((v % 128) | 0x80); v = Math.floor(v / 128); }
  out.push(v);
  return Buffer.from(out);
}
const field = (num, bytes) => Buffer.concat([varint(num * 8 + 2), varint(bytes.length), bytes]);
const vfield = (num, v) => Buffer.concat([varint(num * 8), varint(v)]);
// ModelProto with ValueInfoProto{name, type: tensor float [1,1]} appended to graph.output
// (ModelProto.graph = 7, GraphProto.output = 12; ValueInfoProto.name = 1, .type = 2;
// TypeProto.tensor_type = 1; Tensor.elem_type = 1, .shape = 2; TensorShapeProto.dim = 1;
// Dimension.dim_value = 1).
function withOutput(model, name) {
  const dim1 = field(1, vfield(1, 1));
  const type = field(1, Buffer.concat([vfield(1, 1), field(2, Buffer.concat([dim1, dim1]))]));
  const vi = field(12, Buffer.concat([field(1, Buffer.from(name, 'utf8')), field(2, type)]));
  const parts = [];
  let pos = 0, found = false;
  while (pos < model.length) {
    const start = pos;
    let key;
    [key, pos] = readVarint(model, pos);
    const wire = key & 7;
    if (wire === 0) [, pos] = readVarint(model, pos);
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      let len;
      [len, pos] = readVarint(model, pos);
      if (key >>> 3 === 7) {
        const graph = Buffer.concat([model.subarray(pos, pos + len), vi]);
        parts.push(field(7, graph));
        found = true;
        pos += len;
        continue;
      }
      pos += len;
    } else throw new Error('unexpected protobuf wire type ' + wire);
    parts.push(model.subarray(start, pos));
  }
  if (!found) throw new Error('no graph in the model');
  return Buffer.concat(parts);
}

function readClip(file) {
  const b = fs.readFileSync(file);
  const a = new Float32Array(b.length >> 1);
  for (let i = 0; i < a.length; i++) a[i] = b.readInt16LE(2 * i);
  return a;
}
const writeBin = (file, f32) =>
  fs.writeFileSync(file, Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength));

(async () => {
  const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' };
  const mel = await ort.InferenceSession.create(path.join(modelsDir, 'melspectrogram.onnx'), opts);
  const emb = await ort.InferenceSession.create(path.join(modelsDir, 'embedding_model.onnx'), opts);
  const wwBytes = fs.readFileSync(path.join(modelsDir, wakeword + '.onnx'));
  // the score: the model's own output (the whole model, its If included); --stage1 T scores
  // an inner tensor instead (a model cut with atc --out_nodes)
  const ww = await ort.InferenceSession.create(stage1 ? withOutput(wwBytes, stage1) : wwBytes, opts);
  const wwFull = stage1 ? ww.outputNames.find(n => n !== stage1) : ww.outputNames[0];
  if (!stage1) stage1 = wwFull;
  const calib = { mel: [], embedding: [], wakeword: [] };

  for (const file of clips) {
    const audio = readClip(file);
    const frames = audio.length >= WIN ? Math.floor((audio.length - HISTORY) / FRAME) : 0;
    let melBuf = new Float32Array(EMB_FRAMES * MEL_BANDS).fill(1); // the last 76 mel frames
    const feats = []; // the last 16 embeddings
    let peak = -Infinity, peakAt = -1, fullPeak = -Infinity, scored = 0;
    const mels = melOut ? new Float32Array(frames * MEL_NEW * MEL_BANDS) : null;
    for (let f = 0; f < frames; f++) {
      const win = audio.slice(f * FRAME, f * FRAME + WIN);
      const m = (await mel.run({ [mel.inputNames[0]]: new ort.Tensor('float32', modelIn(win), [1, WIN]) }));
      const spec = m[mel.outputNames[0]].data; // [1,1,8,32]
      if (spec.length !== MEL_NEW * MEL_BANDS)
        throw new Error(`melspectrogram gave ${spec.length} values, expected ${MEL_NEW * MEL_BANDS}`);
      const next = new Float32Array(EMB_FRAMES * MEL_BANDS);
      next.set(melBuf.subarray(MEL_NEW * MEL_BANDS));
      for (let i = 0; i < MEL_NEW * MEL_BANDS; i++)
        next[(EMB_FRAMES - MEL_NEW) * MEL_BANDS + i] = spec[i] / 10 + 2;
      melBuf = next;
      if (mels) mels.set(next.subarray((EMB_FRAMES - MEL_NEW) * MEL_BANDS), f * MEL_NEW * MEL_BANDS);
      const e = await emb.run({ [emb.inputNames[0]]:
        new ort.Tensor('float32', modelIn(melBuf.slice()), [1, EMB_FRAMES, MEL_BANDS, 1]) });
      feats.push(Float32Array.from(e[emb.outputNames[0]].data));
      if (feats.length > WW_FRAMES) feats.shift();
      // the frame's audio energy (its 1280 new samples), for --loud-first
      let energy = 0;
      for (let i = WIN - FRAME; i < WIN; i++) energy += win[i] * win[i];
      if (calibDir) {
        calib.mel.push({ x: win, energy });
        calib.embedding.push({ x: melBuf.slice(), energy });
      }
      if (feats.length < WW_FRAMES) continue;
      const x = new Float32Array(WW_FRAMES * EMB);
      feats.forEach((v, i) => x.set(v, i * EMB));
      if (calibDir) calib.wakeword.push({ x: x.slice(), energy });
      const o = await ww.run({ [ww.inputNames[0]]: new ort.Tensor('float32', modelIn(x), [1, WW_FRAMES, EMB]) });
      const s = o[stage1].data[0], full = wwFull ? o[wwFull].data[0] : NaN;
      scored++;
      if (scores) console.log(`score ${f} ${s.toFixed(6)} ${full.toFixed(6)}`);
      if (s > peak) { peak = s; peakAt = f; }
      if (full > fullPeak) fullPeak = full;
    }
    if (mels) {
      fs.mkdirSync(melOut, { recursive: true });
      writeBin(path.join(melOut, path.basename(file, '.raw') + '.mel'), mels);
    }
    console.log(`clip ${file} frames ${frames} scored ${scored} peak ${scored ? peak.toFixed(6) : 'nan'}` +
                ` at ${peakAt} full_peak ${scored ? fullPeak.toFixed(6) : 'nan'}`);
  }
  if (calibDir) {
    for (const [name, list] of Object.entries(calib)) {
      const dir = path.join(calibDir, name);
      fs.mkdirSync(dir, { recursive: true });
      const n = Math.min(calibN, list.length);
      // evenly spaced over all frames of all clips
      const pick = Array.from({ length: n }, (_, k) => list[Math.floor((k + 0.5) * list.length / n)]);
      if (loudFirst) pick.sort((p, q) => q.energy - p.energy);
      pick.forEach((p, k) => writeBin(path.join(dir, String(k).padStart(4, '0') + '.bin'), p.x));
      console.error(`oww_float: ${n} calibration inputs of ${list.length} in ${dir}`);
    }
  }
})().catch((e) => { console.error('oww_float: ' + (e && e.message || e)); process.exit(1); });
