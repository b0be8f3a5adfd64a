/**
 * The operator's words for what the agent did. The model talks to Nomos through plumbing tools
 * (`set_goal`, `update_plan_step`, knowledge writes …) and Nomos answers it with notes written
 * for the model ("STOP. Wait for operator approval …"). None of that is shown verbatim: each
 * call becomes one short line, each note what happened in the operator's terms.
 *
 * Pure functions, no Svelte: the chat, the plan panel and their tests share them.
 */

/** One line of activity in the chat. */
export interface HumanLine {
  /** What kind of thing happened; the chat picks an icon and decides what folds. */
  kind:
    | 'goal'
    | 'plan'
    | 'step'
    | 'learned'
    | 'linked'
    | 'knowledge'
    | 'lookup'
    | 'question'
    | 'complete'
    | 'cancel'
    | 'approval'
    | 'notice'
    | 'generic';
  text: string;
  /** Shown only when unfolded: data for a reviewer, never a note written for the model. */
  detail?: string;
  /** Minor lines (lookups, a step starting) fold into a count. */
  minor: boolean;
  /** The tool refused the call. */
  refused: boolean;
}

/** What the lines need to know of the session around a call. */
export interface HumanContext {
  /** The plan generation in force where the call was made (0 before any plan). */
  generation: number;
  /** Step titles of that generation, by seq. */
  stepTitle?: (generation: number, seq: number) => string | undefined;
}

type Args = Record<string, unknown>;

function parseArgs(text: string): Args | null {
  try {
    const value: unknown = JSON.parse(text || '{}');
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Args) : null;
  } catch {
    return null;
  }
}

const str = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
const clip = (text: string, max = 140) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** `host:pve1` → `pve1`: the kind prefix is for the graph, the name is what operators say. */
export function entityName(slug: unknown): string {
  const text = str(slug);
  const i = text.indexOf(':');
  return i > 0 && i < text.length - 1 ? text.slice(i + 1) : text || 'an entity';
}

const words = (text: string) => text.replace(/[_-]+/g, ' ').trim();

function shortValue(value: unknown): string {
  if (typeof value === 'string') return clip(value, 60);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return 'unknown';
  return clip(JSON.stringify(value), 60);
}

/** "Plan v2 set (4 steps)" in a propose_plan result: the generation and count Nomos recorded. */
export function planSetIn(result: string | null): { generation: number; steps: number } | null {
  const m = result?.match(/Plan v(\d+) set \((\d+) steps?\)/);
  return m ? { generation: Number(m[1]), steps: Number(m[2]) } : null;
}

function line(kind: HumanLine['kind'], text: string, extra: Partial<HumanLine> = {}): HumanLine {
  return { kind, text, minor: false, refused: false, ...extra };
}

/** A lookup's result is data (JSON) a reviewer may unfold; a prose result is a note: hidden. */
function dataDetail(result: string | null): string | undefined {
  if (!result) return undefined;
  const trimmed = result.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return undefined;
  }
}

/**
 * The line for one tool call, or null for `run` (a command gets its own card).
 * `result` is Nomos's answer to the model: used only to learn facts (the plan generation, a
 * refusal), never shown as text.
 */
export function humanizeCall(
  name: string,
  argumentsText: string,
  result: string | null,
  isError: boolean,
  ctx: HumanContext = { generation: 0 },
): HumanLine | null {
  if (name === 'run') return null;
  const args = parseArgs(argumentsText) ?? {};
  const refused = isError;
  const out = ((): HumanLine => {
    switch (name) {
      case 'set_goal':
        return line('goal', `Goal: ${clip(str(args.goal) || 'not stated')}`);
      case 'propose_plan': {
        const steps = Array.isArray(args.steps) ? args.steps.length : 0;
        const set = planSetIn(result);
        const generation = set?.generation ?? ctx.generation + 1;
        const count = set?.steps ?? steps;
        if (refused) return line('plan', `A new plan (${plural(steps, 'step')}) was not accepted`);
        return line('plan', `Proposed plan v${generation} (${plural(count, 'step')})`);
      }
      case 'update_plan_step': {
        const seq = Number(args.seq);
        const status = str(args.status);
        const title = Number.isFinite(seq) ? ctx.stepTitle?.(ctx.generation, seq) : undefined;
        const which = `Step ${Number.isFinite(seq) ? seq : '?'}`;
        const verb = STEP_VERB[status] ?? 'updated';
        const note = str(args.note);
        const named = title ? `${which} ${verb}: ${humanizeStepTitle(title)}` : `${which} ${verb}`;
        return line('step', note && status !== 'running' ? `${named} — ${clip(note, 100)}` : named, {
          minor: status === 'running',
        });
      }
      case 'update_entity_attributes': {
        const attrs = args.attributes && typeof args.attributes === 'object' ? (args.attributes as Args) : {};
        const entries = Object.entries(attrs);
        const shown = entries.slice(0, 3).map(([k, v]) => `${words(k)} = ${shortValue(v)}`);
        const more = entries.length > 3 ? ` (+${entries.length - 3} more)` : '';
        const facts = shown.length ? `${shown.join(', ')}${more}` : 'facts';
        return line('learned', `Learned: ${entityName(args.slug)} ${facts}`, {
          detail: entries.length > 3 ? entries.map(([k, v]) => `${k} = ${shortValue(v)}`).join('\n') : undefined,
        });
      }
      case 'create_relationship': {
        const kind = words(str(args.kind));
        return line('linked', `Linked ${entityName(args.from)} → ${entityName(args.to)}${kind ? ` (${kind})` : ''}`);
      }
      case 'upsert_knowledge': {
        const kind = str(args.kind) || 'note';
        return line('knowledge', `Saved ${words(kind)}: ${clip(str(args.title) || 'untitled', 100)}`, {
          detail: str(args.body) ? clip(str(args.body), 2000) : undefined,
        });
      }
      case 'search_knowledge':
        return line('lookup', `Searched what is known for “${clip(str(args.query), 80)}”${
          result?.startsWith('Nothing known') ? ' — nothing yet' : ''
        }`, { minor: true, detail: dataDetail(result) });
      case 'get_knowledge_content':
        return line('lookup', `Read knowledge entry #${shortValue(args.id)}`, { minor: true, detail: dataDetail(result) });
      case 'get_entity':
        return line('lookup', `Looked up ${entityName(args.slug)}`, { minor: true, detail: dataDetail(result) });
      case 'list_entities':
        return line('lookup', str(args.kind) ? `Listed known ${words(str(args.kind))} entities` : 'Listed known entities', {
          minor: true,
          detail: dataDetail(result),
        });
      case 'get_relations':
        return line('lookup', `Looked up what ${entityName(args.slug)} connects to`, { minor: true, detail: dataDetail(result) });
      case 'list_targets':
        return line('lookup', 'Listed the targets commands can run on', { minor: true, detail: dataDetail(result) });
      case 'get_health_summary':
        return line('lookup', 'Read the fleet health summary', { minor: true, detail: dataDetail(result) });
      case 'get_state_snapshot':
        return line('lookup', 'Checked the recorded state of this task', { minor: true, detail: dataDetail(result) });
      case 'cancel_execution':
        return line('cancel', `Cancelled command #${shortValue(args.id)}`);
      case 'ask_operator':
        return line('question', `Asked you: ${clip(str(args.question), 300)}`);
      case 'complete_task': {
        const outcome = str(args.outcome);
        // Nomos downgrades a success whose facts were not written back.
        const downgraded = result?.startsWith('Completed as partial') ?? false;
        const label = OUTCOME_LABEL[downgraded ? 'partial' : outcome] ?? 'finished';
        return line('complete', `Task ${label}`, { detail: str(args.summary) || undefined });
      }
      default:
        // A tool this build does not know: a neutral line; its name and arguments only folded.
        return line('generic', 'Did an internal step', {
          minor: true,
          detail: `${name}\n${clip(argumentsText, 2000)}`,
        });
    }
  })();
  if (refused && !out.refused) {
    out.refused = true;
    if (name !== 'propose_plan') out.text = `${out.text} — not accepted`;
    out.minor = false;
  }
  return out;
}

const STEP_VERB: Record<string, string> = {
  running: 'started',
  done: 'done',
  failed: 'failed',
  skipped: 'skipped',
  pending: 'reset',
};

const OUTCOME_LABEL: Record<string, string> = {
  success: 'finished: success',
  partial: 'finished: partly done',
  failed: 'finished: failed',
};

function plural(n: number, word: string) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Tool names a step title may carry, and the operator's words for them. */
const TOOL_WORDS: Record<string, string> = {
  set_goal: 'set the goal',
  search_knowledge: 'search what is known',
  get_knowledge_content: 'read knowledge',
  get_entity: 'look up',
  list_entities: 'list what is known',
  get_relations: 'look up relations',
  list_targets: 'list targets',
  get_health_summary: 'read the health summary',
  get_state_snapshot: 'check the recorded state',
  propose_plan: 'propose a plan',
  update_plan_step: 'update the plan',
  cancel_execution: 'cancel a command',
  update_entity_attributes: 'record facts',
  create_relationship: 'record links',
  upsert_knowledge: 'save knowledge',
  ask_operator: 'ask you',
  complete_task: 'finish the task',
};
const WRITE_BACK_TOOLS = ['update_entity_attributes', 'create_relationship', 'upsert_knowledge'];
const TOOL_RE = new RegExp(`\\b(${Object.keys(TOOL_WORDS).join('|')})\\b`, 'g');

/**
 * A plan step title in operator words: "Write back: update_entity_attributes + …" →
 * "Record what was learned". Titles without tool names are returned unchanged.
 */
export function humanizeStepTitle(title: string): string {
  const found = [...title.matchAll(TOOL_RE)].map((m) => m[1]!);
  if (!found.length) return title;
  const writeBack = /^\s*write[\s_-]*back\b\s*:?\s*/i;
  const onlyWriteBackTools = found.every((name) => WRITE_BACK_TOOLS.includes(name));
  if (writeBack.test(title) || onlyWriteBackTools) {
    // Whatever is left once the prefix, the tool names and their joiners are gone (e.g. "if
    // anything changed") is kept as the operator's condition.
    const rest = title
      .replace(writeBack, '')
      .replace(TOOL_RE, ' ')
      .replace(/(?:\s*(?:\+|,|&|\/|\band\b|\bor\b)\s*)+/gi, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/^[:;,.\-–—\s]+|[:;,.\-–—\s]+$/g, '');
    return rest ? `Record what was learned (${rest})` : 'Record what was learned';
  }
  const replaced = title.replace(TOOL_RE, (name) => TOOL_WORDS[name] ?? name).replace(/\s+\+\s+/g, ', ');
  return replaced.charAt(0).toUpperCase() + replaced.slice(1);
}

/**
 * A note Nomos wrote to the model (a `system` message), as the operator's line. Unknown notes
 * get a neutral line: their text was written for the model.
 */
export function humanizeNote(text: string, ctx: HumanContext = { generation: 0 }): HumanLine {
  const t = text.trim();
  const v = ctx.generation > 0 ? ` v${ctx.generation}` : '';
  if (/^The operator approved the plan/i.test(t)) return line('approval', `You approved plan${v}`);
  if (/^The operator did not approve/i.test(t)) return line('approval', `You did not approve plan${v}`);
  if (/^The operator says the chat and the plan panel disagree/i.test(t)) {
    return line('notice', 'You said the chat and the plan disagree: Nomos checks what was recorded');
  }
  if (/^The connection to the operator was interrupted/i.test(t)) return line('notice', 'Resumed after an interruption');
  const bg = t.match(/^Background executions? finished/i);
  if (bg) return line('notice', /^Background executions/i.test(t) ? 'Background commands finished' : 'A background command finished');
  if (/^This session has been idle/i.test(t)) return line('notice', 'The session was idle: Nomos was asked to wrap up', { minor: true });
  if (/^(Your last reply was empty|Your reply was empty|Third empty reply)/i.test(t)) {
    return line('notice', 'The model replied with nothing and was asked to continue', { minor: true });
  }
  return line('notice', 'Nomos passed a note to the model', { minor: true });
}
