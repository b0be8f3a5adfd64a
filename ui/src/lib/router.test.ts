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

  it.each([
    ['#/sessions/42?message=9', { name: 'chat', sessionId: 42, messageId: 9 }],
    ['#/sessions/42?message=0', { name: 'chat', sessionId: 42 }],
    ['#/sessions/42?message=abc', { name: 'chat', sessionId: 42 }],
    ['#/sessions/42?other=1&message=12', { name: 'chat', sessionId: 42, messageId: 12 }],
    ['#/sessions/42?', { name: 'chat', sessionId: 42 }],
  ])('reads ?message=ID of %s', (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });

  it('round-trips through hrefFor', () => {
    for (const hash of ['#/', '#/sessions/7', '#/sessions/7?message=3', '#/graph', '#/nope']) {
      expect(hrefFor(parseRoute(hash))).toBe(hash);
    }
  });
});
