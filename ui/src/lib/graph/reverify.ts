// "Re-verify" on a stale node starts a new task whose plan is read-only and targets that node.

/** The operator text of a re-verification task: one target, read-only commands only, and a
 * write-back of what changed. */
export function reverifyText(slug: string): string {
  const s = slug.trim();
  return (
    `Re-verify what Nomos knows about ${s}. Plan read-only steps only, all targeting ${s}: ` +
    `run no command that changes anything. Compare what you find with the recorded attributes ` +
    `and relations of ${s}, then write back what changed and record an investigation about it.`
  );
}
