// fmte-advise serve's page: forms -> the JSON API (the same code as fmte-advise --json) -> tables
// and bars. No framework, no network beyond this server.
'use strict';

const GiB = 1024 ** 3;
const COLORS = {
  weights: '#2563eb', gradients: '#7c3aed', optimizer: '#db2777', activations: '#ea580c',
  logits: '#ca8a04', other: '#64748b', compute: '#2563eb', communication: '#db2777',
  bubble: '#94a3b8', optimizer_step: '#7c3aed', overhead: '#64748b', offload: '#0d9488',
  reference: '#0f766e',
};
const PLANS_KEY = 'fmte.plans';
let lastEstimate = null;  // {request, result}
let pendingPlan = null;   // ?plan=NAME: save the estimate the query runs under this name
let overrides = null;     // custom mode: the figures the user edited ({gpu: {...}, time: {...}, ...})

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

const gib = (b) => (b / GiB).toFixed(2) + ' GiB';
function secs(s) {
  if (s === undefined || s === null || !isFinite(s)) return '–';
  if (s < 1) return (s * 1000).toFixed(1) + ' ms';
  if (s < 120) return s.toFixed(2) + ' s';
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : `${m} min ${Math.round(s % 60)} s`;
}

// --- API and errors --------------------------------------------------------------------------
async function api(path, body) {
  const opts = body === undefined ? {} :
    {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)};
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    throw {message: `the fmte-advise server does not answer (${e.message}); is it still running?`};
  }
  let json;
  try {
    json = await res.json();
  } catch (e) {
    throw {message: `${path}: the server answered HTTP ${res.status} without JSON`};
  }
  if (!res.ok) throw {message: json.error || `HTTP ${res.status}`, field: json.field};
  return json;
}

function clearError() {
  $('#error').hidden = true;
  $$('.bad').forEach((e) => e.classList.remove('bad'));
}
function showError(err, form) {
  const box = $('#error');
  box.textContent = 'Error: ' + (err.message || String(err));
  box.hidden = false;
  if (err.field && form) {
    const input = form.elements[err.field];
    if (input) { input.classList.add('bad'); input.focus(); }
  }
}

// A form's fields as the API's body: flag names without dashes; empty fields left out (the
// command's defaults apply), numbers as numbers, ticked boxes as true.
function formBody(form) {
  const body = {};
  for (const input of form.elements) {
    if (!input.name || input.type === 'submit' || input.type === 'button') continue;
    if (input.type === 'checkbox') { if (input.checked) body[input.name] = true; continue; }
    const v = input.value.trim();
    if (v === '') continue;
    body[input.name] = input.type === 'number' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  }
  return body;
}

function fillForm(form, values) {
  for (const [k, v] of Object.entries(values)) {
    const input = form.elements[k];
    if (!input) continue;
    if (input.type === 'checkbox') input.checked = v === true || v === 'true' || v === '1';
    else {
      if (input.tagName === 'SELECT' && ![...input.options].some((o) => o.value === String(v)))
        input.append(el('option', {text: String(v)}));
      input.value = v;
    }
  }
}

// --- bars and tables -------------------------------------------------------------------------
function stackedBar(parts, total, capacity) {
  const scale = Math.max(total, capacity || 0) || 1;
  const bar = el('div', {class: 'bar'});
  const legend = el('div', {class: 'legend'});
  for (const [name, value] of parts) {
    if (value <= 0) continue;
    const seg = el('div', {class: 'seg', title: `${name}: ${value}`});
    seg.style.width = (100 * value / scale) + '%';
    seg.style.background = COLORS[name] || '#999';
    bar.append(seg);
    const sw = el('span', {class: 'sw'});
    sw.style.background = COLORS[name] || '#999';
    legend.append(el('span', {}, sw, name));
  }
  if (capacity) {
    const cap = el('div', {class: 'cap', title: 'GPU capacity'});
    cap.style.left = `calc(${100 * capacity / scale}% - 1px)`;
    bar.append(cap);
  }
  return [bar, legend];
}

function table(head, rows, numeric = []) {
  const t = el('table');
  t.append(el('tr', {}, ...head.map((h, i) => el('th', {class: numeric.includes(i) ? 'num' : ''}, h))));
  for (const r of rows)
    t.append(el('tr', {}, ...r.map((c, i) => el('td', {class: numeric.includes(i) ? 'num' : ''}, c))));
  return t;
}

function kv(pairs) {
  const dl = el('dl', {class: 'kv'});
  for (const [k, v] of pairs) dl.append(el('dt', {}, k), el('dd', {}, v));
  return dl;
}

// --- Estimate --------------------------------------------------------------------------------
function renderEstimate(r, target) {
  const m = r.memory;
  target.replaceChildren();
  target.hidden = false;
  target.append(el('p', {class: 'verdict ' + (m.fits ? 'fits' : 'nofit'), id: 'estimate-verdict'},
    m.fits ? `Fits: ${gib(m.per_gpu_bytes)} per GPU of ${gib(m.gpu_capacity_bytes)} on the ${r.gpu.name}`
           : `Does not fit: ${gib(m.per_gpu_bytes)} per GPU, the ${r.gpu.name} has ${gib(m.gpu_capacity_bytes)}`));
  target.append(el('h3', {}, 'Memory of the heaviest GPU'));
  const parts = Object.entries(m.breakdown);
  target.append(...stackedBar(parts, m.per_gpu_bytes, m.gpu_capacity_bytes));
  target.append(table(['part', 'per GPU'], parts.map(([k, v]) => [k, gib(v)]), [1]));
  target.append(kv([
    ['model', `${r.model.id} (${(r.params.total / 1e9).toFixed(2)} B parameters, ${(r.params.trainable / 1e6).toFixed(1)} M trainable)`],
    ['layout', `${r.job.gpus} GPUs on ${r.job.nodes} node(s): tp ${r.job.tp} × pp ${r.job.pp} × cp ${r.job.cp} × dp ${r.job.dp}, ${r.job.sharding}`],
    ['peak phase', m.peak_phase],
    ['range', `${gib(m.low_bytes)} .. ${gib(m.bound_bytes)}`],
    ['host memory per node (offload)', gib(m.cpu_bytes_per_node)],
  ]));
  if (m.ranks && m.ranks.length > 1) {
    target.append(el('h3', {}, 'Ranks (heaviest first in the per-GPU figure)'));
    target.append(table(['stage', 'layers', 'holds', 'per GPU'], m.ranks.map((k) =>
      [k.stage, k.layers, [k.embedding ? 'embedding' : '', k.head ? 'head' : ''].filter(Boolean).join(', '), gib(k.per_gpu_bytes)]), [3]));
  }
  if (m.phases) {
    target.append(el('h3', {}, 'Phases of a step'));
    target.append(table(['phase', 'per GPU'], m.phases.map((p) => [p.name, gib(p.per_gpu_bytes)]), [1]));
  }
  const t = r.time;
  if (t) {
    target.append(el('h3', {}, 'Time'));
    const tparts = Object.entries(t.breakdown).map(([k, v]) => [k === 'optimizer' ? 'optimizer_step' : k, v]);
    target.append(...stackedBar(tparts, t.step_time_s, 0));
    if (r.timeline_svg) {
      // The step schedule per pipeline stage (fmte-advise estimate --timeline), as an image.
      target.append(el('h3', {}, 'Step timeline per pipeline stage'),
        el('img', {id: 'timeline', alt: 'step timeline', src: 'data:image/svg+xml,' + encodeURIComponent(r.timeline_svg)}));
    }
    const pairs = [
      // An online objective (grpo, ppo, ...): the update alone, its generation not modelled.
      [t.generation_modelled === false ? 'update step (generation not modelled)' : 'step time', secs(t.step_time_s)],
      ['tokens/s per GPU', Math.round(t.tokens_per_s_per_gpu).toLocaleString()],
      ['MFU', (100 * t.mfu).toFixed(1) + ' %'],
      ['global batch', `${t.global_batch} sequences, ${t.micro_batches} micro-batches`],
    ];
    if (t.wall_time_s !== undefined) {
      pairs.push(['steps', t.steps.toLocaleString()]);
      pairs.push(['wall time', secs(t.wall_time_s)]);
      pairs.push([`${Math.round(100 * t.time_limit_quantile)}% bound (the time limit)`, secs(t.wall_time_bound_s)]);
      pairs.push(['GPU-hours', (t.wall_time_s * r.job.gpus / 3600).toFixed(1)]);
    }
    pairs.push(['efficiency source', t.efficiency_source]);
    target.append(kv(pairs));
  }
  if (r.figures && target.id === 'estimate-result') target.append(figuresEditor(r.figures));
}

// Custom mode: every figure the estimate used, editable: the GPU's and the cluster's, the bytes per
// element of the memory model, the step-time model's constants and per-layer times. "Recompute"
// sends the edited ones as "overrides" (the object fmte-advise estimate --overrides FILE takes).
const FIGURE_SECTIONS = {
  gpu: 'GPU',
  cluster: 'cluster',
  memory: 'memory: bytes per element',
  time: 'time: step-time model (per-layer times: the heaviest stage, per micro-batch)',
};
function figuresEditor(figures) {
  const box = el('details', {id: 'figures'});
  if (overrides) box.open = true;
  box.append(el('summary', {}, 'Custom: the figures this estimate used (edit and recompute)'));
  for (const [section, title] of Object.entries(FIGURE_SECTIONS)) {
    if (!figures[section]) continue;
    box.append(el('h4', {}, title));
    const grid = el('div', {class: 'grid'});
    for (const [k, v] of Object.entries(figures[section])) {
      const attrs = {'data-section': section, 'data-key': k, name: `${section}.${k}`};
      const input = typeof v === 'boolean'
        ? el('input', Object.assign({type: 'checkbox'}, attrs))
        : el('input', Object.assign({type: 'number', step: 'any'}, attrs));
      if (typeof v === 'boolean') input.checked = v; else input.value = v;
      grid.append(el('label', {}, `${section}.${k}`, input));
    }
    box.append(grid);
  }
  const run = el('button', {type: 'button', id: 'figures-run'}, 'Recompute with these figures');
  const reset = el('button', {type: 'button'}, 'Back to the catalog figures');
  const save = el('a', {id: 'figures-save', download: 'overrides.json', href: '#'}, 'Save as overrides.json');
  // The figures overridden so far, plus those edited now.
  const collect = () => {
    const o = JSON.parse(JSON.stringify(overrides || {}));
    for (const i of $$('input[data-section]', box)) {
      const shown = figures[i.dataset.section][i.dataset.key];
      const value = i.type === 'checkbox' ? i.checked : (i.value === '' ? shown : Number(i.value));
      if (value !== shown) (o[i.dataset.section] = o[i.dataset.section] || {})[i.dataset.key] = value;
    }
    return o;
  };
  run.addEventListener('click', () => { overrides = collect(); runEstimate(); });
  reset.addEventListener('click', () => { overrides = null; runEstimate(); });
  save.addEventListener('click', () => {
    save.href = 'data:application/json,' + encodeURIComponent(JSON.stringify(collect(), null, 2));
  });
  box.append(el('div', {class: 'actions'}, run, reset, save));
  if (overrides) box.append(el('p', {id: 'figures-note'}, 'Overridden: ' + JSON.stringify(overrides)));
  return box;
}

async function runEstimate(ev) {
  if (ev) ev.preventDefault();
  clearError();
  const form = $('#estimate-form');
  const body = formBody(form);
  if (overrides) body.overrides = overrides;
  body.timeline = true;
  const started = performance.now();
  try {
    const r = await api('/api/estimate', body);
    lastEstimate = {request: Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'timeline')), result: r};
    renderEstimate(r, $('#estimate-result'));
    $('#estimate-save').disabled = false;
    if (pendingPlan) {
      $('#plan-name').value = pendingPlan;
      pendingPlan = null;
      savePlan();
    }
    document.body.dataset.apiMs = String(Math.round(performance.now() - started));
  } catch (err) {
    $('#estimate-result').hidden = true;
    showError(err, form);
  }
}

// --- Guide -----------------------------------------------------------------------------------
async function runGuide(ev) {
  if (ev) ev.preventDefault();
  clearError();
  const form = $('#guide-form');
  const body = formBody(form);
  const target = $('#guide-result');
  try {
    const r = await api('/api/recommend', body);
    target.replaceChildren();
    target.hidden = false;
    target.append(el('p', {class: 'verdict ' + (r.feasible_count ? 'fits' : 'nofit')},
      `${r.feasible_count} of ${r.evaluated} layouts fit on ${r.gpu} (global batch ${r.global_batch})`));
    const head = ['GPUs', 'tp', 'pp', 'dp', 'sharding', 'micro-batch', 'accum', 'checkpointing', 'offload', 'per GPU', 'step', 'tokens/s/GPU', 'GPU-h / 1000 steps'];
    const t = table(head, [], [0, 1, 2, 3, 5, 6, 9, 10, 11, 12]);
    for (const c of r.feasible) {
      const row = el('tr', {class: 'pick', title: 'see this layout in Estimate'},
        ...[c.gpus, c.tp, c.pp, c.dp, c.sharding, c.micro_batch, c.grad_accum, c.activation_checkpointing,
          c.offload_params ? 'params+opt' : c.offload_optimizer ? 'optimizer' : '', gib(c.per_gpu_bytes),
          secs(c.step_time_s), Math.round(c.tokens_per_s_per_gpu).toLocaleString(), c.gpu_hours.toFixed(2)]
          .map((v, i) => el('td', {class: [0, 1, 2, 3, 5, 6, 9, 10, 11, 12].includes(i) ? 'num' : ''}, v)));
      row.addEventListener('click', () => {
        const values = {model: body.model, method: body.method || 'full', gpu: body.gpu,
          'seq-len': body['seq-len'] || 2048, precision: body.precision || 'amp-bf16',
          framework: body.framework || 'hf', gpus: c.gpus, tp: c.tp, pp: c.pp,
          'micro-batch': c.micro_batch, 'grad-accum': c.grad_accum, sharding: c.sharding,
          'activation-checkpointing': c.activation_checkpointing,
          'offload-optimizer': c.offload_optimizer, 'offload-params': c.offload_params,
          sp: c.sequence_parallel};
        fillForm($('#estimate-form'), values);
        setMode('estimate');
        runEstimate();
      });
      t.append(row);
    }
    target.append(t);
    if (!r.feasible.length && r.infeasible && r.infeasible.length)
      target.append(el('p', {}, 'Closest misses: ' + r.infeasible.slice(0, 3).map((c) => c.why_not).join('; ')));
  } catch (err) {
    target.hidden = true;
    showError(err, form);
  }
}

// --- Check -----------------------------------------------------------------------------------
function addFileEntry(name = '', text = '') {
  const entry = el('div', {class: 'file-entry'},
    el('input', {placeholder: 'file name as the script names it (ds_config.json, configs/train.yaml)', class: 'file-name'}),
    el('textarea', {rows: '6', spellcheck: 'false', class: 'file-text', placeholder: 'its contents'}));
  $('.file-name', entry).value = name;
  $('.file-text', entry).value = text;
  $('#check-files').append(entry);
}

async function runCheck(ev) {
  if (ev) ev.preventDefault();
  clearError();
  const form = $('#check-form');
  const body = {};
  for (const name of ['script', 'partition', 'gres', 'nodes', 'time']) {
    const v = form.elements[name].value;
    if (v.trim() !== '') body[name] = name === 'script' ? v : v.trim();
  }
  const args = form.elements.args.value.trim();
  if (args) body.args = args.split(/\s+/);
  const files = {};
  for (const entry of $$('.file-entry')) {
    const name = $('.file-name', entry).value.trim();
    if (name) files[name] = $('.file-text', entry).value;
  }
  if (Object.keys(files).length) body.files = files;
  const target = $('#check-result');
  try {
    const d = await api('/api/check', body);
    target.replaceChildren();
    target.hidden = false;
    const untouched = !d.touched;
    target.append(el('p', {class: 'verdict ' + d.decision, id: 'check-verdict'},
      `Decision: ${d.decision}` + (untouched ? ' (untouched: not an LLM training job, or Mode=off)' : '') +
      (d.advise_only ? ' (Mode=advise)' : '') + (d.error ? ' (could not estimate)' : '')));
    if (d.user_message) target.append(el('h3', {}, 'Message to the user'), el('pre', {}, d.user_message));
    if (d.reasons && d.reasons.length) target.append(el('h3', {}, 'Reasons'), el('ul', {}, ...d.reasons.map((x) => el('li', {}, x))));
    if (d.alternatives && d.alternatives.length) {
      target.append(el('h3', {}, 'Alternatives (each re-estimated)'));
      target.append(table(['change', 'per GPU', 'usable', 'fits'], d.alternatives.map((a) =>
        [a.change, gib(a.per_gpu_bytes), gib(a.usable_bytes), a.fits ? 'yes' : 'no']), [1, 2]));
    }
    if (d.request && d.request.sources && d.request.sources.length) {
      target.append(el('h3', {}, 'What fmte read'));
      target.append(table(['key', 'value', 'source', 'where'], d.request.sources.map((s) => [s.key, s.value, s.source, s.origin])));
    }
    if (d.request && d.request.warnings && d.request.warnings.length)
      target.append(el('h3', {}, 'Warnings'), el('ul', {}, ...d.request.warnings.map((x) => el('li', {}, x))));
    if (d.estimate) {
      const box = el('div');
      renderEstimate(d.estimate, box);
      target.append(el('h3', {}, 'The estimate'), box);
    }
    if (d.record) target.append(el('h3', {}, 'Accounting record (AdminComment)'), el('pre', {id: 'check-record'}, d.record));
  } catch (err) {
    target.hidden = true;
    showError(err, form);
  }
}

// --- Measured: a training log beside the prediction --------------------------------------------
// The formats, from the frameworks' own log lines:
//   Megatron-LM (training_log): " iteration 20/ 100 | ... | elapsed time per iteration (ms): 1234.5 |
//     ... | throughput per GPU (TFLOP/s/GPU): 401.2 |" and "... memory (MB) | allocated: ... |
//     max allocated: 30123.4 | reserved: ... | max reserved: 36000.0" (MB = 2^20 bytes)
//   NeMo (Lightning): "train_step_timing in s: 1.23" (or "=1.23")
//   torchtitan (metrics.py): "step: 20  loss: 7.9  memory: 35.12GiB(37.0%)  tps: 6,283  tflops:
//     363.92  mfu: 36.80%" (memory: max reserved; older versions print wps)
//   Hugging Face Trainer: tqdm's "3.00s/it" / "1.50it/s", and "'train_steps_per_second': 0.5"
function median(xs) {
  const v = xs.filter((x) => isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

function parseTrainingLog(text, skip) {
  const out = {format: null, step_s: [], tps: [], tflops: [], reserved: [], allocated: []};
  const num = (x) => Number(String(x).replace(/,/g, ''));
  for (const line of text.split(/\r?\n/)) {
    let m;
    if ((m = line.match(/iteration\s+(\d+)\s*\/\s*\d+\s*\|.*?elapsed time per iteration \(ms\):\s*([\d.]+)/))) {
      out.format = 'Megatron-LM';
      if (num(m[1]) > skip) {
        out.step_s.push(num(m[2]) / 1000);
        const t = line.match(/throughput per GPU \(TFLOP\/s\/GPU\):\s*([\d.]+)/);
        if (t) out.tflops.push(num(t[1]));
      }
    } else if ((m = line.match(/max allocated:\s*([\d.]+).*?max reserved:\s*([\d.]+)/))) {
      out.allocated.push(num(m[1]) * 2 ** 20);
      out.reserved.push(num(m[2]) * 2 ** 20);
    } else if ((m = line.match(/step:\s*(\d+)\s+loss:.*?memory:\s*([\d.]+)GiB.*?(?:tps|wps):\s*([\d,]+)(?:.*?tflops:\s*([\d.]+))?/))) {
      out.format = 'torchtitan';
      out.reserved.push(num(m[2]) * 2 ** 30);
      if (num(m[1]) > skip) {
        out.tps.push(num(m[3]));
        if (m[4]) out.tflops.push(num(m[4]));
      }
    } else if ((m = line.match(/train_step_timing in s[:=]\s*([\d.]+)/))) {
      out.format = out.format || 'NeMo';
      out.step_s.push(num(m[1]));
    } else if ((m = line.match(/'train_steps_per_second':\s*([\d.]+)/))) {
      out.format = out.format || 'Hugging Face Trainer';
      out.trainer_step_s = 1 / num(m[1]);
    } else if ((m = line.match(/(\d+)\/\d+ \[[^\]]*?([\d.]+)(s\/it|it\/s)\]/))) {
      out.format = out.format || 'Hugging Face Trainer';
      if (num(m[1]) > skip) out.step_s.push(m[3] === 's/it' ? num(m[2]) : 1 / num(m[2]));
    }
  }
  // NeMo's lines carry no step number: its first `skip` are dropped by position.
  if (out.format === 'NeMo') out.step_s = out.step_s.slice(skip);
  return out;
}

async function runMeasured(ev) {
  if (ev) ev.preventDefault();
  clearError();
  const form = $('#measured-form');
  const skip = Number(form.elements.skip.value || 0);
  const log = parseTrainingLog(form.elements.log.value, skip);
  const target = $('#measured-result');
  if (!log.format) {
    target.hidden = true;
    showError({message: 'log: no Megatron-LM, NeMo, torchtitan or Hugging Face Trainer step lines found'});
    return;
  }
  let r;
  try {
    const body = formBody($('#estimate-form'));
    if (overrides) body.overrides = overrides;
    r = await api('/api/estimate', body);
  } catch (err) {
    target.hidden = true;
    showError({message: 'the Estimate form: ' + err.message, field: err.field}, $('#estimate-form'));
    return;
  }
  const t = r.time || {};
  const gpus = r.job.gpus;
  const measured = {
    step: median(log.step_s) ?? log.trainer_step_s,
    tps: median(log.tps),
    tflops: median(log.tflops),
    reserved: log.reserved.length ? Math.max(...log.reserved) : undefined,
    allocated: log.allocated.length ? Math.max(...log.allocated) : undefined,
  };
  const predicted = {
    step: t.step_time_s,
    tps: t.tokens_per_s_per_gpu,
    tflops: t.step_time_s ? t.model_flops_per_step / t.step_time_s / gpus / 1e12 : undefined,
    reserved: r.memory.allocator_peak_bytes,
    allocated: r.memory.allocated_peak_bytes,
  };
  const err = (p, m) => (p === undefined || m === undefined) ? '–' : `${p >= m ? '+' : ''}${(100 * (p - m) / m).toFixed(1)} %`;
  const rows = [
    ['step time', secs(measured.step), secs(predicted.step), err(predicted.step, measured.step)],
    ['tokens/s per GPU', measured.tps !== undefined ? Math.round(measured.tps).toLocaleString() : '–',
      predicted.tps !== undefined ? Math.round(predicted.tps).toLocaleString() : '–', err(predicted.tps, measured.tps)],
    ['TFLOP/s per GPU', measured.tflops !== undefined ? measured.tflops.toFixed(1) : '–',
      predicted.tflops !== undefined ? predicted.tflops.toFixed(1) : '–', err(predicted.tflops, measured.tflops)],
    ['peak memory reserved', measured.reserved !== undefined ? gib(measured.reserved) : '–', gib(predicted.reserved), err(predicted.reserved, measured.reserved)],
    ['peak memory allocated', measured.allocated !== undefined ? gib(measured.allocated) : '–', gib(predicted.allocated), err(predicted.allocated, measured.allocated)],
  ];
  target.replaceChildren();
  target.hidden = false;
  const n = Math.max(log.step_s.length, log.tps.length);
  target.append(el('p', {class: 'verdict', id: 'measured-verdict'},
    `${log.format} log: ${n} steps read (first ${skip} skipped), ${r.model.id} on ${gpus} ${r.gpu.name}`));
  target.append(table(['', 'measured', 'fmte predicts', 'fmte error'], rows, [1, 2, 3]));
  if (measured.step && t.breakdown) {
    target.append(el('h3', {}, 'One step, measured and predicted (same scale)'));
    const scale = Math.max(measured.step, t.step_time_s);
    target.append(el('div', {}, 'measured'), stackedBar([['compute', measured.step]], scale, 0)[0]);
    target.append(el('div', {}, 'predicted'), ...stackedBar(Object.entries(t.breakdown).map(([k, v]) => [k === 'optimizer' ? 'optimizer_step' : k, v]), scale, 0));
  }
}

// --- Compare ---------------------------------------------------------------------------------
function loadPlans() {
  try { return JSON.parse(localStorage.getItem(PLANS_KEY) || '[]'); } catch (e) { return []; }
}
function savePlans(plans) { localStorage.setItem(PLANS_KEY, JSON.stringify(plans)); }

function savePlan() {
  if (!lastEstimate) return;
  const r = lastEstimate.result;
  const name = $('#plan-name').value.trim() || `${r.model.id} ${r.job.method}, ${r.job.gpus}× ${r.gpu.name}, mb ${r.job.micro_batch}`;
  const plans = loadPlans().filter((p) => p.name !== name);
  plans.push({name, saved: new Date().toISOString(), request: lastEstimate.request, result: r});
  savePlans(plans);
  renderCompareList();
}

function renderCompareList() {
  const list = $('#compare-list');
  list.replaceChildren();
  const plans = loadPlans();
  if (!plans.length) list.append(el('p', {}, 'No saved plans yet: estimate a job and press "Save as plan".'));
  plans.forEach((p, i) => {
    const box = el('input', {type: 'checkbox', 'data-i': String(i)});
    box.addEventListener('change', renderComparison);
    const del = el('button', {type: 'button'}, 'delete');
    del.addEventListener('click', () => { const all = loadPlans(); all.splice(i, 1); savePlans(all); renderCompareList(); renderComparison(); });
    list.append(el('div', {class: 'plan'}, box, el('span', {}, p.name), del));
  });
}

function renderComparison() {
  const plans = loadPlans();
  const picked = $$('#compare-list input:checked').map((b) => plans[Number(b.dataset.i)]).filter(Boolean);
  const target = $('#compare-result');
  target.replaceChildren();
  if (picked.length < 1) { target.hidden = true; return; }
  target.hidden = false;
  const rows = [
    ['model', (r) => r.model.id], ['method', (r) => r.job.method], ['GPU', (r) => r.gpu.name],
    ['GPUs', (r) => r.job.gpus], ['layout', (r) => `tp ${r.job.tp} pp ${r.job.pp} dp ${r.job.dp} ${r.job.sharding}`],
    ['micro-batch × seq', (r) => `${r.job.micro_batch} × ${r.job.seq_len}`],
    ['memory per GPU', (r) => gib(r.memory.per_gpu_bytes)], ['fits', (r) => r.memory.fits ? 'yes' : 'no'],
    ['step time', (r) => r.time ? secs(r.time.step_time_s) : '–'],
    ['tokens/s per GPU', (r) => r.time ? Math.round(r.time.tokens_per_s_per_gpu).toLocaleString() : '–'],
    ['wall time', (r) => r.time && r.time.wall_time_s !== undefined ? secs(r.time.wall_time_s) : '–'],
    ['GPU-hours', (r) => r.time && r.time.wall_time_s !== undefined ? (r.time.wall_time_s * r.job.gpus / 3600).toFixed(1) : '–'],
  ];
  target.append(table(['', ...picked.map((p) => p.name)], rows.map(([k, f]) => [k, ...picked.map((p) => f(p.result))])));
  target.append(el('h3', {}, 'Memory per GPU'));
  const cap = Math.max(...picked.map((p) => Math.max(p.result.memory.per_gpu_bytes, p.result.memory.gpu_capacity_bytes)));
  for (const p of picked) {
    target.append(el('div', {}, p.name));
    const [bar, legend] = stackedBar(Object.entries(p.result.memory.breakdown), cap, p.result.memory.gpu_capacity_bytes);
    target.append(bar, legend);
  }
  const timed = picked.filter((p) => p.result.timeline_svg);
  if (timed.length) {
    target.append(el('h3', {}, 'Step timelines'));
    for (const p of timed)
      target.append(el('div', {}, p.name), el('img', {class: 'compare-timeline', alt: `${p.name} timeline`,
        src: 'data:image/svg+xml,' + encodeURIComponent(p.result.timeline_svg)}));
  }
}

// --- modes, catalog, start -------------------------------------------------------------------
function setMode(mode) {
  for (const s of $$('.mode')) s.hidden = s.id !== 'mode-' + mode;
  for (const b of $$('.tab')) b.classList.toggle('active', b.dataset.mode === mode);
  if (mode === 'compare') { renderCompareList(); renderComparison(); }
  document.body.dataset.mode = mode;
}

async function loadCatalog() {
  const c = await api('/api/models');
  const list = $('#model-list');
  for (const m of c.models)
    list.append(el('option', {value: m.id, label: `${m.id} (${(m.params / 1e9).toFixed(1)} B)`}));
  for (const sel of $$('.gpu-select')) {
    for (const g of c.gpus) sel.append(el('option', {value: g.name}, `${g.name} (${gib(g.memory_bytes)})`));
    const h100 = c.gpus.find((g) => g.name.startsWith('H100-SXM'));
    if (h100) sel.value = h100.name;
  }
  $('#catalog-info').textContent = `${c.models.length} models, ${c.gpus.length} GPUs in the catalog`;
  document.body.dataset.models = String(c.models.length);
}

// ?mode=estimate&model=...&method=lora&run=1 fills the mode's form (a link to a result);
// &plan=NAME saves the estimate as a plan; ?mode=compare&pick=all ticks every saved plan.
function applyQuery() {
  const q = new URLSearchParams(location.search);
  const mode = q.get('mode') || 'estimate';
  pendingPlan = q.get('plan');
  setMode(mode);
  if (mode === 'compare' && q.get('pick') === 'all') {
    $$('#compare-list input[type=checkbox]').forEach((b) => { b.checked = true; });
    renderComparison();
  }
  const form = $(`#${mode}-form`);
  if (!form) return;
  const values = {};
  for (const [k, v] of q) {
    if (['mode', 'run', 'plan', 'pick'].includes(k)) continue;
    const dot = k.match(/^(gpu|cluster|memory|time)\.(\w+)$/);  // &cluster.inter_node_gbps=25
    if (dot) {
      overrides = overrides || {};
      (overrides[dot[1]] = overrides[dot[1]] || {})[dot[2]] =
          v === 'true' ? true : v === 'false' ? false : Number(v);
    } else values[k] = v;
  }
  fillForm(form, values);
  if (mode === 'measured') fillForm($('#estimate-form'), values);  // the job to predict
  if (q.get('run') === '1') form.requestSubmit();
}

document.addEventListener('DOMContentLoaded', async () => {
  for (const b of $$('.tab')) b.addEventListener('click', () => setMode(b.dataset.mode));
  $('#estimate-form').addEventListener('submit', runEstimate);
  $('#estimate-save').addEventListener('click', savePlan);
  $('#guide-form').addEventListener('submit', runGuide);
  $('#check-form').addEventListener('submit', runCheck);
  $('#check-add-file').addEventListener('click', () => addFileEntry());
  $('#measured-form').addEventListener('submit', runMeasured);
  $('#measured-file').addEventListener('change', async (e) => {
    const f = e.target.files[0];
    if (f) $('#measured-form').elements.log.value = await f.slice(0, 8 << 20).text();
  });
  try {
    await loadCatalog();
  } catch (err) {
    showError(err);
  }
  document.body.dataset.loadMs = String(Math.round(performance.now()));  // page + catalog loaded
  applyQuery();
  document.body.dataset.ready = '1';
});
