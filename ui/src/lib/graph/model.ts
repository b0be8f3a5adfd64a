// The pure part of the graph view: graph slices (DTOs) → a graphology graph with the
// attributes sigma draws, the kind/tag filters, merging a new slice into the drawn graph, and
// staleness. No DOM, no WebGL: everything here is tested with Vitest.
import Graph from 'graphology';
import type { GraphEdgeView, GraphNodeView, GraphSliceView } from '../ipc';

/** Facts older than this many days are marked stale. A constant until the settings carry it:
 * thirty days is how long a monthly audit cycle may leave a fact unchecked. */
export const STALE_AFTER_DAYS = 30;
const DAY_MS = 86_400_000;

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

/** When the entity was last verified: its last change or its last audit, whichever is later. */
export function verifiedAt(n: Pick<GraphNodeView, 'updated_at_ms' | 'last_audited_at_ms'>): number {
  return Math.max(n.updated_at_ms, n.last_audited_at_ms ?? 0);
}

/** Neither changed nor audited within the threshold. */
export function isStale(
  n: Pick<GraphNodeView, 'updated_at_ms' | 'last_audited_at_ms'>,
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

function nodeAttrs(n: GraphNodeView, touched: Set<string>, nowMs: number, staleDays: number): NodeAttrs {
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

function edgeAttrs(e: GraphEdgeView): EdgeAttrs {
  return { kind: e.kind, label: e.kind, size: 1, color: '#94a3b8', hidden: false };
}

export function edgeKey(e: Pick<GraphEdgeView, 'id'>): string {
  return `r${e.id}`;
}

/** A fresh graph from one slice. Edges whose ends are missing are dropped, never thrown. */
export function buildGraph(slice: GraphSliceView, nowMs: number, staleDays = STALE_AFTER_DAYS): NomosGraph {
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
  slice: GraphSliceView,
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
export function diffSlice(g: NomosGraph, slice: GraphSliceView): GraphDiff {
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
  slice: GraphSliceView,
  nowMs: number,
  staleDays = STALE_AFTER_DAYS,
): GraphDiff {
  const diff = diffSlice(g, slice);
  for (const e of diff.removeEdges) g.dropEdge(e);
  for (const n of diff.removeNodes) g.dropNode(n);
  mergeSlice(g, slice, nowMs, staleDays);
  return diff;
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
  let visible = 0;
  g.forEachNode((n, a) => {
    const hidden = (kinds.size > 0 && !kinds.has(a.kind)) || (f.only !== null && !f.only.has(n));
    g.setNodeAttribute(n, 'hidden', hidden);
    if (!hidden) visible++;
  });
  g.forEachEdge((e, _a, s, t) => {
    g.setEdgeAttribute(e, 'hidden', g.getNodeAttribute(s, 'hidden') || g.getNodeAttribute(t, 'hidden'));
  });
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
