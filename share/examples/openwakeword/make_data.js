#!/usr/bin/env node
// Calibration and evaluation data for the openWakeWord pipeline from synthetic real speech:
// espeak-ng utterances (several voices and speeds), resampled to 16 kHz mono by sox, some
// mixed with white noise, run through the float melspectrogram and embedding models by
// nanobench's reference (nanobench infer), into raw float32 .bin files per model:
//   OUT/{calib,eval}/mel/NNNN.bin        melspectrogram input [1,16000] (int16-scaled audio)
//   OUT/{calib,eval}/embedding/NNNN.bin  embedding input [1,76,32,1] (mel / 10 + 2, 76 frames)
//   OUT/{calib,eval}/hey_jarvis/NNNN.bin hey_jarvis input [1,16,96] (16 embeddings, 80 ms apart)
// The calibration and evaluation sets use different voices (and phrases), never the same clip.
// usage: node make_data.js NANOBENCH MODELS_DIR OUT [clips-per-set]
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const { execFileSync } = require('child_process');

const [nb, modelsDir, out, perSetArg] = process.argv.slice(2);
if (!nb || !modelsDir || !out) {
  console.error('usage: node make_data.js NANOBENCH MODELS_DIR OUT [clips-per-set]');
  process.exit(2);
}
const perSet = Number(perSetArg || 24);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'nb-owwdata-'));
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });

// the wake phrase and others, so that the head sees both classes
const sets = {
  calib: { voices: ['en-us', 'en-gb', 'en-us+f3', 'en-gb+m3'],
           phrases: ['hey jarvis', 'hey jarvis', 'hey jarvis turn on the lights',
                     'what time is it', 'play some music', 'hey there'] },
  eval: { voices: ['en-gb-scotland', 'en-us+f2', 'en-029', 'en-us+m7'],
          phrases: ['hey jarvis', 'hey jarvis', 'hey jarvis what is the weather',
                    'set a timer for ten minutes', 'call my mother', 'hey travis'] },
};
const speeds = [130, 160, 190];

// .npy reader for float32 arrays (what nanobench infer writes)
function readNpy(file) {
  const b = fs.readFileSync(file);
  const hl = b.readUInt16LE(8);
  const header = b.toString('latin1', 10, 10 + hl);
  if (!header.includes("'<f4'")) throw new Error(file + ': not float32');
  const shape = header.match(/\(([^)]*)\)/)[1].split(',').filter(s => s.trim()).map(Number);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length));
  return { shape, data };
}
const writeBin = (file, f32) => fs.writeFileSync(file, Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength));

function clipAudio(text, voice, speed, noise) {
  const wav = path.join(tmp, 'u.wav'), raw = path.join(tmp, 'u.raw');
  run('espeak-ng', ['-v', voice, '-s', String(speed), '-w', wav, text]);
  // 16 kHz mono int16, padded to 2 s (speech placed at the end, as a streaming detector
  // sees it when the phrase has just been said)
  const args = [wav, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', raw,
                'pad', '2', '0', 'trim', '-2'];
  run('sox', ['-R'].concat(args)); // -R: repeatable (sox dithers with a random seed otherwise)
  const b = fs.readFileSync(raw);
  const n = b.length / 2, a = new Float32Array(32000);
  for (let i = 0; i < n && i < 32000; i++) a[32000 - Math.min(n, 32000) + i] = b.readInt16LE(2 * i);
  if (noise > 0) { // white noise at a fixed amplitude (deterministic LCG)
    let s = 12345 + speed;
    for (let i = 0; i < a.length; i++) {
      s = (s * 1103515245 + 12345) >>> 0;
      a[i] += noise * ((s / 4294967296) * 2 - 1);
    }
  }
  return a;
}

function infer(model, shape, inputFile, name) {
  const od = path.join(tmp, 'o_' + path.basename(model));
  run(nb, ['--no-record', 'infer', model, '--input_shape', shape, '--input', name + '=' + inputFile,
           '--output-dir', od]);
  const f = fs.readdirSync(od).find(x => x.endsWith('.npy'));
  return readNpy(path.join(od, f));
}

const mel = path.join(modelsDir, 'melspectrogram.onnx');
const emb = path.join(modelsDir, 'embedding_model.onnx');
for (const [setName, set] of Object.entries(sets)) {
  const dirs = {};
  for (const d of ['mel', 'embedding', 'hey_jarvis']) {
    dirs[d] = path.join(out, setName, d);
    fs.mkdirSync(dirs[d], { recursive: true });
  }
  let k = 0;
  for (let c = 0; c < perSet; c++) {
    const voice = set.voices[c % set.voices.length];
    const phrase = set.phrases[Math.floor(c / set.voices.length) % set.phrases.length];
    const speed = speeds[c % speeds.length];
    const noise = c % 3 === 2 ? 300 : 0;
    const audio = clipAudio(phrase, voice, speed, noise);
    const id = String(k++).padStart(4, '0');
    // melspectrogram on the whole 2 s; its calibration input is the last second
    writeBin(path.join(dirs.mel, id + '.bin'), audio.slice(16000));
    const af = path.join(tmp, 'audio.bin');
    writeBin(af, audio);
    const m = infer(mel, 'input:1,32000', af, 'input'); // [1,1,T,32]
    const T = m.shape[2];
    const spec = new Float32Array(T * 32);
    for (let i = 0; i < spec.length; i++) spec[i] = m.data[i] / 10 + 2;
    // embeddings of the last 16 windows of 76 frames, 8 frames (80 ms) apart
    const nWin = 16, embs = new Float32Array(nWin * 96);
    if (T < 76 + 8 * (nWin - 1)) throw new Error('clip too short: ' + T + ' frames');
    const batch = new Float32Array(nWin * 76 * 32);
    for (let w = 0; w < nWin; w++) {
      const start = T - 76 - 8 * (nWin - 1 - w);
      batch.set(spec.subarray(start * 32, (start + 76) * 32), w * 76 * 32);
    }
    // the newest window is the embedding model's calibration input
    writeBin(path.join(dirs.embedding, id + '.bin'), batch.slice((nWin - 1) * 76 * 32));
    const bf = path.join(tmp, 'emb_in.bin');
    writeBin(bf, batch);
    const e = infer(emb, `input_1:${nWin},76,32,1`, bf, 'input_1'); // [16,1,1,96]
    embs.set(e.data.subarray(0, nWin * 96));
    writeBin(path.join(dirs.hey_jarvis, id + '.bin'), embs);
    process.stderr.write(`\r${setName}: ${k}/${perSet}`);
  }
  process.stderr.write('\n');
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(out);
