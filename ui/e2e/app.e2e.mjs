// End-to-end: the real desktop binary in the real webview (WebKitWebDriver via tauri-driver),
// talking to the real SQLite store on disk. Run by scripts/e2e.sh under Xvfb + a D-Bus session.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, launchApp } from './harness.mjs';

describe('desktop app in the real webview', () => {
  let session;
  let dataDir;
  let stop;

  before(async () => {
    // The scripted model server, over real HTTP, answers the app's model requests.
    ({ session, dataDir, stop } = await launchApp({ name: 'app', mockScript: 'e2e/fixtures/read-only-task.yaml' }));
  });

  after(async () => {
    await stop?.();
  });

  it('renders the frame: sidebar, chat and plan panel', async () => {
    const [frame] = await session.waitFor('[data-testid="app-frame"]');
    assert.ok(frame);
    await session.waitFor('aside[aria-label="Sessions"]');
    await session.waitFor('[data-testid="plan-panel"]');
    assert.equal(await session.text(await session.find('[data-testid="chat-title"]')), 'New task');
    await session.waitFor('[data-testid="sessions-empty"]');
    writeFileSync(join(artifacts, 'frame.png'), await session.screenshotPng());
  });

  it('shows the core version through IPC', async () => {
    const [version] = await session.waitFor('[data-testid="app-version"]');
    assert.match(await session.text(version), /^v\d+\.\d+\.\d+/);
  });

  it('runs a task end to end: plan, approval, execution, completion', async () => {
    const composer = await session.find('[data-testid="composer"]');
    await session.type(composer, 'What kernel does this workstation run?');
    await session.click(await session.find('[data-testid="send"]'));

    // The plan appears in the panel and waits for approval.
    await session.waitFor('[data-testid="plan-step"]', { timeoutMs: 15_000 });
    const [approve] = await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 });
    const [item] = await session.waitFor('[data-testid="session-item"]');
    assert.match(await session.text(item), /What kernel does this workstation run/);
    writeFileSync(join(artifacts, 'plan-proposed.png'), await session.screenshotPng());

    await session.click(approve);
    await session.waitFor('[data-testid="chat-status"].status-done', { timeoutMs: 20_000 });
    const steps = await session.findAll('[data-testid="plan-step"][data-status="done"]');
    assert.equal(steps.length, 2, 'the read step and the write-back step are done');
    const [run] = await session.waitFor('[data-testid="tool-call"][data-tool="run"]');
    const runText = await session.text(run);
    assert.match(runText, /uname -s/);
    assert.match(runText, /read-only/);
    assert.match(runText, /exit 0/);
    const bubbles = await session.findAll('[data-testid="msg-assistant"]');
    assert.ok(bubbles.length >= 1);
    for (const b of bubbles) assert.notEqual((await session.text(b)).trim(), '', 'no empty bubbles');

    // Everything is in the real SQLite file.
    const rows = execFileSync('python3', [
      '-c',
      'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("select status, outcome from sessions").fetchall(), c.execute("select command, exit_code from executions").fetchall())',
      join(dataDir, 'nomos.db'),
    ]).toString();
    assert.match(rows, /'done', 'success'/);
    assert.match(rows, /'uname -s', 0/);
    writeFileSync(join(artifacts, 'task-done.png'), await session.screenshotPng());
  });

  it('navigates to the knowledge graph route and back', async () => {
    await session.click(await session.find('[data-testid="nav-graph"]'));
    await session.waitFor('[data-testid="graph-view"]');
    assert.equal(await session.execute('return location.hash'), '#/graph');
    await session.execute('history.back()');
    await session.waitFor('[data-testid="transcript"]');
  });

  it('shows settings with the agent ready and no secret in the settings file', async () => {
    await session.click(await session.find('[data-testid="nav-settings"]'));
    const [status] = await session.waitFor('[data-testid="agent-status"]');
    assert.match(await session.text(status), /ready/);
    const [model] = await session.waitFor('[data-testid="settings-model"]');
    await session.type(model, 'mock-e2e');
    await session.click(await session.find('[data-testid="settings-save"]'));
    await session.waitFor('[role="status"].ok');
    const settingsFile = join(dataDir, 'settings.json');
    assert.ok(existsSync(settingsFile), 'settings saved next to the database');
    const text = readFileSync(settingsFile, 'utf8');
    assert.match(text, /mock-e2e/);
    assert.doesNotMatch(text, /api[_-]?key|refresh_token|access_token|password|secret|"sk-/i);
    writeFileSync(join(artifacts, 'settings.png'), await session.screenshotPng());
    await session.execute("location.hash = '#/'");
    await session.waitFor('[data-testid="transcript"]');
  });

  it('searches sessions through the store', async () => {
    const search = await session.find('[data-testid="session-search"]');
    await session.type(search, 'nothing-matches-this');
    await session.waitFor('[data-testid="sessions-empty"]');
    assert.match(await session.text(await session.find('[data-testid="sessions-empty"]')), /No session matches/);
  });
});
