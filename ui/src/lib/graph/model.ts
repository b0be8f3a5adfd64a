// The pure part of the graph view: graph slices (DTOs) → a graphology graph with the
// attributes sigma draws, the kind/tag filters, merging a new slice into the drawn graph, and
// staleness. No DOM, no WebGL: everything here is tested with Vitest.
import Graph from 'graphology';
import type { GraphSliceView } from '../ipc';

/** Facts older than this many days are marked stale when Settings leave the threshold empty:
 * thirty days is how long a monthly audit cycle may leave a fact unchecked. */
export const STALE_AFTER_DAYS = 30;
/** The longest threshold Settings accept (the shell refuses more). */
export const MAX_STALE_AFTER_DAYS = 3650;
const DAY_MS = 86_400_000;

/** The threshold to mark with: the setting when it is a whole number of days in range, else the
 * default (a hand-edited settings file must not make everything, or nothing, stale). */
export function staleDaysFrom(setting: number | null | undefined): number {
  return typeof setting === 'number' && Number.isInteger(setting) && setting >= 1 && setting <= MAX_STALE_AFTER_DAYS
    ? setting
    : STALE_AFTER_DAYS;
}

export type Shape = 'circle' | 'square';

export interface KindStyle {
  color: string;
  shape: Shape;
  size: number;
  label: string;
}

/** Colour and shape by kind: execution targets are squares, what runs on them circles. */
export const KIND_STYLES: Record<string, KindStyle> = {
  host: { color: '#2563eb', shape: 'square', size: 9, label: 'Host' },
  lxc: { color: '#0891b2', shape: 'square', size: 7, label: 'Container' },
  vm: { color: '#7c3aed', shape: 'square', size: 7, label: 'VM' },
  service: { color: '#16a34a', shape: 'circle', size: 5, label: 'Service' },
  disk: { color: '#ca8a04', shape: 'circle', size: 5, label: 'Disk' },
  network: { color: '#db2777', shape: 'circle', size: 5, label: 'Network' },
  app: { color: '#ea580c', shape: 'circle', size: 5, label: 'App' },
  database: { color: '#b91c1c', shape: 'circle', size: 5, label: 'Database' },
};

/** Any other kind gets a stable colour from its name, as a circle. */
export function styleOf(kind: string): KindStyle {
  const known = KIND_STYLES[kind];
  if (known) return known;
  let h = 0;
  for (const c of kind) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return { color: `hsl(${h % 360}, 55%, 45%)`, shape: 'circle', size: 5, label: kind };
}

export interface NodeAttrs {
  x: number;
  y: number;
  size: number;
  color: string;
  label: string;
  type: Shape;
  kind: string;
  slug: string;
  updatedAt: number;
  lastAuditedAt: number | null;
  stale: boolean;
  touched: boolean;
  hidden: boolean;
  highlighted: boolean;
}

export interface EdgeAttrs {
  kind: string;
  label: string;
  size: number;
  color: string;
  hidden: boolean;
}

export type NomosGraph = Graph<NodeAttrs, EdgeAttrs>;

/** A node of a decoded slice: what the view draws and marks (attributes come with the details). */
export interface SliceNode {
  id: number;
  slug: string;
  kind: string;
  updated_at_ms: number;
  last_audited_at_ms: number | null;
}

/** An edge of a decoded slice, its ends as slugs. */
export interface SliceEdge {
  id: number;
  from: string;
  to: string;
  kind: string;
}

/** A graph slice as the view uses it (the wire sends columns, see `decodeSlice`). */
export interface Slice {
  nodes: SliceNode[];
  edges: SliceEdge[];
  more_nodes: boolean;
  more_edges: boolean;
  next_after: number | null;
  touched: string[];
}

export const EMPTY_SLICE: Slice = { nodes: [], edges: [], more_nodes: false, more_edges: false, next_after: null, touched: [] };

/** The wire's columns → one object per node and edge. A column shorter than the ids, a kind or
 * end index out of range drops that item (never an `undefined` slug in the graph); a dropped
 * edge sets `more_edges` so the view says not every relation is drawn. */
export function decodeSlice(v: GraphSliceView): Slice {
  const nodes: SliceNode[] = [];
  const at: (string | undefined)[] = [];
  for (let i = 0; i < v.node_ids.length; i++) {
    const slug = v.node_slugs[i];
    const kind = v.kinds[v.node_kinds[i] ?? -1];
    const updated = v.node_updated_at_ms[i];
    if (slug === undefined || kind === undefined || updated === undefined) {
      at.push(undefined);
      continue;
    }
    at.push(slug);
    nodes.push({ id: v.node_ids[i] as number, slug, kind, updated_at_ms: updated, last_audited_at_ms: v.node_audited_at_ms[i] ?? null });
  }
  const edges: SliceEdge[] = [];
  let dropped = false;
  for (let i = 0; i < v.edge_ids.length; i++) {
    const from = at[v.edge_from[i] ?? -1];
    const to = at[v.edge_to[i] ?? -1];
    const kind = v.relation_kinds[v.edge_kinds[i] ?? -1];
    if (from === undefined || to === undefined || kind === undefined) {
      dropped = true;
      continue;
    }
    edges.push({ id: v.edge_ids[i] as number, from, to, kind });
  }
  return {
    nodes,
    edges,
    more_nodes: v.more_nodes,
    more_edges: v.more_edges || dropped,
    next_after: v.next_after,
    touched: v.touched,
  };
}

/** When the entity was last verified: its last change or its last audit, whichever is later. */
export function verifiedAt(n: Pick<SliceNode, 'updated_at_ms' | 'last_audited_at_ms'>): number {
  return Math.max(n.updated_at_ms, n.last_audited_at_ms ?? 0);
}

/** Neither changed nor audited within the threshold. */
export function isStale(
  n: Pick<SliceNode, 'updated_at_ms' | 'last_audited_at_ms'>,
  nowMs: number,
  days = STALE_AFTER_DAYS,
): boolean {
  return nowMs - verifiedAt(n) > days * DAY_MS;
}

/** A single fact (attribute) is stale when it changed before the threshold and the entity was
 * not audited since. `null`: no recorded change, judged by the entity alone. */
export function isStaleFact(
  changedAtMs: number | null,
  lastAuditedAtMs: number | null,
  nowMs: number,
  days = STALE_AFTER_DAYS,
): boolean {
  if (changedAtMs === null) return lastAuditedAtMs === null || nowMs - lastAuditedAtMs > days * DAY_MS;
  return nowMs - Math.max(changedAtMs, lastAuditedAtMs ?? 0) > days * DAY_MS;
}

/** A deterministic starting position (golden-angle spiral by id) so the layout starts from a
 * spread, never from every node on one point. */
export function seedPosition(id: number): { x: number; y: number } {
  const r = Math.sqrt(id + 1) * 10;
  const a = id * 2.399963229728653;
  return { x: r * Math.cos(a), y: r * Math.sin(a) };
}

function nodeAttrs(n: SliceNode, touched: Set<string>, nowMs: number, staleDays: number): NodeAttrs {
  const style = styleOf(n.kind);
  const pos = seedPosition(n.id);
  return {
    ...pos,
    size: style.size,
    color: style.color,
    label: n.slug,
    type: style.shape,
    kind: n.kind,
    slug: n.slug,
    updatedAt: n.updated_at_ms,
    lastAuditedAt: n.last_audited_at_ms,
    stale: isStale(n, nowMs, staleDays),
    touched: touched.has(n.slug),
    hidden: false,
    highlighted: touched.has(n.slug),
  };
}

function edgeAttrs(e: SliceEdge): EdgeAttrs {
  return { kind: e.kind, label: e.kind, size: 1, color: '#94a3b8', hidden: false };
}

export function edgeKey(e: Pick<SliceEdge, 'id'>): string {
  return `r${e.id}`;
}

/** A fresh graph from one slice. Edges whose ends are missing are dropped, never thrown. */
export function buildGraph(slice: Slice, nowMs: number, staleDays = STALE_AFTER_DAYS): NomosGraph {
  const g: NomosGraph = new Graph<NodeAttrs, EdgeAttrs>({ multi: true, type: 'directed' });
  mergeSlice(g, slice, nowMs, staleDays);
  return g;
}

export interface MergeResult {
  addedNodes: number;
  updatedNodes: number;
  addedEdges: number;
  droppedEdges: number;
}

/** Merge a slice into the drawn graph: new nodes and edges are added, known nodes keep their
 * position (the layout is not thrown away) and get the new facts. */
export function mergeSlice(
  g: NomosGraph,
  slice: Slice,
  nowMs: number,
  staleDays = STALE_AFTER_DAYS,
): MergeResult {
  const touched = new Set(slice.touched);
  const out: MergeResult = { addedNodes: 0, updatedNodes: 0, addedEdges: 0, droppedEdges: 0 };
  for (const n of slice.nodes) {
    const attrs = nodeAttrs(n, touched, nowMs, staleDays);
    if (g.hasNode(n.slug)) {
      const old = g.getNodeAttributes(n.slug);
      g.replaceNodeAttributes(n.slug, { ...attrs, x: old.x, y: old.y, hidden: old.hidden });
      out.updatedNodes++;
    } else {
      g.addNode(n.slug, attrs);
      out.addedNodes++;
    }
  }
  for (const e of slice.edges) {
    const key = edgeKey(e);
    if (g.hasEdge(key)) continue;
    if (!g.hasNode(e.from) || !g.hasNode(e.to)) {
      out.droppedEdges++;
      continue;
    }
    g.addEdgeWithKey(key, e.from, e.to, edgeAttrs(e));
    out.addedEdges++;
  }
  return out;
}

export interface GraphDiff {
  addNodes: string[];
  removeNodes: string[];
  addEdges: string[];
  removeEdges: string[];
}

/** What changes between the drawn graph and a new slice that replaces it. */
export function diffSlice(g: NomosGraph, slice: Slice): GraphDiff {
  const nodes = new Set(slice.nodes.map((n) => n.slug));
  const edges = new Set(slice.edges.filter((e) => nodes.has(e.from) && nodes.has(e.to)).map(edgeKey));
  return {
    addNodes: [...nodes].filter((n) => !g.hasNode(n)),
    removeNodes: g.nodes().filter((n) => !nodes.has(n)),
    addEdges: [...edges].filter((e) => !g.hasEdge(e)),
    removeEdges: g.edges().filter((e) => !edges.has(e)),
  };
}

/** Replace the drawn graph's content by a slice, keeping the positions of nodes in both. */
export function replaceWithSlice(
  g: NomosGraph,
  slice: Slice,
  nowMs: number,
  staleDays = STALE_AFTER_DAYS,
): GraphDiff {
  const diff = diffSlice(g, slice);
  for (const e of diff.removeEdges) g.dropEdge(e);
  for (const n of diff.removeNodes) g.dropNode(n);
  mergeSlice(g, slice, nowMs, staleDays);
  return diff;
}

/** A new graph holding exactly the slice, nodes already drawn keeping their place. Built
 * detached from the renderer (no event per node or edge), then handed to it in one
 * `setGraph`: the first render of a 5,000-node slice costs one indexation. */
export function rebuildFromSlice(
  old: NomosGraph,
  slice: Slice,
  nowMs: number,
  staleDays = STALE_AFTER_DAYS,
): NomosGraph {
  const g = buildGraph(slice, nowMs, staleDays);
  if (old.order === 0) return g;
  g.updateEachNodeAttributes(
    (n, a) => {
      if (!old.hasNode(n)) return a;
      const o = old.getNodeAttributes(n);
      return { ...a, x: o.x, y: o.y, hidden: o.hidden };
    },
    { attributes: ['x', 'y', 'hidden'] },
  );
  return g;
}

/** Mark the drawn nodes again with another threshold (one bulk update); returns how many are
 * stale. */
export function markStale(g: NomosGraph, nowMs: number, staleDays: number): number {
  let stale = 0;
  g.updateEachNodeAttributes(
    (_n, a) => {
      const s = isStale({ updated_at_ms: a.updatedAt, last_audited_at_ms: a.lastAuditedAt }, nowMs, staleDays);
      if (s) stale++;
      return a.stale === s ? a : { ...a, stale: s };
    },
    { attributes: ['stale'] },
  );
  return stale;
}

export interface ViewFilter {
  /** Kinds shown (empty: all). */
  kinds: string[];
  /** Only these slugs (e.g. the entities a tag's entries are about); null: no restriction. */
  only: Set<string> | null;
}

/** Hide what the filter excludes; an edge is hidden when either end is. Returns the number of
 * visible nodes. */
export function applyFilter(g: NomosGraph, f: ViewFilter): number {
  const kinds = new Set(f.kinds);
  const hide = (n: string, a: NodeAttrs) => (kinds.size > 0 && !kinds.has(a.kind)) || (f.only !== null && !f.only.has(n));
  let visible = 0;
  let changes = false;
  g.forEachNode((n, a) => {
    const hidden = hide(n, a);
    if (!hidden) visible++;
    if (hidden !== a.hidden) changes = true;
  });
  if (!changes) {
    g.forEachEdge((_e, a, _s, _t, sa, ta) => {
      if (a.hidden !== (sa.hidden || ta.hidden)) changes = true;
    });
  }
  // Nothing to change (the common case: no filter on a fresh slice): no graph event, so the
  // renderer re-indexes nothing. Else one bulk update per items (one event each), not one per
  // node and edge (20,000 events on a 5,000-node slice).
  if (!changes) return visible;
  g.updateEachNodeAttributes(
    (n, a) => {
      const hidden = hide(n, a);
      return a.hidden === hidden ? a : { ...a, hidden };
    },
    { attributes: ['hidden'] },
  );
  g.updateEachEdgeAttributes(
    (_e, a, _s, _t, sa, ta) => {
      const hidden = sa.hidden || ta.hidden;
      return a.hidden === hidden ? a : { ...a, hidden };
    },
    { attributes: ['hidden'] },
  );
  return visible;
}

/** Kinds present in the graph with their counts, most frequent first. */
export function kindCounts(g: NomosGraph): { kind: string; count: number }[] {
  const counts = new Map<string, number>();
  g.forEachNode((_n, a) => counts.set(a.kind, (counts.get(a.kind) ?? 0) + 1));
  return [...counts.entries()]
    .map(([kind, count]) => ({ kind, count }))
    .sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
}

/** Slugs within `depth` hops of `slug` in the drawn graph (both directions), itself included. */
export function neighbourhood(g: NomosGraph, slug: string, depth: number): Set<string> {
  const seen = new Set<string>();
  if (!g.hasNode(slug)) return seen;
  seen.add(slug);
  let frontier = [slug];
  for (let d = 0; d < Math.max(1, Math.min(3, depth)); d++) {
    const next: string[] = [];
    for (const n of frontier) {
      g.forEachNeighbor(n, (m) => {
        if (!seen.has(m)) {
          seen.add(m);
          next.push(m);
        }
      });
    }
    frontier = next;
  }
  return seen;
}

/** The best local match for a search box: exact slug, then name, then prefix, then substring. */
export function findNode(g: NomosGraph, text: string): string | null {
  const q = text.trim().toLowerCase();
  if (!q) return null;
  let best: { slug: string; score: number } | null = null;
  g.forEachNode((slug) => {
    const s = slug.toLowerCase();
    const name = s.slice(s.indexOf(':') + 1);
    const score = s === q ? 4 : name === q ? 3 : name.startsWith(q) || s.startsWith(q) ? 2 : s.includes(q) ? 1 : 0;
    if (score > 0 && (!best || score > best.score || (score === best.score && slug < best.slug))) best = { slug, score };
  });
  return (best as { slug: string } | null)?.slug ?? null;
}
