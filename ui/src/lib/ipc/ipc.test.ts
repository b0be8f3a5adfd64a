import { describe, expect, it } from 'vitest';
import { NomosError, toNomosError } from './index';

describe('toNomosError', () => {
  it('keeps the code and message the shell sent', () => {
    const err = toNomosError({ code: 'store.schema_too_new', message: 'Update Nomos.' });
    expect(err).toBeInstanceOf(NomosError);
    expect(err.code).toBe('store.schema_too_new');
    expect(err.message).toBe('Update Nomos.');
  });

  it('wraps a bare string or Error without losing the text', () => {
    expect(toNomosError('boom').message).toBe('boom');
    expect(toNomosError(new Error('bang')).code).toBe('ipc.failed');
  });

  it('never leaves the operator with an empty message', () => {
    expect(toNomosError(undefined).message).not.toBe('');
  });
});
