// The only module that talks to the native shell. Everything else imports from here, so the
// transport can be swapped (tests, a browser preview) without touching components.
import { invoke } from '@tauri-apps/api/core';
import type { AppInfo, IpcError, SessionListQuery, SessionSummary } from './types.gen';

export type { AppInfo, IpcError, SessionListQuery, SessionStatus, SessionSummary } from './types.gen';

/** Thrown by every IPC call; carries the stable code the UI branches on. */
export class NomosError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'NomosError';
    this.code = code;
  }
}

function isIpcError(value: unknown): value is IpcError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as IpcError).code === 'string' &&
    typeof (value as IpcError).message === 'string'
  );
}

/** Normalises whatever the bridge rejected with into a NomosError. */
export function toNomosError(reason: unknown): NomosError {
  if (reason instanceof NomosError) return reason;
  if (isIpcError(reason)) return new NomosError(reason.code, reason.message);
  if (typeof reason === 'string') return new NomosError('ipc.failed', reason);
  if (reason instanceof Error) return new NomosError('ipc.failed', reason.message);
  return new NomosError('ipc.failed', 'The desktop shell did not answer.');
}

/** True when running inside the Tauri webview (false in unit tests and plain browsers). */
export function inDesktopShell(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (reason) {
    throw toNomosError(reason);
  }
}

export const ipc = {
  appInfo: () => call<AppInfo>('app_info'),
  listSessions: (query: SessionListQuery = {}) => call<SessionSummary[]>('list_sessions', { query }),
  getSession: (id: number) => call<SessionSummary>('get_session', { id }),
  createSession: (title: string) => call<SessionSummary>('create_session', { title }),
};

export type Ipc = typeof ipc;
