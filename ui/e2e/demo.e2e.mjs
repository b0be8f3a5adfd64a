// End-to-end: the first launch without a model. The start screen offers the demo; it runs
// the scripted model in-process against this workstation with real read-only commands
// through the real classifier, executor, store and knowledge graph, to completion. Settings'
// Test connection then names what fails for an address where nothing listens.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dbRows, freePort, launchApp, screenshot } from './harness.mjs';

describe('first launch without a model', () => {
  let session;
  let dataDir;
  let stop;

  before(async () => {
    // No model in the environment or the settings.
    ({ session, dataDir, stop } = await launchApp({ name: 'demo' }));
  });

  after(async () => {
    await stop?.();
  });

  it('offers the demo, which runs to completion with real read-only commands', async () => {
    await session.waitFor('[data-testid="sessions-empty"]');
    const [offer] = await session.waitFor('[data-testid="demo-offer"]');
    assert.match(await session.text(offer), /Try the demo/);
    assert.match(await session.text(offer), /scripted model/);
    // WebKit under Xvfb may not repaint before an input event: a click on the offer's text.
    await session.click(offer);
    await screenshot(session, 'demo-offer.png');
    await session.click(await session.find('[data-testid="try-demo"]'));

    // A session of its own, titled as the demo, waiting for the plan approval.
    const [approve] = await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 });
    const hash = await session.execute('return location.hash');
    assert.match(hash, /^#\/sessions\/\d+$/);
    assert.match(await session.text(await session.find('[data-testid="chat-title"]')), /^Demo:/);
    // Labelled from the session's demo field, in the header and the sidebar.
    assert.equal(await session.text(await session.find('[data-testid="chat-title"] ~ [data-testid="demo-label"]')), 'Demo');
    await session.waitFor('[data-testid="session-item"] [data-testid="demo-label"]');
    assert.deepEqual(dbRows(dataDir, 'select demo from sessions'), [[1]]);
    assert.equal(dbRows(dataDir, 'select count(*) from executions')[0][0], 0, 'nothing runs before approval');
    await screenshot(session, 'demo-plan.png');
    await session.click(approve);

    await session.waitFor('[data-testid="chat-status"].status-done', { timeoutMs: 60_000 });
    const runs = await session.findAll('[data-testid="tool-call"][data-tool="run"]');
    assert.equal(runs.length, 4);
    for (const run of runs) assert.match(await session.text(run), /read-only/);
    await screenshot(session, 'demo-done.png');

    const executions = dbRows(dataDir, 'select command, class, exit_code from executions order by id');
    assert.deepEqual(
      executions.map(([command]) => command),
      ['uname -a', 'uptime', 'df -h', 'free -m'],
    );
    for (const [command, klass, exit] of executions) {
      assert.equal(klass, 'read_only', command);
      assert.equal(exit, 0, command);
    }
    assert.deepEqual(dbRows(dataDir, 'select title like "Demo:%", status, outcome from sessions'), [[1, 'done', 'success']]);
    // What it learned is what this machine printed.
    const [[attributes]] = dbRows(dataDir, "select attributes from entities where slug = 'host:local'");
    const facts = JSON.parse(attributes);
    assert.equal(facts.kernel, execFileSync('uname', ['-r']).toString().trim());
    assert.ok(facts.memory_total_mib && facts.root_fs_used, attributes);
  });

  it('tests a model connection and says what failed', async () => {
    await session.execute("location.hash = '#/settings'");
    const [url] = await session.waitFor('[data-testid="settings-base-url"]');
    const port = await freePort();
    await session.type(url, `http://127.0.0.1:${port}/v1`);
    await session.type(await session.find('[data-testid="settings-model"]'), 'some-model');
    await session.click(await session.find('[data-testid="settings-test-connection"]'));
    const [result] = await session.waitFor('[data-testid="connection-result"]', { timeoutMs: 15_000 });
    assert.equal(await session.execute('return arguments[0].dataset.code', [{ 'element-6066-11e4-a52e-4f735466cecf': result }]), 'llm.connect_refused');
    assert.match(await session.text(result), /Nothing listens/);
    assert.match(await session.text(result), new RegExp(String(port)));
    await screenshot(session, 'settings-test-connection.png');
  });
});
