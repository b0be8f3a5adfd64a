import { describe, expect, it } from 'vitest';
import { FRAME_SAMPLES, FrameMeter, MIN_PIXEL_RATIO, SLOW_FRAME_MS, hideEmptyLayers, nextPixelRatio, overridePixelRatio, renderCost, skipHoverWhileDragging } from './render';

describe('adaptive pixel ratio', () => {
  it('halves the ratio when the median frame is slow, down to the floor', () => {
    const slow = Array(FRAME_SAMPLES).fill(SLOW_FRAME_MS * 3);
    expect(nextPixelRatio(slow, 2)).toBe(1);
    expect(nextPixelRatio(slow, 1)).toBe(MIN_PIXEL_RATIO);
    expect(nextPixelRatio(slow, MIN_PIXEL_RATIO)).toBe(MIN_PIXEL_RATIO);
    expect(nextPixelRatio(slow, 0.3)).toBe(0.3);
  });

  it('keeps the ratio on fast frames, too few samples, or one outlier', () => {
    expect(nextPixelRatio(Array(FRAME_SAMPLES).fill(16), 1)).toBe(1);
    expect(nextPixelRatio(Array(FRAME_SAMPLES - 1).fill(500), 1)).toBe(1);
    expect(nextPixelRatio([16, 900, 17], 2)).toBe(2);
    expect(nextPixelRatio([90, 16, 95], 1)).toBe(MIN_PIXEL_RATIO);
    // Only the latest samples count: slow frames before a fast run do not lower it.
    expect(nextPixelRatio([400, 400, 400, 16, 16, 16], 1)).toBe(1);
    expect(nextPixelRatio(Array(FRAME_SAMPLES).fill(100), Number.NaN)).toBe(MIN_PIXEL_RATIO);
  });

  it('measures a frame up to the second animation frame after the render', () => {
    let clock = 0;
    const queue: ((t: number) => void)[] = [];
    const meter = new FrameMeter((cb) => queue.push(cb), () => clock);
    const seen: number[][] = [];
    meter.start((s) => seen.push([...s]));
    meter.start(() => seen.push([-1])); // one measure at a time
    clock = 40;
    queue.shift()?.(clock);
    expect(seen).toEqual([]);
    clock = 95;
    queue.shift()?.(clock);
    expect(seen).toEqual([[95]]);
    expect(queue).toHaveLength(0);
  });

  it('overrides what sigma reads and restores it', () => {
    const win = { devicePixelRatio: 1 };
    const undo = overridePixelRatio(win, 0.5);
    expect(win.devicePixelRatio).toBe(0.5);
    undo();
    expect(win.devicePixelRatio).toBe(1);
    const own = {};
    Object.defineProperty(own, 'devicePixelRatio', { configurable: true, value: 2 });
    overridePixelRatio(own as { devicePixelRatio: number }, 1)();
    expect((own as { devicePixelRatio: number }).devicePixelRatio).toBe(2);
  });
});

describe('renderCost', () => {
  it('keeps everything on small graphs, lightens frames of big ones', () => {
    expect(renderCost(50, 120)).toEqual({ hideLabelsOnMove: false, edgeType: 'arrow' });
    expect(renderCost(5000, 15000)).toEqual({ hideLabelsOnMove: true, edgeType: 'line' });
    expect(renderCost(1000, 3000).hideLabelsOnMove).toBe(true);
    expect(renderCost(1000, 3000).edgeType).toBe('arrow');
  });
});

describe('hover while dragging', () => {
  it('finds no node (and reads no picking buffer) while the button is down, finds it otherwise', () => {
    let reads = 0;
    let down = false;
    const renderer = {
      under: 'host:web',
      getNodeAtPosition(this: { under: string }, _p: { x: number; y: number }): string | null {
        reads++;
        return this.under;
      },
    };
    skipHoverWhileDragging(renderer, () => down);
    expect(renderer.getNodeAtPosition({ x: 1, y: 1 })).toBe('host:web');
    down = true;
    for (let i = 0; i < 50; i++) expect(renderer.getNodeAtPosition({ x: i, y: i })).toBeNull();
    expect(reads).toBe(1);
    down = false;
    expect(renderer.getNodeAtPosition({ x: 2, y: 2 })).toBe('host:web');
    expect(reads).toBe(2);
  });
});

describe('hideEmptyLayers', () => {
  function fake() {
    const canvases = Object.fromEntries(
      ['edges', 'edgeLabels', 'nodes', 'labels', 'hovers', 'hoverNodes', 'mouse'].map((id) => [id, document.createElement('canvas')]),
    ) as Record<string, HTMLCanvasElement>;
    const after: (() => void)[] = [];
    const r = {
      settings: { renderEdgeLabels: false, enableEdgeEvents: false } as Record<string, boolean>,
      highlightedNodes: new Set<string>(),
      hoveredNode: null as string | null,
      displayedNodeLabels: new Set<string>(),
      hoverDraws: 0,
      getCanvases: () => canvases,
      getSetting(k: string) {
        return this.settings[k];
      },
      on: (_e: 'afterRender', fn: () => void) => after.push(fn),
      renderHighlightedNodes() {
        this.hoverDraws++;
      },
      render() {
        this.renderHighlightedNodes();
        after.forEach((fn) => fn());
      },
    };
    return { r, canvases };
  }
  const shown = (c: Record<string, HTMLCanvasElement>) => Object.keys(c).filter((id) => c[id]!.style.visibility !== 'hidden');

  it('shows only the layers with something on them after a render', () => {
    const { r, canvases } = fake();
    hideEmptyLayers(r);
    r.render();
    expect(shown(canvases)).toEqual(['edges', 'nodes', 'mouse']);
    r.displayedNodeLabels.add('host:a');
    r.highlightedNodes.add('host:a');
    r.render();
    expect(shown(canvases)).toEqual(['edges', 'nodes', 'labels', 'hovers', 'hoverNodes', 'mouse']);
    r.settings.renderEdgeLabels = true;
    r.render();
    expect(shown(canvases)).toContain('edgeLabels');
  });

  it('a hover drawn between renders shows the hover layers, and its end hides them', () => {
    const { r, canvases } = fake();
    hideEmptyLayers(r);
    r.render();
    r.hoveredNode = 'service:nginx';
    r.renderHighlightedNodes();
    expect(r.hoverDraws).toBe(2);
    expect(shown(canvases)).toEqual(['edges', 'nodes', 'hovers', 'hoverNodes', 'mouse']);
    r.hoveredNode = null;
    r.renderHighlightedNodes();
    expect(shown(canvases)).toEqual(['edges', 'nodes', 'mouse']);
  });
});
