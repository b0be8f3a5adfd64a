-- A transcript opens page by page: each page shows the executions of its own `run` calls,
-- found by call id within the session, so opening a page never reads the session's whole
-- ledger.
CREATE INDEX executions_by_call ON executions (session_id, call_id);
