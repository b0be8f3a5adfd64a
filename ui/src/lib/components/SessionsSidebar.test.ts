import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import type { ImportedSession, SessionExportText, SessionHit, SessionSearchPage, SessionSearchQuery, SessionSummary } from '../ipc';

// Plain functions rather than vi.fn: the rejected promise of a failing call is part of the
// scenario, and vi.fn reports a rejecting implementation as a test error.
let listSessions: () => Promise<SessionSummary[]> = async () => [];
let searches: SessionSearchQuery[] = [];
let searchSessions: (q: SessionSearchQuery) => Promise<SessionSearchPage> = async () => ({ hits: [], has_more: false });
let exports: Array<[number, string]> = [];
let imports: string[] = [];
let importSession: (text: string) => Promise<ImportedSession> = async () => {
  throw { code: 'store.import_invalid', message: 'unset' };
};
vi.mock('../ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../ipc')>();
  return {
    ...actual,
    ipc: {
      ...actual.ipc,
      listSessions: () => listSessions(),
      searchSessions: (q: SessionSearchQuery) => {
        searches.push(q);
        return searchSessions(q);
      },
      exportSession: async (id: number, format: string): Promise<SessionExportText> => {
        exports.push([id, format]);
        return { file_name: `s${id}.${format}`, mime: 'text/plain', text: 'x' };
      },
      importSession: (text: string) => {
        imports.push(text);
        return importSession(text);
      },
    },
  };
});

import SessionsSidebar from './SessionsSidebar.svelte';
import { sessions } from '../sessions.svelte';

const row = (id: number, title: string, status: SessionSummary['status'] = 'done'): SessionSummary => ({
  id,
  title,
  goal: null,
  status,
  outcome: 'success',
  summary: null,
  created_at_ms: Date.now(),
  last_active_at_ms: Date.now(),
});

const hit = (sessionId: number, messageId: number | null, before: string, word: string): SessionHit => ({
  session: row(sessionId, `Session ${sessionId}`),
  source: messageId === null ? 'title' : 'stdout',
  message_id: messageId,
  role: null,
  execution_id: messageId === null ? null : 3,
  target: messageId === null ? null : 'host:web-01',
  snippet: [
    { text: before, hit: false },
    { text: word, hit: true },
  ],
  at_ms: 1,
});

function input(): HTMLInputElement {
  return screen.getByTestId('session-search') as HTMLInputElement;
}

describe('SessionsSidebar', () => {
  beforeEach(() => {
    sessions.search = '';
    sessions.status = null;
    sessions.hits = [];
    sessions.transferError = null;
    searches = [];
    exports = [];
    imports = [];
    location.hash = '#/';
  });
  afterEach(() => cleanup());

  it('lists the sessions the shell returns', async () => {
    listSessions = async () => [row(2, 'Update the fleet'), row(1, 'Check disks')];
    render(SessionsSidebar);
    await waitFor(() => expect(screen.getAllByTestId('session-item')).toHaveLength(2));
    expect(screen.getByText('Update the fleet')).toBeTruthy();
    expect(screen.getAllByText('Done').length).toBeGreaterThanOrEqual(2);
  });

  it('lists again when the window gets the focus back: sessions another process started show up', async () => {
    listSessions = async () => [row(1, 'Check disks')];
    render(SessionsSidebar);
    await waitFor(() => expect(screen.getAllByTestId('session-item')).toHaveLength(1));
    listSessions = async () => [row(2, 'Started in a terminal', 'executing'), row(1, 'Check disks')];
    window.dispatchEvent(new FocusEvent('focus'));
    await waitFor(() => expect(screen.getAllByTestId('session-item')).toHaveLength(2));
    expect(screen.getByText('Started in a terminal')).toBeTruthy();
  });

  it('labels a demo session from its field, never from its title', async () => {
    listSessions = async () => [
      { ...row(3, 'Check the disks'), demo: true },
      row(2, 'Demo: my own task about the demo host'),
      { ...row(1, 'demo'), demo: false },
    ];
    render(SessionsSidebar);
    await waitFor(() => expect(screen.getAllByTestId('session-item')).toHaveLength(3));
    const labelled = screen.getAllByTestId('session-item').map((item) => item.querySelector('[data-testid="demo-label"]') !== null);
    expect(labelled).toEqual([true, false, false]);
    expect(screen.getByTestId('demo-label').textContent).toBe('Demo');
  });

  it('labels a demo session among search hits too', async () => {
    listSessions = async () => [];
    searchSessions = async () => ({
      hits: [
        { ...hit(4, null, '', 'kernel'), session: { ...row(4, 'Check the kernel'), demo: true } },
        { ...hit(5, null, '', 'kernel'), session: row(5, 'Demo: kernel') },
      ],
      has_more: false,
    });
    render(SessionsSidebar);
    await fireEvent.input(input(), { target: { value: 'kernel' } });
    const hits = await screen.findAllByTestId('search-hit', {}, { timeout: 2000 });
    expect(hits.map((h) => h.querySelector('[data-testid="demo-label"]') !== null)).toEqual([true, false]);
  });

  it('shows the error message with a retry, not an empty list', async () => {
    listSessions = () => Promise.reject({ code: 'store.corrupt', message: 'The database file is damaged.' });
    render(SessionsSidebar);
    const alert = await screen.findByTestId('sessions-error');
    expect(alert.textContent).toContain('The database file is damaged.');
    expect(screen.getByRole('button', { name: 'Retry' })).toBeTruthy();
  });

  it('says when there are no sessions yet', async () => {
    listSessions = async () => [];
    render(SessionsSidebar);
    expect((await screen.findByTestId('sessions-empty')).textContent).toContain('No sessions yet');
  });

  it('debounces typing into one search and shows hits with marked snippets that open at the message', async () => {
    listSessions = async () => [row(1, 'One')];
    searchSessions = async () => ({
      hits: [hit(4, 17179869186, 'nginx version: ', '1.24.0'), hit(5, null, '', 'Nginx')],
      has_more: false,
    });
    render(SessionsSidebar);
    for (const text of ['n', 'ng', 'ngi', 'nginx']) {
      await fireEvent.input(input(), { target: { value: text } });
    }
    const hits = await screen.findAllByTestId('search-hit', {}, { timeout: 2000 });
    expect(searches).toEqual([{ text: 'nginx', statuses: undefined, limit: 30 }]);
    expect(hits).toHaveLength(2);
    expect(hits[0]?.getAttribute('href')).toBe('#/sessions/4?message=17179869186');
    expect(hits[1]?.getAttribute('href')).toBe('#/sessions/5');
    const marks = hits[0]?.querySelectorAll('mark');
    expect(marks?.length).toBe(1);
    expect(marks?.[0]?.textContent).toBe('1.24.0');
    expect(hits[0]?.textContent).toContain('Output · host:web-01');
  });

  it('renders snippet text as text, never as markup', async () => {
    listSessions = async () => [];
    searchSessions = async () => ({
      hits: [hit(4, 1, '<img src=x onerror=alert(1)>', '<b>bold</b>')],
      has_more: false,
    });
    render(SessionsSidebar);
    await fireEvent.input(input(), { target: { value: 'bold' } });
    const [h] = await screen.findAllByTestId('search-hit', {}, { timeout: 2000 });
    expect(h?.querySelector('img')).toBeNull();
    expect(h?.querySelector('mark b')).toBeNull();
    expect(h?.querySelector('mark')?.textContent).toBe('<b>bold</b>');
  });

  it('focuses the search with / or Ctrl+K, but / typed in a field stays text; Esc clears', async () => {
    listSessions = async () => [row(1, 'One')];
    searchSessions = async () => ({ hits: [hit(1, 2, 'a ', 'b')], has_more: false });
    render(SessionsSidebar);
    await screen.findAllByTestId('session-item');
    await fireEvent.keyDown(window, { key: '/' });
    expect(document.activeElement).toBe(input());
    input().blur();
    await fireEvent.keyDown(window, { key: 'k', ctrlKey: true });
    expect(document.activeElement).toBe(input());
    input().blur();
    const other = document.createElement('textarea');
    document.body.appendChild(other);
    other.focus();
    await fireEvent.keyDown(other, { key: '/' });
    expect(document.activeElement).toBe(other);
    other.remove();
    await fireEvent.input(input(), { target: { value: 'b' } });
    await screen.findAllByTestId('search-hit', {}, { timeout: 2000 });
    await fireEvent.keyDown(input(), { key: 'Escape' });
    expect(input().value).toBe('');
    await screen.findAllByTestId('session-item');
    expect(screen.queryByTestId('search-hits')).toBeNull();
  });

  it('the status filter narrows the list and the search', async () => {
    listSessions = async () => [row(1, 'Done one'), row(2, 'Failed one', 'failed')];
    searchSessions = async () => ({ hits: [], has_more: false });
    render(SessionsSidebar);
    await waitFor(() => expect(screen.getAllByTestId('session-item')).toHaveLength(2));
    await fireEvent.change(screen.getByTestId('status-filter'), { target: { value: 'failed' } });
    await waitFor(() => expect(screen.getAllByTestId('session-item')).toHaveLength(1));
    expect(screen.getByText('Failed one')).toBeTruthy();
    await fireEvent.input(input(), { target: { value: 'disk' } });
    await waitFor(() => expect(searches.at(-1)).toEqual({ text: 'disk', statuses: ['failed'], limit: 30 }), {
      timeout: 2000,
    });
    expect((await screen.findByTestId('sessions-empty')).textContent).toContain('No session matches in titles, messages or command output');
  });

  it('exports the open session as Markdown or JSON', async () => {
    Object.assign(URL, { createObjectURL: () => 'blob:x', revokeObjectURL: () => {} });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    listSessions = async () => [row(7, 'Seven')];
    location.hash = '#/';
    render(SessionsSidebar);
    expect(screen.queryByTestId('export-md')).toBeNull();
    location.hash = '#/sessions/7';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    await fireEvent.click(await screen.findByTestId('export-md'));
    await fireEvent.click(screen.getByTestId('export-json'));
    await waitFor(() => expect(exports).toEqual([[7, 'markdown'], [7, 'json']]));
    expect((await screen.findByTestId('transfer-notice')).textContent).toContain('JSON');
  });

  it('imports a chosen file and opens the new session; a refused file says why', async () => {
    listSessions = async () => [row(9, 'Imported')];
    importSession = async () => ({ session: row(9, 'Imported'), messages: 4, executions: 2 });
    render(SessionsSidebar);
    const picker = screen.getByTestId('import-file') as HTMLInputElement;
    const file = new File(['{"format":"nomos.session","version":1}'], 'x.json', { type: 'application/json' });
    await fireEvent.change(picker, { target: { files: [file] } });
    await waitFor(() => expect(location.hash).toBe('#/sessions/9'));
    expect(imports).toEqual(['{"format":"nomos.session","version":1}']);
    expect((await screen.findByTestId('transfer-notice')).textContent).toContain('Nothing ran');
    importSession = () =>
      Promise.reject({ code: 'store.import_invalid', message: 'This is not a valid Nomos session export: x.' });
    await fireEvent.change(picker, { target: { files: [file] } });
    expect((await screen.findByTestId('transfer-error')).textContent).toContain('not a valid Nomos session export');
  });
});
