/** Every keyboard shortcut of the window, in one list: the `?` dialog shows exactly this. */
export interface Shortcut {
  keys: string[];
  what: string;
  where: string;
}

export const SHORTCUTS: Shortcut[] = [
  { keys: ['?'], what: 'Show this list', where: 'Anywhere outside a text box' },
  { keys: ['Esc'], what: 'Close this list', where: 'Shortcut list' },
  { keys: ['Enter'], what: 'Send the message', where: 'Message box' },
  { keys: ['Shift', 'Enter'], what: 'New line', where: 'Message box' },
  { keys: ['Esc'], what: 'Stop the running turn (the session pauses)', where: 'Chat' },
  { keys: ['c'], what: 'Go to the message box', where: 'Anywhere outside a text box' },
  { keys: ['a'], what: 'Approve', where: 'A focused approval card (command or plan)' },
  { keys: ['d'], what: 'Deny', where: 'A focused command approval card' },
  { keys: ['r'], what: 'Deny with a reason the model receives', where: 'A focused command approval card' },
  { keys: ['Ctrl', 'Enter'], what: 'Send the denial with its reason', where: 'Reason box' },
  { keys: ['Tab'], what: 'Move between controls, cards and the transcript', where: 'Anywhere' },
];

/** True when the key goes to text the operator is typing, so no shortcut may take it. */
export function isTyping(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) {
    return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(target.type);
  }
  return false;
}

/** The window-level shortcut for a key press, or null. Card shortcuts are handled by cards. */
export function globalShortcut(event: KeyboardEvent): 'help' | 'composer' | null {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented || isTyping(event.target)) return null;
  if (event.key === '?') return 'help';
  if (event.key === 'c') return 'composer';
  return null;
}
