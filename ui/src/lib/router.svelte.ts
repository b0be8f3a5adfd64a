// A tiny hash router: the desktop app has a handful of screens and no server, so the hash is
// the whole URL state and survives reloads of the webview.

export type Route =
  | { name: 'chat'; sessionId: number | null }
  | { name: 'graph' }
  | { name: 'settings' }
  | { name: 'ledger' }
  | { name: 'not_found'; path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/' || path === '/chat') return { name: 'chat', sessionId: null };
  const session = /^\/sessions\/(\d+)$/.exec(path);
  if (session?.[1]) return { name: 'chat', sessionId: Number(session[1]) };
  if (path === '/graph') return { name: 'graph' };
  if (path === '/settings') return { name: 'settings' };
  if (path === '/ledger') return { name: 'ledger' };
  return { name: 'not_found', path };
}

export function hrefFor(route: Route): string {
  switch (route.name) {
    case 'chat':
      return route.sessionId === null ? '#/' : `#/sessions/${route.sessionId}`;
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
