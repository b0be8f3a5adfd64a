//! The start screen's overview: the entities changed last with their relations, targets by
//! last audit (never first), the commands waiting for approval, each bounded.

use std::time::Duration;

use nomos_store::{CommandClass, HomeLimits, KnowledgeKind, NewKnowledge};
use serde_json::{Map, json};

use crate::common::*;

fn touch(t: &TestStore, slug: &str) {
    let Some(m) = json!({"seen": slug}).as_object().cloned() else {
        panic!("object")
    };
    t.store.update_entity_attributes(None, slug, &m).unwrap();
}

fn audit(t: &TestStore, slug: &str, kind: KnowledgeKind, tags: &[&str]) {
    t.store
        .upsert_knowledge(&NewKnowledge {
            session_id: None,
            kind,
            slug: None,
            title: format!("About {slug}"),
            body: String::new(),
            tags: tags.iter().map(|s| (*s).to_owned()).collect(),
            about: vec![slug.into()],
        })
        .unwrap();
}

fn limits(entities: u32, targets: u32, approvals: u32) -> HomeLimits {
    HomeLimits {
        entities,
        edges: 0,
        targets,
        approvals,
    }
}

#[test]
fn the_small_graph_holds_the_entities_changed_last_and_their_relations() {
    let t = store();
    for i in 0..12 {
        touch(&t, &format!("service:s{i:02}"));
        t.clock.advance(Duration::from_secs(60));
    }
    t.store
        .create_relationship(None, "service:s11", "runs_on", "service:s10", &Map::new())
        .unwrap();
    t.store
        .create_relationship(None, "service:s00", "runs_on", "service:s11", &Map::new())
        .unwrap();
    // create_relationship touches nothing it does not create: s00 stays old.
    for n in [1u32, 3, 5, 12] {
        let o = t.store.home_overview(limits(n, 0, 0)).unwrap();
        let slugs: Vec<&str> = o
            .graph
            .nodes
            .iter()
            .map(|g| g.entity.slug.as_str())
            .collect();
        let want: Vec<String> = (0..12)
            .rev()
            .take(n as usize)
            .map(|i| format!("service:s{i:02}"))
            .collect();
        assert_eq!(slugs, want, "{n} newest first");
        assert_eq!(o.graph.more_nodes, n < 12, "{n}");
        // Only relations between listed nodes.
        let in_graph = o
            .graph
            .edges
            .iter()
            .all(|e| want.contains(&e.from) && want.contains(&e.to));
        assert!(in_graph, "{n}");
        assert_eq!(
            o.graph.edges.len(),
            usize::from(n >= 2) + usize::from(n == 12),
            "{n}"
        );
    }
}

#[test]
fn targets_are_ranked_never_audited_first_then_oldest_audit() {
    let t = store();
    for s in [
        "host:a",
        "host:b",
        "lxc:c",
        "vm:d",
        "host:e",
        "service:not-a-target",
    ] {
        touch(&t, s);
    }
    t.clock.advance(Duration::from_secs(3600));
    audit(&t, "host:b", KnowledgeKind::Investigation, &[]);
    t.clock.advance(Duration::from_secs(3600));
    audit(&t, "vm:d", KnowledgeKind::Note, &["audit"]);
    t.clock.advance(Duration::from_secs(3600));
    audit(&t, "lxc:c", KnowledgeKind::Note, &["updates"]);
    // A note without an audit tag is not an audit.
    audit(&t, "host:e", KnowledgeKind::Note, &["todo"]);
    audit(
        &t,
        "service:not-a-target",
        KnowledgeKind::Investigation,
        &[],
    );
    let o = t.store.home_overview(limits(1, 0, 0)).unwrap();
    let got: Vec<(&str, bool)> = o
        .targets
        .iter()
        .map(|x| (x.slug.as_str(), x.last_audited_at_ms.is_some()))
        .collect();
    assert_eq!(
        got,
        [
            ("host:a", false),
            ("host:e", false),
            ("host:b", true),
            ("vm:d", true),
            ("lxc:c", true)
        ]
    );
    assert!(!o.more_targets);
    for n in 1..5u32 {
        let o = t.store.home_overview(limits(1, n, 0)).unwrap();
        assert_eq!(o.targets.len(), n as usize);
        assert_eq!(o.targets[0].slug, "host:a");
        assert!(o.more_targets, "{n}");
    }
}

#[test]
fn waiting_approvals_are_listed_with_their_session_and_leave_when_decided() {
    let t = store();
    let sid = new_session(&t, "Restart the web tier");
    propose(&t, sid, &["restart"]);
    let mut waiting = Vec::new();
    for (i, host) in ["host:web-01", "host:web-02", "host:web-03"]
        .iter()
        .enumerate()
    {
        let mut new = read_only(sid, host, &format!("systemctl restart nginx #{i}"));
        new.class = CommandClass::Destructive;
        waiting.push(t.store.create_execution(&new).unwrap().id);
    }
    // A read-only command runs without approval and is not listed.
    run_to_end(&t, sid, "host:web-01", "uptime");
    let o = t.store.home_overview(limits(1, 1, 0)).unwrap();
    let ids: Vec<i64> = o.approvals.iter().map(|a| a.execution_id).collect();
    assert_eq!(ids, waiting);
    assert_eq!(o.approvals[0].session_title, "Restart the web tier");
    assert_eq!(o.approvals[0].session_id, sid);
    assert_eq!(o.approvals[1].target, "host:web-02");
    assert_eq!(o.approvals[0].class, CommandClass::Destructive);
    let o = t.store.home_overview(limits(1, 1, 2)).unwrap();
    assert_eq!(o.approvals.len(), 2);
    assert!(o.more_approvals);
    t.store.deny_execution(waiting[0], "no").unwrap();
    let o = t.store.home_overview(limits(1, 1, 0)).unwrap();
    let ids: Vec<i64> = o.approvals.iter().map(|a| a.execution_id).collect();
    assert_eq!(ids, waiting[1..]);
}
