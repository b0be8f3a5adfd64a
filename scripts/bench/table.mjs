// The table of `make bench`: every row of DESIGN §14 from what the benches printed in this
// run, never a re-typed number. Inputs: the benches' logs (each figure a
// `BENCH {"id":…,"value":…,"unit":…}` line; the graph bench's readable lines), and criterion's
// own estimates (`<criterion>/<group>/<bench>/new/estimates.json`).
//
//   node scripts/bench/table.mjs --logs DIR --criterion DIR --out DIR [--quick] [--only ui|core]
//
// Prints the Markdown table and writes table.md and table.json into --out. A figure whose
// bench did not run or failed is a row marked "not measured", never left out. The budgets
// below are DESIGN §14's; changing one here is changing the design.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Figures from `BENCH {json}` lines; a later line wins over an earlier one. */
export function parseBenchLines(text) {
  const metrics = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('BENCH {');
    if (at < 0) continue;
    let rec;
    try {
      rec = JSON.parse(line.slice(at + 6));
    } catch {
      continue;
    }
    if (typeof rec.id !== 'string' || typeof rec.value !== 'number' || !Number.isFinite(rec.value)) continue;
    metrics[rec.id] = { value: rec.value, unit: rec.unit ?? '', ...(rec.note ? { note: String(rec.note) } : {}) };
  }
  return metrics;
}

/** The graph bench's readable lines (ui/e2e/bench-graph.mjs prints no BENCH lines). */
export function parseGraphLog(text) {
  const metrics = {};
  const put = (id, value, unit, note) => {
    if (Number.isFinite(value)) metrics[id] = { value, unit, ...(note ? { note } : {}) };
  };
  let m = /graph: (\d+) (\d+) \(nodes edges\)/.exec(text);
  if (m) {
    put('ui.graph.nodes', Number(m[1]), 'count');
    put('ui.graph.edges', Number(m[2]), 'count');
  }
  m = /first render \(slice asked → first frame\): (\d+(?:\.\d+)?) ms/.exec(text);
  const phases = /first render phases \(ms since the slice was asked\): (.*)/.exec(text);
  if (m) put('ui.graph.first_render', Number(m[1]), 'ms', phases ? `phases (ms since asked): ${phases[1].trim()}` : '');
  m = /panning for \d+ ms: (\d+(?:\.\d+)?) fps/.exec(text);
  if (m) {
    const during = /still running after/.test(text) ? 'while the layout worker was still running' : '';
    put('ui.graph.fps', Number(m[1]), 'fps', during);
  }
  m = /reference: bare full-window WebGL page[^:]*: (\d+(?:\.\d+)?) fps/.exec(text);
  if (m) put('ui.graph.reference_fps', Number(m[1]), 'fps');
  m = /layout \(worker\) settled (\d+) ms/.exec(text);
  if (m) put('ui.graph.layout_settled', Number(m[1]), 'ms');
  m = /graph IPC \(graph_slice, [^)]*\): (\d+) ms/.exec(text);
  if (m) put('ui.graph.ipc', Number(m[1]), 'ms');
  return metrics;
}

/** Criterion's mean estimate (ns) of `<group>/<bench>`, or null. */
export function readCriterionMean(dir, path) {
  const file = join(dir, ...path.split('/'), 'new', 'estimates.json');
  if (!existsSync(file)) return null;
  const est = JSON.parse(readFileSync(file, 'utf8'));
  const v = est?.mean?.point_estimate;
  return typeof v === 'number' ? v : null;
}

/** Every figure of a run: the logs' BENCH lines, the graph log, criterion estimates. */
export function collect({ logsDir, criterionDir }) {
  const metrics = {};
  if (logsDir && existsSync(logsDir)) {
    for (const f of readdirSync(logsDir).sort()) {
      if (!f.endsWith('.log')) continue;
      const text = readFileSync(join(logsDir, f), 'utf8');
      Object.assign(metrics, f.startsWith('ui-graph') ? parseGraphLog(text) : parseBenchLines(text));
    }
  }
  if (criterionDir) {
    for (const [id, path] of [
      ['criterion.policy.classify', 'corpus/classify'],
      ['criterion.policy.parse_only', 'corpus/parse_only'],
    ]) {
      const ns = readCriterionMean(criterionDir, path);
      if (ns !== null) metrics[id] = { value: ns / 1000, unit: 'us', note: `criterion mean of ${path}` };
    }
  }
  return metrics;
}

const UNITS = { us: 'µs', ms: 'ms', s: 's', MiB: 'MiB', fps: 'fps', count: '', x: '×' };

export function fmt(value, unit) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  const n = value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const u = UNITS[unit] ?? unit;
  return u ? `${n} ${u}`.replace(' ×', '×') : n;
}

const count = (m, id, fallback) => (m[id] ? Math.round(m[id].value).toLocaleString('en-US') : fallback);

/**
 * The rows of DESIGN §14. Each: figure, budget, measured, reference, ratio, ok (true,
 * false, or null when not measured), note. Values are numbers with units for the JSON.
 */
export function buildRows(m) {
  const v = (id) => (m[id] ? m[id].value : null);
  const have = (...ids) => ids.every((id) => m[id] !== undefined);
  const rows = [];
  const row = (r) => rows.push({ reference: null, ratio: null, note: '', ...r });
  const missing = (figure, budget, ids) => row({ figure, budget, measured: null, ok: null, note: `not measured (no ${ids.filter((i) => !m[i]).join(', ')})` });

  // classify
  {
    const figure = 'classify one command (parse + classify), median per command';
    const budget = '≤ 5 µs; ≤ 2× parse alone';
    const ids = ['policy.classify_median', 'policy.parse_median'];
    if (have(...ids)) {
      const ratio = v(ids[0]) / v(ids[1]);
      row({ figure, budget, measured: [v(ids[0]), 'us'], reference: [v(ids[1]), 'us', 'parse alone'], ratio, ok: v(ids[0]) <= 5 && ratio <= 2 });
    } else missing(figure, budget, ids);
  }
  {
    const figure = 'classify vs parse, whole corpus pass (criterion means)';
    const budget = '≤ 2× parse alone';
    const ids = ['criterion.policy.classify', 'criterion.policy.parse_only'];
    if (have(...ids)) {
      const ratio = v(ids[0]) / v(ids[1]);
      row({ figure, budget, measured: [v(ids[0]), 'us'], reference: [v(ids[1]), 'us', 'parse alone'], ratio, ok: ratio <= 2 });
    } else missing(figure, budget, ids);
  }
  // store
  {
    const figure = 'append a message + audit row, p99 (WAL)';
    const budget = '≤ 250 µs; ≤ 1.5× raw insert';
    const ids = ['store.append.p99', 'store.append.raw_p99'];
    if (have(...ids)) {
      const ratio = v(ids[0]) / v(ids[1]);
      const p50 = have('store.append.p50', 'store.append.raw_p50')
        ? `p50 ${fmt(v('store.append.p50'), 'us')} vs raw ${fmt(v('store.append.raw_p50'), 'us')} (${fmt(v('store.append.p50') / v('store.append.raw_p50'), 'x')})`
        : '';
      row({ figure, budget, measured: [v(ids[0]), 'us'], reference: [v(ids[1]), 'us', 'raw insert, same bytes'], ratio, ok: v(ids[0]) <= 250 && ratio <= 1.5, note: p50 });
    } else missing(figure, budget, ids);
  }
  {
    const n = count(m, 'store.transcript.messages', '10,000');
    const figure = `open a ${n}-message session, store (rows → transcript), median`;
    const budget = '≤ 30 ms';
    const ids = ['store.transcript.p50'];
    if (have(...ids)) {
      row({ figure, budget, measured: [v(ids[0]), 'ms'], ok: v(ids[0]) <= 30, note: m['store.transcript.max'] ? `max ${fmt(v('store.transcript.max'), 'ms')}` : '' });
    } else missing(figure, budget, ids);
  }
  {
    const n = count(m, 'ui.session.messages', '10,000');
    const figure = `open a ${n}-message session in the app, to interactive`;
    const budget = '≤ 300 ms';
    const ids = ['ui.session.interactive'];
    if (have(...ids)) {
      const ipc = m['ui.session.ipc'] ? `; ${m['ui.session.ipc'].note}: ${fmt(v('ui.session.ipc'), 'ms')}` : '';
      row({ figure, budget, measured: [v(ids[0]), 'ms'], ok: v(ids[0]) <= 300, note: `${m[ids[0]].note ?? ''}${ipc}` });
    }
    else missing(figure, budget, ids);
  }
  {
    const n = count(m, 'store.fts.entries', '100,000');
    const figure = `FTS search over ${n} knowledge entries, p95`;
    const budget = '≤ 5 ms';
    const ids = ['store.fts.p95'];
    if (have(...ids)) row({ figure, budget, measured: [v(ids[0]), 'ms'], ok: v(ids[0]) <= 5 });
    else missing(figure, budget, ids);
  }
  {
    const n = count(m, 'store.session_search.messages', '1,000,000');
    const figure = `session search over ${n} messages and command output, p95`;
    const budget = '≤ 20 ms';
    const ids = ['store.session_search.p95'];
    if (have(...ids)) row({ figure, budget, measured: [v(ids[0]), 'ms'], ok: v(ids[0]) <= 20 });
    else missing(figure, budget, ids);
  }
  // agent
  {
    const figure = 'agent overhead per model iteration (scripted model, local `true`)';
    const budget = '≤ 2 ms beyond model + command';
    const ids = ['agent.overhead_per_iteration', 'agent.turn_median', 'agent.reference_median'];
    if (have(...ids)) {
      row({
        figure,
        budget,
        measured: [v(ids[0]), 'ms'],
        reference: [v(ids[2]), 'ms', 'model + command alone, 2 iterations'],
        ratio: v(ids[1]) / v(ids[2]),
        ok: v(ids[0]) <= 2,
        note: `turn median ${fmt(v(ids[1]), 'ms')}; ratio is turn / reference`,
      });
    } else missing(figure, budget, ids);
  }
  // streaming
  {
    const n = count(m, 'ui.stream.deltas', '10,000');
    const figure = `streamed text delta, provider → webview DOM, p95 (${n} deltas)`;
    const budget = '≤ 50 ms';
    const ids = ['ui.stream.p95', 'ui.stream.seen', 'ui.stream.deltas'];
    if (have(...ids)) {
      const all = v('ui.stream.seen') === v('ui.stream.deltas');
      row({
        figure,
        budget,
        measured: [v(ids[0]), 'ms'],
        ok: v(ids[0]) <= 50 && all,
        note: `${count(m, 'ui.stream.seen', '?')} of ${n} seen (${m['ui.stream.deltas'].note ?? ''}); p50 ${fmt(v('ui.stream.p50'), 'ms')}`,
      });
    } else missing(figure, budget, ids);
  }
  {
    const n = count(m, 'ui.stream.deltas', '10,000');
    const figure = `${n} deltas without dropped frames (rAF gaps > 33.4 ms)`;
    const budget = '0 dropped';
    const ids = ['ui.stream.dropped_frames'];
    if (have(...ids)) row({ figure, budget, measured: [v(ids[0]), 'count'], ok: v(ids[0]) === 0, note: m[ids[0]].note ?? '' });
    else missing(figure, budget, ids);
  }
  // cold start
  for (const [what, id] of [
    ['window mapped', 'mapped'],
    ['interactive', 'interactive'],
  ]) {
    const figure = `app cold start to ${what} (release, Xvfb)`;
    const budget = '≤ 1 s; ≤ bare Tauri + 0.5 s';
    const ids = [`ui.start.nomos.${id}`, `ui.start.bare.${id}`];
    if (have(...ids)) {
      const diff = v(ids[0]) - v(ids[1]);
      row({
        figure,
        budget,
        measured: [v(ids[0]), 'ms'],
        reference: [v(ids[1]), 'ms', 'bare Tauri v2 window'],
        ratio: v(ids[0]) / v(ids[1]),
        ok: v(ids[0]) <= 1000 && diff <= 500,
        note: `difference ${fmt(diff, 'ms')}; ${m[ids[0]].note ?? ''}${id === 'interactive' && m[ids[1]].note ? `; bare: ${m[ids[1]].note}` : ''}`,
      });
    } else missing(figure, budget, ids);
  }
  {
    const figure = 'idle memory, PSS of the app + its WebKit processes';
    const budget = '≤ 1.3× bare Tauri';
    const ids = ['ui.idle_pss.nomos', 'ui.idle_pss.bare'];
    if (have(...ids)) {
      const ratio = v(ids[0]) / v(ids[1]);
      row({ figure, budget, measured: [v(ids[0]), 'MiB'], reference: [v(ids[1]), 'MiB', 'bare Tauri v2 window'], ratio, ok: ratio <= 1.3, note: m[ids[0]].note ?? '' });
    } else missing(figure, budget, ids);
  }
  // graph
  {
    const figure = `knowledge graph ${count(m, 'ui.graph.nodes', '5,000')} nodes / ${count(m, 'ui.graph.edges', '15,000')} edges: first render`;
    const budget = '≤ 1 s';
    const ids = ['ui.graph.first_render'];
    if (have(...ids)) {
      const layout = m['ui.graph.layout_settled'] ? `layout worker settled after ${fmt(v('ui.graph.layout_settled'), 'ms')}` : 'layout worker still running when panned';
      const phases = m[ids[0]].note ? `; ${m[ids[0]].note}` : '';
      row({ figure, budget, measured: [v(ids[0]), 'ms'], ok: v(ids[0]) <= 1000, note: `${layout}; graph IPC ${fmt(v('ui.graph.ipc'), 'ms')}${phases}` });
    } else missing(figure, budget, ids);
  }
  {
    const figure = 'knowledge graph: pan (mouse drag) frame rate';
    const budget = '≥ 30 fps';
    const ids = ['ui.graph.fps'];
    if (have(...ids)) {
      // The reference (a bare full-window WebGL page, same webview and window, same run) says
      // what this GL gives at all; the budget stays the absolute frame rate.
      const ref = m['ui.graph.reference_fps'] ? v('ui.graph.reference_fps') : null;
      row({
        figure,
        budget,
        measured: [v(ids[0]), 'fps'],
        ...(ref ? { reference: [ref, 'fps', 'bare full-window WebGL page'], ratio: v(ids[0]) / ref } : {}),
        ok: v(ids[0]) >= 30,
        note: `software GL under Xvfb (a floor)${m[ids[0]].note ? '; ' + m[ids[0]].note : ''}`,
      });
    } else missing(figure, budget, ids);
  }
  // ssh
  {
    const figure = 'second command to the same SSH host (loopback sshd)';
    const budget = '≤ 15% of the first';
    const ids = ['exec.ssh.second', 'exec.ssh.first'];
    if (have(...ids)) {
      const ratio = v(ids[0]) / v(ids[1]);
      row({ figure, budget, measured: [v(ids[0]), 'ms'], reference: [v(ids[1]), 'ms', 'first command'], ratio, ok: ratio <= 0.15 });
    } else missing(figure, budget, ids);
  }
  for (const [form, label] of [
    ['cold', 'fresh connections'],
    ['warm', 'connections open'],
  ]) {
    const figure = `one command fanned out to ${count(m, 'exec.fanout.hosts', '20')} hosts, ${label}`;
    const budget = '≤ 1.5× the slowest single host';
    const ids = [`exec.fanout.${form}`, `exec.fanout.${form}_slowest_single`];
    if (have(...ids)) {
      const ratio = v(ids[0]) / v(ids[1]);
      // Plain ssh on the same hosts in the same run: what this machine allows at all.
      const plain = [`exec.fanout.${form}_plain`, `exec.fanout.${form}_plain_slowest_single`];
      const floor = have(...plain)
        ? `; plain ssh ${(v(plain[0]) / v(plain[1])).toFixed(2)}× its slowest single, Nomos ÷ plain ssh ${(v(ids[0]) / v(plain[0])).toFixed(2)}×`
        : '';
      const cpus = count(m, 'exec.fanout.cpus', '?');
      row({ figure, budget, measured: [v(ids[0]), 'ms'], reference: [v(ids[1]), 'ms', 'slowest single host'], ratio, ok: ratio <= 1.5, note: `20 loopback addresses of 2 sshd, ${cpus} CPUs${floor}` });
    } else missing(figure, budget, ids);
  }
  // a request that never completes
  for (const [form, label] of [
    ['keepalive', 'endless keep-alives'],
    ['silent', 'a silent server'],
  ]) {
    const figure = `a model request that never completes (${label}), to a clear error`;
    const budget = '≤ 5 min';
    const ids = [`agent.deadline.${form}`, 'agent.deadline.default', 'agent.deadline.reduced', `agent.deadline.${form}.clear_error`];
    if (have(...ids)) {
      const took = v(ids[0]);
      const reduced = v('agent.deadline.reduced');
      const dflt = v('agent.deadline.default');
      const overshoot = took - reduced;
      const projected = dflt + Math.max(0, overshoot);
      const code = m[`agent.deadline.${form}.code`]?.note ?? '?';
      const clear = v(ids[3]) === 1;
      row({
        figure,
        budget,
        measured: [took, 's'],
        reference: [reduced, 's', 'request deadline, reduced for the bench'],
        ok: clear && dflt <= 300 && overshoot <= 1,
        note: `error ${code}; configured default deadline ${fmt(dflt, 's')}, so ≈ ${fmt(projected, 's')} with defaults (within budget = a clear error no later than 1 s past the deadline, and the default deadline ≤ 5 min)`,
      });
    } else missing(figure, budget, ids);
  }
  for (const r of rows) r.face = UI_FIGURE.test(r.figure) ? 'ui' : 'core';
  return rows;
}

/** The rows `make bench-ui` measures (the app under Xvfb); the others are the core's. */
const UI_FIGURE = /in the app|webview|deltas without|cold start|PSS|knowledge graph/;

function cell(x) {
  if (!x) return '—';
  const [value, unit, label] = x;
  return label ? `${fmt(value, unit)} (${label})` : fmt(value, unit);
}

export function renderMarkdown(rows, { quick = false, when = new Date().toISOString(), load = '' } = {}) {
  const head = '| figure | budget | measured | reference (same run) | ratio | within budget |\n|---|---|---|---|---|---|';
  const body = rows.map((r) => {
    const ok = r.ok === null ? 'no (not measured)' : r.ok ? 'yes' : 'no';
    const measured = r.measured ? cell(r.measured) : '—';
    const ratio = r.ratio === null || r.ratio === undefined ? '—' : fmt(r.ratio, 'x');
    const note = r.note ? ` — ${r.note}` : '';
    return `| ${r.figure}${note} | ${r.budget} | ${measured} | ${cell(r.reference)} | ${ratio} | ${ok} |`;
  });
  const within = rows.filter((r) => r.ok === true).length;
  const title = `## DESIGN §14 benchmarks — ${when}${quick ? ' (BENCH_QUICK: short form, smaller samples)' : ''}`;
  const summary = `${within} of ${rows.length} figures within budget${load ? `; load at the end: ${load}` : ''}`;
  return [title, '', head, ...body, '', summary, ''].join('\n');
}

export function toJson(rows, metrics, meta) {
  return {
    ...meta,
    rows: rows.map((r) => ({
      figure: r.figure,
      budget: r.budget,
      measured: r.measured ? { value: r.measured[0], unit: r.measured[1] } : null,
      reference: r.reference ? { value: r.reference[0], unit: r.reference[1], what: r.reference[2] } : null,
      ratio: r.ratio,
      within_budget: r.ok,
      note: r.note,
    })),
    metrics,
  };
}

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--quick') out.quick = true;
    else if (argv[i].startsWith('--')) out[argv[i].slice(2)] = argv[++i];
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const a = args(process.argv.slice(2));
  const metrics = collect({ logsDir: a.logs, criterionDir: a.criterion });
  const rows = buildRows(metrics).filter((r) => !a.only || r.face === a.only);
  const meta = { when: new Date().toISOString(), quick: Boolean(a.quick), load: a.load ?? '' };
  const md = renderMarkdown(rows, meta);
  process.stdout.write(md);
  if (a.out) {
    mkdirSync(a.out, { recursive: true });
    writeFileSync(join(a.out, 'table.md'), md);
    writeFileSync(join(a.out, 'table.json'), JSON.stringify(toJson(rows, metrics, meta), null, 2) + '\n');
  }
}
