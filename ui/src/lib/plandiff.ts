import type { PlanStep } from './ipc';
import { humanizeStepTitle } from './humanize';

/** What changed from one plan generation to the next, in the operator's words. */
export interface PlanDiff {
  added: string[];
  removed: string[];
  changed: Array<{ from: string; to: string }>;
}

const norm = (s: string) => s.trim().toLowerCase().replace(/\s+/g, ' ');
const label = (s: PlanStep) => `${humanizeStepTitle(s.title)}${s.target ? ` (${s.target})` : ''}`;

/**
 * Steps are matched by title first (a step that only moved is unchanged), then what is left
 * is paired by position (a step rewritten in place is "changed"); the rest were added or
 * removed. The write-back step Nomos appends is compared like any other.
 */
export function diffPlans(older: PlanStep[], newer: PlanStep[]): PlanDiff {
  const a = [...older].sort((x, y) => x.seq - y.seq);
  const b = [...newer].sort((x, y) => x.seq - y.seq);
  const usedB = new Set<number>();
  const leftA: PlanStep[] = [];
  const changed: PlanDiff['changed'] = [];
  for (const s of a) {
    const j = b.findIndex((t, k) => !usedB.has(k) && norm(t.title) === norm(s.title));
    if (j < 0) {
      leftA.push(s);
      continue;
    }
    usedB.add(j);
    const t = b[j]!;
    if ((s.target ?? '') !== (t.target ?? '')) changed.push({ from: label(s), to: label(t) });
  }
  const leftB = b.filter((_, k) => !usedB.has(k));
  const removed: string[] = [];
  for (const s of leftA) {
    const j = leftB.findIndex((t) => t.seq === s.seq);
    if (j >= 0) {
      const [t] = leftB.splice(j, 1);
      changed.push({ from: label(s), to: label(t!) });
    } else {
      removed.push(label(s));
    }
  }
  return { added: leftB.map(label), removed, changed };
}
