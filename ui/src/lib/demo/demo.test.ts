import { describe, expect, it } from 'vitest';
import type { SettingsView } from '../ipc';
import { offerDemo } from './demo';

const base: SettingsView = {
  settings: {
    provider: null,
    base_url: null,
    model: null,
    inventory_path: null,
    import_ssh_config: true,
    oidc_issuer: null,
    oidc_client_id: null,
    model_uses_sign_in: false,
    max_iterations: null,
    session_token_budget: null,
    run_wait_secs: null,
    command_timeout_secs: null,
    model_request_secs: null,
    turn_deadline_mins: null,
    stale_after_days: null,
  },
  agent_ready: false,
  agent_error: { code: 'llm.not_configured', message: 'Set a model.', retryable: false },
  api_key_account: null,
};

describe('offerDemo', () => {
  it('offers the demo when no model is configured', () => {
    expect(offerDemo(base)).toBe(true);
  });

  it('does not when a model is ready, or when it is configured but failing', () => {
    expect(offerDemo({ ...base, agent_ready: true, agent_error: null })).toBe(false);
    for (const code of ['llm.no_api_key', 'inventory.invalid', 'auth.keyring'] as const) {
      expect(offerDemo({ ...base, agent_error: { code, message: 'x', retryable: false } })).toBe(false);
    }
  });
});
