// Links from the graph and the ledger into a session's transcript, at a message when known.

/** `#/sessions/ID`, with `?message=MID` when the message is known (the chat scrolls to it). */
export function sessionHref(sessionId: number, messageId?: number | null): string {
  const base = `#/sessions/${sessionId}`;
  return messageId === null || messageId === undefined ? base : `${base}?message=${messageId}`;
}
