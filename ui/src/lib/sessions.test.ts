import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ImportedSession, SessionExportText, SessionHit, SessionSearchPage, SessionSearchQuery, SessionSummary } from './ipc';

let calls = 0;
let rows: SessionSummary[] = [];
let searches: SessionSearchQuery[] = [];
let searchImpl: (q: SessionSearchQuery) => Promise<SessionSearchPage> = async () => ({ hits: [], has_more: false });
let exportImpl: (id: number, format: string) => Promise<SessionExportText> = async () => ({
  file_name: 'x.json',
  mime: 'application/json',
  text: '{}',
});
let importImpl: (text: string) => Promise<ImportedSession> = async () => {
  throw { code: 'store.import_invalid', message: 'not set' };
};
vi.mock('./ipc', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./ipc')>();
  return {
    ...actual,
    ipc: {
      ...actual.ipc,
      listSessions: async () => {
        calls += 1;
        return structuredClone(rows);
      },
      searchSessions: (query: SessionSearchQuery) => {
        searches.push(query);
        return searchImpl(query);
      },
      exportSession: (id: number, format: string) => exportImpl(id, format),
      importSession: (text: string) => importImpl(text),
    },
  };
});

import { saveText, sessions } from './sessions.svelte';
import { hrefFor, parseRoute } from './router.svelte';

const row = (id: number, title: string, status: SessionSummary['status'] = 'planning'): SessionSummary => ({
  id,
  title,
  goal: null,
  status,
  outcome: null,
  summary: null,
  created_at_ms: id,
  last_active_at_ms: id,
});

export const hit = (sessionId: number, messageId: number | null, words: string[]): SessionHit => ({
  session: row(sessionId, `Session ${sessionId}`, 'done'),
  source: messageId === null ? 'title' : 'stdout',
  message_id: messageId,
  role: null,
  execution_id: messageId === null ? null : 7,
  target: messageId === null ? null : 'host:web-01',
  snippet: words.flatMap((w) => [{ text: '… ', hit: false }, { text: w, hit: true }]),
  at_ms: 1,
});

describe('sessions', () => {
  beforeEach(async () => {
    rows = [row(3, 'Three'), row(2, 'Two', 'done'), row(1, 'One')];
    sessions.search = '';
    sessions.status = null;
    await sessions.refresh();
    calls = 0;
    searches = [];
    searchImpl = async () => ({ hits: [], has_more: false });
  });

  it('patches a status change in place and moves the row to the top, without a reload', () => {
    sessions.update(1, { status: 'done', outcome: 'success', summary: 'all fine' });
    expect(calls).toBe(0);
    expect(sessions.items.map((s) => s.id)).toEqual([1, 3, 2]);
    expect(sessions.items[0]).toMatchObject({ status: 'done', outcome: 'success', summary: 'all fine', title: 'One' });
  });

  it('reloads only for a session it does not list yet', async () => {
    rows = [row(4, 'Four'), ...rows];
    sessions.update(4, { status: 'planning', outcome: null, summary: null });
    await vi.waitFor(() => expect(sessions.items.map((s) => s.id)).toEqual([4, 3, 2, 1]));
    expect(calls).toBe(1);
  });

  it('takes a stored row another process changed, in its place by last activity, without a reload', () => {
    // Session 2 was finished elsewhere; 1 was left as this window knows it.
    sessions.sync({ ...row(2, 'Two', 'done'), outcome: 'success', summary: 'finished in a terminal', last_active_at_ms: 10 });
    expect(sessions.items.map((s) => s.id)).toEqual([2, 3, 1]);
    expect(sessions.items[0]).toMatchObject({ status: 'done', outcome: 'success', summary: 'finished in a terminal' });
    sessions.sync({ ...row(1, 'One'), status: 'done', last_active_at_ms: 1 });
    expect(sessions.items.map((s) => [s.id, s.status])).toEqual([
      [2, 'done'],
      [3, 'planning'],
      [1, 'done'],
    ]);
    // A row that already agrees moves nothing.
    sessions.sync({ ...row(3, 'Three'), last_active_at_ms: 99 });
    expect(sessions.items.map((s) => s.id)).toEqual([2, 3, 1]);
    expect(calls).toBe(0);
  });

  it('reloads the list for a stored row it does not list (a session another process started)', async () => {
    rows = [row(4, 'Four'), ...rows];
    sessions.sync(row(4, 'Four'));
    await vi.waitFor(() => expect(sessions.items.map((s) => s.id)).toEqual([4, 3, 2, 1]));
    expect(calls).toBe(1);
  });

  it('searches messages and output through search_sessions when the box holds text', async () => {
    searchImpl = async () => ({ hits: [hit(2, 99, ['nginx'])], has_more: true });
    sessions.search = '  nginx  ';
    sessions.status = 'done';
    await sessions.refresh();
    expect(calls).toBe(0);
    expect(searches).toEqual([{ text: 'nginx', statuses: ['done'], limit: 30 }]);
    expect(sessions.searching).toBe(true);
    expect(sessions.hits).toHaveLength(1);
    expect(sessions.hasMore).toBe(true);
    // The next page continues where the hits end.
    searchImpl = async () => ({ hits: [hit(1, 5, ['nginx'])], has_more: false });
    await sessions.more();
    expect(searches[1]).toMatchObject({ text: 'nginx', offset: 1 });
    expect(sessions.hits.map((h) => h.session.id)).toEqual([2, 1]);
    expect(sessions.hasMore).toBe(false);
    // Esc: back to the plain list.
    sessions.clearSearch();
    await vi.waitFor(() => expect(sessions.searching).toBe(false));
    await vi.waitFor(() => expect(calls).toBe(1));
    expect(sessions.hits).toEqual([]);
  });

  it('only the newest of racing searches lands', async () => {
    const pending: Array<(p: SessionSearchPage) => void> = [];
    searchImpl = () => new Promise((resolve) => pending.push(resolve));
    sessions.search = 'ngi';
    const first = sessions.refresh();
    sessions.search = 'nginx';
    const second = sessions.refresh();
    pending[1]?.({ hits: [hit(2, 1, ['nginx'])], has_more: false });
    pending[0]?.({ hits: [hit(3, 1, ['ngi']), hit(1, 2, ['ngi'])], has_more: true });
    await Promise.all([first, second]);
    expect(sessions.hits.map((h) => h.session.id)).toEqual([2]);
    expect(sessions.hasMore).toBe(false);
  });

  it('filters the plain list by status', async () => {
    sessions.status = 'done';
    await sessions.refresh();
    expect(sessions.items.map((s) => s.id)).toEqual([2]);
  });

  it('keeps a search error and clears it on the next success', async () => {
    searchImpl = () => Promise.reject({ code: 'store.busy', message: 'busy', retryable: true });
    sessions.search = 'x';
    await sessions.refresh();
    expect(sessions.error?.code).toBe('store.busy');
    searchImpl = async () => ({ hits: [], has_more: false });
    await sessions.refresh();
    expect(sessions.error).toBeNull();
  });
});

describe('export and import', () => {
  afterEach(() => vi.restoreAllMocks());

  it('exports through a Blob download link named by the shell', async () => {
    const created: Blob[] = [];
    const revoke = vi.fn();
    Object.assign(URL, {
      createObjectURL: (b: Blob) => {
        created.push(b);
        return 'blob:nomos/1';
      },
      revokeObjectURL: revoke,
    });
    const clicked: HTMLAnchorElement[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this);
    });
    exportImpl = async (id, format) => ({
      file_name: `nomos-session-${id}.${format === 'json' ? 'json' : 'md'}`,
      mime: format === 'json' ? 'application/json' : 'text/markdown',
      text: '# Session',
    });
    expect(await sessions.exportSession(12, 'markdown')).toBe(true);
    expect(clicked).toHaveLength(1);
    expect(clicked[0]?.download).toBe('nomos-session-12.md');
    expect(clicked[0]?.href).toBe('blob:nomos/1');
    expect(await created[0]?.text()).toBe('# Session');
    expect(created[0]?.type).toContain('text/markdown');
    expect(document.querySelector('a[download]')).toBeNull();
    expect(sessions.transferError).toBeNull();
  });

  it('shows why an export failed', async () => {
    exportImpl = () => Promise.reject({ code: 'store.not_found', message: 'session 9 does not exist' });
    expect(await sessions.exportSession(9, 'json')).toBe(false);
    expect(sessions.transferError?.message).toBe('session 9 does not exist');
  });

  it('imports a chosen file, lists the new session, and reports a refused file', async () => {
    const sent: string[] = [];
    importImpl = async (text) => {
      sent.push(text);
      return { session: row(8, 'Imported'), messages: 3, executions: 1 };
    };
    rows = [row(8, 'Imported'), ...rows];
    const file = new File(['{"format":"nomos.session"}'], 'export.json', { type: 'application/json' });
    const imported = await sessions.importFile(file);
    expect(imported?.session.id).toBe(8);
    expect(sent).toEqual(['{"format":"nomos.session"}']);
    expect(sessions.items[0]?.id).toBe(8);
    importImpl = () => Promise.reject({ code: 'store.import_version', message: 'format version 7' });
    expect(await sessions.importFile(file)).toBeNull();
    expect(sessions.transferError?.code).toBe('store.import_version');
  });

  it('saveText leaves nothing behind in the page', () => {
    Object.assign(URL, { createObjectURL: () => 'blob:x', revokeObjectURL: () => {} });
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    saveText('a.json', 'application/json', '{}');
    expect(document.querySelectorAll('a').length).toBe(0);
  });
});

// Scrolling to the message is the chat's (its virtual list): Chat.test.ts covers `?message=`.
describe('opening a hit at its message', () => {
  it('routes carry the message id and round-trip', () => {
    expect(parseRoute('#/sessions/4?message=17179869186')).toEqual({
      name: 'chat',
      sessionId: 4,
      messageId: 17179869186,
    });
    expect(hrefFor({ name: 'chat', sessionId: 4, messageId: 17179869186 })).toBe('#/sessions/4?message=17179869186');
    expect(parseRoute('#/sessions/4')).toEqual({ name: 'chat', sessionId: 4 });
    expect(parseRoute('#/sessions/4?message=x')).toEqual({ name: 'chat', sessionId: 4 });
    expect(parseRoute('#/sessions/4?message=')).toEqual({ name: 'chat', sessionId: 4 });
  });
});
