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
}

export const sessions = new Sessions();
