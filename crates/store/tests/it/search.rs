//! Session search over titles, goals, summaries, message text and command output.

use std::time::Duration;

use nomos_store::{
    ExecStatus, ExecutionResult, HitSource, NewMessage, Outcome, SessionHit, SessionId,
    SessionSearchQuery, SessionStatus, Store,
};

use crate::common::*;

fn q(text: &str) -> SessionSearchQuery {
    SessionSearchQuery {
        text: text.into(),
        ..Default::default()
    }
}

fn hits(store: &Store, query: &SessionSearchQuery) -> Vec<SessionHit> {
    store.search_sessions(query).unwrap().hits
}

fn sources(store: &Store, text: &str) -> Vec<(SessionId, HitSource)> {
    hits(store, &q(text))
        .into_iter()
        .map(|h| (h.session.id, h.source))
        .collect()
}

fn marked(h: &SessionHit) -> Vec<String> {
    h.snippet
        .iter()
        .filter(|p| p.hit)
        .map(|p| p.text.to_lowercase())
        .collect()
}

/// One session that ran a command through a tool call, with output on both streams.
fn session_with_run(
    t: &TestStore,
    title: &str,
    target: &str,
    stdout: &str,
    stderr: &str,
) -> (SessionId, i64, i64) {
    let sid = new_session(t, title);
    t.store
        .append_message(&NewMessage::user(sid, format!("please look at {target}")))
        .unwrap();
    propose(t, sid, &["look"]);
    let m = t.store.begin_assistant_message(sid, false).unwrap();
    t.store
        .record_tool_call(m.id, "call_1", "run", r#"{"command":"zpool status"}"#)
        .unwrap();
    let mut new = read_only(sid, target, "zpool status");
    new.call_id = Some("call_1".into());
    let e = t.store.create_execution(&new).unwrap();
    t.store.start_execution(e.id).unwrap();
    t.store
        .finish_execution(
            e.id,
            &ExecutionResult {
                status: ExecStatus::Finished,
                exit_code: Some(0),
                stdout: stdout.as_bytes().to_vec(),
                stderr: stderr.as_bytes().to_vec(),
                error: None,
            },
        )
        .unwrap();
    t.store
        .set_tool_result(m.id, "call_1", "exit 0", false)
        .unwrap();
    t.store.finish_message(m.id, None).unwrap();
    (sid, m.id, e.id)
}

#[test]
fn a_hit_in_command_output_names_the_session_the_execution_and_its_message() {
    let t = store();
    let (sid, mid, eid) = session_with_run(
        &t,
        "Pool check",
        "host:nas",
        "pool: tank\nstate: DEGRADED zircon-7 faulted\n",
        "warning: quartzite scrub overdue\n",
    );
    let out = hits(&t.store, &q("zircon"));
    assert_eq!(out.len(), 1, "{out:?}");
    let h = &out[0];
    assert_eq!(h.session.id, sid);
    assert_eq!(h.source, HitSource::Stdout);
    assert_eq!(h.execution_id, Some(eid));
    assert_eq!(h.message_id, Some(mid), "opens at the message that ran it");
    assert_eq!(h.target.as_deref(), Some("host:nas"));
    assert_eq!(marked(h), ["zircon"]);
    let err = hits(&t.store, &q("quartzite overdue"));
    assert_eq!(err.len(), 1);
    assert_eq!(err[0].source, HitSource::Stderr);
    assert_eq!(marked(&err[0]), ["quartzite", "overdue"]);
    // The command itself.
    let cmd = hits(&t.store, &q("zpool"));
    assert!(
        cmd.iter()
            .any(|h| h.source == HitSource::Command && h.execution_id == Some(eid))
    );
}

#[test]
fn a_hit_in_a_message_and_in_a_title_goal_and_summary() {
    let t = store();
    let sid = new_session(&t, "Obsidian upgrade");
    let m = t
        .store
        .append_message(&NewMessage::user(sid, "Is the basalt cluster healthy?"))
        .unwrap();
    t.store
        .set_goal(sid, "verify the granite replicas")
        .unwrap();
    t.store
        .complete_task(sid, Outcome::Failed, "pumice quorum lost")
        .unwrap();
    let msg = hits(&t.store, &q("basalt"));
    assert_eq!(msg.len(), 1);
    assert_eq!(
        (msg[0].source, msg[0].message_id),
        (HitSource::Message, Some(m.id))
    );
    assert_eq!(msg[0].role, Some(nomos_store::Role::User));
    assert_eq!(marked(&msg[0]), ["basalt"]);
    assert_eq!(sources(&t.store, "obsidian"), [(sid, HitSource::Title)]);
    assert_eq!(sources(&t.store, "granite"), [(sid, HitSource::Goal)]);
    assert_eq!(sources(&t.store, "pumice"), [(sid, HitSource::Summary)]);
    // Stemming: the operator's word form need not be the stored one.
    assert_eq!(sources(&t.store, "upgrades"), [(sid, HitSource::Title)]);
    // Renamed: the new title is found, the old one is not.
    t.store.rename_session(sid, "Andesite review").unwrap();
    assert_eq!(sources(&t.store, "andesite"), [(sid, HitSource::Title)]);
    assert!(sources(&t.store, "obsidian").is_empty());
}

#[test]
fn a_streamed_reply_is_found_once_final_and_only_then() {
    let t = store();
    let sid = new_session(&t, "Streaming");
    let m = t.store.begin_assistant_message(sid, false).unwrap();
    for part in ["The mal", "achite ", "service ", "is up."] {
        t.store.append_text(m.id, part).unwrap();
    }
    assert!(
        hits(&t.store, &q("malachite")).is_empty(),
        "pending text is not indexed"
    );
    t.store.finish_message(m.id, None).unwrap();
    let h = hits(&t.store, &q("malachite"));
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].message_id, Some(m.id));
    // An empty placeholder that is deleted leaves nothing behind.
    let p = t.store.begin_assistant_message(sid, false).unwrap();
    t.store.finish_message(p.id, None).unwrap();
    assert_eq!(hits(&t.store, &q("malachite")).len(), 1);
}

#[test]
fn filters_by_status_outcome_and_target() {
    let t = store();
    let (a, _, _) = session_with_run(&t, "Alpha", "host:alpha", "gneiss ok", "");
    t.clock.advance(Duration::from_secs(2));
    let (b, _, _) = session_with_run(&t, "Beta", "host:beta", "gneiss ok", "");
    t.store.complete_task(a, Outcome::Partial, "done").unwrap();
    let base = q("gneiss");
    let ids = |query: &SessionSearchQuery| {
        let mut v: Vec<SessionId> = hits(&t.store, query).iter().map(|h| h.session.id).collect();
        v.dedup();
        v
    };
    assert_eq!(ids(&base), [b, a], "newest first among equals");
    let only = |statuses: Vec<SessionStatus>, outcomes: Vec<Outcome>, target: Option<&str>| {
        ids(&SessionSearchQuery {
            statuses,
            outcomes,
            target: target.map(str::to_owned),
            ..base.clone()
        })
    };
    assert_eq!(only(vec![SessionStatus::Partial], vec![], None), [a]);
    assert_eq!(
        only(
            vec![SessionStatus::Planning, SessionStatus::Executing],
            vec![],
            None
        ),
        [b]
    );
    assert_eq!(only(vec![], vec![Outcome::Partial], None), [a]);
    assert!(only(vec![], vec![Outcome::Success], None).is_empty());
    assert_eq!(only(vec![], vec![], Some("host:beta")), [b]);
    assert_eq!(only(vec![], vec![], Some(" host:alpha ")), [a]);
    assert!(only(vec![], vec![], Some("host:gamma")).is_empty());
    assert!(only(vec![SessionStatus::Partial], vec![], Some("host:beta")).is_empty());
    // The target filter reaches message hits through the session's runs and plan steps.
    let msg = hits(
        &t.store,
        &SessionSearchQuery {
            target: Some("host:alpha".into()),
            ..q("please")
        },
    );
    assert_eq!(msg.len(), 1);
    assert_eq!((msg[0].session.id, msg[0].source), (a, HitSource::Message));
    let sid = new_session(&t, "Planned only");
    t.store
        .propose_plan(
            sid,
            &[nomos_store::NewPlanStep::new("look").target("host:delta")],
        )
        .unwrap();
    assert_eq!(
        ids(&SessionSearchQuery {
            target: Some("host:delta".into()),
            ..q("planned")
        }),
        [sid]
    );
}

#[test]
fn a_deleted_session_leaves_no_hits() {
    let t = store();
    let (sid, _, _) = session_with_run(
        &t,
        "Feldspar audit",
        "host:x",
        "feldspar output",
        "feldspar err",
    );
    t.store
        .append_message(&NewMessage::assistant(sid, "feldspar looks fine"))
        .unwrap();
    let keep = new_session(&t, "Other feldspar");
    assert_eq!(hits(&t.store, &q("feldspar")).len(), 4);
    t.store.delete_session(sid).unwrap();
    let left = hits(&t.store, &q("feldspar"));
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].session.id, keep);
    for word in ["output", "err", "looks", "audit", "please", "zpool"] {
        assert!(hits(&t.store, &q(word)).is_empty(), "{word} still found");
    }
    // The indexes agree with their tables (an FTS5 integrity check).
    let c = rusqlite::Connection::open(t.path()).unwrap();
    for table in ["messages_fts", "executions_fts", "sessions_fts"] {
        c.execute(
            &format!("INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)"),
            [],
        )
        .unwrap_or_else(|e| panic!("{table}: {e}"));
    }
}

#[test]
fn fts_syntax_in_the_query_is_literal_text_and_never_an_error() {
    let t = store();
    let sid = new_session(&t, "Syntax");
    t.store
        .append_message(&NewMessage::user(
            sid,
            "zircon NEAR quartz; AND obsidian OR basalt",
        ))
        .unwrap();
    t.store
        .append_message(&NewMessage::user(sid, "zirconium only"))
        .unwrap();
    let hostile = [
        "\"",
        "\"\"",
        "\"zircon",
        "zircon\"",
        "'",
        "*",
        "**",
        "zircon*",
        "*zircon",
        "-zircon",
        "zircon -quartz",
        "NEAR",
        "NEAR(zircon quartz)",
        "NEAR(zircon quartz, 2)",
        "zircon NEAR/2 quartz",
        "AND",
        "OR",
        "NOT",
        "zircon NOT quartz",
        "zircon OR",
        "(",
        ")",
        "(zircon",
        "zircon)",
        "{text}: zircon",
        "text:zircon",
        "text : zircon",
        "^zircon",
        "zircon + quartz",
        ":",
        "\\",
        "zircon'; DROP TABLE messages; --",
        "%",
        "_",
        "\u{0}",
        "zircon\u{0}quartz",
        "🙂 zircon",
        "\u{202e}zircon",
        "ZIRCON",
        "zi\"rc\"on",
        "\"zircon\" OR \"anything\"",
        "rank:zircon",
        "rowid=1",
    ];
    for text in hostile {
        for prefix in [false, true] {
            let r = t.store.search_sessions(&SessionSearchQuery {
                text: text.into(),
                prefix,
                ..Default::default()
            });
            assert!(r.is_ok(), "{text:?} (prefix {prefix}): {r:?}");
        }
    }
    let long = "zircon ".repeat(5000);
    assert!(t.store.search_sessions(&q(&long)).is_ok());
    let found = |text: &str| hits(&t.store, &q(text)).len();
    // Operators are words: NEAR, AND, OR must appear in the text; `-` and `*` are separators.
    assert_eq!(found("NEAR"), 1);
    assert_eq!(found("zircon NEAR quartz"), 1);
    assert_eq!(found("zircon OR nothere"), 0, "OR is not an operator");
    assert_eq!(found("-zircon"), 1, "a leading dash is not NOT");
    assert_eq!(found("\"zircon"), 1, "an unbalanced quote is ignored");
    assert_eq!(found("zircon*"), 1, "a star is not a prefix operator");
    assert_eq!(
        hits(
            &t.store,
            &SessionSearchQuery {
                text: "zirco".into(),
                prefix: true,
                ..Default::default()
            }
        )
        .len(),
        2,
        "search as you type: the last word as a prefix"
    );
    for blank in ["", "   ", "\"\"", "* - ( )"] {
        assert!(hits(&t.store, &q(blank)).is_empty(), "{blank:?}");
    }
}

#[test]
fn paging_is_bounded_stable_and_ranked() {
    let t = store();
    let sid = new_session(&t, "Topaz review");
    for i in 0..30 {
        t.clock.advance(Duration::from_millis(10));
        t.store
            .append_message(&NewMessage::assistant(sid, format!("topaz note {i}")))
            .unwrap();
    }
    let page = |offset: u32, limit: u32| {
        t.store
            .search_sessions(&SessionSearchQuery {
                offset,
                limit,
                ..q("topaz")
            })
            .unwrap()
    };
    let first = page(0, 10);
    assert_eq!(first.hits.len(), 10);
    assert!(first.has_more);
    assert_eq!(
        first.hits[0].source,
        HitSource::Title,
        "a title match ranks first"
    );
    assert_eq!(
        first.hits[1].message_id.map(|m| m & 0xffff_ffff),
        Some(30),
        "then the newest"
    );
    let all: Vec<_> = (0..4).flat_map(|p| page(p * 10, 10).hits).collect();
    assert_eq!(all.len(), 31);
    let mut keys: Vec<_> = all.iter().map(|h| (h.source, h.message_id)).collect();
    keys.dedup();
    assert_eq!(keys.len(), 31, "pages do not overlap");
    assert!(!page(30, 10).has_more);
    assert_eq!(
        page(0, 0).hits.len(),
        nomos_store::DEFAULT_SEARCH_LIMIT as usize
    );
    assert!(page(0, 100_000).hits.len() <= nomos_store::MAX_SEARCH_LIMIT as usize);
    assert!(page(u32::MAX, 10).hits.is_empty());
}

#[test]
fn masked_secrets_in_output_are_not_searchable() {
    let t = store();
    session_with_run(
        &t,
        "Leaky",
        "host:x",
        "config: password: hunter2secret\nOPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789\n",
        "",
    );
    assert!(hits(&t.store, &q("hunter2secret")).is_empty());
    assert!(hits(&t.store, &q("AbCdEfGhIjKlMnOpQrStUvWx0123456789")).is_empty());
    let h = hits(&t.store, &q("config"));
    assert_eq!(h.len(), 1);
    let text: String = h[0].snippet.iter().map(|p| p.text.as_str()).collect();
    assert!(!text.contains("hunter2secret"), "{text}");
}

fn queued(path: &std::path::Path) -> Vec<i64> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut st = c
        .prepare("SELECT message_id FROM messages_fts_pending ORDER BY message_id")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn integrity_check(path: &std::path::Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute(
        "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)",
        [],
    )
    .unwrap();
}

/// An append only queues the message for the index (DESIGN §14: the append stays about a
/// plain insert); a search indexes the queue first, so it still finds every message
/// committed before it, and edits of queued and of indexed messages keep the index exact.
#[test]
fn appended_messages_are_queued_and_every_search_sees_them() {
    let t = store();
    t.store.set_background_indexing(false);
    let sid = new_session(&t, "Queue");
    let a = t
        .store
        .append_message(&NewMessage::user(sid, "gneiss on web-01"))
        .unwrap();
    let streamed = t.store.begin_assistant_message(sid, false).unwrap();
    t.store.append_text(streamed.id, "schist ").unwrap();
    assert!(
        queued(&t.path()).contains(&a.id),
        "a final message waits in the queue"
    );
    assert!(
        !queued(&t.path()).contains(&streamed.id),
        "a pending one does not"
    );
    let found = hits(&t.store, &q("gneiss"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message_id, Some(a.id));
    assert!(queued(&t.path()).is_empty(), "the search indexed the queue");
    assert!(
        hits(&t.store, &q("schist")).is_empty(),
        "pending text is not searchable"
    );
    t.store.append_text(streamed.id, "and slate").unwrap();
    t.store.finish_message(streamed.id, None).unwrap();
    assert_eq!(queued(&t.path()), [streamed.id]);
    // Queued, then deleted before any index pass: it never reaches the index.
    let gone = t
        .store
        .append_message(&NewMessage::user(sid, "marble quarry"))
        .unwrap();
    let c = rusqlite::Connection::open(t.path()).unwrap();
    c.execute("DELETE FROM messages WHERE id = ?1", [gone.id])
        .unwrap();
    drop(c);
    assert_eq!(queued(&t.path()), [streamed.id]);
    assert_eq!(hits(&t.store, &q("slate"))[0].message_id, Some(streamed.id));
    assert!(hits(&t.store, &q("marble")).is_empty());
    // An indexed message whose text changes leaves the index with its old words.
    let c = rusqlite::Connection::open(t.path()).unwrap();
    c.execute(
        "UPDATE messages SET text = 'basalt on web-02' WHERE id = ?1",
        [a.id],
    )
    .unwrap();
    drop(c);
    assert_eq!(queued(&t.path()), [a.id]);
    assert!(hits(&t.store, &q("gneiss")).is_empty());
    assert_eq!(hits(&t.store, &q("basalt"))[0].message_id, Some(a.id));
    integrity_check(&t.path());
    t.store.delete_session(sid).unwrap();
    assert!(hits(&t.store, &q("basalt slate")).is_empty());
    integrity_check(&t.path());
}

/// The queue commits with its message: a database copied while the store is open (what a
/// crash leaves on disk, WAL included) still finds the message once opened again.
#[test]
fn a_queued_message_survives_a_crash_and_is_indexed_after_restart() {
    let t = store();
    t.store.set_background_indexing(false);
    let sid = new_session(&t, "Crash");
    let m = t
        .store
        .append_message(&NewMessage::user(sid, "obsidian arrowheads"))
        .unwrap();
    assert_eq!(queued(&t.path()), [m.id]);
    let copy = tempfile::tempdir().unwrap();
    for suffix in ["", "-wal"] {
        let from = format!("{}{suffix}", t.path().display());
        if std::path::Path::new(&from).exists() {
            std::fs::copy(&from, copy.path().join(format!("nomos.db{suffix}"))).unwrap();
        }
    }
    let reopened = Store::open_in_dir(copy.path()).unwrap();
    let found = hits(&reopened, &q("obsidian"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].message_id, Some(m.id));
}

/// Without any search, the store's background thread indexes the queue once the writer is
/// idle (the wait is only a bound for a stuck thread, not a timing assertion).
#[test]
fn the_background_thread_indexes_the_queue_when_the_writer_is_idle() {
    let t = store();
    let sid = new_session(&t, "Idle");
    for i in 0..300 {
        t.store
            .append_message(&NewMessage::user(sid, format!("pumice sample {i}")))
            .unwrap();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !queued(&t.path()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the queue was never indexed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    integrity_check(&t.path());
    let c = rusqlite::Connection::open(t.path()).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'pumice'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 300);
}
