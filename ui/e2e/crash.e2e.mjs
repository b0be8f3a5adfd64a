// End-to-end: crash recovery of the desktop app (DESIGN §15, issue 16 suite 1). The real app
// (tauri-driver + WebKitWebDriver) is killed with SIGKILL — the app process itself, found by
// its pid, not only its WebDriver session — in the middle of a turn, then started again on the
// same data directory and the same scripted model server:
// - while a command of the approved plan runs (the turn waiting on it): after the restart the
//   command's process group is gone, its execution is marked failed with a reason, nothing
//   stored is lost, no empty, pending or duplicate bubble, the continuation runs once (model
//   requests counted on the server) and the next message is answered;
// - while the model streams its reply: the operator's message is kept, no half bubble stays
//   "Thinking…", and the session goes on.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  artifacts,
  dbRows,
  groupMembers,
  launchApp,
  mockRequests,
  screenshot,
  sendMessage,
  startMockLlm,
  transcriptState,
  until,
  writeSettings,
} from './harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function checkTranscript(what, state) {
  for (const text of state.assistants) assert.notEqual(text.trim(), '', `${what}: an empty bubble`);
  assert.equal(state.progress, 0, `${what}: a bubble left "Thinking…"`);
  assert.equal(new Set(state.ids).size, state.ids.length, `${what}: a message shown twice: ${state.ids}`);
}

function checkDatabase(what, dataDir) {
  assert.deepEqual(dbRows(dataDir, 'select id from messages where pending = 1'), [], `${what}: a pending row`);
  assert.deepEqual(
    dbRows(
      dataDir,
      "select id from messages m where role = 'assistant' and trim(text) = '' and error is null and not exists (select 1 from tool_calls t where t.message_id = m.id)",
    ),
    [],
    `${what}: an empty assistant row`,
  );
}

/** Opens a session in the app's window, as the operator does from the sidebar. */
async function openSession(session, id) {
  await session.waitFor('[data-testid="app-frame"]', { timeoutMs: 20_000 });
  await session.execute(`location.hash = '#/sessions/${id}'`);
  await session.waitFor('[data-testid="chat-title"]', { timeoutMs: 10_000 });
}

/** The rows a restart must keep, read before the kill and compared after it. */
function persisted(dataDir, session) {
  return {
    messages: dbRows(dataDir, `select id, role, text from messages where session_id = ${session} and pending = 0 order by id`),
    steps: dbRows(dataDir, `select generation, seq, title from plan_steps where session_id = ${session} order by generation, seq`),
    toolCalls: dbRows(
      dataDir,
      `select t.call_id, t.name from tool_calls t join messages m on m.id = t.message_id where m.session_id = ${session} order by t.rowid`,
    ),
  };
}

function keptAfterRestart(what, before, now) {
  const ids = new Set(now.messages.map((m) => m[0]));
  for (const m of before.messages) assert.ok(ids.has(m[0]), `${what}: message ${JSON.stringify(m)} lost`);
  for (const m of now.messages.filter((m) => before.messages.some((b) => b[0] === m[0]))) {
    assert.deepEqual(m, before.messages.find((b) => b[0] === m[0]), `${what}: message ${m[0]} changed`);
  }
  assert.deepEqual(now.steps.slice(0, before.steps.length), before.steps, `${what}: the plan`);
  const calls = new Set(now.toolCalls.map((c) => c[0]));
  for (const c of before.toolCalls) assert.ok(calls.has(c[0]), `${what}: tool call ${c} lost`);
}

describe('crash recovery of the desktop app', () => {
  // What a test started, stopped when it ends (one app at a time under the driver).
  let cleanups = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch((e) => console.error(e.message));
    cleanups = [];
  });

  /** A model server and a home for one scenario, with short limits in the settings file. */
  async function setUp(name, replies, limits = {}) {
    const home = mkdtempSync(join(tmpdir(), `nomos-e2e-${name}-`));
    const script = join(home, 'model.yaml');
    writeFileSync(script, `model: mock-e2e\nreplies:\n${replies}`);
    const model = await startMockLlm(script);
    cleanups.push(async () => {
      model.child.kill('SIGTERM');
      writeFileSync(join(artifacts, `${name}-mock-llm.log`), model.log());
    });
    writeSettings(join(home, 'data'), { limits: { model_request_secs: 60, ...limits } });
    return { home, model };
  }

  async function launch(name, home, model) {
    const app = await launchApp({ name, home, modelUrl: model.url });
    cleanups.push(() => app.stop());
    return app;
  }

  it('a kill -9 while a planned command runs: the command ended and marked, the continuation runs once, the session goes on', async () => {
    // A command long enough to outlive the app; the turn waits on it (run_wait 25 s) when the
    // app is killed. Commands run with a cleared environment: it is found by its process group.
    const argv = ['sleep', '53'];
    const { home, model } = await setUp(
      'crash-exec',
      `
  - kind: tool_calls
    text: "I'll wait for the slow job."
    calls:
      - {name: set_goal, arguments: {goal: "Wait for the slow job"}}
      - name: propose_plan
        arguments: {steps: [{title: "Wait for the slow job", target: "host:local"}]}
  - kind: tool_calls
    expect: [{last_user_contains: "Approve button"}]
    calls:
      - {name: update_plan_step, arguments: {seq: 1, status: running}}
      - {name: run, arguments: {target: "host:local", command: "${argv.join(' ')}", reason: "wait for the job", step: 1}}
  - kind: text
    text: "The slow job was cut by a restart; nothing was captured."
  - kind: text
    expect: [{last_user_contains: "is it fine now"}]
    text: "Still here after the restart."
`,
      { run_wait_secs: 25 },
    );
    let app = await launch('crash-exec-1', home, model);
    let s = app.session;
    await s.waitFor('[data-testid="app-frame"]', { timeoutMs: 20_000 });
    await sendMessage(s, 'Wait for the slow job please');
    const [approve] = await s.waitFor('[data-testid="approve-plan"]', { timeoutMs: 20_000 });
    const hash = await s.execute('return location.hash');
    const sessionId = Number(/^#\/sessions\/(\d+)$/.exec(hash)?.[1]);
    assert.ok(sessionId > 0, `the chat shows the new session (${hash})`);
    await s.click(approve);

    // The command runs and the turn is live, waiting on it.
    const [[executionId, pgid]] = await until(
      'the execution running with its process group',
      () => {
        const rows = dbRows(app.dataDir, "select id, pgid from executions where status = 'running' and pgid is not null");
        return rows.length === 1 && groupMembers(rows[0][1]).some((c) => c.includes(argv.join(' '))) ? rows : null;
      },
      20_000,
    );
    await until('the turn live in the UI', async () => (await transcriptState(s)).busy, 5_000);
    assert.equal((await mockRequests(model)).count, 2, 'the plan and the run');
    await screenshot(s, 'crash-exec-before-kill.png');
    const before = persisted(app.dataDir, sessionId);

    await app.kill9();
    // The app is gone; the command it started is not (its own process group).
    await sleep(500);
    assert.ok(groupMembers(pgid).length >= 1, `the command's group ${pgid} outlives the killed app`);

    app = await launch('crash-exec-2', home, model);
    s = app.session;
    // Start-up recovery ends the orphaned command's group and says so on its row.
    await until(`process group ${pgid} gone after the restart`, () => groupMembers(pgid).length === 0, 15_000);
    const [[status, error]] = dbRows(app.dataDir, `select status, error from executions where id = ${executionId}`);
    assert.notEqual(status, 'running', 'the execution is no longer running');
    assert.ok(['failed', 'finished', 'cancelled', 'timed_out'].includes(status), status);
    if (status !== 'finished') assert.match(error ?? '', /exited|killed|process group/, `a reason on the row: ${error}`);

    // The operator looks at the session: the continuation runs, once.
    await openSession(s, sessionId);
    await until('the continuation request', async () => (await mockRequests(model)).count >= 3, 20_000);
    await until('the continuation ends', async () => !(await transcriptState(s)).busy && (await transcriptState(s)).assistants.some((t) => t.includes('cut by a restart')), 20_000);
    // Browsing away and back, and the continuation worker's ticks, start nothing more.
    await s.execute("location.hash = '#/'");
    await sleep(1_000);
    await openSession(s, sessionId);
    await sleep(3_000);
    const traffic = await mockRequests(model);
    assert.equal(traffic.count, 3, `the continuation ran once: ${JSON.stringify(traffic.requests.slice(2))}`);
    assert.deepEqual(traffic.failures, [], "the scripted model's checks");
    checkDatabase('after the restart', app.dataDir);
    keptAfterRestart('after the restart', before, persisted(app.dataDir, sessionId));
    let state = await transcriptState(s);
    checkTranscript('after the restart', state);
    assert.deepEqual(state.users, ['Wait for the slow job please'], 'the operator message once');
    assert.equal(state.assistants.filter((t) => t.includes('cut by a restart')).length, 1, 'the continuation shown once');
    // The run's card says why it failed, as the row does.
    const shownWhy = await s.execute('return [...document.querySelectorAll(\'[data-testid="run-error"]\')].map((e) => e.innerText)');
    assert.deepEqual(shownWhy, [error], 'the reason on the run card');
    await screenshot(s, 'crash-exec-after-restart.png');

    // The session goes on.
    await sendMessage(s, 'is it fine now?');
    await until('the next answer', async () => (await transcriptState(s)).assistants.some((t) => t.includes('Still here after the restart')), 20_000);
    await until('the turn over', async () => !(await transcriptState(s)).busy, 10_000);
    assert.equal((await mockRequests(model)).count, 4, 'one request for the next message');
    state = await transcriptState(s);
    checkTranscript('after the next message', state);
    assert.deepEqual(state.users, ['Wait for the slow job please', 'is it fine now?']);
    assert.deepEqual(state.errors, [], 'no error card');
    checkDatabase('after the next message', app.dataDir);
  });

  it('a kill -9 while the model streams: the message kept, no half bubble, the session goes on', async () => {
    const long = 'Reading the logs of every service on this workstation, one by one, slowly. '.repeat(4);
    const { home, model } = await setUp(
      'crash-stream',
      `
  - kind: text
    text: "${long}"
    chunk_chars: 4
    chunk_delay_ms: 150
  - kind: text
    expect: [{any_message_contains: "summarise the logs"}]
    text: "Here is the whole answer after the restart."
`,
    );
    let app = await launch('crash-stream-1', home, model);
    let s = app.session;
    await s.waitFor('[data-testid="app-frame"]', { timeoutMs: 20_000 });
    await sendMessage(s, 'summarise the logs');
    await until('the reply streaming into its bubble', async () => (await transcriptState(s)).assistants.some((t) => t.includes('Reading the logs')), 20_000);
    const sessionId = Number(/^#\/sessions\/(\d+)$/.exec(await s.execute('return location.hash'))?.[1]);
    assert.ok(sessionId > 0);
    assert.equal((await transcriptState(s)).busy, true, 'the turn is live');
    await screenshot(s, 'crash-stream-before-kill.png');
    const before = persisted(app.dataDir, sessionId);
    await app.kill9();

    app = await launch('crash-stream-2', home, model);
    s = app.session;
    await openSession(s, sessionId);
    await sleep(3_000);
    let state = await transcriptState(s);
    checkTranscript('after the restart', state);
    assert.deepEqual(state.users, ['summarise the logs'], 'the operator message kept, once');
    checkDatabase('after the restart', app.dataDir);
    keptAfterRestart('after the restart', before, persisted(app.dataDir, sessionId));
    // A turn cut before any plan leaves the session idle: nothing starts by itself (no
    // request beyond the cut one); the operator's next message carries on.
    assert.equal((await mockRequests(model)).count, 1, 'no automatic turn for an idle session');
    await sendMessage(s, 'go on');
    await until('the answer after the restart', async () => (await transcriptState(s)).assistants.some((t) => t.includes('Here is the whole answer')), 20_000);
    await until('the turn over', async () => !(await transcriptState(s)).busy, 10_000);
    await sleep(1_000);
    const traffic = await mockRequests(model);
    assert.equal(traffic.count, 2, 'the next message answered once, no more');
    assert.deepEqual(traffic.failures, [], "the scripted model's checks");
    state = await transcriptState(s);
    checkTranscript('after the answer', state);
    assert.equal(state.assistants.filter((t) => t.includes('Here is the whole answer')).length, 1);
    assert.deepEqual(state.users, ['summarise the logs', 'go on'], 'both messages, once each');
    assert.deepEqual(state.errors, [], 'no error card');
    checkDatabase('after the answer', app.dataDir);
    await screenshot(s, 'crash-stream-after-restart.png');
  });
});
