// ForceAtlas2 off the UI thread: the view posts the graph once, the worker runs the layout in
// batches and posts the positions back after each batch until it settles or is stopped.
import Graph from 'graphology';
import forceAtlas2 from 'graphology-layout-forceatlas2';
import type { LayoutRequest, LayoutUpdate } from './layout';

let run = 0;

self.onmessage = (ev: MessageEvent<LayoutRequest | { type: 'stop' }>) => {
  const msg = ev.data;
  run++;
  if (msg.type === 'stop') return;
  const mine = run;
  const g = new Graph({ multi: true, type: 'directed' });
  const n = msg.nodes.length;
  for (let i = 0; i < n; i++) g.addNode(i, { x: msg.positions[2 * i], y: msg.positions[2 * i + 1] });
  for (let i = 0; i < msg.edges.length; i += 2) g.addEdge(msg.edges[i], msg.edges[i + 1]);
  const settings = { ...forceAtlas2.inferSettings(g), barnesHutOptimize: n > 500 };
  let batch = 0;
  const step = () => {
    if (mine !== run) return;
    forceAtlas2.assign(g, { iterations: msg.iterationsPerBatch, settings });
    const out = new Float32Array(2 * n);
    g.forEachNode((k, a) => {
      const i = Number(k);
      out[2 * i] = a.x as number;
      out[2 * i + 1] = a.y as number;
    });
    batch++;
    const done = batch >= msg.batches;
    const update: LayoutUpdate = { type: 'positions', positions: out, done };
    (self as unknown as Worker).postMessage(update, [out.buffer]);
    if (!done) setTimeout(step, 0);
  };
  step();
};
