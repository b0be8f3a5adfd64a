import type { Execution, PlanStep, SessionStatus } from './ipc';
import { STATUS_LABEL, formatDuration } from './runcard';

const FINISHED: SessionStatus[] = ['done', 'partial', 'failed', 'abandoned'];

const APPROVED_BY: Record<NonNullable<Execution['approval']>, string> = {
  operator_button: 'you approved it',
  chat_approval: 'you approved it in the chat',
  window: "approved by the plan's approval window",
  not_needed: 'it needed no approval',
};

/** The reason a denial stores when the operator gave none, and the one a cancel stores. */
const NO_REASON = ['denied by the operator', 'cancelled'];

/**
 * What became of a command once it stopped waiting, as its card says it: who decided and the
 * result (exit code and duration), or the denial with the operator's reason. A command that
 * never ran has no approval recorded.
 */
function decision(execution: Execution): string {
  const { status, error } = execution;
  if (execution.approval === null && status === 'cancelled') {
    if (error === 'cancelled') return 'cancelled before it ran.';
    return error && !NO_REASON.includes(error) ? `denied — “${error}”. It did not run.` : 'denied. It did not run.';
  }
  // A command past its card ran because it was approved, even before the record says by whom.
  const who = execution.approval === null ? 'approved' : APPROVED_BY[execution.approval];
  const took = execution.duration_ms !== null ? ` in ${formatDuration(execution.duration_ms)}` : '';
  const exit = execution.exit_code !== null ? `exit ${execution.exit_code}` : null;
  switch (status) {
    case 'queued':
    case 'running':
      return `${who}; ${STATUS_LABEL[status].toLowerCase()}.`;
    case 'finished':
      return `${who}; finished, ${exit ?? 'no exit code'}${took}.`;
    case 'failed':
      return `${who}; failed${exit ? `, ${exit}` : ''}${error ? ` — ${error}` : ''}.`;
    case 'timed_out':
      return `${who}; timed out${took}.`;
    case 'cancelled':
      return `${who}; then cancelled${error && !NO_REASON.includes(error) ? ` — ${error}` : ''}.`;
    default:
      return `${who}; ${STATUS_LABEL[status].toLowerCase()}.`;
  }
}

/**
 * Why a command's approval card can no longer be used, or null while it can. A card is bound
 * to its execution, its plan generation and the session's state.
 */
export function approvalStaleReason(execution: Execution, sessionStatus: SessionStatus, currentGeneration: number): string | null {
  if (execution.status !== 'awaiting_approval') return `No longer waiting: ${decision(execution)}`;
  if (FINISHED.includes(sessionStatus)) return 'The session has ended: this command can no longer be approved.';
  if (execution.generation !== null && currentGeneration > execution.generation) {
    return `The plan changed to v${currentGeneration}: this command belonged to v${execution.generation} and can no longer be approved.`;
  }
  return null;
}

/** The plan generations in a session, newest first, each with its steps in order. */
export function generationsOf(plan: PlanStep[]): Array<[number, PlanStep[]]> {
  const byGen = new Map<number, PlanStep[]>();
  for (const step of plan) {
    const list = byGen.get(step.generation) ?? [];
    list.push(step);
    byGen.set(step.generation, list);
  }
  for (const list of byGen.values()) list.sort((a, b) => a.seq - b.seq);
  return [...byGen.entries()].sort((a, b) => b[0] - a[0]);
}

export function currentGenerationOf(plan: PlanStep[]): number {
  return plan.reduce((max, s) => Math.max(max, s.generation), 0);
}

/**
 * Why the plan approval card of `generation` can no longer be used, or null while it can:
 * a newer plan replaced it, it was approved, or the session moved on.
 */
export function planApprovalStaleReason(
  generation: number,
  plan: PlanStep[],
  sessionStatus: SessionStatus,
  approvalOpen: boolean,
): string | null {
  const current = currentGenerationOf(plan);
  if (current > generation) return `Plan v${generation} was replaced by v${current}: approve the new plan instead.`;
  if (FINISHED.includes(sessionStatus)) return 'The session has ended: this plan can no longer be approved.';
  if (approvalOpen || sessionStatus === 'executing') return `Plan v${generation} is approved.`;
  const steps = plan.filter((s) => s.generation === generation);
  if (!steps.some((s) => s.status === 'pending' || s.status === 'running')) return `Plan v${generation} has nothing left to approve.`;
  return null;
}
