import { describe, expect, it } from 'vitest';
import { Heights, visibleRange } from './virtual';

describe('virtual window', () => {
  const keys = Array.from({ length: 10_000 }, (_, i) => i + 1);

  it('offsets use the estimate before any row is measured', () => {
    const h = new Heights();
    h.set(3, 0); // a hidden row measures 0: it stays unmeasured
    expect(h.offsets([1, 2, 3], 50)).toEqual([0, 50, 100, 150]);
  });

  it('offsets use measured heights and their mean for the rest', () => {
    const h = new Heights();
    h.set(2, 300);
    h.set(4, 100);
    expect(h.offsets([1, 2, 3, 4], 50)).toEqual([0, 200, 500, 700, 800]);
    // Measured again: the mean follows the new height, not both.
    h.set(2, 100);
    expect(h.guess(50)).toBe(100);
  });

  it.each([
    [0, 800, 0],
    [450_000, 800, 0],
    [999_200, 800, 0],
    [10_000, 600, 200],
  ])('only rows near the viewport (scrollTop %s, height %s)', (top, view, overscan) => {
    const off = new Heights().offsets(keys, 100);
    const { start, end } = visibleRange(off, top, view, overscan);
    expect(end - start).toBeLessThanOrEqual(Math.ceil((view + 2 * overscan) / 100) + 2);
    expect(end).toBeGreaterThan(start);
    // The rows cover the viewport.
    expect(off[start]!).toBeLessThanOrEqual(Math.max(0, top - overscan));
    expect(off[end]!).toBeGreaterThanOrEqual(Math.min(off[keys.length]!, top + view));
  });

  it('variable heights: a tall row above keeps the window right', () => {
    const h = new Heights();
    for (const k of keys) h.set(k, 100);
    h.set(1, 50_000);
    const off = h.offsets(keys, 100);
    const { start } = visibleRange(off, 50_050, 500, 0);
    expect(start).toBe(1);
    const r = visibleRange(off, 10_000, 500, 0);
    expect(r).toEqual({ start: 0, end: 1 });
  });

  it('an empty list has no rows', () => {
    expect(visibleRange([0], 0, 800, 800)).toEqual({ start: 0, end: 0 });
  });
});
