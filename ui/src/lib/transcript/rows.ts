import type { Execution, Message, PlanStep, ToolCall } from '../ipc';
import { humanizeCall, humanizeNote, planSetIn, type HumanContext, type HumanLine } from '../humanize';

/** A piece of an assistant message after its text: a command card or a group of human lines. */
export type Part =
  | { kind: 'run'; call: ToolCall; execution: Execution | undefined }
  | { kind: 'activity'; key: string; lines: HumanLine[] };

/** One row of the transcript: exactly one stored message. */
export type Row =
  | { kind: 'user'; id: number; message: Message }
  | { kind: 'assistant'; id: number; message: Message; parts: Part[] }
  | { kind: 'note'; id: number; message: Message; line: HumanLine };

/**
 * The transcript as the operator reads it. Walks the messages in order, tracking the plan
 * generation in force (from what Nomos answered `propose_plan`, starting at `generation`: the
 * one in force at the first message when a page starts mid-session), so "You approved plan
 * v2" and "Step 2 done: …" name the plan and step that were current at the time.
 */
export function buildRows(messages: Message[], executions: Execution[], plan: PlanStep[], generation = 0): Row[] {
  const byCall = new Map<string, Execution>();
  for (const e of executions) if (e.call_id) byCall.set(e.call_id, e);
  const titles = new Map<string, string>();
  for (const s of plan) titles.set(`${s.generation}:${s.seq}`, s.title);
  const ctx: HumanContext = {
    generation,
    stepTitle: (generation, seq) => titles.get(`${generation}:${seq}`),
  };

  const rows: Row[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      rows.push({ kind: 'user', id: message.id, message });
    } else if (message.role === 'system') {
      rows.push({ kind: 'note', id: message.id, message, line: humanizeNote(message.text, ctx) });
    } else {
      rows.push({ kind: 'assistant', id: message.id, message, parts: partsOf(message, byCall, ctx) });
    }
  }
  return rows;
}

function partsOf(message: Message, byCall: Map<string, Execution>, ctx: HumanContext): Part[] {
  const parts: Part[] = [];
  let group: HumanLine[] | null = null;
  for (const call of message.tool_calls) {
    if (call.name === 'run') {
      group = null;
      parts.push({ kind: 'run', call, execution: byCall.get(call.call_id) });
      continue;
    }
    const line = humanizeCall(call.name, call.arguments, call.result, call.is_error, ctx);
    if (call.name === 'propose_plan' && !call.is_error) {
      ctx.generation = planSetIn(call.result)?.generation ?? ctx.generation + (call.result === null ? 0 : 1);
    }
    if (!line) continue;
    if (!group) {
      group = [];
      parts.push({ kind: 'activity', key: call.call_id, lines: group });
    }
    group.push(line);
  }
  return parts;
}
