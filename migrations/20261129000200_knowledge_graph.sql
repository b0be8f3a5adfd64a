-- Knowledge graph: entities (`kind:name` slugs, JSON attributes), the history of every attribute
-- change with the session that made it, relations, knowledge entries (investigation, document,
-- runbook, note) with tags and `about` links, and FTS5 indexes over entries and entities.

CREATE TABLE entities (
    id                 INTEGER PRIMARY KEY,
    slug               TEXT    NOT NULL UNIQUE,
    kind               TEXT    NOT NULL,
    name               TEXT    NOT NULL,
    attributes         TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(attributes)),
    created_at_ms      INTEGER NOT NULL,
    updated_at_ms      INTEGER NOT NULL,
    created_by_session INTEGER REFERENCES sessions (id) ON DELETE SET NULL
) STRICT;
CREATE INDEX entities_by_kind ON entities (kind, name);

CREATE TABLE entity_attribute_history (
    id            INTEGER PRIMARY KEY,
    entity_id     INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    key           TEXT    NOT NULL,
    old_value     TEXT,
    new_value     TEXT,
    session_id    INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
    generation    INTEGER,
    changed_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX entity_attribute_history_by_entity ON entity_attribute_history (entity_id, id);
CREATE INDEX entity_attribute_history_by_session ON entity_attribute_history (session_id);

CREATE TABLE relations (
    id            INTEGER PRIMARY KEY,
    from_entity   INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    kind          TEXT    NOT NULL,
    to_entity     INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    attributes    TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(attributes)),
    session_id    INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    UNIQUE (from_entity, kind, to_entity)
) STRICT;
CREATE INDEX relations_to ON relations (to_entity);

CREATE TABLE knowledge_entries (
    id            INTEGER PRIMARY KEY,
    kind          TEXT    NOT NULL CHECK (kind IN ('investigation','document','runbook','note')),
    slug          TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    body          TEXT    NOT NULL DEFAULT '',
    tags          TEXT    NOT NULL DEFAULT '',
    session_id    INTEGER REFERENCES sessions (id) ON DELETE SET NULL,
    revision      INTEGER NOT NULL DEFAULT 1,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    UNIQUE (kind, slug)
) STRICT;
CREATE INDEX knowledge_entries_by_time ON knowledge_entries (updated_at_ms DESC);

CREATE TABLE knowledge_tags (
    entry_id INTEGER NOT NULL REFERENCES knowledge_entries (id) ON DELETE CASCADE,
    tag      TEXT    NOT NULL,
    PRIMARY KEY (entry_id, tag)
) STRICT, WITHOUT ROWID;
CREATE INDEX knowledge_tags_by_tag ON knowledge_tags (tag);

CREATE TABLE knowledge_about (
    entry_id  INTEGER NOT NULL REFERENCES knowledge_entries (id) ON DELETE CASCADE,
    entity_id INTEGER NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    PRIMARY KEY (entry_id, entity_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX knowledge_about_by_entity ON knowledge_about (entity_id, entry_id);

CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
    title, body, tags,
    content = 'knowledge_entries', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER knowledge_fts_ai AFTER INSERT ON knowledge_entries BEGIN
    INSERT INTO knowledge_fts (rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
END;
CREATE TRIGGER knowledge_fts_ad AFTER DELETE ON knowledge_entries BEGIN
    INSERT INTO knowledge_fts (knowledge_fts, rowid, title, body, tags)
    VALUES ('delete', old.id, old.title, old.body, old.tags);
END;
CREATE TRIGGER knowledge_fts_au AFTER UPDATE OF title, body, tags ON knowledge_entries BEGIN
    INSERT INTO knowledge_fts (knowledge_fts, rowid, title, body, tags)
    VALUES ('delete', old.id, old.title, old.body, old.tags);
    INSERT INTO knowledge_fts (rowid, title, body, tags) VALUES (new.id, new.title, new.body, new.tags);
END;

CREATE VIRTUAL TABLE entities_fts USING fts5 (
    slug, name, kind, attributes,
    content = 'entities', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER entities_fts_ai AFTER INSERT ON entities BEGIN
    INSERT INTO entities_fts (rowid, slug, name, kind, attributes)
    VALUES (new.id, new.slug, new.name, new.kind, new.attributes);
END;
CREATE TRIGGER entities_fts_ad AFTER DELETE ON entities BEGIN
    INSERT INTO entities_fts (entities_fts, rowid, slug, name, kind, attributes)
    VALUES ('delete', old.id, old.slug, old.name, old.kind, old.attributes);
END;
CREATE TRIGGER entities_fts_au AFTER UPDATE OF slug, name, kind, attributes ON entities BEGIN
    INSERT INTO entities_fts (entities_fts, rowid, slug, name, kind, attributes)
    VALUES ('delete', old.id, old.slug, old.name, old.kind, old.attributes);
    INSERT INTO entities_fts (rowid, slug, name, kind, attributes)
    VALUES (new.id, new.slug, new.name, new.kind, new.attributes);
END;
