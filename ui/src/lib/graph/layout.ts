// The layout's client side: serialize the drawn graph for the worker and apply what it sends.
// The worker itself (layout.worker.ts) never runs on the UI thread.
import type { NomosGraph } from './model';

export interface LayoutRequest {
  type: 'start';
  /** Node keys in the order of `positions`. */
  nodes: string[];
  /** x0, y0, x1, y1, … */
  positions: Float32Array;
  /** Pairs of node indexes. */
  edges: Uint32Array;
  iterationsPerBatch: number;
  batches: number;
}

export interface LayoutUpdate {
  type: 'positions';
  positions: Float32Array;
  done: boolean;
}

/** The graph as index arrays (transferable, no object per node crosses to the worker). */
export function serializeForLayout(g: NomosGraph, batches = 60, iterationsPerBatch = 10): LayoutRequest {
  const nodes = g.nodes();
  const index = new Map(nodes.map((n, i) => [n, i]));
  const positions = new Float32Array(2 * nodes.length);
  nodes.forEach((n, i) => {
    const a = g.getNodeAttributes(n);
    positions[2 * i] = a.x;
    positions[2 * i + 1] = a.y;
  });
  const edges = new Uint32Array(2 * g.size);
  let j = 0;
  g.forEachEdge((_e, _a, s, t) => {
    edges[j++] = index.get(s) ?? 0;
    edges[j++] = index.get(t) ?? 0;
  });
  return { type: 'start', nodes, positions, edges, iterationsPerBatch, batches };
}

/** Write the worker's positions back in one bulk update (one graph event, so the renderer
 * re-indexes once per batch, not once per node); nodes added since keep their place and
 * non-finite values (a diverged step) are ignored so a node never vanishes to NaN. */
export function applyPositions(g: NomosGraph, nodes: string[], positions: Float32Array): number {
  const index = new Map<string, number>();
  nodes.forEach((n, i) => index.set(n, i));
  let moved = 0;
  g.updateEachNodeAttributes(
    (n, a) => {
      const i = index.get(n);
      if (i === undefined) return a;
      const x = positions[2 * i];
      const y = positions[2 * i + 1];
      if (x === undefined || y === undefined || !Number.isFinite(x) || !Number.isFinite(y)) return a;
      moved++;
      return { ...a, x, y };
    },
    { attributes: ['x', 'y'] },
  );
  return moved;
}

/** Runs the layout in a web worker; `onFrame` after each batch applied. */
export class LayoutRunner {
  #worker: Worker | null = null;
  #nodes: string[] = [];

  start(g: NomosGraph, onFrame: (done: boolean) => void, batches?: number) {
    this.stop();
    if (typeof Worker === 'undefined' || g.order === 0) {
      onFrame(true);
      return;
    }
    const worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' });
    this.#worker = worker;
    // Bounded work: ~600 iterations on small graphs, fewer as the graph grows (each costs
    // O(n log n) with Barnes-Hut), so a big estate settles in seconds, not minutes.
    const total = Math.max(60, Math.min(600, Math.round(600_000 / Math.max(1, g.order))));
    const req = serializeForLayout(g, batches ?? Math.ceil(total / 10));
    this.#nodes = req.nodes;
    worker.onmessage = (ev: MessageEvent<LayoutUpdate>) => {
      if (this.#worker !== worker) return;
      applyPositions(g, this.#nodes, ev.data.positions);
      onFrame(ev.data.done);
      if (ev.data.done) this.stop();
    };
    worker.onerror = () => {
      // A layout failure leaves the seeded positions: the graph still shows.
      onFrame(true);
      this.stop();
    };
    worker.postMessage(req, [req.positions.buffer, req.edges.buffer]);
  }

  stop() {
    this.#worker?.terminate();
    this.#worker = null;
  }
}
