-- Knowledge graph provenance and the indexes of the graph and ledger views.
--
-- 1. An attribute change records where the fact came from besides its session and generation:
--    the plan step running when it was written, the session's latest finished execution at
--    that moment (the output the fact was read from) and the message that wrote it. The store
--    fills them at write time; rows written before this migration keep NULL.
-- 2. Indexes so every query of the graph view and the execution ledger is an index search:
--    entities by kind in id order (paginated slices) and by last change (staleness), the
--    latest change of each attribute, executions by target and by time (newest first), and
--    what one session touched (the graph highlights it).

ALTER TABLE entity_attribute_history ADD COLUMN plan_step_id INTEGER
    REFERENCES plan_steps (id) ON DELETE SET NULL;
ALTER TABLE entity_attribute_history ADD COLUMN execution_id INTEGER
    REFERENCES executions (id) ON DELETE SET NULL;
-- A message id (session_id << 32 | n); no foreign key, like audit_log.message_id.
ALTER TABLE entity_attribute_history ADD COLUMN message_id INTEGER;

CREATE INDEX entity_attribute_history_by_key ON entity_attribute_history (entity_id, key, changed_at_ms);
CREATE INDEX entities_by_kind_id ON entities (kind, id);
CREATE INDEX entities_by_update ON entities (updated_at_ms, id);
CREATE INDEX executions_by_target ON executions (target, created_at_ms, id);
CREATE INDEX executions_by_time ON executions (created_at_ms, id);
CREATE INDEX relations_by_session ON relations (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX knowledge_entries_by_session ON knowledge_entries (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX entities_by_creator ON entities (created_by_session) WHERE created_by_session IS NOT NULL;
