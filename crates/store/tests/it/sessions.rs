use nomos_store::{NewSession, SessionQuery, SessionStatus};
use std::time::Duration;

use crate::common::{T0, store};

#[test]
fn create_session_starts_idle_with_clock_times() {
    let t = store();
    let s = t
        .store
        .create_session(NewSession {
            title: "  Disk check ".into(),
            goal: Some("free space".into()),
        })
        .unwrap();
    assert_eq!(s.title, "Disk check");
    assert_eq!(s.goal.as_deref(), Some("free space"));
    assert_eq!(s.status, SessionStatus::Idle);
    assert_eq!(s.outcome, None);
    assert_eq!(s.created_at_ms, T0);
    assert_eq!(s.last_active_at_ms, T0);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["status"], "idle");
}

#[test]
fn create_session_refuses_a_blank_title() {
    let t = store();
    let e = t
        .store
        .create_session(NewSession {
            title: "  ".into(),
            goal: None,
        })
        .unwrap_err();
    assert_eq!(e.code(), "store.invalid_input");
}

#[test]
fn list_sessions_newest_first_with_limit() {
    let t = store();
    for i in 0..5 {
        t.clock.advance(Duration::from_millis(1000));
        t.store
            .create_session(NewSession {
                title: format!("s{i}"),
                goal: None,
            })
            .unwrap();
    }
    let all = t.store.list_sessions(&SessionQuery::default()).unwrap();
    let titles: Vec<_> = all.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles, ["s4", "s3", "s2", "s1", "s0"]);
    let two = t
        .store
        .list_sessions(&SessionQuery {
            search: None,
            limit: 2,
        })
        .unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!(two[0].title, "s4");
}

#[test]
fn list_sessions_search_uses_full_text_prefixes() {
    let t = store();
    t.store
        .create_session(NewSession {
            title: "Nginx upgrade".into(),
            goal: Some("upgrade nginx on web-01".into()),
        })
        .unwrap();
    t.clock.advance(Duration::from_millis(10));
    t.store
        .create_session(NewSession {
            title: "ZFS scrub".into(),
            goal: None,
        })
        .unwrap();
    let q = |s: &str| {
        t.store
            .list_sessions(&SessionQuery {
                search: Some(s.into()),
                limit: 10,
            })
            .unwrap()
            .into_iter()
            .map(|s| s.title)
            .collect::<Vec<_>>()
    };
    assert_eq!(q("nginx"), ["Nginx upgrade"]);
    assert_eq!(q("ngi"), ["Nginx upgrade"]);
    assert_eq!(q("web-01"), ["Nginx upgrade"]);
    assert_eq!(q("zfs"), ["ZFS scrub"]);
    assert!(q("postgres").is_empty());
    // FTS syntax in the input is data, not query operators.
    assert!(q("\"unbalanced OR * NEAR(").is_empty());
    assert_eq!(q("   ").len(), 2, "blank search lists everything");
}

/// A demo session is marked by its field, set once by "Try the demo", and seen the same way by
/// every reader: the session row, the list, a search and an export; the title plays no part.
#[test]
fn a_demo_is_marked_by_its_field_in_every_view_never_by_its_title() {
    let t = store();
    let new = |title: &str| {
        t.store
            .create_session(NewSession {
                title: title.into(),
                goal: None,
            })
            .unwrap()
            .id
    };
    let titled_demo = new("Demo: my own task on the andesite host");
    let demo = new("What is this andesite workstation running?");
    let plain = new("andesite backup check");
    assert!(
        !t.store.get_session(demo).unwrap().demo,
        "not a demo until marked"
    );
    let marked = t.store.mark_session_demo(demo).unwrap();
    assert!(marked.demo);
    assert!(
        t.store.mark_session_demo(demo).unwrap().demo,
        "marking twice is harmless"
    );
    assert_eq!(
        t.store.mark_session_demo(9_999).unwrap_err().code(),
        "store.not_found"
    );

    let want = |id| id == demo;
    for id in [titled_demo, demo, plain] {
        assert_eq!(t.store.get_session(id).unwrap().demo, want(id), "row {id}");
    }
    let listed = t.store.list_sessions(&SessionQuery::default()).unwrap();
    assert_eq!(listed.len(), 3);
    for s in &listed {
        assert_eq!(s.demo, want(s.id), "list {}", s.id);
    }
    let found = t
        .store
        .list_sessions(&SessionQuery {
            search: Some("andesite".into()),
            limit: 0,
        })
        .unwrap();
    assert_eq!(found.len(), 3);
    for s in &found {
        assert_eq!(s.demo, want(s.id), "title search {}", s.id);
    }
    let hits = t
        .store
        .search_sessions(&nomos_store::SessionSearchQuery {
            text: "andesite".into(),
            ..Default::default()
        })
        .unwrap()
        .hits;
    assert_eq!(hits.len(), 3);
    for h in &hits {
        assert_eq!(
            h.session.demo,
            want(h.session.id),
            "search {}",
            h.session.id
        );
    }

    // An export carries the mark and an import keeps it; a file without it imports as no demo.
    for id in [titled_demo, demo] {
        let json = t.store.export_session(id).unwrap().to_json().unwrap();
        assert_eq!(
            json.contains("\"demo\""),
            want(id),
            "the field is written only when set"
        );
        let imported = t.store.import_session_json(&json).unwrap();
        assert_eq!(
            t.store.get_session(imported.session.id).unwrap().demo,
            want(id)
        );
    }
}
