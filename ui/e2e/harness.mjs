// Shared set-up of the end-to-end tests: a private home and data directory, the scripted
// model server over real HTTP, tauri-driver launching the real app in WebKitWebDriver, and
// a clean stop of everything the test started. Each test file starts its own app.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync, readlinkSync, realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { ELEMENT, Session } from './webdriver.mjs';

export const app = process.env.NOMOS_APP_BINARY;
export const cli = process.env.NOMOS_CLI_BINARY;
const tauriDriver = process.env.TAURI_DRIVER ?? 'tauri-driver';
export const artifacts = resolve(process.env.NOMOS_E2E_ARTIFACTS ?? 'artifacts/e2e');

export async function freePort() {
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
export function processesWithEnv(entry) {
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
export async function stopApp(dataDir) {
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

export async function waitForDriver(base, child, timeoutMs = 15_000) {
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

/// Starts `nomos mock-llm --script FILE`; resolves with { url, child, log() }.
export async function startMockLlm(script) {
  assert.ok(cli && existsSync(cli), `NOMOS_CLI_BINARY must point at the built nomos CLI (got ${cli})`);
  let log = '';
  const child = spawn(cli, ['mock-llm', '--script', resolve(script)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (d) => (log += d));
  const url = await new Promise((res, rej) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) res(m[1]);
    });
    child.on('exit', (code) => rej(new Error(`mock-llm exited with ${code}: ${log}`)));
  });
  return { url, child, log: () => log };
}

/**
 * Launches the real app through tauri-driver. `home`: an existing home to launch on (its data
 * directory `home/data` outlives the launch, so a test can kill the app and start it again on
 * the same data); none: a fresh private home. The model the app is configured with through
 * the environment: `mockScript`, a scripted model server this launch starts and stops; or
 * `modelUrl`, a server already running (its owner stops it); or neither: no model (unless
 * `env` names one). `name` prefixes the artifacts this run writes. `beforeStart({ home,
 * dataDir, env })` runs once the home exists and before the app starts (e.g. a CLI import into
 * its store, a fixture database). Resolves with { session, dataDir, home, mock, pid, stop(),
 * kill9() }: `mock` is the server this launch started (null otherwise), `pid` the app's own
 * process; `kill9` kills that process with SIGKILL (no clean shutdown) and ends the WebDriver
 * side, leaving the data directory to the next launch.
 */
export async function launchApp({
  name,
  home = null,
  mockScript = null,
  modelUrl = null,
  env: extraEnv = {},
  beforeStart = null,
  painting = 'composited',
} = {}) {
  assert.ok(app && existsSync(app), `NOMOS_APP_BINARY must point at the built app (got ${app})`);
  assert.ok(!(mockScript && modelUrl), 'a launch takes a mockScript or a modelUrl, not both');
  mkdirSync(artifacts, { recursive: true });
  home ??= mkdtempSync(join(tmpdir(), `nomos-e2e-${name}-`));
  const dataDir = join(home, 'data');
  const env = {
    ...process.env,
    NOMOS_DATA_DIR: dataDir,
    XDG_DATA_HOME: join(home, 'xdg-data'),
    XDG_CONFIG_HOME: join(home, 'xdg-config'),
    XDG_CACHE_HOME: join(home, 'xdg-cache'),
    // Without a GPU the app has WebKit paint without compositing (src-tauri render.rs), and
    // there WebKitWebDriver's screenshot never answers on a page with a WebGL canvas (WebKitGTK
    // 2.50). Tests that take screenshots keep WebKit's default; `painting: 'direct'` runs the
    // app as it runs on such a machine (graph.e2e.mjs checks it from the X server's pixels).
    ...(painting === 'direct' ? {} : { WEBKIT_FORCE_COMPOSITING_MODE: '1' }),
    ...extraEnv,
  };
  // Painting directly is the app's own choice there: no WebKit override from this machine.
  if (painting === 'direct') {
    delete env.WEBKIT_DISABLE_COMPOSITING_MODE;
    delete env.WEBKIT_FORCE_COMPOSITING_MODE;
  }
  // No model from the environment of the machine running the tests.
  for (const key of Object.keys(env)) {
    if (/^(NOMOS_LLM_|OPENAI_|ANTHROPIC_|OPENROUTER_)/.test(key) && !(key in extraEnv)) delete env[key];
  }
  let mock = null;
  if (mockScript) {
    mock = await startMockLlm(mockScript);
    modelUrl = mock.url;
  }
  if (modelUrl) {
    env.NOMOS_LLM_BASE_URL = modelUrl;
    env.NOMOS_LLM_MODEL = 'mock-e2e';
    env.NOMOS_LLM_PROVIDER = 'openai';
  }
  await beforeStart?.({ home, dataDir, env });
  const port = await freePort();
  const nativePort = await freePort();
  let driverLog = '';
  const driver = spawn(tauriDriver, ['--port', String(port), '--native-port', String(nativePort)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  driver.stdout.on('data', (d) => (driverLog += d));
  driver.stderr.on('data', (d) => (driverLog += d));
  const base = `http://127.0.0.1:${port}`;
  await waitForDriver(base, driver);
  const session = await Session.create(base, app);

  function endDriver() {
    driver.kill('SIGTERM');
    driver.stdout?.destroy();
    driver.stderr?.destroy();
    if (driverLog) writeFileSync(join(artifacts, `${name}-tauri-driver.log`), driverLog);
  }
  function endMock() {
    mock?.child.kill('SIGTERM');
    if (mock?.log()) writeFileSync(join(artifacts, `${name}-mock-llm.log`), mock.log());
  }
  let killed = false;
  async function stop() {
    // A killed app has no session to photograph, and another launch may own its data directory.
    // Painting directly, a screenshot of a WebGL page never answers (see `painting` above).
    if (!killed) {
      try {
        if (painting !== 'direct') writeFileSync(join(artifacts, `${name}-final.png`), await session.screenshotPng());
      } catch (err) {
        console.error(`final screenshot failed: ${err.message}`);
      }
      await session.delete().catch(() => {});
      endDriver();
      await stopApp(dataDir);
    }
    endMock();
  }
  let pid;
  try {
    pid = await until('the app process', () => appPid(dataDir), 10_000);
  } catch (err) {
    await stop();
    throw err;
  }
  async function kill9() {
    killed = true;
    process.kill(pid, 'SIGKILL');
    await until(
      `app process ${pid} gone after SIGKILL`,
      () => !existsSync(`/proc/${pid}/stat`) || /\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'latin1')),
      5_000,
    );
    await session.delete().catch(() => {});
    endDriver();
  }
  return { session, dataDir, home, mock, pid, stop, kill9 };
}

/// Writes a screenshot of the webview to the artifacts folder.
export async function screenshot(session, file) {
  writeFileSync(join(artifacts, file), await session.screenshotPng());
}

/** RGBA pixels of an 8-bit, non-interlaced PNG (what WebKitWebDriver's screenshots are). */
export function decodePng(buf) {
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 4;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('latin1', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, '8-bit PNG');
      channels = { 2: 3, 6: 4 }[data[9]];
      assert.ok(channels, `PNG colour type ${data[9]}`);
    } else if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(width * height * 4);
  let prev = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? line[x - channels] : 0;
      const b = prev[x];
      const c = x >= channels ? prev[x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      line[x] = v & 0xff;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 3; k++) out[(y * width + x) * 4 + k] = line[x * channels + k];
      out[(y * width + x) * 4 + 3] = channels === 4 ? line[x * channels + 3] : 255;
    }
    prev = line;
  }
  return { width, height, pixels: out };
}

/** Pixels inside `rect` that differ from the rectangle's most common colour. */
export function drawnPixels(png, rect) {
  const { width, height, pixels } = decodePng(png);
  const counts = new Map();
  const colours = [];
  for (let y = Math.max(0, rect.y); y < Math.min(height, rect.y + rect.h); y++) {
    for (let x = Math.max(0, rect.x); x < Math.min(width, rect.x + rect.w); x++) {
      const i = (y * width + x) * 4;
      const c = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
      colours.push(c);
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
  }
  let background = 0;
  let most = -1;
  for (const [c, n] of counts) if (n > most) [background, most] = [c, n];
  return colours.filter((c) => c !== background).length;
}

/** Polls `check` until it returns something truthy; fails naming `what` and the last value. */
export async function until(what, check, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)?.slice(0, 500)})`);
}

/** Rows of a query on the app's real SQLite file (read by python3's sqlite3, as JSON). */
export function dbRows(dataDir, sql) {
  return JSON.parse(
    execFileSync('python3', [
      '-c',
      'import json,sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(json.dumps(c.execute(sys.argv[2]).fetchall()))',
      join(dataDir, 'nomos.db'),
      sql,
    ]).toString(),
  );
}

/**
 * What the scripted model server received so far (`GET /_mock/requests`, not itself a model
 * request): `{ count, failures, requests }`, every request in order as `{ seq, method, path,
 * format, headers (keys shown as ***), body, step, last_user, last_tool_result }`, and every
 * failed check or request past the end of the script as `{ request, step, reason }`. `mock`:
 * what `startMockLlm` (or `launchApp`) resolved with; `mock.url` ends in `/v1`.
 */
export async function mockRequests(mock) {
  const root = mock.url.replace(/\/v1\/?$/, '');
  const res = await fetch(`${root}/_mock/requests`);
  assert.equal(res.status, 200, `mock-llm request listing: HTTP ${res.status}`);
  return res.json();
}

/** The text of every message of a recorded Chat Completions request, with its role. */
export function requestMessages(request) {
  return (request.body?.messages ?? []).map((m) => ({
    role: m.role,
    text:
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p) => p.text ?? '').join('')
          : '',
  }));
}

/** The page's visible text, polled until it matches `pattern`. */
export async function waitForText(session, pattern, timeoutMs = 10_000) {
  return until(
    `page text ${pattern}`,
    async () => {
      const body = await session.execute('return document.body.innerText');
      return pattern.test(body) ? body : null;
    },
    timeoutMs,
  );
}

/**
 * Waits until no app instance owns the single-instance name on the session bus: a second app
 * started before the first one's name is released hands its arguments over and exits.
 */
export async function waitForAppGone(timeoutMs = 10_000) {
  const owned = () => {
    try {
      return /true/.test(
        execFileSync(
          'gdbus',
          [
            'call', '--session', '--dest', 'org.freedesktop.DBus', '--object-path', '/org/freedesktop/DBus',
            '--method', 'org.freedesktop.DBus.NameHasOwner', 'dev.nomos.desktop.SingleInstance',
          ],
          { encoding: 'utf8' },
        ),
      );
    } catch {
      return false; // no session bus: nothing to wait for
    }
  };
  await until('the previous app to release its single-instance name', () => !owned(), timeoutMs);
}

/**
 * The canary secrets every test may use (ui/e2e/fixtures/canary-secrets.tsv), by label:
 * scripts/scan-secrets.sh looks for each of them in what the tests left behind.
 */
export function canarySecrets() {
  const file = new URL('./fixtures/canary-secrets.tsv', import.meta.url);
  const out = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const tab = line.indexOf('\t');
    out[line.slice(0, tab)] = line.slice(tab + 1);
  }
  return out;
}

/**
 * Registers a secret a test uses that is not a canary (a token the OpenID Provider issued, a
 * generated key), so the secrets scan after the suite looks for it. Only its label is ever
 * printed.
 */
export async function registerSecret(label, value) {
  const { appendFileSync } = await import('node:fs');
  assert.ok(!/[\t\n]/.test(label) && !/[\t\n]/.test(value), 'a label and a secret are one line each');
  assert.ok(value.length >= 8, `secret '${label}' is too short to scan for`);
  mkdirSync(artifacts, { recursive: true });
  appendFileSync(join(artifacts, 'secrets.tsv'), `${label}\t${value}\n`, { mode: 0o600 });
}

/** The app's own process (not its WebKit helpers nor commands it started) for a data directory. */
export function appPid(dataDir) {
  const exe = realpathSync(app);
  const pids = processesWithEnv(`NOMOS_DATA_DIR=${dataDir}`).filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`) === exe;
    } catch {
      return false;
    }
  });
  return pids.length === 1 ? pids[0] : null;
}

/** Writes the settings file the app reads at start (what its Settings view saves), before a launch. */
export function writeSettings(dataDir, runtime) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, 'settings.json'), JSON.stringify({ runtime }), { mode: 0o600 });
}

/** Command lines of the live processes (not zombies) in a process group. */
export function groupMembers(pgid) {
  const members = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') {
        members.push(readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim());
      }
    } catch {
      // Gone.
    }
  }
  return members;
}

/** Types `text` into the composer and sends it; the Send button must be usable. */
export async function sendMessage(session, text) {
  const composer = await session.find('[data-testid="composer"]');
  await session.type(composer, text);
  const button = await session.find('[data-testid="send"]');
  assert.equal(await session.execute('return arguments[0].disabled', [{ [ELEMENT]: button }]), false, 'the composer is usable');
  await session.click(button);
}

/** What the chat shows: bubbles by kind and their message ids, leftovers of a turn, errors. */
export async function transcriptState(session) {
  return session.execute(`
    return {
      users: [...document.querySelectorAll('[data-testid="msg-user"]')].map((b) => b.innerText),
      assistants: [...document.querySelectorAll('[data-testid="msg-assistant"]')].map((b) => b.innerText),
      ids: [...document.querySelectorAll('[data-testid="msg-user"], [data-testid="msg-assistant"]')].map((b) => b.dataset.messageId),
      progress: document.querySelectorAll('[data-testid="msg-progress"]').length,
      errors: [...document.querySelectorAll('[data-testid="turn-error"]')].map((e) => e.dataset.code),
      sendError: document.querySelector('[data-testid="send-error"]')?.innerText ?? null,
      busy: document.querySelectorAll('[data-testid="stop"]').length > 0,
      status: document.querySelector('[data-testid="chat-status"]')?.innerText ?? null,
      draft: document.querySelector('[data-testid="composer"]')?.value ?? null,
    };
  `);
}
