//! Migrations from every earlier schema, using the frozen fixtures in `tests/fixtures/`.

use std::path::{Path, PathBuf};

use nomos_store::{
    CompleteOutcome, KnowledgeQuery, NewMessage, Outcome, SessionQuery, SessionStatus, StepStatus,
    Store, latest_schema_version, migrations, open_raw_at_version,
};

use crate::common::{propose, run_to_end};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Build `<version>.db` from `<version>.sql` for every version whose `.db` is missing.
/// Existing fixtures are never rewritten (they stand for databases already in the field).
#[test]
#[ignore = "generator: run by hand when adding a migration (see tests/fixtures/README.md)"]
fn generate_missing_fixtures() {
    for m in migrations() {
        let db = fixtures_dir().join(format!("{}.db", m.version));
        let seed = fixtures_dir().join(format!("{}.sql", m.version));
        if db.exists() {
            continue;
        }
        let sql =
            std::fs::read_to_string(&seed).unwrap_or_else(|e| panic!("{}: {e}", seed.display()));
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("fixture.db");
        {
            let c = open_raw_at_version(&path, m.version).unwrap();
            c.execute_batch(&sql).unwrap();
            c.pragma_update(None, "journal_mode", "DELETE").unwrap();
            c.execute_batch("VACUUM").unwrap();
        }
        std::fs::copy(&path, &db).unwrap();
        println!("wrote {}", db.display());
    }
}

#[test]
fn every_schema_version_has_a_fixture() {
    for m in migrations() {
        for ext in ["db", "sql"] {
            let f = fixtures_dir().join(format!("{}.{ext}", m.version));
            assert!(
                f.exists(),
                "missing fixture {} for migration {}_{}: see tests/fixtures/README.md",
                f.display(),
                m.version,
                m.name
            );
        }
    }
}

fn open_copy(version: i64) -> (tempfile::TempDir, PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nomos.db");
    std::fs::copy(fixtures_dir().join(format!("{version}.db")), &path).unwrap();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        let v: i64 = c
            .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(v, version, "fixture {version}.db is not at its own schema");
    }
    let store = Store::open(&path).unwrap();
    (dir, path, store)
}

/// Message and audit ids of session `s`, n-th row: `s << 32 | n`.
fn cid(s: i64, n: i64) -> i64 {
    (s << 32) + n
}

/// The task-flow rows of the 20261129000100 and 20261129000300 fixtures (same data; ids are
/// renumbered by 20261129000300 in the first, already clustered in the second).
fn check_task_flow(store: &Store) {
    let tr = store.transcript(1).unwrap();
    assert_eq!(tr.messages.len(), 3);
    let ids: Vec<_> = tr.messages.iter().map(|m| m.id).collect();
    assert_eq!(
        ids,
        [cid(1, 1), cid(1, 2), cid(1, 3)],
        "message ids clustered by session"
    );
    assert_eq!(
        tr.messages[0].text,
        "check all services and tell me what needs updating"
    );
    assert_eq!(
        tr.messages[1].tool_calls.len(),
        1,
        "tool calls follow their message"
    );
    assert_eq!(tr.messages[1].tool_calls[0].name, "propose_plan");
    assert_eq!(
        store.approval_windows(1).unwrap()[0].message_id,
        Some(cid(1, 1))
    );
    let audit = store.audit_log(1, 0).unwrap();
    assert_eq!(
        audit.iter().map(|a| a.id).collect::<Vec<_>>(),
        [cid(1, 1), cid(1, 2)]
    );
    assert!(audit.iter().all(|a| a.message_id == Some(cid(1, 2))));
    let plan = store.current_plan(1).unwrap();
    assert_eq!(plan.generation, 1);
    assert_eq!(plan.steps[0].status, StepStatus::Done);
    assert!(plan.steps[1].write_back);
    let ex = store.executions(1).unwrap();
    assert_eq!(ex[0].stdout, "nginx/stable 1.26");
    // The search indexes were backfilled: output and message text of old rows are found.
    let hit = &search(store, "stable")[0];
    assert_eq!((hit.session.id, hit.execution_id), (1, Some(ex[0].id)));
    assert_eq!(search(store, "updating")[0].message_id, Some(cid(1, 1)));
    // I22: rows from before the digest can never prove an exact text, so they never run.
    assert!(ex[0].canonical_sha256.is_none());
    assert!(!ex[0].is_exact_command(&ex[0].canonical));
    assert_eq!(store.get_session(2).unwrap().completion_nudges, 1);
    // New rows continue the clustered numbering.
    let m = store
        .append_message(&NewMessage::user(1, "follow-up"))
        .unwrap();
    assert_eq!(m.id, cid(1, 4));
    // A downgraded session still gets the I6 treatment.
    let CompleteOutcome::Downgraded { .. } = store.complete_task(1, Outcome::Success, "x").unwrap()
    else {
        panic!("I6 gate lost across the migration")
    };
    // Start-up recovery on an old database: the cut turn and the owed continuation.
    let report = store.recover_at_startup().unwrap();
    assert_eq!(report.cut_turns.len(), 1);
    assert!(!report.cut_turns[0].kept);
    assert_eq!(report.pending_continuations.len(), 1);
}

fn search(store: &Store, text: &str) -> Vec<nomos_store::SessionHit> {
    store
        .search_sessions(&nomos_store::SessionSearchQuery {
            text: text.into(),
            ..Default::default()
        })
        .unwrap()
        .hits
}

fn check_knowledge(store: &Store) {
    let e = store.get_entity("lxc:nextcloud").unwrap().unwrap();
    assert_eq!(e.attributes["version"], "28.0.1");
    assert_eq!(
        store.attribute_history("lxc:nextcloud").unwrap()[0].session_id,
        Some(1)
    );
    assert_eq!(
        store.relations_of("host:hubris").unwrap()[0].kind,
        "runs_on"
    );
    let q = |text: &str| {
        store
            .search_knowledge(&KnowledgeQuery {
                text: text.into(),
                ..Default::default()
            })
            .unwrap()
            .len()
    };
    assert_eq!(q("upgradable"), 1);
    assert_eq!(q("upgrade"), 1, "the rebuilt index stems");
    assert_eq!(
        store.search_entities("nextc", 5).unwrap().len(),
        1,
        "entity prefix search"
    );
    let targets = store.list_targets().unwrap();
    let nc = targets
        .iter()
        .find(|t| t.entity.slug == "lxc:nextcloud")
        .unwrap();
    assert_eq!(nc.last_audited_at_ms, Some(1764000850000));
    assert_eq!(nc.transport.as_deref(), Some("pct"));
}

fn check_fixture(version: i64, store: &Store) {
    match version {
        20261129000000 => {
            let list = store.list_sessions(&SessionQuery::default()).unwrap();
            assert_eq!(list.len(), 2);
            assert_eq!(
                list[0].title, "Fixture v1: backup check",
                "newest activity first"
            );
            let s = store.get_session(1).unwrap();
            assert_eq!(s.status, SessionStatus::Done);
            assert_eq!(s.outcome, Some(Outcome::Success));
            assert_eq!(s.summary.as_deref(), Some("nginx 1.24 → 1.26"));
            assert_eq!((s.completion_nudges, s.plan_generation), (0, 0));
            let found = store
                .list_sessions(&SessionQuery {
                    search: Some("nginx".into()),
                    limit: 0,
                })
                .unwrap();
            assert_eq!(found.len(), 1, "the FTS index survived");
        }
        20261129000100 => check_task_flow(store),
        20261129000200 => {
            check_knowledge(store);
            let tr = store.transcript(1).unwrap();
            assert_eq!(
                tr.messages.iter().map(|m| m.id).collect::<Vec<_>>(),
                [cid(1, 1)]
            );
        }
        20261129000300 => {
            assert_eq!(store.transcript(2).unwrap().messages[0].id, cid(2, 1));
            assert_eq!(
                store.audit_log(0, 0).unwrap().len(),
                1,
                "calls outside any session"
            );
            check_knowledge(store);
            check_task_flow(store);
        }
        20261201000000 => {
            // I21: the Stop's pause survives; I22: the digest proves the exact text.
            assert!(store.is_session_paused(1).unwrap());
            let ex = &store.executions(1).unwrap()[0];
            assert!(ex.is_exact_command("uname -a"), "{ex:?}");
            assert!(!ex.is_exact_command("uname -a "), "{ex:?}");
            assert!(store.pending_continuations().unwrap()[0].session_paused);
            store.unpause_session(1).unwrap();
            assert!(!store.is_session_paused(1).unwrap());
        }
        20261201100000 => {
            // I24: the fixture's owner has no lock file: its process is gone, so recovery
            // takes over its running execution, its cut turn and its turn lease.
            let ex = &store.executions(1).unwrap()[0];
            assert_eq!(ex.owner.as_deref(), Some("1-deadbeef"));
            assert_eq!(
                (ex.pgid, ex.pgid_start_ticks),
                (Some(2_147_483_000), Some(1))
            );
            assert_eq!(
                store.turn_lease_holder(1).unwrap().as_deref(),
                Some("1-deadbeef")
            );
            // Only final messages are indexed: the cut turn's text is found once recovery
            // keeps it.
            assert_eq!(
                search(store, "backup").len(),
                2,
                "title/goal and the operator's message"
            );
            let report = store.recover_at_startup().unwrap();
            assert_eq!(search(store, "backup").len(), 3, "the kept turn is indexed");
            assert_eq!(report.interrupted_executions.len(), 1);
            assert_eq!(report.cut_turns.len(), 1);
            assert!(report.cut_turns[0].kept);
            assert_eq!(store.turn_lease_holder(1).unwrap(), None);
        }
        20261201210000 => {
            // Provenance of an attribute: its session, plan step, execution and message.
            let h = store
                .attribute_provenance("service:nginx", Some("version"), None, 0)
                .unwrap();
            assert_eq!(h.len(), 1);
            let c = &h[0].change;
            assert_eq!(
                (c.session_id, c.plan_step_id, c.execution_id, c.message_id),
                (Some(1), Some(1), Some(1), Some(cid(1, 2)))
            );
            assert_eq!(h[0].execution_command.as_deref(), Some("nginx -v"));
            let deps = store.dependents("host:web-01", 0).unwrap();
            assert_eq!(deps.dependents[0].slug, "service:nginx");
            let ledger = store.executions_targeting("host:web-01", 0).unwrap();
            assert_eq!(ledger[0].message_id, Some(cid(1, 2)));
        }
        20261201200000 => {
            let hit = &search(store, "zircon")[0];
            assert_eq!((hit.session.id, hit.message_id), (1, Some(cid(1, 1))));
            assert_eq!(search(store, "quartzite")[0].message_id, Some(cid(1, 3)));
            let out = &search(store, "obsidianfs")[0];
            assert_eq!(out.source, nomos_store::HitSource::Stdout);
            assert_eq!(
                out.message_id,
                Some(cid(1, 2)),
                "the message whose call ran it"
            );
            assert!(store.import_mark(1).unwrap().is_none());
            let mark = store.import_mark(2).unwrap().unwrap();
            assert_eq!(mark.at_ms, 1766000300000);
            store.delete_session(1).unwrap();
            for word in ["zircon", "quartzite", "obsidianfs", "disk"] {
                assert!(search(store, word).is_empty(), "{word}");
            }
        }
        20261201223000 => {
            // The demo mark is the field, whatever the title says.
            let demo = |id| store.get_session(id).unwrap().demo;
            assert!(!demo(1), "titled \"Demo: …\" by an operator: not a demo");
            assert!(demo(2));
            let list = store.list_sessions(&SessionQuery::default()).unwrap();
            let marks: Vec<(i64, bool)> = list.iter().map(|s| (s.id, s.demo)).collect();
            assert_eq!(marks, [(2, true), (1, false)]);
            let export = store.export_session(2).unwrap();
            assert!(export.session.demo);
        }
        20261202010000 => {
            // Indexed and still-queued messages are both found (the queued one is indexed by
            // the search); the pending reply is not, until it is final.
            assert_eq!(search(store, "tanzanite")[0].message_id, Some(cid(1, 1)));
            assert_eq!(search(store, "morganite")[0].message_id, Some(cid(1, 2)));
            assert!(search(store, "kunzite").is_empty());
            store.finish_message(cid(1, 3), None).unwrap();
            assert_eq!(search(store, "kunzite")[0].message_id, Some(cid(1, 3)));
            store.delete_session(1).unwrap();
            for word in ["tanzanite", "morganite", "kunzite"] {
                assert!(search(store, word).is_empty(), "{word}");
            }
        }
        20261202013000 => {
            // A page of one message shows the execution of its own run, not the other's.
            use nomos_store::PageAt;
            let page = store.message_page(1, PageAt::Around(cid(1, 2)), 1).unwrap();
            assert_eq!(page.messages[0].id, cid(1, 2));
            assert!(page.older && page.newer);
            let ex = store
                .read(|r| r.executions_for_page(1, cid(1, 2), cid(1, 2)))
                .unwrap();
            assert_eq!(
                ex.iter().map(|e| e.call_id.as_deref()).collect::<Vec<_>>(),
                [Some("call_web")]
            );
        }
        other => panic!("no checks for fixture {other}: add them to check_fixture"),
    }
}

#[test]
fn every_fixture_migrates_to_the_current_schema_and_keeps_its_data() {
    for m in migrations() {
        let (_dir, _path, store) = open_copy(m.version);
        assert_eq!(
            store.schema_version().unwrap(),
            latest_schema_version(),
            "fixture {}",
            m.version
        );
        check_fixture(m.version, &store);
        if m.version < 20261201223000 {
            // Rows from before the demo column are not demos.
            let list = store.list_sessions(&SessionQuery::default()).unwrap();
            assert!(list.iter().all(|s| !s.demo), "fixture {}", m.version);
        }
        // And the migrated database is fully usable.
        let sid = store
            .create_session(nomos_store::NewSession {
                title: "after migration".into(),
                goal: None,
            })
            .unwrap()
            .id;
        store
            .append_message(&NewMessage::user(sid, "hello"))
            .unwrap();
        let t = crate::common::TestStore {
            store: store.clone(),
            clock: std::sync::Arc::new(nomos_store::ManualClock::at_ms(crate::common::T0)),
            dir: tempfile::tempdir().unwrap(),
        };
        propose(&t, sid, &["check"]);
        run_to_end(&t, sid, "host:a", "uptime");
        store
            .update_entity_attributes(
                Some(sid),
                "host:a",
                serde_json::json!({"up": true}).as_object().unwrap(),
            )
            .unwrap();
        assert!(matches!(
            store.complete_task(sid, Outcome::Success, "ok").unwrap(),
            CompleteOutcome::Completed { .. }
        ));
    }
}

fn schema_of(path: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut st = c
        .prepare("SELECT name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn migrated_schema_equals_a_fresh_schema() {
    let fresh_dir = tempfile::tempdir().unwrap();
    let fresh = fresh_dir.path().join("fresh.db");
    drop(Store::open(&fresh).unwrap());
    let want = schema_of(&fresh);
    for m in migrations() {
        let (_dir, path, store) = open_copy(m.version);
        drop(store);
        assert_eq!(
            schema_of(&path),
            want,
            "schema after migrating fixture {}",
            m.version
        );
    }
}

#[test]
fn fixtures_are_refused_by_nothing_and_left_in_wal_mode() {
    for m in migrations() {
        let (_dir, path, store) = open_copy(m.version);
        drop(store);
        let c = rusqlite::Connection::open(&path).unwrap();
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let fk: Vec<String> = c
            .prepare("PRAGMA foreign_key_check")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            fk.is_empty(),
            "orphans after migrating {}: {fk:?}",
            m.version
        );
    }
}
