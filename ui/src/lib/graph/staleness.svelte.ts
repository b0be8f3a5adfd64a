// The stale threshold the graph view and the node details mark facts with: the operator's
// setting (Settings → Knowledge graph), else the default. Loaded once, updated when Settings
// are saved, so both views mark with the same number of days.
import { ipc } from '../ipc';
import { staleDaysFrom } from './model';

export const staleness = $state({ days: staleDaysFrom(null), loaded: false });

/** Adopt a threshold from Settings (null: the default). */
export function setStaleDays(setting: number | null | undefined) {
  staleness.days = staleDaysFrom(setting);
  staleness.loaded = true;
}

/** Read the setting once; a failed read keeps the default (the views still mark). */
export async function loadStaleness(): Promise<void> {
  if (staleness.loaded) return;
  try {
    setStaleDays((await ipc.getSettings()).settings.stale_after_days);
  } catch {
    staleness.loaded = false;
  }
}
