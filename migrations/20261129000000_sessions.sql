-- Nomos store, first schema: sessions and their full-text index.
-- Timestamps are Unix milliseconds (INTEGER). Enumerations are TEXT with CHECK constraints
-- so a row can never hold a status the Rust enums do not know.

CREATE TABLE sessions (
    id                INTEGER PRIMARY KEY,
    title             TEXT    NOT NULL,
    goal              TEXT,
    status            TEXT    NOT NULL DEFAULT 'idle'
                      CHECK (status IN ('idle','planning','executing','done','partial','failed','abandoned')),
    outcome           TEXT    CHECK (outcome IN ('success','partial','failed','abandoned')),
    summary           TEXT,
    created_at_ms     INTEGER NOT NULL,
    updated_at_ms     INTEGER NOT NULL,
    last_active_at_ms INTEGER NOT NULL,
    completed_at_ms   INTEGER
) STRICT;

CREATE INDEX sessions_by_activity ON sessions (last_active_at_ms DESC, id DESC);
CREATE INDEX sessions_by_status ON sessions (status);

CREATE VIRTUAL TABLE sessions_fts USING fts5 (
    title, goal, summary,
    content = 'sessions', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

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
