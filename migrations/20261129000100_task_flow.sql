-- Task flow: messages (one row per model iteration), tool calls, plan generations and steps,
-- executions (the execution ledger), the audit log of every tool call, approval windows,
-- and the completion-nudge / gate bookkeeping on sessions.
--
-- No column holds a token, key or password: secrets never enter this database.

ALTER TABLE sessions ADD COLUMN completion_nudges INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN last_nudge_at_ms INTEGER;
-- 1 when complete_task(success) was downgraded to partial by the write-back gate (I6):
-- the session may then be completed once more, as success, after the write-back.
ALTER TABLE sessions ADD COLUMN completion_downgraded INTEGER NOT NULL DEFAULT 0
    CHECK (completion_downgraded IN (0, 1));

-- One row per model iteration (assistant), operator message (user) or system note.
CREATE TABLE messages (
    id            INTEGER PRIMARY KEY,
    session_id    INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role          TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    text          TEXT    NOT NULL DEFAULT '',
    reasoning     TEXT    NOT NULL DEFAULT '',
    pending       INTEGER NOT NULL DEFAULT 0 CHECK (pending IN (0, 1)),
    auto          INTEGER NOT NULL DEFAULT 0 CHECK (auto IN (0, 1)),
    error         TEXT,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX messages_by_session ON messages (session_id, id);
CREATE INDEX messages_pending ON messages (pending) WHERE pending = 1;

-- Each tool call of an assistant iteration, stored once (call_id unique per message).
CREATE TABLE tool_calls (
    id               INTEGER PRIMARY KEY,
    message_id       INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    call_id          TEXT    NOT NULL,
    name             TEXT    NOT NULL,
    arguments        TEXT    NOT NULL DEFAULT '{}',
    result           TEXT,
    result_truncated INTEGER NOT NULL DEFAULT 0 CHECK (result_truncated IN (0, 1)),
    is_error         INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    created_at_ms    INTEGER NOT NULL,
    finished_at_ms   INTEGER,
    UNIQUE (message_id, call_id)
) STRICT;

-- One row per plan generation of a session (I3), with the facts the gates need (I6).
CREATE TABLE plan_generations (
    session_id        INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    generation        INTEGER NOT NULL CHECK (generation >= 1),
    proposed_at_ms    INTEGER NOT NULL,
    replaced_at_ms    INTEGER,
    runs_finished     INTEGER NOT NULL DEFAULT 0,
    fact_writes       INTEGER NOT NULL DEFAULT 0,
    knowledge_upserts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, generation)
) STRICT, WITHOUT ROWID;

CREATE TABLE plan_steps (
    id                    INTEGER PRIMARY KEY,
    session_id            INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    generation            INTEGER NOT NULL,
    seq                   INTEGER NOT NULL CHECK (seq >= 1),
    title                 TEXT    NOT NULL,
    detail                TEXT,
    target                TEXT,
    status                TEXT    NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending','running','done','failed','skipped','replaced')),
    status_before_replace TEXT,
    write_back            INTEGER NOT NULL DEFAULT 0 CHECK (write_back IN (0, 1)),
    note                  TEXT,
    created_at_ms         INTEGER NOT NULL,
    updated_at_ms         INTEGER NOT NULL,
    started_at_ms         INTEGER,
    finished_at_ms        INTEGER,
    UNIQUE (session_id, generation, seq),
    FOREIGN KEY (session_id, generation) REFERENCES plan_generations (session_id, generation)
        ON DELETE CASCADE
) STRICT;

-- Approval windows: opened only by an operator action, scoped to one plan generation.
CREATE TABLE approval_windows (
    id            INTEGER PRIMARY KEY,
    session_id    INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    generation    INTEGER NOT NULL,
    source        TEXT    NOT NULL CHECK (source IN ('operator_button', 'chat_approval')),
    message_id    INTEGER REFERENCES messages (id) ON DELETE SET NULL,
    detail        TEXT,
    opened_at_ms  INTEGER NOT NULL,
    expires_at_ms INTEGER,
    closed_at_ms  INTEGER,
    close_reason  TEXT    CHECK (close_reason IN ('completed','reopened','replaced','expired','revoked')),
    FOREIGN KEY (session_id, generation) REFERENCES plan_generations (session_id, generation)
        ON DELETE CASCADE
) STRICT;
CREATE INDEX approval_windows_open ON approval_windows (session_id) WHERE closed_at_ms IS NULL;

-- The execution ledger: every `run`.
CREATE TABLE executions (
    id                 INTEGER PRIMARY KEY,
    session_id         INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    generation         INTEGER,
    plan_step_id       INTEGER REFERENCES plan_steps (id) ON DELETE SET NULL,
    call_id            TEXT,
    target             TEXT    NOT NULL,
    command            TEXT    NOT NULL,
    canonical          TEXT    NOT NULL,
    class              TEXT    NOT NULL CHECK (class IN ('read_only','config_mutation','destructive')),
    decision_reason    TEXT    NOT NULL DEFAULT '',
    decision           TEXT,
    approval           TEXT    CHECK (approval IN ('not_needed','operator_button','chat_approval','window')),
    approved_by        TEXT,
    approval_window_id INTEGER REFERENCES approval_windows (id) ON DELETE SET NULL,
    approved_at_ms     INTEGER,
    status             TEXT    NOT NULL
                       CHECK (status IN ('queued','awaiting_approval','running','finished','failed','cancelled','timed_out')),
    exit_code          INTEGER,
    error              TEXT,
    stdout             TEXT    NOT NULL DEFAULT '',
    stderr             TEXT    NOT NULL DEFAULT '',
    stdout_bytes       INTEGER NOT NULL DEFAULT 0,
    stderr_bytes       INTEGER NOT NULL DEFAULT 0,
    stdout_truncated   INTEGER NOT NULL DEFAULT 0 CHECK (stdout_truncated IN (0, 1)),
    stderr_truncated   INTEGER NOT NULL DEFAULT 0 CHECK (stderr_truncated IN (0, 1)),
    created_at_ms      INTEGER NOT NULL,
    updated_at_ms      INTEGER NOT NULL,
    started_at_ms      INTEGER,
    finished_at_ms     INTEGER,
    duration_ms        INTEGER,
    background         INTEGER NOT NULL DEFAULT 0 CHECK (background IN (0, 1)),
    continued_at_ms    INTEGER,
    continued_via      TEXT    CHECK (continued_via IN ('inline','resume','note'))
) STRICT;
CREATE INDEX executions_by_session ON executions (session_id, id);
CREATE INDEX executions_dedup ON executions (session_id, generation, target, canonical);
CREATE INDEX executions_active ON executions (status)
    WHERE status IN ('queued','awaiting_approval','running');
CREATE INDEX executions_uncontinued ON executions (finished_at_ms)
    WHERE background = 1 AND continued_at_ms IS NULL;

-- The audit log: every tool call with its arguments and a result summary.
CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY,
    session_id     INTEGER REFERENCES sessions (id) ON DELETE CASCADE,
    generation     INTEGER,
    message_id     INTEGER,
    call_id        TEXT,
    tool           TEXT    NOT NULL,
    arguments      TEXT    NOT NULL DEFAULT '{}',
    result_summary TEXT    NOT NULL DEFAULT '',
    ok             INTEGER NOT NULL DEFAULT 1 CHECK (ok IN (0, 1)),
    duration_ms    INTEGER,
    created_at_ms  INTEGER NOT NULL
) STRICT;
CREATE INDEX audit_log_by_session ON audit_log (session_id, id);
