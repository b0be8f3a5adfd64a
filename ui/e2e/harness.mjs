// Helpers shared by the graph end-to-end test and the graph benchmark: ports, the driver, the
// app's processes, and reading a WebDriver screenshot.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { inflateSync } from 'node:zlib';

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

export function processesWithEnv(entry) {
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
    while (Date.now() < deadline && processesWithEnv(entry).length > 0) await new Promise((r) => setTimeout(r, 100));
  }
}

export async function waitForDriver(base, child, timeoutMs = 15_000) {
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
