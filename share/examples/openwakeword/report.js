#!/usr/bin/env node
// report.js: the parts of run.sh that read JSON or several score files at once (node, as
// oww_float.js: no jq, no python needed).
//   node report.js suggest SUMMARY.json
//       the --nb_input_scale that atc suggested in a `nanobench bringup` (summary.json's
//       compile.suggested_nb_input_scale), nothing when atc suggested none
//   node report.js suggest-int16 SUMMARY.json
//       the config lines that calibrate suggested in a `nanobench bringup` (summary.json's
//       calibration.suggested_int16[].override: a layer at INT16), one a line, or nothing
//   node report.js effect A.json B.json [C.json]
//       bringups of one model side by side: how each was brought up (the input scale, the
//       layers calibrated at INT16), fp16 results clamped, the first layer over threshold,
//       calibrate's INT16 advice, the network output's cosine and SQNR against float
//   node report.js pipeline LIST FLOAT NPU NPU_FLOAT_MEL NPU_BEFORE MEL.json EMB.json WW.json [NPU_SCALE [PLACED [FLOAT_FP16_IO [SEARCHED]]]]
//   node report.js searched-exeom SUMMARY.json  (the search's chosen exeom, else the bring-up's)
//       PLACED: the scores with the melspectrogram as the tool places it (--auto_place)
//   node report.js fix SUMMARY.json
//       the --nb_input_scale a bring-up's fp16 check found (saturation_fix), nothing if none
//       the streaming check: per clip the peak score of float and NPU, the
//       detections at 0.5, the largest per-frame difference; then the detection agreement,
//       the largest difference, the NPU cycles per 80 ms frame and the real-time margin, and
//       where the NPU and float disagree, what the bringups' compare and calibration say.
//       LIST: clip <tab> positive|negative; FLOAT: oww_float.js --scores; NPU: oww_npu --scores
//       with the three exeoms; NPU_FLOAT_MEL: oww_npu --mel-from (the float melspectrogram);
//       NPU_BEFORE: oww_npu with the melspectrogram exeom compiled as is; NPU_SCALE: with the
//       melspectrogram with atc's input scale alone (int8 throughout).
'use strict';
const fs = require('fs');

const THRESHOLD = 0.5, MHZ = 64, FRAME_MS = 80;
const summary = f => JSON.parse(fs.readFileSync(f, 'utf8'));
const f4 = v => (v === null || v === undefined || Number.isNaN(v) ? '-' : v.toFixed(4));
const db = v => (v === null || v === undefined ? 'undefined' : v.toFixed(1) + ' dB');
const cos = v => (v === null || v === undefined ? 'undefined' : v.toFixed(4));

// text word-wrapped at 79 columns, the first line after `first`, the others after `rest`
function say(text, first = '', rest = '    ') {
  const words = text.split(' ');
  let line = first;
  const lines = [];
  for (const w of words) {
    if (line.length > rest.length && line !== first && line.length + 1 + w.length > 79) {
      lines.push(line);
      line = rest + w;
    } else {
      line += (line === first || line === rest ? '' : ' ') + w;
    }
  }
  lines.push(line);
  console.log(lines.join('\n'));
}

// the exeom a bring-up chose: the search's, else its own
function searchedExeom(file) {
  const s = summary(file);
  console.log(s.search && s.search.exeom ? s.search.exeom : s.compile.exeom);
}

// the search's line for the pipeline's notes: target, result, changes
function searchLine(label, file) {
  const s = summary(file), se = s.search;
  if (!se) return `${label}: no search`;
  const ch = (se.chosen || []).map(c => (c.layer || c.nodes) ? `${c.change} ${c.layer || c.nodes}` : c.change);
  return `${label}: target ${se.target_sqnr_db} dB, ${se.result}; ${db(se.as_is_sqnr_db)} as is -> ` +
    `${se.chosen_sqnr_db !== undefined ? db(se.chosen_sqnr_db) : db(se.as_is_sqnr_db)}` +
    `${ch.length ? ` (${ch.join(', ')})` : ''}; ${se.tries} configurations in ${se.wall_s.toFixed(0)} s`;
}

function suggest(file) {
  const s = summary(file).compile.suggested_nb_input_scale;
  if (s) console.log(s);
}

function firstOver(s) {
  const f = s.compare.first_over_threshold;
  return f ? `${f.layer} ${db(f.sqnr_db)}` : 'none';
}

// the --nb_input_scale a bring-up's own fp16 check found and measured (saturation_fix)
function fix(file) {
  const f = summary(file).saturation_fix;
  if (f && f.nb_input_scale) console.log(f.nb_input_scale);
}

function suggestInt16(file) {
  for (const x of summary(file).calibration.suggested_int16 || []) console.log(x.override);
}

// the layers a bringup calibrated at INT16 (its calibrate's log: act_bits 16)
function int16Layers(s) {
  try {
    const cal = JSON.parse(fs.readFileSync(s.out + '/log/2-calibrate.out', 'utf8'));
    return cal.layers.filter(l => l.act_bits === 16).map(l => l.layer);
  } catch (e) {
    return [];
  }
}

function effect(...files) {
  const S = files.map(summary), O = S.map(s => s.outputs[0]), tag = 'abcd';
  const onCpu = s => (s.placement && s.placement.cpu_nodes ? s.placement.cpu_nodes.split(';') : []);
  const how = s => {
    const i16 = int16Layers(s), cpu = onCpu(s);
    return (s.compile.nb_input_scale ? `--nb_input_scale=${s.compile.nb_input_scale}` : 'as is') +
      (i16.length ? `, ${i16.join(', ')} at INT16` : ', int8 throughout') +
      (cpu.length ? `, ${cpu.length} nodes on the MCU's CPU (${s.placement.source}: ${cpu.join(';')})` : '');
  };
  const advice = s => {
    const a = [...(s.calibration.suggested_int16 || [])].sort((x, y) => y.zeroed_fraction - x.zeroed_fraction);
    return a.length ? `${a[0].layer} ${(100 * a[0].zeroed_fraction).toFixed(0)}%${a.length > 1 ? ` +${a.length - 1}` : ''}` : 'none';
  };
  const rows = [
    ['', ...S.map((s, i) => `(${tag[i]})`)],
    ['fp16 results clamped (all tasks)', ...S.map(s => String(s.npu.saturation.total))],
    ['  in the STFT (Conv_2/Conv_3)', ...S.map(stft)],
    ['first layer over threshold', ...S.map(firstOver)].map(x => x.replace('/AscendDequant', '/Deq')),
    ['INT16 advice (int8 zeroes, +more)', ...S.map(advice)],
    ['output cosine mean', ...O.map(o => cos(o.cosine_mean))],
    ['output cosine worst', ...O.map(o => cos(o.cosine_worst))],
    ['output SQNR mean', ...O.map(o => db(o.sqnr_db_mean))],
    ['output SQNR worst', ...O.map(o => db(o.sqnr_db_worst))],
    ['max |NPU - float|', ...O.map(o => o.max_abs_error.toPrecision(4))],
    ['nodes on the MCU\'s CPU', ...S.map(s => String(onCpu(s).length))],
    ['cycles: NPU + CPU (+ switches)', ...S.map(s => `${s.npu.npu_cycles ?? s.npu.cycles} + ${s.npu.cpu_cycles ?? 0}` +
                                              (s.npu.switches ? ` (+${s.npu.switches})` : ''))],
  ];
  console.log(`   effect on ${O[0].name} [${O[0].shape}], ${S[0].evaluation.count} evaluation inputs:`);
  S.forEach((s, i) => console.log(`   (${tag[i]}) ${how(s)}`));
  const w = S.length > 2 ? 18 : 21;
  for (const r of rows)
    console.log(`   ${r[0].padEnd(33)} ${r.slice(1, -1).map(x => x.padEnd(w)).join(' ')} ${r[r.length - 1]}`);
}

// results clamped in the tasks of the STFT's two Convs
function stft(s) {
  return String(s.npu.saturation.tasks.filter(t => /^Conv_[23]\//.test(t.name))
    .reduce((n, t) => n + t.count, 0));
}

// "score F P [Q]" and "clip PATH ... peak P ... [sat A/B/C]" lines of oww_float.js / oww_npu
function scores(file) {
  const clips = [];
  let cur = {}, budget = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const a = line.split(' ');
    if (a[0] === 'score') cur[a[1]] = Number(a[2]);
    else if (a[0] === 'clip') {
      const c = { frames: cur, peak: Number(a[a.indexOf('peak') + 1]) };
      const s = a.indexOf('sat');
      if (s > 0) c.sat = a[s + 1];
      clips.push(c);
      cur = {};
    } else if (a[0] === 'npu:') budget = line.slice(5);
  }
  return { clips, budget };
}

function maxDiff(f, n) {
  let m = 0;
  for (const k of Object.keys(f.frames))
    if (k in n.frames) m = Math.max(m, Math.abs(f.frames[k] - n.frames[k]));
  return m;
}

function cause(c) {
  return c || 'none named';
}

function pipeline(list, fl, np, nm, nb, melJ, embJ, wwJ, ns, npl, f16, ser) {
  const lab = fs.readFileSync(list, 'utf8').trim().split('\n').map(l => l.split('\t'));
  const F = scores(fl), N = scores(np), M = scores(nm), B = scores(nb), C = ns ? scores(ns) : null;
  const P = npl ? scores(npl) : null, H = f16 ? scores(f16) : null, S = ser ? scores(ser) : null;
  const n = lab.length;
  for (const [x, what] of [[F, 'float'], [N, 'NPU'], [M, 'NPU on float mel'], [B, 'NPU before'],
                           ...(C ? [[C, 'NPU with the scale alone']] : []),
                           ...(P ? [[P, 'NPU + CPU as placed']] : []),
                           ...(H ? [[H, 'float with fp16 model inputs']] : []),
                           ...(S ? [[S, 'as searched']] : [])])
    if (x.clips.length !== n) throw new Error(`${what}: ${x.clips.length} clips scored, ${n} listed`);
  const yn = p => (p >= THRESHOLD ? 'yes' : 'no');
  console.log('clip                     float    NPU  placed  NPU*  max|diff|         detected         NPU clamped');
  console.log('                         peak    peak   peak   peak  NPU/placed/NPU*   fl/NPU/placed/NPU* mel/emb/hj');
  const agree = { N: 0, M: 0, B: 0, C: 0, P: 0 }, right = { F: 0, N: 0, M: 0, P: 0 }, dis = [];
  const fa = { F: 0, N: 0, P: 0, M: 0 }; // false accepts: negatives detected
  const rows = []; // per clip, for nanobench report --pipeline ($PIPELINE_JSON)
  let maxN = [0, ''], maxM = [0, ''], maxP = [0, ''];
  for (let i = 0; i < n; i++) {
    const [name, want] = lab[i], w = want === 'positive' ? 'yes' : 'no';
    const f = F.clips[i], p = N.clips[i], m = M.clips[i], b = B.clips[i], q = P ? P.clips[i] : null;
    const dN = maxDiff(f, p), dM = maxDiff(f, m), dP = q ? maxDiff(f, q) : NaN;
    if (dN >= maxN[0]) maxN = [dN, name];
    if (dM >= maxM[0]) maxM = [dM, name];
    if (q && dP >= maxP[0]) maxP = [dP, name];
    const fd = yn(f.peak), nd = yn(p.peak), md = yn(m.peak), pd = q ? yn(q.peak) : '-';
    agree.N += fd === nd; agree.M += fd === md; agree.B += fd === yn(b.peak);
    if (C) agree.C += fd === yn(C.clips[i].peak);
    if (q) agree.P += fd === pd;
    right.F += fd === w; right.N += nd === w; right.M += md === w; right.P += pd === w;
    if (w === 'no') { fa.F += fd === 'yes'; fa.N += nd === 'yes'; fa.P += pd === 'yes'; fa.M += md === 'yes'; }
    if (fd !== nd || (q && fd !== pd)) dis.push(name);
    rows.push({ clip: name, label: want, float_peak: f.peak, npu_peak: p.peak, npu_float_mel_peak: m.peak,
                placed_peak: q ? q.peak : null, max_diff_npu: dN, max_diff_npu_float_mel: dM,
                max_diff_placed: q ? dP : null, detected_float: fd === 'yes',
                detected_npu: nd === 'yes', detected_npu_float_mel: md === 'yes',
                detected_placed: pd === 'yes', npu_clamped: p.sat || '',
                searched_peak: S ? S.clips[i].peak : null,
                detected_searched: S ? yn(S.clips[i].peak) === 'yes' : null });
    console.log(`${name.padEnd(23)} ${f4(f.peak)} ${f4(p.peak)} ${q ? f4(q.peak) : '     -'} ${f4(m.peak)}  ` +
                `${dN.toFixed(2)}/${q ? dP.toFixed(2) : '-'}/${dM.toFixed(2)}`.padEnd(18) +
                `${`${fd}/${nd}/${pd}/${md}`.padEnd(19)}${p.sat || '-'}`);
  }
  say('(NPU: the three exeoms chained; NPU*: the embedding and hey_jarvis exeoms on the float ' +
      'melspectrogram\'s frames, the front end on the host; max|diff|: the largest |float - NPU| over ' +
      'the clip\'s frames; clamped: fp16 results at +-65504 over the clip, in each exeom)', '', ' ');
  console.log('');
  console.log(`== pipeline summary: ${n} clips (${lab.filter(l => l[1] === 'positive').length} "hey jarvis"), ` +
              `detection at ${THRESHOLD}`);
  const i16 = int16Layers(summary(melJ)), melHow = summary(melJ).compile.nb_input_scale;
  say(`detection agreement with float: NPU ${agree.N} of ${n} clips (melspectrogram ` +
      `${melHow ? `with --nb_input_scale=${melHow}` : 'as is'}${i16.length ? ` and ${i16.join(', ')} at INT16` : ''}; ` +
      `as is: ${agree.B} of ${n}${C ? `; with the scale alone: ${agree.C} of ${n}` : ''}); ` +
      `NPU* (float melspectrogram) ${agree.M} of ${n}`);
  if (P) {
    const pl = summary(melJ.replace(/\/mel\/summary\.json$/, '/mel_placed/summary.json'));
    const cpu = pl.placement && pl.placement.cpu_nodes ? pl.placement.cpu_nodes.split(';').length : 0;
    say(`detection agreement with float, as the tool places it (melspectrogram --auto_place: ${cpu} nodes ` +
        `on the MCU's CPU${pl.compile.nb_input_scale ? `, --nb_input_scale=${pl.compile.nb_input_scale}` : ''}` +
        `${int16Layers(pl).length ? `, ${int16Layers(pl).join(', ')} at INT16` : ''}): ${agree.P} of ${n} clips`);
  }
  const negs = lab.filter(l => l[1] !== 'positive').length;
  say(`right against the label: float ${right.F} of ${n}, NPU ${right.N}${P ? `, placed ${right.P}` : ''}, ` +
      `NPU* ${right.M}; false accepts (of ${negs} negatives): float ${fa.F}, NPU ${fa.N}` +
      `${P ? `, placed ${fa.P}` : ''}, NPU* ${fa.M}`);
  // the floor: the float pipeline with each model's input rounded to fp16 (the chip's model
  // I/O, atc's --input_fp16_nodes) and float32 compute: what no placement can go below
  let floor = null;
  if (H) {
    floor = { agree: 0, max_diff: 0, clip: '', over_0_1: 0 };
    for (let i = 0; i < n; i++) {
      const d = maxDiff(F.clips[i], H.clips[i]);
      floor.agree += yn(F.clips[i].peak) === yn(H.clips[i].peak);
      floor.over_0_1 += d > 0.1;
      if (d >= floor.max_diff) { floor.max_diff = d; floor.clip = lab[i][0]; }
    }
    say(`the floor, float32 compute with each model's input in fp16 (the chip's model I/O): ` +
        `agreement ${floor.agree} of ${n}, max |score difference| ${floor.max_diff.toFixed(4)} ` +
        `(${floor.clip}), over 0.1 on ${floor.over_0_1} clip${floor.over_0_1 === 1 ? '' : 's'}`);
  }
  // per clip's peak score (what a wake-word user sees) against float, for every variant
  const frameRe = /cycles per 80 ms frame: melspectrogram (\d+) \+ embedding (\d+) \+ wake word (\d+) = (\d+)/;
  const peakRow = (X, what) => {
    const r = { what, agree: 0, over_0_1: 0, max_peak_diff: 0, mean_peak_diff: 0, clip: '', cycles: null, margin_ms: null };
    for (let i = 0; i < n; i++) {
      const d = Math.abs(F.clips[i].peak - X.clips[i].peak);
      r.agree += yn(F.clips[i].peak) === yn(X.clips[i].peak);
      r.over_0_1 += d > 0.1;
      r.mean_peak_diff += d / n;
      if (d >= r.max_peak_diff) { r.max_peak_diff = d; r.clip = lab[i][0]; }
    }
    const m = frameRe.exec(X.budget || '');
    if (m) { r.cycles = Number(m[4]); r.margin_ms = FRAME_MS - r.cycles / (MHZ * 1e3); }
    return r;
  };
  const peaks = [peakRow(B, 'as is'), peakRow(N, 'as advised'), ...(P ? [peakRow(P, 'as placed')] : []),
                 ...(S ? [peakRow(S, 'as searched')] : []), ...(H ? [peakRow(H, 'fp16 floor')] : [])];
  console.log('');
  console.log(`== per clip's peak score against float (${n} clips, detection at ${THRESHOLD})`);
  console.log('   pipeline       agree   |peak diff|>0.1  max |peak diff|  mean     cycles/frame  margin');
  for (const r of peaks)
    console.log(`   ${r.what.padEnd(14)} ${String(r.agree).padStart(3)}/${n}   ${String(r.over_0_1).padStart(8)}        ` +
                `${r.max_peak_diff.toFixed(4).padStart(7)}          ${r.mean_peak_diff.toFixed(4)}   ` +
                `${r.cycles === null ? '        -' : String(r.cycles).padStart(9)}     ` +
                `${r.margin_ms === null ? '-' : r.margin_ms.toFixed(2) + ' ms'}`);
  if (S)
    for (const [label, f] of [['melspectrogram', melJ.replace(/\/mel\/summary\.json$/, '/mel_searched/summary.json')],
                              ['embedding', embJ.replace(/\/embedding\/summary\.json$/, '/embedding_searched/summary.json')],
                              ['hey_jarvis', wwJ.replace(/\/hey_jarvis\/summary\.json$/, '/hey_jarvis_searched/summary.json')]])
      if (fs.existsSync(f)) say(searchLine(label, f), '   ', '     ');
  if (process.env.PIPELINE_JSON)
    fs.writeFileSync(process.env.PIPELINE_JSON, JSON.stringify({
      peak_table: peaks, agree_searched: S ? peaks.find(r => r.what === 'as searched').agree : null,
      threshold: THRESHOLD, clips: n, agree_npu: agree.N, agree_npu_float_mel: agree.M,
      agree_placed: P ? agree.P : null, max_diff_npu: maxN[0], max_diff_npu_float_mel: maxM[0],
      max_diff_placed: P ? maxP[0] : null, false_accepts: fa, fp16_io_floor: floor, rows }, null, 1));
  say(`max |score difference| over all frames: NPU ${maxN[0].toFixed(4)} (${maxN[1]})` +
      `${P ? `, placed ${maxP[0].toFixed(4)} (${maxP[1]})` : ''}, ` +
      `NPU* ${maxM[0].toFixed(4)} (${maxM[1]})`);
  const bm = /cycles per 80 ms frame: melspectrogram (\d+) \+ embedding (\d+) \+ wake word (\d+) = (\d+)/
    .exec(N.budget || '');
  if (bm) {
    const [mel, emb, ww, all] = bm.slice(1, 5).map(Number), ms = c => c / (MHZ * 1e3);
    say(`NPU cycles per 80 ms frame at ${MHZ} MHz: melspectrogram ${mel} + embedding ${emb} + ` +
                `hey_jarvis ${ww} = ${all} = ${ms(all).toFixed(2)} ms, ${(100 * ms(all) / FRAME_MS).toFixed(1)}% ` +
                `of the frame: real-time margin ${(FRAME_MS - ms(all)).toFixed(2)} ms ` +
                `(NPU*: ${emb + ww} = ${ms(emb + ww).toFixed(2)} ms, margin ${(FRAME_MS - ms(emb + ww)).toFixed(2)} ms)`);
  } else {
    console.log(`NPU budget: ${N.budget || 'not reported'}`);
  }
  const pm = P ? /cycles per 80 ms frame: melspectrogram (\d+) \+ embedding (\d+) \+ wake word (\d+) = (\d+)/
    .exec(P.budget || '') : null;
  if (pm) {
    const [mel, emb, ww, all] = pm.slice(1, 5).map(Number), ms = c => c / (MHZ * 1e3);
    say(`as placed, NPU + CPU cycles per 80 ms frame at ${MHZ} MHz: melspectrogram ${mel} + embedding ${emb} + ` +
        `hey_jarvis ${ww} = ${all} = ${ms(all).toFixed(2)} ms, ${(100 * ms(all) / FRAME_MS).toFixed(1)}% of the ` +
        `frame: real-time margin ${(FRAME_MS - ms(all)).toFixed(2)} ms`);
  }
  // where they disagree: what the bringups name
  if (!dis.length) {
    console.log('NPU and float agree on every clip.');
    return;
  }
  say(`NPU and float disagree on ${dis.length}: ${dis.join(', ')}.`);
  const melOnly = dis.every(c => { const i = lab.findIndex(l => l[0] === c); return yn(F.clips[i].peak) === yn(M.clips[i].peak); });
  if (melOnly)
    say('With the float melspectrogram (NPU*) they agree on all of these: the melspectrogram exeom ' +
        'makes the difference.');
  console.log(`What the bring-ups say (on ${summary(melJ).evaluation.count} inputs from the evaluation clips):`);
  const placedJ = melJ.replace(/\/mel\/summary\.json$/, '/mel_placed/summary.json');
  const melRows = [['melspectrogram', melJ]];
  if (P && fs.existsSync(placedJ)) melRows.push(['melspectrogram as placed (--auto_place)', placedJ]);
  for (const [label, file] of [...melRows, ['embedding', embJ], ['hey_jarvis', wwJ]]) {
    const s = summary(file), o = s.outputs[0], c = s.compare, fo = c.first_over_threshold,
      ld = c.largest_sqnr_drop, cal = s.calibration;
    say(`${label}${s.compile.nb_input_scale ? ` (--nb_input_scale=${s.compile.nb_input_scale})` : ''}: ` +
        `output SQNR mean ${db(o.sqnr_db_mean)}, worst ${db(o.sqnr_db_worst)} against float; ` +
        `the fake-quant model's (${int16Layers(s).length ? `int8, ${int16Layers(s).join(', ')} int16` : 'int8'}, ` +
        `computed in float: no NPU) ${db(cal.output_sqnr_db)}`, '- ', '  ');
    if (fo) say(`compare, first over threshold: ${fo.layer} (${fo.op_type}) at ${db(fo.sqnr_db)}: ${cause(fo.likely_cause)}`, '  ', '    ');
    if (ld && (!fo || ld.layer !== fo.layer))
      say(`largest SQNR drop: ${ld.layer} (${ld.op_type}), ${db(ld.previous_sqnr_db)} -> ${db(ld.sqnr_db)}: ` +
          cause(ld.likely_cause), '  ', '    ');
    if (label.startsWith('melspectrogram')) melSteps(s);
  }
}

// the melspectrogram's quantization steps, from its calibration (the bring-up's log)
function melSteps(s) {
  let cal;
  try {
    cal = JSON.parse(fs.readFileSync(s.out + '/log/2-calibrate.out', 'utf8'));
  } catch (e) {
    return;
  }
  const layer = l => cal.layers.find(x => x.layer === l);
  const a = layer('Conv_2'), p = layer('MatMul_15');
  if (a && p && p.act_bits === 16)
    say(`its steps (calibration): the audio into Conv_2 ${a.scale_d.toPrecision(3)} (int${a.act_bits}), the power spectrum ` +
        `into MatMul_15 ${p.scale_d.toPrecision(3)} (int16: a range of ${(p.scale_d * 65535).toPrecision(3)} in ` +
        `65536 steps): ${(p.zeroed_fraction * 100).toFixed(1)}% of its nonzero values still round to 0`, '  ', '    ');
  else if (a && p)
    say(`its int8 steps (calibration): the audio into Conv_2 ${a.scale_d.toPrecision(3)}, the power spectrum ` +
        `into MatMul_15 ${p.scale_d.toPrecision(3)} (a range of ${(p.scale_d * 255).toPrecision(3)} in 256 ` +
        'steps): the quieter power bins round to 0, a mel bin of only such bins is 0, and its Log -inf', '  ', '    ');
}

const [cmd, ...args] = process.argv.slice(2);
try {
  if (cmd === 'suggest' && args.length === 1) suggest(args[0]);
  else if (cmd === 'suggest-int16' && args.length === 1) suggestInt16(args[0]);
  else if (cmd === 'effect' && args.length >= 2 && args.length <= 4) effect(...args);
  else if (cmd === 'pipeline' && args.length >= 8 && args.length <= 12) pipeline(...args);
  else if (cmd === 'searched-exeom' && args.length === 1) searchedExeom(args[0]);
  else if (cmd === 'fix' && args.length === 1) fix(args[0]);
  else {
    console.error('usage: node report.js suggest SUMMARY.json | suggest-int16 SUMMARY.json |\n' +
                  '       effect A.json B.json [C.json [D.json]] |\n' +
                  '       pipeline LIST FLOAT NPU NPU_FLOAT_MEL NPU_BEFORE MEL.json EMB.json WW.json [NPU_SCALE [PLACED [FLOAT_FP16_IO [SEARCHED]]]]\n' +
                  '       searched-exeom SUMMARY.json\n' +
                  '       fix SUMMARY.json');
    process.exit(2);
  }
} catch (e) {
  console.error('report.js: ' + (e && e.message || e));
  process.exit(1);
}
