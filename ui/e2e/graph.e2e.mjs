// End-to-end: the knowledge graph and the ledger in the real webview over a fixture database
// (the store's own fixture at the graph-provenance schema: host:web-01, service:nginx runs_on
// it, nginx's version learned from `nginx -v` in session 1). Run by scripts/e2e.sh.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inflateSync } from 'node:zlib';
import { Session } from './webdriver.mjs';

const app = process.env.NOMOS_APP_BINARY;
const tauriDriver = process.env.TAURI_DRIVER ?? 'tauri-driver';
const artifacts = resolve(process.env.NOMOS_E2E_ARTIFACTS ?? 'artifacts/e2e');
const fixture = resolve('../crates/store/tests/fixtures/20261201170000.db');

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

/** RGBA pixels of an 8-bit, non-interlaced PNG (what WebKitWebDriver's screenshots are). */
function decodePng(buf) {
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
function drawnPixels(png, rect) {
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

describe('knowledge graph and ledger in the real webview', () => {
  let driver;
  let session;
  let dataDir;
  let driverLog = '';

  before(async () => {
    assert.ok(app && existsSync(app), `NOMOS_APP_BINARY must point at the built app (got ${app})`);
    mkdirSync(artifacts, { recursive: true });
    const home = mkdtempSync(join(tmpdir(), 'nomos-e2e-graph-'));
    dataDir = join(home, 'data');
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    copyFileSync(fixture, join(dataDir, 'nomos.db'));
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
    if (session) await session.delete().catch(() => {});
    driver?.kill('SIGTERM');
    if (dataDir) await stopApp(dataDir);
    driver?.stdout?.destroy();
    driver?.stderr?.destroy();
    if (driverLog) writeFileSync(join(artifacts, 'graph-tauri-driver.log'), driverLog);
  });

  it('draws the fixture graph: the node count matches and the canvas is not blank', async () => {
    await session.click(await session.waitFor('[data-testid="nav-graph"]').then((e) => e[0]));
    await session.waitFor('[data-testid="graph-count"][data-nodes="2"][data-edges="1"]', { timeoutMs: 15_000 });
    assert.equal((await session.findAll('[data-testid="graph-error"]')).length, 0, 'no error overlay');
    assert.equal((await session.findAll('[data-testid="graph-empty"]')).length, 0, 'not the empty state');
    // Let the layout settle, then look at the pixels of the canvas.
    await session.waitFor('[data-testid="graph-count"]');
    await new Promise((r) => setTimeout(r, 1500));
    const rect = await session.execute(
      `const r = document.querySelector('[data-testid="graph-canvas"]').getBoundingClientRect();
       const d = window.devicePixelRatio || 1;
       return { x: Math.round(r.x * d), y: Math.round(r.y * d), w: Math.round(r.width * d), h: Math.round(r.height * d) };`,
    );
    assert.ok(rect.w > 100 && rect.h > 100, `canvas has a size: ${JSON.stringify(rect)}`);
    const png = await session.screenshotPng();
    writeFileSync(join(artifacts, 'graph.png'), png);
    const drawn = drawnPixels(png, rect);
    assert.ok(drawn > 50, `the canvas shows nodes (${drawn} drawn pixels)`);
  });

  it('search focuses a node and its panel links an attribute to the session that set it', async () => {
    const [box] = await session.waitFor('[data-testid="graph-search"]');
    await session.type(box, 'nginx');
    await session.click(await session.find('[data-testid="graph-find"]'));
    const [panel] = await session.waitFor('[data-testid="node-details"]', { timeoutMs: 10_000 });
    assert.match(await session.text(panel), /service:nginx/);
    const [link] = await session.waitFor('[data-testid="history-session-link"]', { timeoutMs: 10_000 });
    assert.match(await session.text(link), /Fixture v7: nginx version/);
    const href = await session.execute('return arguments[0].getAttribute("href")', [{ 'element-6066-11e4-a52e-4f735466cecf': link }]);
    assert.equal(href, '#/sessions/1?message=4294967298');
    assert.match(await session.text(await session.find('[data-testid="attribute-history"]')), /nginx -v/);
    writeFileSync(join(artifacts, 'graph-details.png'), await session.screenshotPng());
  });

  it('the ledger lists the fixture execution and the matrix puts it in its cell', async () => {
    await session.click((await session.waitFor('[data-testid="nav-ledger"]'))[0]);
    const rows = await session.waitFor('[data-testid="ledger-row"]', { timeoutMs: 10_000 });
    assert.equal(rows.length, 1);
    const text = await session.text(rows[0]);
    assert.match(text, /nginx -v/);
    assert.match(text, /host:web-01/);
    assert.match(text, /read_only/);
    await session.execute(
      `const s = document.querySelector('[data-testid="matrix-session"]');
       s.value = s.options[1].value; s.dispatchEvent(new Event('change'));`,
    );
    const cells = await session.waitFor('[data-testid="matrix-cell"]', { timeoutMs: 10_000 });
    const texts = await Promise.all(cells.map((c) => session.text(c)));
    assert.deepEqual(texts.filter((t) => t.trim() !== ''), ['✓']);
    writeFileSync(join(artifacts, 'ledger.png'), await session.screenshotPng());
  });
});
