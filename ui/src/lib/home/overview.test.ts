import { describe, expect, it } from 'vitest';
import type { HomeOverviewView, TargetAuditView } from '../ipc';
import { approvalHref, auditLabel, isEmptyOverview, needsAudit, targetsByAudit } from './overview';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;
const t = (slug: string, ago: number | null): TargetAuditView => ({
  slug,
  kind: slug.split(':')[0] ?? 'host',
  last_audited_at_ms: ago === null ? null : NOW - ago * DAY,
});

const empty: HomeOverviewView = {
  graph: {
    node_ids: [], node_slugs: [], node_kinds: [], node_updated_at_ms: [], node_audited_at_ms: [], kinds: [],
    edge_ids: [], edge_from: [], edge_to: [], edge_kinds: [], relation_kinds: [],
    more_nodes: false, more_edges: false, next_after: null, touched: [],
  },
  targets: [],
  more_targets: false,
  sessions: [],
  approvals: [],
  more_approvals: false,
};

describe('targets by last audit', () => {
  it('puts never-audited first, then the oldest audit, ties by slug, whatever the input order', () => {
    const want = ['host:a', 'vm:z', 'lxc:old', 'host:mid', 'host:new-a', 'host:new-b'];
    const items = [t('host:new-b', 1), t('lxc:old', 400), t('vm:z', null), t('host:mid', 30), t('host:a', null), t('host:new-a', 1)];
    for (let r = 0; r < items.length; r++) {
      const rotated = [...items.slice(r), ...items.slice(0, r)];
      expect(targetsByAudit(rotated).map((x) => x.slug)).toEqual(want);
      expect(targetsByAudit([...rotated].reverse()).map((x) => x.slug)).toEqual(want);
    }
  });

  it('labels a missing audit "never" and marks targets due by the stale threshold', () => {
    expect(auditLabel(null, NOW)).toBe('never');
    expect(auditLabel(NOW - 5 * 60_000, NOW)).toBe('5 min ago');
    expect(needsAudit(t('host:a', null), NOW, 30)).toBe(true);
    expect(needsAudit(t('host:a', 10), NOW, 30)).toBe(false);
    expect(needsAudit(t('host:a', 10), NOW, 7)).toBe(true);
    expect(needsAudit(t('host:a', 40), NOW, 30)).toBe(true);
    expect(needsAudit(t('host:a', 40), NOW, 90)).toBe(false);
  });
});

describe('overview', () => {
  it('links a waiting command to its session', () => {
    expect(approvalHref({ session_id: 12 })).toBe('#/sessions/12');
  });

  it('is empty only when every part is', () => {
    expect(isEmptyOverview(empty)).toBe(true);
    expect(isEmptyOverview({ ...empty, targets: [t('host:a', null)] })).toBe(false);
    expect(isEmptyOverview({ ...empty, graph: { ...empty.graph, node_ids: [1] } })).toBe(false);
    expect(
      isEmptyOverview({
        ...empty,
        sessions: [{ id: 1, title: 's', goal: null, status: 'idle', outcome: null, summary: null, created_at_ms: NOW, last_active_at_ms: NOW }],
      }),
    ).toBe(false);
    expect(
      isEmptyOverview({
        ...empty,
        approvals: [{ execution_id: 1, session_id: 1, session_title: 's', target: 'host:a', command: 'reboot', class: 'destructive', created_at_ms: NOW }],
      }),
    ).toBe(false);
  });
});
