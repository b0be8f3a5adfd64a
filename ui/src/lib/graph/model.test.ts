import { describe, expect, it } from 'vitest';
import type { GraphSliceView } from '../ipc';
import {
  STALE_AFTER_DAYS,
  applyFilter,
  buildGraph,
  decodeSlice,
  diffSlice,
  findNode,
  isStale,
  isStaleFact,
  kindCounts,
  markStale,
  MAX_STALE_AFTER_DAYS,
  staleDaysFrom,
  mergeSlice,
  neighbourhood,
  rebuildFromSlice,
  replaceWithSlice,
  seedPosition,
  styleOf,
  type Slice,
  type SliceEdge,
  type SliceNode,
} from './model';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;

function node(id: number, slug: string, over: Partial<SliceNode> = {}): SliceNode {
  const [kind = ''] = slug.split(':');
  return { id, slug, kind, updated_at_ms: NOW, last_audited_at_ms: null, ...over };
}

function edge(id: number, from: string, to: string, kind = 'runs_on'): SliceEdge {
  return { id, from, to, kind };
}

function slice(nodes: SliceNode[], edges: SliceEdge[] = [], touched: string[] = []): Slice {
  return { nodes, edges, more_nodes: false, more_edges: false, next_after: null, touched };
}

/** The wire's columns for a decoded slice (the shell's encoding, kinds interned in order). */
function encode(s: Slice): GraphSliceView {
  const kinds: string[] = [];
  const rels: string[] = [];
  const intern = (t: string[], k: string) => (t.includes(k) ? t.indexOf(k) : t.push(k) - 1);
  const at = new Map(s.nodes.map((n, i) => [n.slug, i]));
  return {
    node_ids: s.nodes.map((n) => n.id),
    node_slugs: s.nodes.map((n) => n.slug),
    node_kinds: s.nodes.map((n) => intern(kinds, n.kind)),
    node_updated_at_ms: s.nodes.map((n) => n.updated_at_ms),
    node_audited_at_ms: s.nodes.map((n) => n.last_audited_at_ms),
    kinds,
    edge_ids: s.edges.map((e) => e.id),
    edge_from: s.edges.map((e) => at.get(e.from) ?? 0),
    edge_to: s.edges.map((e) => at.get(e.to) ?? 0),
    edge_kinds: s.edges.map((e) => intern(rels, e.kind)),
    relation_kinds: rels,
    more_nodes: s.more_nodes,
    more_edges: s.more_edges,
    next_after: s.next_after,
    touched: s.touched,
  };
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
      slice([node(1, 'host:web', { last_audited_at_ms: NOW }), node(9, 'vm:new')], [edge(7, 'vm:new', 'host:web')]),
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

describe('decodeSlice (the wire columns)', () => {
  it('round-trips nodes, edges, kinds and flags', () => {
    const s = { ...estate, more_nodes: true, next_after: 5 };
    s.nodes[4] = { ...s.nodes[4]!, last_audited_at_ms: NOW - DAY };
    expect(decodeSlice(encode(s))).toEqual(s);
  });

  it('interns kinds: each name once on the wire', () => {
    const big = slice(
      Array.from({ length: 300 }, (_, i) => node(i + 1, `${['host', 'service', 'disk'][i % 3]}:n${i}`)),
      Array.from({ length: 299 }, (_, i) => edge(i + 1, `${['host', 'service', 'disk'][i % 3]}:n${i}`, `${['host', 'service', 'disk'][(i + 1) % 3]}:n${i + 1}`, i % 2 ? 'runs_on' : 'depends_on')),
    );
    const wire = encode(big);
    expect(wire.kinds).toHaveLength(3);
    expect(wire.relation_kinds).toHaveLength(2);
    expect(decodeSlice(wire)).toEqual(big);
  });

  it('drops an item whose index or column is out of range instead of drawing undefined', () => {
    const variants: [string, (w: GraphSliceView) => void, number, number][] = [
      ['edge end past the nodes', (w) => (w.edge_to[0] = 99), 5, 2],
      ['negative-looking end', (w) => (w.edge_from[1] = -1), 5, 2],
      ['relation kind past the table', (w) => (w.edge_kinds[2] = 7), 5, 2],
      ['node kind past the table (its two edges go too)', (w) => (w.node_kinds[0] = 40), 4, 1],
      ['slug column short', (w) => w.node_slugs.pop(), 4, 3],
      ['time column short', (w) => w.node_updated_at_ms.pop(), 4, 3],
      ['edge columns short', (w) => w.edge_to.pop(), 5, 2],
    ];
    for (const [what, spoil, nodes, edges] of variants) {
      const w = encode(estate);
      spoil(w);
      const d = decodeSlice(w);
      expect(d.nodes, what).toHaveLength(nodes);
      expect(d.edges, what).toHaveLength(edges);
      for (const e of d.edges) expect(typeof e.from === 'string' && typeof e.to === 'string', what).toBe(true);
      expect(d.more_edges, what).toBe(edges < 3);
      const g = buildGraph(d, NOW);
      expect(g.order, what).toBe(nodes);
    }
  });
});

describe('rebuildFromSlice', () => {
  it('builds the new slice, keeping the place of nodes already drawn', () => {
    const g = buildGraph(estate, NOW);
    g.setNodeAttribute('host:web', 'x', 123);
    g.setNodeAttribute('host:web', 'hidden', true);
    const next = rebuildFromSlice(g, slice([node(1, 'host:web'), node(9, 'vm:new')], [edge(7, 'vm:new', 'host:web')]), NOW);
    expect(next).not.toBe(g);
    expect(next.nodes().sort()).toEqual(['host:web', 'vm:new']);
    expect(next.size).toBe(1);
    expect(next.getNodeAttributes('host:web')).toMatchObject({ x: 123, hidden: true });
    expect(next.getNodeAttributes('vm:new')).toMatchObject(seedPosition(9));
    expect(g.order).toBe(5);
  });

  it('emits no event per node on the graph the renderer listens to', () => {
    const g = buildGraph(estate, NOW);
    let events = 0;
    for (const ev of ['nodeAdded', 'edgeAdded', 'nodeAttributesUpdated', 'edgeAttributesUpdated', 'nodeDropped'] as const) {
      g.on(ev, () => events++);
    }
    rebuildFromSlice(g, slice([node(1, 'host:web'), node(9, 'vm:new')]), NOW);
    expect(events).toBe(0);
  });
});

describe('applyFilter in bulk', () => {
  it('hides by kind with one update event for nodes and one for edges', () => {
    const g = buildGraph(estate, NOW);
    let perItem = 0;
    let bulk = 0;
    g.on('nodeAttributesUpdated', () => perItem++);
    g.on('edgeAttributesUpdated', () => perItem++);
    g.on('eachNodeAttributesUpdated', () => bulk++);
    g.on('eachEdgeAttributesUpdated', () => bulk++);
    expect(applyFilter(g, { kinds: ['host'], only: null })).toBe(2);
    expect(perItem).toBe(0);
    expect(bulk).toBe(2);
    expect(g.getEdgeAttribute('r1', 'hidden')).toBe(true);
    expect(applyFilter(g, { kinds: [], only: null })).toBe(5);
    expect(g.someEdge((_e, a) => a.hidden)).toBe(false);
    expect(bulk).toBe(4);
  });

  it('emits nothing when the filter changes nothing (a fresh slice, no filter)', () => {
    const g = buildGraph(estate, NOW);
    let events = 0;
    for (const name of ['eachNodeAttributesUpdated', 'eachEdgeAttributesUpdated', 'nodeAttributesUpdated', 'edgeAttributesUpdated'] as const) {
      g.on(name, () => events++);
    }
    expect(applyFilter(g, { kinds: [], only: null })).toBe(5);
    expect(applyFilter(g, { kinds: ['host', 'service', 'lxc', 'vm', 'disk'], only: null })).toBe(5);
    expect(events).toBe(0);
    // An edge left hidden while both its ends are shown is still fixed.
    g.setEdgeAttribute('r1', 'hidden', true);
    events = 0;
    expect(applyFilter(g, { kinds: [], only: null })).toBe(5);
    expect(g.getEdgeAttribute('r1', 'hidden')).toBe(false);
    expect(events).toBe(2);
  });
});

describe('stale threshold from Settings', () => {
  // Entities verified 1, 5, 10, 45, 200 and 4000 days ago (changed, or audited after a change).
  const ages = [1, 5, 10, 45, 200, 4000];
  const aged = slice(
    ages.map((d, i) =>
      i % 2 === 0
        ? node(i + 1, `host:h${d}`, { updated_at_ms: NOW - d * DAY })
        : node(i + 1, `host:h${d}`, { updated_at_ms: NOW - 9000 * DAY, last_audited_at_ms: NOW - d * DAY }),
    ),
  );
  const staleSet = (g: ReturnType<typeof buildGraph>) => g.filterNodes((_n, a) => a.stale).sort();

  it('marks exactly the facts older than the threshold, for any threshold', () => {
    for (const days of [1, 3, 7, 30, 90, 365, MAX_STALE_AFTER_DAYS]) {
      const g = buildGraph(aged, NOW, staleDaysFrom(days));
      const want = ages.filter((d) => d > days).map((d) => `host:h${d}`).sort();
      expect(staleSet(g), `${days} days`).toEqual(want);
    }
  });

  it('changing the setting changes what is marked on the drawn graph', () => {
    const g = buildGraph(aged, NOW, staleDaysFrom(null));
    expect(staleSet(g)).toEqual(['host:h200', 'host:h4000', 'host:h45']);
    expect(markStale(g, NOW, staleDaysFrom(7))).toBe(4);
    expect(staleSet(g)).toEqual(['host:h10', 'host:h200', 'host:h4000', 'host:h45']);
    expect(markStale(g, NOW, staleDaysFrom(365))).toBe(1);
    expect(staleSet(g)).toEqual(['host:h4000']);
    expect(markStale(g, NOW, staleDaysFrom(null))).toBe(3);
  });

  it('changing the setting changes which facts of a node are marked', () => {
    const changed = [2, 20, 60].map((d) => NOW - d * DAY);
    const marked = (days: number) => changed.map((c) => isStaleFact(c, null, NOW, staleDaysFrom(days)));
    expect(marked(1)).toEqual([true, true, true]);
    expect(marked(10)).toEqual([false, true, true]);
    expect(marked(30)).toEqual([false, false, true]);
    expect(marked(90)).toEqual([false, false, false]);
    // An audit after the change clears the mark whatever the threshold.
    expect(isStaleFact(changed[2]!, NOW - DAY, NOW, staleDaysFrom(7))).toBe(false);
  });

  it('falls back to the default for a missing or unusable setting', () => {
    for (const bad of [null, undefined, 0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, MAX_STALE_AFTER_DAYS + 1]) {
      expect(staleDaysFrom(bad), String(bad)).toBe(STALE_AFTER_DAYS);
    }
    for (const ok of [1, 2, 30, 364, MAX_STALE_AFTER_DAYS]) expect(staleDaysFrom(ok)).toBe(ok);
  });
});
