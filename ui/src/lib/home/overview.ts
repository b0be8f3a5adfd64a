// The pure part of the start screen's overview: ordering, labels, links and whether there is
// anything to show. The component (HomeOverview.svelte) only draws what these return.
import type { HomeOverviewView, TargetAuditView, WaitingApprovalView } from '../ipc';
import { relativeTime } from '../format';
import { hrefFor } from '../router.svelte';
import { isStale } from '../graph/model';

/** Never audited first, then the oldest audit first; ties by slug (the store sends this order,
 * the view keeps it whatever arrives). */
export function targetsByAudit(targets: TargetAuditView[]): TargetAuditView[] {
  return [...targets].sort((a, b) => {
    const x = a.last_audited_at_ms ?? Number.NEGATIVE_INFINITY;
    const y = b.last_audited_at_ms ?? Number.NEGATIVE_INFINITY;
    return x === y ? (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0) : x - y;
  });
}

/** "never", or how long ago. */
export function auditLabel(lastAuditedAtMs: number | null, nowMs: number): string {
  return lastAuditedAtMs === null ? 'never' : relativeTime(lastAuditedAtMs, nowMs);
}

/** A target needs an audit: never audited, or not within the stale threshold. */
export function needsAudit(t: TargetAuditView, nowMs: number, staleDays: number): boolean {
  return t.last_audited_at_ms === null || isStale({ updated_at_ms: 0, last_audited_at_ms: t.last_audited_at_ms }, nowMs, staleDays);
}

/** The session of a waiting command: its approval card is at the end of the transcript. */
export function approvalHref(a: Pick<WaitingApprovalView, 'session_id'>): string {
  return hrefFor({ name: 'chat', sessionId: a.session_id });
}

/** Nothing known yet: no entity, no target, no session and nothing waiting. */
export function isEmptyOverview(o: HomeOverviewView): boolean {
  return o.graph.node_ids.length === 0 && o.targets.length === 0 && o.sessions.length === 0 && o.approvals.length === 0;
}
