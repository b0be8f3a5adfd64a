import type { Execution, PlanStep, SessionStatus } from './ipc';
import { STATUS_LABEL } from './runcard';

const FINISHED: SessionStatus[] = ['done', 'partial', 'failed', 'abandoned'];

/**
 * Why a command's approval card can no longer be used, or null while it can. A card is bound
 * to its execution, its plan generation and the session's state.
 */
export function approvalStaleReason(execution: Execution, sessionStatus: SessionStatus, currentGeneration: number): string | null {
  if (execution.status !== 'awaiting_approval') {
    if (execution.status === 'cancelled') return 'No longer waiting: this command was denied or cancelled.';
    if (execution.status === 'queued' || execution.status === 'running') return `No longer waiting: approved, ${STATUS_LABEL[execution.status].toLowerCase()}.`;
    return `No longer waiting: ${STATUS_LABEL[execution.status].toLowerCase()}.`;
  }
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
