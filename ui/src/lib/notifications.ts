// Desktop notifications are raised by the shell from the core's event stream; the page only
// follows a click on one: the shell focuses the window and names the session to open.
import { ipc } from './ipc';
import { router, type Route } from './router.svelte';

/** The route a clicked notification opens. */
export function routeForNotification(sessionId: number): Route {
  return { name: 'chat', sessionId };
}

/** Listens for clicked notifications for the life of the page. */
export function followNotificationClicks(go: (route: Route) => void = (r) => router.go(r)) {
  return ipc.onOpenSession((sessionId) => go(routeForNotification(sessionId)));
}
