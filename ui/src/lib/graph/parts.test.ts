import { describe, expect, it } from 'vitest';
import type { ExecutionMatrixView, LedgerRowView } from '../ipc';
import { csvField, ledgerCsv, LEDGER_COLUMNS } from './csv';
import { cellText, matrixRows } from './matrix';
import { applyPositions, serializeForLayout } from './layout';
import { buildGraph } from './model';
import { sessionHref } from './links';
import { reverifyText } from './reverify';

function row(over: Partial<LedgerRowView> = {}): LedgerRowView {
  return {
    id: 1, session_id: 2, session_title: 'Updates', message_id: 8589934593, plan_step_id: 3, plan_step_seq: 1,
    plan_step_title: 'Check', target: 'host:web', command: 'apt list --upgradable', class: 'read_only',
    reason: 'read-only', approval: 'not_needed', approved_by: null, approved_at_ms: null, status: 'finished',
    outcome: 'succeeded', exit_code: 0, error: null, created_at_ms: 0, duration_ms: 120, ...over,
  };
}

describe('CSV export', () => {
  it('quotes commas, quotes and line breaks', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('a\nb')).toBe('"a\nb"');
    expect(csvField('a\r\nb')).toBe('"a\r\nb"');
    expect(csvField(null)).toBe('');
    expect(csvField(0)).toBe('0');
  });

  it('never lets a spreadsheet read a command as a formula', () => {
    for (const s of ['=1+1', '+cmd', '-rf', '@SUM(A1)', '\tx', '\rx']) expect(csvField(s).replace(/^"/, '').startsWith("'")).toBe(true);
    expect(csvField('=HYPERLINK("x","y")')).toBe(`"'=HYPERLINK(""x"",""y"")"`);
  });

  it('writes a header and one line per row with every column', () => {
    const csv = ledgerCsv([row(), row({ id: 2, command: 'rm -rf /tmp/x, y', exit_code: null, outcome: 'cancelled' })]);
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe(LEDGER_COLUMNS.join(','));
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain('1970-01-01T00:00:00.000Z');
    expect(lines[1]).toContain('1. Check');
    expect(lines[2]).toContain('"rm -rf /tmp/x, y"');
    expect(lines[2]).toContain('cancelled');
    expect(ledgerCsv([])).toBe(`${LEDGER_COLUMNS.join(',')}\r\n`);
  });
});

describe('matrix', () => {
  const m: ExecutionMatrixView = {
    session_id: 1,
    steps: [
      { id: 10, generation: 1, seq: 1, title: 'Check', status: 'done' },
      { id: 11, generation: 1, seq: 2, title: 'Upgrade', status: 'done' },
      { id: null, generation: null, seq: null, title: 'Outside any plan step', status: null },
    ],
    targets: ['host:a', 'host:b'],
    cells: [
      { plan_step_id: 10, target: 'host:a', runs: 1, succeeded: 1, failed: 0, class: 'read_only', last_execution_id: 1, last_outcome: 'succeeded' },
      { plan_step_id: 11, target: 'host:b', runs: 3, succeeded: 2, failed: 1, class: 'config_mutation', last_execution_id: 4, last_outcome: 'succeeded' },
      { plan_step_id: null, target: 'host:b', runs: 1, succeeded: 0, failed: 1, class: 'read_only', last_execution_id: 5, last_outcome: 'failed' },
    ],
    truncated: false,
  };
  it('puts each cell at its step and target, empty elsewhere', () => {
    const rows = matrixRows(m);
    expect(rows.map((r) => r.cells.map(cellText))).toEqual([
      ['✓', ''],
      ['', '3× 2✓ 1✗'],
      ['', '✗'],
    ]);
  });
});

describe('layout transfer', () => {
  const g = buildGraph(
    {
      nodes: [1, 2, 3].map((id) => ({ id, slug: `host:h${id}`, kind: 'host', updated_at_ms: 0, last_audited_at_ms: null })),
      edges: [{ id: 1, from: 'host:h1', to: 'host:h3', kind: 'x' }],
      more_nodes: false, more_edges: false, next_after: null, touched: [],
    },
    0,
  );
  it('serializes nodes and edges as index arrays', () => {
    const req = serializeForLayout(g);
    expect(req.nodes).toEqual(['host:h1', 'host:h2', 'host:h3']);
    expect([...req.edges]).toEqual([0, 2]);
    expect(req.positions[2]).toBeCloseTo(g.getNodeAttribute('host:h2', 'x'));
  });
  it('applies positions, skipping removed nodes and non-finite values', () => {
    const req = serializeForLayout(g);
    g.dropNode('host:h2');
    const moved = applyPositions(g, req.nodes, new Float32Array([1, 2, 3, 4, NaN, 6]));
    expect(moved).toBe(1);
    expect(g.getNodeAttributes('host:h1')).toMatchObject({ x: 1, y: 2 });
    expect(Number.isFinite(g.getNodeAttribute('host:h3', 'x'))).toBe(true);
  });
});

describe('links and re-verify', () => {
  it('links to the session, at the message when known', () => {
    expect(sessionHref(4)).toBe('#/sessions/4');
    expect(sessionHref(4, null)).toBe('#/sessions/4');
    expect(sessionHref(4, 17179869185)).toBe('#/sessions/4?message=17179869185');
  });
  it('asks for a read-only plan on that one target', () => {
    const t = reverifyText('  lxc:nextcloud ');
    expect(t).toContain('read-only');
    expect(t.match(/lxc:nextcloud/g)?.length).toBeGreaterThanOrEqual(2);
    expect(t).not.toMatch(/ {2}/);
  });
});
