// A tiny hash router: the desktop app has a handful of screens and no server, so the hash is
// the whole URL state and survives reloads of the webview.

export type Route =
  // `messageId`: open the transcript at this message (a search hit); the chat scrolls to the
  // element carrying `data-message-id`.
  | { name: 'chat'; sessionId: number | null; messageId?: number }
  | { name: 'graph' }
  | { name: 'settings' }
  | { name: 'ledger' }
  | { name: 'not_found'; path: string };

export function parseRoute(hash: string): Route {
  const [rawPath, query = ''] = hash.replace(/^#/, '').split('?', 2);
  const path = rawPath || '/';
  if (path === '/' || path === '/chat') return { name: 'chat', sessionId: null };
  const session = /^\/sessions\/(\d+)$/.exec(path);
  if (session?.[1]) {
    // `?message=ID` opens the session at that message (search hits link so).
    const message = Number(new URLSearchParams(query).get('message'));
    return Number.isSafeInteger(message) && message > 0
      ? { name: 'chat', sessionId: Number(session[1]), messageId: message }
      : { name: 'chat', sessionId: Number(session[1]) };
  }
  if (path === '/graph') return { name: 'graph' };
  if (path === '/settings') return { name: 'settings' };
  if (path === '/ledger') return { name: 'ledger' };
  return { name: 'not_found', path };
}

export function hrefFor(route: Route): string {
  switch (route.name) {
    case 'chat':
      if (route.sessionId === null) return '#/';
      return route.messageId ? `#/sessions/${route.sessionId}?message=${route.messageId}` : `#/sessions/${route.sessionId}`;
    case 'graph':
      return '#/graph';
    case 'settings':
      return '#/settings';
    case 'ledger':
      return '#/ledger';
    case 'not_found':
      return `#${route.path}`;
  }
}

class Router {
  current = $state<Route>(parseRoute(typeof location === 'undefined' ? '' : location.hash));

  constructor() {
    if (typeof window !== 'undefined') {
      window.addEventListener('hashchange', () => {
        this.current = parseRoute(location.hash);
      });
    }
  }

  go(route: Route) {
    location.hash = hrefFor(route);
  }
}

export const router = new Router();
