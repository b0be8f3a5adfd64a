// Unit tests of the `make bench` table maker and the UI bench's figures (run by
// scripts/test.sh through `node --test scripts/bench/`): no benchmark runs here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRows, collect, fmt, parseBenchLines, parseGraphLog, readCriterionMean, renderMarkdown, toJson } from './table.mjs';
import { deltaLatencies, droppedFrames, framesCovering, parsePss, parseStat, percentile, treeOf } from '../../ui/e2e/bench-stats.mjs';

const line = (id, value, unit = 'ms', note) => `BENCH ${JSON.stringify({ id, value, unit, ...(note ? { note } : {}) })}`;

/** A run where every figure is measured and sits exactly on its budget. */
function onBudget() {
  return parseBenchLines(
    [
      line('policy.classify_median', 5, 'us'),
      line('policy.parse_median', 2.5, 'us'),
      line('criterion.policy.classify', 20, 'us'),
      line('criterion.policy.parse_only', 10, 'us'),
      line('store.append.p99', 250, 'us'),
      line('store.append.raw_p99', 250 / 1.5, 'us'),
      line('store.transcript.messages', 10000, 'count'),
      line('store.transcript.p50', 30),
      line('ui.session.messages', 10000, 'count'),
      line('ui.session.interactive', 300),
      line('store.fts.entries', 100000, 'count'),
      line('store.fts.p95', 5),
      line('store.session_search.messages', 1000000, 'count'),
      line('store.session_search.p95', 20),
      line('agent.overhead_per_iteration', 2),
      line('agent.turn_median', 14),
      line('agent.reference_median', 10),
      line('ui.stream.deltas', 10000, 'count'),
      line('ui.stream.seen', 10000, 'count'),
      line('ui.stream.p95', 50),
      line('ui.stream.p50', 10),
      line('ui.stream.dropped_frames', 0, 'count'),
      line('ui.start.nomos.mapped', 900),
      line('ui.start.bare.mapped', 400),
      line('ui.start.nomos.interactive', 1000),
      line('ui.start.bare.interactive', 500),
      line('ui.idle_pss.nomos', 260, 'MiB'),
      line('ui.idle_pss.bare', 200, 'MiB'),
      line('exec.ssh.first', 100),
      line('exec.ssh.second', 15),
      line('exec.fanout.hosts', 20, 'count'),
      line('exec.fanout.cold', 150),
      line('exec.fanout.cold_slowest_single', 100),
      line('exec.fanout.warm', 30),
      line('exec.fanout.warm_slowest_single', 20),
      line('agent.deadline.default', 300, 's'),
      line('agent.deadline.reduced', 3, 's'),
      line('agent.deadline.keepalive', 4, 's'),
      line('agent.deadline.keepalive.clear_error', 1, 'bool'),
      line('agent.deadline.silent', 3.2, 's'),
      line('agent.deadline.silent.clear_error', 1, 'bool'),
    ].join('\n'),
  );
}

function withGraph(metrics, firstRender = 1000, fps = 30) {
  return {
    ...metrics,
    ...parseGraphLog(
      `graph: 5000 15000 (nodes edges)\ngraph IPC (graph_slice, 5000 15000): 80 ms\n` +
        `layout (worker) settled 900 ms after the first render was seen\n` +
        `first render (slice asked → first frame): ${firstRender} ms (budget 1000 ms)\n` +
        `first render phases (ms since the slice was asked): sigma 60, ipc 150, decode 160, build 230, render 520, frame 540\n` +
        `reference: bare full-window WebGL page (clear + one triangle, 1280x800 px): 12.5 fps over 26 frames\n` +
        `panning for 2100 ms: ${fps} fps over 70 frames, p95 frame gap 20.0 ms (2.40× the bare WebGL page) (budget ≥ 30 fps)\n`,
    ),
  };
}

test('every row of DESIGN §14 is in the table, measured or marked not measured', () => {
  const empty = buildRows({});
  const full = buildRows(withGraph(onBudget()));
  assert.equal(empty.length, full.length);
  assert.ok(empty.length >= 20, `rows: ${empty.length}`);
  for (const r of empty) {
    assert.equal(r.ok, null, r.figure);
    assert.match(r.note, /^not measured \(no /, r.figure);
  }
  const md = renderMarkdown(empty);
  assert.equal((md.match(/no \(not measured\)/g) ?? []).length, empty.length);
  for (const needle of ['classify', 'append', 'session', 'FTS', 'overhead', 'delta', 'cold start', 'PSS', 'graph', 'SSH', 'fanned out', 'never completes']) {
    assert.ok(full.some((r) => r.figure.includes(needle)), needle);
  }
});

test('a figure exactly on its budget is within it; every row just past it is not', () => {
  const rows = buildRows(withGraph(onBudget()));
  for (const r of rows) assert.equal(r.ok, true, `${r.figure}: ${r.note}`);
  // Push each input past its budget in turn: the row it feeds (and only a row) flips.
  const worse = {
    'policy.classify_median': 5.01,
    'criterion.policy.classify': 20.1,
    'store.append.p99': 251,
    'store.append.raw_p99': 160,
    'store.transcript.p50': 30.1,
    'ui.session.interactive': 301,
    'store.fts.p95': 5.01,
    'store.session_search.p95': 20.1,
    'agent.overhead_per_iteration': 2.01,
    'ui.stream.p95': 50.1,
    'ui.stream.seen': 9999,
    'ui.stream.dropped_frames': 1,
    'ui.start.nomos.mapped': 901,
    'ui.start.nomos.interactive': 1001,
    'ui.start.bare.interactive': 499,
    'ui.idle_pss.nomos': 260.1,
    'exec.ssh.second': 15.1,
    'exec.fanout.cold': 150.1,
    'exec.fanout.warm_slowest_single': 19.9,
    'agent.deadline.keepalive': 4.01,
    'agent.deadline.silent.clear_error': 0,
    'agent.deadline.default': 301,
  };
  for (const [id, value] of Object.entries(worse)) {
    const m = withGraph(onBudget());
    m[id] = { ...m[id], value };
    const failed = buildRows(m).filter((r) => r.ok === false);
    assert.ok(failed.length >= 1, `${id} = ${value} should put a row over budget`);
  }
  for (const [firstRender, fps] of [
    [1001, 30],
    [1000, 29.9],
  ]) {
    const failed = buildRows(withGraph(onBudget(), firstRender, fps)).filter((r) => r.ok === false);
    assert.equal(failed.length, 1, `graph ${firstRender} ms / ${fps} fps`);
  }
});

test('ratios and references come from the same run', () => {
  const rows = buildRows(withGraph(onBudget()));
  const append = rows.find((r) => r.figure.startsWith('append'));
  assert.ok(Math.abs(append.ratio - 1.5) < 1e-9);
  assert.equal(append.reference[2], 'raw insert, same bytes');
  const pss = rows.find((r) => r.figure.includes('PSS'));
  assert.equal(pss.ratio, 1.3);
  const start = rows.find((r) => r.figure.includes('cold start to interactive'));
  assert.equal(start.ratio, 2);
  assert.match(start.note, /difference 500 ms/);
  const ssh = rows.find((r) => r.figure.includes('SSH'));
  assert.equal(ssh.ratio, 0.15);
  const first = rows.find((r) => r.figure.includes('first render'));
  assert.match(first.note, /phases \(ms since asked\): sigma 60, ipc 150, decode 160, build 230, render 520, frame 540$/);
  const pan = rows.find((r) => r.figure.includes('pan (mouse drag)'));
  assert.deepEqual(pan.reference, [12.5, 'fps', 'bare full-window WebGL page']);
  assert.equal(pan.ratio, 30 / 12.5);
  const deadline = rows.find((r) => r.figure.includes('keep-alives'));
  assert.match(deadline.note, /configured default deadline 300 s/);
  assert.match(deadline.note, /≈ 301 s with defaults/);
});

test('BENCH lines: malformed, non-numeric and foreign lines are ignored; the last one wins', () => {
  const m = parseBenchLines(
    [
      'Running benches/store.rs',
      'BENCH {"id":"a","value":1,"unit":"ms"}',
      'BENCH {"id":"a","value":2,"unit":"ms"}',
      'BENCH {"id":"b","value":"3"}',
      'BENCH {"id":"c","value":null}',
      'BENCH {not json',
      'BENCHMARK {"id":"d","value":1}',
      '   test output BENCH {"id":"e","value":4.5,"unit":"us","note":"x"}',
      'BENCH {"value":9}',
    ].join('\n'),
  );
  assert.deepEqual(m, { a: { value: 2, unit: 'ms' }, e: { value: 4.5, unit: 'us', note: 'x' } });
});

test('the graph log: a layout still running is kept as a note, a missing line is no figure', () => {
  const m = parseGraphLog(
    'graph: 5000 15000 (nodes edges)\nlayout (worker) still running after 180 s: panning measured during the layout\n' +
      'panning for 2000 ms: 41.5 fps over 84 frames, p95 frame gap 30.1 ms (budget ≥ 30 fps)\n',
  );
  assert.equal(m['ui.graph.fps'].value, 41.5);
  assert.match(m['ui.graph.fps'].note, /still running/);
  assert.equal(m['ui.graph.first_render'], undefined);
  assert.equal(m['ui.graph.layout_settled'], undefined);
  // No reference line (WebGL unavailable, or an older log): the row has no ratio, still a figure.
  assert.equal(m['ui.graph.reference_fps'], undefined);
  const pan = buildRows(m).find((r) => r.figure.includes('pan (mouse drag)'));
  assert.equal(pan.reference, null);
  assert.equal(pan.ratio, null);
  assert.equal(pan.ok, true);
});

test('criterion estimates are read from criterion\'s own files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-table-'));
  const put = (path, ns) => {
    mkdirSync(join(dir, ...path.split('/'), 'new'), { recursive: true });
    writeFileSync(join(dir, ...path.split('/'), 'new', 'estimates.json'), JSON.stringify({ mean: { point_estimate: ns } }));
  };
  put('corpus/classify', 3000);
  put('corpus/parse_only', 2000);
  assert.equal(readCriterionMean(dir, 'corpus/classify'), 3000);
  assert.equal(readCriterionMean(dir, 'corpus/missing'), null);
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  writeFileSync(join(logs, 'policy.log'), `${line('policy.classify_median', 2, 'us')}\n`);
  writeFileSync(join(logs, 'ui-graph.log'), 'first render (slice asked → first frame): 700 ms (budget 1000 ms)\n');
  const m = collect({ logsDir: logs, criterionDir: dir });
  assert.equal(m['criterion.policy.classify'].value, 3);
  assert.equal(m['ui.graph.first_render'].value, 700);
  const row = buildRows(m).find((r) => r.figure.includes('whole corpus'));
  assert.equal(row.ratio, 1.5);
  assert.equal(row.ok, true);
  const json = toJson(buildRows(m), m, { quick: true });
  assert.equal(json.rows.length, buildRows({}).length);
  assert.equal(json.quick, true);
});

test('numbers are printed with their unit and sensible precision', () => {
  assert.equal(fmt(2.3456, 'us'), '2.35 µs');
  assert.equal(fmt(23.456, 'ms'), '23.5 ms');
  assert.equal(fmt(1234.5, 'ms'), '1,235 ms');
  assert.equal(fmt(1.25, 'x'), '1.25×');
  assert.equal(fmt(Number.NaN, 'ms'), '—');
  assert.equal(fmt(null, 'ms'), '—');
});

test('percentiles use the nearest rank and ignore non-numbers', () => {
  const v = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.equal(percentile(v, 0.95), 95);
  assert.equal(percentile(v, 0.5), 50);
  assert.equal(percentile([7], 0.95), 7);
  assert.ok(Number.isNaN(percentile([], 0.5)));
  assert.equal(percentile([1, Number.NaN, 3], 1), 3);
});

test('a delta never seen in the DOM counts as missing, never as fast', () => {
  const sent = [1000, 1001, 1002, 1003];
  const seen = [1010, 0, 1032, 1005];
  const lat = deltaLatencies(sent, seen);
  assert.equal(lat.count, 3);
  assert.equal(lat.missing, 1);
  assert.equal(lat.max, 30);
  assert.equal(lat.p50, 10);
});

test('dropped frames: gaps over two 60 Hz frames', () => {
  assert.deepEqual(droppedFrames([0, 16.7, 33.4, 50]), { dropped: 0, longest: 16.7 });
  const d = droppedFrames([0, 33.3, 67, 100, 200]);
  assert.equal(d.dropped, 2);
  assert.equal(d.longest, 100);
  assert.equal(droppedFrames([]).dropped, 0);
});

test('/proc parsing: names with spaces and parentheses, the whole process tree, PSS', () => {
  assert.deepEqual(parseStat('42 (Web Content (x)) S 7 42 42 0 -1'), { name: 'Web Content (x)', ppid: 7 });
  const parents = new Map([
    [10, 1],
    [11, 10],
    [12, 11],
    [13, 10],
    [20, 1],
  ]);
  assert.deepEqual(treeOf(10, parents).sort(), [10, 11, 12, 13]);
  assert.equal(parsePss('Rss:  100 kB\nPss:   2048 kB\nPss_Anon: 10 kB\n'), 2048);
  assert.throws(() => parsePss('Rss: 1 kB\n'), /no Pss/);
});

test('rows are split into the app (bench-ui) and the core faces', () => {
  const rows = buildRows({});
  const ui = rows.filter((r) => r.face === 'ui').map((r) => r.figure);
  assert.equal(ui.length, 8, ui.join('\n'));
  assert.ok(ui.every((f) => !/store|SSH|agent overhead|FTS|classify/.test(f)), ui.join('\n'));
  assert.equal(rows.filter((r) => r.face === 'core').length, rows.length - 8);
});

test('a main thread blocked across the whole stream is one long gap, not zero drops', () => {
  const frames = [0, 16, 32, 48, 4000, 4016];
  const covering = framesCovering(frames, 100, 3900);
  assert.deepEqual(covering, [48, 4000]);
  assert.equal(droppedFrames(covering).dropped, 1);
  assert.deepEqual(framesCovering(frames, 10, 40), [0, 16, 32, 48]);
  assert.deepEqual(framesCovering([5, 1, 3], 2, 2), [1, 3]);
  assert.deepEqual(framesCovering([], 0, 1), []);
});
