import { describe, expect, it } from 'vitest';
import type { GraphEdgeView, GraphNodeView, GraphSliceView } from '../ipc';
import {
  STALE_AFTER_DAYS,
  applyFilter,
  buildGraph,
  diffSlice,
  findNode,
  isStale,
  isStaleFact,
  kindCounts,
  mergeSlice,
  neighbourhood,
  replaceWithSlice,
  seedPosition,
  styleOf,
} from './model';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;

function node(id: number, slug: string, over: Partial<GraphNodeView> = {}): GraphNodeView {
  const [kind = '', name = ''] = slug.split(':');
  return { id, slug, kind, name, attributes: {}, updated_at_ms: NOW, last_audited_at_ms: null, ...over };
}

function edge(id: number, from: string, to: string, kind = 'runs_on'): GraphEdgeView {
  return { id, from, to, kind, session_id: null };
}

function slice(nodes: GraphNodeView[], edges: GraphEdgeView[] = [], touched: string[] = []): GraphSliceView {
  return { nodes, edges, more_nodes: false, more_edges: false, next_after: null, touched };
}

const estate = slice(
  [node(1, 'host:web'), node(2, 'service:nginx'), node(3, 'lxc:cache'), node(4, 'service:redis'), node(5, 'host:db')],
  [edge(1, 'service:nginx', 'host:web'), edge(2, 'host:web', 'lxc:cache', 'hosts'), edge(3, 'service:redis', 'lxc:cache')],
  ['service:nginx'],
);

describe('buildGraph', () => {
  it('draws every node and edge of a slice with its kind style', () => {
    const g = buildGraph(estate, NOW);
    expect(g.order).toBe(5);
    expect(g.size).toBe(3);
    expect(g.getNodeAttribute('host:web', 'type')).toBe('square');
    expect(g.getNodeAttribute('service:nginx', 'type')).toBe('circle');
    expect(g.getNodeAttribute('host:web', 'color')).toBe(styleOf('host').color);
    expect(g.getNodeAttribute('lxc:cache', 'type')).toBe('square');
  });

  it('gives unknown kinds a stable colour and never a shared position', () => {
    expect(styleOf('printer')).toEqual(styleOf('printer'));
    expect(styleOf('printer').color).not.toBe(styleOf('scanner').color);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const p = seedPosition(i);
      expect(Number.isFinite(p.x) && Number.isFinite(p.y)).toBe(true);
      seen.add(`${p.x.toFixed(3)},${p.y.toFixed(3)}`);
    }
    expect(seen.size).toBe(2000);
  });

  it('drops an edge whose end is not in the slice instead of throwing', () => {
    const g = buildGraph(slice([node(1, 'host:a')], [edge(1, 'host:a', 'host:missing'), edge(2, 'host:gone', 'host:a')]), NOW);
    expect(g.size).toBe(0);
  });

  it('keeps parallel relations of different kinds apart', () => {
    const g = buildGraph(
      slice([node(1, 'app:a'), node(2, 'db:b')], [edge(1, 'app:a', 'db:b', 'depends_on'), edge(2, 'app:a', 'db:b', 'reads')]),
      NOW,
    );
    expect(g.size).toBe(2);
  });

  it('highlights the entities the session touched and only those', () => {
    const g = buildGraph(estate, NOW);
    expect(g.filterNodes((_n, a) => a.touched)).toEqual(['service:nginx']);
    expect(g.getNodeAttribute('service:nginx', 'highlighted')).toBe(true);
  });
});

describe('merging and diffing slices', () => {
  it('adds new nodes, updates known ones and keeps their laid-out position', () => {
    const g = buildGraph(estate, NOW);
    g.mergeNodeAttributes('host:web', { x: 123, y: -4 });
    const r = mergeSlice(
      g,
      slice([node(1, 'host:web', { attributes: { os: 'debian' }, last_audited_at_ms: NOW }), node(9, 'vm:new')], [edge(7, 'vm:new', 'host:web')]),
      NOW,
    );
    expect(r).toEqual({ addedNodes: 1, updatedNodes: 1, addedEdges: 1, droppedEdges: 0 });
    expect(g.getNodeAttribute('host:web', 'x')).toBe(123);
    expect(g.getNodeAttribute('host:web', 'lastAuditedAt')).toBe(NOW);
  });

  it('merging the same slice twice changes nothing', () => {
    const g = buildGraph(estate, NOW);
    const r = mergeSlice(g, estate, NOW);
    expect(r.addedNodes + r.addedEdges).toBe(0);
    expect([g.order, g.size]).toEqual([5, 3]);
  });

  it('a replacing slice removes what it no longer holds, with the edges of removed nodes', () => {
    const g = buildGraph(estate, NOW);
    const next = slice([node(1, 'host:web'), node(2, 'service:nginx'), node(6, 'disk:sda')], [edge(1, 'service:nginx', 'host:web'), edge(8, 'disk:sda', 'host:web', 'attached_to')]);
    const d = diffSlice(g, next);
    expect(d.addNodes).toEqual(['disk:sda']);
    expect(d.removeNodes.sort()).toEqual(['host:db', 'lxc:cache', 'service:redis']);
    expect(d.addEdges).toEqual(['r8']);
    expect(d.removeEdges.sort()).toEqual(['r2', 'r3']);
    replaceWithSlice(g, next, NOW);
    expect(g.nodes().sort()).toEqual(['disk:sda', 'host:web', 'service:nginx']);
    expect(g.edges().sort()).toEqual(['r1', 'r8']);
  });

  it('an empty slice empties the graph', () => {
    const g = buildGraph(estate, NOW);
    replaceWithSlice(g, slice([]), NOW);
    expect([g.order, g.size]).toEqual([0, 0]);
  });
});

describe('filters', () => {
  it('hides other kinds and every edge touching a hidden node', () => {
    const g = buildGraph(estate, NOW);
    expect(applyFilter(g, { kinds: ['host', 'lxc'], only: null })).toBe(3);
    expect(g.getNodeAttribute('service:nginx', 'hidden')).toBe(true);
    expect(g.getEdgeAttribute('r1', 'hidden')).toBe(true);
    expect(g.getEdgeAttribute('r2', 'hidden')).toBe(false);
    expect(applyFilter(g, { kinds: [], only: null })).toBe(5);
    expect(g.filterEdges((_e, a) => a.hidden)).toEqual([]);
  });

  it('restricts to a set of slugs (a tag) together with kinds', () => {
    const g = buildGraph(estate, NOW);
    expect(applyFilter(g, { kinds: [], only: new Set(['host:web', 'service:redis']) })).toBe(2);
    expect(applyFilter(g, { kinds: ['service'], only: new Set(['host:web', 'service:redis']) })).toBe(1);
    expect(applyFilter(g, { kinds: ['nothing'], only: null })).toBe(0);
  });

  it('counts kinds, most frequent first', () => {
    expect(kindCounts(buildGraph(estate, NOW))).toEqual([
      { kind: 'host', count: 2 },
      { kind: 'service', count: 2 },
      { kind: 'lxc', count: 1 },
    ]);
  });
});

describe('neighbourhood and search', () => {
  const g = buildGraph(estate, NOW);
  it('walks both directions to depth 1–3', () => {
    expect([...neighbourhood(g, 'lxc:cache', 1)].sort()).toEqual(['host:web', 'lxc:cache', 'service:redis']);
    expect([...neighbourhood(g, 'lxc:cache', 2)].sort()).toEqual(['host:web', 'lxc:cache', 'service:nginx', 'service:redis']);
    expect(neighbourhood(g, 'lxc:cache', 0)).toEqual(neighbourhood(g, 'lxc:cache', 1));
    expect(neighbourhood(g, 'lxc:cache', 9)).toEqual(neighbourhood(g, 'lxc:cache', 3));
    expect(neighbourhood(g, 'host:db', 3)).toEqual(new Set(['host:db']));
    expect(neighbourhood(g, 'host:none', 1).size).toBe(0);
  });

  it('finds the exact slug first, then the name, a prefix, a substring', () => {
    expect(findNode(g, 'host:web')).toBe('host:web');
    expect(findNode(g, 'NGINX')).toBe('service:nginx');
    expect(findNode(g, 'red')).toBe('service:redis');
    expect(findNode(g, 'ach')).toBe('lxc:cache');
    expect(findNode(g, '  ')).toBeNull();
    expect(findNode(g, 'nowhere')).toBeNull();
  });
});

describe('staleness', () => {
  const days = (n: number) => NOW - n * DAY;
  it('marks an entity neither changed nor audited within the threshold', () => {
    expect(isStale({ updated_at_ms: days(STALE_AFTER_DAYS + 1), last_audited_at_ms: null }, NOW)).toBe(true);
    expect(isStale({ updated_at_ms: days(STALE_AFTER_DAYS - 1), last_audited_at_ms: null }, NOW)).toBe(false);
    expect(isStale({ updated_at_ms: days(400), last_audited_at_ms: days(2) }, NOW)).toBe(false);
    expect(isStale({ updated_at_ms: days(400), last_audited_at_ms: days(40) }, NOW)).toBe(true);
    expect(isStale({ updated_at_ms: days(10), last_audited_at_ms: null }, NOW, 7)).toBe(true);
  });

  it('judges each fact by its own change and the last audit', () => {
    expect(isStaleFact(days(31), null, NOW)).toBe(true);
    expect(isStaleFact(days(31), days(1), NOW)).toBe(false);
    expect(isStaleFact(days(1), null, NOW)).toBe(false);
    expect(isStaleFact(null, null, NOW)).toBe(true);
    expect(isStaleFact(null, days(3), NOW)).toBe(false);
  });

  it('marks stale nodes when the graph is built', () => {
    const g = buildGraph(slice([node(1, 'host:old', { updated_at_ms: days(90) }), node(2, 'host:new')]), NOW);
    expect(g.getNodeAttribute('host:old', 'stale')).toBe(true);
    expect(g.getNodeAttribute('host:new', 'stale')).toBe(false);
  });
});
