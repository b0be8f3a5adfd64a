// End-to-end: the start screen's overview and the blast radius on an approval card, in the real
// webview over the store's graph-provenance fixture (host:web-01, service:nginx runs_on it,
// session 1 "Fixture v7: nginx version") plus, written by SQLite itself, a service that runs
// on this workstation (service:e2e-cron runs_on host:local). A scripted model proposes a
// destructive command on host:local (deleting a file that was never created), which always
// needs approval; the test never approves it. Run by scripts/e2e.sh.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { artifacts, launchApp } from './harness.mjs';
import { ELEMENT } from './webdriver.mjs';

const fixture = resolve('../crates/store/tests/fixtures/20261201210000.db');

// A service on this workstation, so a command on host:local has a dependent to show.
const SEED = `
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
t = 1765200000000
c.execute("INSERT OR IGNORE INTO entities (slug, kind, name, attributes, created_at_ms, updated_at_ms) VALUES ('host:local', 'host', 'local', '{}', ?, ?)", (t, t))
c.execute("INSERT INTO entities (slug, kind, name, attributes, created_at_ms, updated_at_ms) VALUES ('service:e2e-cron', 'service', 'e2e-cron', '{}', ?, ?)", (t, t))
c.execute("""INSERT INTO relations (from_entity, kind, to_entity, attributes, created_at_ms, updated_at_ms)
  SELECT f.id, 'runs_on', h.id, '{}', ?, ? FROM entities f, entities h WHERE f.slug = 'service:e2e-cron' AND h.slug = 'host:local'""", (t, t))
c.commit()
`;

describe('home overview and the blast radius of an approval', () => {
  let session;
  let stop;

  before(async () => {
    ({ session, stop } = await launchApp({
      name: 'home',
      mockScript: 'e2e/fixtures/approval-on-local.yaml',
      beforeStart: ({ dataDir }) => {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        const db = join(dataDir, 'nomos.db');
        copyFileSync(fixture, db);
        execFileSync('python3', ['-c', SEED, db]);
      },
    }));
  });

  after(async () => {
    await stop?.();
  });

  it("the start screen lists the fixture's targets (never audited first) and its recent session", async () => {
    await session.waitFor('[data-testid="home-overview"]', { timeoutMs: 15_000 });
    const targets = await session.waitFor('[data-testid="home-target"]', { timeoutMs: 15_000, count: 2 });
    const slugs = await Promise.all(
      targets.map((t) => session.execute('return arguments[0].dataset.slug', [{ [ELEMENT]: t }])),
    );
    assert.deepEqual([...slugs].sort(), ['host:local', 'host:web-01'], 'the hosts, not the services');
    for (const t of targets) assert.match(await session.text(t), /never/, 'no audit in the fixture');
    const sessions = await session.waitFor('[data-testid="home-session"]', { timeoutMs: 10_000 });
    assert.match(await session.text(sessions[0]), /Fixture v7: nginx version/);
    const href = await session.execute('return arguments[0].querySelector("a").getAttribute("href")', [{ [ELEMENT]: sessions[0] }]);
    assert.equal(href, '#/sessions/1');
    const [graph] = await session.waitFor('[data-testid="home-graph"]', { timeoutMs: 10_000 });
    assert.equal(await session.execute('return arguments[0].dataset.nodes', [{ [ELEMENT]: graph }]), '4');
    assert.equal((await session.findAll('[data-testid="home-error"]')).length, 0, 'no error');
    assert.equal((await session.findAll('[data-testid="home-approvals"]')).length, 0, 'nothing waits yet');
    writeFileSync(join(artifacts, 'home.png'), await session.screenshotPng());
  });

  it("an approval card for a command on a target lists the target's dependents from the graph", async () => {
    const composer = await session.find('[data-testid="composer"]');
    await session.type(composer, 'Remove the leftover file on this workstation');
    await session.click(await session.find('[data-testid="send"]'));
    const [approvePlan] = await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 20_000 });
    await session.execute('arguments[0].click()', [{ [ELEMENT]: approvePlan }]);
    const [card] = await session.waitFor('[data-testid="approval-card"]', { timeoutMs: 20_000 });
    assert.match(await session.text(await session.find('[data-testid="approval-command"]')), /rm -f \/tmp\/nomos-e2e-home-absent\/never-created/);
    const deps = await session.waitFor('[data-testid="approval-dependent"]', { timeoutMs: 10_000 });
    const texts = await Promise.all(deps.map((d) => session.text(d)));
    assert.ok(texts.some((t) => /service:e2e-cron/.test(t)), `the dependent of host:local is listed: ${texts.join(' | ')}`);
    assert.ok(!texts.some((t) => /nginx/.test(t)), 'not the dependents of another host');
    assert.match(await session.text(card), /host:local/);
    // The card may be drawn again as the session's view refreshes: shoot it with its list.
    await session.waitFor('[data-testid="approval-dependent"]', { timeoutMs: 10_000 });
    writeFileSync(join(artifacts, 'home-approval-card.png'), await session.screenshotPng());
  });

  it('the overview lists the waiting command and its link opens the session at the card', async () => {
    const hash = await session.execute('return location.hash');
    const sessionId = Number(/^#\/sessions\/(\d+)/.exec(hash)?.[1]);
    assert.ok(sessionId > 1, `a new session is open (${hash})`);
    await session.execute("location.hash = '#/'");
    const [item] = await session.waitFor('[data-testid="home-approval"]', { timeoutMs: 15_000 });
    const text = await session.text(item);
    assert.match(text, /rm -f \/tmp\/nomos-e2e-home-absent\/never-created/);
    assert.match(text, /host:local/);
    writeFileSync(join(artifacts, 'home-waiting.png'), await session.screenshotPng());
    const link = await session.find('[data-testid="home-approval-link"]');
    assert.equal(await session.execute('return arguments[0].getAttribute("href")', [{ [ELEMENT]: link }]), `#/sessions/${sessionId}`);
    await session.click(link);
    await session.waitFor('[data-testid="approval-card"]', { timeoutMs: 15_000 });
    assert.equal(await session.execute('return location.hash'), `#/sessions/${sessionId}`);
  });
});
