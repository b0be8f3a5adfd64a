// End-to-end: sessions for offline review in the real app (tauri-driver + WebKitWebDriver),
// with the model unreachable. A session imported with the CLI is found by a word of its
// command output, opens at the message that ran the command, exports and imports again.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, dbRows, launchApp, screenshot, until, waitForText } from './harness.mjs';

/** A session export as another Nomos wrote it: one read-only run whose output holds a rare word. */
function exportDoc() {
  const t = 1_766_000_000_000;
  const msg = (id, role, text, tool_calls = []) => ({
    id,
    role,
    text,
    reasoning: '',
    auto: false,
    error: null,
    created_at_ms: t + id * 1000,
    updated_at_ms: t + id * 1000,
    tool_calls,
  });
  return {
    format: 'nomos.session',
    version: 1,
    exported_at_ms: t + 60_000,
    session: {
      id: 9,
      title: 'Review the garnet array',
      goal: 'check the array',
      status: 'done',
      outcome: 'success',
      summary: 'array clean',
      created_at_ms: t,
      updated_at_ms: t + 50_000,
      last_active_at_ms: t + 50_000,
      completed_at_ms: t + 50_000,
      imported: null,
    },
    messages: [
      msg(1, 'user', 'Is the array healthy?'),
      msg(2, 'assistant', 'Checking the array now.', [
        {
          call_id: 'c1',
          name: 'run',
          arguments: '{"target":"host:nas","command":"cat /proc/mdstat"}',
          result: 'exit 0',
          result_truncated: false,
          is_error: false,
          created_at_ms: t + 2000,
          finished_at_ms: t + 3000,
        },
      ]),
      msg(3, 'assistant', 'The array is clean.'),
    ],
    plan: [
      {
        generation: 1,
        proposed_at_ms: t + 1500,
        replaced_at_ms: null,
        runs_finished: 1,
        fact_writes: 1,
        knowledge_upserts: 0,
        steps: [
          {
            seq: 1,
            title: 'Read the array state',
            detail: null,
            target: 'host:nas',
            status: 'done',
            status_before_replace: null,
            write_back: false,
            note: null,
            created_at_ms: t + 1500,
            updated_at_ms: t + 3000,
            started_at_ms: t + 2000,
            finished_at_ms: t + 3000,
          },
        ],
      },
    ],
    approval_windows: [],
    executions: [
      {
        id: 1,
        generation: 1,
        step_seq: 1,
        call_id: 'c1',
        target: 'host:nas',
        command: 'cat /proc/mdstat',
        canonical: 'cat /proc/mdstat',
        class: 'read_only',
        decision_reason: 'read-only: cat',
        decision: null,
        approval: 'not_needed',
        approved_by: null,
        approval_window_id: null,
        approved_at_ms: t + 2000,
        status: 'finished',
        exit_code: 0,
        error: null,
        stdout: 'md0 : active raid1 chrysoberyl sdb1[1] sda1[0]\n',
        stderr: '',
        stdout_bytes: 48,
        stderr_bytes: 0,
        stdout_truncated: false,
        stderr_truncated: false,
        created_at_ms: t + 2000,
        updated_at_ms: t + 3000,
        started_at_ms: t + 2000,
        finished_at_ms: t + 3000,
        duration_ms: 1000,
        background: false,
      },
    ],
    audit: [],
  };
}

describe('sessions for offline review', () => {
  let session;
  let home;
  let dataDir;
  let stop;

  before(async () => {
    ({ session, home, dataDir, stop } = await launchApp({
      name: 'sessions',
      // A model nobody answers: reviewing needs none.
      env: {
        NOMOS_LLM_BASE_URL: 'http://127.0.0.1:9/v1',
        NOMOS_LLM_MODEL: 'unreachable',
        NOMOS_LLM_PROVIDER: 'openai',
      },
      beforeStart: ({ home, env }) => {
        const file = join(home, 'export.json');
        writeFileSync(file, JSON.stringify(exportDoc(), null, 2));
        const out = execFileSync(cli, ['sessions', 'import', file, '--json'], { env }).toString();
        assert.equal(JSON.parse(out).session.title, 'Review the garnet array');
      },
    }));
  });

  after(async () => {
    await stop?.();
  });

  it('finds a session by a word of its command output and opens it at that message', async () => {
    await session.waitFor('[data-testid="session-item"]');
    const search = await session.find('[data-testid="session-search"]');
    await session.type(search, 'chrysoberyl');
    const [hit] = await session.waitFor('[data-testid="search-hit"]', { timeoutMs: 10_000 });
    const text = await session.text(hit);
    assert.match(text, /Review the garnet array/);
    assert.match(text, /Output · host:nas/);
    const marks = await session.execute(
      'return [...document.querySelectorAll("[data-testid=search-hit] mark")].map((m) => m.textContent)',
    );
    assert.deepEqual(marks, ['chrysoberyl']);
    await screenshot(session, 'sessions-search.png');
    await session.click(hit);
    const hash = await session.execute('return location.hash');
    assert.match(hash, /^#\/sessions\/\d+\?message=\d+$/);
    // The past session opens with the model unreachable.
    const body = await waitForText(session, /Checking the array now\./);
    assert.match(body, /The array is clean\./);
    await screenshot(session, 'sessions-opened-at-hit.png');
  });

  it('exports and imports through the window; Esc clears the search', async () => {
    const search = await session.find('[data-testid="session-search"]');
    await session.type(search, '\uE00C'); // Escape
    await session.waitFor('[data-testid="session-item"]');
    assert.equal(await session.execute('return document.querySelector("[data-testid=session-search]").value'), '');
    // The export buttons of the open session: a Blob download, the page stays where it is.
    const before = await session.execute('return location.hash');
    await session.click(await session.find('[data-testid="export-json"]'));
    const [notice] = await session.waitFor('[data-testid="transfer-notice"]');
    assert.match(await session.text(notice), /Exported as JSON/);
    assert.equal(await session.execute('return location.hash'), before);
    // The webview saves the download in the working directory: it is the export, and it goes.
    const saved = await until('the downloaded export', () =>
      readdirSync(process.cwd()).find((f) => /^nomos-session-\d+-review-the-garnet-array\.json$/.test(f)),
    );
    const downloaded = JSON.parse(readFileSync(join(process.cwd(), saved), 'utf8'));
    rmSync(join(process.cwd(), saved));
    assert.equal(downloaded.format, 'nomos.session');
    assert.equal(downloaded.session.title, 'Review the garnet array');
    assert.equal(downloaded.executions[0].stdout, exportDoc().executions[0].stdout);
    // Import the same file again through the file picker: a second session, nothing ran.
    const picker = await session.find('[data-testid="import-file"]');
    await session.type(picker, join(home, 'export.json'));
    await session.waitFor('[data-testid="session-item"]', { count: 2, timeoutMs: 10_000 });
    const [imported] = await session.waitFor('[data-testid="transfer-notice"]');
    assert.match(await session.text(imported), /Nothing ran/);
    assert.deepEqual(dbRows(dataDir, 'select count(*), count(imported_at_ms) from sessions'), [[2, 2]]);
    assert.deepEqual(dbRows(dataDir, 'select count(*), count(canonical_sha256) from executions'), [[2, 0]]);
    await screenshot(session, 'sessions-imported.png');
  });
});
