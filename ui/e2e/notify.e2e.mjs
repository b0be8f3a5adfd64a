// End-to-end: desktop notifications raised by the core's event stream, read from the real
// notification daemon (dunst, started by scripts/e2e.sh on the private session bus) and
// activated through it. The app window loses the focus to another X client (xmessage), as
// when the operator works elsewhere, and the page is reloaded mid-task: one notification
// still comes, and clicking it brings the window back on that session.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { artifacts, dbRows, launchApp, screenshot, until } from './harness.mjs';
import { ELEMENT } from './webdriver.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sh = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8' }).trim();

/** Notifications the daemon shows now, from its own control interface. */
const displayed = () => Number(sh('dunstctl', ['count', 'displayed']));

/** The daemon's history: closed notifications, newest first, as plain objects. */
function history() {
  const json = JSON.parse(sh('dunstctl', ['history']));
  return json.data[0].map((n) => Object.fromEntries(Object.entries(n).map(([k, v]) => [k, v.data])));
}

/** The Notify calls and ActionInvoked signals seen on the session bus, in order. */
function busTraffic(log) {
  const calls = [];
  const invoked = [];
  const blocks = log.split(/\n(?=(?:method call|signal|method return|error) )/);
  for (const block of blocks) {
    const values = [...block.matchAll(/^\s+(?:string "((?:[^"\\]|\\.)*)"|uint32 (\d+)|int32 (-?\d+))/gm)].map(
      (m) => m[1] ?? Number(m[2] ?? m[3]),
    );
    if (/member=Notify\b/.test(block)) {
      const [appName, , , summary, body] = values;
      // The first array is the actions (id, label, …); the second the hints.
      const actions = [...(/array \[([^\]]*)\]/.exec(block)?.[1] ?? '').matchAll(/string "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
      calls.push({ appName, summary, body, actions });
    } else if (/member=ActionInvoked\b/.test(block)) {
      invoked.push({ id: values[0], action: values[1] });
    }
  }
  return { calls, invoked };
}

describe('desktop notifications in the real daemon', () => {
  let session;
  let dataDir;
  let stop;
  let monitor;
  let monitorLog = '';
  let elsewhere;

  before(async () => {
    sh('dunstctl', ['debug']); // fails unless dunst runs on this session bus
    monitor = spawn('dbus-monitor', ["interface='org.freedesktop.Notifications'"], { stdio: ['ignore', 'pipe', 'ignore'] });
    monitor.stdout.on('data', (d) => (monitorLog += d));
    ({ session, dataDir, stop } = await launchApp({ name: 'notify', mockScript: 'e2e/fixtures/read-only-task.yaml' }));
  });

  after(async () => {
    await stop?.();
    elsewhere?.kill('SIGTERM');
    monitor?.kill('SIGTERM');
    if (monitorLog) writeFileSync(join(artifacts, 'notify-dbus-monitor.log'), monitorLog);
  });

  it('a task finished while the window is not focused notifies once; activating it opens the session', async () => {
    await session.waitFor('[data-testid="app-frame"]');
    sh('dunstctl', ['close-all']);
    const composer = await session.find('[data-testid="composer"]');
    await session.type(composer, 'What kernel does this workstation run?');
    await session.click(await session.find('[data-testid="send"]'));
    await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 });
    const hash = await session.execute('return location.hash');
    const sessionId = Number(/^#\/sessions\/(\d+)$/.exec(hash)?.[1]);
    assert.ok(sessionId > 0, `the chat shows the new session (hash ${hash})`);

    // A reload mid-task: the page subscribes again; nothing may be doubled or lost.
    await session.execute('setTimeout(() => location.reload(), 0)');
    await sleep(500);
    const [approve] = await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 });

    // The operator moves to another window; the approval click reaches the page only.
    elsewhere = spawn('xmessage', ['-geometry', '240x60+1000+720', 'another application'], { stdio: 'ignore' });
    const other = await until('the other window', () => {
      try {
        return sh('xdotool', ['search', '--name', '^xmessage$']).split('\n')[0];
      } catch {
        return null;
      }
    });
    sh('xdotool', ['windowfocus', '--sync', other]);
    assert.equal(sh('xdotool', ['getwindowfocus']), other, 'the app window lost the focus');
    await session.execute('arguments[0].click()', [{ [ELEMENT]: approve }]);

    await session.waitFor('[data-testid="chat-status"].status-done', { timeoutMs: 20_000 });
    const sessions = dbRows(dataDir, 'select status, outcome from sessions');
    assert.ok(sessions.some(([status, outcome]) => status === 'done' && outcome === 'success'), `a session done with success: ${JSON.stringify(sessions)}`);
    // The operator looks at something else in the app before coming back.
    await session.execute("location.hash = '#/settings'");
    await session.waitFor('[data-testid="settings-view"]');

    // The daemon shows exactly one notification, and it is this task's.
    await until('the notification in the daemon', () => displayed() >= 1);
    await sleep(1_500);
    assert.equal(displayed(), 1, 'one notification: no duplicate after the reload');
    const { calls } = busTraffic(monitorLog);
    assert.equal(calls.length, 1, `one Notify call (none while the window had the focus): ${JSON.stringify(calls)}`);
    assert.deepEqual(calls[0], {
      appName: 'Nomos',
      summary: 'Task done',
      body: 'The workstation runs Linux.',
      actions: ['default', 'Open session'],
    });
    await screenshot(session, 'notify-before-click.png');

    // The operator clicks it: the daemon invokes its default action.
    sh('dunstctl', ['action', '0']);
    const [invoked] = await until('ActionInvoked on the bus', () => {
      const { invoked } = busTraffic(monitorLog);
      return invoked.length ? invoked : null;
    });
    assert.equal(invoked.action, 'default');

    // The app shows that session, with its window focused again.
    await until('the session route', async () => (await session.execute('return location.hash')) === `#/sessions/${sessionId}`);
    const [title] = await session.waitFor('[data-testid="chat-title"]');
    assert.match(await session.text(title), /What kernel does this workstation run/);
    await session.waitFor('[data-testid="chat-status"].status-done');
    await until('the app window focused', () => sh('xdotool', ['getwindowfocus']) !== other, 5_000);
    await screenshot(session, 'notify-after-click.png');

    // The daemon's own record of it: closed into its history with what the app sent.
    sh('dunstctl', ['close-all']);
    const mine = await until('the notification in the daemon history', () =>
      history().find((n) => n.id === invoked.id),
    );
    assert.equal(mine.appname, 'Nomos');
    assert.equal(mine.summary, 'Task done');
    assert.equal(mine.body, 'The workstation runs Linux.');
    assert.equal(history().filter((n) => n.appname === 'Nomos').length, 1);
  });
});
