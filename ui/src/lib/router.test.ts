import { describe, expect, it } from 'vitest';
import { hrefFor, parseRoute } from './router.svelte';

describe('parseRoute', () => {
  it('maps the empty hash and #/ to a new chat', () => {
    expect(parseRoute('')).toEqual({ name: 'chat', sessionId: null });
    expect(parseRoute('#/')).toEqual({ name: 'chat', sessionId: null });
  });

  it('reads a session id', () => {
    expect(parseRoute('#/sessions/42')).toEqual({ name: 'chat', sessionId: 42 });
  });

  it('knows the graph route', () => {
    expect(parseRoute('#/graph')).toEqual({ name: 'graph' });
  });

  it('keeps unknown paths for the not-found view', () => {
    expect(parseRoute('#/sessions/abc')).toEqual({ name: 'not_found', path: '/sessions/abc' });
  });

  it('round-trips through hrefFor', () => {
    for (const hash of ['#/', '#/sessions/7', '#/graph', '#/nope']) {
      expect(hrefFor(parseRoute(hash))).toBe(hash);
    }
  });
});
