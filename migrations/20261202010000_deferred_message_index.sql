-- Message text is indexed for search off the commit path (DESIGN §14: an append costs about
-- a plain insert). A message that becomes searchable (final, not blank) only queues its id
-- here, in the same transaction as the message; the store indexes the queue in batches
-- (one FTS5 segment per batch instead of one per message) when its writer is idle, when
-- the queue grows long, and before every search, so a search still sees every message
-- committed before it. Invariant: a final, non-blank message is either in messages_fts
-- with its current text or queued here (never both); no other message is in either.
-- A crash loses nothing: the queue commits with its messages and is indexed after restart.

CREATE TABLE messages_fts_pending (
    message_id INTEGER PRIMARY KEY
) STRICT;

DROP TRIGGER messages_fts_ai;
DROP TRIGGER messages_fts_ad;
DROP TRIGGER messages_fts_au;

CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages
WHEN new.pending = 0 AND new.text <> '' BEGIN
    INSERT INTO messages_fts_pending (message_id) VALUES (new.id);
END;
-- A queued row was never indexed: only its queue entry goes.
CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages
WHEN old.pending = 0 AND old.text <> '' BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text
        WHERE NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE message_id = old.id);
    DELETE FROM messages_fts_pending WHERE message_id = old.id;
END;
-- Each statement runs only when the searchable state or the text changes, so a streamed
-- delta (pending stays 1) touches neither the index nor the queue.
CREATE TRIGGER messages_fts_au AFTER UPDATE OF text, pending ON messages
WHEN (old.pending = 0 AND old.text <> '') OR (new.pending = 0 AND new.text <> '') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text
        WHERE old.pending = 0 AND old.text <> ''
          AND (new.pending <> 0 OR new.text <> old.text)
          AND NOT EXISTS (SELECT 1 FROM messages_fts_pending WHERE message_id = old.id);
    INSERT OR IGNORE INTO messages_fts_pending (message_id)
        SELECT new.id
        WHERE new.pending = 0 AND new.text <> ''
          AND (old.pending <> 0 OR old.text = '' OR new.text <> old.text);
    DELETE FROM messages_fts_pending
        WHERE message_id = old.id AND NOT (new.pending = 0 AND new.text <> '');
END;
