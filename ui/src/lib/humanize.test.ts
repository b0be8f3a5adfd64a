import { describe, expect, it } from 'vitest';
// The agent's tool specs as offered to the model (the agent's tests keep this copy equal to
// what it generates): a tool added there without a human line fails here.
import toolSpecs from '../../../crates/agent/tests/data/tool_specs.json';
import notesRs from '../../../crates/agent/src/notes.rs?raw';
import { entityName, humanizeCall, humanizeNote, humanizeStepTitle } from './humanize';
import { buildRows } from './transcript/rows';
import type { Message, ToolCall } from './ipc';

const declared = (toolSpecs as { name: string }[]).map((t) => t.name);

/** Plausible arguments for each declared tool, shaped as the agent's schemas declare them. */
const SAMPLE_ARGS: Record<string, object> = {
  set_goal: { goal: 'Know the kernel of pve1' },
  search_knowledge: { query: 'pve1 kernel', limit: 5 },
  get_knowledge_content: { id: 12 },
  get_entity: { slug: 'host:pve1' },
  list_entities: { kind: 'host', limit: 50 },
  get_relations: { slug: 'service:nginx' },
  list_targets: {},
  get_health_summary: {},
  get_state_snapshot: {},
  propose_plan: { steps: [{ title: 'Read the kernel', target: 'host:pve1' }, { title: 'Check disks', detail: 'df -h' }] },
  update_plan_step: { seq: 2, status: 'done', note: 'all disks under 80%' },
  run: { target: 'host:pve1', command: 'uname -r', reason: 'read the kernel', step: 1 },
  cancel_execution: { id: 7 },
  update_entity_attributes: { slug: 'host:pve1', attributes: { kernel: '6.8.12' } },
  create_relationship: { from: 'service:nginx', kind: 'runs_on', to: 'host:pve1' },
  upsert_knowledge: { kind: 'runbook', title: 'Restart nginx safely', body: 'systemctl reload nginx', about: ['service:nginx'] },
  ask_operator: { question: 'Which host runs the database?' },
  complete_task: { outcome: 'success', summary: 'pve1 runs 6.8.12' },
};

/** What Nomos answers the model (notes.rs and runner.rs phrasing): never to be shown. */
const MODEL_NOTE_FRAGMENTS = [
  'STOP',
  'Do NOT',
  'Advance it now',
  'Approval words',
  'Call propose_plan',
  'get_state_snapshot',
  'rerun_because',
  'The operator has been notified',
];
const NOTE_RESULTS: Record<string, string> = {
  propose_plan:
    'Plan v2 set (3 steps). A write-back step was appended: record what you learn as facts before completing. STOP. Wait for operator approval. Approval words: yes, ok. On approval advance with update_plan_step + run. Do NOT call propose_plan again.',
  update_plan_step: 'Step 2 is done.',
  complete_task: 'Task completed. The operator has been notified.',
  ask_operator: 'Question shown to the operator. STOP and wait for the answer.',
  update_entity_attributes: 'Recorded on host:pve1: {"kernel": "6.8.12"}',
  create_relationship: 'Recorded: {"from": "service:nginx"}',
  cancel_execution: 'Execution 7 cancelled.',
};

function toolNamesIn(text: string): string[] {
  return declared.filter((name) => name !== 'run' && new RegExp(`\\b${name}\\b`).test(text));
}

describe('humanizeCall over every declared tool', () => {
  it('the declaration list is read (18 tools today)', () => {
    expect(declared.length).toBeGreaterThanOrEqual(18);
    expect(declared).toContain('update_entity_attributes');
  });

  for (const name of declared) {
    it(`${name}: a human line, no tool name, no model note`, () => {
      const args = SAMPLE_ARGS[name];
      expect(args, `add sample arguments and a human line for the new tool ${name}`).toBeDefined();
      const line = humanizeCall(name, JSON.stringify(args), NOTE_RESULTS[name] ?? null, false, { generation: 1 });
      if (name === 'run') {
        expect(line).toBeNull(); // a command is a card, not a line
        return;
      }
      expect(line).not.toBeNull();
      expect(line!.kind).not.toBe('generic');
      expect(toolNamesIn(line!.text)).toEqual([]);
      for (const fragment of MODEL_NOTE_FRAGMENTS) {
        expect(line!.text).not.toContain(fragment);
        expect(line!.detail ?? '').not.toContain(fragment);
      }
      expect(line!.text).not.toMatch(/[{}]/); // never raw JSON
    });

    it(`${name}: malformed or missing arguments still give a line without JSON`, () => {
      for (const raw of ['', '{', 'null', '[]', '{"unexpected": {"deep": 1}}']) {
        const line = humanizeCall(name, raw, null, false);
        if (name === 'run') continue;
        expect(line!.text.length).toBeGreaterThan(0);
        expect(line!.text).not.toMatch(/[{}]/);
        expect(toolNamesIn(line!.text)).toEqual([]);
      }
    });

    it(`${name}: a refusal says "not accepted" and never shows the refusal note`, () => {
      if (name === 'run') return;
      const refusal = 'Refused: no plan. Call propose_plan first, then wait. Do NOT run commands before a plan exists.';
      const line = humanizeCall(name, JSON.stringify(SAMPLE_ARGS[name]), refusal, true);
      expect(line!.refused).toBe(true);
      expect(line!.text).toMatch(/not accepted/);
      expect(line!.text).not.toContain('Refused');
      expect(line!.detail ?? '').not.toContain('Do NOT');
    });
  }

  it('speaks the operator lines of the brief', () => {
    const h = (name: string, args: object, result: string | null = null) =>
      humanizeCall(name, JSON.stringify(args), result, false, { generation: 1, stepTitle: (g, s) => (g === 1 && s === 2 ? 'Check disks' : undefined) })!.text;
    expect(h('set_goal', { goal: 'Update nginx' })).toBe('Goal: Update nginx');
    expect(h('propose_plan', SAMPLE_ARGS.propose_plan!, 'Plan v2 set (4 steps). STOP.')).toBe('Proposed plan v2 (4 steps)');
    expect(h('propose_plan', { steps: [{ title: 'a' }] })).toBe('Proposed plan v2 (1 step)');
    expect(h('update_plan_step', { seq: 2, status: 'done' })).toBe('Step 2 done: Check disks');
    expect(h('update_plan_step', { seq: 3, status: 'failed', note: 'disk full' })).toBe('Step 3 failed — disk full');
    expect(h('update_entity_attributes', { slug: 'host:pve1', attributes: { kernel: '6.8.12' } })).toBe('Learned: pve1 kernel = 6.8.12');
    expect(h('update_entity_attributes', { slug: 'host:pve1', attributes: { a: 1, b: true, c: 'x', d: 2 } })).toBe(
      'Learned: pve1 a = 1, b = true, c = x (+1 more)',
    );
    expect(h('create_relationship', { from: 'service:nginx', kind: 'runs_on', to: 'host:pve1' })).toBe('Linked nginx → pve1 (runs on)');
    expect(h('complete_task', { outcome: 'success', summary: 's' }, 'Completed as partial, not success: facts not written back.')).toBe(
      'Task finished: partly done',
    );
  });

  it('a step starting and lookups fold; outcomes do not', () => {
    expect(humanizeCall('update_plan_step', '{"seq":1,"status":"running"}', null, false)!.minor).toBe(true);
    expect(humanizeCall('get_entity', '{"slug":"host:a"}', null, false)!.minor).toBe(true);
    expect(humanizeCall('update_plan_step', '{"seq":1,"status":"done"}', null, false)!.minor).toBe(false);
    expect(humanizeCall('complete_task', '{"outcome":"failed","summary":"x"}', null, false)!.minor).toBe(false);
  });

  it('a lookup result is unfolded only when it is data, never when it is prose for the model', () => {
    expect(humanizeCall('get_entity', '{"slug":"host:a"}', '{"slug":"host:a","attributes":{}}', false)!.detail).toContain('"slug"');
    expect(humanizeCall('get_entity', '{"slug":"host:a"}', 'No entity host:a is known yet.', false)!.detail).toBeUndefined();
  });

  it.each(['frobnicate', 'delete_everything', 'x'])('unknown tool %s: a neutral folded line', (name) => {
    const line = humanizeCall(name, '{"a":{"b":1}}', 'Do NOT do this. STOP.', false)!;
    expect(line.kind).toBe('generic');
    expect(line.text).not.toContain(name);
    expect(line.text).not.toMatch(/[{}]/);
    expect(line.minor).toBe(true);
    expect(line.detail).not.toContain('STOP');
  });
});

describe('humanizeStepTitle', () => {
  it.each([
    ['Write back: update_entity_attributes + create_relationship + upsert_knowledge', 'Record what was learned'],
    ['Write back: update_entity_attributes', 'Record what was learned'],
    ['write-back: upsert_knowledge, create_relationship', 'Record what was learned'],
    ['Writeback update_entity_attributes and upsert_knowledge', 'Record what was learned'],
    ['Write back: upsert_knowledge if anything changed', 'Record what was learned (if anything changed)'],
    ['update_entity_attributes + create_relationship', 'Record what was learned'],
    ['Check state with get_state_snapshot', 'Check state with check the recorded state'],
    ['search_knowledge for nginx runbooks', 'Search what is known for nginx runbooks'],
    ['Read the kernel name', 'Read the kernel name'],
    ['Run uname on pve1', 'Run uname on pve1'],
  ])('%s', (input, expected) => {
    const out = humanizeStepTitle(input);
    expect(out).toBe(expected);
    expect(toolNamesIn(out)).toEqual([]);
  });
});

describe('humanizeNote: the notes.rs texts become operator lines', () => {
  // Every string literal of notes.rs that is a sentence to the model.
  const literals = [...notesRs.matchAll(/"((?:[^"\\]|\\[\s\S])*)"/g)]
    .map((m) => m[1]!.replace(/\\\s*\n\s*/g, '').replace(/\\"/g, '"'))
    .filter((s) => s.length > 30 && /^[A-Z]/.test(s));

  it('finds the notes', () => {
    expect(literals.length).toBeGreaterThan(8);
  });

  for (const text of literals) {
    it(`never verbatim: ${text.slice(0, 50)}`, () => {
      const line = humanizeNote(text, { generation: 2 });
      expect(line.text).not.toBe(text);
      expect(toolNamesIn(line.text)).toEqual([]);
      for (const fragment of MODEL_NOTE_FRAGMENTS) expect(line.text).not.toContain(fragment);
      expect(line.detail).toBeUndefined();
    });
  }

  it('approvals name the plan generation', () => {
    expect(humanizeNote('The operator approved the plan (Approve button). Advance it now.', { generation: 1 }).text).toBe('You approved plan v1');
    expect(humanizeNote('The operator approved the plan in chat. Advance it now.', { generation: 3 }).text).toBe('You approved plan v3');
    expect(humanizeNote('The operator did not approve. Do not run anything.', { generation: 2 }).text).toBe('You did not approve plan v2');
  });

  it('an unknown note is a neutral line', () => {
    const line = humanizeNote('Some future directive: call foo_bar now. STOP.');
    expect(line.text).not.toContain('foo_bar');
    expect(line.text).not.toContain('STOP');
  });
});

describe('buildRows: a finished task reads as the operator lines', () => {
  const call = (id: string, name: string, args: object, result: string | null): ToolCall => ({
    call_id: id,
    name,
    arguments: JSON.stringify(args),
    result,
    is_error: false,
  });
  const msg = (id: number, role: Message['role'], text: string, tool_calls: ToolCall[] = []): Message => ({
    id,
    role,
    text,
    pending: false,
    auto: false,
    error: null,
    tool_calls,
    created_at_ms: id,
  });

  it('plan generation and step titles follow the transcript', () => {
    const messages = [
      msg(1, 'user', 'kernel?'),
      msg(2, 'assistant', 'Checking.', [
        call('a', 'set_goal', { goal: 'Know the kernel' }, 'Goal set.'),
        call('b', 'propose_plan', { steps: [{ title: 'Read it' }] }, 'Plan v1 set (2 steps). STOP. Do NOT call propose_plan again.'),
      ]),
      msg(3, 'system', 'The operator approved the plan (Approve button). Advance it now: update_plan_step (running) + run, in order. Do NOT call propose_plan again.'),
      msg(4, 'assistant', '', [
        call('c', 'update_plan_step', { seq: 1, status: 'running' }, 'Step 1 is running.'),
        call('d', 'run', { target: 'host:local', command: 'uname -s', reason: 'r' }, 'exit 0'),
        call('e', 'update_plan_step', { seq: 1, status: 'done' }, 'Step 1 is done.'),
        call('f', 'update_plan_step', { seq: 2, status: 'done' }, 'Step 2 is done.'),
        call('g', 'complete_task', { outcome: 'success', summary: 'Linux' }, 'Task completed. The operator has been notified.'),
      ]),
    ];
    const plan = [
      { id: 1, generation: 1, seq: 1, title: 'Read it', detail: null, target: null, status: 'done' as const, note: null },
      { id: 2, generation: 1, seq: 2, title: 'Write back: update_entity_attributes + create_relationship + upsert_knowledge', detail: null, target: null, status: 'done' as const, note: null },
    ];
    const rows = buildRows(messages, [], plan);
    const texts = rows.flatMap((r) =>
      r.kind === 'note' ? [r.line.text] : r.kind === 'assistant' ? r.parts.flatMap((p) => (p.kind === 'activity' ? p.lines.map((l) => l.text) : [`[run ${p.call.call_id}]`])) : [],
    );
    expect(texts).toEqual([
      'Goal: Know the kernel',
      'Proposed plan v1 (2 steps)',
      'You approved plan v1',
      'Step 1 started: Read it',
      '[run d]',
      'Step 1 done: Read it',
      'Step 2 done: Record what was learned',
      'Task finished: success',
    ]);
    for (const t of texts) expect(toolNamesIn(t)).toEqual([]);
  });
});

describe('entityName', () => {
  it.each([
    ['host:pve1', 'pve1'],
    ['service:nginx', 'nginx'],
    ['lxc:101', '101'],
    ['plain', 'plain'],
    ['', 'an entity'],
    [42, 'an entity'],
  ])('%s', (slug, expected) => expect(entityName(slug)).toBe(expected));
});
