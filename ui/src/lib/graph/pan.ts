// Pan and zoom without redrawing. A camera move changes no pixel of the drawing, only where it
// sits: while the stage is dragged or the camera animates (inertia, wheel zoom), the view moves
// the last drawn layers with one CSS transform instead of letting sigma redraw every WebGL and
// canvas layer (on a software GL, each redraw costs more than a frame). The drawing is redone
// once the move ends, or as soon as anything else changed (graph, settings, size, rotation).

/** A camera state as sigma keeps it. */
export interface CameraLike {
  x: number;
  y: number;
  ratio: number;
  angle: number;
}

export interface Point {
  x: number;
  y: number;
}

/** A uniform scale then a translation, in CSS pixels: `p' = s·p + (tx, ty)`. */
export interface Similarity {
  s: number;
  tx: number;
  ty: number;
}

/** The transform taking the picture drawn with camera `drawn` to where camera `now` puts it,
 * from where two framed-graph points land under each (`view(point, camera)`); null when the
 * cameras differ by a rotation (not a scale and a shift) or the points collapse. */
export function moveBetween(
  drawn: CameraLike,
  now: CameraLike,
  view: (p: Point, camera: CameraLike) => Point,
): Similarity | null {
  if (drawn.angle !== now.angle) return null;
  const p = { x: 0, y: 0 };
  const q = { x: 1, y: 1 };
  const a0 = view(p, drawn);
  const a1 = view(q, drawn);
  const b0 = view(p, now);
  const b1 = view(q, now);
  const before = Math.hypot(a1.x - a0.x, a1.y - a0.y);
  const after = Math.hypot(b1.x - b0.x, b1.y - b0.y);
  if (!(before > 0) || !Number.isFinite(after)) return null;
  const s = after / before;
  const out = { s, tx: b0.x - s * a0.x, ty: b0.y - s * a0.y };
  return Number.isFinite(out.tx) && Number.isFinite(out.ty) && s > 0 ? out : null;
}

/** The CSS `transform` of a similarity (origin at the layer's top left corner). */
export function cssTransform(m: Similarity): string {
  return `matrix(${m.s}, 0, 0, ${m.s}, ${m.tx}, ${m.ty})`;
}

/** What `panByTransform` needs of a sigma renderer (sigma 3: `render`, `refresh` and the
 * scheduled frame are instance members, so overriding them on the instance is what its own
 * camera listener and refreshes call). */
export interface TransformableRenderer {
  render(): unknown;
  refresh(opts?: unknown): unknown;
  renderFrame?: number | null;
  getCamera(): { getState(): CameraLike; isAnimated(): boolean };
  getCanvases(): Record<string, HTMLCanvasElement>;
  getContainer(): HTMLElement;
  framedGraphToViewport(p: Point, override?: { cameraState?: CameraLike }): Point;
  getMouseCaptor(): { on(event: 'mouseup', fn: () => void): unknown };
}

export interface PanControl {
  /** A moved (not redrawn) picture is on screen: picking buffers are stale. */
  moved(): boolean;
  /** Undo the override (the renderer draws every frame again). */
  restore(): void;
}

/** Draw `layers` (in their stacking order) into `target`, sized like them; false when the
 * target has no 2D context. A WebGL layer is read back here, so this runs right after a draw,
 * before the browser presents (and may discard) its drawing buffer. */
export function copyLayers(target: HTMLCanvasElement, layers: HTMLCanvasElement[]): boolean {
  const first = layers[0];
  const ctx = target.getContext('2d');
  if (!first || !ctx) return false;
  if (target.width !== first.width) target.width = first.width;
  if (target.height !== first.height) target.height = first.height;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, target.width, target.height);
  for (const layer of layers) if (layer.width > 0 && layer.height > 0) ctx.drawImage(layer, 0, 0, target.width, target.height);
  return true;
}

/**
 * Makes camera moves of `renderer` cheap: while `moving()` (the stage is dragged) or the camera
 * animates, a frame only moves a picture; any refresh (graph or settings change) marks the
 * drawing dirty and the next frame is drawn for real.
 *
 * The picture is one canvas: when a move starts, the frame is drawn once and its layers (sigma
 * keeps six full-window canvases, three of them WebGL) are copied into it, and they are hidden
 * until the move ends. A compositor pays for every layer of every frame, drawn into or not
 * (measured under Xvfb with a software GL: one moved layer ran at about three times the frame
 * rate of six), so the move costs one layer. Where no 2D canvas is available the layers
 * themselves are moved. `mouse` (the event layer) never moves: sigma reads pointer positions
 * relative to it.
 */
export function panByTransform(renderer: TransformableRenderer, moving: () => boolean): PanControl {
  const r = renderer;
  // sigma's own methods live on its prototype; an instance member (if any) is put back as is.
  const own = { render: Object.getOwnPropertyDescriptor(r, 'render'), refresh: Object.getOwnPropertyDescriptor(r, 'refresh') };
  const draw = r.render.bind(r);
  const refresh = r.refresh.bind(r);
  const box = r.getContainer();
  const canvases = r.getCanvases();
  const layers = Object.entries(canvases)
    .filter(([id]) => id !== 'mouse')
    .map(([, el]) => el)
    .sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
  for (const el of layers) el.style.transformOrigin = '0 0';
  const picture = document.createElement('canvas');
  picture.className = 'sigma-moved';
  Object.assign(picture.style, { position: 'absolute', left: '0', top: '0', transformOrigin: '0 0', visibility: 'hidden', pointerEvents: 'none' });
  if (canvases.mouse?.parentNode === box) box.insertBefore(picture, canvases.mouse);
  else box.appendChild(picture);

  let drawn: CameraLike | null = null;
  let size = { w: -1, h: -1 };
  let dirty = true;
  /** What is on screen: sigma's layers as drawn, the copy moved, or the layers moved. */
  let shown: 'drawn' | 'picture' | 'layers' = 'drawn';

  const realDraw = (now: CameraLike) => {
    dirty = false;
    drawn = { ...now };
    size = { w: box.offsetWidth, h: box.offsetHeight };
    return draw();
  };
  const showDrawn = () => {
    if (shown === 'picture') {
      picture.style.visibility = 'hidden';
      picture.style.transform = '';
      for (const el of layers) el.style.visibility = '';
    } else if (shown === 'layers') {
      for (const el of layers) el.style.transform = '';
    }
    shown = 'drawn';
  };

  r.refresh = (opts?: unknown) => {
    dirty = true;
    return refresh(opts);
  };
  r.render = () => {
    const camera = r.getCamera();
    const now = camera.getState();
    if (!dirty && drawn && (moving() || camera.isAnimated()) && box.offsetWidth === size.w && box.offsetHeight === size.h) {
      const m = moveBetween(drawn, now, (p, cameraState) => r.framedGraphToViewport(p, { cameraState }));
      if (m) {
        // What sigma's own render does first: the frame it may have scheduled is this one.
        if (r.renderFrame) cancelAnimationFrame(r.renderFrame);
        r.renderFrame = null;
        if (shown === 'drawn') {
          // The move starts: draw this frame, keep a copy, move the copy from now on.
          realDraw(now);
          // Layers hidden as empty (render.ts, hideEmptyLayers) add nothing to the copy.
          if (copyLayers(picture, layers.filter((el) => el.style.visibility !== 'hidden'))) {
            picture.style.width = `${size.w}px`;
            picture.style.height = `${size.h}px`;
            picture.style.visibility = 'visible';
            for (const el of layers) el.style.visibility = 'hidden';
            shown = 'picture';
          } else shown = 'layers';
          return r;
        }
        const t = cssTransform(m);
        if (shown === 'picture') picture.style.transform = t;
        else for (const el of layers) el.style.transform = t;
        return r;
      }
    }
    showDrawn();
    return realDraw(now);
  };

  // A drag released where the pointer last moved changes no camera state, so no frame follows:
  // draw once it is over (after sigma's own release handling, which clears its moving flags).
  r.getMouseCaptor().on('mouseup', () =>
    setTimeout(() => {
      if (shown !== 'drawn' && !moving() && !r.getCamera().isAnimated()) r.render();
    }, 0),
  );

  return {
    moved: () => shown !== 'drawn',
    restore() {
      showDrawn();
      picture.remove();
      for (const key of ['render', 'refresh'] as const) {
        const d = own[key];
        if (d) Object.defineProperty(r, key, d);
        else delete (r as Partial<TransformableRenderer>)[key];
      }
    },
  };
}
