import { describe, expect, it } from 'vitest';
import { connectionFailureHint } from './setup';

describe('connectionFailureHint', () => {
  it('names each step of the path that can fail', () => {
    const hints = new Set(
      (['llm.dns', 'llm.connect_refused', 'llm.connect_timeout', 'llm.tls', 'llm.unauthorized', 'llm.model_not_found', 'llm.endpoint_not_found', 'llm.deadline_exceeded'] as const).map(connectionFailureHint),
    );
    expect(hints.size).toBe(8);
    expect(connectionFailureHint('llm.connect_refused')).toMatch(/Nothing listens/);
    expect(connectionFailureHint('llm.model_not_found')).toMatch(/model/);
  });

  it('has a headline for any other code', () => {
    expect(connectionFailureHint('store.corrupt')).toBe('The model could not be reached.');
  });
});
