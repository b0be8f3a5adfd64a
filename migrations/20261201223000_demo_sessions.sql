-- A demo session is marked by a field, not recognised by its title: "Try the demo" creates its
-- session with `demo = 1`, and the faces label it from this column. A session an operator
-- titles "Demo: …" is an ordinary session. Rows from before this migration are not demos
-- (the demo sessions they hold, if any, keep their title but lose nothing else).
ALTER TABLE sessions ADD COLUMN demo INTEGER NOT NULL DEFAULT 0 CHECK (demo IN (0, 1));
