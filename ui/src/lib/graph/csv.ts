// The ledger as CSV (RFC 4180), safe to open in a spreadsheet.
import type { LedgerRowView } from '../ipc';

/** One CSV field: quoted when it holds a comma, quote or line break; a leading `= + - @`
 * (or tab / CR) is prefixed with `'` so a spreadsheet never runs a command text as a formula. */
export function csvField(value: unknown): string {
  let s = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const LEDGER_COLUMNS = [
  'id',
  'created_at',
  'session_id',
  'session',
  'plan_step',
  'target',
  'command',
  'class',
  'approval',
  'approved_by',
  'approved_at',
  'status',
  'outcome',
  'exit_code',
  'duration_ms',
] as const;

const iso = (ms: number | null) => (ms === null ? '' : new Date(ms).toISOString());

export function ledgerCsv(rows: LedgerRowView[]): string {
  const lines = [LEDGER_COLUMNS.join(',')];
  for (const r of rows) {
    lines.push(
      [
        r.id,
        iso(r.created_at_ms),
        r.session_id,
        r.session_title,
        r.plan_step_seq === null ? '' : `${r.plan_step_seq}. ${r.plan_step_title ?? ''}`,
        r.target,
        r.command,
        r.class,
        r.approval ?? '',
        r.approved_by ?? '',
        iso(r.approved_at_ms),
        r.status,
        r.outcome,
        r.exit_code ?? '',
        r.duration_ms ?? '',
      ]
        .map(csvField)
        .join(','),
    );
  }
  return lines.join('\r\n') + '\r\n';
}

/** Save text through a Blob link (works in WebKitGTK without a dialog plugin). */
export function downloadText(filename: string, text: string, type = 'text/csv;charset=utf-8') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
