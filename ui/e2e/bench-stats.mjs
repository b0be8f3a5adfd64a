// Figures of the UI benchmarks (bench-ui.mjs), kept apart so they are unit-tested
// (scripts/bench/stats.test.mjs): percentiles, delta latencies, dropped frames, and the PSS
// of a process tree read from /proc.
import { readFileSync, readdirSync } from 'node:fs';

/** The value at fraction `p` (0..1) of `values`, nearest rank; NaN for none. */
export function percentile(values, p) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const i = Math.min(v.length - 1, Math.max(0, Math.ceil(p * v.length) - 1));
  return v[i];
}

export function median(values) {
  return percentile(values, 0.5);
}

/**
 * Send → seen latencies of deltas. `sent[i]` and `seen[i]` are epoch milliseconds on the
 * same clock; a delta never seen (0) is counted as missing, not as fast.
 */
export function deltaLatencies(sent, seen) {
  const lat = [];
  let missing = 0;
  for (let i = 0; i < sent.length; i++) {
    if (sent[i] > 0 && seen[i] > 0) lat.push(Math.max(0, seen[i] - sent[i]));
    else missing++;
  }
  return {
    count: lat.length,
    missing,
    p50: percentile(lat, 0.5),
    p95: percentile(lat, 0.95),
    max: lat.length ? Math.max(...lat) : Number.NaN,
  };
}

/** Gaps between consecutive animation frames longer than two 60 Hz frames (33.4 ms). */
export function droppedFrames(frameTimes, frameMs = 1000 / 60) {
  let dropped = 0;
  let longest = 0;
  for (let i = 1; i < frameTimes.length; i++) {
    const gap = frameTimes[i] - frameTimes[i - 1];
    longest = Math.max(longest, gap);
    if (gap > 2 * frameMs) dropped++;
  }
  return { dropped, longest };
}

/**
 * The frames that cover [start, end]: from the last frame at or before `start` to the first
 * at or after `end`, so a main thread blocked across the whole window still shows as one
 * long gap (frames inside the window alone would hide it).
 */
export function framesCovering(frameTimes, start, end) {
  const sorted = [...frameTimes].sort((a, b) => a - b);
  let from = 0;
  for (let i = 0; i < sorted.length; i++) if (sorted[i] <= start) from = i;
  let to = sorted.length - 1;
  for (let i = sorted.length - 1; i >= 0; i--) if (sorted[i] >= end) to = i;
  return sorted.slice(from, to + 1);
}

/** `Pss:` of an smaps_rollup text, in KiB. */
export function parsePss(smapsRollup) {
  const m = /^Pss:\s+(\d+) kB/m.exec(smapsRollup);
  if (!m) throw new Error('no Pss line in smaps_rollup');
  return Number(m[1]);
}

/** Every descendant of `root` (and `root`) given a pid → parent pid map. */
export function treeOf(root, parents) {
  const children = new Map();
  for (const [pid, ppid] of parents) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const out = [];
  const todo = [root];
  while (todo.length) {
    const pid = todo.pop();
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** The parent pid and name of a /proc/PID/stat line (the name may hold spaces and parens). */
export function parseStat(stat) {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return { name: stat.slice(open + 1, close), ppid: Number(fields[1]) };
}

/** PSS summed over `root` and its descendants, from /proc. */
export function pssOfTree(root) {
  const parents = new Map();
  const names = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { name, ppid } = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      parents.set(Number(entry), ppid);
      names.set(Number(entry), name);
    } catch {
      // Gone meanwhile.
    }
  }
  let kib = 0;
  const processes = [];
  for (const pid of treeOf(root, parents)) {
    try {
      const pss = parsePss(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      kib += pss;
      processes.push({ pid, name: names.get(pid) ?? '?', kib: pss });
    } catch {
      // Gone meanwhile.
    }
  }
  if (processes.length === 0) throw new Error(`process ${root} is gone: no PSS to read`);
  return { kib, processes };
}
