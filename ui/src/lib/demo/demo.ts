import type { SettingsView } from '../ipc';

/** The demo is offered on the start screen only while no model provider is configured. */
export function offerDemo(view: SettingsView): boolean {
  return !view.agent_ready && view.agent_error?.code === 'llm.not_configured';
}
