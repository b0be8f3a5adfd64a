/**
 * Measured row heights by key. A row not measured yet counts as the mean of those measured
 * (the given estimate before any is): rows of one list look alike, so rows put in front land
 * close to where they will settle.
 */
export class Heights {
  #byKey = new Map<number, number>();
  #sum = 0;

  get(key: number): number | undefined {
    return this.#byKey.get(key);
  }

  set(key: number, height: number) {
    if (height <= 0) return;
    this.#sum += height - (this.#byKey.get(key) ?? 0);
    this.#byKey.set(key, height);
  }

  /** The height an unmeasured row counts as. */
  guess(estimate: number): number {
    return this.#byKey.size ? this.#sum / this.#byKey.size : estimate;
  }

  /** offsets[i] is the top of row i; offsets[n] the total height. */
  offsets(keys: number[], estimate: number): number[] {
    const out = new Array<number>(keys.length + 1);
    const guess = this.guess(estimate);
    let y = 0;
    for (let i = 0; i < keys.length; i++) {
      out[i] = y;
      y += this.#byKey.get(keys[i]!) ?? guess;
    }
    out[keys.length] = y;
    return out;
  }
}

/** The rows [start, end) that intersect the viewport widened by `overscan` pixels each way. */
export function visibleRange(offsets: number[], scrollTop: number, viewHeight: number, overscan: number) {
  const n = offsets.length - 1;
  if (n <= 0) return { start: 0, end: 0 };
  const top = Math.max(0, scrollTop - overscan);
  const bottom = scrollTop + viewHeight + overscan;
  // The last row starting at or above `top`.
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= top) lo = mid;
    else hi = mid - 1;
  }
  const start = lo;
  let end = start;
  while (end < n && offsets[end]! < bottom) end++;
  return { start, end: Math.max(end, Math.min(n, start + 1)) };
}
