import { describe, expect, it } from 'vitest';
import { relativeTime, statusLabel } from './format';

describe('format', () => {
  it('labels every status', () => {
    expect(statusLabel('executing')).toBe('Executing');
    expect(statusLabel('abandoned')).toBe('Abandoned');
  });

  it('shows recency coarsely', () => {
    const now = Date.UTC(2026, 10, 29, 12, 0, 0);
    expect(relativeTime(now - 10_000, now)).toBe('just now');
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(relativeTime(Date.UTC(2026, 0, 2), now)).toBe('2026-01-02');
    expect(relativeTime(now + 60_000, now)).toBe('just now');
  });
});
