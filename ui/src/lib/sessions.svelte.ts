import { ipc, NomosError, toNomosError, type SessionSummary } from './ipc';

// Sidebar state: the session list, the search box and the last error, kept in one place so
// the sidebar and the chat header agree.
class Sessions {
  items = $state<SessionSummary[]>([]);
  search = $state('');
  loading = $state(false);
  error = $state<NomosError | null>(null);
  #generation = 0;

  async refresh() {
    // Searches race while the operator types; only the newest answer may land.
    const generation = ++this.#generation;
    this.loading = true;
    try {
      const query = this.search.trim();
      const rows = await ipc.listSessions(query ? { search: query } : {});
      if (generation === this.#generation) {
        this.items = rows;
        this.error = null;
      }
    } catch (reason) {
      if (generation === this.#generation) this.error = toNomosError(reason);
    } finally {
      if (generation === this.#generation) this.loading = false;
    }
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
}

export const sessions = new Sessions();
