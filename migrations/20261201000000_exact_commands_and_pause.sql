-- I22: `executions.command` and `executions.canonical` are display copies (secrets redacted).
-- What runs is the exact text that was classified and approved; the runner holds it in memory
-- and proves it is that text by this digest (SHA-256, lowercase hex) before running it. A row
-- without a digest (written before this migration) can never run.
ALTER TABLE executions ADD COLUMN canonical_sha256 TEXT;
-- I18 compares commands by this digest: two commands whose display copies redact to the same
-- text are different commands.
CREATE INDEX executions_dedup_exact ON executions (session_id, generation, target, canonical_sha256);

-- I21: the operator's Stop pauses a session. While paused, nothing resumes it by itself: a
-- result that finishes in the background waits as a note for the operator's next message,
-- which clears the pause.
ALTER TABLE sessions ADD COLUMN paused_at_ms INTEGER;
