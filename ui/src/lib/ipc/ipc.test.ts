import { describe, expect, it } from 'vitest';
import { NomosError, domainOf, fixedInSettings, toNomosError } from './index';

describe('toNomosError', () => {
  it('keeps the code and message the shell sent', () => {
    const err = toNomosError({ code: 'store.schema_too_new', message: 'Update Nomos.' });
    expect(err).toBeInstanceOf(NomosError);
    expect(err.code).toBe('store.schema_too_new');
    expect(err.message).toBe('Update Nomos.');
    expect(err.retryable).toBe(false);
  });

  it('keeps whether the shell says trying again may help', () => {
    expect(toNomosError({ code: 'store.busy', message: 'Busy.', retryable: true }).retryable).toBe(true);
    expect(toNomosError('boom').retryable).toBe(true);
  });

  it('wraps a bare string or Error without losing the text', () => {
    expect(toNomosError('boom').message).toBe('boom');
    expect(toNomosError(new Error('bang')).code).toBe('ipc.failed');
  });

  it('never leaves the operator with an empty message', () => {
    expect(toNomosError(undefined).message).not.toBe('');
  });
});

describe('error codes', () => {
  it('names the part of Nomos that failed', () => {
    expect(domainOf('llm.credentials.missing')).toBe('llm');
    expect(domainOf('auth.sign_in.revoked')).toBe('auth');
  });

  it('sends the operator to Settings only for what Settings can fix', () => {
    expect(fixedInSettings('llm.no_api_key')).toBe(true);
    expect(fixedInSettings('inventory.invalid')).toBe(true);
    expect(fixedInSettings('auth.sign_in_required')).toBe(true);
    expect(fixedInSettings('llm.rate_limited')).toBe(false);
    expect(fixedInSettings('store.corrupt')).toBe(false);
    expect(fixedInSettings('agent.busy')).toBe(false);
  });
});
