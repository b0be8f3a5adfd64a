-- Sessions for offline review.
-- 1. Search over what happened, not only titles: full-text indexes over message text and
--    over the execution ledger (command, stdout, stderr — stored masked), kept current by
--    triggers on insert, update and delete (a deleted session's rows leave the indexes with
--    them: foreign-key cascades fire the delete triggers), and backfilled from existing rows.
--    A message is indexed once it is final (`pending = 0`): the deltas of a streaming reply do
--    not re-index it once per delta.
-- 2. The session index gets the same tokenizer as the others (Porter stemming, 3-/4-character
--    prefix indexes), so one query means the same thing over titles, messages and output.
-- 3. Imported sessions (a JSON export from another Nomos) say so: `imported_at_ms` and a short
--    description of the source (`imported_from`).

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text,
    content = 'messages', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2',
    prefix = '3 4'
);
INSERT INTO messages_fts (rowid, text)
    SELECT id, text FROM messages WHERE pending = 0 AND text <> '';

CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages
WHEN new.pending = 0 AND new.text <> '' BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages
WHEN old.pending = 0 AND old.text <> '' BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
-- Indexed means final and not blank; each statement runs only when that state or the text
-- changes, so a streamed delta (pending stays 1) touches no index page.
CREATE TRIGGER messages_fts_au AFTER UPDATE OF text, pending ON messages
WHEN (old.pending = 0 AND old.text <> '') OR (new.pending = 0 AND new.text <> '') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text
        WHERE old.pending = 0 AND old.text <> ''
          AND (new.pending <> 0 OR new.text <> old.text);
    INSERT INTO messages_fts (rowid, text)
        SELECT new.id, new.text
        WHERE new.pending = 0 AND new.text <> ''
          AND (old.pending <> 0 OR old.text = '' OR new.text <> old.text);
END;

CREATE VIRTUAL TABLE executions_fts USING fts5 (
    command, stdout, stderr,
    content = 'executions', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2',
    prefix = '3 4'
);
INSERT INTO executions_fts (executions_fts) VALUES ('rebuild');

CREATE TRIGGER executions_fts_ai AFTER INSERT ON executions BEGIN
    INSERT INTO executions_fts (rowid, command, stdout, stderr)
    VALUES (new.id, new.command, new.stdout, new.stderr);
END;
CREATE TRIGGER executions_fts_ad AFTER DELETE ON executions BEGIN
    INSERT INTO executions_fts (executions_fts, rowid, command, stdout, stderr)
    VALUES ('delete', old.id, old.command, old.stdout, old.stderr);
END;
CREATE TRIGGER executions_fts_au AFTER UPDATE OF command, stdout, stderr ON executions BEGIN
    INSERT INTO executions_fts (executions_fts, rowid, command, stdout, stderr)
    VALUES ('delete', old.id, old.command, old.stdout, old.stderr);
    INSERT INTO executions_fts (rowid, command, stdout, stderr)
    VALUES (new.id, new.command, new.stdout, new.stderr);
END;

DROP TRIGGER sessions_fts_ai;
DROP TRIGGER sessions_fts_ad;
DROP TRIGGER sessions_fts_au;
DROP TABLE sessions_fts;
CREATE VIRTUAL TABLE sessions_fts USING fts5 (
    title, goal, summary,
    content = 'sessions', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2',
    prefix = '3 4'
);
INSERT INTO sessions_fts (rowid, title, goal, summary)
    SELECT id, title, coalesce(goal, ''), coalesce(summary, '') FROM sessions;
CREATE TRIGGER sessions_fts_ai AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts (rowid, title, goal, summary)
    VALUES (new.id, new.title, coalesce(new.goal, ''), coalesce(new.summary, ''));
END;
CREATE TRIGGER sessions_fts_ad AFTER DELETE ON sessions BEGIN
    INSERT INTO sessions_fts (sessions_fts, rowid, title, goal, summary)
    VALUES ('delete', old.id, old.title, coalesce(old.goal, ''), coalesce(old.summary, ''));
END;
CREATE TRIGGER sessions_fts_au AFTER UPDATE OF title, goal, summary ON sessions BEGIN
    INSERT INTO sessions_fts (sessions_fts, rowid, title, goal, summary)
    VALUES ('delete', old.id, old.title, coalesce(old.goal, ''), coalesce(old.summary, ''));
    INSERT INTO sessions_fts (rowid, title, goal, summary)
    VALUES (new.id, new.title, coalesce(new.goal, ''), coalesce(new.summary, ''));
END;

ALTER TABLE sessions ADD COLUMN imported_at_ms INTEGER;
ALTER TABLE sessions ADD COLUMN imported_from TEXT;
