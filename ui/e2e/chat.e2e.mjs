// End-to-end: the cockpit's chat flows in the real app (tauri-driver + WebKitWebDriver) with
// the scripted model (`nomos mock-llm`) over real HTTP and the real store on disk. Each flow
// starts its own app on its own script; what the model received is read back from the mock
// (`GET /_mock/requests`), what ran from the SQLite file. Screenshots go to the artifacts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cli,
  dbRows,
  freePort,
  launchApp,
  sendMessage,
  mockRequests,
  requestMessages,
  screenshot,
  until,
  waitForAppGone,
  waitForText,
} from './harness.mjs';
import { ELEMENT } from './webdriver.mjs';

const el = (ref) => ({ [ELEMENT]: ref });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ESCAPE = '\uE00C';

/** A script for `nomos mock-llm`, written as JSON into a folder of its own. */
function writeScript(name, script) {
  const dir = mkdtempSync(join(tmpdir(), `nomos-e2e-chat-script-${name}-`));
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ model: 'mock-e2e', ...script }, null, 2));
  return file;
}

const call = (name, args) => ({ name, arguments: args });
const step = (title) => ({ title, target: 'host:local' });

/** The status of every step of the current plan, in order, as the panel shows it. */
function panelStatuses(session) {
  return session.execute(
    'return [...document.querySelectorAll("[data-testid=plan-panel] [data-testid=plan-step]")].map((s) => s.dataset.status).join(",")',
  );
}

/** The user messages of one recorded request that carry `text`. */
function userMessagesWith(request, text) {
  return requestMessages(request).filter((m) => m.role === 'user' && m.text.includes(text));
}

describe('a task whose steps advance live, then the same sessions reviewed with the model gone', () => {
  let first;
  const seen = [];

  before(async () => {
    const script = writeScript('live', {
      replies: [
        {
          kind: 'tool_calls',
          text: "I'll read the kernel name and the uptime of this workstation.",
          calls: [
            call('set_goal', { goal: 'Know the kernel and uptime of this workstation' }),
            call('propose_plan', { steps: [step('Read the kernel name'), step('Read the uptime')] }),
          ],
        },
        {
          kind: 'tool_calls',
          expect: [{ last_user_contains: 'Approve button' }],
          calls: [
            call('update_plan_step', { seq: 1, status: 'running' }),
            call('run', { target: 'host:local', command: 'uname -s', reason: 'read the kernel name' }),
          ],
        },
        {
          // Held back so the panel shows step 1 running for a while (long enough for the
          // sampling loop below on a loaded machine).
          kind: 'tool_calls',
          delay_ms: 3000,
          expect: [{ last_tool_result_contains: 'Linux' }],
          calls: [
            call('update_plan_step', { seq: 1, status: 'done', note: 'Linux' }),
            call('update_plan_step', { seq: 2, status: 'running' }),
            call('run', { target: 'host:local', command: 'uptime', reason: 'read the uptime' }),
          ],
        },
        {
          kind: 'tool_calls',
          delay_ms: 1500,
          expect: [{ last_tool_result_contains: 'load average' }],
          calls: [
            call('update_plan_step', { seq: 2, status: 'done', note: 'up' }),
            call('update_entity_attributes', { slug: 'host:local', attributes: { kernel: 'Linux' } }),
          ],
        },
        {
          kind: 'tool_calls',
          delay_ms: 1000,
          text: 'This workstation runs Linux and is up.',
          calls: [
            call('update_plan_step', { seq: 3, status: 'done' }),
            call('complete_task', { outcome: 'success', summary: 'Linux, up and running.' }),
          ],
        },
        // The second task: a plan, then a follow-up that changes it before anything ran.
        {
          kind: 'tool_calls',
          text: 'Here is the plan for the health check.',
          calls: [
            call('set_goal', { goal: 'A health check of this workstation' }),
            call('propose_plan', {
              steps: [step('Read the kernel name'), step('Read the uptime'), step('Read the swap'), step('Read the memory')],
            }),
          ],
        },
        {
          kind: 'tool_calls',
          expect: [{ last_user_contains: 'disks and the network' }],
          text: 'Plan changed: no uptime, the disks and the network instead.',
          calls: [
            call('propose_plan', {
              steps: [
                step('Read the kernel name'),
                step('Read the memory'),
                step('Read the disk usage'),
                step('Read the network interfaces'),
              ],
            }),
          ],
        },
      ],
    });
    first = await launchApp({ name: 'chat-live', mockScript: script });
  });

  after(async () => {
    await first?.stop();
  });

  it('approves the plan and shows each step advance in the panel until completion is recorded', async () => {
    const { session, dataDir } = first;
    await session.waitFor('[data-testid="app-frame"]');
    await sendMessage(session, 'What kernel does this workstation run, and how long has it been up?');
    const [approve] = await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 });
    assert.equal(await panelStatuses(session), 'pending,pending,pending', 'two steps and the write-back, none started');
    assert.match(await session.text(await session.find('[data-testid="plan-approval"]')), /Read the kernel name/);
    await session.click(approve);

    // Sample the panel while the task runs: every state it passes through, in order.
    const deadline = Date.now() + 30_000;
    // Every headline the panel showed, in order: one read may come after step 1 is over.
    const headlines = [];
    while (Date.now() < deadline) {
      const statuses = await panelStatuses(session);
      if (seen.at(-1) !== statuses) {
        seen.push(statuses);
        if (statuses === 'running,pending,pending') await screenshot(session, 'chat-live-step1-running.png');
      }
      const running = await session.findAll('[data-testid="plan-running"]');
      if (running.length) {
        const headline = await session.text(running[0]).catch(() => '');
        if (headline && headlines.at(-1) !== headline) headlines.push(headline);
      }
      const done = await session.findAll('[data-testid="chat-status"].status-done');
      if (done.length && statuses === 'done,done,done') break;
      await sleep(50);
    }
    assert.equal(seen.at(-1), 'done,done,done', `the task ends with every step done (seen: ${seen.join(' | ')})`);
    // The panel went through each step running in turn: it followed the task live.
    for (const state of ['running,pending,pending', 'done,running,pending']) {
      assert.ok(seen.includes(state), `the panel showed ${state} (seen: ${seen.join(' | ')})`);
    }
    assert.ok(seen.indexOf('running,pending,pending') < seen.indexOf('done,running,pending'), seen.join(' | '));
    assert.ok(
      headlines.some((h) => /^Now: step 1 — Read the kernel name/.test(h)),
      `the panel's headline named the running step 1 (seen: ${headlines.join(' | ')})`,
    );
    assert.match(await session.text(await session.find('[data-testid="plan-panel"] h2')), /3\/3 done/);
    await screenshot(session, 'chat-live-done.png');

    // Completion is recorded in the store, with what ran.
    const [[status, outcome, summary, completed]] = dbRows(
      dataDir,
      'select status, outcome, summary, completed_at_ms from sessions',
    );
    assert.deepEqual([status, outcome, summary], ['done', 'success', 'Linux, up and running.']);
    assert.ok(completed > 0, 'completed_at_ms recorded');
    assert.deepEqual(dbRows(dataDir, 'select command, class, exit_code from executions order by id'), [
      ['uname -s', 'read_only', 0],
      ['uptime', 'read_only', 0],
    ]);
  });

  it('a follow-up that changes the plan shows both generations and what changed', async () => {
    const { session, dataDir } = first;
    await session.execute("location.hash = '#/'");
    await session.waitFor('[data-testid="chat-title"]');
    await until('the new-task screen', async () => (await session.text(await session.find('[data-testid="chat-title"]'))) === 'New task');
    await sendMessage(session, 'Run a health check of this workstation.');
    await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 });
    await until('plan v1 in the panel', async () => (await panelStatuses(session)) === 'pending,pending,pending,pending,pending');
    await sendMessage(session, 'Skip the uptime and the swap; check the disks and the network instead.');

    const [older] = await session.waitFor('[data-testid="plan-older"]', { timeoutMs: 15_000 });
    assert.equal(await session.execute('return arguments[0].dataset.generation', [el(older)]), '1');
    assert.match(await session.text(await session.find('[data-testid="plan-panel"] h2')), /^Plan v2/);
    // The old generation is folded: its summary only, until opened.
    assert.equal(await session.execute('return arguments[0].open', [el(older)]), false);
    assert.match(await session.text(older), /Plan v1 — replaced, 5 steps/);
    const currentTitles = await session.execute(
      'return [...document.querySelectorAll("[data-testid=plan-steps] [data-testid=plan-step] .title")].map((t) => t.textContent.trim())',
    );
    assert.equal(currentTitles.length, 5, currentTitles.join(' | '));
    assert.match(currentTitles[2], /^3\. Read the disk usage/);
    await session.execute('arguments[0].querySelector("summary").click()', [el(older)]);
    const diff = await session.execute(
      'return [...arguments[0].querySelectorAll("[data-testid=plan-diff] li")].map((l) => [l.className.split(" ").find((c) => c.startsWith("diff-")), l.textContent.trim()])',
      [el(older)],
    );
    assert.deepEqual(diff, [
      ['diff-added', '+ Read the network interfaces (host:local)'],
      ['diff-removed', '− Read the uptime (host:local)'],
      ['diff-changed', '~ Read the swap (host:local) → Read the disk usage (host:local)'],
    ]);
    await screenshot(session, 'chat-plan-generations.png');
    const sessionId = Number(/^#\/sessions\/(\d+)/.exec(await session.execute('return location.hash'))?.[1]);
    assert.deepEqual(
      dbRows(dataDir, `select generation, group_concat(distinct status) from plan_steps where session_id = ${sessionId} group by generation`),
      [
        [1, 'replaced'],
        [2, 'pending'],
      ],
    );
  });

  it('opens both past sessions after a restart with the model unreachable: transcript, plans, ledger', async () => {
    // The first app stops; a second one opens a copy of its data directory with a model
    // address where nothing listens.
    const { dataDir } = first;
    await first.stop();
    first = null;
    await waitForAppGone();
    const closed = await freePort();
    const second = await launchApp({
      name: 'chat-offline',
      env: {
        NOMOS_LLM_BASE_URL: `http://127.0.0.1:${closed}/v1`,
        NOMOS_LLM_MODEL: 'unreachable',
        NOMOS_LLM_PROVIDER: 'openai',
      },
      beforeStart: ({ dataDir: fresh }) => {
        mkdirSync(fresh, { recursive: true, mode: 0o700 });
        for (const f of readdirSync(dataDir).filter((f) => f.startsWith('nomos.db'))) {
          copyFileSync(join(dataDir, f), join(fresh, f));
        }
      },
    });
    first = second;
    const { session } = second;
    await session.waitFor('[data-testid="session-item"]', { count: 2, timeoutMs: 15_000 });
    const ids = dbRows(second.dataDir, 'select id, title from sessions order by id');
    assert.equal(ids.length, 2);
    const [[doneId], [planId]] = ids;

    await session.execute(`location.hash = '#/sessions/${doneId}'`);
    await session.waitFor('[data-testid="chat-status"].status-done', { timeoutMs: 15_000 });
    const body = await waitForText(session, /This workstation runs Linux and is up\./);
    assert.match(body, /What kernel does this workstation run/);
    const runs = await session.findAll('[data-testid="tool-call"][data-tool="run"]');
    assert.equal(runs.length, 2);
    assert.match(await session.text(runs[0]), /uname -s/);
    assert.equal(await panelStatuses(session), 'done,done,done');
    // Nothing blocks the review: no error shown, no dialog open, the model not called.
    const blocking = () =>
      session.execute(
        'return [...document.querySelectorAll("[role=alert], [role=alertdialog], dialog[open], [data-testid=turn-error], [data-testid=chat-error]")].filter((e) => e.offsetParent !== null).map((e) => e.outerHTML.slice(0, 200))',
      );
    assert.deepEqual(await blocking(), []);
    await screenshot(session, 'chat-offline-done-session.png');

    await session.execute(`location.hash = '#/sessions/${planId}'`);
    const [older] = await session.waitFor('[data-testid="plan-older"]', { timeoutMs: 15_000 });
    assert.match(await session.text(older), /Plan v1 — replaced, 5 steps/);
    assert.equal(await panelStatuses(session), 'pending,pending,pending,pending,pending');
    await waitForText(session, /check the disks and the network instead/);
    // The plan was never approved: its card is still there to review, and nothing ran.
    await session.waitFor('[data-testid="plan-approval"]');
    assert.deepEqual(await blocking(), []);
    await screenshot(session, 'chat-offline-plan-session.png');

    // The execution ledger: what ran where, with its result.
    await session.click(await session.find('[data-testid="nav-ledger"]'));
    const rows = await session.waitFor('[data-testid="ledger-row"]', { count: 2, timeoutMs: 15_000 });
    const texts = await Promise.all(rows.map((r) => session.text(r)));
    assert.ok(texts.some((t) => /uname -s/.test(t)), texts.join('\n'));
    assert.ok(texts.some((t) => /uptime/.test(t)), texts.join('\n'));
    assert.deepEqual(await blocking(), []);
    await screenshot(session, 'chat-offline-ledger.png');
  });
});

describe('a configuration change waits for its approval card', () => {
  // Run in its own scratch folder: the command rewrites a file there and nothing else. Its
  // target, host:scratch (this workstation, from an inventory file), is not in the approved
  // plan, so the plan's approval window does not cover it: the command waits for its card.
  const scratch = mkdtempSync(join(tmpdir(), 'nomos-e2e-chat-config-'));
  const conf = join(scratch, 'app.conf');
  const inventory = join(scratch, 'inventory.toml');
  writeFileSync(inventory, '[[target]]\nslug = "host:scratch"\ntransport = "local"\n');
  const command = `sed -i 's/port=80/port=8080/' ${conf}`;
  const reason = 'Not on this host: the production config is shared, change the staging copy instead';

  /** The plan (on host:local), then after its approval the change on host:scratch. */
  const planThenChange = [
    {
      kind: 'tool_calls',
      text: 'I will move the service to port 8080.',
      calls: [
        call('set_goal', { goal: 'The service listens on port 8080' }),
        call('propose_plan', { steps: [step('Move the service to port 8080')] }),
      ],
    },
    {
      kind: 'tool_calls',
      expect: [{ last_user_contains: 'Approve button' }],
      calls: [
        call('update_plan_step', { seq: 1, status: 'running' }),
        call('run', { target: 'host:scratch', command, reason: 'switch the port' }),
      ],
    },
  ];

  async function launch(name, resume) {
    writeFileSync(conf, 'port=80\n');
    const script = writeScript(name, { replies: [...planThenChange, resume] });
    return launchApp({ name, mockScript: script, env: { NOMOS_INVENTORY: inventory } });
  }

  /** Starts the task, approves the plan, and waits for the command's card: nothing ran. */
  async function untilCard({ session, dataDir, mock }) {
    await session.waitFor('[data-testid="app-frame"]');
    await sendMessage(session, 'Move the service to port 8080.');
    await session.click((await session.waitFor('[data-testid="approve-plan"]', { timeoutMs: 15_000 }))[0]);
    const [card] = await session.waitFor('[data-testid="approval-card"]', { timeoutMs: 15_000 });
    assert.match(await session.text(await session.find('[data-testid="approval-command"]')), /^sed -i s\/port=80\/port=8080\/ \//);
    assert.match(await session.text(card), /config change/);
    assert.match(await session.text(card), /on host:scratch/);
    // Nothing ran, nothing will until the operator decides, and the model is not asked again.
    await sleep(1500);
    assert.equal(readFileSync(conf, 'utf8'), 'port=80\n', 'the file is unchanged before the decision');
    assert.deepEqual(
      dbRows(dataDir, 'select class, status, started_at_ms, exit_code, approval from executions'),
      [['config_mutation', 'awaiting_approval', null, null, null]],
      'one execution, waiting: not started',
    );
    assert.equal((await mockRequests(mock)).count, 2, 'no model request while the card waits');
    assert.equal(dbRows(dataDir, 'select status from sessions')[0][0], 'executing');
    return card;
  }

  /** The texts of the model request that followed the decision. */
  async function nextRequest(mock) {
    const requests = await until(
      'the model asked again after the decision',
      async () => {
        const { requests: r } = await mockRequests(mock);
        return r.length >= 3 ? r : null;
      },
      15_000,
    );
    await sleep(500);
    assert.equal((await mockRequests(mock)).count, 3, 'one request after the decision');
    return requestMessages(requests[2]);
  }

  /** One decision in an app of its own: the plan, the change waiting for its card, `decide`. */
  function decision(title, name, resume, decide) {
    describe(title, () => {
      let app;
      before(async () => {
        app = await launch(name, { kind: 'text', text: resume });
      });
      after(async () => {
        await app?.stop();
      });
      it(title, async () => {
        await untilCard(app);
        await decide(app);
      });
    });
  }

  decision(
    'Approve: nothing ran before; it runs once and the card shows the result',
    'chat-config-approve',
    'The service now listens on port 8080.',
    async ({ session, dataDir, mock }) => {
      await screenshot(session, 'chat-config-card.png');

      await session.click(await session.find('[data-testid="approve-execution"]'));
      await until('the change applied', () => readFileSync(conf, 'utf8') === 'port=8080\n');
      const [stale] = await session.waitFor('[data-testid="approval-stale"]', { timeoutMs: 15_000 });
      await until('the card shows the result', async () => /exit 0/.test(await session.text(stale)));
      assert.match(await session.text(stale), /you approved it; finished, exit 0 in \d/);
      assert.equal((await session.findAll('[data-testid="approve-execution"]')).length, 0, 'no second approval');
      await waitForText(session, /The service now listens on port 8080\./, 15_000);
      assert.deepEqual(dbRows(dataDir, 'select status, exit_code, approval from executions'), [['finished', 0, 'operator_button']]);
      await screenshot(session, 'chat-config-approved.png');
      // The model heard the result once, through one continuation.
      const messages = await nextRequest(mock);
      const told = messages.filter((m) => /Execution \d+ on host:scratch: finished, exit 0/.test(m.text));
      assert.ok(told.length >= 1, `the result reached the model: ${JSON.stringify(messages.slice(-3))}`);
    },
  );

  decision(
    'Deny with a reason: the reason reaches the model and the card shows the command denied',
    'chat-config-deny',
    'Understood: I will not touch the production config.',
    async ({ session, dataDir, mock }) => {
      await session.click(await session.find('[data-testid="deny-with-reason"]'));
      const [box] = await session.waitFor('[data-testid="deny-reason"]');
      await session.type(box, reason);
      await screenshot(session, 'chat-config-deny-reason.png');
      await session.click(await session.find('[data-testid="deny-reason-send"]'));

      const [stale] = await session.waitFor('[data-testid="approval-stale"]', { timeoutMs: 15_000 });
      await until('the card says denied', async () => /denied/.test(await session.text(stale)));
      assert.match(await session.text(stale), /denied — “Not on this host: the production config is shared/);
      const messages = await nextRequest(mock);
      assert.ok(
        messages.some((m) => m.text.includes(reason)),
        `the operator's reason is in what the model received: ${JSON.stringify(messages.slice(-3))}`,
      );
      await waitForText(session, /I will not touch the production config/, 15_000);
      assert.equal(readFileSync(conf, 'utf8'), 'port=80\n', 'the file is unchanged');
      const [[status, started, error]] = dbRows(dataDir, 'select status, started_at_ms, error from executions');
      assert.deepEqual([status, started], ['cancelled', null], 'denied, never started');
      assert.equal(error, reason);
      assert.equal((await session.findAll('[data-testid="approve-execution"]')).length, 0);
      await screenshot(session, 'chat-config-denied.png');
    },
  );
});

describe('Stop and Retry', () => {
  let app;
  const followUp = 'Continue with the check, please.';

  before(async () => {
    const error500 = { kind: 'http_error', status: 500, message: 'upstream exploded' };
    const script = writeScript('stop-retry', {
      replies: [
        // The first turn hangs mid-reply until the operator stops it.
        { kind: 'hang', text: 'Let me look' },
        // The next turn fails on every attempt the client makes.
        error500,
        error500,
        error500,
        error500,
        { kind: 'text', expect: [{ last_user_contains: followUp }], text: 'Back on track: nothing is wrong.' },
      ],
    });
    app = await launchApp({ name: 'chat-stop-retry', mockScript: script });
  });
  after(async () => {
    await app?.stop();
  });

  it('Esc ends a running turn and the session shows paused', async () => {
    const { session, dataDir, mock } = app;
    await session.waitFor('[data-testid="app-frame"]');
    await sendMessage(session, 'Is anything wrong with this workstation?');
    await session.waitFor('[data-testid="stop"]', { timeoutMs: 15_000 });
    await until('the model request in flight', async () => (await mockRequests(mock)).count === 1);
    await screenshot(session, 'chat-running.png');
    await session.type(await session.find('[data-testid="composer"]'), ESCAPE);
    await session.waitFor('[data-testid="paused"]', { timeoutMs: 10_000 });
    await session.waitFor('[data-testid="chat-status"].status-paused');
    assert.equal((await session.findAll('[data-testid="stop"]')).length, 0, 'the turn ended');
    assert.equal((await session.findAll('[data-testid="turn-error"]')).length, 0, 'a stop is not an error');
    await until('the session paused in the store (I21)', () => dbRows(dataDir, 'select paused_at_ms is not null from sessions')[0]?.[0] === 1);
    await sleep(1000);
    assert.equal((await mockRequests(mock)).count, 1, 'nothing resumed by itself');
    await screenshot(session, 'chat-paused.png');
  });

  it('an error reply is humanized; Retry runs the turn again without re-sending the message', async () => {
    const { session, mock } = app;
    await sendMessage(session, followUp);
    const [card] = await session.waitFor('[data-testid="turn-error"]', { timeoutMs: 30_000 });
    const text = await session.text(card);
    assert.doesNotMatch(text.split('\n')[0], /llm\.|upstream exploded|500/, `a human title first: ${text}`);
    const failed = (await mockRequests(mock)).count;
    assert.ok(failed >= 2, `the failing turn reached the model (${failed} requests)`);
    await screenshot(session, 'chat-error.png');

    await session.click(await session.find('[data-testid="retry"]'));
    await waitForText(session, /Back on track: nothing is wrong\./, 30_000);
    await sleep(1000);
    const { requests } = await mockRequests(mock);
    assert.equal(requests.length, failed + 1, 'Retry made one request: one new turn');
    const last = requests.at(-1);
    assert.equal(userMessagesWith(last, followUp).length, 1, 'the operator message is in the transcript once');
    const users = await session.findAll('[data-testid="msg-user"]');
    const userTexts = await Promise.all(users.map((u) => session.text(u)));
    assert.equal(userTexts.filter((t) => t.includes(followUp)).length, 1, `shown once: ${userTexts.join(' | ')}`);
    assert.equal((await session.findAll('[data-testid="turn-error"]')).length, 0, 'the error card is gone');
    await screenshot(session, 'chat-retried.png');
  });
});

describe('a 10,000-message session', () => {
  let app;
  const COUNT = 10_000;

  /** A session export with COUNT messages, alternating operator and assistant. */
  function bigExport() {
    const t = 1_766_000_000_000;
    const messages = [];
    for (let i = 1; i <= COUNT; i++) {
      messages.push({
        id: i,
        role: i % 2 ? 'user' : 'assistant',
        text: i === 1 ? 'First message of the long session' : i === COUNT ? 'Last message of the long session' : `Message number ${i}: ${'lorem ipsum '.repeat(1 + (i % 7))}`,
        reasoning: '',
        auto: false,
        error: null,
        created_at_ms: t + i * 1000,
        updated_at_ms: t + i * 1000,
        tool_calls: [],
      });
    }
    return {
      format: 'nomos.session',
      version: 1,
      exported_at_ms: t + (COUNT + 10) * 1000,
      session: {
        id: 1,
        title: 'The long session',
        goal: 'talk a lot',
        status: 'done',
        outcome: 'success',
        summary: 'a long talk',
        created_at_ms: t,
        updated_at_ms: t + COUNT * 1000,
        last_active_at_ms: t + COUNT * 1000,
        completed_at_ms: t + COUNT * 1000,
        imported: null,
      },
      messages,
      plan: [],
      approval_windows: [],
      executions: [],
      audit: [],
    };
  }

  before(async () => {
    app = await launchApp({
      name: 'chat-long',
      beforeStart: ({ home, env }) => {
        const file = join(home, 'long.json');
        writeFileSync(file, JSON.stringify(bigExport()));
        execFileSync(cli, ['sessions', 'import', file, '--json'], { env, maxBuffer: 64 * 1024 * 1024 });
      },
    });
  });
  after(async () => {
    await app?.stop();
  });

  it('opens at the last message, scrolls to the top and back; prints the time to interactive', async () => {
    const { session, dataDir } = app;
    const [[id, count]] = dbRows(dataDir, 'select session_id, count(*) from messages group by session_id');
    assert.equal(count, COUNT);
    await session.waitFor('[data-testid="session-item"]', { timeoutMs: 15_000 });
    const visible = (text) =>
      session.execute(
        `const t = document.querySelector("[data-testid=transcript]");
         if (!t) return false;
         const box = t.getBoundingClientRect();
         return [...t.querySelectorAll("[data-testid^=msg-]")].some((m) => {
           const r = m.getBoundingClientRect();
           return m.innerText.includes(${JSON.stringify(text)}) && r.bottom > box.top && r.top < box.bottom;
         });`,
      );
    const started = Date.now();
    await session.execute(`location.hash = '#/sessions/${id}'`);
    await until('the last message visible', () => visible('Last message of the long session'), 30_000);
    const tti = Date.now() - started;
    console.log(`10,000-message session: time to interactive ${tti} ms`);
    const rendered = await session.execute('return document.querySelectorAll("[data-testid=transcript] [data-testid^=msg-]").length');
    assert.ok(rendered < 500, `the transcript is virtualized (${rendered} message rows in the DOM)`);
    await screenshot(session, 'chat-long-bottom.png');

    // It opened one page, the newest: older pages come as the operator scrolls up.
    const ids = dbRows(dataDir, `select id from messages where session_id = ${id} order by id`).map(([m]) => m);
    const inView = () => session.execute('return document.querySelectorAll("[data-testid=transcript] [data-message-id]").length');
    assert.equal(await session.execute(`return document.querySelector('[data-message-id="${ids.at(-201)}"]')`), null);
    // To the top, one page at a time: each time the top of the loaded messages is reached,
    // the page before them is read and put in front, and the message that was at the top
    // stays on screen on every frame.
    const toTop = Date.now();
    let pages = 0;
    let maxMove = 0;
    const jumps = [];
    while (!(await visible('First message of the long session'))) {
      const moved = await session.execute(
        `const t = document.querySelector("[data-testid=transcript]");
         t.scrollTop = 0;
         const box = () => t.getBoundingClientRect().top;
         return new Promise((resolve) => {
           const height = t.clientHeight;
           let anchor = null;
           let frames = 0;
           const tops = [];
           const frame = () => {
             frames += 1;
             if (!anchor) {
               // The topmost message on screen once the scroll reached the top.
               anchor = [...t.querySelectorAll("[data-message-id]")].find((m) => m.getBoundingClientRect().bottom > box());
               anchor = anchor ? anchor.dataset.messageId : null;
             }
             const el = anchor && t.querySelector('[data-message-id="' + anchor + '"]');
             if (el) tops.push(el.getBoundingClientRect().top - box());
             // Done once the page is in (the list scrolled away from the top), at the first
             // message (nothing more to read), or after 5 s.
             const idle = !document.querySelector("[data-testid=page-loading]");
             const first = t.innerText.includes("First message of the long session");
             if ((idle && tops.length > 3 && (t.scrollTop > 0 || first)) || frames > 300) return resolve({ anchor, tops, height });
             requestAnimationFrame(frame);
           };
           requestAnimationFrame(frame);
         });`,
      );
      pages += 1;
      const spread = Math.max(...moved.tops) - Math.min(...moved.tops);
      maxMove = Math.max(maxMove, spread);
      // Rows put in front are placed by estimated heights; the list then keeps the message
      // read where it was as they are measured. It may move a few px while they settle (7 px
      // here), never 100 (284 px before the anchor; without any restore it would be 200 rows
      // away).
      if (spread > 100) jumps.push({ page: pages, anchor: moved.anchor, tops: moved.tops, height: moved.height });
      assert.ok(pages <= Math.ceil(COUNT / 200) + 1, `at most one read per page (${pages})`);
    }
    console.log(
      `10,000-message session: scroll to the top ${Date.now() - toTop} ms, ${pages} pages read; ` +
        `the message on screen moved at most ${maxMove.toFixed(0)} px while a page loaded`,
    );
    assert.equal(jumps.length, 0, `the message on screen moved by 100 px or more while an older page loaded: ${JSON.stringify(jumps.slice(0, 3))}`);
    assert.ok((await inView()) < 500, 'still virtualized with every page loaded');
    await screenshot(session, 'chat-long-top.png');
    const [jump] = await session.waitFor('[data-testid="jump-latest"]');
    await session.click(jump);
    await until('the last message visible again', () => visible('Last message of the long session'), 15_000);
    await screenshot(session, 'chat-long-back.png');
  });
});
