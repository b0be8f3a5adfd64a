import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/svelte';
import type { Execution, ToolCall } from '../ipc';

import ToolCallCard from './ToolCallCard.svelte';

const call = (id: string): ToolCall => ({
  call_id: id,
  name: 'run',
  arguments: JSON.stringify({ target: 'host:web1', command: 'systemctl status nginx' }),
  result: null,
  is_error: false,
});

const execution = (id: number, callId: string, status: Execution['status'], exit: number | null): Execution => ({
  id,
  session_id: 1,
  call_id: callId,
  target: 'host:web1',
  command: 'systemctl status nginx',
  canonical: 'systemctl status nginx',
  class: 'read_only',
  reason: 'spec.systemctl.status: shows units',
  status,
  approval: 'not_needed',
  exit_code: exit,
  duration_ms: 10,
  stdout: '',
  stderr: '',
  created_at_ms: id,
});

describe('ToolCallCard', () => {
  afterEach(() => cleanup());

  it('shows the execution of its own call when the same command ran twice', () => {
    const executions = [execution(1, 'call-a', 'failed', 3), execution(2, 'call-b', 'finished', 0)];
    render(ToolCallCard, { call: call("call-b"), execution: executions.find((e) => e.call_id === "call-b") });
    const status = screen.getByText(/exit 0/);
    expect(status.textContent).toContain('finished');
    expect(screen.queryByText(/exit 3/)).toBeNull();
  });

  it('shows no execution for a call that has none yet', () => {
    render(ToolCallCard, { call: call("call-c"), execution: undefined });
    expect(screen.queryByText(/exit/)).toBeNull();
  });
});
