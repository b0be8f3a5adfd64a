// End-to-end: the desktop app and `nomos ask` on one data directory at the same moment (DESIGN
// I24 and §15, issue 16 suite 3). The real app (tauri-driver + WebKitWebDriver) and the real
// CLI binary, each with its own scripted model server, share one home:
// - the app's turn waits on a running command while a `nomos ask` starts a new session and
//   finishes: both replies are kept, the app's command ends with its own output, and the
//   CLI's start-up recovery leaves the app's turn, lease and command alone;
// - a `nomos ask --session` on the app's session while the app's turn runs waits the gate and
//   is refused as busy in another process, storing nothing; once the app's turn ends it is
//   taken, and the audit log shows the turns one after the other;
// - the reverse: the app starts while the CLI's turn waits on its command; the app's recovery
//   leaves it alone, a message from the app is refused as busy, and the app shows the CLI's
//   finished turn.
// Each running command is `cat` of a FIFO the test owns: it runs until the test writes to the
// FIFO, so "still running while the other process starts and ends" is a condition, not a
// race against a sleep.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  artifacts,
  cli,
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

/** How long one `nomos ask` may run before the test ends it and fails. */
const CLI_LIMIT_MS = 120_000;
/** The core's gate wait for a live message (`AgentConfig::gate_wait`, 5 s), less its 50 ms poll. */
const GATE_WAIT_MS = 4_900;
/** What must never appear in any process's output or log (a process taking another's work). */
const DAMAGE = ['store.not_found', 'store.invariant', 'store.corrupt', 'panicked'];

/** The environment of a Nomos process on `home` (as the harness gives the app), with a model. */
function nomosEnv(home, modelUrl) {
  const env = {
    ...process.env,
    NOMOS_DATA_DIR: join(home, 'data'),
    XDG_DATA_HOME: join(home, 'xdg-data'),
    XDG_CONFIG_HOME: join(home, 'xdg-config'),
    XDG_CACHE_HOME: join(home, 'xdg-cache'),
  };
  for (const key of Object.keys(env)) {
    if (/^(NOMOS_LLM_|OPENAI_|ANTHROPIC_|OPENROUTER_)/.test(key)) delete env[key];
  }
  return { ...env, NOMOS_LLM_BASE_URL: modelUrl, NOMOS_LLM_MODEL: 'mock-e2e', NOMOS_LLM_PROVIDER: 'openai' };
}

/**
 * Starts `nomos ARGS` on a home; `done` resolves with { code, stdout, stderr, ms } when it
 * exits. One that outlives CLI_LIMIT_MS is killed by its pid and fails the test.
 */
function startCli(home, modelUrl, args, name) {
  assert.ok(cli && existsSync(cli), `NOMOS_CLI_BINARY must point at the built nomos CLI (got ${cli})`);
  const started = Date.now();
  const child = spawn(cli, args, { env: nomosEnv(home, modelUrl), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise((res, rej) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`nomos ${args.join(' ')} still ran after ${CLI_LIMIT_MS} ms:\n${stdout}\n--- stderr ---\n${stderr}`));
    }, CLI_LIMIT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const out = { code, stdout, stderr, ms: Date.now() - started, pid: child.pid };
      writeFileSync(join(artifacts, `${name}.log`), `$ nomos ${args.join(' ')}\nexit ${code} after ${out.ms} ms\n${stdout}\n--- stderr ---\n${stderr}`);
      res(out);
    });
  });
  return { child, done };
}

function cliText(out) {
  return `exit ${out.code}\n${out.stdout}\n--- stderr ---\n${out.stderr}`;
}

/** No sign of one process taking another's work, and (`--json`) no error event, one clean `done` at least. */
function assertCliClean(what, out) {
  for (const bad of DAMAGE) assert.ok(!(out.stdout + out.stderr).includes(bad), `${what} printed ${bad}:\n${cliText(out)}`);
  for (const line of out.stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const event = JSON.parse(line);
    assert.notEqual(event.type, 'error', `${what}: ${line}`);
    if (event.type === 'done') assert.equal(event.error, false, `${what}: ${line}`);
  }
}

/** Every log file Nomos wrote in the data directory (the app's; the CLI logs to stderr). */
function logs(dataDir) {
  const dir = join(dataDir, 'logs');
  if (!existsSync(dir)) return '';
  return readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}

function assertLogsClean(what, dataDir) {
  const text = logs(dataDir);
  for (const bad of DAMAGE) {
    const line = text.split('\n').find((l) => l.includes(bad));
    assert.equal(line, undefined, `${what}: the app's log has ${bad}`);
  }
}

/** A FIFO the test owns: `cat` of it runs until `release` writes to it. */
function makeGate(home, name) {
  const path = join(home, name);
  execFileSync('mkfifo', ['-m', '600', path]);
  return path;
}

/**
 * Writes `text` to a gate's reader and closes it: the `cat` prints it and exits. Non-blocking,
 * so a gate nobody reads fails at once (ENXIO) instead of hanging the test. Returns whether a
 * reader was there.
 */
function release(gate, text) {
  let fd;
  try {
    fd = openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (err.code === 'ENXIO') return false;
    throw err;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The session's one execution, once it runs `cat GATE` in its own process group. */
async function runningGate(dataDir, session, gate, what) {
  const [row] = await until(
    `${what}: the execution running cat of its gate`,
    () => {
      const rows = dbRows(
        dataDir,
        `select id, pgid, owner from executions where session_id = ${session} and status = 'running' and pgid is not null`,
      );
      return rows.length === 1 && groupMembers(rows[0][1]).some((c) => c === `cat ${gate}`) ? rows : null;
    },
    30_000,
  );
  const [id, pgid, owner] = row;
  assert.ok(owner, `${what}: the execution names its owner process`);
  return { id, pgid, owner };
}

function execution(dataDir, id) {
  const [[status, exitCode, stdout, error, owner]] = dbRows(
    dataDir,
    `select status, exit_code, stdout, error, owner from executions where id = ${id}`,
  );
  return { status, exitCode, stdout, error, owner };
}

/** Asserts a running execution is exactly as its owner left it: running, no error, same owner. */
function assertStillRunning(what, dataDir, exec) {
  assert.deepEqual(
    execution(dataDir, exec.id),
    { status: 'running', exitCode: null, stdout: '', error: null, owner: exec.owner },
    `${what}: the running command was touched`,
  );
  assert.ok(groupMembers(exec.pgid).includes(`cat ${exec.gate}`), `${what}: the command's process is gone`);
}

function messages(dataDir, session) {
  return dbRows(dataDir, `select id, role, text, pending, error, owner from messages where session_id = ${session} order by id`).map(
    ([id, role, text, pending, error, owner]) => ({ id, role, text, pending, error, owner }),
  );
}

/** Nothing half-done in a session: no pending row, no error row, no empty assistant reply. */
function assertSessionSettled(what, dataDir, session) {
  const rows = messages(dataDir, session);
  assert.deepEqual(rows.filter((m) => m.pending), [], `${what}: a pending row`);
  assert.deepEqual(rows.filter((m) => m.error !== null), [], `${what}: a row with an error`);
  assert.deepEqual(
    dbRows(
      dataDir,
      `select id from messages m where session_id = ${session} and role = 'assistant' and trim(text) = '' and not exists (select 1 from tool_calls t where t.message_id = m.id)`,
    ),
    [],
    `${what}: an empty assistant row`,
  );
  return rows;
}

function leaseHolder(dataDir, session) {
  return dbRows(dataDir, `select owner from turn_leases where session_id = ${session}`)[0]?.[0] ?? null;
}

/**
 * The session's turns as its audit log tells them (what `nomos_store::turn_holdings` reads):
 * every holding of the turn lease is a `turn.start`/`turn.end` pair written in the lease's own
 * transaction. Fails on a start while another holding is open, an end of a holding that is
 * not the open one, a tool call outside every holding, or time going back.
 */
function turnHoldings(dataDir, session) {
  const rows = dbRows(dataDir, `select id, tool, arguments, ok, created_at_ms from audit_log where session_id = ${session} order by id`);
  const out = [];
  let open = null;
  let last = -Infinity;
  for (const [id, tool, args, ok, at] of rows) {
    assert.ok(at >= last, `audit row ${id} (${tool}) is older than the row before it`);
    last = at;
    if (tool === 'turn.start' || tool === 'turn.end') {
      const { owner, holding } = JSON.parse(args);
      if (tool === 'turn.start') {
        assert.equal(open, null, `turn ${out.length + 1} started (audit row ${id}) while turn ${open + 1} was held`);
        open = out.length;
        out.push({ owner, holding, start: id, end: null, released: false, toolCalls: 0 });
      } else {
        assert.notEqual(open, null, `audit row ${id} ends a turn that never started`);
        const h = out[open];
        assert.ok(h.owner === owner && h.holding === holding, `audit row ${id} ends ${owner}'s turn while ${h.owner}'s was held`);
        h.end = id;
        h.released = ok === 1;
        open = null;
      }
    } else {
      assert.notEqual(open, null, `audit row ${id} (${tool}) was recorded outside every turn`);
      out[open].toolCalls += 1;
    }
  }
  return out;
}

/** The sidebar's rows: session id, title and status label. */
async function sidebar(session) {
  return session.execute(`
    return [...document.querySelectorAll('[data-testid="session-item"]')].map((a) => [
      Number(/\\/sessions\\/(\\d+)/.exec(a.getAttribute('href'))?.[1]),
      a.querySelector('.title').innerText,
      a.querySelector('.status').innerText,
    ]);
  `);
}

function assertTranscriptClean(what, state) {
  for (const text of state.assistants) assert.notEqual(text.trim(), '', `${what}: an empty bubble`);
  assert.equal(new Set(state.ids).size, state.ids.length, `${what}: a message shown twice: ${state.ids}`);
  assert.deepEqual(state.errors, [], `${what}: an error card`);
}

/** Shows a session in the app's window as the operator does, from another view and back. */
async function reopenSession(session, id) {
  await session.execute("location.hash = '#/'");
  await session.waitFor('[data-testid="app-frame"]', { timeoutMs: 20_000 });
  await session.execute(`location.hash = '#/sessions/${id}'`);
  await until(
    `session ${id} open in the chat`,
    async () => (await session.execute('return location.hash')) === `#/sessions/${id}` && (await session.findAll('[data-testid="chat-title"]')).length > 0,
    10_000,
  );
}

/**
 * Waits until the chat shows the session a CLI finished (its reply, not busy, Done, the
 * sidebar agreeing) and returns what it shows. `how` brings the session's state in: the
 * window getting the focus back, or the operator opening the session again.
 */
async function finishedShown(session, id, reply, how, errors = []) {
  if (how === 'focus') await session.execute("window.dispatchEvent(new FocusEvent('focus'))");
  else await reopenSession(session, id);
  const state = await until(
    `the CLI's finished turn in the app (${how})`,
    async () => {
      const st = await transcriptState(session);
      return st.assistants.some((t) => t.includes(reply)) && !st.busy && st.status === 'Done' ? st : null;
    },
    15_000,
  );
  assertTranscriptClean(`after the CLI (${how})`, { ...state, errors: state.errors.filter((c) => !errors.includes(c)) });
  assert.equal(state.progress, 0, `${how}: a bubble left "Thinking…"`);
  assert.equal(state.assistants.filter((t) => t.includes(reply)).length, 1, `${how}: the reply once`);
  // The sidebar agrees with the chat (it heard no event of the CLI's turn).
  await until(`${how}: the sidebar row finished`, async () => (await sidebar(session)).some(([sid, , st]) => sid === id && st === 'Done'), 10_000);
  return state;
}

const planScript = (goal, expectApproval) => `
  - kind: tool_calls
    text: "I'll ${goal.toLowerCase()}."
    calls:
      - {name: set_goal, arguments: {goal: "${goal}"}}
      - name: propose_plan
        arguments: {steps: [{title: "${goal}", target: "host:local"}]}
  - kind: tool_calls
    ${expectApproval ? 'expect: [{last_user_contains: "Approve button"}]' : ''}
    calls:
      - {name: update_plan_step, arguments: {seq: 1, status: running}}`;

/** The app's task: a plan the operator approves, `cat GATE` (held until the test releases it), a reply. */
const appGateScript = (gatePath) => `${planScript('Read the app gate', true)}
      - {name: run, arguments: {target: "host:local", command: "cat ${gatePath}", reason: "read the gate", step: 1}}
  - kind: text
    expect: [{last_tool_result_contains: "app-gate-says-hello"}]
    text: "App reply: the gate said hello."`;

/** A whole CLI task: its plan, one command, a write-back once `seen` is in the transcript, completion. */
const cliTaskScript = ({ goal, command, reason, seen, attributes, reply, summary }) => `${planScript(goal, false)}
      - {name: run, arguments: {target: "host:local", command: "${command}", reason: "${reason}", step: 1}}
      - {name: update_plan_step, arguments: {seq: 1, status: done}}
  - kind: tool_calls
    expect: [{any_message_contains: "${seen}"}]
    calls:
      - {name: update_entity_attributes, arguments: {slug: "host:local", attributes: ${attributes}}}
      - {name: update_plan_step, arguments: {seq: 2, status: done}}
  - kind: tool_calls
    text: "${reply}"
    calls:
      - {name: complete_task, arguments: {outcome: success, summary: "${summary}"}}`;

describe('the desktop app and nomos ask on one data directory', () => {
  // What a test started, stopped when it ends.
  let cleanups = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c().catch((e) => console.error(e.message));
    cleanups = [];
  });

  /** A home with short model limits and a long run wait (a turn waits on its command). */
  function home(name) {
    const dir = mkdtempSync(join(tmpdir(), `nomos-e2e-${name}-`));
    writeSettings(join(dir, 'data'), { limits: { model_request_secs: 60, run_wait_secs: 150 } });
    return dir;
  }

  async function model(name, dir, replies) {
    const script = join(dir, `${name}.yaml`);
    writeFileSync(script, `model: mock-e2e\nreplies:${replies}\n`);
    const m = await startMockLlm(script);
    cleanups.push(async () => {
      m.child.kill('SIGTERM');
      writeFileSync(join(artifacts, `${name}-mock-llm.log`), m.log());
    });
    return m;
  }

  /** A gate, opened at the end of the test whatever happened, so no `cat` outlives it. */
  function gate(dir, name) {
    const path = makeGate(dir, name);
    cleanups.push(async () => release(path, ''));
    return path;
  }

  async function launch(name, dir, m) {
    const app = await launchApp({ name, home: dir, modelUrl: m.url });
    cleanups.push(() => app.stop());
    await app.session.waitFor('[data-testid="app-frame"]', { timeoutMs: 20_000 });
    return app;
  }

  /** The app's session of a new task whose turn, after the plan's approval, waits on `cat GATE`. */
  async function appTurnOnGate(app, task, appGate) {
    const s = app.session;
    await sendMessage(s, task);
    const [approve] = await s.waitFor('[data-testid="approve-plan"]', { timeoutMs: 20_000 });
    const hash = await s.execute('return location.hash');
    const sessionId = Number(/^#\/sessions\/(\d+)$/.exec(hash)?.[1]);
    assert.ok(sessionId > 0, `the chat shows the new session (${hash})`);
    await s.click(approve);
    const exec = { ...(await runningGate(app.dataDir, sessionId, appGate, 'the app')), gate: appGate };
    await until('the turn live in the UI', async () => (await transcriptState(s)).busy, 10_000);
    return { sessionId, exec };
  }

  it('a nomos ask on a new session while the app waits on a running command: both finish, neither touches the other', async () => {
    const dir = home('twoproc-new');
    const appGate = gate(dir, 'app-gate');
    const appModel = await model(
      'twoproc-new-app',
      dir,
      appGateScript(appGate),
    );
    const cliModel = await model(
      'twoproc-new-cli',
      dir,
      cliTaskScript({
        goal: 'Print the CLI marker',
        command: 'echo cli-marker-42',
        reason: 'print the marker',
        seen: 'cli-marker-42',
        attributes: '{twoproc_cli: "checked"}',
        reply: 'CLI reply: the marker was printed.',
        summary: 'CLI marker printed',
      }),
    );
    const app = await launch('twoproc-new', dir, appModel);
    const s = app.session;
    const { sessionId: appSession, exec: appExec } = await appTurnOnGate(app, 'Read the app gate please', appGate);
    const appOwner = appExec.owner;
    assert.equal(leaseHolder(app.dataDir, appSession), appOwner, "the app holds its session's turn");
    const appPending = messages(app.dataDir, appSession).filter((m) => m.pending);
    await screenshot(s, 'twoproc-new-app-waiting.png');

    // The CLI starts (its start-up recovery runs), does a whole task and ends, all while the
    // app's command runs.
    const out = await startCli(dir, cliModel.url, ['ask', '--approve-plan', '--json', 'Print the CLI marker'], 'twoproc-new-cli').done;
    assert.equal(out.code, 0, cliText(out));
    assertCliClean('the CLI', out);
    const [[cliSession, cliStatus, cliSummary]] = dbRows(app.dataDir, `select id, status, summary from sessions where id != ${appSession}`);
    assert.equal(cliStatus, 'done');
    assert.equal(cliSummary, 'CLI marker printed');
    const [cliExec] = dbRows(app.dataDir, `select id, status, exit_code, stdout, error, owner from executions where session_id = ${cliSession}`);
    assert.deepEqual(cliExec.slice(1, 5), ['finished', 0, 'cli-marker-42\n', null], 'the CLI command ran with its output');
    const cliOwner = cliExec[5];
    assert.ok(cliOwner && cliOwner !== appOwner, `the CLI is its own owner (${cliOwner} vs ${appOwner})`);

    // The app's work as it left it: its command still running, its reply still being
    // written by it, its turn still its own.
    assertStillRunning('after the CLI', app.dataDir, appExec);
    assert.deepEqual(
      messages(app.dataDir, appSession).filter((m) => m.pending),
      appPending,
      "the app's unfinished replies untouched by the CLI's recovery",
    );
    assert.equal(leaseHolder(app.dataDir, appSession), appOwner, "the app still holds its session's turn");
    let state = await transcriptState(s);
    assert.equal(state.busy, true, "the app's turn still live");
    assertTranscriptClean('while the command runs', state);

    // The command ends with what the gate says; the app's turn ends normally with its reply.
    assert.ok(release(appGate, 'app-gate-says-hello\n'), "the app's cat reads its gate");
    await until(
      "the app's reply",
      async () => {
        const st = await transcriptState(s);
        return !st.busy && st.assistants.some((t) => t.includes('App reply: the gate said hello.'));
      },
      30_000,
    );
    assert.deepEqual(
      execution(app.dataDir, appExec.id),
      { status: 'finished', exitCode: 0, stdout: 'app-gate-says-hello\n', error: null, owner: appOwner },
      "the app's command finished with its output",
    );
    state = await transcriptState(s);
    assertTranscriptClean('after the turn', state);
    assert.deepEqual(state.users, ['Read the app gate please']);
    assert.equal(state.sendError, null);

    const appRows = assertSessionSettled("the app's session", app.dataDir, appSession);
    assert.equal(appRows.filter((m) => m.text === 'App reply: the gate said hello.').length, 1, "the app's reply stored once");
    const cliRows = assertSessionSettled("the CLI's session", app.dataDir, cliSession);
    assert.equal(cliRows.filter((m) => m.role === 'user' && m.text === 'Print the CLI marker').length, 1);
    assert.equal(cliRows.filter((m) => m.text === 'CLI reply: the marker was printed.').length, 1, "the CLI's reply stored once");
    // Each process wrote its own session's rows.
    assert.ok(appRows.every((m) => m.owner === null || m.owner === appOwner), JSON.stringify(appRows));
    assert.ok(cliRows.every((m) => m.owner === null || m.owner === cliOwner), JSON.stringify(cliRows));

    // Each session's turns, from the audit log: the message's and the approval's, each given
    // back by the process that ran it.
    for (const [session, owner] of [
      [appSession, appOwner],
      [cliSession, cliOwner],
    ]) {
      const holdings = turnHoldings(app.dataDir, session);
      assert.equal(holdings.length, 2, JSON.stringify(holdings));
      for (const h of holdings) {
        assert.equal(h.owner, owner, JSON.stringify(holdings));
        assert.equal(h.released, true, `a turn was cut: ${JSON.stringify(h)}`);
      }
      assert.equal(leaseHolder(app.dataDir, session), null, `session ${session}'s turn given back`);
    }
    for (const [what, m, count] of [
      ["the app's model", appModel, 3],
      ["the CLI's model", cliModel, 4],
    ]) {
      const traffic = await mockRequests(m);
      assert.deepEqual(traffic.failures, [], `${what}'s checks`);
      assert.equal(traffic.count, count, what);
    }
    assertLogsClean('after both', app.dataDir);
    await screenshot(s, 'twoproc-new-after.png');

    // The operator comes back to the window from the terminal: the CLI's session is listed,
    // finished, and opens with its reply; nothing of it runs in the app.
    await s.execute("window.dispatchEvent(new FocusEvent('focus'))");
    await until(
      "the CLI's session in the app's sidebar",
      async () => JSON.stringify(await sidebar(s)).includes(JSON.stringify([cliSession, 'Print the CLI marker', 'Done'])),
      10_000,
    );
    await reopenSession(s, cliSession);
    state = await until(
      "the CLI's reply in the app",
      async () => {
        const st = await transcriptState(s);
        return st.assistants.some((t) => t.includes('CLI reply: the marker was printed.')) ? st : null;
      },
      15_000,
    );
    assertTranscriptClean("the CLI's session in the app", state);
    assert.deepEqual(state.users, ['Print the CLI marker']);
    assert.equal(state.busy, false);
    assert.equal((await mockRequests(appModel)).count, 3, "the app's model asked nothing for the CLI's session");
    await screenshot(s, 'twoproc-new-cli-session-in-app.png');
  });

  it("nomos ask --session on the app's session during its turn is refused as busy elsewhere, then taken after it: no overlap, nothing lost", async () => {
    const dir = home('twoproc-same');
    const appGate = gate(dir, 'app-gate');
    const appModel = await model(
      'twoproc-same-app',
      dir,
      appGateScript(appGate),
    );
    // Only the CLI's second attempt reaches its model, and it sees the app's turn.
    const follow = 'carry on from the terminal';
    const cliModel = await model(
      'twoproc-same-cli',
      dir,
      `
  - kind: tool_calls
    expect: [{last_user_contains: "${follow}"}, {any_message_contains: "App reply: the gate said hello."}, {any_message_contains: "app-gate-says-hello"}]
    calls:
      - {name: update_plan_step, arguments: {seq: 1, status: done}}
      - {name: update_entity_attributes, arguments: {slug: "host:local", attributes: {twoproc_gate: "read"}}}
      - {name: update_plan_step, arguments: {seq: 2, status: done}}
  - kind: tool_calls
    text: "CLI reply: finished from the terminal."
    calls:
      - {name: complete_task, arguments: {outcome: success, summary: "Gate read, finished from the terminal"}}`,
    );
    const app = await launch('twoproc-same', dir, appModel);
    const s = app.session;
    const { sessionId, exec: appExec } = await appTurnOnGate(app, 'Read the app gate please', appGate);
    const appOwner = appExec.owner;
    const appPending = messages(app.dataDir, sessionId).filter((m) => m.pending);
    const args = ['ask', '--session', String(sessionId), '--json', follow];

    // While the app's turn runs, the CLI waits the gate's few seconds and is refused: busy in
    // another Nomos process, the app's pid named. Nothing of it is kept.
    const refused = await startCli(dir, cliModel.url, args, 'twoproc-same-cli-refused').done;
    assert.equal(refused.code, 1, cliText(refused));
    assert.match(
      refused.stderr,
      new RegExp(`^nomos: error \\[agent\\.busy\\]: Session ${sessionId} is busy with a turn in another Nomos process \\(pid ${app.pid}\\); try again when it finishes\\.$`, 'm'),
      cliText(refused),
    );
    assert.ok(refused.ms >= GATE_WAIT_MS, `the CLI waited the gate before refusing (${refused.ms} ms)`);
    for (const bad of DAMAGE) assert.ok(!(refused.stdout + refused.stderr).includes(bad), cliText(refused));
    assert.equal((await mockRequests(cliModel)).count, 0, 'a refused message never reached its model');
    assert.deepEqual(
      messages(app.dataDir, sessionId).filter((m) => m.text.includes(follow)),
      [],
      'a refused message is not stored',
    );
    assertStillRunning('after the refused CLI', app.dataDir, appExec);
    assert.deepEqual(messages(app.dataDir, sessionId).filter((m) => m.pending), appPending, "the app's reply in progress untouched");
    assert.equal(leaseHolder(app.dataDir, sessionId), appOwner, 'the app still holds the turn');
    assert.equal((await transcriptState(s)).busy, true, "the app's turn still live");

    // The app's turn ends; the operator's retry at the terminal is taken.
    assert.ok(release(appGate, 'app-gate-says-hello\n'), "the app's cat reads its gate");
    await until(
      "the app's reply",
      async () => {
        const st = await transcriptState(s);
        return !st.busy && st.assistants.some((t) => t.includes('App reply: the gate said hello.'));
      },
      30_000,
    );
    await until("the app's turn given back", () => leaseHolder(app.dataDir, sessionId) === null, 10_000);
    const taken = await startCli(dir, cliModel.url, args, 'twoproc-same-cli-taken').done;
    assert.equal(taken.code, 0, cliText(taken));
    assertCliClean('the CLI', taken);
    const [[status, summary]] = dbRows(app.dataDir, `select status, summary from sessions where id = ${sessionId}`);
    assert.equal(status, 'done');
    assert.equal(summary, 'Gate read, finished from the terminal');
    assert.deepEqual(
      execution(app.dataDir, appExec.id),
      { status: 'finished', exitCode: 0, stdout: 'app-gate-says-hello\n', error: null, owner: appOwner },
      "the app's command finished with its output",
    );

    // Every message of both turns once, none half-done.
    const rows = assertSessionSettled('the shared session', app.dataDir, sessionId);
    for (const text of ['Read the app gate please', follow]) {
      assert.equal(rows.filter((m) => m.role === 'user' && m.text === text).length, 1, `"${text}" stored once`);
    }
    for (const text of ['App reply: the gate said hello.', 'CLI reply: finished from the terminal.']) {
      assert.equal(rows.filter((m) => m.role === 'assistant' && m.text === text).length, 1, `"${text}" stored once`);
    }
    const cliOwner = rows.find((m) => m.text === follow).owner;
    assert.ok(cliOwner && cliOwner !== appOwner, `the CLI's message is its own (${cliOwner})`);

    // The turns one after the other: the app's two (message, approval), then the CLI's; the
    // refused attempt held none.
    const holdings = turnHoldings(app.dataDir, sessionId);
    assert.deepEqual(
      holdings.map((h) => [h.owner, h.released]),
      [
        [appOwner, true],
        [appOwner, true],
        [cliOwner, true],
      ],
      JSON.stringify(holdings),
    );
    assert.ok(holdings[2].start > holdings[1].end, "the CLI's turn began after the app's ended");
    assert.ok(holdings[1].toolCalls >= 1 && holdings[2].toolCalls >= 1, 'each turn recorded its own tool calls');

    // The app shows the CLI's turn when the operator comes back to the window, and again
    // when they open the session anew, and starts nothing of its own for it.
    for (const how of ['focus', 'reopen']) {
      const state = await finishedShown(s, sessionId, 'CLI reply: finished from the terminal.', how);
      assert.deepEqual(state.users, ['Read the app gate please', follow], how);
      assert.equal(state.assistants.filter((t) => t.includes('App reply: the gate said hello.')).length, 1, how);
    }
    for (const [what, m, count] of [
      ["the app's model", appModel, 3],
      ["the CLI's model", cliModel, 2],
    ]) {
      const traffic = await mockRequests(m);
      assert.deepEqual(traffic.failures, [], `${what}'s checks`);
      assert.equal(traffic.count, count, what);
    }
    assertLogsClean('after both', app.dataDir);
    await screenshot(s, 'twoproc-same-after.png');
  });

  it("the app started while nomos ask waits on its command: its recovery leaves the CLI's turn alone, its message is refused as busy", async () => {
    const dir = home('twoproc-reverse');
    const cliGate = gate(dir, 'cli-gate');
    const cliModel = await model(
      'twoproc-reverse-cli',
      dir,
      cliTaskScript({
        goal: 'Read the CLI gate',
        command: `cat ${cliGate}`,
        reason: 'read the gate',
        seen: 'cli-gate-says-hello',
        attributes: '{twoproc_cli_gate: "read"}',
        reply: 'CLI reply: the gate said hello.',
        summary: 'CLI gate read',
      }),
    );
    // The app is given a model that must never be asked: nothing of this session is its to run.
    const appModel = await model('twoproc-reverse-app', dir, ' []');
    const dataDir = join(dir, 'data');
    const task = 'Read the CLI gate';
    const cliRun = startCli(dir, cliModel.url, ['ask', '--approve-plan', '--json', task], 'twoproc-reverse-cli');
    cleanups.push(async () => {
      if (cliRun.child.exitCode === null) cliRun.child.kill('SIGKILL');
    });
    // Read only once the CLI created the database (a read would create an empty file first).
    const sessionId = await until(
      'the CLI session',
      () => {
        if (!existsSync(join(dataDir, 'nomos.db'))) return null;
        try {
          return dbRows(dataDir, 'select id from sessions')[0]?.[0];
        } catch {
          return null; // its schema not written yet
        }
      },
      30_000,
    );
    const cliExec = { ...(await runningGate(dataDir, sessionId, cliGate, 'the CLI')), gate: cliGate };
    const cliOwner = cliExec.owner;
    assert.equal(leaseHolder(dataDir, sessionId), cliOwner, 'the CLI holds its turn');
    const cliPending = messages(dataDir, sessionId).filter((m) => m.pending);

    // The app starts on the same data directory; its start-up recovery runs and takes nothing.
    const app = await launch('twoproc-reverse', dir, appModel);
    const s = app.session;
    const recovery = await until(
      "the app's start-up recovery",
      () => logs(dataDir).split('\n').find((l) => l.includes('start-up recovery')),
      30_000,
    );
    for (const part of ['interrupted_executions: []', 'cut_turns: []']) {
      assert.ok(recovery.includes(part), `the app's recovery took the CLI's work: ${recovery}`);
    }
    assertStillRunning("after the app's start", dataDir, cliExec);
    assert.deepEqual(messages(dataDir, sessionId).filter((m) => m.pending), cliPending, "the CLI's reply in progress untouched");
    assert.equal(leaseHolder(dataDir, sessionId), cliOwner, 'the CLI still holds its turn');
    assert.equal(cliRun.child.exitCode, null, 'the CLI still runs');

    // The operator opens the CLI's session in the app and writes to it: the message waits the
    // gate and is refused as busy in the CLI's process; it stays in the composer, not stored.
    await reopenSession(s, sessionId);
    await until('the CLI task in the app', async () => (await transcriptState(s)).users.includes(task), 10_000);
    assert.equal((await transcriptState(s)).busy, true, "the CLI's turn shown running (its reply is being written)");
    const question = 'is it done yet?';
    await sendMessage(s, question);
    const refused = await until('the refusal', async () => (await transcriptState(s)).sendError, 30_000);
    assert.equal(
      refused.trim(),
      `Session ${sessionId} is busy with a turn in another Nomos process (pid ${cliRun.child.pid}); try again when it finishes.`,
    );
    let state = await transcriptState(s);
    assert.equal(state.draft, question, 'the refused message stays in the composer');
    assert.deepEqual(state.errors, [], 'no error card');
    assert.deepEqual(messages(dataDir, sessionId).filter((m) => m.text.includes(question)), [], 'a refused message is not stored');
    assertStillRunning('after the refused message', dataDir, cliExec);
    await screenshot(s, 'twoproc-reverse-refused.png');

    // Stop in the app: the turn is the CLI's, so the app says where to stop it and neither
    // stops nor pauses anything (a paused session would strand the CLI's work).
    await s.click(await s.find('[data-testid="stop"]'));
    await until('the Stop refused', async () => (await transcriptState(s)).errors.includes('agent.turn_elsewhere'), 10_000);
    const why = await s.execute(`return document.querySelector('[data-testid="turn-error"][data-code="agent.turn_elsewhere"]').textContent`);
    assert.match(why, new RegExp(`Session ${sessionId}'s turn runs in another Nomos process \\(pid ${cliRun.child.pid}\\); stop it there\\.`), why);
    assert.deepEqual(dbRows(dataDir, `select paused_at_ms from sessions where id = ${sessionId}`), [[null]], 'the session is not paused');
    assertStillRunning('after Stop in the app', dataDir, cliExec);
    assert.equal((await transcriptState(s)).busy, true, "the CLI's turn still shown running");
    await screenshot(s, 'twoproc-reverse-stop-elsewhere.png');

    // The CLI's command ends; the CLI finishes its task as if the app were not there.
    assert.ok(release(cliGate, 'cli-gate-says-hello\n'), "the CLI's cat reads its gate");
    const out = await cliRun.done;
    assert.equal(out.code, 0, cliText(out));
    assertCliClean('the CLI', out);
    assert.deepEqual(
      execution(dataDir, cliExec.id),
      { status: 'finished', exitCode: 0, stdout: 'cli-gate-says-hello\n', error: null, owner: cliOwner },
      "the CLI's command finished with its output",
    );
    const [[status, summary]] = dbRows(dataDir, `select status, summary from sessions where id = ${sessionId}`);
    assert.equal(status, 'done');
    assert.equal(summary, 'CLI gate read');
    const rows = assertSessionSettled("the CLI's session", dataDir, sessionId);
    assert.equal(rows.filter((m) => m.role === 'user' && m.text === task).length, 1);
    assert.equal(rows.filter((m) => m.text === 'CLI reply: the gate said hello.').length, 1);
    const holdings = turnHoldings(dataDir, sessionId);
    assert.deepEqual(
      holdings.map((h) => [h.owner, h.released]),
      [
        [cliOwner, true],
        [cliOwner, true],
      ],
      `only the CLI's turns (message, approval), none taken over: ${JSON.stringify(holdings)}`,
    );

    // The app, still showing the session as the CLI's turn left it (busy), shows it finished
    // when the operator comes back to the window, and when they open it anew.
    for (const how of ['focus', 'reopen']) {
      // The Stop's card stays until the session is opened anew.
      state = await finishedShown(s, sessionId, 'CLI reply: the gate said hello.', how, how === 'focus' ? ['agent.turn_elsewhere'] : []);
      assert.deepEqual(state.users, [task], how);
    }
    const traffic = await mockRequests(appModel);
    assert.deepEqual([traffic.count, traffic.failures], [0, []], "the app's model was never asked");
    assert.deepEqual((await mockRequests(cliModel)).failures, [], "the CLI's model's checks");
    assertLogsClean('after both', dataDir);
    await screenshot(s, 'twoproc-reverse-after.png');
  });
});
