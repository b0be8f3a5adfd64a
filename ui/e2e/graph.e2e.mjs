// End-to-end: the knowledge graph and the ledger in the real webview over a fixture database
// (the store's own fixture at the graph-provenance schema: host:web-01, service:nginx runs_on
// it, nginx's version learned from `nginx -v` in session 1). Run by scripts/e2e.sh.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { artifacts, decodePng, drawnPixels, launchApp } from './harness.mjs';
import { ELEMENT } from './webdriver.mjs';

const fixture = resolve('../crates/store/tests/fixtures/20261201210000.db');

/** How much of what `a` shows inside `rect` is in `b` moved by (dx, dy): of the pixels of `a`
 * that differ from its most common colour and stay inside `rect` once moved, how many have
 * (nearly) the same colour in `b` there. */
function shifted(a, b, rect, dx, dy) {
  const A = decodePng(a);
  const B = decodePng(b);
  const px = (img, x, y) => img.pixels.subarray((y * img.width + x) * 4, (y * img.width + x) * 4 + 3);
  const key = (p) => (p[0] << 16) | (p[1] << 8) | p[2];
  const counts = new Map();
  for (let y = rect.y; y < rect.y + rect.h; y++) for (let x = rect.x; x < rect.x + rect.w; x++) counts.set(key(px(A, x, y)), (counts.get(key(px(A, x, y))) ?? 0) + 1);
  const background = [...counts].sort((p, q) => q[1] - p[1])[0][0];
  let drawn = 0;
  let same = 0;
  for (let y = Math.max(rect.y, rect.y - dy); y < Math.min(rect.y + rect.h, rect.y + rect.h - dy); y++) {
    for (let x = Math.max(rect.x, rect.x - dx); x < Math.min(rect.x + rect.w, rect.x + rect.w - dx); x++) {
      const p = px(A, x, y);
      if (key(p) === background) continue;
      drawn++;
      const q = px(B, x + dx, y + dy);
      if (Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]) <= 24) same++;
    }
  }
  return { drawn, same };
}

describe('knowledge graph and ledger in the real webview', () => {
  let session;
  let stop;

  before(async () => {
    ({ session, stop } = await launchApp({
      name: 'graph',
      beforeStart: ({ dataDir }) => {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        copyFileSync(fixture, join(dataDir, 'nomos.db'));
      },
    }));
  });

  after(async () => {
    await stop?.();
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

  it('panning moves the drawing, during the drag (a moved copy) and after it (drawn again)', async () => {
    await session.waitFor('[data-testid="graph-count"][data-laid-out="true"]', { timeoutMs: 30_000 });
    const rect = await session.execute(
      `const r = document.querySelector('[data-testid="graph-canvas"]').getBoundingClientRect();
       const d = window.devicePixelRatio || 1;
       return { x: Math.round(r.x * d), y: Math.round(r.y * d), w: Math.round(r.width * d), h: Math.round(r.height * d), d };`,
    );
    const beforePng = await session.screenshotPng();
    writeFileSync(join(artifacts, 'graph-pan-before.png'), beforePng);
    const origin = { [ELEMENT]: await session.find('[data-testid="graph-canvas"]') };
    // Pressed, moved by (120, 60) in steps, then held still (past sigma's drag timeout, so the
    // release starts no inertia): the screenshot is taken with the button still down.
    const steps = Array.from({ length: 6 }, (_, i) => ({ type: 'pointerMove', duration: 50, origin, x: -40 + (i + 1) * 20, y: -20 + (i + 1) * 10 }));
    await session.cmd('POST', '/actions', {
      actions: [
        {
          type: 'pointer',
          id: 'mouse',
          parameters: { pointerType: 'mouse' },
          actions: [{ type: 'pointerMove', duration: 0, origin, x: -40, y: -20 }, { type: 'pointerDown', button: 0 }, ...steps, { type: 'pause', duration: 300 }],
        },
      ],
    });
    const moved = await session.execute('return document.querySelector(".sigma-moved")?.style.visibility ?? null');
    const duringPng = await session.screenshotPng();
    writeFileSync(join(artifacts, 'graph-pan-during.png'), duringPng);
    await session.cmd('POST', '/actions', {
      actions: [{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [{ type: 'pointerUp', button: 0 }] }],
    });
    await new Promise((r) => setTimeout(r, 500));
    const afterPng = await session.screenshotPng();
    writeFileSync(join(artifacts, 'graph-panned.png'), afterPng);
    assert.equal(moved, 'visible', 'the drag shows the moved copy');
    assert.equal(await session.execute('return document.querySelector(".sigma-moved").style.visibility'), 'hidden', 'drawn again after it');
    const [dx, dy] = [120 * rect.d, 60 * rect.d];
    for (const [when, png] of [
      ['during', duringPng],
      ['after', afterPng],
    ]) {
      const m = shifted(beforePng, png, rect, dx, dy);
      assert.ok(m.drawn > 50, `something drawn that stays in view (${when}): ${JSON.stringify(m)}`);
      assert.ok(m.same >= 0.9 * m.drawn, `the drawing is where the drag put it ${when} the drag: ${JSON.stringify(m)}`);
    }
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

/** Whether this machine has a GPU Mesa can render on (a DRM render node). */
function hasRenderNode() {
  try {
    return readdirSync('/dev/dri').some((n) => n.startsWith('renderD'));
  } catch {
    return false;
  }
}

describe('the app as it runs without a GPU: the web view paints directly', () => {
  let app;

  before(async () => {
    app = await launchApp({
      name: 'graph-direct',
      painting: 'direct',
      beforeStart: ({ dataDir }) => {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        copyFileSync(fixture, join(dataDir, 'nomos.db'));
      },
    });
  });

  after(async () => {
    await app?.stop();
  });

  it('draws the graph and opens a session, seen in the X server\'s pixels', async () => {
    const { session, dataDir } = app;
    await session.waitFor('[data-testid="app-frame"]', { timeoutMs: 20_000 });
    const log = readdirSync(join(dataDir, 'logs'))
      .map((f) => readFileSync(join(dataDir, 'logs', f), 'utf8'))
      .join('');
    const direct = log.includes('the web view paints without compositing');
    const software = !['', '0', undefined].includes(process.env.LIBGL_ALWAYS_SOFTWARE);
    assert.equal(direct, !hasRenderNode() || software, 'direct painting exactly where OpenGL is software');

    await session.click(await session.waitFor('[data-testid="nav-graph"]').then((e) => e[0]));
    await session.waitFor('[data-testid="graph-count"][data-nodes="2"][data-edges="1"]', { timeoutMs: 15_000 });
    assert.equal((await session.findAll('[data-testid="graph-error"]')).length, 0, 'no error overlay');
    await new Promise((r) => setTimeout(r, 1500));
    const rect = await session.execute(
      `const r = document.querySelector('[data-testid="graph-canvas"]').getBoundingClientRect();
       return { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) };`,
    );
    // The window's place on the X screen, then the canvas's pixels as the X server has them.
    const geometry = Object.fromEntries(
      execFileSync('xdotool', ['search', '--sync', '--onlyvisible', '--pid', String(app.pid), '--name', '^Nomos$', 'getwindowgeometry', '--shell'], { timeout: 15_000 })
        .toString()
        .trim()
        .split('\n')
        .map((l) => l.split('=')),
    );
    const crop = `${rect.w}x${rect.h}+${Number(geometry.X) + rect.x}+${Number(geometry.Y) + rect.y}`;
    const rgb = execFileSync('import', ['-window', 'root', '-crop', crop, '-depth', '8', 'rgb:-'], { maxBuffer: 64 * 1024 * 1024 });
    const counts = new Map();
    for (let i = 0; i + 2 < rgb.length; i += 3) {
      const c = (rgb[i] << 16) | (rgb[i + 1] << 8) | rgb[i + 2];
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    const background = Math.max(...counts.values());
    const drawn = rgb.length / 3 - background;
    assert.ok(drawn > 50, `the canvas shows nodes on the screen (${drawn} drawn pixels in ${crop})`);

    // A session opens and its rows are painted.
    await session.execute("location.hash = '#/sessions/1'");
    await session.waitFor('[data-testid="chat-title"]', { timeoutMs: 10_000 });
    await session.waitFor('[data-message-id]', { timeoutMs: 10_000 });
  });
});
