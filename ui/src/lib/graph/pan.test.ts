import { afterEach, describe, expect, it, vi } from 'vitest';
import { cssTransform, moveBetween, panByTransform, type CameraLike, type Point, type TransformableRenderer } from './pan';

// Sigma's framed graph → viewport mapping for a 800×600 viewport, without rotation: the camera
// (x, y) is the framed point shown at the centre, `ratio` the zoom (bigger: further out).
function view(p: Point, c: CameraLike): Point {
  const scale = 600 / c.ratio;
  return { x: 400 + (p.x - c.x) * scale, y: 300 - (p.y - c.y) * scale };
}

const at = (x: number, y: number, ratio = 1, angle = 0): CameraLike => ({ x, y, ratio, angle });

describe('moveBetween', () => {
  it('maps every drawn point to where the new camera shows it (pan and zoom)', () => {
    for (const [drawn, now] of [
      [at(0.5, 0.5), at(0.6, 0.45)],
      [at(0.5, 0.5), at(0.5, 0.5, 0.5)],
      [at(0.2, 0.7, 2), at(0.3, 0.1, 0.7)],
    ] as const) {
      const m = moveBetween(drawn, now, view);
      expect(m).not.toBeNull();
      for (const p of [
        { x: 0.1, y: 0.9 },
        { x: 0.5, y: 0.5 },
        { x: 0.77, y: 0.03 },
      ]) {
        const before = view(p, drawn);
        const after = view(p, now);
        expect(m!.s * before.x + m!.tx).toBeCloseTo(after.x, 6);
        expect(m!.s * before.y + m!.ty).toBeCloseTo(after.y, 6);
      }
    }
    expect(moveBetween(at(0.5, 0.5), at(0.5, 0.5), view)).toEqual({ s: 1, tx: 0, ty: 0 });
  });

  it('gives up on a rotation or a degenerate mapping (the view then redraws)', () => {
    expect(moveBetween(at(0.5, 0.5), at(0.5, 0.5, 1, 0.3), view)).toBeNull();
    expect(moveBetween(at(0.5, 0.5), at(0.5, 0.5), () => ({ x: 1, y: 1 }))).toBeNull();
    expect(moveBetween(at(0.5, 0.5), at(0.5, 0.5, 0), view)).toBeNull();
  });

  it('writes a CSS matrix', () => {
    expect(cssTransform({ s: 2, tx: -10, ty: 5.5 })).toBe('matrix(2, 0, 0, 2, -10, 5.5)');
  });
});

/** A stand-in for sigma with the members panByTransform uses, counting real draws. */
function fakeRenderer() {
  const container = document.createElement('div');
  const canvases = Object.fromEntries(
    ['edges', 'nodes', 'labels', 'mouse'].map((id) => {
      const c = document.createElement('canvas');
      c.width = 800;
      c.height = 600;
      container.appendChild(c);
      return [id, c];
    }),
  ) as Record<'edges' | 'nodes' | 'labels' | 'mouse', HTMLCanvasElement>;
  Object.defineProperty(container, 'offsetWidth', { value: 800, configurable: true });
  Object.defineProperty(container, 'offsetHeight', { value: 600, configurable: true });
  const upListeners: (() => void)[] = [];
  let state = at(0.5, 0.5);
  let animated = false;
  const r = {
    draws: 0,
    refreshes: 0,
    renderFrame: null as number | null,
    render() {
      this.draws++;
      return this;
    },
    refresh() {
      this.refreshes++;
      this.render();
      return this;
    },
    getCamera: () => ({ getState: () => state, isAnimated: () => animated }),
    getCanvases: () => canvases,
    getContainer: () => container,
    framedGraphToViewport: (p: Point, o?: { cameraState?: CameraLike }) => view(p, o?.cameraState ?? state),
    getMouseCaptor: () => ({ on: (_e: 'mouseup', fn: () => void) => upListeners.push(fn) }),
  };
  const picture = () => container.querySelector<HTMLCanvasElement>('canvas.sigma-moved')!;
  return {
    r,
    canvases,
    container,
    picture,
    move: (c: CameraLike) => (state = c),
    animate: (on: boolean) => (animated = on),
    release: () => upListeners.forEach((fn) => fn()),
  };
}

/** A 2D context that records which layers were copied (jsdom has no canvas drawing). */
function with2d() {
  const copied: HTMLCanvasElement[] = [];
  const ctx = { setTransform() {}, clearRect() {}, drawImage: (c: HTMLCanvasElement) => copied.push(c) };
  const spy = vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation((() => ctx) as never);
  return { copied, spy };
}

function without2d() {
  return vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockImplementation((() => null) as never);
}

describe('panByTransform', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('a move draws once, copies the layers into one picture and moves only that', () => {
    vi.useFakeTimers();
    const { copied } = with2d();
    const f = fakeRenderer();
    let dragging = false;
    const pan = panByTransform(f.r as unknown as TransformableRenderer, () => dragging);
    // The picture sits under the event layer, hidden until a move.
    expect(f.picture().nextElementSibling).toBe(f.canvases.mouse);
    expect(f.picture().style.visibility).toBe('hidden');
    f.r.render(); // the first frame is drawn
    expect(f.r.draws).toBe(1);

    dragging = true;
    f.move(at(0.6, 0.5));
    f.r.render(); // the move starts: drawn at this camera, then copied
    expect(f.r.draws).toBe(2);
    expect(copied).toEqual([f.canvases.edges, f.canvases.nodes, f.canvases.labels]);
    expect(f.picture().style.visibility).toBe('visible');
    expect(f.picture().width).toBe(800);
    for (const id of ['edges', 'nodes', 'labels'] as const) expect(f.canvases[id].style.visibility).toBe('hidden');
    expect(f.canvases.mouse.style.visibility, 'the event layer stays').toBe('');

    f.move(at(0.7, 0.5));
    f.r.render();
    f.r.render();
    expect(f.r.draws).toBe(2);
    expect(pan.moved()).toBe(true);
    expect(f.picture().style.transform).toBe('matrix(1, 0, 0, 1, -60, 0)');
    expect(copied.length, 'copied once per move').toBe(3);

    // Released where the pointer last was: no camera change, the release draws.
    dragging = false;
    f.release();
    expect(f.r.draws).toBe(2);
    vi.runAllTimers();
    expect(f.r.draws).toBe(3);
    expect(pan.moved()).toBe(false);
    expect(f.picture().style.visibility).toBe('hidden');
    expect(f.picture().style.transform).toBe('');
    for (const id of ['edges', 'nodes', 'labels'] as const) expect(f.canvases[id].style.visibility).toBe('');
  });

  it('layers hidden as empty are left out of the copy', () => {
    const { copied } = with2d();
    const f = fakeRenderer();
    panByTransform(f.r as unknown as TransformableRenderer, () => true);
    f.r.render();
    f.canvases.labels.style.visibility = 'hidden';
    f.move(at(0.6, 0.5));
    f.r.render();
    expect(copied).toEqual([f.canvases.edges, f.canvases.nodes]);
  });

  it('without a 2D canvas the layers themselves move', () => {
    without2d();
    const f = fakeRenderer();
    const pan = panByTransform(f.r as unknown as TransformableRenderer, () => true);
    f.r.render();
    f.move(at(0.6, 0.5));
    f.r.render();
    expect(f.r.draws).toBe(2);
    f.move(at(0.7, 0.5));
    f.r.render();
    expect(f.r.draws).toBe(2);
    expect(pan.moved()).toBe(true);
    expect(f.canvases.nodes.style.transform).toBe('matrix(1, 0, 0, 1, -60, 0)');
    expect(f.canvases.edges.style.transform).toBe(f.canvases.nodes.style.transform);
    expect(f.canvases.mouse.style.transform).toBe('');
    f.r.refresh();
    expect(f.canvases.nodes.style.transform).toBe('');
    expect(pan.moved()).toBe(false);
  });

  it('camera animations (inertia, wheel zoom) move too; their last frame draws', () => {
    with2d();
    const f = fakeRenderer();
    const pan = panByTransform(f.r as unknown as TransformableRenderer, () => false);
    f.r.render();
    f.animate(true);
    f.move(at(0.5, 0.5, 0.8));
    f.r.render(); // drawn and copied
    f.move(at(0.5, 0.5, 0.4));
    f.r.render();
    expect(f.r.draws).toBe(2);
    expect(f.picture().style.transform).toBe('matrix(2, 0, 0, 2, -400, -300)');
    f.animate(false);
    f.r.render();
    expect(f.r.draws).toBe(3);
    expect(pan.moved()).toBe(false);
  });

  it('draws for real when anything else changed: a refresh, a resize, a rotation', () => {
    with2d();
    const f = fakeRenderer();
    const pan = panByTransform(f.r as unknown as TransformableRenderer, () => true);
    f.r.render();
    f.move(at(0.6, 0.5));
    f.r.render(); // move start
    f.r.refresh();
    expect(f.r.draws).toBe(3);
    expect(f.r.refreshes).toBe(1);
    expect(pan.moved()).toBe(false);

    f.move(at(0.7, 0.5));
    f.r.render(); // a new move start
    f.move(at(0.8, 0.5));
    f.r.render();
    expect(f.r.draws).toBe(4);
    Object.defineProperty(f.container, 'offsetWidth', { value: 700, configurable: true });
    f.r.render();
    expect(f.r.draws).toBe(5);
    expect(pan.moved()).toBe(false);

    f.move(at(0.8, 0.5, 1, 1));
    f.r.render();
    expect(f.r.draws).toBe(6);
    expect(pan.moved()).toBe(false);
  });

  it('cancels the frame sigma scheduled, so the next camera update schedules another', () => {
    with2d();
    const f = fakeRenderer();
    panByTransform(f.r as unknown as TransformableRenderer, () => true);
    f.r.render();
    const cancel = vi.spyOn(globalThis, 'cancelAnimationFrame').mockImplementation(() => {});
    for (const x of [0.55, 0.6]) {
      f.r.renderFrame = 42;
      f.move(at(x, 0.5));
      f.r.render();
      expect(cancel).toHaveBeenCalledWith(42);
      expect(f.r.renderFrame).toBeNull();
    }
  });

  it('restore gives sigma its own render back and puts the layers in place', () => {
    with2d();
    const f = fakeRenderer();
    const own = f.r.render;
    const pan = panByTransform(f.r as unknown as TransformableRenderer, () => true);
    expect(f.r.render).not.toBe(own);
    f.r.render();
    f.move(at(0.6, 0.5));
    f.r.render();
    pan.restore();
    expect(f.picture()).toBeNull();
    expect(f.canvases.nodes.style.visibility).toBe('');
    expect(f.r.render).toBe(own);
    f.r.render();
    f.r.render();
    expect(f.r.draws).toBe(4);
  });
});
