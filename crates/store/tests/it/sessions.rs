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
