import type { SessionStatus } from './ipc';

const STATUS_LABEL: Record<SessionStatus, string> = {
  idle: 'Idle',
  planning: 'Planning',
  executing: 'Executing',
  done: 'Done',
  partial: 'Partial',
  failed: 'Failed',
  abandoned: 'Abandoned',
};

/** The tooltip of the "Demo" label, shown from a session's `demo` field (never its title). */
export const DEMO_HINT = 'Started by "Try the demo": a scripted model ran real read-only commands on this workstation';

export function statusLabel(status: SessionStatus): string {
  return STATUS_LABEL[status];
}

/** "just now", "5 min ago", "3 h ago", then a date: the sidebar needs recency, not precision. */
export function relativeTime(thenMs: number, nowMs: number): string {
  const seconds = Math.max(0, Math.round((nowMs - thenMs) / 1000));
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  return new Date(thenMs).toISOString().slice(0, 10);
}

