import {
  ipc,
  NomosError,
  toNomosError,
  type ExportFormat,
  type ImportedSession,
  type SessionHit,
  type SessionStatus,
  type SessionSummary,
} from './ipc';

/** Hits asked for per page of a search. */
export const SEARCH_PAGE = 30;

// Sidebar state: the session list, the search box and its hits, the status filter and the
// last error, kept in one place so the sidebar and the chat header agree.
class Sessions {
  items = $state<SessionSummary[]>([]);
  search = $state('');
  /** Only sessions in this status (null: any). */
  status = $state<SessionStatus | null>(null);
  /** Search hits while the search box holds text (titles, messages, command output). */
  hits = $state<SessionHit[]>([]);
  hasMore = $state(false);
  loading = $state(false);
  error = $state<NomosError | null>(null);
  /** The last export or import failure, shown beside its buttons. */
  transferError = $state<NomosError | null>(null);
  #generation = 0;

  /** Whether the sidebar shows search hits rather than the plain list. */
  get searching(): boolean {
    return this.search.trim() !== '';
  }

  async refresh() {
    // Searches race while the operator types; only the newest answer may land.
    const generation = ++this.#generation;
    this.loading = true;
    try {
      const text = this.search.trim();
      const statuses = this.status ? [this.status] : undefined;
      if (text) {
        const page = await ipc.searchSessions({ text, statuses, limit: SEARCH_PAGE });
        if (generation === this.#generation) {
          this.hits = page.hits;
          this.hasMore = page.has_more;
          this.error = null;
        }
      } else {
        const rows = await ipc.listSessions({});
        if (generation === this.#generation) {
          this.items = this.status ? rows.filter((s) => s.status === this.status) : rows;
          this.hits = [];
          this.hasMore = false;
          this.error = null;
        }
      }
    } catch (reason) {
      if (generation === this.#generation) this.error = toNomosError(reason);
    } finally {
      if (generation === this.#generation) this.loading = false;
    }
  }

  /** The next page of hits, appended. */
  async more() {
    const text = this.search.trim();
    if (!text || !this.hasMore) return;
    const generation = ++this.#generation;
    this.loading = true;
    try {
      const page = await ipc.searchSessions({
        text,
        statuses: this.status ? [this.status] : undefined,
        limit: SEARCH_PAGE,
        offset: this.hits.length,
      });
      if (generation === this.#generation) {
        this.hits = [...this.hits, ...page.hits];
        this.hasMore = page.has_more;
      }
    } catch (reason) {
      if (generation === this.#generation) this.error = toNomosError(reason);
    } finally {
      if (generation === this.#generation) this.loading = false;
    }
  }

  /** Esc in the search box: back to the plain list. */
  clearSearch() {
    this.search = '';
    void this.refresh();
  }

  /**
   * A session's status changed: its row is updated in place and moves to the top (the list
   * is most recently active first). Only a session not in the list yet (just started, or
   * hidden by the search) costs a reload.
   */
  update(id: number, patch: Pick<SessionSummary, 'status' | 'outcome' | 'summary'>) {
    const i = this.items.findIndex((s) => s.id === id);
    const current = this.items[i];
    if (!current) {
      void this.refresh();
      return;
    }
    const row: SessionSummary = { ...current, ...patch, last_active_at_ms: Date.now() };
    this.items.splice(i, 1);
    this.items.unshift(row);
  }

  /**
   * A session's stored row, as the chat just read it. Another process on this data directory
   * (a `nomos ask`) changes rows without an event reaching this window (I24): a listed row
   * that differs is replaced and moved to its place by last activity; an unlisted one reloads
   * the list. A row that already agrees changes nothing.
   */
  sync(stored: SessionSummary) {
    const i = this.items.findIndex((s) => s.id === stored.id);
    const current = this.items[i];
    if (!current) {
      if (!this.searching) void this.refresh();
      return;
    }
    const keys = ['title', 'goal', 'status', 'outcome', 'summary'] as const;
    if (keys.every((k) => current[k] === stored[k])) return;
    this.items.splice(i, 1);
    const at = this.items.findIndex((s) => s.last_active_at_ms <= stored.last_active_at_ms);
    this.items.splice(at < 0 ? this.items.length : at, 0, { ...stored });
  }

  /** Exports a session and hands the file to the webview's download (a Blob link). */
  async exportSession(id: number, format: ExportFormat): Promise<boolean> {
    try {
      const file = await ipc.exportSession(id, format);
      saveText(file.file_name, file.mime, file.text);
      this.transferError = null;
      return true;
    } catch (reason) {
      this.transferError = toNomosError(reason);
      return false;
    }
  }

  /** Imports a JSON export chosen by the operator; the new session is listed and returned. */
  async importFile(file: File): Promise<ImportedSession | null> {
    try {
      const text = await file.text();
      const imported = await ipc.importSession(text);
      this.transferError = null;
      // Show the list, where the new session is.
      this.search = '';
      await this.refresh();
      return imported;
    } catch (reason) {
      this.transferError = toNomosError(reason);
      return null;
    }
  }
}

/** Saves text through a temporary Blob link: works in WebKitGTK without a dialog plugin. */
export function saveText(fileName: string, mime: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: `${mime};charset=utf-8` }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Give the download a moment to start before the URL goes away.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export const sessions = new Sessions();
