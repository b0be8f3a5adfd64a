// End-to-end: the desktop app given canary secrets (ui/e2e/fixtures/canary-secrets.tsv) —
// its API key in the environment, key-shaped text in the operator's message — runs a task and
// saves its settings; the project's secrets scanner then finds none of them in the app's home
// (database with its -wal, logs, settings.json). scripts/e2e.sh scans again after the suite.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launchApp, canarySecrets } from './harness.mjs';

const fixture = fileURLToPath(new URL('./fixtures/canary-secrets.tsv', import.meta.url));
const scanner = fileURLToPath(new URL('../../scripts/scan_secrets.py', import.meta.url));

describe('secrets given to the desktop app', () => {
  const canary = canarySecrets();
  let session;
  let home;
  let stop;

  before(async () => {
    ({ session, home, stop } = await launchApp({
      name: 'secrets',
      mockScript: 'e2e/fixtures/read-only-task.yaml',
      env: { NOMOS_LLM_API_KEY: canary['openai api key'] },
    }));
  });

  after(async () => {
    await stop?.();
  });

  it('runs a task with key-shaped text in the message', async () => {
    const composer = await session.find('[data-testid="composer"]');
    await session.type(
      composer,
      `What kernel does this workstation run? The old key was OPENAI_API_KEY=${canary['anthropic api key']} ` +
        `and the gateway sent Authorization: Bearer ${canary['gateway access token']}`,
    );
    await session.click(await session.find('[data-testid="send"]'));
    const [approve] = await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 });
    await session.click(approve);
    await session.waitFor('[data-testid="chat-status"].status-done', { timeoutMs: 20_000 });
  });

  it('saves its settings', async () => {
    await session.click(await session.find('[data-testid="nav-settings"]'));
    const [model] = await session.waitFor('[data-testid="settings-model"]');
    await session.type(model, 'mock-e2e');
    await session.click(await session.find('[data-testid="settings-save"]'));
    await session.waitFor('[role="status"].ok');
  });

  it('keeps none of the secrets in its home', () => {
    const scan = spawnSync('python3', [scanner, '--secrets', fixture, home], { encoding: 'utf8' });
    const report = `${scan.stdout}${scan.stderr}`;
    assert.equal(scan.status, 0, report);
    assert.match(report, / 0 hits/);
    for (const value of Object.values(canary)) assert.ok(!report.includes(value), 'the report printed a secret');
  });
});
