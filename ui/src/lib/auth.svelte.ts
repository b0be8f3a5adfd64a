import { inDesktopShell, ipc, toNomosError, type AuthStatusView, type NomosError } from './ipc';

/** The sign-in status for the title bar, the banner and Settings. */
class Auth {
  status = $state<AuthStatusView | null>(null);
  busy = $state(false);
  error = $state<NomosError | null>(null);

  async start() {
    if (!inDesktopShell()) return;
    try {
      await ipc.onAuthStatus((s) => (this.status = s));
      this.status = await ipc.authStatus();
    } catch (reason) {
      this.error = toNomosError(reason);
    }
  }

  async refresh() {
    try {
      this.status = await ipc.authStatus();
    } catch (reason) {
      this.error = toNomosError(reason);
    }
  }

  async signIn() {
    this.busy = true;
    this.error = null;
    try {
      this.status = await ipc.signIn();
    } catch (reason) {
      this.error = toNomosError(reason);
    } finally {
      this.busy = false;
    }
  }

  async signOut() {
    this.busy = true;
    this.error = null;
    try {
      this.status = await ipc.signOut();
    } catch (reason) {
      this.error = toNomosError(reason);
    } finally {
      this.busy = false;
    }
  }
}

export const auth = new Auth();

export function authLabel(status: AuthStatusView | null): string {
  switch (status?.state) {
    case 'signed_in':
      return status.who ? `Signed in as ${status.who}` : 'Signed in';
    case 'refreshing':
      return 'Reconnecting…';
    case 'needs_sign_in':
      return 'Sign in again';
    case 'signed_out':
      return 'Signed out';
    default:
      return '';
  }
}
