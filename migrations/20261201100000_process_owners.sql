-- I24: several processes (the app and the CLI) may use one data directory at once. Each open
-- Store is an owner: it holds an exclusive advisory lock on `owners/<owner>.lock` in the data
-- directory for as long as it lives. Work a process starts carries its owner id; start-up
-- recovery takes over only work whose owner's lock can be taken (its process is gone). A NULL
-- owner is work written before this migration: no live process claims it.
ALTER TABLE messages ADD COLUMN owner TEXT;
ALTER TABLE executions ADD COLUMN owner TEXT;

-- The process group a local execution runs in (for ssh and pct: the local client's group, whose
-- end closes the channel and so ends the remote command), and the group leader's start time in
-- clock ticks since boot (/proc/<pid>/stat field 22): a reused pgid is never taken for it.
ALTER TABLE executions ADD COLUMN pgid INTEGER;
ALTER TABLE executions ADD COLUMN pgid_start_ticks INTEGER;

-- I13 across processes: the turn lease of a session. A row is held by its owner until the turn
-- ends; another owner takes it only when no row exists or the holder's owner lock is free.
CREATE TABLE turn_leases (
    session_id  INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    owner       TEXT    NOT NULL,
    holding     INTEGER NOT NULL,
    taken_at_ms INTEGER NOT NULL
) STRICT;
