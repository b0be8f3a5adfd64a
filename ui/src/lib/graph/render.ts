// How much a frame of the graph may cost. Measured under Xvfb with a software WebGL (llvmpipe,
// as in CI and on VMs without a GPU): a frame's cost grows with its pixels (a full-window WebGL
// clear ran at 12 fps, a quarter of the pixels at 24), and most of it is spent after sigma's
// draw calls, when the browser composites the canvases. WebKitGTK reports every GPU as "Apple
// GPU", so a software renderer cannot be recognised by name: the view measures what its frames
// cost (draw + composite, up to the next animation frame) and, when they are slow, draws at a
// lower pixel ratio. Big graphs also draw their edges as plain lines.

/** The lowest pixel ratio the view goes down to. */
export const MIN_PIXEL_RATIO = 0.5;
/** A frame slower than this (draw to next frame, ms) is too slow for 30 fps with margin. */
export const SLOW_FRAME_MS = 28;
/** Frames measured before deciding. */
export const FRAME_SAMPLES = 3;

/** The pixel ratio to draw at next: halved (not below `MIN_PIXEL_RATIO`) when the median of the
 * last measured frames is slow, else unchanged. */
export function nextPixelRatio(frameMs: number[], ratio: number): number {
  const current = Number.isFinite(ratio) && ratio > 0 ? ratio : 1;
  if (frameMs.length < FRAME_SAMPLES || current <= MIN_PIXEL_RATIO) return current;
  const sorted = [...frameMs.slice(-FRAME_SAMPLES)].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  return median > SLOW_FRAME_MS ? Math.max(MIN_PIXEL_RATIO, current / 2) : current;
}

/** Overrides the `devicePixelRatio` sigma reads (at every resize) while the graph view is open;
 * returns the function that restores the screen's. */
export function overridePixelRatio(win: { devicePixelRatio: number }, ratio: number): () => void {
  const own = Object.getOwnPropertyDescriptor(win, 'devicePixelRatio');
  Object.defineProperty(win, 'devicePixelRatio', { configurable: true, get: () => ratio });
  return () => {
    if (own) Object.defineProperty(win, 'devicePixelRatio', own);
    else delete (win as { devicePixelRatio?: number }).devicePixelRatio;
  };
}

/** Measures frames: `start()` right after a render; the cost is the time to the second animation
 * frame after it (the first runs before that frame is painted). One measure at a time. */
export class FrameMeter {
  readonly samples: number[] = [];
  #pending = false;
  constructor(
    private readonly raf: (cb: (t: number) => void) => unknown = (cb) => requestAnimationFrame(cb),
    private readonly now: () => number = () => performance.now(),
  ) {}

  start(onSample: (samples: number[]) => void) {
    if (this.#pending) return;
    this.#pending = true;
    const t0 = this.now();
    this.raf(() =>
      this.raf(() => {
        this.#pending = false;
        this.samples.push(this.now() - t0);
        if (this.samples.length > 10) this.samples.shift();
        onSample(this.samples);
      }),
    );
  }

  reset() {
    this.samples.length = 0;
  }
}

export interface RenderCost {
  hideLabelsOnMove: boolean;
  /** `line`: one-pixel GL lines; `arrow`: a quad per edge plus a head, twice the work. */
  edgeType: 'line' | 'arrow';
}

/** What frames draw for a graph of `nodes` and `edges`: small graphs keep everything; big ones
 * draw plain edges and no labels while the camera moves. Edges stay: camera moves are drawn by
 * moving the last picture (pan.ts), and hiding them would make sigma re-index the whole graph
 * at the end of every drag to show them again. */
export function renderCost(nodes: number, edges: number): RenderCost {
  return {
    hideLabelsOnMove: nodes > 500,
    edgeType: edges > 5000 ? 'line' : 'arrow',
  };
}

/** What `skipHoverWhileDragging` needs of a sigma renderer. */
export interface HoverPicking {
  getNodeAtPosition: (position: { x: number; y: number }) => string | null;
}

/** While the stage is dragged, sigma still looks for a node under the pointer at every mouse
 * move (a read of its picking buffer, which waits for the GPU — the CPU on a software WebGL)
 * and redraws its hover layer each time the pointer crosses a node: on a dense graph, two
 * extra canvases per frame of a pan. Hovering is skipped while the button is down (a click
 * still finds its node: sigma looks it up after the button is released). */
export function skipHoverWhileDragging(renderer: object, dragging: () => boolean): void {
  const r = renderer as HoverPicking;
  const find = r.getNodeAtPosition.bind(renderer);
  r.getNodeAtPosition = (position) => (dragging() ? null : find(position));
}

/** What `hideEmptyLayers` reads of a sigma renderer (sigma 3; the sets are private members). */
export interface LayeredRenderer {
  getCanvases(): Record<string, HTMLCanvasElement>;
  getSetting(key: 'renderEdgeLabels' | 'enableEdgeEvents'): unknown;
  on(event: 'afterRender', fn: () => void): unknown;
  renderHighlightedNodes(): unknown;
  highlightedNodes: Set<string>;
  hoveredNode: string | null;
  displayedNodeLabels: Set<string>;
}

/** sigma keeps seven full-window canvases and the compositor pays for each one every frame,
 * drawn into or not (under Xvfb with a software GL, hiding four empty ones of seven took a
 * redraw from 6 to 10 fps). The layers with nothing on them are hidden: edge labels (never
 * drawn here), labels (none at a distant zoom) and the hover layers (no hovered or
 * highlighted node). Checked after each render and each hover drawing. */
export function hideEmptyLayers(renderer: object): void {
  const r = renderer as LayeredRenderer;
  const c = r.getCanvases();
  const show = (el: HTMLCanvasElement | undefined, on: boolean) => {
    if (el) el.style.visibility = on ? '' : 'hidden';
  };
  const hovers = () => {
    const on = r.highlightedNodes.size > 0 || r.hoveredNode !== null;
    show(c.hovers, on);
    show(c.hoverNodes, on);
  };
  const drawHovers = r.renderHighlightedNodes.bind(renderer);
  r.renderHighlightedNodes = () => {
    const out = drawHovers();
    hovers();
    return out;
  };
  r.on('afterRender', () => {
    show(c.edgeLabels, Boolean(r.getSetting('renderEdgeLabels') || r.getSetting('enableEdgeEvents')));
    show(c.labels, r.displayedNodeLabels.size > 0);
    hovers();
  });
}
