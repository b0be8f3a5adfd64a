// End-to-end: the real desktop binary in the real webview (WebKitWebDriver via tauri-driver),
// talking to the real SQLite store on disk. Run by scripts/e2e.sh under Xvfb + a D-Bus session.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Session } from './webdriver.mjs';

const app = process.env.NOMOS_APP_BINARY;
const cli = process.env.NOMOS_CLI_BINARY;
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

/// Processes started for this run (the app is launched by WebKitWebDriver, not by us), found
/// by the unique data directory in their environment. Other instances are left alone.
function processesWithEnv(entry) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(entry)) {
        pids.push(Number(name));
      }
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

/// Stops what the test started; an app that outlives its WebDriver session would keep the
/// inherited output pipes (and so this test process) open.
async function stopApp(dataDir) {
  const entry = `NOMOS_DATA_DIR=${dataDir}`;
  for (const signal of ['SIGTERM', 'SIGKILL']) {
    const pids = processesWithEnv(entry);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone.
      }
    }
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && processesWithEnv(entry).length > 0) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
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
  let mock;
  let mockLog = '';

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
    // The scripted model server, over real HTTP, answers the app's model requests.
    assert.ok(cli && existsSync(cli), `NOMOS_CLI_BINARY must point at the built nomos CLI (got ${cli})`);
    mock = spawn(cli, ['mock-llm', '--script', resolve('e2e/fixtures/read-only-task.yaml')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    mock.stderr.on('data', (d) => (mockLog += d));
    const mockUrl = await new Promise((res, rej) => {
      let out = '';
      mock.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) res(m[1]);
      });
      mock.on('exit', (code) => rej(new Error(`mock-llm exited with ${code}: ${mockLog}`)));
    });
    env.NOMOS_LLM_BASE_URL = mockUrl;
    env.NOMOS_LLM_MODEL = 'mock-e2e';
    env.NOMOS_LLM_PROVIDER = 'openai';
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
    mock?.kill('SIGTERM');
    if (dataDir) await stopApp(dataDir);
    driver?.stdout?.destroy();
    driver?.stderr?.destroy();
    if (mockLog) writeFileSync(join(artifacts, 'mock-llm.log'), mockLog);
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
