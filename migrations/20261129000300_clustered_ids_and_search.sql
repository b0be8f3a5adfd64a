-- 1. Messages and audit rows clustered by session: id = session_id << 32 | n (n = 1, 2, …
--    within the session; audit rows outside any session use session 0). A session's rows are
--    one contiguous range of the table, so an append writes one table page instead of a table
--    page and an index page, and a transcript is one range scan. Existing rows are renumbered
--    in their order; references to message ids follow.
-- 2. Knowledge search with Porter stemming ("upgrades" finds "upgraded") and 3-/4-character
--    prefix indexes (search as you type); entity search with the same prefix indexes.
-- Runs with foreign keys off inside one transaction; the runner checks foreign keys after.

CREATE TEMP TABLE message_ids AS
    SELECT id AS old_id,
           (session_id << 32) + row_number() OVER (PARTITION BY session_id ORDER BY id) AS new_id
    FROM messages;

CREATE TABLE messages_new (
    id            INTEGER PRIMARY KEY CHECK (id >> 32 = session_id AND (id & 4294967295) > 0),
    session_id    INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role          TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    text          TEXT    NOT NULL DEFAULT '',
    reasoning     TEXT    NOT NULL DEFAULT '',
    pending       INTEGER NOT NULL DEFAULT 0, -- 0/1 (no CHECK on this hot table: bools from Rust)
    auto          INTEGER NOT NULL DEFAULT 0, -- 0/1
    error         TEXT,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
) STRICT;

INSERT INTO messages_new (id, session_id, role, text, reasoning, pending, auto, error, created_at_ms, updated_at_ms)
    SELECT m.new_id, o.session_id, o.role, o.text, o.reasoning, o.pending, o.auto, o.error, o.created_at_ms, o.updated_at_ms
    FROM messages o JOIN temp.message_ids m ON m.old_id = o.id;

-- New ids are all >= 2^32, old ones below: the renumbering never collides.
UPDATE tool_calls SET message_id = (SELECT new_id FROM temp.message_ids WHERE old_id = tool_calls.message_id);
UPDATE approval_windows SET message_id = (SELECT new_id FROM temp.message_ids WHERE old_id = approval_windows.message_id)
    WHERE message_id IS NOT NULL;
UPDATE audit_log SET message_id = (SELECT new_id FROM temp.message_ids WHERE old_id = audit_log.message_id)
    WHERE message_id IS NOT NULL;

DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_pending ON messages (pending) WHERE pending = 1;
DROP TABLE temp.message_ids;

CREATE TABLE audit_log_new (
    id             INTEGER PRIMARY KEY CHECK (id >> 32 = coalesce(session_id, 0) AND (id & 4294967295) > 0),
    session_id     INTEGER REFERENCES sessions (id) ON DELETE CASCADE,
    generation     INTEGER,
    message_id     INTEGER,
    call_id        TEXT,
    tool           TEXT    NOT NULL,
    arguments      TEXT    NOT NULL DEFAULT '{}',
    result_summary TEXT    NOT NULL DEFAULT '',
    ok             INTEGER NOT NULL DEFAULT 1, -- 0/1
    duration_ms    INTEGER,
    created_at_ms  INTEGER NOT NULL
) STRICT;

INSERT INTO audit_log_new (id, session_id, generation, message_id, call_id, tool, arguments, result_summary, ok, duration_ms, created_at_ms)
    SELECT (coalesce(session_id, 0) << 32) + row_number() OVER (PARTITION BY coalesce(session_id, 0) ORDER BY id),
           session_id, generation, message_id, call_id, tool, arguments, result_summary, ok, duration_ms, created_at_ms
    FROM audit_log;

DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;

DROP TABLE knowledge_fts;
CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
    title, body, tags,
    content = 'knowledge_entries', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2',
    prefix = '3 4'
);
INSERT INTO knowledge_fts (knowledge_fts) VALUES ('rebuild');

DROP TABLE entities_fts;
CREATE VIRTUAL TABLE entities_fts USING fts5 (
    slug, name, kind, attributes,
    content = 'entities', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '3 4'
);
INSERT INTO entities_fts (entities_fts) VALUES ('rebuild');
