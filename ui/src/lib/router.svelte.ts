// A tiny hash router: the desktop app has a handful of screens and no server, so the hash is
// the whole URL state and survives reloads of the webview.

export type Route =
  // `messageId`: open the transcript at this message (a search hit); the chat scrolls to the
  // element carrying `data-message-id`.
  | { name: 'chat'; sessionId: number | null; messageId?: number }
  | { name: 'graph' }
  | { name: 'settings' }
  | { name: 'not_found'; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/' || path === '/chat') return { name: 'chat', sessionId: null };
  const session = /^\/sessions\/(\d+)(?:\?message=(\d+))?$/.exec(path);
  if (session?.[1]) {
    const sessionId = Number(session[1]);
    return session[2] ? { name: 'chat', sessionId, messageId: Number(session[2]) } : { name: 'chat', sessionId };
  }
  if (path === '/graph') return { name: 'graph' };
  if (path === '/settings') return { name: 'settings' };
  return { name: 'not_found', path };
}

export function hrefFor(route: Route): string {
  switch (route.name) {
    case 'chat':
      if (route.sessionId === null) return '#/';
      return route.messageId === undefined
        ? `#/sessions/${route.sessionId}`
        : `#/sessions/${route.sessionId}?message=${route.messageId}`;
    case 'graph':
      return '#/graph';
    case 'settings':
      return '#/settings';
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
