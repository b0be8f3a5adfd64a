import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, waitFor } from '@testing-library/svelte';
import type { SessionSummary } from '../ipc';

// A plain function rather than vi.fn: the rejected promise of a failing call is part of the
// scenario, and vi.fn reports a rejecting implementation as a test error.
let listSessions: () => Promise<SessionSummary[]> = async () => [];
vi.mock('../ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../ipc')>();
  return { ...actual, ipc: { ...actual.ipc, listSessions: () => listSessions() } };
});

import SessionsSidebar from './SessionsSidebar.svelte';

const row = (id: number, title: string): SessionSummary => ({
  id,
  title,
  goal: null,
  status: 'done',
  outcome: 'success',
  summary: null,
  created_at_ms: Date.now(),
  last_active_at_ms: Date.now(),
});

describe('SessionsSidebar', () => {
  afterEach(() => cleanup());

  it('lists the sessions the shell returns', async () => {
    listSessions = async () => [row(2, 'Update the fleet'), row(1, 'Check disks')];
    render(SessionsSidebar);
    await waitFor(() => expect(screen.getAllByTestId('session-item')).toHaveLength(2));
    expect(screen.getByText('Update the fleet')).toBeTruthy();
    expect(screen.getAllByText('Done')).toHaveLength(2);
  });

  it('shows the error message with a retry, not an empty list', async () => {
    listSessions = () => Promise.reject({ code: 'store.corrupt', message: 'The database file is damaged.' });
    render(SessionsSidebar);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('The database file is damaged.');
    expect(screen.getByRole('button', { name: 'Retry' })).toBeTruthy();
  });

  it('says when there are no sessions yet', async () => {
    listSessions = async () => [];
    render(SessionsSidebar);
    expect((await screen.findByTestId('sessions-empty')).textContent).toContain('No sessions yet');
  });
});
