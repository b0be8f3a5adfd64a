// End-to-end: sessions for offline review in the real app (tauri-driver + WebKitWebDriver),
// with the model unreachable. A session imported with the CLI is found by a word of its
// command output, opens at the message that ran the command, exports and imports again.
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

function processesWithEnv(entry) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(entry)) pids.push(Number(name));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

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
    while (Date.now() < deadline && processesWithEnv(entry).length > 0) await new Promise((r) => setTimeout(r, 100));
  }
}

async function waitForDriver(base, child, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`tauri-driver exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/status`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('tauri-driver did not start listening');
}

/** A session export as another Nomos wrote it: one read-only run whose output holds a rare word. */
function exportDoc() {
  const t = 1_766_000_000_000;
  const msg = (id, role, text, tool_calls = []) => ({
    id,
    role,
    text,
    reasoning: '',
    auto: false,
    error: null,
    created_at_ms: t + id * 1000,
    updated_at_ms: t + id * 1000,
    tool_calls,
  });
  return {
    format: 'nomos.session',
    version: 1,
    exported_at_ms: t + 60_000,
    session: {
      id: 9,
      title: 'Review the garnet array',
      goal: 'check the array',
      status: 'done',
      outcome: 'success',
      summary: 'array clean',
      created_at_ms: t,
      updated_at_ms: t + 50_000,
      last_active_at_ms: t + 50_000,
      completed_at_ms: t + 50_000,
      imported: null,
    },
    messages: [
      msg(1, 'user', 'Is the array healthy?'),
      msg(2, 'assistant', 'Checking the array now.', [
        {
          call_id: 'c1',
          name: 'run',
          arguments: '{"target":"host:nas","command":"cat /proc/mdstat"}',
          result: 'exit 0',
          result_truncated: false,
          is_error: false,
          created_at_ms: t + 2000,
          finished_at_ms: t + 3000,
        },
      ]),
      msg(3, 'assistant', 'The array is clean.'),
    ],
    plan: [
      {
        generation: 1,
        proposed_at_ms: t + 1500,
        replaced_at_ms: null,
        runs_finished: 1,
        fact_writes: 1,
        knowledge_upserts: 0,
        steps: [
          {
            seq: 1,
            title: 'Read the array state',
            detail: null,
            target: 'host:nas',
            status: 'done',
            status_before_replace: null,
            write_back: false,
            note: null,
            created_at_ms: t + 1500,
            updated_at_ms: t + 3000,
            started_at_ms: t + 2000,
            finished_at_ms: t + 3000,
          },
        ],
      },
    ],
    approval_windows: [],
    executions: [
      {
        id: 1,
        generation: 1,
        step_seq: 1,
        call_id: 'c1',
        target: 'host:nas',
        command: 'cat /proc/mdstat',
        canonical: 'cat /proc/mdstat',
        class: 'read_only',
        decision_reason: 'read-only: cat',
        decision: null,
        approval: 'not_needed',
        approved_by: null,
        approval_window_id: null,
        approved_at_ms: t + 2000,
        status: 'finished',
        exit_code: 0,
        error: null,
        stdout: 'md0 : active raid1 chrysoberyl sdb1[1] sda1[0]\n',
        stderr: '',
        stdout_bytes: 48,
        stderr_bytes: 0,
        stdout_truncated: false,
        stderr_truncated: false,
        created_at_ms: t + 2000,
        updated_at_ms: t + 3000,
        started_at_ms: t + 2000,
        finished_at_ms: t + 3000,
        duration_ms: 1000,
        background: false,
      },
    ],
    audit: [],
  };
}

describe('sessions for offline review', () => {
  let driver;
  let session;
  let home;
  let dataDir;
  let driverLog = '';

  before(async () => {
    assert.ok(app && existsSync(app), `NOMOS_APP_BINARY must point at the built app (got ${app})`);
    assert.ok(cli && existsSync(cli), `NOMOS_CLI_BINARY must point at the built nomos CLI (got ${cli})`);
    mkdirSync(artifacts, { recursive: true });
    home = mkdtempSync(join(tmpdir(), 'nomos-e2e-sessions-'));
    dataDir = join(home, 'data');
    const env = {
      ...process.env,
      NOMOS_DATA_DIR: dataDir,
      XDG_DATA_HOME: join(home, 'xdg-data'),
      XDG_CONFIG_HOME: join(home, 'xdg-config'),
      XDG_CACHE_HOME: join(home, 'xdg-cache'),
      // A model nobody answers: reviewing needs none.
      NOMOS_LLM_BASE_URL: 'http://127.0.0.1:9/v1',
      NOMOS_LLM_MODEL: 'unreachable',
      NOMOS_LLM_PROVIDER: 'openai',
    };
    const file = join(home, 'export.json');
    writeFileSync(file, JSON.stringify(exportDoc(), null, 2));
    const out = execFileSync(cli, ['sessions', 'import', file, '--json'], { env }).toString();
    assert.equal(JSON.parse(out).session.title, 'Review the garnet array');
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
        writeFileSync(join(artifacts, 'sessions-final.png'), await session.screenshotPng());
      } catch (err) {
        console.error(`final screenshot failed: ${err.message}`);
      }
      await session.delete().catch(() => {});
    }
    driver?.kill('SIGTERM');
    if (dataDir) await stopApp(dataDir);
    driver?.stdout?.destroy();
    driver?.stderr?.destroy();
    if (driverLog) writeFileSync(join(artifacts, 'sessions-tauri-driver.log'), driverLog);
  });

  it('finds a session by a word of its command output and opens it at that message', async () => {
    await session.waitFor('[data-testid="session-item"]');
    const search = await session.find('[data-testid="session-search"]');
    await session.type(search, 'chrysoberyl');
    const [hit] = await session.waitFor('[data-testid="search-hit"]', { timeoutMs: 10_000 });
    const text = await session.text(hit);
    assert.match(text, /Review the garnet array/);
    assert.match(text, /Output · host:nas/);
    const marks = await session.execute(
      'return [...document.querySelectorAll("[data-testid=search-hit] mark")].map((m) => m.textContent)',
    );
    assert.deepEqual(marks, ['chrysoberyl']);
    writeFileSync(join(artifacts, 'sessions-search.png'), await session.screenshotPng());
    await session.click(hit);
    const hash = await session.execute('return location.hash');
    assert.match(hash, /^#\/sessions\/\d+\?message=\d+$/);
    // The past session opens with the model unreachable.
    const deadline = Date.now() + 10_000;
    let body = '';
    while (Date.now() < deadline) {
      body = await session.execute('return document.body.innerText');
      if (body.includes('Checking the array now.')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(body, /Checking the array now\./);
    assert.match(body, /The array is clean\./);
    writeFileSync(join(artifacts, 'sessions-opened-at-hit.png'), await session.screenshotPng());
  });

  it('exports and imports through the window; Esc clears the search', async () => {
    const search = await session.find('[data-testid="session-search"]');
    await session.type(search, '\uE00C'); // Escape
    await session.waitFor('[data-testid="session-item"]');
    assert.equal(await session.execute('return document.querySelector("[data-testid=session-search]").value'), '');
    // The export buttons of the open session: a Blob download, the page stays where it is.
    const before = await session.execute('return location.hash');
    await session.click(await session.find('[data-testid="export-json"]'));
    const [notice] = await session.waitFor('[data-testid="transfer-notice"]');
    assert.match(await session.text(notice), /Exported as JSON/);
    assert.equal(await session.execute('return location.hash'), before);
    // Import the same file again through the file picker: a second session, nothing ran.
    const picker = await session.find('[data-testid="import-file"]');
    await session.type(picker, join(home, 'export.json'));
    await session.waitFor('[data-testid="session-item"]', { count: 2, timeoutMs: 10_000 });
    const [imported] = await session.waitFor('[data-testid="transfer-notice"]');
    assert.match(await session.text(imported), /Nothing ran/);
    const rows = execFileSync('python3', [
      '-c',
      'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("select count(*), count(imported_at_ms) from sessions").fetchall(), c.execute("select count(*), count(canonical_sha256) from executions").fetchall())',
      join(dataDir, 'nomos.db'),
    ]).toString();
    assert.match(rows, /\[\(2, 2\)\] \[\(2, 0\)\]/, rows);
    writeFileSync(join(artifacts, 'sessions-imported.png'), await session.screenshotPng());
  });
});
