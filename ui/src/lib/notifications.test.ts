import { describe, expect, it, vi } from 'vitest';

const listeners: Array<(id: number) => void> = [];
vi.mock('./ipc', () => ({
  ipc: {
    onOpenSession: (handler: (id: number) => void) => {
      listeners.push(handler);
      return Promise.resolve(() => {});
    },
  },
}));

import { followNotificationClicks, routeForNotification } from './notifications';
import { hrefFor } from './router.svelte';

describe('notification clicks', () => {
  it('open the notified session in the chat', async () => {
    const go = vi.fn();
    await followNotificationClicks(go);
    for (const id of [7, 42]) listeners.at(-1)?.(id);
    expect(go.mock.calls.map(([route]) => hrefFor(route))).toEqual(['#/sessions/7', '#/sessions/42']);
    expect(routeForNotification(3)).toEqual({ name: 'chat', sessionId: 3 });
  });
});
