// The plan-steps × targets matrix as rows of cells, ready to render.
import type { ExecutionMatrixView, MatrixCellView, MatrixStepView } from '../ipc';

export interface MatrixRow {
  step: MatrixStepView;
  cells: (MatrixCellView | null)[];
}

export function matrixRows(m: ExecutionMatrixView): MatrixRow[] {
  const byKey = new Map<string, MatrixCellView>();
  for (const c of m.cells) byKey.set(`${c.plan_step_id ?? 'none'}\u0000${c.target}`, c);
  return m.steps.map((step) => ({
    step,
    cells: m.targets.map((t) => byKey.get(`${step.id ?? 'none'}\u0000${t}`) ?? null),
  }));
}

/** The short text of a cell: `✓ 2`, `✗ 1`, `2 runs: 1 ✓ 1 ✗`. */
export function cellText(c: MatrixCellView | null): string {
  if (!c) return '';
  if (c.runs === 1) return c.succeeded ? '✓' : c.failed ? '✗' : c.last_outcome === 'cancelled' ? '⊘' : '…';
  return `${c.runs}× ${c.succeeded}✓ ${c.failed}✗`;
}
