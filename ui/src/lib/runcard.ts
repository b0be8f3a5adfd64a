import type { CommandClass, ExecStatus, Execution } from './ipc';

/** What a command card shows about a run, computed without the DOM. */

export const CLASS_LABEL: Record<CommandClass, string> = {
  read_only: 'read-only',
  config_mutation: 'config change',
  destructive: 'destructive',
};

export const STATUS_LABEL: Record<ExecStatus, string> = {
  queued: 'Queued',
  awaiting_approval: 'Waiting for your approval',
  running: 'Running',
  finished: 'Finished',
  failed: 'Failed',
  cancelled: 'Cancelled',
  timed_out: 'Timed out',
};

/** Statuses whose clock is still going. */
export function isLive(status: ExecStatus): boolean {
  return status === 'queued' || status === 'running' || status === 'awaiting_approval';
}

/** Whether the run went wrong: the card opens by itself then. */
export function failed(execution: Execution): boolean {
  return (
    execution.status === 'failed' ||
    execution.status === 'timed_out' ||
    (execution.exit_code !== null && execution.exit_code !== 0)
  );
}

/** A card opens by default when the run failed or waits for the operator. */
export function opensByDefault(execution: Execution | undefined): boolean {
  return !!execution && (failed(execution) || execution.status === 'awaiting_approval');
}

/** "850 ms", "4.2 s", "3 min 05 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const total = Math.floor(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  return `${m} min ${String(sec).padStart(2, '0')} s`;
}

/** A piece of captured output: text, or the place where the core cut bytes. */
export type OutputPiece = { kind: 'text'; text: string } | { kind: 'cut'; bytes: number };

// The markers the core writes where it capped output (exec output and stored tool results).
const CUT = /\n?(?:\[… (\d+) bytes truncated …\]|…\[truncated (\d+) bytes\]…)\n?/g;

export function splitOutput(text: string): OutputPiece[] {
  const pieces: OutputPiece[] = [];
  let last = 0;
  for (const m of text.matchAll(CUT)) {
    if (m.index > last) pieces.push({ kind: 'text', text: text.slice(last, m.index) });
    pieces.push({ kind: 'cut', bytes: Number(m[1] ?? m[2]) });
    last = m.index + m[0].length;
  }
  if (last < text.length) pieces.push({ kind: 'text', text: text.slice(last) });
  return pieces;
}

export function truncatedBytes(text: string): number {
  return splitOutput(text).reduce((n, p) => n + (p.kind === 'cut' ? p.bytes : 0), 0);
}

/**
 * Why a `run` call has no execution, in the operator's words. `result` is Nomos's answer to
 * the model; only its kind is used, its directives are never shown.
 */
export function notRunReason(result: string | null, isError: boolean): string | null {
  if (result === null) return null;
  const r = result.trim();
  if (/^Refused: no plan/i.test(r)) return 'Not run: there was no approved plan yet';
  const unchecked = r.match(/^Refused: the command could not be checked \((.*?)\)/i);
  if (unchecked) return `Not run: the command could not be checked (${unchecked[1]})`;
  if (/^Refused: the operator says/i.test(r)) return 'Not run: Nomos is reconciling the plan with what was recorded';
  const again = r.match(/^Not re-run: .*? (\d+)s\s+ago/i);
  if (again) return `Not run again: the same command already ran ${formatDuration(Number(again[1]) * 1000)} ago; its result was reused`;
  if (/^Not started again/i.test(r)) return 'Not started again: the same command is already in progress';
  if (isError) return 'Not run: Nomos refused this command';
  return null;
}
