// End-to-end: the real desktop binary in the real webview (WebKitWebDriver via tauri-driver),
// talking to the real SQLite store on disk. Run by scripts/e2e.sh under Xvfb + a D-Bus session.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Session } from './webdriver.mjs';

const app = process.env.NOMOS_APP_BINARY;
const tauriDriver = process.env.TAURI_DRIVER ?? 'tauri-driver';
const artifacts = resolve(process.env.NOMOS_E2E_ARTIFACTS ?? 'artifacts/e2e');

async function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.on('error', rej);
  });
}

async function waitForDriver(base, child, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`tauri-driver exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/status`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('tauri-driver did not start listening');
}

describe('desktop app in the real webview', () => {
  let driver;
  let session;
  let dataDir;
  let driverLog = '';

  before(async () => {
    assert.ok(app && existsSync(app), `NOMOS_APP_BINARY must point at the built app (got ${app})`);
    mkdirSync(artifacts, { recursive: true });
    const home = mkdtempSync(join(tmpdir(), 'nomos-e2e-'));
    dataDir = join(home, 'data');
    const env = {
      ...process.env,
      NOMOS_DATA_DIR: dataDir,
      XDG_DATA_HOME: join(home, 'xdg-data'),
      XDG_CONFIG_HOME: join(home, 'xdg-config'),
      XDG_CACHE_HOME: join(home, 'xdg-cache'),
    };
    const port = await freePort();
    const nativePort = await freePort();
    driver = spawn(tauriDriver, ['--port', String(port), '--native-port', String(nativePort)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    driver.stdout.on('data', (d) => (driverLog += d));
    driver.stderr.on('data', (d) => (driverLog += d));
    const base = `http://127.0.0.1:${port}`;
    await waitForDriver(base, driver);
    session = await Session.create(base, app);
  });

  after(async () => {
    if (session) {
      try {
        writeFileSync(join(artifacts, 'final.png'), await session.screenshotPng());
      } catch (err) {
        console.error(`final screenshot failed: ${err.message}`);
      }
      await session.delete().catch(() => {});
    }
    driver?.kill('SIGTERM');
    if (driverLog) writeFileSync(join(artifacts, 'tauri-driver.log'), driverLog);
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

  it('creates a session through IPC, lists it from the store, and keeps it on disk', async () => {
    const composer = await session.find('[data-testid="composer"]');
    await session.type(composer, 'Check disk usage on every host');
    await session.click(await session.find('[data-testid="send"]'));
    const [item] = await session.waitFor('[data-testid="session-item"]');
    assert.match(await session.text(item), /Check disk usage on every host/);
    const [title] = await session.waitFor('[data-testid="chat-title"]');
    assert.equal(await session.text(title), 'Check disk usage on every host');
    const hash = await session.execute('return location.hash');
    assert.match(hash, /^#\/sessions\/\d+$/);

    // The row is in the real SQLite file, not only in the webview's memory.
    const rows = execFileSync('python3', [
      '-c',
      'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("select title from sessions").fetchall())',
      join(dataDir, 'nomos.db'),
    ]).toString();
    assert.match(rows, /Check disk usage on every host/);
    writeFileSync(join(artifacts, 'session-created.png'), await session.screenshotPng());
  });

  it('navigates to the knowledge graph route and back', async () => {
    await session.click(await session.find('[data-testid="nav-graph"]'));
    await session.waitFor('[data-testid="graph-view"]');
    assert.equal(await session.execute('return location.hash'), '#/graph');
    await session.execute('history.back()');
    await session.waitFor('[data-testid="transcript"]');
  });

  it('searches sessions through the store', async () => {
    const search = await session.find('[data-testid="session-search"]');
    await session.type(search, 'nothing-matches-this');
    await session.waitFor('[data-testid="sessions-empty"]');
    assert.match(await session.text(await session.find('[data-testid="sessions-empty"]')), /No session matches/);
  });
});
